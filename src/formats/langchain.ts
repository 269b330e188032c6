import { joinResultParts, type ResultPart } from '../core/render.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../core/json/value.js';
import { noteMarks } from '../core/note.js';
import { renderArguments, renderArgumentsString } from '../core/json/python.js';
import type { Content, Message, Role, ToolCall, ToolResult } from '../core/types.js';
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
  oneItemEach,
  detectedBy,
} from './types.js';
import { memberSpan, writeResults } from './raw-edit.js';

/**
 * LangChain serialized messages: `messages_to_dict` (`{type, data}`) and `dumpd`
 * (`{lc: 1, type: "constructor", id: [..., "AIMessage"], kwargs}`).
 */

/** Message types and the role each plays; `chat` takes its role from the message. */
const TYPES: Record<string, Role | 'chat'> = {
  human: 'user',
  ai: 'assistant',
  tool: 'tool',
  function: 'tool',
  system: 'system',
  developer: 'system',
  chat: 'chat',
};

/** `dumpd` class names and the `type` they stand for. */
const CLASSES: Record<string, string> = {
  HumanMessage: 'human',
  AIMessage: 'ai',
  ToolMessage: 'tool',
  FunctionMessage: 'function',
  SystemMessage: 'system',
  ChatMessage: 'chat',
};

const CHAT_ROLES: Record<string, Role> = {
  user: 'user',
  human: 'user',
  assistant: 'assistant',
  ai: 'assistant',
  system: 'system',
  developer: 'system',
  tool: 'tool',
  function: 'tool',
};

/** The message type of an item in either form (chunk classes count as their message), or null. */
function typeOf(item: unknown): string | null {
  if (!isRecord(item)) return null;
  if (own(item, 'lc') !== undefined) {
    const id = own(item, 'id');
    if (own(item, 'type') !== 'constructor' || !Array.isArray(id) || !isRecord(own(item, 'kwargs'))) return null;
    const name = id[id.length - 1];
    const type = typeof name === 'string' ? own(CLASSES, name.replace(/Chunk$/, '')) : undefined;
    return typeof type === 'string' ? type : null;
  }
  const type = own(item, 'type');
  if (typeof type !== 'string' || !isRecord(own(item, 'data'))) return null;
  const base = type.endsWith('MessageChunk') ? type.slice(0, -'MessageChunk'.length).toLowerCase() : type;
  return own(TYPES, base) !== undefined ? base : null;
}

/** Whether an item is written by `dumpd`. */
function isDumpd(item: unknown): boolean {
  return isRecord(item) && own(item, 'lc') !== undefined;
}

/** The message's fields: `data` or `kwargs`. */
function fieldsOf(value: JsonObject): JsonObject {
  const fields = value.lc !== undefined ? value.kwargs : value.data;
  return isJsonObject(fields) ? fields : {};
}

function textsOf(content: JsonValue | undefined): {
  texts: string[];
  images: number;
  files: (string | null)[];
  blockCalls: ToolCall[];
} {
  const out = { texts: [] as string[], images: 0, files: [] as (string | null)[], blockCalls: [] as ToolCall[] };
  if (typeof content === 'string') {
    if (content !== '') out.texts.push(content);
    return out;
  }
  if (!Array.isArray(content)) return out;
  for (const block of content) {
    if (typeof block === 'string') {
      out.texts.push(block);
      continue;
    }
    if (!isJsonObject(block)) continue;
    const type = block.type;
    if (type === 'text' && typeof block.text === 'string') out.texts.push(block.text);
    else if (type === 'image_url' || type === 'image') out.images++;
    else if (type === 'file') out.files.push(typeof block.filename === 'string' ? block.filename : null);
    else if ((type === 'tool_use' || type === 'tool_call') && typeof block.name === 'string') {
      out.blockCalls.push({ name: block.name, arguments: renderArguments(block.input ?? block.args ?? {}) });
    }
  }
  return out;
}

/**
 * The calls of an AI message: `tool_calls` (and `invalid_tool_calls`), or when it has none the copies that
 * mirror them (`additional_kwargs.tool_calls`, `tool_use` blocks), so a call is never counted twice.
 */
