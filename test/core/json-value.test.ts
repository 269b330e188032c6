/**
 * `jsonValueOf` reads a value the way `parseJson` reads the JSON text `JSON.stringify` writes for it, so that the
 * library's messages are rendered without that text being written and parsed again. Checked against the text's own
 * reading on random JSON data, on keys that objects order or treat apart, on what JSON would not write as it is, and
 * through `itemValue` on the items of random conversations in every format.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { JsonDepthError, JsonNumber, jsonValueOf, MAX_JSON_DEPTH, parseJson } from '../../src/core/json/value.js';
import { itemValue } from '../../src/formats/types.js';
import { ALL_FORMATS, randomShapes, shapeOf, writeCase } from '../differential/harness.js';
import { scaled } from '../helpers/scale.js';

/**
 * A reading laid out so that equality sees all of it: number lexemes, whether an object has a prototype, its keys in
 * order (Jest's own equality takes an own `constructor` key for the object's class).
 */
function laidOut(value: unknown): unknown {
  if (value instanceof JsonNumber) return { number: value.raw };
  if (Array.isArray(value)) return { array: value.map(laidOut) };
  if (typeof value !== 'object' || value === null) return { value };
  return {
    prototype: Object.getPrototypeOf(value) === null ? 'none' : 'some',
    members: Object.keys(value).map((k) => [k, laidOut((value as Record<string, unknown>)[k])]),
  };
}

/** What `parseJson` reads from the value's JSON text, laid out. */
const viaText = (value: unknown): unknown => laidOut(parseJson(JSON.stringify(value)));
/** What `jsonValueOf` reads, laid out. */
const viaValue = (value: unknown): unknown => {
  const read = jsonValueOf(value);
  return read === undefined ? undefined : laidOut(read);
};

/** Keys whose order or meaning objects treat apart: integer-like ones come first, `__proto__` is a setter. */
const keyArb = fc.oneof(fc.string(), fc.constantFrom('__proto__', 'constructor', 'toJSON', '0', '1', '10', '-1', '01'));
const jsonArb = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.string(),
    fc.boolean(),
    fc.constant(null),
    fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Object.is(n, -0)),
    fc.integer(),
    fc.constantFrom(1e21, 1e-7, 2 ** 53 + 2, 5e-324, Number.MAX_VALUE),
    fc.array(tie('value')),
    fc.array(fc.tuple(keyArb, tie('value'))).map((members) => {
      // Defined, not assigned: an own `__proto__` key, as JSON.parse makes it.
      const out: Record<string, unknown> = {};
      for (const [k, v] of members) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true });
      return out;
    }),
  ),
})).value;

describe('jsonValueOf', () => {
  it('reads JSON data as parseJson reads its text: lexemes, key order, own __proto__ keys, no prototypes', () => {
    fc.assert(
      fc.property(jsonArb, (value) => {
        expect(viaValue(value)).toEqual(viaText(value));
      }),
      { numRuns: scaled(2000) },
    );
  });

  it('reads what JSON.parse gave back, strings with lone surrogates included', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.string({ unit: 'binary' }), (value, odd) => {
        const parsed = JSON.parse(JSON.stringify([value, odd])) as unknown;
        expect(viaValue(parsed)).toEqual(viaText(parsed));
      }),
      { numRuns: scaled(500) },
    );
  });

  it('leaves to the text what JSON would not write as it is', () => {
    class Point {
      x = 1;
    }
    const odd: unknown[] = [
      undefined,
      () => 1,
      Symbol('s'),
      Number.NaN,
      Infinity,
      -0,
      10n,
      new Date(0),
      new Map(),
      new Uint8Array(2),
      new Point(),
      { toJSON: () => 'x' },
      Object.assign(Object.create({ inherited: 1 }) as object, { own: 1 }),
      Object.setPrototypeOf([1], null) as unknown,
    ];
    for (const value of odd) {
      expect(jsonValueOf(value)).toBeUndefined();
      expect(jsonValueOf({ role: 'user', content: [value] })).toBeUndefined();
    }
  });

  it('reads an object without a prototype as a plain one', () => {
    const bare = Object.assign(Object.create(null) as object, { b: 1, a: [2.5] });
    expect(viaValue(bare)).toEqual(viaText(bare));
  });

  it('gives up past the reader’s depth, where the text’s reader names the error', () => {
    let deep: unknown = 1;
    for (let d = 0; d <= MAX_JSON_DEPTH; d++) deep = [deep];
    const text = `${'['.repeat(MAX_JSON_DEPTH + 1)}1${']'.repeat(MAX_JSON_DEPTH + 1)}`;
    expect(jsonValueOf(deep)).toBeUndefined();
    expect(() => itemValue({ items: [deep], raws: [text], whole: true }, 0)).toThrow(JsonDepthError);
  });
});

describe('itemValue', () => {
  it('reads a whole item as its text reads, for the items of random conversations in every format', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        fc.constantFrom(...ALL_FORMATS),
        fc.boolean(),
        (seed, format, jsonl) => {
          const c = writeCase(format, randomShapes(seed, shapeOf(format)), jsonl);
          const raws = c.items.map((item) => JSON.stringify(item));
          for (let k = 0; k < c.items.length; k++) {
            expect(laidOut(itemValue({ items: c.items, raws, whole: true }, k))).toEqual(
              laidOut(itemValue({ items: c.items, raws }, k)),
            );
          }
        },
      ),
      { numRuns: scaled(200) },
    );
  });

  it('reads a whole item that cannot be read as it is from its text', () => {
    const items = [{ role: 'user', content: 'x', at: new Date(0) }];
    const raws = items.map((item) => JSON.stringify(item));
    expect(laidOut(itemValue({ items, raws, whole: true }, 0))).toEqual(laidOut(parseJson(raws[0] as string)));
  });
});
