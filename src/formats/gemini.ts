import { joinResultParts, type ResultPart } from '../core/render.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../core/json/value.js';
import { noteMarks } from '../core/note.js';
import { renderArguments } from '../core/json/python.js';
import type { Content, Role, ToolCall, ToolResult } from '../core/types.js';
import { ConversationBuilder, instructionTexts } from './conversation-builder.js';
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
import { elementSpans, isObjectAt, keysAt, memberSpan, valueAt, writeResults, type ResultSlot } from './raw-edit.js';
import type { Span } from '../io/json-layout.js';

/**
 * Google Gemini: `{contents, systemInstruction, ...}` in the REST API's camelCase or the Python SDK's snake_case,
 * a bare contents list, or an ADK session `{id, events: [{author, content, ...}]}` whose events hold contents.
 * Code execution is a server tool: `executableCode` renders as a `code_execution(ARGS)` call and its
 * `codeExecutionResult` (in the same model content) is not rendered, as thoughts are not.
 */

/** Content roles (a Map: a role such as `constructor` in the input is data, not a prototype lookup). */
const ROLES = new Map<string, Role>([
  ['user', 'user'],
  ['model', 'assistant'],
  ['function', 'tool'],
]);

/** A part field in camelCase or snake_case (`functionCall` / `function_call`). */
function field(part: JsonObject, camel: string, snake: string): JsonValue | undefined {
  return part[camel] ?? part[snake];
}

function fieldOf(part: Record<string, unknown>, camel: string, snake: string): unknown {
  return own(part, camel) ?? own(part, snake);
}

function isGeminiContent(item: unknown): item is Record<string, unknown> {
  if (!isRecord(item) || !Array.isArray(own(item, 'parts'))) return false;
  const role = own(item, 'role');
  return role === undefined || typeof role === 'string';
}

/** An ADK event: an author and, usually, a content (events that only change state have none). */
function isAdkEvent(item: unknown): boolean {
  if (!isRecord(item) || typeof own(item, 'author') !== 'string') return false;
  const content = own(item, 'content');
  return content === undefined || content === null || isGeminiContent(content);
}

/** The content an item holds: the item itself, or an ADK event's `content`. */
function contentOfItem(item: unknown): Record<string, unknown> | null {
  if (isGeminiContent(item)) return item;
  if (isRecord(item) && isGeminiContent(own(item, 'content'))) return own(item, 'content') as Record<string, unknown>;
  return null;
}

/** Whether a content answers calls: a user content with any function response part is a tool-result content. */
function carriesResponses(content: Record<string, unknown>): boolean {
  const parts = own(content, 'parts') as unknown[];
  return parts.some((p) => isRecord(p) && fieldOf(p, 'functionResponse', 'function_response') !== undefined);
}

/** Whether a file's MIME type is an image (rendered `<image>`) rather than a file. */
function isImage(blob: JsonObject): boolean {
  const mime = field(blob, 'mimeType', 'mime_type');
  return typeof mime === 'string' && mime.startsWith('image/');
}

/** A file's name: its display name, else the last segment of its URI. */
function fileName(blob: JsonObject): string | null {
  const display = field(blob, 'displayName', 'display_name');
  if (typeof display === 'string' && display !== '') return display;
  const uri = field(blob, 'fileUri', 'file_uri');
  if (typeof uri !== 'string') return null;
  // Plain string scans, not regular expressions: a URI of 100,000 slashes must not take seconds.
  const cut = [uri.indexOf('?'), uri.indexOf('#')].filter((i) => i !== -1);
  let path = cut.length > 0 ? uri.slice(0, Math.min(...cut)) : uri;
  let end = path.length;
  while (end > 0 && path.charCodeAt(end - 1) === 0x2f) end--;
  path = path.slice(0, end);
  const last = path.slice(path.lastIndexOf('/') + 1);
  return last === '' ? null : last;
}

function blobOf(part: JsonObject): JsonObject | null {
  const blob = field(part, 'inlineData', 'inline_data') ?? field(part, 'fileData', 'file_data');
  return isJsonObject(blob) ? blob : null;
}

/**
 * A function response's text and whether it reports an error, by Google's convention: `output` holds the output,
 * `error` the error details, and without either the whole response is the output. A response of one string
 * member (`{"result": TEXT}`, `{"return_value": TEXT}`) reads as that string; anything else reads as its JSON.
 */
