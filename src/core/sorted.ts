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
