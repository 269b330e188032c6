/**
 * An independent model of Haystack 3.4's tool-result offloading, written from deepset-ai/haystack's
 * `hooks/compaction/tool_result_offloading.py` (`ToolResultOffloadCompactor`, PR #12487),
 * `hooks/tool_result_offloading/utils.py` (the pointer, list metadata and binary parts of PR #12534) and
 * `hooks/compaction/utils.py` (`_replace_tool_results_until_target`, the loop pruning shares). It imports nothing
 * from src/: the differential tests compare swc's real entry points with it.
 */
import { agentStepSpans, stepMessageOf, type HCounter, type HMessage } from './haystack.js';

/** One content block of a tool result: `TextContent`, `ImageContent` or `FileContent`. */
export type HPart =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'image'; readonly base64: string; readonly mimeType: string | null }
  | {
      readonly kind: 'file';
      readonly base64: string;
      readonly mimeType: string | null;
      readonly filename: string | null;
    };

/** A `ToolResultStore`: `write` returns the reference the pointer names. */
export interface HStore {
  readonly supportsBinaryContent: boolean;
  write(key: string, content: string | Uint8Array): string;
}

/** A replacement of one tool-result message and the tokens it saves, or null to leave the message. */
export type Replace = (message: HMessage, index: number) => readonly [HMessage, number] | null;

/** `range(start, end)`. */
function range(start: number, end: number): number[] {
  return Array.from({ length: Math.max(end - start, 0) }, (_, k) => start + k);
}

/**
 * `_replace_tool_results_until_target`: measure once, then replace tool results oldest first, lowering the running
 * total by each saving, and stop once it reaches the target; the newest `minKeepSteps` tool-calling steps' results are
 * never passed to `replace`.
 * @returns the new list, or null when the conversation fits or nothing was replaced
 */
export function replaceToolResultsUntilTarget(
  messages: readonly HMessage[],
  options: { targetTokens: number; count: HCounter; minKeepSteps: number; replace: Replace },
): HMessage[] | null {
  let current = options.count(messages);
  if (current <= options.targetTokens) return null;
  const resultSteps = agentStepSpans(messages.map(stepMessageOf), 0)
    .filter(([start, end]) => end > start + 1)
    .map(([start, end]) => range(start + 1, end));
  const protectedPositions = new Set(resultSteps.slice(Math.max(resultSteps.length - options.minKeepSteps, 0)).flat());
  const compacted = [...messages];
  let changed = false;
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index] as HMessage;
    if (message.results.length === 0 || protectedPositions.has(index)) continue;
    const replacement = options.replace(message, index);
    if (replacement === null) continue;
    compacted[index] = replacement[0];
    current -= replacement[1];
    changed = true;
    if (current <= options.targetTokens) break;
  }
  return changed ? compacted : null;
}

/** Python's `len` of a str: code points. */
export function pyLen(text: string): number {
  return [...text].length;
}

/** The first `n` code points of a text. */
function firstPoints(text: string, n: number): string {
  return [...text].slice(0, n).join('');
}

/** `mimetypes.guess_extension` for the MIME types tools return (Python's table, `image/jpeg` as `.jpg`). */
const EXTENSIONS: Readonly<Record<string, string>> = {
  'image/png': '.png',
  'image/jpeg': '.jpg',
  'image/gif': '.gif',
  'image/webp': '.webp',
  'image/svg+xml': '.svg',
  'application/pdf': '.pdf',
  'application/json': '.json',
  'text/plain': '.txt',
  'text/csv': '.csv',
  'text/html': '.html',
};

/** `Path(filename).suffix`: from the last dot of the last segment, unless the name starts with it. */
function suffixOf(filename: string): string {
  const name = filename.split('/').pop() ?? '';
  const dot = name.lastIndexOf('.');
  return dot <= 0 || dot === name.length - 1 ? '' : name.slice(dot);
}

/** `base64.b64decode`. */
function decodeBase64(base64: string): Uint8Array {
  return Uint8Array.from(Buffer.from(base64, 'base64'));
}

/** `_offload_content_block`: writes one block, and says where it went. */
export function offloadContentBlock(
  part: HPart,
  store: HStore,
  keyPrefix: string,
  previewChars: number,
): readonly [string, string] {
  if (part.kind === 'text') {
    const reference = store.write(`${keyPrefix}.txt`, part.text);
    const preview = `${firstPoints(part.text, previewChars)}${pyLen(part.text) > previewChars ? '...' : ''}`;
    return [reference, `text (${pyLen(part.text)} characters) at '${reference}'. Preview: ${preview}`];
  }
  const data = decodeBase64(part.base64);
  const label = part.mimeType ?? part.kind;
  const filename = part.kind === 'file' ? part.filename : null;
  const mimeExtension = part.mimeType === null ? null : (EXTENSIONS[part.mimeType] ?? null);
  const extension = (filename !== null ? suffixOf(filename) : '') || mimeExtension || '.bin';
  const reference = store.write(`${keyPrefix}${extension}`, data);
  const named = filename !== null && filename !== '' ? ` named '${filename}'` : '';
  return [reference, `${label}${named} (${data.length} bytes) at '${reference}'`];
}

