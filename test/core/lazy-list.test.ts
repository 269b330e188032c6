/**
 * Lazy lists: what counters and writers are handed instead of arrays of rendered messages and raw lines. They must
 * read as the arrays they stand for, whatever a caller (ours, or a counter a library user wrote) does with them,
 * freezing them included.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { elementReader, lazyList } from '../../src/core/lazy-list.js';
import { itemsReader, oneItemEach } from '../../src/formats/types.js';

/** Everything a caller may read of a list, as plain data. */
function readings(list: readonly number[]): unknown {
  const forEach: number[] = [];
  list.forEach((x, k) => forEach.push(x * 10 + k));
  return {
    length: list.length,
    isArray: Array.isArray(list),
    indexed: Array.from({ length: list.length + 2 }, (_, k) => list[k]),
    iterated: [...list],
    from: Array.from(list),
    map: list.map((x, k) => x + k),
    filter: list.filter((x) => x % 2 === 0),
    every: list.every((x) => x >= 0),
    some: list.some((x) => x > 50),
    reduce: list.reduce((a, x) => a + x, 0),
    forEach,
    slice: list.slice(1, -1),
    indexOf: list.indexOf(7),
    includes: list.includes(7),
    find: list.find((x) => x > 30),
    at: list.at(-1),
    join: list.join(','),
    json: JSON.stringify(list),
    keys: Object.keys(list),
    entries: Object.entries(list),
    spread: { ...list },
    has: [0, list.length - 1, list.length].map((k) => k in list),
    concat: list.concat([1]),
  };
}

describe('a lazy list', () => {
  it('reads as the array of what it produces, for every way of reading an array', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 100 }), { maxLength: 40 }), (values) => {
        const list = lazyList(values.length, (k) => values[k] as number);
        expect(readings(list)).toEqual(readings(values));
      }),
    );
  });

  it('produces an element each time it is read, and only the ones read', () => {
    const asked: number[] = [];
    const list = lazyList(1000, (k) => {
      asked.push(k);
      return k * 2;
    });
    expect(list[999]).toBe(1998);
    expect(list[3]).toBe(6);
    expect(list[3]).toBe(6);
    expect(asked).toEqual([999, 3, 3]);
  });

  it('is frozen as an array of its elements, each produced once, and reads as that array then', () => {
    let calls = 0;
    const list = lazyList(4, (k) => {
      calls++;
      return { k };
    });
    Object.freeze(list);
    expect(calls).toBe(4);
    expect(Object.isFrozen(list)).toBe(true);
    expect(readings(list as unknown as number[])).toEqual(readings([{ k: 0 }, { k: 1 }, { k: 2 }, { k: 3 }] as unknown as number[]));
    expect(list[2]).toBe(list[2]);
    expect(calls).toBe(4);
    expect(elementReader(list)(1)).toEqual({ k: 1 });
    expect(() => {
      (list as { k: number }[])[0] = { k: 9 };
    }).toThrow(TypeError);
    // Another list of the same length is its own.
    expect([...lazyList(4, (k) => k)]).toEqual([0, 1, 2, 3]);
  });

  it('takes writes as an array does (a library counter may reverse or sort what it is given), then reads as that array', () => {
    type Write = (list: number[]) => unknown;
    const write: fc.Arbitrary<Write> = fc.oneof(
      fc.constant<Write>((l) => l.reverse()),
      fc.constant<Write>((l) => l.sort((a, b) => a - b)),
      fc.constant<Write>((l) => l.push(7)),
      fc.constant<Write>((l) => l.pop()),
      fc.constant<Write>((l) => l.shift()),
      fc.constant<Write>((l) => l.fill(3, 1)),
      fc.nat(30).map<Write>((k) => (l) => (l[k] = 99)),
      fc.nat(30).map<Write>((k) => (l) => delete l[k]),
      fc.nat(30).map<Write>((n) => (l) => (l.length = n)),
      fc.tuple(fc.nat(10), fc.nat(3)).map<Write>(([at, n]) => (l) => l.splice(at, n, 5, 6)),
      fc.nat(30).map<Write>((k) => (l) => Object.defineProperty(l, k, { value: 42, writable: true, enumerable: true, configurable: true })),
    );
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 100 }), { maxLength: 20 }), fc.array(write, { minLength: 1, maxLength: 4 }), (values, writes) => {
        const plain = values.slice();
        const list = lazyList(values.length, (k) => values[k] as number) as number[];
        for (const w of writes) expect(w(list)).toEqual(w(plain));
        expect(readings(list)).toEqual(readings(plain));
        expect(list.length).toBe(plain.length);
      }),
    );
  });
});

describe('elementReader', () => {
  it('reads a lazy list through its producer and any other list by index, with the same elements', () => {
    fc.assert(
      fc.property(fc.array(fc.string(), { maxLength: 20 }), (values) => {
        let calls = 0;
        const list = lazyList(values.length, (k) => {
          calls++;
          return values[k] as string;
        });
        const lazy = elementReader(list);
        const plain = elementReader(values);
        for (let k = 0; k < values.length; k++) {
          expect(lazy(k)).toBe(values[k]);
          expect(plain(k)).toBe(values[k]);
        }
        expect(calls).toBe(values.length);
      }),
    );
  });
});

describe('itemsReader', () => {
  it('gives what indexing itemsOf gives, lazy or not, and no items past its end', () => {
    fc.assert(
      fc.property(fc.array(fc.array(fc.nat(50), { maxLength: 3 }), { maxLength: 20 }), fc.nat(25), (lists, extra) => {
        const plain = itemsReader(lists);
        const lazy = itemsReader(oneItemEach(lists.length));
        for (let m = -1; m < lists.length + extra; m++) {
          expect(plain(m)).toEqual(lists[m] ?? []);
          expect(lazy(m)).toEqual(m >= 0 && m < lists.length ? [m] : []);
        }
      }),
    );
  });
});
