/** What a lazy list answers with its producer (read once by `elementReader`, never per element). */
const PRODUCER = Symbol('swc.lazyList.producer');

/**
 * A read-only list whose element `k` is `produce(k)`, computed when it is read. Counters walk groups newest first
 * and stop at their limit, so a lazy list spares rendering (and parsing) the older messages they never reach.
 * It has no holes: `length`, indexing, iteration, `map`, `every`, spreading and `Array.isArray` behave as on an array.
 * @param length the number of elements
 * @param produce makes element `k` (called again on every read: cache inside it if that is costly)
 */
export function lazyList<T>(length: number, produce: (k: number) => T): readonly T[] {
  const slots = emptyArray(length) as T[];
  const isIndex = (key: string | symbol): boolean => {
    if (typeof key !== 'string') return false;
    const k = arrayIndex(key);
    return k !== -1 && k < length;
  };
  return new Proxy(slots, {
    get(target, key, receiver) {
      if (typeof key === 'string') {
        const k = arrayIndex(key);
        if (k !== -1 && k < length) return produce(k);
      } else if (key === PRODUCER) return produce;
      return Reflect.get(target, key, receiver);
    },
    // Array methods (map, every, forEach, slice…) skip indices a list does not have: every index below its length is here.
    has(target, key) {
      return isIndex(key) || Reflect.has(target, key);
    },
    getOwnPropertyDescriptor(target, key) {
      if (!isIndex(key)) return Reflect.getOwnPropertyDescriptor(target, key);
      return { value: produce(arrayIndex(key as string)), writable: false, enumerable: true, configurable: true };
    },
    ownKeys(target) {
      const keys: (string | symbol)[] = [];
      for (let k = 0; k < length; k++) keys.push(String(k));
      return keys.concat(Reflect.ownKeys(target));
    },
    // Read-only: the array behind it is shared by every lazy list of its length.
    set: () => false,
    defineProperty: () => false,
    deleteProperty: () => false,
  });
}

/** Arrays of no elements with the lengths of recent lazy lists, shared by lists of the same length. */
const EMPTY = new Map<number, readonly unknown[]>();

/**
 * An array of that length with no elements, for a lazy list to stand behind: its indices are the proxy's. Lists of a
 * long file's messages are made for each strategy and each group counted, and a new array for each (of holes or
 * filled) cost as much as the elements a count reads.
 */
function emptyArray(length: number): readonly unknown[] {
  let array = EMPTY.get(length);
  if (array === undefined) {
    if (EMPTY.size >= 16) EMPTY.clear();
    const made: unknown[] = [];
    made.length = length;
    array = made;
    EMPTY.set(length, array);
  }
  return array;
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
