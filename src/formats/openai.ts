import { elementReader } from '../core/lazy-list.js';
import { joinResultParts, type ResultPart } from '../core/render.js';
import { isJsonObject, jsonValueOf, parseJson, type JsonObject, type JsonValue } from '../core/json/value.js';
import { noteMarks } from '../core/note.js';
import { renderArguments, renderArgumentsString } from '../core/json/python.js';
import type { Content, Message, ResultSketch, Role, ToolCall, ToolResult } from '../core/types.js';
import { SLIMMED, sketchOf } from '../io/slim.js';
import {
  hasOnlyKeys,
  isRecord,
  own,
  type ConversationInput,
  type FormatAdapter,
  type PruneWrite,
  type Normalized,
  type Pairing,
  continuableOneEach,
  detectedBy,
} from './types.js';
import { writeResults } from './raw-edit.js';

/** OpenAI Chat Completions messages (and OpenAI-compatible logs such as SWE-agent and tau-bench). */

const ROLES: Record<string, Role> = {
  system: 'system',
  developer: 'system',
  user: 'user',
  assistant: 'assistant',
  tool: 'tool',
  function: 'tool',
};

/** Content part types of Chat Completions (Responses, Anthropic and others use different ones). */
const CHAT_PART_TYPES = new Set(['text', 'image_url', 'input_audio', 'file', 'refusal']);

/** Whether an item looks like an OpenAI chat message. */
function isOpenAiMessage(item: unknown): boolean {
  if (!isRecord(item) || typeof own(item, 'role') !== 'string') return false;
  // A top-level "type" marks a Responses item; "parts" a Gemini content; "meta" with part lists Haystack.
  if (own(item, 'type') !== undefined || own(item, 'parts') !== undefined) return false;
  if (own(item, 'meta') !== undefined && Array.isArray(own(item, 'content'))) return false;
  const content = own(item, 'content');
  if (Array.isArray(content))
    return content.every((part) => isRecord(part) && CHAT_PART_TYPES.has(own(part, 'type') as string));
  return content === undefined || content === null || typeof content === 'string';
}

/** The text of a string-or-parts content, parts joined with `sep`; null when there is no text at all. */
function partsText(
  content: JsonValue | undefined,
  sep: string,
): { texts: string[]; images: number; files: (string | null)[]; attachments: string[] } {
  const out = { texts: [] as string[], images: 0, files: [] as (string | null)[], attachments: [] as string[] };
  const fileDetails: string[] = [];
  if (typeof content === 'string') {
    out.texts.push(content);
    return out;
  }
  if (!Array.isArray(content)) return out;
  const texts: string[] = [];
  for (const part of content) {
    if (!isJsonObject(part)) continue;
    const type = part.type;
    if (
      typeof part.text === 'string' &&
      (type === 'text' || type === 'input_text' || type === 'output_text' || type === undefined)
    )
      texts.push(part.text);
    else if (typeof part.refusal === 'string') texts.push(part.refusal);
    else if (type === 'image_url' || type === 'input_image' || type === 'image') {
      out.images++;
      out.attachments.push(describedPart(part));
    } else if (type === 'file' || type === 'input_file') {
      const file = isJsonObject(part.file) ? part.file : part;
      out.files.push(typeof file.filename === 'string' ? file.filename : null);
      fileDetails.push(describedPart(part));
    }
  }
  out.attachments.push(...fileDetails);
  if (texts.length > 0) out.texts = sep === '\n' ? texts : [texts.join(sep)];
  return out;
}

/** The media type of a `data:` URL, or null. */
function dataUrlType(url: JsonValue | undefined): string | null {
  if (typeof url !== 'string' || !url.startsWith('data:')) return null;
  const type = /^data:([^;,]+)/.exec(url)?.[1];
  return type === undefined || type === '' ? null : type;
}

/** An image or file part described for a summary prompt: `<image: TYPE>`, `<file: NAME, TYPE>` (type from a data URL). */
function describedPart(part: JsonObject): string {
  const type = part.type;
  if (type === 'file' || type === 'input_file') {
    const file = isJsonObject(part.file) ? part.file : part;
    const name = typeof file.filename === 'string' && file.filename !== '' ? file.filename : 'unnamed';
    return `<file: ${name}, ${dataUrlType(file.file_data) ?? 'unknown type'}>`;
  }
  const url = isJsonObject(part.image_url) ? part.image_url.url : part.image_url;
  return `<image: ${dataUrlType(url) ?? 'unknown type'}>`;
}

