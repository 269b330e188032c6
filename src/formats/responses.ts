import { EMPTY_CONTENT, joinResultParts, type ResultPart } from '../core/render.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../core/json/value.js';
import { noteMarks } from '../core/note.js';
import { renderArguments, renderArgumentsString } from '../core/json/python.js';
import type { Content, ToolCall, ToolResult } from '../core/types.js';
import { ConversationBuilder, instructionTexts, type Entry } from './conversation-builder.js';
import { describe } from './openai.js';
import {
  isRecord,
  itemValue,
  own,
  type ConversationInput,
  type FormatAdapter,
  type PruneWrite,
  type Normalized,
  type PairedCall,
  type PairedResult,
  type Pairing,
  detectedBy,
} from './types.js';
import { writeResults } from './raw-edit.js';

/**
 * OpenAI Responses input: `{input, instructions, ...}` (input a list of items or one string), or a bare item list.
 *
 * The core's step is one assistant message and the tool messages after it, so a run of assistant-side items
 * (reasoning, assistant messages, calls, and items of unknown type) becomes one core assistant message per
 * assistant message item: reasoning and calls join the message they stand with, the way one chat message holds
 * its text and its tool calls. A new core message starts at a reasoning or message item only once the current
 * one has its message and no call still waiting for its output, so calls are never parted from their outputs.
 * Each output item that answers a call (`call_id`) is one tool message. Items of unknown type go with the
 * message they sit in; a run of nothing but unknown items goes with the message before it.
 */

type Kind = 'user' | 'system' | 'message' | 'reasoning' | 'call' | 'self-call' | 'output' | 'other';

/** Message roles (a Map: a role such as `constructor` in the input is data, not a prototype lookup). */
const ROLES = new Map<string, Kind>([
  ['user', 'user'],
  ['system', 'system'],
  ['developer', 'system'],
  ['assistant', 'message'],
]);

/** Item types of the Responses API that are not messages; with `message`, they mark a list as Responses input. */
const KNOWN_TYPES = new Set([
  'reasoning',
  'item_reference',
  'compaction',
  'mcp_list_tools',
  'mcp_approval_request',
  'mcp_approval_response',
]);
/** Part types only Responses messages use. */
const RESPONSES_PARTS = new Set(['input_text', 'output_text', 'input_image', 'input_file', 'summary_text']);

function hasString(item: Record<string, unknown>, key: string): boolean {
  return typeof own(item, key) === 'string';
}

/**
 * What an item is. Calls that name a `call_id` wait for an output item; calls without one (web search,
 * MCP, server-executed tool search...) hold their own result. Outputs without a `call_id` are server-side
 * and stay with the call they follow.
 */
function kindOf(item: unknown): Kind | null {
  if (typeof item === 'string') return 'user';
  if (!isRecord(item)) return null;
  const type = own(item, 'type');
  const role = own(item, 'role');
  if (type === 'message' || (type === undefined && role !== undefined))
    return typeof role === 'string' ? (ROLES.get(role) ?? null) : null;
  if (typeof type !== 'string') return null;
  if (type === 'reasoning') return 'reasoning';
  if (type === 'mcp_approval_response') return hasString(item, 'approval_request_id') ? 'output' : 'other';
  if (type === 'mcp_approval_request') return hasString(item, 'id') ? 'call' : 'self-call';
  if (type.endsWith('_output') || type === AGENTS_RESULT) return callIdOf(item) !== undefined ? 'output' : 'other';
  if (type.endsWith('_call')) return callIdOf(item) !== undefined ? 'call' : 'self-call';
  return 'other';
}

/** The id an output answers: its `call_id`, or the approval request it responds to. */
function answeredId(item: Record<string, unknown>): string | undefined {
  const id = callIdOf(item) ?? own(item, 'approval_request_id');
  return typeof id === 'string' ? id : undefined;
}

/** The OpenAI Agents SDK's (JavaScript) item for a function's output; its items spell the call id `callId`. */
const AGENTS_RESULT = 'function_call_result';

