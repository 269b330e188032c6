import { joinResultParts, type ResultPart } from '../core/render.js';
import { isJsonObject, JsonNumber, type JsonObject, type JsonValue } from '../core/json/value.js';
import { compareCodePoints, pythonNumber, renderArguments } from '../core/json/python.js';
import { SUMMARIZATION } from '../core/summarize.js';
import type { Content, Message, Role, StorablePart, ToolCall, ToolResult } from '../core/types.js';
import { describe } from './openai.js';
import {
  isRecord,
  itemValue,
  own,
  type ConversationInput,
  type FormatAdapter,
  type PruneWrite,
  type Normalized,
  type Pairing,
  continuableOneEach,
  detectedBy,
} from './types.js';
import { elementSpans, isObjectAt, memberSpan, setMember, writeResults } from './raw-edit.js';

/** Haystack `ChatMessage.to_dict()`: `{role, meta, name, content: [parts]}`. */

const ROLES = new Set(['system', 'user', 'assistant', 'tool']);
const PART_KEYS = ['text', 'tool_call', 'tool_call_result', 'reasoning', 'image', 'file'];

function isHaystackMessage(item: unknown): boolean {
  if (!isRecord(item) || typeof own(item, 'role') !== 'string') return false;
  const content = own(item, 'content');
  if (!Array.isArray(content)) return false;
  if (own(item, 'meta') !== undefined) return true;
  return (
    content.length > 0 &&
    content.every((p) => isRecord(p) && own(p, 'type') === undefined && PART_KEYS.some((k) => own(p, k) !== undefined))
  );
}

/** The strategy recorded in a message's compaction metadata, if any. */
function compactionOf(item: Record<string, unknown>): string | undefined {
  const meta = own(item, 'meta');
  if (!isRecord(meta)) return undefined;
  const marker = own(meta, 'context_compaction');
  if (marker === undefined) return undefined;
  const strategy = isRecord(marker) ? own(marker, 'strategy') : undefined;
  return typeof strategy === 'string' ? strategy : 'unknown';
}

function fileName(part: JsonValue | undefined): string | null {
  return isJsonObject(part) && typeof part.filename === 'string' && part.filename !== '' ? part.filename : null;
}

/** An attachment's scalar metadata as `key=value`, sorted by key, as Haystack's `_identifying_details` writes it. */
function identifyingDetails(metadata: JsonValue | undefined): string[] {
  if (!isJsonObject(metadata)) return [];
  return Object.keys(metadata)
    .sort(compareCodePoints)
    .flatMap((key) => {
      const value = metadata[key];
      if (typeof value === 'string') return [`${key}=${value}`];
      if (typeof value === 'boolean') return [`${key}=${value ? 'True' : 'False'}`];
      if (value instanceof JsonNumber) return [`${key}=${pythonNumber(value.raw)}`];
      return [];
    });
}

/** An image or file part described for a summary prompt (Haystack's `_attachment_placeholder`). */
function attachmentPlaceholder(part: JsonObject): string {
  if (part.image !== undefined) {
    const image = isJsonObject(part.image) ? part.image : {};
    const mime = typeof image.mime_type === 'string' && image.mime_type !== '' ? image.mime_type : 'unknown type';
    return `<image: ${[mime, ...identifyingDetails(image.meta)].join(', ')}>`;
  }
  const file = isJsonObject(part.file) ? part.file : {};
  const name = typeof file.filename === 'string' && file.filename !== '' ? file.filename : 'unnamed';
  const mime = typeof file.mime_type === 'string' && file.mime_type !== '' ? file.mime_type : 'unknown type';
  return `<file: ${[name, mime, ...identifyingDetails(file.extra)].join(', ')}>`;
}

function resultOf(part: JsonObject): ToolResult {
  const origin = isJsonObject(part.origin) ? part.origin : {};
  const result = part.result;
  const described =
    typeof result === 'string'
      ? result
      : (Array.isArray(result) ? result : [])
          .map((block) =>
            !isJsonObject(block)
              ? ''
              : typeof block.text === 'string'
                ? block.text
                : block.image !== undefined || block.file !== undefined
                  ? attachmentPlaceholder(block)
                  : '',
          )
          .join('');
  const id = typeof origin.id === 'string' && origin.id !== '' ? { id: origin.id } : {};
  const { text, images, files } =
    typeof result === 'string'
      ? { text: result, images: 0, files: 0 }
      : joinResultParts(Array.isArray(result) ? result : [], (block): ResultPart => {
          if (!isJsonObject(block)) return null;
          if (typeof block.text === 'string') return { text: block.text };
          if (block.image !== undefined) return 'image';
          if (block.file !== undefined) return { file: fileName(block.file) };
          return null;
        });
  const parts = Array.isArray(result) ? storableParts(result) : undefined;
  return {
    name: typeof origin.tool_name === 'string' ? origin.tool_name : '',
    text,
    error: part.error === true,
    images,
    files,
    ...id,
    described,
    ...(parts !== undefined ? { parts } : {}),
  };
}