/**
 * A tool result's parts joined with nothing between them, images and files as placeholders (described for a summary
 * prompt when `described`).
 */
function resultParts(
  content: JsonValue | undefined,
  described = false,
): { text: string; images: number; files: number } {
  if (typeof content === 'string') return { text: content, images: 0, files: 0 };
  if (described) {
    return {
      text: (Array.isArray(content) ? content : [])
        .map((part) => {
          if (!isJsonObject(part)) return '';
          if (typeof part.text === 'string') return part.text;
          const type = part.type;
          return type === 'image_url' ||
            type === 'input_image' ||
            type === 'image' ||
            type === 'file' ||
            type === 'input_file'
            ? describedPart(part)
            : '';
        })
        .join(''),
      images: 0,
      files: 0,
    };
  }
  return joinResultParts(Array.isArray(content) ? content : [], (part): ResultPart => {
    if (!isJsonObject(part)) return null;
    const type = part.type;
    if (typeof part.text === 'string') return { text: part.text };
    if (type === 'image_url' || type === 'input_image' || type === 'image') return 'image';
    if (type === 'file' || type === 'input_file') {
      const file = isJsonObject(part.file) ? part.file : part;
      return { file: typeof file.filename === 'string' ? file.filename : null };
    }
    return null;
  });
}

/**
 * A message parsed for rendering: natively (several times faster) when nothing its rendering reads depends on how a
 * number was written, which is everywhere but tool arguments given as JSON objects (rendered as Python would write
 * their numbers); losslessly otherwise. Both parsers agree on everything else rendering reads (strings, types, keys).
 */
function parseForRendering(raw: string): JsonValue {
  const value = JSON.parse(raw) as JsonValue;
  return hasObjectArguments(value) ? parseJson(raw) : value;
}

/**
 * A whole item (`ConversationInput.whole`) as `parseForRendering` reads its text: the item itself, which is what
 * `JSON.parse` would give, unless its numbers' spelling matters; the text is then written only if the item cannot be
 * read losslessly as it is (see `jsonValueOf`).
 */
function wholeForRendering(item: unknown, raw: () => string): JsonValue {
  if (!hasObjectArguments(item as JsonValue)) return item as JsonValue;
  return jsonValueOf(item) ?? parseJson(raw());
}

/** Whether a message has a tool call whose arguments are not a string (so their numbers' spelling matters). */
function hasObjectArguments(message: JsonValue): boolean {
  if (!isJsonObject(message)) return false;
  const objectArguments = (fn: JsonValue | undefined): boolean => {
    if (!isJsonObject(fn)) return false;
    const args = fn.arguments ?? fn.input;
    return args !== undefined && args !== null && typeof args !== 'string';
  };
  if (
    Array.isArray(message.tool_calls) &&
    message.tool_calls.some(
      (call) => isJsonObject(call) && (objectArguments(call.function) || objectArguments(call.custom)),
    )
  )
    return true;
  return objectArguments(message.function_call);
}

function callsOf(message: JsonValue): ToolCall[] {
  if (!isJsonObject(message)) return [];
  const calls: ToolCall[] = [];
  if (Array.isArray(message.tool_calls)) {
    for (const call of message.tool_calls) {
      if (!isJsonObject(call)) continue;
      const fn = isJsonObject(call.function) ? call.function : isJsonObject(call.custom) ? call.custom : null;
      if (fn === null) continue;
      const args = fn.arguments ?? fn.input;
      calls.push({
        name: typeof fn.name === 'string' ? fn.name : '',
        arguments: typeof args === 'string' ? renderArgumentsString(args) : renderArguments(args ?? null),
        ...(typeof call.id === 'string' && call.id !== '' ? { id: call.id } : {}),
      });
    }
  }
  if (isJsonObject(message.function_call)) {
    const fn = message.function_call;
    const args = fn.arguments;
    calls.push({
      name: typeof fn.name === 'string' ? fn.name : '',
      arguments: typeof args === 'string' ? renderArgumentsString(args) : renderArguments(args ?? null),
    });
  }
  return calls;
}

/** The call ids a tool message answers (SWE-agent writes a list under `tool_call_ids`). */
export function answeredIds(item: Record<string, unknown>): string[] {
  const one = own(item, 'tool_call_id');
  if (typeof one === 'string') return [one];
  const many = own(item, 'tool_call_ids');
  return Array.isArray(many) ? many.filter((x): x is string => typeof x === 'string') : [];
}

