import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { OffsetColumn, Uint32Column } from '../../src/io/column.js';
import { scaled } from '../helpers/scale.js';

describe('a column of whole numbers', () => {
  it('gives back what was pushed, in order, however far it grows', () => {
    fc.assert(
      fc.property(fc.array(fc.nat({ max: 0xffffffff }), { maxLength: 5000 }), (values) => {
        const column = new Uint32Column();
        for (const v of values) column.push(v);
        expect(column.length).toBe(values.length);
        expect(Array.from({ length: column.length }, (_, k) => column.at(k))).toEqual(values);
      }),
      { numRuns: scaled(50) },
    );
  });

  it('refuses what four bytes cannot hold rather than storing something else', () => {
    const column = new Uint32Column();
    for (const bad of [-1, 2 ** 32, 1.5, Number.NaN]) expect(() => column.push(bad)).toThrow(RangeError);
    expect(column.length).toBe(0);
  });
});

describe('a column of offsets', () => {
  it('gives back what was pushed, past four bytes too, however far it grows', () => {
    const offset = fc.oneof(fc.nat({ max: 0xffffffff }), fc.integer({ min: 2 ** 32, max: Number.MAX_SAFE_INTEGER }));
    fc.assert(
      fc.property(
        fc.array(fc.nat({ max: 0xffffffff }), { maxLength: 3000 }),
        fc.array(offset, { maxLength: 3000 }),
        (small, any) => {
          const values = [...small, ...any];
          const column = new OffsetColumn();
          for (const v of values) column.push(v);
          expect(column.length).toBe(values.length);
          expect(Array.from({ length: column.length }, (_, k) => column.at(k))).toEqual(values);
        },
      ),
      { numRuns: scaled(50) },
    );
  });

  it('refuses what is no offset rather than storing something else', () => {
    const column = new OffsetColumn();
    for (const bad of [-1, 1.5, Number.NaN, 2 ** 53]) expect(() => column.push(bad)).toThrow(RangeError);
    expect(column.length).toBe(0);
  });
});