/** A call's or output's id: `call_id`, or the Agents SDK's `callId`. */
function callIdOf(item: Record<string, unknown>): string | undefined {
  const id = own(item, 'call_id') ?? own(item, 'callId');
  return typeof id === 'string' ? id : undefined;
}

/** A call's name: its `name`, else its type without `_call` (`web_search_call` → `web_search`). */
function callName(item: Record<string, unknown>): string {
  const name = own(item, 'name');
  if (typeof name === 'string') return name;
  const type = own(item, 'type');
  return typeof type === 'string' ? type.replace(/_call$/, '') : '';
}

/** Whether an item is typed as the Responses API types them (or a message in a part style only it uses). */
function isResponsesMarked(item: unknown): boolean {
  if (!isRecord(item)) return false;
  const type = own(item, 'type');
  if (
    typeof type === 'string' &&
    (type === 'message' ||
      KNOWN_TYPES.has(type) ||
      type.endsWith('_call') ||
      type.endsWith('_call_output') ||
      type === AGENTS_RESULT)
  )
    return true;
  const content = own(item, 'content');
  return Array.isArray(content) && content.some((p) => isRecord(p) && RESPONSES_PARTS.has(own(p, 'type') as string));
}

/** Keys of a chat message that a Responses message never has. */
const FOREIGN_KEYS = ['tool_calls', 'tool_call_id', 'tool_call_ids', 'function_call', 'parts', 'meta'];

/** Whether an item can be Responses input: a string, a typed item, or a message with a Responses role. */
function isPlausibleItem(item: unknown): boolean {
  if (typeof item === 'string') return true;
  if (!isRecord(item)) return false;
  if (own(item, 'type') !== undefined && own(item, 'type') !== 'message') return typeof own(item, 'type') === 'string';
  const role = own(item, 'role');
  const content = own(item, 'content');
  return (
    typeof role === 'string' &&
    ROLES.has(role) &&
    (typeof content === 'string' || Array.isArray(content)) &&
    !FOREIGN_KEYS.some((k) => own(item, k) !== undefined)
  );
}

/**
 * A call as a `NAME(ARGS)` line: `arguments` (a JSON string or an object), a custom tool's `input`, or an `action`
 * (a web search's without its `sources`, which are its result).
 */
function callOf(item: JsonValue): ToolCall | null {
  if (!isJsonObject(item)) return null;
  const name =
    typeof item.name === 'string' ? item.name : typeof item.type === 'string' ? item.type.replace(/_call$/, '') : '';
  const args = item.arguments ?? item.input ?? searchAction(item) ?? item.action;
  const code = typeof item.code === 'string' ? { code: item.code } : Object.create(null);
  const rendered =
    typeof args === 'string' ? renderArgumentsString(args) : renderArguments(args !== undefined ? args : code);
  // The id its output answers: `call_id`, or an approval request's own `id` (see `answeredId`).
  const id = item.type === 'mcp_approval_request' ? item.id : callIdOf(item);
  return { name, arguments: rendered, ...(typeof id === 'string' ? { id } : {}) };
}

type Parts = { texts: string[]; images: number; files: (string | null)[] };
/** Texts, images and files of a message's content (a string or a list of parts). */
export function messageParts(content: JsonValue | undefined): Parts {
  const out = { texts: [] as string[], images: 0, files: [] as (string | null)[] };
  if (typeof content === 'string') {
    out.texts.push(content);
    return out;
  }
  if (!Array.isArray(content)) return out;
  for (const part of content) {
    if (!isJsonObject(part)) continue;
    const type = part.type;
    if (typeof part.text === 'string' && (type === 'input_text' || type === 'output_text' || type === 'text'))
      out.texts.push(part.text);
    else if (type === 'refusal' && typeof part.refusal === 'string') out.texts.push(part.refusal);
    else if (type === 'input_image') out.images++;
    else if (type === 'input_file') out.files.push(typeof part.filename === 'string' ? part.filename : null);
  }
  return out;
}