/** Validates the fields the decision and the renderer rely on; unknown extra fields pass through. */
function checkMessage(input: ConversationInput, k: number, item: unknown): Record<string, unknown> {
  if (!isRecord(item)) input.fail(k, `expected a message object, found ${describe(item)}`);
  const role = own(item, 'role');
  if (role === undefined) input.fail(k, 'no "role"');
  if (typeof role !== 'string' || !Object.prototype.hasOwnProperty.call(ROLES, role))
    input.fail(
      k,
      `unknown role ${JSON.stringify(role)} (expected system, developer, user, assistant, tool or function)`,
    );
  const content = own(item, 'content');
  if (!(content === undefined || content === null || typeof content === 'string' || Array.isArray(content))) {
    input.fail(k, `"content" must be a string, null or a list of parts, found ${describe(content)}`);
  }
  const calls = own(item, 'tool_calls');
  if (calls !== undefined && calls !== null && !(Array.isArray(calls) && calls.every(isRecord))) {
    input.fail(k, `"tool_calls" must be a list of objects, found ${describe(calls)}`);
  }
  return item;
}

/** Names a JSON value's type for an error message. */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return 'a string';
  return `a ${typeof value}`;
}

/** Tool calls and results with their ids, and items of no known role, for `swc inspect`. */
function openaiPairing(input: ConversationInput): Pairing {
  const calls: { item: number; id: string | null; name: string }[] = [];
  const results: { item: number; id: string | null; name: string }[] = [];
  const unknownRoles: { item: number; role: string | null }[] = [];
  input.items.forEach((item, k) => {
    const role = isRecord(item) ? own(item, 'role') : undefined;
    if (!isRecord(item) || typeof role !== 'string' || !Object.prototype.hasOwnProperty.call(ROLES, role)) {
      unknownRoles.push({ item: k, role: typeof role === 'string' ? role : null });
      return;
    }
    const legacyName = typeof own(item, 'name') === 'string' ? (own(item, 'name') as string) : '';
    if (ROLES[role] === 'assistant') {
      const list = own(item, 'tool_calls');
      for (const call of Array.isArray(list) ? list : []) {
        if (!isRecord(call)) continue;
        const fn = own(call, 'function') ?? own(call, 'custom');
        const id = own(call, 'id');
        const name = isRecord(fn) ? own(fn, 'name') : undefined;
        calls.push({ item: k, id: typeof id === 'string' ? id : null, name: typeof name === 'string' ? name : '' });
      }
      const legacy = own(item, 'function_call');
      if (isRecord(legacy))
        calls.push({
          item: k,
          id: null,
          name: typeof own(legacy, 'name') === 'string' ? (own(legacy, 'name') as string) : '',
        });
    } else if (ROLES[role] === 'tool') {
      const ids = role === 'function' ? [] : answeredIds(item);
      if (ids.length === 0) results.push({ item: k, id: null, name: legacyName });
      for (const id of ids) results.push({ item: k, id, name: legacyName });
    }
  });
  return { calls, results, unknownRoles };
}

/**
 * A message of a chat list whose content is read from its raw text when rendered. A class rather than a closure per
 * message: a long file's messages then share one method instead of each holding a function and its scope.
 */
class ChatMessage implements Message {
  /**
   * Its index in the items (from bit 8) and its marks (bits 0-7, see `packedMarks`), in one number: a small integer
   * up to 8 million messages, so a message holds three fields (a million messages: 8 MB less than four).
   */
  private readonly packed: number;

  constructor(
    role: Role,
    compaction: string | undefined,
    exactNote: boolean,
    /** The raw texts and the items of its normalization, shared by its messages. */
    private readonly from: ChatItems,
    index: number,
    /** For a tool result: the name of the call it answers. */
    private readonly resultName: string,
  ) {
    this.packed = index * 256 + packedMarks(role, compaction, exactNote);
  }

  private get index(): number {
    return (this.packed - (this.packed & 255)) / 256;
  }

  get role(): Role {
    return ROLES_BY_CODE[this.packed & 3] as Role;
  }

  get compaction(): string | undefined {
    const code = (this.packed & 255) >>> 4;
    return code === 0 ? undefined : COMPACTIONS[code - 1];
  }

  get exactNote(): boolean {
    return (this.packed & 8) !== 0;
  }

  sketch(): readonly ResultSketch[] | undefined {
    if (this.role !== 'tool') return undefined;
    const item = this.from.items[this.index];
    const text = isRecord(item) ? own(item, 'content') : undefined;
    if (typeof text !== 'string') return undefined;
    // A string content is the result's text (`resultParts`): its sketch if it was replaced, else itself.
    const sketch =
      sketchOf(item, 'content') ?? (text === SLIMMED ? undefined : { length: text.length, head: text, tail: '' });
    return sketch === undefined
      ? undefined
      : [{ name: this.resultName, error: false, images: 0, files: 0, text: sketch }];
  }

