import { COLOR_WHEN, type ColorWhen } from '../settings/options.js';
import { parseTokens, parseWhole } from '../settings/parse.js';

/** Numbers as options take them (src/settings/parse.ts). */
export { parseTokens, parseWhole };

/** `--color WHEN` (src/settings/options.ts). */
export { COLOR_WHEN, type ColorWhen };

/**
 * What the command line asked of colour: commander's `color` is the `--color` value, `false` after `--no-color` (the
 * last of the two wins), or undefined when neither was given.
 */
export function colorWhen(flag: string | boolean | undefined): ColorWhen {
  if (flag === false) return 'never';
  return flag === 'always' || flag === 'never' ? flag : 'auto';
}

/**
 * How quiet a run is: 0 prints everything; 1 (`-q`) drops the lines of each file but keeps errors and the closing total
 * of a run over several files, what CI logs want; 2 (`-qq`) prints errors only. A run on one file has no total, so
 * there `-q` is `-qq`. What `swc compact` was asked to print on stdout (the transcript, diffs, the check list, JSON)
 * is never quietened.
 */
export type QuietLevel = 0 | 1 | 2;

/** `-q` counted: commander hands over how many times it was given (undefined for none); more than two is two. */
export function quietLevel(count: number | boolean | undefined): QuietLevel {
  if (count === undefined || count === false) return 0;
  if (count === true) return 1;
  return Math.min(Math.max(count, 0), 2) as QuietLevel;
}

/** Counts a repeatable flag: commander calls it once per `-q`, with what the previous calls returned. */
export function countFlag(_value: unknown, previous: number | undefined): number {
  return (previous ?? 0) + 1;
}

/**
 * Whether a run at this level prints its totals: the closing line of a run over several files (and what its model
 * calls cost). A run on one file has said all in its own line, which `-q` drops.
 * @param single the command named one file (or -)
 */
export function showsTotals(quiet: QuietLevel, single: boolean): boolean {
  return quiet === 0 || (quiet === 1 && !single);
}

/** The shells `swc completion` writes a script for. */
export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

/** The names the package installs the program under (package.json's `bin`); completion scripts complete both. */
export const PROGRAMS = ['swc', 'transcript-compact'] as const;