/** An output's text: a string, parts joined with nothing between them, a screenshot as an image, else JSON. */
function outputOf(item: JsonValue, name: string, id: string | undefined): ToolResult {
  const obj = isJsonObject(item) ? item : {};
  const output = obj.output;
  let text = '';
  let images = 0;
  let files = 0;
  if (typeof output === 'string') text = output;
  else if (Array.isArray(output)) {
    ({ text, images, files } = joinResultParts(output, (part): ResultPart => {
      if (!isJsonObject(part)) return null;
      if (typeof part.text === 'string') return { text: part.text };
      if (part.type === 'input_image') return 'image';
      if (part.type === 'input_file') return { file: typeof part.filename === 'string' ? part.filename : null };
      return null;
    }));
  } else if (isJsonObject(output)) {
    // The Agents SDK's `{type: "text", text}` output.
    if (output.type === 'text' && typeof output.text === 'string') text = output.text;
    else if (
      typeof output.image_url === 'string' ||
      (typeof output.type === 'string' && output.type.includes('screenshot'))
    ) {
      text = '<image>';
      images = 1;
    } else text = renderArguments(output);
  } else if (obj.type === 'mcp_approval_response') {
    text = renderArguments({ approve: obj.approve ?? null });
  }
  return { name, text, error: false, images, files, ...(id === undefined ? {} : { id }) };
}

/** A web search call's `action` without its `sources`, or undefined for any other item. */
function searchAction(item: JsonObject): JsonValue | undefined {
  const action = item.action;
  if (item.type !== 'web_search_call' || !isJsonObject(action) || action.sources === undefined) return undefined;
  const { sources: _sources, ...rest } = action;
  return rest;
}

/** A value given as the model reads it: a string as it is, anything else as JSON. */
function textOf(value: JsonValue): string {
  return typeof value === 'string' ? value : renderArguments(value);
}

/** Whether a field holds something: not absent, not null. */
function isPresent(value: JsonValue | undefined): value is JsonValue {
  return value !== undefined && value !== null;
}

/**
 * The result a server-side item holds, as the model reads it, or null when it holds none: a self-contained call's
 * `error` (marked), `output` (MCP), `results` (file search), `outputs` (code interpreter logs; images as images),
 * `result` (a generated image), a web search's `sources`; a server-side output without `call_id` (tool search) its
 * `tools`, else `output`. Named after the call: the type without `_call` or `_output`, or the item's `name`.
 */
function serverResultOf(item: JsonValue): ToolResult | null {
  if (!isJsonObject(item) || typeof item.type !== 'string') return null;
  const kind = kindOf(item);
  const name = typeof item.name === 'string' ? item.name : item.type.replace(/_(call|output)$/, '');
  const result = (text: string, images = 0, files = 0, error = false): ToolResult => ({
    name,
    text,
    error,
    images,
    files,
  });
  if (kind === 'other' && item.type.endsWith('_output'))
    return isPresent(item.tools)
      ? result(textOf(item.tools))
      : isPresent(item.output)
        ? result(textOf(item.output))
        : null;
  if (kind !== 'self-call' || item.type === 'mcp_approval_request') return null;
  if (isPresent(item.error)) return result(textOf(item.error), 0, 0, true);
  if (isPresent(item.output)) return result(textOf(item.output));
  if (isPresent(item.results)) return result(textOf(item.results));
  if (Array.isArray(item.outputs) && item.outputs.length > 0) {
    const joined = joinResultParts(item.outputs, (part): ResultPart => {
      if (!isJsonObject(part)) return null;
      if (typeof part.logs === 'string') return { text: part.logs };
      return part.type === 'image' ? 'image' : null;
    });
    return result(joined.text, joined.images, joined.files);
  }
  if (item.type === 'image_generation_call' && typeof item.result === 'string' && item.result !== '')
    return result('<image>', 1);
  const action = item.action;
  if (isJsonObject(action) && isPresent(action.sources)) return result(textOf(action.sources));
  return null;
}

/** The results the server-side items of a core assistant message hold, in item order. */
function serverResults(values: readonly JsonValue[]): ToolResult[] {
  return values.map(serverResultOf).filter((r): r is ToolResult => r !== null);
}

