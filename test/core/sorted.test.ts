/** `AscendingSet` answers as a `Set` of the same numbers does: membership, size and every way to go through it. */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { AscendingSet } from '../../src/core/sorted.js';
import { scaled } from '../helpers/scale.js';

describe('AscendingSet', () => {
  it('answers as a Set of the same numbers', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.nat(300)), fc.array(fc.integer({ min: -5, max: 320 })), (values, probes) => {
        const sorted = [...values].sort((a, b) => a - b);
        const bound = (sorted[sorted.length - 1] ?? -1) + 1 + (probes.length % 3);
        const ours = new AscendingSet(sorted, bound);
        const theirs = new Set(sorted);
        expect(ours.size).toBe(theirs.size);
        for (const p of [...probes, 0.5, Number.NaN, bound, ...sorted]) expect(ours.has(p)).toBe(theirs.has(p));
        expect([...ours]).toEqual([...theirs]);
        expect([...ours.values()]).toEqual([...theirs.values()]);
        expect([...ours.keys()]).toEqual([...theirs.keys()]);
        expect([...ours.entries()]).toEqual([...theirs.entries()]);
        const seen: [number, number][] = [];
        ours.forEach((v, again, set) => {
          expect(set).toBe(ours);
          seen.push([v, again]);
        });
        expect(seen).toEqual([...theirs.entries()]);
      }),
      { numRuns: scaled(300) },
    );
  });
});
