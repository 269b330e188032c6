import { identifierKey, identifiersIn, identifiersOfMessage } from './extract.js';
import type { Identifier } from './kinds.js';
import type { Message } from '../types.js';

/**
 * A summary's retention: the share of the identifiers (./extract.ts) of the messages it replaces that its text
 * still names. Pure, so summarize's rounds can act on it (`--min-retention`).
 */

/** How much of what a summary replaced it still names. */
export interface Retention {
  /** Identifiers the replaced messages name, each once. */
  readonly total: number;
  /** Those the summary names too. */
  readonly kept: number;
  /** kept / total; 1 when the replaced messages name none (nothing to lose). */
  readonly fraction: number;
  /** Those the summary lost, in the order the replaced messages name them. */
  readonly lost: readonly Identifier[];
}

/**
 * The retention of a summary: the identifiers of the messages it replaces that its text keeps, as a fraction.
 * @param replaced the messages the summary stands for
 * @param summary the summary's text
 */
export function retentionOf(replaced: readonly Message[], summary: string): Retention {
  const named = new Set(identifiersIn(summary).map(identifierKey));
  const seen = new Set<string>();
  const lost: Identifier[] = [];
  let total = 0;
  for (const message of replaced) {
    identifiersOfMessage(message, (id) => {
      const key = identifierKey(id);
      if (seen.has(key)) return;
      seen.add(key);
      total++;
      if (!named.has(key)) lost.push(id);
    });
  }
  const kept = total - lost.length;
  return { total, kept, fraction: total === 0 ? 1 : kept / total, lost };
}

/**
 * The `--min-retention F` check: a summary that keeps less than F of the identifiers it replaces counts as a failed
 * call (the last result stands, as for an empty summary; with --strict the file fails).
 * @returns null when the summary passes, else why it failed, in words
 */
export function retentionFailure(retention: Retention, min: number): string | null {
  if (retention.fraction >= min) return null;
  return `the summary keeps ${retention.kept} of ${retention.total} identifiers (${formatShare(retention.fraction)}), under --min-retention ${min}`;
}

/** A share as a percentage with at most one decimal: `66.7%`. */
function formatShare(fraction: number): string {
  return `${Math.round(fraction * 1000) / 10}%`;
}