  content(): Content {
    const value = this.from.whole
      ? wholeForRendering(this.from.items[this.index], () => this.from.raws[this.index] as string)
      : parseForRendering(this.from.raws[this.index] as string);
    const obj = isJsonObject(value) ? value : {};
    if (this.role === 'tool') {
      const { text, images, files } = resultParts(obj.content);
      const id = typeof obj.tool_call_id === 'string' && obj.tool_call_id !== '' ? { id: obj.tool_call_id } : {};
      const result: ToolResult = {
        name: this.resultName,
        text,
        error: false,
        images,
        files,
        ...id,
        described: resultParts(obj.content, true).text,
      };
      return { texts: [], toolCalls: [], results: [result], images: 0, files: [] };
    }
    const { texts, images, files, attachments } = partsText(obj.content, '\n');
    return { texts, toolCalls: this.role === 'assistant' ? callsOf(obj) : [], results: [], images, files, attachments };
  }
}

/**
 * What the messages of one normalization share: the items' raw texts and the items as read (slim, from a big file;
 * `whole`: the library's messages themselves).
 */
interface ChatItems {
  readonly raws: readonly string[];
  readonly items: readonly unknown[];
  readonly whole: boolean;
}

const ROLES_BY_CODE: readonly Role[] = ['system', 'user', 'assistant', 'tool'];

/** The compaction marks met so far, numbered from 1 in `packedMarks` (a handful: the strategies' names). */
const COMPACTIONS: string[] = [];

/**
 * A message's role (bits 0-1), `exactNote` (bit 3) and compaction mark (its number in
 * `COMPACTIONS` in bits 4-7, 0 for none) as one small integer: a message of a long file then holds one field for
 * them, not four (a million messages: 32 MB less).
 */
function packedMarks(role: Role, compaction: string | undefined, exactNote: boolean): number {
  let code = 0;
  if (compaction !== undefined) {
    code = COMPACTIONS.indexOf(compaction) + 1;
    if (code === 0) code = COMPACTIONS.push(compaction);
    // Notes are the only messages marked, by the window's or the summary's name: a sixteenth mark is a bug here.
    if (code > 15) throw new Error(`internal: more than 15 compaction marks (${COMPACTIONS.join(', ')})`);
  }
  return ROLES_BY_CODE.indexOf(role) | (exactNote ? 8 : 0) | (code << 4);
}

/** The marks of a message that is no user's text (shared: a long file has many). */
const NO_MARKS: { readonly compaction?: string; readonly exactNote?: boolean } = Object.freeze({});

/** The name of the first call a result answers whose name is known. */
function answeredName(
  item: Record<string, unknown>,
  callNames: CallNames,
  items: ItemReader,
  k: number,
): string | undefined {
  for (const id of answeredIds(item)) {
    const name = callNames.get(id, items, k);
    if (name !== undefined) return name;
  }
  return undefined;
}

/** Reads item `k` of the input being normalized. */
type ItemReader = (k: number) => unknown;

/** Sets each call of an item, by its id and name, in order (those without both are no call a result can name). */
function eachCall(item: unknown, into: CallNames): void {
  const calls = isRecord(item) ? own(item, 'tool_calls') : undefined;
  if (!Array.isArray(calls)) return;
  for (const call of calls) {
    const id = own(call, 'id');
    const fn = own(call, 'function') ?? own(call, 'custom');
    if (typeof id === 'string' && isRecord(fn) && typeof own(fn, 'name') === 'string')
      into.set(id, own(fn, 'name') as string);
  }
}

/** Calls held before the older of them are let go (and as many again): a result answers a call just before it. */
export const CALL_GENERATION = 1024;

/**
 * The name of each call id read so far, each distinct name held once (a long file names a few tools a great many
 * times). Only the latest calls are held, in two generations of `generation` ids: a result answers a call of the
 * assistant message just before it, and a million messages' ids took about 30 MB while a file was read. An id not
 * found among them, once older calls were let go, may be one of those: every call before the result is then read
 * again from the items, once, and from then on all are held. (A file's stream of items cannot read an earlier block:
 * it gives up, and the file is read with its items kept, as without a stream.)
 */
export class CallNames {
  private recent = new Map<string, string>();
  private older = new Map<string, string>();
  /** Set once calls were let go; then every call is held (`all`) after the first id not found. */
  private forgot = false;
  private all: Map<string, string> | null = null;
  private readonly names = new Map<string, string>();

