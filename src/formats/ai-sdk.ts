import { isJsonObject, type JsonObject, type JsonValue } from '../core/json/value.js';
import { noteMarks } from '../core/note.js';
import { renderArguments, renderArgumentsString } from '../core/json/python.js';
import { joinResultParts, type ResultPart } from '../core/render.js';
import type { Content, ToolCall, ToolResult } from '../core/types.js';
import { ConversationBuilder, instructionTexts } from './conversation-builder.js';
import { describe } from './openai.js';
import {
  hasOnlyKeys,
  isRecord,
  itemValue,
  own,
  type ConversationInput,
  type FormatAdapter,
  type Normalized,
  type PairedCall,
  type PairedResult,
  type Pairing,
  type PruneWrite,
  detectedBy,
} from './types.js';
import { elementSpans, memberSpan, stringMember, writeResults, type ResultSlot } from './raw-edit.js';
import type { Span } from '../io/json-layout.js';

/**
 * Vercel AI SDK messages: `ModelMessage`s (what `generateText`/`streamText` take: `content` a string or typed parts,
 * tool calls as `tool-call` parts, results in `tool` messages) and `UIMessage`s (what `useChat` keeps: `parts`,
 * an assistant message holding its tool calls together with their results, and so one step by itself).
 * AI SDK 4's spellings are read too: `args`/`result` on tool parts, `mimeType`, `tool-invocation` UI parts.
 * Reasoning, sources, data parts and step boundaries are not rendered.
 */

/** Part types of a `ModelMessage`'s content. */
const MODEL_PARTS = new Set([
  'text',
  'image',
  'file',
  'reasoning',
  'redacted-reasoning',
  'reasoning-file',
  'tool-call',
  'tool-result',
  'tool-approval-request',
  'tool-approval-response',
  'custom',
]);
/** Part types only the AI SDK writes: one of them (or an AI SDK image or file part) tells its messages from others. */
const MODEL_ONLY_PARTS = new Set([
  'reasoning',
  'redacted-reasoning',
  'reasoning-file',
  'tool-call',
  'tool-result',
  'tool-approval-request',
  'tool-approval-response',
]);
const MODEL_ROLES = new Set(['system', 'user', 'assistant', 'tool']);
const UI_ROLES = new Set(['system', 'user', 'assistant']);
/** Keys of other formats' messages that an AI SDK message never has. */
const FOREIGN_KEYS = ['type', 'tool_calls', 'tool_call_id', 'tool_call_ids', 'function_call', 'meta', 'author'];

function typeOf(part: unknown): unknown {
  return isRecord(part) ? own(part, 'type') : undefined;
}

/** Whether an item is a `UIMessage`: `parts` that each say their type (Gemini's parts never do). */
function isUiMessage(item: unknown): item is Record<string, unknown> {
  if (
    !isRecord(item) ||
    !UI_ROLES.has(own(item, 'role') as string) ||
    FOREIGN_KEYS.some((k) => own(item, k) !== undefined)
  )
    return false;
  const parts = own(item, 'parts');
  return Array.isArray(parts) && parts.every((p) => typeof typeOf(p) === 'string');
}

/** Whether an item is a `ModelMessage` (a plain `{role, content}` message is one, and OpenAI's too). */
function isModelMessage(item: unknown): item is Record<string, unknown> {
  if (!isRecord(item) || !MODEL_ROLES.has(own(item, 'role') as string) || own(item, 'parts') !== undefined)
    return false;
  if (FOREIGN_KEYS.some((k) => own(item, k) !== undefined)) return false;
  const content = own(item, 'content');
  if (typeof content === 'string') return own(item, 'role') !== 'tool';
  return Array.isArray(content) && content.every((p) => MODEL_PARTS.has(typeOf(p) as string));
}

