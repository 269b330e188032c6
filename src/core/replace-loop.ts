// Haystack's `_replace_tool_results_until_target` (compaction/utils.py): the one loop tool-result pruning and the
// offload compactor share.
import { stepSpans } from './groups.js';
import type { Message } from './types.js';

/** A replacement of one tool-result message and the tokens it saves (above 0: the caller drops one that saves none). */
export interface Replacement<R> {
  readonly message: Message;
  readonly saved: number;
  /** What the caller wants to remember of it (its record in the plan). */
  readonly record: R;
}

/** What the loop replaced. */
export interface Replaced<R> {
  /** The conversation with the replacements (a new list; the input is never changed). */
  readonly messages: Message[];
  /** The records of the replacements made, oldest first. */
  readonly records: R[];
  /** The input positions replaced, oldest first. */
  readonly indices: number[];
}

/**
 * Replaces tool results oldest first until the running total (the whole conversation, less each replacement's saving)
 * reaches `target`. The results of the newest `minKeepSteps` tool-calling steps are never passed to `replace`.
 * @param messages the conversation, oldest first
 * @param before the whole conversation's tokens, measured once by the caller
 * @param target the tokens the conversation should fit within
 * @param minKeepSteps the newest tool-calling steps whose results stay (at least 1)
 * @param replace the replacement of a tool-result message at an index, or null to leave it
 * @returns what was replaced, or null when the conversation fits already or nothing was replaced
 */
export function replaceUntilTarget<R>(
  messages: readonly Message[],
  before: number,
  target: number,
  minKeepSteps: number,
  replace: (message: Message, index: number) => Replacement<R> | null,
): Replaced<R> | null {
  if (before <= target) return null;
  const kept = protectedResults(messages, minKeepSteps);
  const out = messages.slice();
  const records: R[] = [];
  const indices: number[] = [];
  let current = before;
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i] as Message;
    if (message.role !== 'tool' || kept.has(i)) continue;
    const replacement = replace(message, i);
    if (replacement === null || replacement.saved <= 0) continue;
    out[i] = replacement.message;
    records.push(replacement.record);
    indices.push(i);
    current -= replacement.saved;
    if (current <= target) break;
  }
  return indices.length === 0 ? null : { messages: out, records, indices };
}

/** The tool-calling steps that have results, from the start of the conversation: [assistant, end) spans. */
export function resultSteps(messages: readonly Message[]): Array<[number, number]> {
  return stepSpans(messages, 0).filter(([start, end]) => end > start + 1);
}

/**
 * The input positions of the tool-result messages of the newest `minKeepSteps` tool-calling steps. Steps are looked
 * for from the start of the conversation; a step without results does not count. Without `withResults`, the steps are
 * read from the end: a step's results are a run of tool messages right after an assistant message (as `stepSpans`
 * cuts them), so only the newest steps are looked at, not a list of every step made.
 */
export function protectedResults(
  messages: readonly Message[],
  minKeepSteps: number,
  withResults?: ReadonlyArray<readonly [number, number]>,
): Set<number> {
  const kept = new Set<number>();
  if (withResults !== undefined) {
    for (const [start, end] of withResults.slice(Math.max(withResults.length - minKeepSteps, 0))) {
      for (let i = start + 1; i < end; i++) kept.add(i);
    }
    return kept;
  }
  let steps = 0;
  for (let i = messages.length - 1; i >= 0 && steps < minKeepSteps;) {
    if ((messages[i] as Message).role !== 'tool') {
      i--;
      continue;
    }
    let first = i;
    while (first > 0 && (messages[first - 1] as Message).role === 'tool') first--;
    if (first > 0 && (messages[first - 1] as Message).role === 'assistant') {
      for (let j = first; j <= i; j++) kept.add(j);
      steps++;
    }
    i = first - 1;
  }
  return kept;
}