function responseText(response: JsonValue | undefined): { text: string; error: boolean } {
  const asText = (value: JsonValue): string => (typeof value === 'string' ? value : renderArguments(value));
  if (response === undefined || response === null) return { text: '', error: false };
  if (!isJsonObject(response)) return { text: asText(response), error: false };
  if (response.output !== undefined) return { text: asText(response.output), error: false };
  if (response.error !== undefined && response.error !== null) return { text: asText(response.error), error: true };
  const keys = Object.keys(response);
  const only = keys.length === 1 ? response[keys[0] as string] : undefined;
  return { text: typeof only === 'string' ? only : renderArguments(response), error: false };
}

function resultOf(fr: JsonObject, names: ReadonlyMap<string, string>): ToolResult {
  const id = fr.id;
  const linked = typeof id === 'string' ? names.get(id) : undefined;
  const name = linked ?? (typeof fr.name === 'string' ? fr.name : '');
  const read = responseText(fr.response);
  // Multimodal function responses carry their images and files as parts.
  const media = joinResultParts(Array.isArray(fr.parts) ? fr.parts : [], (part): ResultPart => {
    const blob = isJsonObject(part) ? blobOf(part) : null;
    if (blob === null) return null;
    return isImage(blob) ? 'image' : { file: fileName(blob) };
  });
  return {
    name,
    text: read.text + media.text,
    error: read.error,
    images: media.images,
    files: media.files,
    ...(typeof id === 'string' && id !== '' ? { id } : {}),
  };
}

/**
 * What one Gemini content says, in the core's terms.
 * @param content the content, parsed losslessly
 * @param role its role in the core
 * @param names function names by call id
 */
export function geminiContent(content: JsonValue, role: Role, names: ReadonlyMap<string, string>): Content {
  const texts: string[] = [];
  const toolCalls: ToolCall[] = [];
  const results: ToolResult[] = [];
  let images = 0;
  const files: (string | null)[] = [];
  const parts = isJsonObject(content) && Array.isArray(content.parts) ? content.parts : [];
  for (const part of parts) {
    if (!isJsonObject(part)) continue;
    const call = field(part, 'functionCall', 'function_call');
    const response = field(part, 'functionResponse', 'function_response');
    const code = field(part, 'executableCode', 'executable_code');
    const blob = blobOf(part);
    if (typeof part.text === 'string') {
      if (part.thought !== true) texts.push(part.text);
    } else if (isJsonObject(call)) {
      if (role === 'assistant')
        toolCalls.push({
          name: typeof call.name === 'string' ? call.name : '',
          arguments: renderArguments(call.args ?? Object.create(null)),
          ...(typeof call.id === 'string' && call.id !== '' ? { id: call.id } : {}),
        });
    } else if (isJsonObject(response)) {
      if (role === 'tool') results.push(resultOf(response, names));
    } else if (isJsonObject(code)) {
      if (role === 'assistant') toolCalls.push({ name: 'code_execution', arguments: renderArguments(code) });
    } else if (blob !== null) {
      if (isImage(blob)) images++;
      else files.push(fileName(blob));
    }
    // Thoughts, code execution results and unknown parts are not rendered.
  }
  return { texts, toolCalls, results, images, files };
}

/** The text of a user content that could be an earlier note: a single text part. */
function noteCandidate(content: Record<string, unknown>): string | null {
  const parts = own(content, 'parts') as unknown[];
  if (parts.length !== 1) return null;
  const only = parts[0];
  return isRecord(only) && typeof own(only, 'text') === 'string' && own(only, 'thought') !== true
    ? (own(only, 'text') as string)
    : null;
}

/** The system instruction of a request body, in either spelling, or of a Python SDK `config`. */
function systemInstruction(container: Readonly<Record<string, unknown>> | null): unknown {
  if (container === null) return undefined;
  const direct = own(container, 'systemInstruction') ?? own(container, 'system_instruction');
  if (direct !== undefined) return direct;
  const config = own(container, 'config');
  return isRecord(config) ? (own(config, 'systemInstruction') ?? own(config, 'system_instruction')) : undefined;
}

function roleOf(input: ConversationInput, k: number, content: Record<string, unknown>): Role {
  const roleName = own(content, 'role');
  if (roleName !== undefined && (typeof roleName !== 'string' || !ROLES.has(roleName))) {
    input.fail(k, `unknown role ${JSON.stringify(roleName)} (Gemini contents are "user" or "model")`);
  }
  const role = roleName === undefined ? 'user' : (ROLES.get(roleName) as Role);
  return role === 'user' && carriesResponses(content) ? 'tool' : role;
}