/** Whether a message shows something only the AI SDK writes. */
function isMarked(item: unknown): boolean {
  if (isUiMessage(item)) return (own(item, 'parts') as unknown[]).length > 0;
  const content = isRecord(item) ? own(item, 'content') : undefined;
  if (!Array.isArray(content)) return false;
  return content.some((p) => {
    if (!isRecord(p)) return false;
    const type = own(p, 'type');
    if (MODEL_ONLY_PARTS.has(type as string)) return true;
    if (type === 'image') return own(p, 'image') !== undefined;
    return (
      type === 'file' &&
      own(p, 'data') !== undefined &&
      (typeof own(p, 'mediaType') === 'string' || typeof own(p, 'mimeType') === 'string')
    );
  });
}

/** The media type of a part, in AI SDK 5's or 4's spelling. */
function mediaTypeOf(part: JsonObject): string {
  const type = part.mediaType ?? part.mimeType;
  return typeof type === 'string' ? type : '';
}

/** A JSON value as result text: a string as it is, anything else as Haystack writes JSON. */
function asText(value: JsonValue | undefined): string {
  if (value === undefined) return '';
  return typeof value === 'string' ? value : renderArguments(value);
}

/** A tool call's arguments: `input` (AI SDK 5) or `args` (4), an object or a JSON string. */
function callOf(name: string, part: JsonObject): ToolCall {
  const args = part.input ?? part.args ?? null;
  const id = part.toolCallId;
  return {
    name,
    arguments: typeof args === 'string' ? renderArgumentsString(args) : renderArguments(args),
    ...(typeof id === 'string' ? { id } : {}),
  };
}

/** The text, images and files of a `content`-typed tool output. */
function contentOutput(value: JsonValue | undefined): { text: string; images: number; files: number } {
  return joinResultParts(Array.isArray(value) ? value : [], (part): ResultPart => {
    if (!isJsonObject(part)) return null;
    const type = part.type;
    if (type === 'text' && typeof part.text === 'string') return { text: part.text };
    if (type === 'image-data' || type === 'image-url' || type === 'image-file-id') return 'image';
    if (type === 'media') return mediaTypeOf(part).startsWith('image/') ? 'image' : { file: null };
    if (type === 'file-data' || type === 'file-url' || type === 'file-id')
      return { file: typeof part.filename === 'string' ? part.filename : null };
    return null;
  });
}

/** A `tool-result` part: `output` (AI SDK 5, typed) or `result` with `isError` (4). */
function modelResultOf(part: JsonObject, names: ReadonlyMap<string, string>): ToolResult {
  const id = part.toolCallId;
  return { ...modelResultBody(part, names, id), ...(typeof id === 'string' ? { id } : {}) };
}

/** A `tool-result` part's result, its call id aside. */
function modelResultBody(part: JsonObject, names: ReadonlyMap<string, string>, id: JsonValue | undefined): ToolResult {
  const name = typeof part.toolName === 'string' ? part.toolName : typeof id === 'string' ? (names.get(id) ?? '') : '';
  const output = part.output;
  if (isJsonObject(output) && typeof output.type === 'string') {
    switch (output.type) {
      case 'text':
      case 'json':
        return { name, text: asText(output.value), error: false, images: 0, files: 0 };
      case 'error-text':
      case 'error-json':
        return { name, text: asText(output.value), error: true, images: 0, files: 0 };
      case 'execution-denied':
        return { name, text: typeof output.reason === 'string' ? output.reason : '', error: true, images: 0, files: 0 };
      case 'content':
        return { name, ...contentOutput(output.value), error: false };
    }
  }
  return { name, text: asText(part.result ?? output), error: part.isError === true, images: 0, files: 0 };
}

