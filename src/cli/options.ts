import { UsageError } from '../errors.js';

/**
 * Parses a whole number option strictly: "8000" and "8_000"/"8,000" are fine; "8k", "1e3", "2.5", "" are not.
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
