// The rules this module decides by, numbered and explained: docs/strategy.md#tool-result-offloading.
import { stepSpans } from './compact.js';
import { isPlaceholderText, protectedResults } from './prune.js';
import { contentOf } from './render.js';
import type { Message } from './types.js';

/** Haystack's meta key on an offloaded result; its value is the store reference. */
export const OFFLOADED_META_KEY = 'tool_result_offloaded';

/** Characters of the original result the pointer shows (Haystack's `preview_chars`). */
export const PREVIEW_CHARS = 200;

const POINTER_START = "Tool result offloaded to '";

/** Settings of one offloading. */
export interface OffloadOptions {
  /** Results of more than this many characters (code points) are offloaded (`OffloadOverChars`). At least 1. */
  readonly over: number;
  /** The newest tool-calling steps whose results stay. At least 1; default 1. */
  readonly minKeepSteps?: number;
  /** The active pruning placeholder, so a pruned result is never offloaded (default: Haystack's). */
  readonly placeholder?: string;
}

/** One result to offload. */
export interface OffloadCandidate {
  /** The message's index in the conversation, and the result's position in it. */
  readonly index: number;
  readonly result: number;
  /** The tool-calling step it belongs to, from 1 (0 for a result in no step). */
  readonly step: number;
  readonly tool: string;
  /** The result's text: what the store file holds. */
  readonly text: string;
}

/** The length of a text as Python's `len` counts it: code points. */
export function codePoints(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/**
 * Haystack's pointer: `Tool result offloaded to 'REF' (N characters). Preview: …`, the preview the first 200 code points
 * and `...` when the text is longer.
 */
export function pointerText(reference: string, text: string): string {
  const length = codePoints(text);
  // The first PREVIEW_CHARS code points, found without splitting the whole text.
  let end = 0;
  for (let n = 0; n < PREVIEW_CHARS && end < text.length; n++) end += text.codePointAt(end) as number > 0xffff ? 2 : 1;
  const preview = text.slice(0, end);
  return `${POINTER_START}${reference}' (${length} characters). Preview: ${preview}${length > PREVIEW_CHARS ? '...' : ''}`;
}

/** Whether a result's text is a pointer an offloading wrote. */
export function isPointerText(text: string): boolean {
  return text.startsWith(POINTER_START);
}

/**
 * The results `ToolResultOffloadHook` with `OffloadOverChars(over)` would offload, applied to every result outside the
 * newest `minKeepSteps` tool-calling steps: text results (no image or file) that are no error, not already offloaded
 * or made by compaction, and longer than `over` characters. Pure.
 * @returns the candidates, oldest first
 */
export function planOffload(messages: readonly Message[], options: OffloadOptions): OffloadCandidate[] {
  const minKeepSteps = options.minKeepSteps ?? 1;
  if (!Number.isInteger(options.over) || options.over < 1) throw new RangeError(`the offload threshold must be a whole number of at least 1, got ${options.over}`);
  if (!Number.isInteger(minKeepSteps) || minKeepSteps < 1) throw new RangeError(`min_keep_steps must be at least 1 for offloading, got ${minKeepSteps}`);
  const kept = protectedResults(messages, minKeepSteps);
  const stepOf = new Map<number, number>();
  stepSpans(messages, 0)
    .filter(([start, end]) => end > start + 1)
    .forEach(([start, end], k) => {
      for (let i = start + 1; i < end; i++) stepOf.set(i, k + 1);
    });
  const out: OffloadCandidate[] = [];
  messages.forEach((message, index) => {
    if (message.role !== 'tool' || kept.has(index) || message.offloaded === true || message.fixed === true || message.compaction !== undefined) return;
    contentOf(message).results.forEach((r, result) => {
      if (r.error || r.images > 0 || r.files > 0 || isPointerText(r.text) || isPlaceholderText(r.text, options.placeholder ?? '')) return;
      if (codePoints(r.text) <= options.over) return;
      out.push({ index, result, step: stepOf.get(index) ?? 0, tool: r.name, text: r.text });
    });
  });
  return out;
}

/** The message with some results replaced by their pointers; it is then marked offloaded. */
export function offloadedMessage(message: Message, pointers: ReadonlyMap<number, string>): Message {
  const content = contentOf(message);
  return {
    ...message,
    offloaded: true,
    content: { ...content, results: content.results.map((r, k) => (pointers.has(k) ? { ...r, text: pointers.get(k) as string, images: 0, files: 0 } : r)) },
  };
}

/** A store key as Haystack names it: `{step}_{tool}_{call id}.txt`, `call{position}` standing in for a missing id. */
export function storeKey(step: number, tool: string, callId: string | null, position: number): string {
  return `${step}_${safeName(tool)}_${safeName(callId ?? `call${position}`)}.txt`;
}

/** A name that stays one file name: separators, `..` and control characters become `_`. */
export function safeName(name: string): string {
  const cleaned = name.replace(/[/\\\u0000-\u001f]/g, '_');
  return cleaned === '' || cleaned === '.' || cleaned === '..' ? `_${cleaned}` : cleaned;
}
