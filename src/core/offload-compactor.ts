// Haystack 3.4's `ToolResultOffloadCompactor` (hooks/compaction/tool_result_offloading.py), decision for decision.
// The rules, numbered and explained: docs/strategy.md#tool-result-offloading.
import { offloadedMessage } from './offload.js';
import { isPointerText, pointerText } from './pointer.js';
import { DEFAULT_PLACEHOLDER, isPlaceholderText, resultSteps } from './prune.js';
import { contentOf, renderMessage } from './render.js';
import { replaceUntilTarget } from './replace-loop.js';
import type { Message, TokenCounter, ToolResult } from './types.js';

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
  /**
   * The store reference of one result's text (the caller names and later writes the store entry).
   * @param index the message's index; `result` the result's position in it; `step` its tool-calling step, from 1
   */
  readonly reference: (index: number, result: number, step: number, tool: string, text: string) => string;
}

/** One result the compactor offloaded. */
export interface CompactedResult {
  readonly reference: string;
  /** Its pointer, as the message now holds it. */
  readonly pointer: string;
  /** The text that goes to the store. */
  readonly original: string;
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
 * Whether a result may go to the store: no error, not empty, not a pointer or a placeholder already, and text alone
 * (swc's store takes text only, so, as Haystack does with a text-only store, a result with an image or file stays).
 */
function isOffloadable(r: ToolResult, placeholder: string): boolean {
  return (
    !r.error &&
    r.text !== '' &&
    r.images === 0 &&
    r.files === 0 &&
    !isPointerText(r.text) &&
    !isPlaceholderText(r.text, placeholder)
  );
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
      const reference = options.reference(index, k, stepOf.get(index) ?? 0, r.name, r.text);
      offloaded.set(k, {
        reference,
        pointer: pointerText([{ reference, text: r.text }], previewChars),
        original: r.text,
      });
    }
    const pointers = new Map([...offloaded].map(([k, r]) => [k, () => r.pointer]));
    const replacement: Message = { ...offloadedMessage(message, pointers), compaction: TOOL_RESULT_OFFLOADING };
    const after = counter.measure([renderMessage(replacement)]);
    // A pointer can cost more than a small result: that replacement is dropped (its store entry never written).
    const record: CompactedOffload = { index, results: offloaded, tokensBefore: original, tokensAfter: after };
    return { message: replacement, saved: original - after, record };
  });
  return replaced === null ? null : { messages: replaced.messages, offloads: replaced.records };
}