function callsOf(fields: JsonObject, blockCalls: ToolCall[]): ToolCall[] {
  const calls: ToolCall[] = [];
  if (Array.isArray(fields.tool_calls)) {
    for (const call of fields.tool_calls) {
      if (isJsonObject(call))
        calls.push({
          name: typeof call.name === 'string' ? call.name : '',
          arguments: renderArguments(call.args ?? {}),
        });
    }
  }
  if (Array.isArray(fields.invalid_tool_calls)) {
    for (const call of fields.invalid_tool_calls) {
      if (!isJsonObject(call)) continue;
      const args = call.args;
      calls.push({
        name: typeof call.name === 'string' ? call.name : '',
        arguments: typeof args === 'string' ? renderArgumentsString(args) : renderArguments(args ?? null),
      });
    }
  }
  if (calls.length > 0) return calls;
  if (blockCalls.length > 0) return blockCalls;
  const extra = isJsonObject(fields.additional_kwargs) ? fields.additional_kwargs : {};
  if (Array.isArray(extra.tool_calls)) {
    for (const call of extra.tool_calls) {
      const fn = isJsonObject(call) && isJsonObject(call.function) ? call.function : null;
      if (fn === null) continue;
      const args = fn.arguments;
      calls.push({
        name: typeof fn.name === 'string' ? fn.name : '',
        arguments: typeof args === 'string' ? renderArgumentsString(args) : renderArguments(args ?? null),
      });
    }
  }
  if (isJsonObject(extra.function_call)) {
    const fn = extra.function_call;
    const args = fn.arguments;
    calls.push({
      name: typeof fn.name === 'string' ? fn.name : '',
      arguments: typeof args === 'string' ? renderArgumentsString(args) : renderArguments(args ?? null),
    });
  }
  return calls;
}

function resultOf(content: JsonValue | undefined): { text: string; images: number; files: number } {
  if (typeof content === 'string') return { text: content, images: 0, files: 0 };
  return joinResultParts(Array.isArray(content) ? content : [], (block): ResultPart => {
    if (typeof block === 'string') return { text: block };
    if (!isJsonObject(block)) return null;
    if (typeof block.text === 'string') return { text: block.text };
    if (block.type === 'image_url' || block.type === 'image') return 'image';
    if (block.type === 'file') return { file: typeof block.filename === 'string' ? block.filename : null };
    return null;
  });
}

/** The role of a valid item, failing with the reason otherwise. */
function roleOf(item: unknown, fail: (reason: string) => never): Role {
  if (!isRecord(item)) fail(`expected a serialized message object, found ${describe(item)}`);
  const type = typeOf(item);
  if (type === null) {
    const name = isDumpd(item) ? JSON.stringify(own(item, 'id')) : JSON.stringify(own(item, 'type'));
    fail(`not a LangChain message: ${name} (expected human, ai, tool, system, function or chat)`);
  }
  const role = TYPES[type] as Role | 'chat';
  if (role !== 'chat') return role;
  const fields = own(item, isDumpd(item) ? 'kwargs' : 'data') as Record<string, unknown>;
  const chatRole = own(fields, 'role');
  const mapped = typeof chatRole === 'string' ? (own(CHAT_ROLES, chatRole) as Role | undefined) : undefined;
  if (mapped === undefined)
    fail(`chat message with role ${JSON.stringify(chatRole)} (expected user, assistant, system or tool)`);
  return mapped;
}

/**
 * The role of an item, or the role or type it names that no LangChain message has (null when it names none).
 * A known type in a broken shape is neither: `normalize` says what is wrong with it.
 */
