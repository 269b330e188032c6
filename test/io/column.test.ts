import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { Uint32Column } from '../../src/io/column.js';

describe('a column of whole numbers', () => {
  it('gives back what was pushed, in order, however far it grows', () => {
    fc.assert(
      fc.property(fc.array(fc.nat({ max: 0xffffffff }), { maxLength: 5000 }), (values) => {
        const column = new Uint32Column();
        for (const v of values) column.push(v);
        expect(column.length).toBe(values.length);
        expect(Array.from({ length: column.length }, (_, k) => column.at(k))).toEqual(values);
      }),
      { numRuns: 50 },
    );
  });

  it('refuses what four bytes cannot hold rather than storing something else', () => {
    const column = new Uint32Column();
    for (const bad of [-1, 2 ** 32, 1.5, Number.NaN]) expect(() => column.push(bad)).toThrow(RangeError);
    expect(column.length).toBe(0);
  });
});