/** The content of a core message made of several assistant-side items. */
function assistantContent(values: readonly JsonValue[]): Content {
  const texts: string[] = [];
  const toolCalls: ToolCall[] = [];
  let images = 0;
  const files: (string | null)[] = [];
  for (const item of values) {
    if (!isJsonObject(item)) continue;
    const kind = kindOf(item);
    if (kind === 'message') {
      const parts = messageParts(item.content);
      texts.push(...parts.texts);
      images += parts.images;
      files.push(...parts.files);
    } else if (kind === 'call' || kind === 'self-call') {
      const call = callOf(item);
      if (call !== null) toolCalls.push(call);
    }
    // Reasoning, server-side outputs and unknown items are not rendered.
  }
  return { texts, toolCalls, results: [], images, files };
}

/** The text of a message that could be an earlier note: string content, or a single text part. */
function noteCandidate(item: unknown): string | null {
  if (typeof item === 'string') return null;
  const content = isRecord(item) ? own(item, 'content') : undefined;
  if (typeof content === 'string') return content;
  if (Array.isArray(content) && content.length === 1) {
    const only = content[0];
    if (isRecord(only) && typeof own(only, 'text') === 'string') return own(only, 'text') as string;
  }
  return null;
}

/**
 * Whether an item, parsed slim, holds a server-side result (see `serverResultOf`): read from its keys, not its texts.
 */
function holdsServerResult(item: unknown): boolean {
  if (!isRecord(item)) return false;
  const type = own(item, 'type');
  if (typeof type !== 'string') return false;
  const present = (key: string): boolean => own(item, key) !== undefined && own(item, key) !== null;
  const kind = kindOf(item);
  if (kind === 'other') return type.endsWith('_output') && (present('tools') || present('output'));
  if (kind !== 'self-call' || type === 'mcp_approval_request') return false;
  const outputs = own(item, 'outputs');
  const action = own(item, 'action');
  return (
    present('error') ||
    present('output') ||
    present('results') ||
    (Array.isArray(outputs) && outputs.length > 0) ||
    (type === 'image_generation_call' && typeof own(item, 'result') === 'string' && own(item, 'result') !== '') ||
    (isRecord(action) && own(action, 'sources') !== undefined && own(action, 'sources') !== null)
  );
}

/** An assistant-side run being grouped into one core message. */
interface Group {
  readonly items: number[];
  hasMessage: boolean;
  /** Calls whose outputs come later in the list: the group cannot be split, nor parted from them. */
  readonly pending: Set<string>;
  /** Holds anything but unknown items. */
  real: boolean;
  /** Already handed to the builder (a group reopened for a late call stays where it was). */
  added: boolean;
  /** Its items holding server-side results, once a tool message stands for them after it. */
  server: number[] | null;
}

/**
 * Results that server-side items hold follow their message as one tool message standing for no item: counted and
 * shown as results, kept and removed with the items that hold them, never pruned or offloaded. A group reopened for a
 * late call has only its calls' outputs after it, so a tool message added then is still in its step.
 */
function addServerResults(
  builder: ConversationBuilder,
  input: Pick<ConversationInput, 'items' | 'raws' | 'whole'>,
  g: Group,
): void {
  const holding = g.items.filter((i) => holdsServerResult(input.items[i]));
  if (g.server !== null) {
    for (const i of holding) if (!g.server.includes(i)) g.server.push(i);
    return;
  }
  if (holding.length === 0) return;
  g.server = holding;
  builder.add({
    role: 'tool',
    fixed: true,
    content: () => ({ ...EMPTY_CONTENT, results: serverResults(holding.map((i) => itemValue(input, i))) }),
    items: [],
  });
}

/** Where the output answering each call id is (the last one, when several claim it). */
function outputPositions(items: readonly unknown[]): Map<string, number> {
  const at = new Map<string, number>();
  items.forEach((item, k) => {
    if (isRecord(item) && kindOf(item) === 'output') {
      const id = answeredId(item);
      if (id !== undefined) at.set(id, k);
    }
  });
  return at;
}