function roleOrUnknown(item: unknown): { role: Role | null } | { unknown: string | null } {
  if (!isRecord(item)) return { unknown: null };
  const type = typeOf(item);
  if (type === null) {
    const id = own(item, 'id');
    const name = isDumpd(item) ? (Array.isArray(id) ? id[id.length - 1] : undefined) : own(item, 'type');
    if (typeof name !== 'string') return { unknown: null };
    const chunk = name.endsWith('MessageChunk') ? name.slice(0, -'MessageChunk'.length).toLowerCase() : name;
    const known = own(CLASSES, name.replace(/Chunk$/, '')) !== undefined || own(TYPES, chunk) !== undefined;
    return known ? { role: null } : { unknown: name };
  }
  const role = TYPES[type] as Role | 'chat';
  if (role !== 'chat') return { role };
  const chatRole = own(own(item, isDumpd(item) ? 'kwargs' : 'data') as Record<string, unknown>, 'role');
  const mapped = typeof chatRole === 'string' ? (own(CHAT_ROLES, chatRole) as Role | undefined) : undefined;
  return mapped === undefined ? { unknown: typeof chatRole === 'string' ? chatRole : null } : { role: mapped };
}

/** A string field of a record, or null. */
function stringIn(value: unknown, key: string): string | null {
  const field = isRecord(value) ? own(value, key) : undefined;
  return typeof field === 'string' ? field : null;
}

/**
 * The ids and names of an AI message's calls, from the same place `callsOf` reads them: `tool_calls` and
 * `invalid_tool_calls`, else `tool_use` / `tool_call` content blocks, else `additional_kwargs`.
 */
function callIds(fields: Record<string, unknown>): { id: string | null; name: string }[] {
  const list = (key: string): unknown[] => {
    const value = own(fields, key);
    return Array.isArray(value) ? value.filter(isRecord) : [];
  };
  const direct = [...list('tool_calls'), ...list('invalid_tool_calls')].map((c) => ({
    id: stringIn(c, 'id'),
    name: stringIn(c, 'name') ?? '',
  }));
  if (direct.length > 0) return direct;
  const content = own(fields, 'content');
  const blocks = (Array.isArray(content) ? content : []).filter(
    (b) =>
      isRecord(b) &&
      (own(b, 'type') === 'tool_use' || own(b, 'type') === 'tool_call') &&
      typeof own(b, 'name') === 'string',
  );
  if (blocks.length > 0) return blocks.map((b) => ({ id: stringIn(b, 'id'), name: stringIn(b, 'name') as string }));
  const extra = own(fields, 'additional_kwargs');
  const out: { id: string | null; name: string }[] = [];
  const openaiCalls = isRecord(extra) ? own(extra, 'tool_calls') : undefined;
  for (const call of Array.isArray(openaiCalls) ? openaiCalls : []) {
    const fn = isRecord(call) ? own(call, 'function') : undefined;
    if (isRecord(fn)) out.push({ id: stringIn(call, 'id'), name: stringIn(fn, 'name') ?? '' });
  }
  const legacy = isRecord(extra) ? own(extra, 'function_call') : undefined;
  if (isRecord(legacy)) out.push({ id: null, name: stringIn(legacy, 'name') ?? '' });
  return out;
}

/** Tool calls and results with their ids, and items of no known type or role, for `swc inspect`. */
function langchainPairing(input: ConversationInput): Pairing {
  const calls: PairedCall[] = [];
  const results: PairedResult[] = [];
  const unknownRoles: { item: number; role: string | null }[] = [];
  input.items.forEach((item, k) => {
    const found = roleOrUnknown(item);
    if ('unknown' in found) {
      unknownRoles.push({ item: k, role: found.unknown });
      return;
    }
    if (found.role === null) return;
    const fields = own(item as Record<string, unknown>, isDumpd(item) ? 'kwargs' : 'data') as Record<string, unknown>;
    if (found.role === 'assistant') {
      for (const call of callIds(fields)) calls.push({ item: k, ...call });
    } else if (found.role === 'tool') {
      // A FunctionMessage names its function but no call id.
      const id = typeOf(item) === 'function' ? null : stringIn(fields, 'tool_call_id');
      results.push({ item: k, id, name: stringIn(fields, 'name') ?? '' });
    }
  });
  return { calls, results, unknownRoles };
}

