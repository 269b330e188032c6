import { expect } from '@jest/globals';

/**
 * Expects two byte strings equal. Jest's `toEqual` walks a Buffer index by index (seconds for a few hundred KB), so
 * the bytes are compared first and `toEqual` runs only when they differ, for its report of where.
 * @param actual - the bytes a run left
 * @param expected - the bytes it should have left
 */
export function expectSameBytes(actual: Uint8Array, expected: Uint8Array): void {
  if (Buffer.compare(actual, expected) !== 0) expect(actual).toEqual(expected);
}
