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

  it('produces only the elements read: a primitive on each read, an object once', () => {
    const asked: number[] = [];
    const list = lazyList(1000, (k) => {
      asked.push(k);
      return k * 2;
    });
    expect(list[999]).toBe(1998);
    expect(list[3]).toBe(6);
    expect(list[3]).toBe(6);
    expect(asked).toEqual([999, 3, 3]);
    asked.length = 0;
    const objects = lazyList(1000, (k) => {
      asked.push(k);
      return { k };
    });
    expect(objects[999]).toEqual({ k: 999 });
    expect(objects[3]).toBe(objects[3]);
    expect([...objects.slice(2, 5)].map((o) => o.k)).toEqual([2, 3, 4]);
    expect(asked).toEqual([999, 3, 2, 4]);
  });

  it('gives the same object for an index on every read, as an array does, whatever was read or written before', () => {
    type Element = { v: number; mark?: number };
    type List = Element[];
    /** One step of a caller, reading or writing; what it returns is compared between the list and the array. */
    type Step = (list: List, kept: Element[]) => unknown;
    const index = fc.nat(24);
    const step: fc.Arbitrary<Step> = fc.oneof(
      index.map<Step>((a) => (l) => l[a] === l[a]),
      index.map<Step>((a) => (l) => l.indexOf(l[a] as Element)),
      index.map<Step>((a) => (l) => l.lastIndexOf(l[a] as Element)),
      index.map<Step>((a) => (l) => l.includes(l[a] as Element)),
      index.map<Step>((a) => (l) => l.findIndex((e) => e === l[a])),
      index.map<Step>((a) => (l) => l.indexOf({ ...(l[a] as Element) })),
      index.map<Step>((a) => (l) => l.includes({ ...(l[a] as Element) })),
      fc.tuple(index, fc.nat(9)).map<Step>(([a, n]) => (l) => {
        const e = l[a];
        if (e !== undefined) e.mark = n;
        return e;
      }),
      index.map<Step>((a) => (l) => l[a]?.mark),
      index.map<Step>((a) => (l) => [
        [...l][a] === l[a],
        Array.from(l)[a] === l[a],
        l.slice()[a] === l[a],
        l.map((e) => e)[a] === l[a],
        l.at(a) === l[a],
        Object.values(l)[a] === l[a],
      ]),
      index.map<Step>((a) => (l) => {
        let seen: Element | undefined;
        l.forEach((e, k) => {
          if (k === a) seen = e;
        });
        return seen === l[a] && l.find((e) => e === l[a]) === l[a] && l.filter((e) => e === l[a]).length;
      }),
      index.map<Step>((a) => (l) => Object.getOwnPropertyDescriptor(l, a)?.value === l[a]),
      index.map<Step>((a) => (l, kept) => {
        const e = l[a];
        if (e !== undefined) kept.push(e);
        return e === undefined;
      }),
      fc.constant<Step>((l, kept) => kept.map((e) => l.indexOf(e))),
      fc.constant<Step>((l, kept) => kept.map((e) => l.includes(e))),
      fc.constant<Step>((l) => l.reverse().length),
      fc.constant<Step>((l) => l.sort((x, y) => x.v - y.v).length),
      fc.constant<Step>((l) => l.push({ v: -1 })),
      fc.constant<Step>((l) => l.shift()),
      fc.tuple(fc.nat(10), fc.nat(3)).map<Step>(
        ([at, n]) =>
          (l) =>
            l.splice(at, n, { v: -2 }),
      ),
      fc.constant<Step>((l) => Object.isFrozen(Object.freeze(l))),
    );
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 100 }), { maxLength: 20 }),
        fc.array(step, { minLength: 1, maxLength: 12 }),
        (values, steps) => {
          const plain: List = values.map((v) => ({ v }));
          const list = lazyList(values.length, (k) => ({ v: values[k] as number })) as List;
          const keptPlain: Element[] = [];
          const keptLazy: Element[] = [];
          for (const s of steps) {
            // A write on a frozen list throws on both alike.
            const run = (l: List, kept: Element[]): unknown => {
              try {
                return s(l, kept);
              } catch (error) {
                return error instanceof TypeError ? 'TypeError' : error;
              }
            };
            expect(run(list, keptLazy)).toEqual(run(plain, keptPlain));
          }
          expect(readings(list as unknown as number[])).toEqual(readings(plain as unknown as number[]));
          expect(list.map((e, k) => e === list[k])).toEqual(plain.map(() => true));
        },
      ),
    );
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
    expect(readings(list as unknown as number[])).toEqual(
      readings([{ k: 0 }, { k: 1 }, { k: 2 }, { k: 3 }] as unknown as number[]),
    );
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
      fc.tuple(fc.nat(10), fc.nat(3)).map<Write>(
        ([at, n]) =>
          (l) =>
            l.splice(at, n, 5, 6),
      ),
      fc
        .nat(30)
        .map<Write>(
          (k) => (l) =>
            Object.defineProperty(l, k, { value: 42, writable: true, enumerable: true, configurable: true }),
        ),
    );
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 100 }), { maxLength: 20 }),
        fc.array(write, { minLength: 1, maxLength: 4 }),
        (values, writes) => {
          const plain = values.slice();
          const list = lazyList(values.length, (k) => values[k] as number) as number[];
          for (const w of writes) expect(w(list)).toEqual(w(plain));
          expect(readings(list)).toEqual(readings(plain));
          expect(list.length).toBe(plain.length);
        },
      ),
    );
  });
});

describe('elementReader', () => {
  it("reads equal elements, the list's own once it has kept some, and keeps nothing itself", () => {
    let calls = 0;
    const list = lazyList(5, (k) => {
      calls++;
      return { k };
    });
    const before = elementReader(list);
    expect(before(1)).toEqual({ k: 1 });
    expect(before(1)).not.toBe(before(1));
    const second = list[2];
    expect(list[2]).toBe(second);
    const after = elementReader(list);
    expect(after(2)).toBe(second);
    expect(after(3)).toEqual({ k: 3 });
    expect(after(3)).not.toBe(after(3));
    expect(list[3]).toEqual({ k: 3 });
    expect(after(3)).toBe(list[3]);
    // 1 produced three times by a reader, 2 once by the list, 3 three times by a reader and once by the list.
    expect(calls).toBe(8);
  });

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