/**
 * A list result's blocks as offloading stores them (`TextContent`, `ImageContent` with `base64_image`, `FileContent`
 * with `base64_data`), or undefined when a block is none of those: that result is then offloaded as text, or stays.
 */
function storableParts(blocks: readonly JsonValue[]): StorablePart[] | undefined {
  const out: StorablePart[] = [];
  const stringOr = (value: JsonValue | undefined): string | null => (typeof value === 'string' ? value : null);
  for (const block of blocks) {
    if (!isJsonObject(block)) return undefined;
    if (typeof block.text === 'string') out.push({ kind: 'text', text: block.text });
    else if (isJsonObject(block.image) && typeof block.image.base64_image === 'string')
      out.push({
        kind: 'image',
        base64: block.image.base64_image,
        mimeType: stringOr(block.image.mime_type),
        filename: null,
      });
    else if (isJsonObject(block.file) && typeof block.file.base64_data === 'string')
      out.push({
        kind: 'file',
        base64: block.file.base64_data,
        mimeType: stringOr(block.file.mime_type),
        filename: stringOr(block.file.filename),
      });
    else return undefined;
  }
  return out;
}

function contentOf(value: JsonValue): Content {
  const parts = isJsonObject(value) && Array.isArray(value.content) ? value.content : [];
  const texts: string[] = [];
  const toolCalls: ToolCall[] = [];
  const results: ToolResult[] = [];
  let images = 0;
  const files: (string | null)[] = [];
  // Haystack lists a message's images, then its files.
  const imageDetails: string[] = [];
  const fileDetails: string[] = [];
  for (const part of parts) {
    if (!isJsonObject(part)) continue;
    if (typeof part.text === 'string') texts.push(part.text);
    else if (isJsonObject(part.tool_call)) {
      const call = part.tool_call;
      const id = typeof call.id === 'string' && call.id !== '' ? { id: call.id } : {};
      toolCalls.push({
        name: typeof call.tool_name === 'string' ? call.tool_name : '',
        arguments: renderArguments(call.arguments ?? null),
        ...id,
      });
    } else if (isJsonObject(part.tool_call_result)) results.push(resultOf(part.tool_call_result));
    else if (part.image !== undefined) {
      images++;
      imageDetails.push(attachmentPlaceholder(part));
    } else if (part.file !== undefined) {
      files.push(fileName(part.file));
      fileDetails.push(attachmentPlaceholder(part));
    }
  }
  return { texts, toolCalls, results, images, files, attachments: [...imageDetails, ...fileDetails] };
}

/** A ToolCall dict's id and name (the `origin` of a result is a copy of its call). */
function callIdentity(call: Record<string, unknown>): { id: string | null; name: string } {
  const id = own(call, 'id');
  const name = own(call, 'tool_name');
  return { id: typeof id === 'string' ? id : null, name: typeof name === 'string' ? name : '' };
}

/** Tool calls and results with their ids, and items of no known role, for `swc inspect`. */
function haystackPairing(input: ConversationInput): Pairing {
  const calls: { item: number; id: string | null; name: string }[] = [];
  const results: { item: number; id: string | null; name: string }[] = [];
  const unknownRoles: { item: number; role: string | null }[] = [];
  input.items.forEach((item, k) => {
    const role = isRecord(item) ? own(item, 'role') : undefined;
    if (!isRecord(item) || typeof role !== 'string' || !ROLES.has(role)) {
      unknownRoles.push({ item: k, role: typeof role === 'string' ? role : null });
      return;
    }
    const parts = own(item, 'content');
    for (const part of Array.isArray(parts) ? parts : []) {
      if (!isRecord(part)) continue;
      const call = own(part, 'tool_call');
      const result = own(part, 'tool_call_result');
      if (isRecord(call)) calls.push({ item: k, ...callIdentity(call) });
      else if (isRecord(result)) {
        const origin = own(result, 'origin');
        results.push({ item: k, ...(isRecord(origin) ? callIdentity(origin) : { id: null, name: '' }) });
      }
    }
  });
  return { calls, results, unknownRoles };
}

