import { elementReader, lazyList } from '../core/lazy-list.js';
import type { Rendered, TokenCounter } from '../core/types.js';
import { InputError } from '../errors.js';
import { binaryAsText } from '../settings/library.js';

/**
 * A message as the adapters read it: the value a file of the messages would give when parsed (`item`) and its JSON
 * text (`raw`). A message that is plain JSON data is its own item, so nothing is written or parsed for it until its
 * text is asked for (when it is rendered for counting, or written pruned), and then once.
 */
export interface AsJson {
  readonly item: unknown;
  /** The message's JSON text, written when first asked for. */
  raw(): string;
}

/** A message's JSON text, or the InputError that names the message. */
function jsonText(message: unknown, k: number): string {
  let raw: string | undefined;
  try {
    raw = JSON.stringify(message, binaryAsText);
  } catch (error) {
    const cyclic = error instanceof TypeError && /circular/i.test(error.message);
    throw new InputError(
      cyclic
        ? 'a message that refers to itself (a cycle) cannot be compacted'
        : `cannot be written as JSON (${(error as Error).message})`,
      `messages[${k}]`,
    );
  }
  if (raw === undefined) throw new InputError(`expected a message, found ${typeof message}`, `messages[${k}]`);
  return raw;
}

/** A message read through its JSON: written and parsed now (a message that is not plain JSON data). */
class Written implements AsJson {
  readonly item: unknown;
  constructor(private readonly text: string) {
    this.item = JSON.parse(text) as unknown;
  }
  raw(): string {
    return this.text;
  }
}

/** A plain message: its own item, its text written when first asked for. */
class Plain implements AsJson {
  private text: string | undefined;
  constructor(readonly item: object) {}
  raw(): string {
    return (this.text ??= JSON.stringify(this.item));
  }
}

/** A message's JSON and that JSON parsed, or the InputError that names the message. */
export function toJson(message: unknown, k: number): AsJson {
  return new Written(jsonText(message, k));
}

/**
 * Each message object as JSON, read once and read again only when the object changed since. A caller may edit a
 * message in place between calls (a string replaced, a part pushed, a key added or removed): the cache keeps, beside
 * each message, its shape (every object, array and value it holds, by identity, with its keys in order and its
 * lengths) and uses what it read only while the object still has that shape. What the shape cannot vouch for is read
 * again on every call: an object with `toJSON`, or of a class (a `Date`, a `Map`), or too deep to walk. A message
 * that is plain JSON data (plain objects and arrays of strings, finite numbers, booleans and null) is its own item;
 * any other (binary data, `undefined` or a function inside, NaN, -0) is written as JSON and parsed back, as a file
 * of it would be read.
 */
export class JsonCache {
  private readonly known = new WeakMap<object, JsonEntry>();

  /**
   * @param trusted take an object read before as unchanged, its shape not checked again (`assumeUnchanged`)
   * @param once each message is read once and never again (`compactMessages`): nothing is remembered, so no shape
   * is recorded; a message is only walked to see whether it is plain JSON data
   */
  constructor(
    private readonly trusted = false,
    private readonly once = false,
  ) {}

  /** The message as JSON, from the cache while the object has the shape it had when it was read. */
  of(message: unknown, k: number): AsJson {
    return this.entryOf(message, k).json;
  }

  /** As `of`, with the shape the JSON was read at (see `stillHolds`). */
  entryOf(message: unknown, k: number): JsonEntry {
    if (typeof message !== 'object' || message === null) return { json: toJson(message, k), shape: null };
    if (this.once) return { json: isPlainData(message) ? new Plain(message) : toJson(message, k), shape: null };
    const entry = this.known.get(message);
    if (entry !== undefined && (this.trusted || stillHolds(message, entry))) return entry;
    const walk = shapeOf(message);
    const json = walk?.plain === true ? new Plain(message) : toJson(message, k);
    const made = { json, shape: walk === null ? null : walk.shape };
    this.known.set(message, made);
    return made;
  }
}

/** A message's JSON and the shape it was read at (null: read again on every call). */
export interface JsonEntry {
  readonly json: AsJson;
  readonly shape: readonly unknown[] | null;
}

/** Whether the JSON read for `message` still holds: the object has kept the shape it had then. */
export function stillHolds(message: unknown, entry: JsonEntry): boolean {
  return entry.shape !== null && hasShape(message, entry.shape);
}

/** A value's shape, and whether it is plain JSON data; null when its shape cannot vouch for its JSON. */
export function shapeOf(value: unknown): { shape: unknown[]; plain: boolean } | null {
  const walk = { shape: [] as unknown[], plain: true };
  try {
    return record(value, walk) ? walk : null;
  } catch (error) {
    if (error instanceof RangeError) return null;
    throw error;
  }
}

/**
 * Whether a value is plain JSON data, as `shapeOf` would find it (`plain`), without recording its shape. Too deep to
 * walk is not plain: it is then written as JSON, which says why it cannot be.
 */
export function isPlainData(value: unknown): boolean {
  try {
    return plainAt(value);
  } catch (error) {
    if (error instanceof RangeError) return false;
    throw error;
  }
}