  constructor(private readonly generation: number = CALL_GENERATION) {}

  set(id: string, name: string): void {
    let held = this.names.get(name);
    if (held === undefined) {
      this.names.set(name, name);
      held = name;
    }
    if (this.all !== null) {
      this.all.set(id, held);
      return;
    }
    if (this.recent.size >= this.generation) {
      this.forgot ||= this.older.size > 0;
      this.older = this.recent;
      this.recent = new Map();
    }
    this.recent.set(id, held);
  }

  /**
   * The name of the latest call with this id read before item `k` was done with (its own calls included).
   * @param items reads the items, for the calls let go
   */
  get(id: string, items: ItemReader, k: number): string | undefined {
    if (this.all !== null) return this.all.get(id);
    const name = this.recent.get(id) ?? this.older.get(id);
    if (name !== undefined || !this.forgot) return name;
    const all = new Map<string, string>();
    this.all = all;
    this.recent = new Map();
    this.older = new Map();
    for (let j = 0; j <= k; j++) eachCall(items(j), this);
    return all.get(id);
  }
}

/**
 * OpenAI chat items normalized with `callNames` (empty) to name each result's call: the adapter's `normalize`, with
 * the generations of calls held open to choice (tests hold one or two ids, so that a short list lets calls go).
 */
export function normalizeChat(input: ConversationInput, noteTemplate: string | null, callNames: CallNames): Normalized {
  return normalizedFrom(input, noteTemplate, callNames, []);
}

/**
 * The items of `input` from `messages.length` on normalized after `messages`, the items before them read already with
 * `callNames` the ids of their calls; with a continuation for a longer input (`Normalized.more`).
 */
function normalizedFrom(
  input: ConversationInput,
  noteTemplate: string | null,
  callNames: CallNames,
  messages: Message[],
): Normalized {
  // Raw texts are read when a message is rendered, not before: a source held as lines decodes them on demand.
  const from: ChatItems = { raws: input.raws, items: input.items, whole: input.whole === true };
  // Through the list's reader, its length read once: a file's stream of items (pipeline/stream.ts) has no trap per item.
  const at = elementReader(input.items);
  for (let k = messages.length, end = input.items.length; k < end; k++)
    messages.push(chatMessage(input, at, from, k, noteTemplate, callNames));
  return continuableOneEach(messages, (next, grown) => normalizedFrom(next, noteTemplate, callNames, grown));
}

/** Item `k` (read by `items`) as a message, the ids of the calls before it in `callNames` (its own calls added). */
function chatMessage(
  input: ConversationInput,
  items: ItemReader,
  from: ChatItems,
  k: number,
  noteTemplate: string | null,
  callNames: CallNames,
): Message {
  const item = checkMessage(input, k, items(k));
  const roleName = own(item, 'role') as string;
  const role = ROLES[roleName] as Role;
  eachCall(item, callNames);
  const text = own(item, 'content');
  const marks =
    role === 'user' && typeof text === 'string'
      ? noteMarks(text, noteTemplate, hasOnlyKeys(item, NOTE_KEYS))
      : NO_MARKS;
  const legacyName = own(item, 'name');
  const ownName = typeof legacyName === 'string' ? legacyName : '';
  // The name of the call this result answers, looked up now: ids may be reused later in the file.
  const resultName =
    role !== 'tool' || roleName === 'function' ? ownName : (answeredName(item, callNames, items, k) ?? ownName);
  return new ChatMessage(role, marks.compaction, marks.exactNote === true, from, k, resultName);
}

/** The keys of a note as `makeNote` writes it: a user message with any other is none. */
const NOTE_KEYS = ['role', 'content'];

export const openai: FormatAdapter = {
  name: 'openai',
  listKeys: ['messages'],
  // A tool (or legacy function) message's string content is its result's text (`ChatMessage.sketch`).
  sketchesIn: (record) => record.role === 'tool' || record.role === 'function',
  ...detectedBy([{ each: isOpenAiMessage }]),
  normalize(input, noteTemplate): Normalized {
    return normalizeChat(input, noteTemplate, new CallNames());
  },
  makeNote({ text }) {
    return { role: 'user', content: text };
  },
  pairing: openaiPairing,
  writePruned: writePrunedOpenai,
};

/** A pruned tool (or legacy function) message: its `content` becomes the placeholder. */
function writePrunedOpenai(request: PruneWrite): ReadonlyMap<number, string> {
  return writeResults(request, (_raw, root) => [{ object: root, key: 'content' }]);
}