/** The tool a UI tool part is for: `tool-NAME`, a `dynamic-tool`'s `toolName`, or AI SDK 4's `toolInvocation`. */
function uiTool(part: JsonObject): { name: string; invocation: JsonObject } | null {
  const type = part.type;
  if (type === 'tool-invocation') {
    const invocation = part.toolInvocation;
    return isJsonObject(invocation)
      ? { name: typeof invocation.toolName === 'string' ? invocation.toolName : '', invocation }
      : null;
  }
  if (type === 'dynamic-tool')
    return { name: typeof part.toolName === 'string' ? part.toolName : '', invocation: part };
  if (typeof type === 'string' && type.startsWith('tool-'))
    return { name: type.slice('tool-'.length), invocation: part };
  return null;
}

/** A UI tool part's result, when its state says it has one. */
function uiResultOf(name: string, invocation: JsonObject): ToolResult | null {
  switch (invocation.state) {
    case 'output-available':
      return { name, text: asText(invocation.output), error: false, images: 0, files: 0 };
    case 'result':
      return { name, text: asText(invocation.result), error: false, images: 0, files: 0 };
    case 'output-error':
      return {
        name,
        text: typeof invocation.errorText === 'string' ? invocation.errorText : '',
        error: true,
        images: 0,
        files: 0,
      };
    case 'output-denied': {
      const approval = invocation.approval;
      const reason = isJsonObject(approval) && typeof approval.reason === 'string' ? approval.reason : '';
      return { name, text: reason, error: true, images: 0, files: 0 };
    }
    default:
      return null;
  }
}

/** What one message says: texts, calls, results, images and files, each part read by its type. */
function contentOf(message: JsonValue, names: ReadonlyMap<string, string>): { main: Content; results: ToolResult[] } {
  const obj = isJsonObject(message) ? message : {};
  const texts: string[] = [];
  const toolCalls: ToolCall[] = [];
  const results: ToolResult[] = [];
  let images = 0;
  const files: (string | null)[] = [];
  const ui = Array.isArray(obj.parts);
  const parts = ui ? (obj.parts as JsonValue[]) : obj.content;
  if (typeof parts === 'string') texts.push(parts);
  for (const part of Array.isArray(parts) ? parts : []) {
    if (!isJsonObject(part)) continue;
    const type = part.type;
    if (type === 'text' && typeof part.text === 'string') texts.push(part.text);
    else if (type === 'image') images++;
    else if (type === 'file') {
      if (mediaTypeOf(part).startsWith('image/')) images++;
      else files.push(typeof part.filename === 'string' ? part.filename : null);
    } else if (type === 'tool-call')
      toolCalls.push(callOf(typeof part.toolName === 'string' ? part.toolName : '', part));
    else if (type === 'tool-result') results.push(modelResultOf(part, names));
    else if (ui) {
      const tool = uiTool(part);
      if (tool === null) continue;
      toolCalls.push(callOf(tool.name, tool.invocation));
      const result = uiResultOf(tool.name, tool.invocation);
      const id = tool.invocation.toolCallId;
      if (result !== null) results.push(typeof id === 'string' ? { ...result, id } : result);
    }
    // Reasoning, sources, data parts, step boundaries and approvals are not rendered.
  }
  return { main: { texts, toolCalls, results: [], images, files }, results };
}

/** Records the tool name of every call a message makes, by id (AI SDK 4's results may leave their name out). */
function collectCallNames(item: Record<string, unknown>, names: Map<string, string>): void {
  const content = own(item, 'content');
  if (!Array.isArray(content)) return;
  for (const part of content) {
    if (!isRecord(part) || own(part, 'type') !== 'tool-call') continue;
    const id = own(part, 'toolCallId');
    const name = own(part, 'toolName');
    if (typeof id === 'string' && typeof name === 'string') names.set(id, name);
  }
}