function checkParts(input: ConversationInput, k: number, content: Record<string, unknown>): void {
  const parts = own(content, 'parts') as unknown[];
  const bad = parts.findIndex((p) => !isRecord(p));
  if (bad !== -1) input.fail(k, `part ${bad + 1} must be an object, found ${describe(parts[bad])}`);
}

/** A call's or response's id and name, in either spelling of the part. */
function callIdentity(value: Record<string, unknown>): { id: string | null; name: string } {
  const id = own(value, 'id');
  const name = own(value, 'name');
  return { id: typeof id === 'string' && id !== '' ? id : null, name: typeof name === 'string' ? name : '' };
}

/**
 * Why an item is no content of a known role (its role, or null when it has none), or null when it is one, or
 * when `normalize` will name what is wrong with it itself (a content-less ADK event is fine; a role without parts is not).
 */
function unknownRoleOf(item: unknown, content: Record<string, unknown> | null): { role: string | null } | null {
  if (content === null && isAdkEvent(item)) return null;
  if (content === null && !isRecord(item)) return { role: null };
  const role = own(content ?? (item as Record<string, unknown>), 'role');
  if (role === undefined) return content === null ? { role: null } : null;
  if (typeof role !== 'string') return { role: null };
  return ROLES.has(role) ? null : { role };
}

/**
 * Function calls and responses with their ids, and contents of no known role, for `swc inspect`. Ids are
 * optional in Gemini: a response without one answers the first unanswered call of its name right before it.
 */
function geminiPairing(input: ConversationInput): Pairing {
  const calls: PairedCall[] = [];
  const results: PairedResult[] = [];
  const problems: { item: number; text: string }[] = [];
  const unknownRoles: { item: number; role: string | null }[] = [];
  // A run of consecutive model contents is one turn: the responses right after it answer the calls of all of them.
  // Anything else between them ends the turn (its results then look for calls in the message before them).
  let turn: { turn: string } | Record<string, never> = {};
  let afterModel = false;
  input.items.forEach((item, k) => {
    const content = contentOfItem(item);
    const unknown = unknownRoleOf(item, content);
    if (unknown !== null) {
      unknownRoles.push({ item: k, ...unknown });
      return;
    }
    if (content === null) return;
    const model = own(content, 'role') === 'model';
    if (model && !afterModel) turn = { turn: `model contents from item ${k}` };
    else if (!model && !carriesResponses(content)) turn = {};
    afterModel = model;
    for (const part of own(content, 'parts') as unknown[]) {
      if (!isRecord(part)) continue;
      const call = fieldOf(part, 'functionCall', 'function_call');
      const response = fieldOf(part, 'functionResponse', 'function_response');
      if (isRecord(call)) {
        if (model) calls.push({ item: k, ...callIdentity(call), ...turn });
        else
          problems.push({
            item: k,
            text: `function call ${JSON.stringify(callIdentity(call).name)} in a content that is not the model's`,
          });
      } else if (isRecord(response)) {
        if (!model) results.push({ item: k, ...callIdentity(response), ...turn });
        else
          problems.push({
            item: k,
            text: `function response ${JSON.stringify(callIdentity(response).name)} in a model content (responses go in the content after the call)`,
          });
      }
    }
  });
  return { calls, results, unknownRoles, problems, idsOptional: true };
}

export const gemini: FormatAdapter = {
  name: 'gemini',
  listKeys: ['contents', 'events'],
  ...detectedBy([{ each: isGeminiContent }, { each: isAdkEvent, some: (i) => contentOfItem(i) !== null }]),
  normalize(input: ConversationInput, noteTemplate: string | null): Normalized {
    const builder = new ConversationBuilder();
    builder.instructions(instructionTexts(systemInstruction(input.container)));
    return normalizedFrom(input, noteTemplate, builder, new Map<string, string>(), 0) as Normalized;
  },
  makeNote({ text, items }) {
    const content = { role: 'user', parts: [{ text }] };
    // In an ADK session the note is an event by the user.
    return items.some((i) => contentOfItem(i) !== null && contentOfItem(i) !== i)
      ? { author: 'user', content }
      : content;
  },
  pairing: geminiPairing,
  writePruned: writePrunedGemini,
};

/**
 * Where a function response's text is, as `responseText` reads it: `output`, else a non-null `error`, else the one
 * string member; otherwise the whole `response` becomes `{"output": PLACEHOLDER}`.
 */
