/** Counts are written with thousands separators, the same way Intl's en-US format does, on every machine. */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { formatCount } from '../../src/cli/result-line.js';
import { scaled } from '../helpers/scale.js';

describe('formatCount', () => {
  it('groups digits in threes', () => {
    expect([0, 7, 999, 1000, 12_345, 1_000_000, -4_321, 460_000].map(formatCount)).toEqual([
      '0',
      '7',
      '999',
      '1,000',
      '12,345',
      '1,000,000',
      '-4,321',
      '460,000',
    ]);
  });

  it("agrees with Intl's en-US format on any safe integer and on fractions", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.integer({ min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER }),
          fc.double({ noNaN: true }),
        ),
        (n) => {
          expect(formatCount(n)).toBe(n.toLocaleString('en-US'));
        },
      ),
      { numRuns: scaled(2000) },
    );
  });
});