/** The key order and class path the file's own human messages use, for the note. */
function humanShape(items: readonly unknown[]): { dumpd: boolean; keys: string[] | null; path: string[] } {
  const dumpd = items.filter(isDumpd).length * 2 > items.length;
  let path = ['langchain', 'schema', 'messages'];
  let keys: string[] | null = null;
  for (const item of items) {
    if (!isRecord(item) || isDumpd(item) !== dumpd) continue;
    if (dumpd) {
      const id = own(item, 'id');
      if (Array.isArray(id) && id.length > 1 && id.every((p) => typeof p === 'string'))
        path = (id as string[]).slice(0, -1);
    }
    if (typeOf(item) === 'human') {
      const fields = own(item, dumpd ? 'kwargs' : 'data');
      if (isRecord(fields)) keys = Object.keys(fields);
      break;
    }
  }
  return { dumpd, keys, path };
}

/** Default values of a human message's fields as `messages_to_dict` writes them. */
const HUMAN_DEFAULTS: Record<string, unknown> = {
  additional_kwargs: {},
  response_metadata: {},
  type: 'human',
  name: null,
  id: null,
  example: false,
};

export const langchain: FormatAdapter = {
  name: 'langchain',
  listKeys: ['messages'],
  ...detectedBy([{ each: (item) => typeOf(item) !== null }]),
  normalize(input, noteTemplate): Normalized {
    const callNames = new Map<string, string>();
    const messages: Message[] = input.items.map((item, k) => {
      const role = roleOf(item, (reason) => input.fail(k, reason));
      const fields = own(item as Record<string, unknown>, isDumpd(item) ? 'kwargs' : 'data') as Record<string, unknown>;
      const calls = own(fields, 'tool_calls');
      if (Array.isArray(calls)) {
        for (const call of calls) {
          if (isRecord(call) && typeof own(call, 'id') === 'string' && typeof own(call, 'name') === 'string')
            callNames.set(own(call, 'id') as string, own(call, 'name') as string);
        }
      }
      const text = own(fields, 'content');
      const marks = noteMarks(role === 'user' && typeof text === 'string' ? text : null, noteTemplate);
      // Looked up now: a call id used again later (tau-bench reuses them) must not rename this result.
      const callId = own(fields, 'tool_call_id');
      const calledAs = typeof callId === 'string' ? callNames.get(callId) : undefined;
      const content = (): Content => {
        const value = itemValue(input, k);
        const f = isJsonObject(value) ? fieldsOf(value) : {};
        if (role === 'tool') {
          const name = typeof f.name === 'string' && f.name !== '' ? f.name : (calledAs ?? '');
          const result: ToolResult = { name, error: f.status === 'error', ...resultOf(f.content) };
          return { texts: [], toolCalls: [], results: [result], images: 0, files: [] };
        }
        const { texts, images, files, blockCalls } = textsOf(f.content);
        return { texts, toolCalls: role === 'assistant' ? callsOf(f, blockCalls) : [], results: [], images, files };
      };
      return { role, ...marks, content };
    });
    return { messages, itemsOf: oneItemEach(messages.length) };
  },
  makeNote({ text, items }) {
    const { dumpd, keys, path } = humanShape(items);
    if (dumpd)
      return { lc: 1, type: 'constructor', id: [...path, 'HumanMessage'], kwargs: { content: text, type: 'human' } };
    const data: Record<string, unknown> = {};
    for (const key of keys ?? ['content', 'additional_kwargs', 'response_metadata', 'type', 'name', 'id']) {
      if (key === 'content') data[key] = text;
      else if (own(HUMAN_DEFAULTS, key) !== undefined) data[key] = HUMAN_DEFAULTS[key];
    }
    if (!('content' in data)) data.content = text;
    return { type: 'human', data };
  },
  pairing: langchainPairing,
  writePruned: writePrunedLangchain,
};

/** A pruned tool message: the `content` of its fields (`kwargs` of a dumpd message, else `data`) becomes the placeholder. */
function writePrunedLangchain(request: PruneWrite): ReadonlyMap<number, string> {
  return writeResults(request, (raw, root) => {
    const fields = memberSpan(raw, root, memberSpan(raw, root, 'lc') !== undefined ? 'kwargs' : 'data');
    return fields === undefined ? [] : [{ object: fields, key: 'content' }];
  });
}