function responseSlot(raw: string, fr: Span): ResultSlot {
  const response = memberSpan(raw, fr, 'response');
  const whole: ResultSlot = { object: fr, key: 'response', wrap: (text) => ({ output: text }) };
  if (response === undefined || !isObjectAt(raw, response)) return whole;
  const keys = keysAt(raw, response);
  if (keys.includes('output')) return { object: response, key: 'output' };
  if (keys.includes('error') && valueAt(raw, memberSpan(raw, response, 'error')) !== null)
    return { object: response, key: 'error' };
  if (keys.length === 1 && raw.charCodeAt(memberSpan(raw, response, keys[0] as string)?.start ?? 0) === 0x22)
    return { object: response, key: keys[0] as string };
  return whole;
}

/** The content an item is: the item itself, or an ADK event's `content`. */
function contentSpan(raw: string, root: Span): Span {
  const inner = memberSpan(raw, root, 'content');
  return inner !== undefined && isObjectAt(raw, inner) && memberSpan(raw, root, 'parts') === undefined ? inner : root;
}

/** A pruned content: each function response part's text becomes its placeholder. */
function writePrunedGemini(request: PruneWrite): ReadonlyMap<number, string> {
  return writeResults(request, (raw, root) =>
    elementSpans(raw, memberSpan(raw, contentSpan(raw, root), 'parts')).flatMap((part) => {
      const fr = memberSpan(raw, part, 'functionResponse') ?? memberSpan(raw, part, 'function_response');
      return fr !== undefined && isObjectAt(raw, fr) ? [responseSlot(raw, fr)] : [];
    }),
  );
}

/**
 * The items of `input` from `from` on added to `builder`, the items before them read already with `names` the names
 * of their calls; with a continuation for a longer input (`Normalized.more`). A continuation whose first new item is
 * an event with no content (it would go with a message made already) returns null: the input is then read whole.
 */
function normalizedFrom(
  input: ConversationInput,
  noteTemplate: string | null,
  builder: ConversationBuilder,
  names: Map<string, string>,
  from: number,
): Normalized | null {
  let added = false;
  const add = (item: unknown, k: number): boolean => {
    const content = contentOfItem(item);
    if (content === null) {
      if (isAdkEvent(item)) {
        // An event with no content (a state change): it goes with the message before it.
        // In a continuation, before a message of its own: it would change a message made already.
        if (from > 0 && !added) return false;
        builder.attach(k);
        return true;
      }
      input.fail(
        k,
        isRecord(item) ? 'content has no "parts" list' : `expected a content object, found ${describe(item)}`,
      );
    }
    checkParts(input, k, content);
    const role = roleOf(input, k, content);
    for (const part of own(content, 'parts') as Record<string, unknown>[]) {
      const call = fieldOf(part, 'functionCall', 'function_call');
      if (isRecord(call) && typeof own(call, 'id') === 'string' && typeof own(call, 'name') === 'string')
        names.set(own(call, 'id') as string, own(call, 'name') as string);
    }
    const text = role === 'user' ? noteCandidate(content) : null;
    const wrapped = content !== item;
    // A function response carrying media parts is never pruned or offloaded: the writer replaces its text only, so
    // the media would stay while the decision counted them gone.
    const withMedia = (own(content, 'parts') as Record<string, unknown>[]).some((part) => {
      const response = fieldOf(part, 'functionResponse', 'function_response');
      const media = isRecord(response) ? own(response, 'parts') : undefined;
      return Array.isArray(media) && media.length > 0;
    });
    builder.add({
      role,
      ...(withMedia ? { fixed: true } : {}),
      ...noteMarks(text, noteTemplate),
      content: () => {
        const value = itemValue(input, k);
        return geminiContent(wrapped && isJsonObject(value) ? (value.content ?? null) : value, role, names);
      },
      items: [k],
    });
    added = true;
    return true;
  };
  // Iterated as a whole normalization always was (a hole in a sparse array is no message); a continuation from its
  // first new item, skipping holes the same way.
  const items = input.items;
  if (from === 0) items.forEach((item, k) => void add(item, k));
  else for (let k = from; k < items.length; k++) if (k in items && !add(items[k], k)) return null;
  const read = items.length;
  return builder.grown(
    (next) => normalizedFrom(next, noteTemplate, builder, names, read) ?? gemini.normalize(next, noteTemplate),
  );
}