function checkItem(input: ConversationInput, k: number, item: unknown): Kind {
  const kind = kindOf(item);
  if (kind !== null) return kind;
  if (!isRecord(item)) input.fail(k, `expected an item object, found ${describe(item)}`);
  const role = own(item, 'role');
  if (role !== undefined)
    input.fail(k, `unknown role ${JSON.stringify(role)} (expected user, system, developer or assistant)`);
  return input.fail(k, 'item has neither a "type" nor a "role"');
}

/** Item types the client answers: without a `call_id`, a call and its output cannot find each other. */
const CLIENT_TYPES = new Set(['function_call', 'custom_tool_call', 'function_call_output', 'custom_tool_call_output']);

/**
 * Tool calls and outputs with their call ids, and items of no known role, for `swc inspect`. Calls that hold
 * their own result (web search, MCP calls, server-executed tool search with a null `call_id`) are no calls
 * here; an MCP approval request counts as a call only once some response answers it (leaving one unanswered
 * declines it).
 */
function responsesPairing(input: ConversationInput): Pairing {
  const calls: PairedCall[] = [];
  const results: PairedResult[] = [];
  const problems: { item: number; text: string }[] = [];
  const unknownRoles: { item: number; role: string | null }[] = [];
  const approved = new Set<string>();
  for (const item of input.items) {
    if (isRecord(item) && own(item, 'type') === 'mcp_approval_response' && hasString(item, 'approval_request_id'))
      approved.add(own(item, 'approval_request_id') as string);
  }
  input.items.forEach((item, k) => {
    const kind = kindOf(item);
    if (kind === null) {
      const role = isRecord(item) ? own(item, 'role') : undefined;
      unknownRoles.push({ item: k, role: typeof role === 'string' ? role : null });
      return;
    }
    if (!isRecord(item)) return;
    const type = own(item, 'type');
    if (kind === 'call') {
      const approval = type === 'mcp_approval_request';
      const id = (approval ? own(item, 'id') : callIdOf(item)) as string;
      if (!approval || approved.has(id)) calls.push({ item: k, id, name: callName(item) });
    } else if (kind === 'output') results.push({ item: k, id: answeredId(item) ?? null, name: '' });
    else if (CLIENT_TYPES.has(type as string)) problems.push({ item: k, text: `${type as string} has no "call_id"` });
  });
  return { calls, results, unknownRoles, problems };
}

