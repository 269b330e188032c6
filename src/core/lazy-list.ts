/** What a lazy list answers with its reader (read once by `elementReader`, never per element). */
const PRODUCER = Symbol('swc.lazyList.producer');

/**
 * A read-only list whose element `k` is `produce(k)`, computed when it is first read. Counters walk groups newest
 * first and stop at their limit, so a lazy list spares rendering (and parsing) the older messages they never reach.
 * It has no holes: `length`, indexing, iteration, `map`, `every`, spreading and `Array.isArray` behave as on an array.
 * An element that is an object is the same object on every read through the list, as an array's is (so `===`,
 * `indexOf`, `includes` and a property set on it hold): it is kept, once produced, in a store of the elements read,
 * never of all of them. A primitive (a line of a file, say) is equal to itself anyway, so it is not kept: a list of
 * a file's lines read from end to end holds none of them. Freezing or sealing it, or writing to it (an index, its length,
 * `reverse` or `sort` in place: a counter of a library user may), makes every element its own (those read, and the
 * rest produced once), as an array's are, and then the write is made.
 * Like any proxy it cannot be structured-cloned (copy it with `Array.from` first).
 * @param length the number of elements
 * @param produce makes element `k`, equal on every call (called once per element read through the list, when that
 *   is an object)
 */
export function lazyList<T>(length: number, produce: (k: number) => T): readonly T[] {
  // The proxy's target: an array of that length that stores nothing. Its indices are the proxy's.
  const slots = sparseArray<T>(length);
  /** The elements read that are objects, by index; sparse, so it grows with what is read, not with the length. */
  let kept: (T | undefined)[] | null = null;
  /** Element `k`, kept once produced when it is an object. */
  const read = (k: number): T => {
    const known = kept?.[k];
    if (known !== undefined) return known;
    const value = produce(k);
    if ((typeof value === 'object' && value !== null) || typeof value === 'function')
      (kept ??= sparseArray(length))[k] = value;
    return value;
  };
  /** Element `k` as a loop through `elementReader` reads it once elements are kept: the kept one, or produced, not kept. */
  const peek = (k: number): T => kept?.[k] ?? produce(k);
  /** Set once the list is frozen, sealed or written to: its elements are then the array's own. */
  let fixed = false;
  const materialize = (target: T[]): void => {
    if (fixed) return;
    for (let k = 0; k < length; k++) target[k] = kept?.[k] ?? produce(k);
    kept = null;
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
      if (k !== -1) return read(k);
      // Nothing kept yet (a list only our loops read): the producer itself, with no check per element.
      if (key === PRODUCER) return fixed ? undefined : kept === null ? produce : peek;
      return Reflect.get(target, key, receiver);
    },
    // Array methods (map, every, forEach, slice…) skip indices a list does not have: every index below its length is here.
    has(target, key) {
      return indexOf(key) !== -1 || Reflect.has(target, key);
    },
    getOwnPropertyDescriptor(target, key) {
      const k = indexOf(key);
      if (k === -1) return Reflect.getOwnPropertyDescriptor(target, key);
      return { value: read(k), writable: true, enumerable: true, configurable: true };
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
 * A function that reads element `k` of a list: for a lazy list its producer, so that a loop over many elements
 * neither passes each index through the proxy (as a string key, parsed back) nor keeps what it read; plain indexing
 * for any other list. Its elements equal the list's but need not be the same objects (one not read through the list
 * is produced afresh on each call; one read before the reader was made is the list's), so use it where only an
 * element's value matters (counting, writing bytes). Call it only with indices below the list's length.
 */
export function elementReader<T>(list: readonly T[]): (k: number) => T {
  const produce = (list as { [PRODUCER]?: (k: number) => T })[PRODUCER];
  return produce ?? ((k) => list[k] as T);
}

/**
 * An array of `length` holes that makes no room for its elements: made sparse before it is cut to its length, so it
 * costs what it holds (a list of a long file's messages is made for each strategy and each group counted, and room
 * for 100,000 elements cost as much as the few elements a count reads). A plain `length = n` makes room for n.
 */
function sparseArray<T>(length: number): T[] {
  const array: T[] = [];
  array.length = 2 ** 32 - 1;
  array.length = length;
  return array;
}

/** The array index a property key names, or -1 (only canonical whole numbers like "0" and "17" do). */
function arrayIndex(key: string): number {
  const c = key.charCodeAt(0);
  if (c < 0x30 || c > 0x39) return -1;
  const k = Number(key);
  return Number.isInteger(k) && String(k) === key ? k : -1;
}

/** The indices 0 to `length` - 1 as a list that holds none of them (a long conversation's would take 8 bytes each). */
export function indexList(length: number): readonly number[] {
  return lazyList(length, (i) => i);
}

/**
 * A read-only list over something that grows or changes behind it: its length and each element read through on every
 * access, nothing kept (an element that is an object may be a new one on each read). It is what a stream of items is
 * normalized through, a block at a time, without the list holding the items read before.
 * @param length the number of elements now
 * @param read element `k` now, for `k` below the length
 */
export function liveList<T>(length: () => number, read: (k: number) => T): readonly T[] {
  return new Proxy([] as T[], {
    get(target, key, receiver) {
      if (key === 'length') return length();
      if (typeof key === 'string') {
        const k = arrayIndex(key);
        if (k !== -1) return k < length() ? read(k) : undefined;
      }
      if (key === PRODUCER) return read;
      return Reflect.get(target, key, receiver);
    },
    has(target, key) {
      if (typeof key === 'string') {
        const k = arrayIndex(key);
        if (k !== -1) return k < length();
      }
      return Reflect.has(target, key);
    },
    set: () => false,
    defineProperty: () => false,
    deleteProperty: () => false,
  });
}

/**
 * `base` with `over`'s properties in place of its own, each getter of either left a getter. A spread (`{ ...base }`)
 * would call them, working out every lazy field (a plan's groups, its removed indices) that no reader may want.
 * The getters must not read `this`: they are moved to a new object.
 */
export function overlay<T extends object>(base: T, over: Partial<T>): T {
  return Object.defineProperties(
    {},
    { ...Object.getOwnPropertyDescriptors(base), ...Object.getOwnPropertyDescriptors(over) },
  ) as T;
}
