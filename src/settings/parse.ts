import { UsageError } from '../errors.js';

/**
 * How an option's text is read, wherever it is written: a flag's value, or a settings file's string ("8k"). Each
 * parser names the option as the caller shows it (`--target`, `target`) and throws a UsageError.
 */

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

/** A fraction typed on the command line, kept exact (0.7 is 7/10, not a binary float). */
export interface Fraction {
  readonly text: string;
  readonly numerator: bigint;
  readonly denominator: bigint;
  readonly value: number;
}

/**
 * Parses a fraction exactly: `0.7`, `.7`, `1`, or a percentage `70%`.
 * @throws UsageError for anything else
 */
export function parseFraction(name: string, raw: string): Fraction {
  const text = raw.trim();
  const m = /^(\d*)(?:\.(\d*))?(%?)$/.exec(text);
  if (m === null || (m[1] === '' && (m[2] ?? '') === '')) {
    throw new UsageError(`${name} must be a fraction such as 0.7 or 70%, got "${raw}"`);
  }
  const digits = `${m[1] ?? ''}${m[2] ?? ''}` || '0';
  let denominator = 10n ** BigInt((m[2] ?? '').length);
  if (m[3] === '%') denominator *= 100n;
  const numerator = BigInt(digits);
  return { text, numerator, denominator, value: Number(numerator) / Number(denominator) };
}
