import { expect } from '@jest/globals';
import { isDeepStrictEqual } from 'node:util';

/**
 * Expects two byte strings equal. Jest's `toEqual` walks a Buffer index by index (seconds for a few hundred KB), so
 * the bytes are compared first and `toEqual` runs only when they differ, for its report of where.
 * @param actual - the bytes a run left
 * @param expected - the bytes it should have left
 */
export function expectSameBytes(actual: Uint8Array, expected: Uint8Array): void {
  if (Buffer.compare(actual, expected) !== 0) expect(actual).toEqual(expected);
}

/**
 * Expects two values equal as `toEqual` says, asking `toEqual` only when they are not strictly equal (its walk is the
 * cost of comparing big results, and strictly equal values are equal to it too): it then decides, and reports where.
 * @param actual - what a run gave
 * @param expected - what it should have given
 */
export function expectEqual(actual: unknown, expected: unknown): void {
  if (!isDeepStrictEqual(actual, expected)) expect(actual).toEqual(expected);
}
