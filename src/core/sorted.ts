/**
 * The first position in [lo, hi) at which `isPast` holds, for a test that fails up to some position and holds from
 * there on (`hi` when it never holds): a binary search.
 */
export function partitionPoint(lo: number, hi: number, isPast: (position: number) => boolean): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (isPast(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** The position of the first element of an ascending list that is at least `value`. */
export function lowerBound(sorted: readonly number[], value: number): number {
  return partitionPoint(0, sorted.length, (k) => (sorted[k] as number) >= value);
}

/**
 * A set of whole numbers below `bound`, given in ascending order: a byte per number for `has`, the list itself for
 * iteration. A long conversation's candidate positions take a byte a message instead of a `Set`'s ~12 bytes each.
 */
export class AscendingSet implements ReadonlySet<number> {
  private readonly marks: Uint8Array;

  /** @param sorted distinct whole numbers from 0 below `bound`, ascending */
  constructor(
    private readonly sorted: readonly number[],
    bound: number,
  ) {
    this.marks = new Uint8Array(bound);
    for (const i of sorted) this.marks[i] = 1;
  }

  get size(): number {
    return this.sorted.length;
  }

  has(value: number): boolean {
    return this.marks[value] === 1;
  }

  forEach(visit: (value: number, again: number, set: ReadonlySet<number>) => void, thisArg?: unknown): void {
    for (const i of this.sorted) visit.call(thisArg, i, i, this);
  }

  values(): SetIterator<number> {
    return this.sorted.values();
  }

  keys(): SetIterator<number> {
    return this.sorted.values();
  }

  *entries(): SetIterator<[number, number]> {
    for (const i of this.sorted) yield [i, i];
  }

  [Symbol.iterator](): SetIterator<number> {
    return this.sorted.values();
  }
}