export const haystack: FormatAdapter = {
  name: 'haystack',
  listKeys: ['messages'],
  ...detectedBy([{ each: isHaystackMessage }]),
  normalize(input: ConversationInput): Normalized {
    return normalizedFrom(input, null);
  },
  makeNote({ text, removed, kept }) {
    return {
      role: 'user',
      meta: { context_compaction: { strategy: 'sliding_window', removed_messages: removed, kept_messages: kept } },
      name: null,
      content: [{ text }],
    };
  },
  makeSummary({ text, summarized }) {
    return {
      role: 'user',
      meta: { context_compaction: { strategy: SUMMARIZATION, summarized_messages: summarized } },
      name: null,
      content: [{ text }],
    };
  },
  pairing: haystackPairing,
  writePruned: writePrunedHaystack,
};

/**
 * A pruned message as `ChatMessage.from_tool(tool_result=PLACEHOLDER, origin=ORIGIN, error=ERROR, meta={**meta,
 * "context_compaction": {"strategy": "tool_result_pruning", "original_tokens": N}}).to_dict()` gives it: each result's
 * `result` becomes the placeholder, `name` is null, and the marker is added last to `meta`; `origin`, `error` and
 * every other byte stay. An offloaded message gets offloading's markers instead.
 */
function writePrunedHaystack(request: PruneWrite): ReadonlyMap<number, string> {
  const markers = request.markers ?? [
    { key: 'context_compaction', value: { strategy: 'tool_result_pruning', original_tokens: request.originalTokens } },
  ];
  return writeResults(
    request,
    (raw, root) =>
      elementSpans(raw, memberSpan(raw, root, 'content')).flatMap((part) => {
        const result = memberSpan(raw, part, 'tool_call_result');
        return result !== undefined && isObjectAt(raw, result) ? [{ object: result, key: 'result' }] : [];
      }),
    (raw, root) => {
      const meta = memberSpan(raw, root, 'meta');
      const added = Object.fromEntries(markers.map((m) => [m.key, m.value]));
      // Into a meta with members, each marker is set on its own (new ones appended in order, as a dict merge does).
      const metaEdits =
        meta !== undefined && isObjectAt(raw, meta) && !/^\{\s*\}$/.test(raw.slice(meta.start, meta.end))
          ? markers.map((m) => setMember(raw, meta, m.key, m.value))
          : [setMember(raw, root, 'meta', added)];
      return [setMember(raw, root, 'name', null), ...metaEdits];
    },
  );
}

/** Item `k` as a message: each Haystack message is one item, read on its own. */
function messageOf(input: ConversationInput, item: unknown, k: number): Message {
  if (!isRecord(item)) input.fail(k, `expected a message object, found ${describe(item)}`);
  const roleName = own(item, 'role');
  if (roleName === undefined) input.fail(k, 'no "role"');
  if (typeof roleName !== 'string' || !ROLES.has(roleName))
    input.fail(k, `unknown role ${JSON.stringify(roleName)} (expected system, user, assistant or tool)`);
  const parts = own(item, 'content');
  if (!Array.isArray(parts) || !parts.every(isRecord))
    input.fail(k, `"content" must be a list of part objects, found ${describe(parts)}`);
  const carriesResults = parts.some((p) => own(p, 'tool_call_result') !== undefined);
  const role: Role = carriesResults ? 'tool' : (roleName as Role);
  const meta = own(item, 'meta');
  const offloaded = isRecord(meta) && own(meta, 'tool_result_offloaded') !== undefined ? { offloaded: true } : {};
  return {
    role,
    compaction: compactionOf(item),
    ...offloaded,
    content: () => contentOf(itemValue(input, k)),
  };
}

/**
 * The items of `input` from `messages.length` on read after `messages`, with a continuation for a longer input
 * (`Normalized.more`): a message depends on its own item alone. The list is handed over as it is, and copied once a
 * continuation has grown it (as OpenAI chat's is).
 */
function normalizedFrom(input: ConversationInput, before: Message[] | null): Normalized {
  const items = input.items;
  // Mapped as a whole normalization always was (a hole in a sparse array stays one); a continuation the same way.
  let messages: Message[];
  if (before === null) messages = items.map((item, k) => messageOf(input, item, k));
  else {
    messages = before;
    const from = messages.length;
    messages.length = items.length;
    for (let k = from; k < items.length; k++) if (k in items) messages[k] = messageOf(input, items[k], k);
  }
  return continuableOneEach(messages, normalizedFrom);
}
