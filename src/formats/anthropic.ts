import { EMPTY_CONTENT, filePlaceholder, joinResultParts, type ResultPart } from '../core/render.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../core/json/value.js';
import { noteMarks } from '../core/note.js';
import { renderArguments } from '../core/json/python.js';
import type { Content, StorablePart, ToolCall, ToolResult } from '../core/types.js';
import { ConversationBuilder, instructionTexts } from './conversation-builder.js';
import { describe } from './openai.js';
import {
  hasOnlyKeys,
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
import { elementSpans, memberSpan, stringMember, writeResults, type ResultSlot } from './raw-edit.js';
import type { Span } from '../io/json-layout.js';

/**
 * Anthropic Messages: a request body `{model, system, messages, ...}`, a bare messages list, or JSONL of messages.
 * Server tool calls (`server_tool_use`, `mcp_tool_use`) render as tool calls like `tool_use`. Their results
 * (`web_search_tool_result` and the other `*_tool_result` blocks) sit in the same assistant message; the model reads
 * them (encrypted content decrypted at the provider, and billed), so they follow the assistant message as one tool
 * message that stands for no item of its own: counted and shown as the results of their calls, removed and kept
 * with the message that holds them, and never pruned or offloaded (an encrypted result cannot be rewritten).
 */

/** Block types only OpenAI chat or Responses use: a message holding one is not Anthropic. */
const FOREIGN_PARTS = new Set([
  'image_url',
  'input_audio',
  'file',
  'refusal',
  'input_text',
  'output_text',
  'input_image',
  'input_file',
]);
/** Block types only Anthropic uses (`text` is shared with OpenAI chat). */
const ANTHROPIC_BLOCKS = new Set([
  'image',
  'document',
  'search_result',
  'thinking',
  'redacted_thinking',
  'tool_use',
  'tool_result',
  'server_tool_use',
  'mcp_tool_use',
  'container_upload',
]);
/** Keys of an OpenAI chat message that an Anthropic message never has. */
const FOREIGN_KEYS = ['tool_calls', 'tool_call_id', 'tool_call_ids', 'function_call', 'parts', 'meta'];
const CALL_BLOCKS = new Set(['tool_use', 'server_tool_use', 'mcp_tool_use']);

function typeOf(block: unknown): unknown {
  return isRecord(block) ? own(block, 'type') : undefined;
}

/** Whether an item has the shape of an Anthropic message (which an OpenAI chat message may share). */
function isAnthropicShaped(item: unknown): boolean {
  if (!isRecord(item)) return false;
  const role = own(item, 'role');
  // The API takes only user and assistant; logs of it sometimes keep the system prompt in the list as well.
  if (role !== 'user' && role !== 'assistant' && role !== 'system') return false;
  if (FOREIGN_KEYS.some((k) => own(item, k) !== undefined)) return false;
  const content = own(item, 'content');
  if (typeof content === 'string') return true;
  return (
    Array.isArray(content) &&
    content.every((b) => typeof typeOf(b) === 'string' && !FOREIGN_PARTS.has(typeOf(b) as string))
  );
}

/** Whether a message holds a block no other format writes (or Anthropic's prompt-caching marker). */
function hasAnthropicBlock(item: unknown): boolean {
  const content = isRecord(item) ? own(item, 'content') : undefined;
  if (!Array.isArray(content)) return false;
  return content.some((b) => {
    const type = typeOf(b);
    return (
      (typeof type === 'string' && (ANTHROPIC_BLOCKS.has(type) || type.endsWith('_tool_result'))) ||
      (isRecord(b) && own(b, 'cache_control') !== undefined)
    );
  });
}

/** Whether the request body has a key only the Messages API takes. */
function hasAnthropicContainer(container: Readonly<Record<string, unknown>> | null): boolean {
  if (container === null) return false;
  if (
    ['system', 'anthropic_version', 'anthropic_beta', 'stop_sequences', 'top_k', 'thinking'].some(
      (k) => own(container, k) !== undefined,
    )
  )
    return true;
  const tools = own(container, 'tools');
  if (Array.isArray(tools) && tools.some((t) => isRecord(t) && own(t, 'input_schema') !== undefined)) return true;
  const choice = own(container, 'tool_choice');
  return isRecord(choice) && ['auto', 'any', 'tool', 'none'].includes(own(choice, 'type') as string);
}

/** The tool name a `tool_use` id was called with (results name the call they answer). */
export type CallNames = ReadonlyMap<string, string>;

/** Records the name of every tool call a message makes, by id. */
export function collectCallNames(item: unknown, names: Map<string, string>): void {
  const content = isRecord(item) ? own(item, 'content') : undefined;
  if (!Array.isArray(content)) return;
  for (const block of content) {
    if (!isRecord(block) || !CALL_BLOCKS.has(own(block, 'type') as string)) continue;
    const id = own(block, 'id');
    const name = own(block, 'name');
    if (typeof id === 'string' && typeof name === 'string') names.set(id, name);
  }
}

/** Whether a message carries tool results: then it is a tool-result message, never a turn or the task. */
export function carriesToolResults(item: unknown): boolean {
  const content = isRecord(item) ? own(item, 'content') : undefined;
  return Array.isArray(content) && content.some((b) => typeOf(b) === 'tool_result');
}

function documentName(block: JsonObject): string | null {
  return typeof block.title === 'string' && block.title !== '' ? block.title : null;
}

/** A tool result's blocks joined with nothing between them, images and documents as placeholders. */
function resultOf(block: JsonObject, names: CallNames): ToolResult {
  const id = block.tool_use_id;
  const name = typeof id === 'string' ? (names.get(id) ?? '') : '';
  const content = block.content;
  const { text, images, files } =
    typeof content === 'string'
      ? { text: content, images: 0, files: 0 }
      : joinResultParts(Array.isArray(content) ? content : [], (part): ResultPart => {
          if (!isJsonObject(part)) return null;
          if (part.type === 'text' && typeof part.text === 'string') return { text: part.text };
          if (part.type === 'image') return 'image';
          if (part.type === 'document') return { file: documentName(part) };
          if (part.type === 'search_result' && Array.isArray(part.content)) {
            return {
              text: part.content
                .map((inner) => (isJsonObject(inner) && typeof inner.text === 'string' ? inner.text : ''))
                .join(''),
            };
          }
          return null;
        });
  const parts = Array.isArray(content) ? storableParts(content) : undefined;
  return {
    name,
    ...(typeof id === 'string' ? { id } : {}),
    text,
    error: block.is_error === true,
    images,
    files,
    ...(parts !== undefined ? { parts } : {}),
  };
}

/**
 * A result's blocks as offloading stores them, where each is a text or holds its bytes (an `image` or `document`
 * with a `base64` source); undefined otherwise (a URL source, a search result): the result is then offloaded as
 * text, or stays.
 */
function storableParts(blocks: readonly JsonValue[]): StorablePart[] | undefined {
  const out: StorablePart[] = [];
  for (const block of blocks) {
    if (!isJsonObject(block)) return undefined;
    if (block.type === 'text' && typeof block.text === 'string') {
      out.push({ kind: 'text', text: block.text });
      continue;
    }
    const source = block.source;
    if ((block.type !== 'image' && block.type !== 'document') || !isJsonObject(source)) return undefined;
    if (source.type !== 'base64' || typeof source.data !== 'string') return undefined;
    out.push({
      kind: block.type === 'image' ? 'image' : 'file',
      base64: source.data,
      mimeType: typeof source.media_type === 'string' ? source.media_type : null,
      filename: block.type === 'document' ? documentName(block) : null,
    });
  }
  return out;
}

/**
 * What one Anthropic message says, in the core's terms.
 * @param message the message, parsed losslessly (tool inputs keep their number lexemes)
 * @param asTool whether it is a tool-result message
 * @param names tool names by call id
 */
export function anthropicContent(message: JsonValue, asTool: boolean, names: CallNames): Content {
  const obj = isJsonObject(message) ? message : {};
  const content = obj.content;
  if (typeof content === 'string') return { texts: [content], toolCalls: [], results: [], images: 0, files: [] };
  const texts: string[] = [];
  const toolCalls: ToolCall[] = [];
  const results: ToolResult[] = [];
  let images = 0;
  const files: (string | null)[] = [];
  const assistant = obj.role === 'assistant';
  for (const block of Array.isArray(content) ? content : []) {
    if (!isJsonObject(block)) continue;
    const type = block.type;
    if (type === 'text' && typeof block.text === 'string') texts.push(block.text);
    else if (type === 'image') images++;
    else if (type === 'document') files.push(documentName(block));
    else if (assistant && typeof type === 'string' && CALL_BLOCKS.has(type)) {
      toolCalls.push({
        name: typeof block.name === 'string' ? block.name : '',
        arguments: renderArguments(block.input ?? null),
        ...(typeof block.id === 'string' ? { id: block.id } : {}),
      });
    } else if (asTool && type === 'tool_result') results.push(resultOf(block, names));
    // thinking, redacted_thinking and unknown blocks are not rendered; server tool results are `serverResults`.
  }
  return { texts, toolCalls, results, images, files };
}

/**
 * A server tool's result as the model reads it: an MCP result's text as a `tool_result`'s, any other (web search
 * results with their `encrypted_content`, fetched documents, code execution output) its `content` as JSON, as a
 * call's arguments render. An error result (`is_error`, or content of a `*_error` type) is an error.
 */
function serverResultOf(block: JsonObject, names: CallNames): ToolResult {
  const content = block.content ?? null;
  const errorType = isJsonObject(content) && typeof content.type === 'string' && content.type.endsWith('_error');
  if (block.type === 'mcp_tool_result') return resultOf(block, names);
  const id = block.tool_use_id;
  const fetched = fetchedFile(content);
  const sealed = withoutEncrypted(content);
  return {
    name: typeof id === 'string' ? (names.get(id) ?? '') : '',
    ...(typeof id === 'string' ? { id } : {}),
    text: typeof content === 'string' ? content : renderArguments(fetched?.content ?? content),
    error: block.is_error === true || errorType,
    images: 0,
    files: fetched === null ? 0 : 1,
    ...(sealed === null ? {} : { described: renderArguments(sealed) }),
  };
}

/**
 * Search results with each `encrypted_content` as `<encrypted>`, or null when none has one: what a summary prompt
 * shows, since only the provider that encrypted them can read them (counting reads them whole).
 */
function withoutEncrypted(content: JsonValue): JsonValue[] | null {
  if (!Array.isArray(content)) return null;
  const sealed = (part: JsonValue): boolean => isJsonObject(part) && typeof part.encrypted_content === 'string';
  if (!content.some(sealed)) return null;
  return content.map((part) => (sealed(part) ? { ...(part as JsonObject), encrypted_content: '<encrypted>' } : part));
}

/**
 * A web fetch result whose document is a file (a PDF as base64, a URL), not text: the content with the document as
 * its `<file: TITLE>` placeholder, since the model reads the file (billed as one), not its encoding; null otherwise.
 */
function fetchedFile(content: JsonValue): { content: JsonObject } | null {
  if (!isJsonObject(content) || !isJsonObject(content.content)) return null;
  const document = content.content;
  if (document.type !== 'document' || !isJsonObject(document.source) || document.source.type === 'text') return null;
  return { content: { ...content, content: filePlaceholder(documentName(document)) } };
}

/**
 * The server tool results an assistant message holds, in block order.
 * @param message the message, parsed losslessly
 * @param names tool names by call id
 */
export function serverResults(message: JsonValue, names: CallNames): ToolResult[] {
  const content = isJsonObject(message) ? message.content : undefined;
  if (!Array.isArray(content)) return [];
  return content
    .filter((b): b is JsonObject => isJsonObject(b) && isServerResult(b.type))
    .map((b) => serverResultOf(b, names));
}

/** Whether an item is an assistant message holding server tool results. */
export function holdsServerResults(item: unknown): boolean {
  const content = isRecord(item) && own(item, 'role') === 'assistant' ? own(item, 'content') : undefined;
  return Array.isArray(content) && content.some((b) => isServerResult(typeOf(b)));
}

/** The text of a message that could be an earlier note: string content, or a single text block. */
export function plainText(content: unknown): string | null {
  if (typeof content === 'string') return content;
  if (Array.isArray(content) && content.length === 1) {
    const only = content[0];
    if (isRecord(only) && own(only, 'type') === 'text' && typeof own(only, 'text') === 'string')
      return own(only, 'text') as string;
  }
  return null;
}

function checkMessage(input: ConversationInput, k: number, item: unknown): Record<string, unknown> {
  if (!isRecord(item)) input.fail(k, `expected a message object, found ${describe(item)}`);
  const role = own(item, 'role');
  if (role === undefined) input.fail(k, 'no "role"');
  if (role !== 'user' && role !== 'assistant' && role !== 'system') {
    input.fail(
      k,
      `unknown role ${JSON.stringify(role)} (Anthropic messages are "user" or "assistant"; instructions go in "system")`,
    );
  }
  const content = own(item, 'content');
  if (!(typeof content === 'string' || (Array.isArray(content) && content.every(isRecord)))) {
    input.fail(k, `"content" must be a string or a list of content blocks, found ${describe(content)}`);
  }
  return item;
}

/** Whether a block is a server tool's result (`web_search_tool_result`, `mcp_tool_result`...), held by the assistant message that made the call. */
function isServerResult(type: unknown): boolean {
  return typeof type === 'string' && type !== 'tool_result' && type.endsWith('_tool_result');
}

/** A block's string field, or null. */
function stringOf(block: Record<string, unknown>, key: string): string | null {
  const value = own(block, key);
  return typeof value === 'string' ? value : null;
}

/** The call ids the server tool results among these blocks answer. */
export function serverResultIds(blocks: readonly unknown[]): (string | null)[] {
  return blocks
    .filter((b): b is Record<string, unknown> => isRecord(b) && isServerResult(own(b, 'type')))
    .map((b) => stringOf(b, 'tool_use_id'));
}

/**
 * The tool calls and results of one message's blocks, for `swc inspect`: client calls (`tool_use`) and server
 * calls with their results in an assistant message, `tool_result` blocks in a user message. A server call
 * still running (`pause_turn`: unanswered at the end of the conversation) is left out; a block on the wrong
 * side is a problem.
 * @param blocks the message's content blocks
 * @param role the message's role
 * @param item the item the message is (or, in Claude Code, the line holding it)
 * @param isRunning whether a server call with this id is still running
 * @param turn the `turn` to give every call and result (Claude Code sub-agent lines), or undefined
 * @returns the calls and results in block order, and the blocks on the wrong side
 */
export function blockPairing(
  blocks: readonly unknown[],
  role: 'user' | 'assistant',
  item: number,
  isRunning: (id: string | null) => boolean,
  turn?: string,
): { calls: PairedCall[]; results: PairedResult[]; problems: { item: number; text: string }[] } {
  const calls: PairedCall[] = [];
  const results: PairedResult[] = [];
  const problems: { item: number; text: string }[] = [];
  const at = turn === undefined ? {} : { turn };
  for (const block of blocks) {
    if (!isRecord(block)) continue;
    const type = own(block, 'type');
    if (typeof type !== 'string') continue;
    const id = stringOf(block, 'id');
    if (CALL_BLOCKS.has(type)) {
      if (role !== 'assistant') {
        problems.push({
          item,
          text: `${type} block ${JSON.stringify(id)} in a user message (only assistant messages call tools)`,
        });
        continue;
      }
      if (type !== 'tool_use' && isRunning(id)) continue;
      calls.push({ item, id, name: stringOf(block, 'name') ?? '', ...at });
    } else if (type === 'tool_result') {
      const answers = stringOf(block, 'tool_use_id');
      if (role !== 'user') {
        problems.push({
          item,
          text: `tool_result block for ${JSON.stringify(answers)} in an assistant message (results go in the user message after the call)`,
        });
        continue;
      }
      results.push({ item, id: answers, name: '', ...at });
    } else if (isServerResult(type) && role === 'assistant') {
      results.push({ item, id: stringOf(block, 'tool_use_id'), name: '', ...at });
    }
  }
  return { calls, results, problems };
}

/** Tool calls and results with their ids, and items of no known role, for `swc inspect`. */
function anthropicPairing(input: ConversationInput): Pairing {
  const calls: PairedCall[] = [];
  const results: PairedResult[] = [];
  const problems: { item: number; text: string }[] = [];
  const unknownRoles: { item: number; role: string | null }[] = [];
  input.items.forEach((item, k) => {
    const role = isRecord(item) ? own(item, 'role') : undefined;
    if (!isRecord(item) || (role !== 'user' && role !== 'assistant' && role !== 'system')) {
      unknownRoles.push({ item: k, role: typeof role === 'string' ? role : null });
      return;
    }
    const content = own(item, 'content');
    if (role === 'system' || !Array.isArray(content)) return;
    const last = k === input.items.length - 1;
    const answered = last ? new Set(serverResultIds(content)) : null;
    const found = blockPairing(content, role, k, (id) => answered !== null && !answered.has(id));
    calls.push(...found.calls);
    results.push(...found.results);
    problems.push(...found.problems);
  });
  return { calls, results, unknownRoles, problems };
}

export const anthropic: FormatAdapter = {
  name: 'anthropic',
  listKeys: ['messages'],
  ...detectedBy([
    { each: isAnthropicShaped, some: hasAnthropicBlock },
    { each: isAnthropicShaped, container: hasAnthropicContainer },
  ]),
  normalize(input: ConversationInput, noteTemplate: string | null): Normalized {
    const builder = new ConversationBuilder();
    builder.instructions(input.container === null ? [] : instructionTexts(own(input.container, 'system')));
    return normalizedFrom(input, noteTemplate, builder, new Map<string, string>(), 0);
  },
  makeNote({ text }) {
    return { role: 'user', content: text };
  },
  pairing: anthropicPairing,
  writePruned: writePrunedAnthropic,
};

/**
 * The `tool_result` blocks of a message's `content` as result slots, in block order: each one's `content` takes the
 * placeholder (its `tool_use_id` and `is_error` stay).
 */
export function toolResultSlots(raw: string, message: Span | undefined): ResultSlot[] {
  if (message === undefined) return [];
  return elementSpans(raw, memberSpan(raw, message, 'content'))
    .filter((block) => stringMember(raw, block, 'type') === 'tool_result')
    .map((block) => ({ object: block, key: 'content' }));
}

/** A pruned user message: each `tool_result` block's `content` becomes its placeholder. */
function writePrunedAnthropic(request: PruneWrite): ReadonlyMap<number, string> {
  return writeResults(request, toolResultSlots);
}

/**
 * The items of `input` from `from` on added to `builder`, the items before them read already with `names` the names
 * of their calls; with a continuation for a longer input (`Normalized.more`). A result's content looks its call's
 * name up when read, in the names of every item read by then, as a whole normalization's does.
 */
function normalizedFrom(
  input: ConversationInput,
  noteTemplate: string | null,
  builder: ConversationBuilder,
  names: Map<string, string>,
  from: number,
): Normalized {
  const items = input.items;
  const add = (raw: unknown, k: number): void => {
    const item = checkMessage(input, k, raw);
    collectCallNames(item, names);
    const asTool = carriesToolResults(item);
    // `makeNote` writes `{role, content}` with a string content.
    const noteShaped = typeof own(item, 'content') === 'string' && hasOnlyKeys(item, ['role', 'content']);
    const marks =
      own(item, 'role') === 'user' && !asTool
        ? noteMarks(plainText(own(item, 'content')), noteTemplate, noteShaped)
        : {};
    builder.add({
      role: asTool ? 'tool' : (own(item, 'role') as 'user' | 'assistant' | 'system'),
      ...marks,
      content: () => anthropicContent(itemValue(input, k), asTool, names),
      items: [k],
    });
    if (holdsServerResults(item))
      builder.add({
        role: 'tool',
        fixed: true,
        content: () => ({ ...EMPTY_CONTENT, results: serverResults(itemValue(input, k), names) }),
        items: [],
      });
  };
  // Iterated as a whole normalization always was (a hole in a sparse array is no message); a continuation from its
  // first new item, skipping holes the same way.
  if (from === 0) items.forEach(add);
  else for (let k = from; k < items.length; k++) if (k in items) add(items[k], k);
  const read = items.length;
  return builder.grown((next) => normalizedFrom(next, noteTemplate, builder, names, read));
}