/**
 * `_offload_content_blocks`: each block its own store entry; one block keeps the prefix as its key and gets a one-line
 * pointer, several get `_{position}` keys and a numbered line each.
 */
export function offloadContentBlocks(
  parts: readonly HPart[],
  store: HStore,
  prefix: string,
  previewChars: number,
): { references: string[]; pointer: string } {
  const single = parts.length === 1;
  const written = parts.map((part, position) =>
    offloadContentBlock(part, store, single ? prefix : `${prefix}_${position}`, previewChars),
  );
  const references = written.map(([reference]) => reference);
  const descriptions = written.map(([, description]) => description);
  if (descriptions.length === 1) return { references, pointer: `Tool result offloaded to ${descriptions[0]}` };
  return {
    references,
    pointer: [
      `Tool result offloaded to ${descriptions.length} files:`,
      ...descriptions.map((d, k) => `${k + 1}. ${d}`),
    ].join('\n'),
  };
}

/**
 * `_offloadable_content_blocks`: null for a result of empty texts only (or no blocks), and for image or file content
 * a text-only store cannot take.
 */
export function offloadableContentBlocks(parts: readonly HPart[], store: HStore): readonly HPart[] | null {
  if (parts.every((p) => p.kind === 'text' && p.text === '')) return null;
  if (!store.supportsBinaryContent && !parts.every((p) => p.kind === 'text')) return null;
  return parts;
}

/** What the compactor did to one message: the references written and Haystack's `original_tokens`. */
export interface OffloadRecord {
  readonly references: readonly string[];
  readonly originalTokens: number;
}

/** Settings of `toolResultOffloadCompactor` (its constructor's arguments). */
export interface OffloadCompactorSettings {
  /** The store each result is written to (a function of the message's index, so a test can name entries as swc). */
  readonly store: (index: number) => HStore;
  readonly minKeepSteps?: number;
  readonly minTokens?: number;
  readonly previewChars?: number;
  /** A result's content blocks (default: its text as one block). */
  readonly partsOf?: (message: HMessage, index: number) => readonly HPart[];
}

/**
 * `ToolResultOffloadCompactor(store, min_keep_steps, min_tokens, preview_chars).compact(messages, target, counter)`.
 * An offloaded message keeps its meta and gains `compaction: 'tool_result_offloading'` and `offloaded`; its result's
 * text is the pointer.
 * @returns the new list and each offloaded message's record, or null (Haystack's `None`)
 */
export function toolResultOffloadCompactor(
  messages: readonly HMessage[],
  target: number,
  count: HCounter,
  settings: OffloadCompactorSettings,
): { messages: HMessage[]; offloaded: Map<number, OffloadRecord> } | null {
  const minKeepSteps = settings.minKeepSteps ?? 1;
  const minTokens = settings.minTokens ?? 200;
  const previewChars = settings.previewChars ?? 200;
  if (minKeepSteps < 1) throw new RangeError(`\`min_keep_steps\` must be at least 1, got ${minKeepSteps}`);
  if (minTokens < 0) throw new RangeError(`\`min_tokens\` must be at least 0, got ${minTokens}`);
  if (previewChars < 0) throw new RangeError(`\`preview_chars\` must be at least 0, got ${previewChars}`);
  const offloaded = new Map<number, OffloadRecord>();
  const replace: Replace = (message, index) => {
    const result = message.results[0];
    if (
      result === undefined ||
      result.error ||
      message.meta.offloaded === true ||
      message.meta.compaction !== undefined
    )
      return null;
    const originalTokens = count([message]);
    if (originalTokens <= minTokens) return null;
    const store = settings.store(index);
    const parts = offloadableContentBlocks(
      settings.partsOf?.(message, index) ?? [{ kind: 'text', text: result.text }],
      store,
    );
    if (parts === null) return null;
    const prefix = `compacted_${result.toolName}_${result.id !== null && result.id !== '' ? result.id : `call${index}`}`;
    const { references, pointer } = offloadContentBlocks(parts, store, prefix, previewChars);
    const replacement: HMessage = {
      ...message,
      results: [{ ...result, text: pointer }],
      images: 0,
      files: [],
      meta: { ...message.meta, compaction: 'tool_result_offloading', offloaded: true },
    };
    const saved = originalTokens - count([replacement]);
    if (saved <= 0) return null;
    offloaded.set(index, { references, originalTokens });
    return [replacement, saved];
  };
  const compacted = replaceToolResultsUntilTarget(messages, { targetTokens: target, count, minKeepSteps, replace });
  return compacted === null ? null : { messages: compacted, offloaded };
}
