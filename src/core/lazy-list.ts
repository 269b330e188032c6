/** What a lazy list answers with its producer (read once by `elementReader`, never per element). */
const PRODUCER = Symbol('swc.lazyList.producer');

/**
 * A read-only list whose element `k` is `produce(k)`, computed when it is read. Counters walk groups newest first
 * and stop at their limit, so a lazy list spares rendering (and parsing) the older messages they never reach.
 * It has no holes: `length`, indexing, iteration, `map`, `every`, spreading and `Array.isArray` behave as on an array.
 * Freezing or sealing it, or writing to it (an index, its length, `reverse` or `sort` in place: a counter of a
 * library user may), makes every element its own, produced once, as an array's are, and then the write is made.
 * Like any proxy it cannot be structured-cloned (copy it with `Array.from` first).
 * @param length the number of elements
 * @param produce makes element `k` (called again on every read: cache inside it if that is costly)
 */
export function lazyList<T>(length: number, produce: (k: number) => T): readonly T[] {
  // An array of that length that stores nothing: made sparse before it is cut to its length, so no room is made for
  // the elements (a list of a long file's messages is made for each strategy and each group counted, and room for
  // 100,000 elements cost as much as the few elements a count reads). Its indices are the proxy's.
  const slots: T[] = [];
  slots.length = 2 ** 32 - 1;
  slots.length = length;
  /** Set once the list is frozen, sealed or written to: its elements are then the array's own. */
  let fixed = false;
  const materialize = (target: T[]): void => {
    if (fixed) return;
    for (let k = 0; k < length; k++) target[k] = produce(k);
    fixed = true;
  };
  const indexOf = (key: string | symbol): number => {
    if (fixed || typeof key !== 'string') return -1;
    const k = arrayIndex(key);
    return k < length ? k : -1;
  };
  return new Proxy(slots, {
    get(target, key, receiver) {
      const k = indexOf(key);
      if (k !== -1) return produce(k);
      if (key === PRODUCER) return fixed ? undefined : produce;
      return Reflect.get(target, key, receiver);
    },
    // Array methods (map, every, forEach, slice…) skip indices a list does not have: every index below its length is here.
    has(target, key) {
      return indexOf(key) !== -1 || Reflect.has(target, key);
    },
    getOwnPropertyDescriptor(target, key) {
      const k = indexOf(key);
      if (k === -1) return Reflect.getOwnPropertyDescriptor(target, key);
      return { value: produce(k), writable: true, enumerable: true, configurable: true };
    },
    ownKeys(target) {
      if (fixed) return Reflect.ownKeys(target);
      const keys: (string | symbol)[] = [];
      for (let k = 0; k < length; k++) keys.push(String(k));
      return keys.concat(Reflect.ownKeys(target));
    },
    preventExtensions(target) {
      materialize(target);
      return Reflect.preventExtensions(target);
    },
    // A write to an index or the length goes to an array of its own elements: one written to while standing behind
    // none would hold an index the proxy answers differently, which a proxy may not do (reads would throw).
    set(target, key, value) {
      if (typeof key === 'string') materialize(target);
      return Reflect.set(target, key, value);
    },
    defineProperty(target, key, descriptor) {
      if (typeof key === 'string') materialize(target);
      return Reflect.defineProperty(target, key, descriptor);
    },
    deleteProperty(target, key) {
      if (typeof key === 'string') materialize(target);
      return Reflect.deleteProperty(target, key);
    },
  });
}

/**
 * A function that reads element `k` of a list: a lazy list's producer itself, so that a loop over many elements
 * does not pass each index through the proxy (as a string key, parsed back), or plain indexing for any other list.
 * Call it only with indices below the list's length.
 */
export function elementReader<T>(list: readonly T[]): (k: number) => T {
  const produce = (list as { [PRODUCER]?: (k: number) => T })[PRODUCER];
  return produce ?? ((k) => list[k] as T);
}

/** The array index a property key names, or -1 (only canonical whole numbers like "0" and "17" do). */
function arrayIndex(key: string): number {
  const c = key.charCodeAt(0);
  if (c < 0x30 || c > 0x39) return -1;
  const k = Number(key);
  return Number.isInteger(k) && String(k) === key ? k : -1;
}