/** Whether a message holds tool results (a `tool` message, or an assistant's provider-executed results). */
function holdsResults(item: Record<string, unknown>): boolean {
  const list = own(item, 'parts') ?? own(item, 'content');
  if (!Array.isArray(list)) return false;
  return list.some((p) => {
    if (!isRecord(p)) return false;
    const type = own(p, 'type');
    if (type === 'tool-result') return true;
    const state =
      own(p, 'state') ??
      (isRecord(own(p, 'toolInvocation'))
        ? own(own(p, 'toolInvocation') as Record<string, unknown>, 'state')
        : undefined);
    return (
      (type === 'dynamic-tool' ||
        type === 'tool-invocation' ||
        (typeof type === 'string' && type.startsWith('tool-'))) &&
      ['output-available', 'output-error', 'output-denied', 'result'].includes(state as string)
    );
  });
}

/** The text of a user message that could be an earlier note, and whether it has exactly a note's shape. */
function noteCandidate(item: Record<string, unknown>): { text: string | null; shaped: boolean } {
  const list = own(item, 'parts') ?? own(item, 'content');
  if (typeof list === 'string') return { text: list, shaped: hasOnlyKeys(item, ['role', 'content']) };
  if (Array.isArray(list) && list.length === 1) {
    const only = list[0];
    if (isRecord(only) && own(only, 'type') === 'text' && typeof own(only, 'text') === 'string') {
      return {
        text: own(only, 'text') as string,
        shaped: hasOnlyKeys(item, ['id', 'role', 'parts']) && hasOnlyKeys(only, ['type', 'text']),
      };
    }
  }
  return { text: null, shaped: false };
}

function checkMessage(input: ConversationInput, k: number, item: unknown): Record<string, unknown> {
  if (!isRecord(item)) input.fail(k, `expected a message object, found ${describe(item)}`);
  const role = own(item, 'role');
  if (role === undefined) input.fail(k, 'no "role"');
  const parts = own(item, 'parts');
  if (parts !== undefined) {
    if (!UI_ROLES.has(role as string))
      input.fail(k, `unknown role ${JSON.stringify(role)} (UI messages are "system", "user" or "assistant")`);
    if (!Array.isArray(parts) || !parts.every((p) => typeof typeOf(p) === 'string'))
      input.fail(k, `"parts" must be a list of parts with a "type", found ${describe(parts)}`);
    return item;
  }
  if (!MODEL_ROLES.has(role as string))
    input.fail(k, `unknown role ${JSON.stringify(role)} (expected system, user, assistant or tool)`);
  const content = own(item, 'content');
  if (!(typeof content === 'string' || (Array.isArray(content) && content.every(isRecord)))) {
    input.fail(k, `"content" must be a string or a list of parts, found ${describe(content)}`);
  }
  return item;
}

/** Tool calls and results with their ids, for `swc inspect`: a UI assistant message holds both. */
function aiSdkPairing(input: ConversationInput): Pairing {
  const calls: PairedCall[] = [];
  const results: PairedResult[] = [];
  const unknownRoles: { item: number; role: string | null }[] = [];
  input.items.forEach((item, k) => {
    if (!isUiMessage(item) && !isModelMessage(item)) {
      const role = isRecord(item) ? own(item, 'role') : undefined;
      unknownRoles.push({ item: k, role: typeof role === 'string' ? role : null });
      return;
    }
    const list = own(item, 'parts') ?? own(item, 'content');
    for (const part of Array.isArray(list) ? list : []) {
      if (!isRecord(part)) continue;
      const type = own(part, 'type');
      const id = typeof own(part, 'toolCallId') === 'string' ? (own(part, 'toolCallId') as string) : null;
      const name = typeof own(part, 'toolName') === 'string' ? (own(part, 'toolName') as string) : '';
      if (type === 'tool-call') calls.push({ item: k, id, name });
      else if (type === 'tool-result') results.push({ item: k, id, name });
      else if (isUiMessage(item)) {
        // A UI tool part is the call and, once its state says so, its result: both in this message.
        const tool = uiTool(part as JsonObject);
        if (tool === null) continue;
        const callId = typeof tool.invocation.toolCallId === 'string' ? tool.invocation.toolCallId : null;
        calls.push({ item: k, id: callId, name: tool.name });
        if (uiResultOf(tool.name, tool.invocation) !== null) results.push({ item: k, id: callId, name: tool.name });
      }
    }
  });
  return { calls, results, unknownRoles };
}