export const responses: FormatAdapter = {
  name: 'responses',
  listKeys: ['input'],
  ...detectedBy([
    // OpenAI is asked first, and only Responses keeps its list under `input`: there messages are enough; a bare
    // list must show something only Responses writes.
    { each: isPlausibleItem, some: isResponsesMarked },
    {
      each: isPlausibleItem,
      some: (i) => typeof i === 'string' || own(i as Record<string, unknown>, 'role') !== undefined,
      container: (container) => container !== null,
    },
  ]),
  normalize(input: ConversationInput, noteTemplate: string | null): Normalized {
    const builder = new ConversationBuilder();
    builder.instructions(input.container === null ? [] : instructionTexts(own(input.container, 'instructions')));
    const names = new Map<string, string>();
    const outputAt = outputPositions(input.items);
    let group: Group | null = null;
    // The last assistant group: calls of it still waiting for outputs pull later assistant items into it.
    let last: Group | null = null;

    const close = (): void => {
      if (group === null) return;
      const g = group;
      group = null;
      if (!g.real) {
        for (const item of g.items) builder.attach(item);
        return;
      }
      last = g;
      if (!g.added) {
        g.added = true;
        builder.add({
          role: 'assistant',
          content: () => assistantContent(g.items.map((i) => itemValue(input, i))),
          items: g.items,
        });
      }
      addServerResults(builder, input, g);
    };
    const open = (k: number): Group => {
      if (group !== null) return group;
      const previous = last as Group | null;
      // Outputs of one turn's calls sometimes come after more calls: those join the turn, so no call is parted from its output.
      if (previous !== null && [...previous.pending].some((id) => (outputAt.get(id) ?? -1) > k)) group = previous;
      else group = { items: [], hasMessage: false, pending: new Set(), real: false, added: false, server: null };
      return group;
    };

    input.items.forEach((item, k) => {
      const kind = checkItem(input, k, item);
      const record = isRecord(item) ? item : null;
      switch (kind) {
        case 'reasoning':
        case 'message': {
          // A reasoning or message item after a complete message starts the next message.
          const current = group as Group | null;
          if (current !== null && current.hasMessage && current.pending.size === 0) close();
          const g = open(k);
          g.items.push(k);
          g.real = true;
          if (kind === 'message') g.hasMessage = true;
          return;
        }
        case 'call':
        case 'self-call': {
          const g = open(k);
          g.items.push(k);
          g.real = true;
          const id =
            record === null
              ? undefined
              : own(record, 'type') === 'mcp_approval_request'
                ? own(record, 'id')
                : callIdOf(record);
          if (record !== null && typeof id === 'string') {
            names.set(id, callName(record));
            if (kind === 'call' && (outputAt.get(id) ?? -1) > k) g.pending.add(id);
          }
          return;
        }
        case 'other':
          open(k).items.push(k);
          return;
        case 'output': {
          const id = record === null ? undefined : answeredId(record);
          close();
          if (id !== undefined && outputAt.get(id) === k) (last as Group | null)?.pending.delete(id);
          break;
        }
        default:
          close();
          last = null;
          break;
      }
      builder.add(entryOf(kind, item, k, input, names, noteTemplate));
    });
    close();
    return builder.finish();
  },
  makeNote({ text, items }) {
    // Typed (`"type": "message"`) when the file's latest user message is, so it looks like its neighbours; the
    // content stays one string, which every reader of chat-like lists recognises as a note on later runs.
    const messages = items.filter(
      (i) =>
        isRecord(i) && (own(i, 'type') === 'message' || (own(i, 'type') === undefined && own(i, 'role') !== undefined)),
    );
    const style = (messages.filter((i) => own(i as Record<string, unknown>, 'role') === 'user').pop() ??
      messages.pop()) as Record<string, unknown> | undefined;
    return style !== undefined && own(style, 'type') === 'message'
      ? { type: 'message', role: 'user', content: text }
      : { role: 'user', content: text };
  },
  pairing: responsesPairing,
  writePruned: writePrunedResponses,
};

/**
 * The entry of an item that stands as a message of its own: a tool output (named after the call it answers), or a
 * user or system message; its content is parsed when read.
 * @param kind the item's kind: 'output', 'user' or 'system'
 * @param item the item, parsed
 * @param k its position in the list
 * @param input the conversation the item is read from
 * @param names each call id's tool name, as far as the list has been read
 * @param noteTemplate the active note template, or null
 */
function entryOf(
  kind: Kind,
  item: unknown,
  k: number,
  input: Pick<ConversationInput, 'items' | 'raws' | 'whole'>,
  names: ReadonlyMap<string, string>,
  noteTemplate: string | null,
): Entry {
  const record = isRecord(item) ? item : null;
  if (kind === 'output') {
    const id = record === null ? undefined : answeredId(record);
    return {
      role: 'tool',
      content: () => ({
        texts: [],
        toolCalls: [],
        results: [outputOf(itemValue(input, k), id === undefined ? '' : (names.get(id) ?? ''), id)],
        images: 0,
        files: [],
      }),
      items: [k],
    };
  }
  const text = kind === 'user' ? noteCandidate(item) : null;
  return {
    role: kind === 'user' ? 'user' : 'system',
    ...noteMarks(text, noteTemplate),
    content: () => {
      const value = itemValue(input, k);
      const parts = messageParts(typeof value === 'string' ? value : isJsonObject(value) ? value.content : undefined);
      return { texts: parts.texts, toolCalls: [], results: [], images: parts.images, files: parts.files };
    },
    items: [k],
  };
}

/** A pruned output item (`function_call_output`…): its `output` becomes the placeholder. */
function writePrunedResponses(request: PruneWrite): ReadonlyMap<number, string> {
  return writeResults(request, (_raw, root) => [{ object: root, key: 'output' }]);
}
