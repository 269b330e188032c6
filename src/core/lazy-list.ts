/**
 * A read-only list whose element `k` is `produce(k)`, computed when it is read. Counters walk groups newest first
 * and stop at their limit, so a lazy list spares rendering (and parsing) the older messages they never reach.
 * It has no holes: `length`, indexing, iteration, `map`, `every`, spreading and `Array.isArray` behave as on an array.
 * @param length the number of elements
 * @param produce makes element `k` (called again on every read: cache inside it if that is costly)
 */
export function lazyList<T>(length: number, produce: (k: number) => T): readonly T[] {
  const slots = new Array<T | undefined>(length).fill(undefined);
  return new Proxy(slots as T[], {
    get(target, key, receiver) {
      if (typeof key === 'string') {
        const k = arrayIndex(key);
        if (k !== -1 && k < length) return produce(k);
      }
      return Reflect.get(target, key, receiver);
    },
  });
}

/** The array index a property key names, or -1 (only canonical whole numbers like "0" and "17" do). */
function arrayIndex(key: string): number {
  const c = key.charCodeAt(0);
  if (c < 0x30 || c > 0x39) return -1;
  const k = Number(key);
  return Number.isInteger(k) && String(k) === key ? k : -1;
}