export const aiSdk: FormatAdapter = {
  name: 'ai-sdk',
  listKeys: ['messages'],
  ...detectedBy([{ each: (i) => isUiMessage(i) || isModelMessage(i), some: isMarked }]),
  normalize(input: ConversationInput, noteTemplate: string | null): Normalized {
    const builder = new ConversationBuilder();
    builder.instructions(input.container === null ? [] : instructionTexts(own(input.container, 'system')));
    const names = new Map<string, string>();
    input.items.forEach((raw, k) => {
      const item = checkMessage(input, k, raw);
      collectCallNames(item, names);
      const role = own(item, 'role') as 'system' | 'user' | 'assistant' | 'tool';
      let read: { main: Content; results: ToolResult[] } | null = null;
      const content = (): { main: Content; results: ToolResult[] } => (read ??= contentOf(itemValue(input, k), names));
      const results = holdsResults(item);
      if (role === 'tool' || (results && role !== 'assistant')) {
        builder.add({ role: 'tool', content: () => ({ ...content().main, results: content().results }), items: [k] });
        return;
      }
      const candidate = role === 'user' ? noteCandidate(item) : { text: null, shaped: false };
      const marks = role === 'user' ? noteMarks(candidate.text, noteTemplate, candidate.shaped) : {};
      builder.add({ role, ...marks, content: () => content().main, items: [k] });
      // An assistant message holding its calls' results (a UI message, provider-executed tools) is one step: the
      // results follow it as a tool message that stands for no item of its own.
      if (results)
        builder.add({
          role: 'tool',
          fixed: true,
          content: () => ({ texts: [], toolCalls: [], results: content().results, images: 0, files: [] }),
          items: [],
        });
    });
    return builder.finish();
  },
  makeNote({ text, items }) {
    return items.some(isUiMessage)
      ? { id: 'swc-compaction-note', role: 'user', parts: [{ type: 'text', text }] }
      : { role: 'user', content: text };
  },
  pairing: aiSdkPairing,
  writePruned: writePrunedAiSdk,
};

/** The typed outputs whose `value` is the result's content (a text or a JSON value). */
const VALUE_OUTPUTS = new Set(['text', 'json', 'error-text', 'error-json']);

/**
 * The `tool-result` parts of a `tool` message's `content`, in part order, as result slots: a typed output's `value`
 * takes the placeholder (its `type`, so the error flag, stays), a denial its `reason`, a `content` output becomes
 * `{type: 'text', value}`; AI SDK 4's `result` the placeholder itself.
 */
function toolResultPartSlots(raw: string, message: Span): ResultSlot[] {
  return elementSpans(raw, memberSpan(raw, message, 'content'))
    .filter((part) => stringMember(raw, part, 'type') === 'tool-result')
    .map((part): ResultSlot => {
      const output = memberSpan(raw, part, 'output');
      const type = output === undefined ? undefined : stringMember(raw, output, 'type');
      if (output !== undefined && type !== undefined) {
        if (VALUE_OUTPUTS.has(type)) return { object: output, key: 'value' };
        if (type === 'execution-denied') return { object: output, key: 'reason' };
        if (type === 'content') return { object: part, key: 'output', wrap: (text) => ({ type: 'text', value: text }) };
      }
      return {
        object: part,
        key: memberSpan(raw, part, 'result') !== undefined || output === undefined ? 'result' : 'output',
      };
    });
}

/** A pruned `tool` message: each `tool-result` part's content becomes its placeholder (ids and names stay). */
function writePrunedAiSdk(request: PruneWrite): ReadonlyMap<number, string> {
  return writeResults(request, toolResultPartSlots);
}
