// Haystack 3.4's `ToolResultOffloadCompactor` (hooks/compaction/tool_result_offloading.py), decision for decision.
// The rules, numbered and explained: docs/strategy.md#tool-result-offloading.
import { offloadedMessage } from './offload.js';
import { binaryExtension, isPointerText, pointerText, type StoredPart } from './pointer.js';
import { DEFAULT_PLACEHOLDER, isPlaceholderText, resultSteps } from './prune.js';
import { contentOf, renderMessage } from './render.js';
import { replaceUntilTarget } from './replace-loop.js';
import type { Message, StorablePart, TokenCounter, ToolResult } from './types.js';

/** The strategy name Haystack records in the metadata of an offloaded result (`context_compaction.strategy`). */
export const TOOL_RESULT_OFFLOADING = 'tool_result_offloading';

/** Settings of one offload compaction (the compactor's constructor arguments, and the target). */
export interface OffloadCompactorOptions {
  /** The tokens the conversation should fit within. */
  readonly target: number;
  /** The newest tool-calling steps whose results are never offloaded. At least 1; default 1. */
  readonly minKeepSteps?: number;
  /** Only results of more than this many tokens (the message measured alone) are offloaded. Default 200. */
  readonly minTokens?: number;
  /** Code points of each offloaded text kept in its pointer. Default 200. */
  readonly previewChars?: number;
  /** The active pruning placeholder, so a pruned result (known by its text where the format has no metadata) stays. */
  readonly placeholder?: string;
  /** The store reference of one stored part (the caller names and later writes the store entry). */
  readonly reference: (at: PartAt) => string;
}

/** One part a result stores, and where it comes from. */
export interface PartAt {
  /** The message's index, the result's position in it, its tool-calling step (from 1) and its tool. */
  readonly index: number;
  readonly result: number;
  readonly step: number;
  readonly tool: string;
  /** What the store entry holds: a text, or an image's or file's bytes. */
  readonly content: string | Uint8Array;
  /** The part's position when the result has several (Haystack's `_{position}` key suffix), else null. */
  readonly part: number | null;
  /** The entry's extension, with its dot: `.txt` for a text. */
  readonly extension: string;
}

/** One result the compactor offloaded. */
export interface CompactedResult {
  /** Its pointer, as the message now holds it. */
  readonly pointer: string;
  /** The result's text as the message held it. */
  readonly original: string;
  /** Its store entries, one per part, each with what it holds. */
  readonly stored: readonly { readonly reference: string; readonly content: string | Uint8Array }[];
}

/** One message the compactor rewrote. */
export interface CompactedOffload {
  readonly index: number;
  /** Its offloaded results by their position in the message. */
  readonly results: ReadonlyMap<number, CompactedResult>;
  /** The message measured alone, before (Haystack's `original_tokens`) and after. */
  readonly tokensBefore: number;
  readonly tokensAfter: number;
}

/** The decision of one offload compaction. */
export interface OffloadCompaction {
  /** The conversation with the offloaded results' pointers (a new list). */
  readonly messages: readonly Message[];
  readonly offloads: readonly CompactedOffload[];
}

/** Checks the settings as Haystack's constructor does. */
function checkOptions(minKeepSteps: number, minTokens: number, previewChars: number): void {
  if (!Number.isInteger(minKeepSteps) || minKeepSteps < 1)
    throw new RangeError(`min_keep_steps must be at least 1 for offloading, got ${minKeepSteps}`);
  if (!Number.isInteger(minTokens) || minTokens < 0)
    throw new RangeError(`min_tokens must be a whole number of at least 0, got ${minTokens}`);
  if (!Number.isInteger(previewChars) || previewChars < 0)
    throw new RangeError(`preview_chars must be a whole number of at least 0, got ${previewChars}`);
}

/**
 * Whether a result may go to the store: no error, not empty texts only, not a pointer or a placeholder already; an
 * image or file only where the format holds its bytes (`parts`), else, as with Haystack's text-only store, it stays.
 */
function isOffloadable(r: ToolResult, placeholder: string): boolean {
  if (r.error || isPointerText(r.text) || isPlaceholderText(r.text, placeholder)) return false;
  if (r.parts !== undefined) return !r.parts.every((p) => p.kind === 'text' && p.text === '');
  return r.text !== '' && r.images === 0 && r.files === 0;
}

