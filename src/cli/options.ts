import { UsageError } from '../errors.js';

/**
 * Parses a whole number option strictly: "8000" and "8_000"/"8,000" are fine; "1e3", "2.5", "" are not.
 * @param name the option, for the error
 * @param raw what was typed
 * @param min the smallest allowed value
 */
export function parseWhole(name: string, raw: string, min: number): number {
  const cleaned = raw.trim().replace(/[_,](?=\d{3}(\D|$))/g, '');
  if (!/^[+-]?\d+$/.test(cleaned)) throw new UsageError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(cleaned);
  if (!Number.isSafeInteger(value)) throw new UsageError(`${name} is too large: "${raw}"`);
  if (value < min) throw new UsageError(`${name} must be at least ${min}, got ${value}`);
  return value;
}

const SUFFIX = { k: 1000n, m: 1_000_000n } as const;

/**
 * Parses a token count: a whole number as `parseWhole` takes it, or one with a `k` (thousand) or `m` (million)
 * suffix, decimals allowed where the result is whole: `8k` = 8,000, `1.5k` = 1,500, `1m` = 1,000,000. `8kb`, `k`,
 * `1e3` and `1.2345k` are refused.
 * @param name the option, for the error
 * @param raw what was typed
 * @param min the smallest allowed value
 */
export function parseTokens(name: string, raw: string, min: number): number {
  const m = /^\s*(\d+)(?:\.(\d+))?\s*([kKmM])\s*$/.exec(raw);
  if (m === null) return parseWhole(name, raw, min);
  const decimals = m[2] ?? '';
  const scale = SUFFIX[(m[3] as string).toLowerCase() as keyof typeof SUFFIX];
  const exact = (BigInt(`${m[1]}${decimals}`) * scale) / 10n ** BigInt(decimals.length);
  if (exact * 10n ** BigInt(decimals.length) !== BigInt(`${m[1]}${decimals}`) * scale) {
    throw new UsageError(`${name} must be a whole number of tokens, got "${raw}"`);
  }
  if (exact > BigInt(Number.MAX_SAFE_INTEGER)) throw new UsageError(`${name} is too large: "${raw}"`);
  const value = Number(exact);
  if (value < min) throw new UsageError(`${name} must be at least ${min}, got ${value}`);
  return value;
}

/** `--color WHEN`, as ripgrep and git spell it; `--no-color` is `never`. */
export const COLOR_WHEN = ['always', 'never', 'auto'] as const;
export type ColorWhen = (typeof COLOR_WHEN)[number];

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