/** The walk of `isPlainData`: `record`'s tests, in its order, stopping at the first value that is not plain. */
function plainAt(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return isPlainPrimitive(value);
  if (value instanceof ArrayBuffer || ArrayBuffer.isView(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  if (Array.isArray(value)) {
    if (proto !== Array.prototype) return false;
    for (let i = 0; i < value.length; i++) if (!plainAt(value[i])) return false;
    return true;
  }
  if (proto !== Object.prototype || typeof (value as { toJSON?: unknown }).toJSON === 'function') return false;
  for (const key in value) if (!plainAt((value as Record<string, unknown>)[key])) return false;
  return true;
}

/** Whether JSON writes a primitive as a parse of it reads back (not `undefined`, a function, a symbol, NaN or -0). */
function isPlainPrimitive(value: unknown): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value) && !Object.is(value, -0);
    default:
      return value === null;
  }
}

/**
 * Appends a value's shape to `walk.shape` (preorder), clearing `walk.plain` at what JSON would not give back as it is;
 * false for a value whose JSON its shape does not determine.
 */
function record(value: unknown, walk: { shape: unknown[]; plain: boolean }): boolean {
  const out = walk.shape;
  out.push(value);
  if (typeof value !== 'object' || value === null) {
    if (!isPlainPrimitive(value)) walk.plain = false;
    return true;
  }
  // Binary data is written as its length alone (see binaryAsText).
  if (value instanceof ArrayBuffer || ArrayBuffer.isView(value)) {
    out.push(value.byteLength);
    walk.plain = false;
    return true;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if (Array.isArray(value)) {
    if (proto !== Array.prototype) return false;
    out.push(value.length);
    for (let i = 0; i < value.length; i++) if (!record(value[i], walk)) return false;
    return true;
  }
  if ((proto !== Object.prototype && proto !== null) || typeof (value as { toJSON?: unknown }).toJSON === 'function')
    return false;
  // A null-prototype object reads back as a plain one; JSON writes both alike.
  if (proto === null) walk.plain = false;
  const keys = Object.keys(value);
  out.push(keys.length);
  for (const key of keys) {
    out.push(key);
    if (!record((value as Record<string, unknown>)[key], walk)) return false;
  }
  return true;
}

/** Whether a value still has the shape recorded for it (read in the order `record` wrote it). */
function hasShape(value: unknown, shape: readonly unknown[]): boolean {
  try {
    return matchAt(value, shape, 0) === shape.length;
  } catch (error) {
    if (error instanceof RangeError) return false;
    throw error;
  }
}

/** Matches a value against the shape from position `at`: the position after it, or -1 at the first difference. */
function matchAt(value: unknown, shape: readonly unknown[], at: number): number {
  if (at >= shape.length || shape[at] !== value) return -1;
  let p = at + 1;
  if (typeof value !== 'object' || value === null) return p;
  if (Array.isArray(value)) {
    if (shape[p] !== value.length) return -1;
    p++;
    for (let i = 0; i < value.length && p >= 0; i++) p = matchAt(value[i], shape, p);
    return p;
  }
  // Binary data is asked about only past a plain object's prototype: the check costs a fifth of a warm step's walk.
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null && (value instanceof ArrayBuffer || ArrayBuffer.isView(value)))
    return shape[p] === value.byteLength ? p + 1 : -1;
  // Keys read with for-in (no array made per object): a plain object's prototype holds no enumerable key.
  const count = shape[p] as number;
  p++;
  let seen = 0;
  for (const key in value) {
    if (++seen > count || shape[p] !== key) return -1;
    p = matchAt((value as Record<string, unknown>)[key], shape, p + 1);
    if (p < 0) return -1;
  }
  return seen === count ? p : -1;
}

/**
 * Remembers, from one call to the next, one rendered object per rendered text: counters keep counts per rendered
 * object, so a message already counted in the previous call is not counted again. Two generations are kept, so
 * what it holds is at most the texts of the last two conversations.
 */
export class RenderedMemory {
  private current = new Map<string, Rendered>();
  private previous = new Map<string, Rendered>();

  /** A counter that hands `inner` the remembered object for each text it has seen. */
  counter(inner: TokenCounter): TokenCounter {
    const canonical = (r: Rendered): Rendered => {
      const known = this.current.get(r.text) ?? this.previous.get(r.text);
      if (known !== undefined && known.images === r.images && known.files === r.files) {
        this.current.set(r.text, known);
        return known;
      }
      this.current.set(r.text, r);
      return r;
    };
    const view = (messages: readonly Rendered[]): readonly Rendered[] => {
      const at = elementReader(messages);
      return lazyList(messages.length, (k) => canonical(at(k)));
    };
    const apart = inner.measureApart;
    return {
      name: inner.name,
      measure: (messages, limit) => inner.measure(view(messages), limit),
      // Passed on, so chains decide lazily here as on the command line.
      ...(apart === undefined
        ? {}
        : {
            measureApart: (messages: readonly Rendered[], set: ReadonlySet<number>, limit?: number) =>
              apart.call(inner, view(messages), set, limit),
          }),
    };
  }

  /** Starts the next call: what the last one did not see is forgotten. */
  nextCall(): void {
    this.previous = this.current;
    this.current = new Map();
  }
}