/** `base64.b64decode` of a payload, or null when it is not base64 (the result then stays). */
function decodeBase64(base64: string): Uint8Array | null {
  try {
    return Uint8Array.from(atob(base64.replace(/\s+/g, '')), (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}

/**
 * Stores a result's parts (its text alone when the format gives none): each its own entry, a binary one as its
 * bytes; null when a payload is not base64.
 */
function storeParts(
  r: ToolResult,
  at: Omit<PartAt, 'content' | 'part' | 'extension'>,
  reference: (at: PartAt) => string,
): { stored: CompactedResult['stored']; described: StoredPart[] } | null {
  const parts: readonly StorablePart[] = r.parts ?? [{ kind: 'text', text: r.text }];
  const stored: { reference: string; content: string | Uint8Array }[] = [];
  const described: StoredPart[] = [];
  for (const [position, p] of parts.entries()) {
    const part = parts.length === 1 ? null : position;
    if (p.kind === 'text') {
      const ref = reference({ ...at, content: p.text, part, extension: '.txt' });
      stored.push({ reference: ref, content: p.text });
      described.push({ reference: ref, text: p.text });
      continue;
    }
    const bytes = decodeBase64(p.base64);
    if (bytes === null) return null;
    const ref = reference({ ...at, content: bytes, part, extension: binaryExtension(p.filename, p.mimeType) });
    stored.push({ reference: ref, content: bytes });
    described.push({ reference: ref, bytes: bytes.length, label: p.mimeType ?? p.kind, filename: p.filename });
  }
  return { stored, described };
}

/**
 * Decides which tool results `ToolResultOffloadCompactor` writes to the store. Pure: never mutates `messages`.
 * @param messages the conversation, oldest first
 * @param counter measures groups of rendered messages
 * @param options target, min_keep_steps, min_tokens, preview_chars, and how a result's store reference is named
 * @returns the decision, or null when the conversation fits already or nothing was offloaded (Haystack's `None`)
 */
export function planOffloadCompaction(
  messages: readonly Message[],
  counter: TokenCounter,
  options: OffloadCompactorOptions,
): OffloadCompaction | null {
  const minKeepSteps = options.minKeepSteps ?? 1;
  const minTokens = options.minTokens ?? 200;
  const previewChars = options.previewChars ?? 200;
  const placeholder = options.placeholder ?? DEFAULT_PLACEHOLDER;
  checkOptions(minKeepSteps, minTokens, previewChars);
  const before = messages.length === 0 ? 0 : counter.measure(messages.map(renderMessage));
  const stepOf = new Map<number, number>();
  resultSteps(messages).forEach(([start, end], k) => {
    for (let i = start + 1; i < end; i++) stepOf.set(i, k + 1);
  });
  const replaced = replaceUntilTarget(messages, before, options.target, minKeepSteps, (message, index) => {
    // Results another compactor rewrote, or that already point to the store, stay.
    if (message.offloaded === true || message.fixed === true || message.compaction !== undefined) return null;
    const results = contentOf(message).results;
    const chosen = results.flatMap((r, k) => (isOffloadable(r, placeholder) ? [k] : []));
    if (chosen.length === 0) return null;
    const original = counter.measure([renderMessage(message)]);
    if (original <= minTokens) return null;
    const offloaded = new Map<number, CompactedResult>();
    for (const k of chosen) {
      const r = results[k] as ToolResult;
      const at = { index, result: k, step: stepOf.get(index) ?? 0, tool: r.name };
      const parts = storeParts(r, at, options.reference);
      if (parts === null) continue;
      offloaded.set(k, {
        pointer: pointerText(parts.described, previewChars),
        original: r.text,
        stored: parts.stored,
      });
    }
    if (offloaded.size === 0) return null;
    const pointers = new Map([...offloaded].map(([k, r]) => [k, () => r.pointer]));
    const replacement: Message = { ...offloadedMessage(message, pointers), compaction: TOOL_RESULT_OFFLOADING };
    const after = counter.measure([renderMessage(replacement)]);
    // A pointer can cost more than a small result: that replacement is dropped (its store entry never written).
    const record: CompactedOffload = { index, results: offloaded, tokensBefore: original, tokensAfter: after };
    return { message: replacement, saved: original - after, record };
  });
  return replaced === null ? null : { messages: replaced.messages, offloads: replaced.records };
}
