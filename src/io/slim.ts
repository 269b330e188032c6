import type { TextSketch } from '../core/types.js';

/**
 * Slim items: what the structural pass keeps of each parsed item. Adapters read an item's roles, types, ids,
 * names and keys when they normalize it, and the text of a message only to see whether it is an earlier note;
 * the text itself is read again from the item's raw text when it is rendered, and only for messages a decision
 * counts. So after parsing, long strings under the keys where formats keep message text, tool arguments,
 * outputs and media are replaced by one shared stand-in. A 100 MB transcript then keeps its structure in a few
 * megabytes instead of a second copy of all its text.
 *
 * What is never replaced: anything under another key (ids, names, roles, types, session fields a note copies),
 * strings of at most `longerThan` characters or of only whitespace, and the texts `keep` names: earlier notes and
 * texts whose beginning a format reads to tell what a message is (Claude Code's command echoes). The parity tests
 * compact every fixture and transcript with every other such string replaced and require the same decisions and
 * bytes.
 */

/** Keys whose long string values (or strings listed directly under them) only rendering reads. */
const BULK_KEYS = new Set([
  'content',
  'text',
  'arguments',
  'output',
  'result',
  'thinking',
  'reasoning_content',
  'signature',
  'data',
  'url',
  'stdout',
  'stderr',
  'oldString',
  'newString',
  'originalFile',
  'lines',
  // ShareGPT's message text.
  'value',
]);

/** What a replaced string reads as: never a role, type, id or note any format looks for. */
export const SLIMMED = '\u0000swc: text read only when rendered';

/** How to slim items. */
export interface Slimming {
  /** Strings of at most this many UTF-16 units stay. */
  readonly longerThan: number;
  /** Strings to keep whatever their length (earlier notes, which adapters recognise by their text). */
  readonly keep: (text: string) => boolean;
  /**
   * The objects whose replaced strings leave a sketch (their length and ends, see `sketchOf`): what pruning and
   * offloading decide by without reading the texts again. None for the window alone, which needs none.
   */
  readonly sketch?: (record: Readonly<Record<string, unknown>>) => boolean;
}

/**
 * About how many UTF-16 units of each end of a replaced string its sketch keeps. Pruning's lower bound needs only the
 * end of a result's text, and offloading's tests its length and its first characters (pointers and placeholders are
 * told by their beginnings and ends).
 */
export const SKETCH_ENDS = 32;

/**
 * Where a container keeps the sketches of its replaced strings (invisible to keys, spreads and JSON): one, or a list.
 * Each holds its two ends in one flat string, so that nothing of the text stays referenced.
 */
const SKETCHES = Symbol('swc.sketches');

class Sketch implements TextSketch {
  constructor(
    readonly key: string | number,
    readonly length: number,
    private readonly split: number,
    private readonly ends: string,
  ) {}

  get head(): string {
    return this.ends.slice(0, this.split);
  }

  get tail(): string {
    return this.ends.slice(this.split);
  }
}

type Stored = Sketch | Sketch[];

/**
 * The sketch a replaced string left, if the slimming made one.
 * @param container the object or list the string was under
 * @param key its key, or its index in a list
 */
export function sketchOf(container: unknown, key: string | number): TextSketch | undefined {
  if (typeof container !== 'object' || container === null) return undefined;
  const stored = (container as { [SKETCHES]?: Stored })[SKETCHES];
  if (stored === undefined) return undefined;
  return Array.isArray(stored) ? stored.find((s) => s.key === key) : stored.key === key ? stored : undefined;
}

/** A replaced string's sketch: its ends copied into one new string (a slice would hold the whole text). */
function sketchText(key: string | number, text: string): Sketch {
  const length = text.length;
  if (length <= 2 * SKETCH_ENDS) return new Sketch(key, length, length, text);
  let headEnd = SKETCH_ENDS;
  if (isHighSurrogate(text.charCodeAt(headEnd - 1))) headEnd--;
  let tailStart = length - SKETCH_ENDS;
  if (isHighSurrogate(text.charCodeAt(tailStart - 1))) tailStart--;
  // Joining two strings makes a new flat one; a concatenation would keep both slices, and so the text.
  return new Sketch(key, length, headEnd, [text.slice(0, headEnd), text.slice(tailStart)].join(''));
}

function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

/** Records the sketch of the string replaced at `container[key]`. */
function keepSketch(container: object, key: string | number, text: string): void {
  const held = container as { [SKETCHES]?: Stored };
  const sketch = sketchText(key, text);
  const stored = held[SKETCHES];
  if (stored === undefined) Object.defineProperty(container, SKETCHES, { value: sketch, writable: true });
  else if (Array.isArray(stored)) stored.push(sketch);
  else held[SKETCHES] = [stored, sketch];
}

/** The default length above which bulk strings are replaced. */
export const SLIM_LONGER_THAN = 64;

/**
 * Slims a parsed item in place and returns it.
 * @param value a value JSON.parse made (plain objects and arrays, no cycles)
 */
export function slimItem(value: unknown, slimming: Slimming): unknown {
  // Iterative: a transcript may nest values far deeper than the call stack goes.
  const pending: object[] = [];
  const sketch = slimming.sketch;
  if (typeof value === 'object' && value !== null) pending.push(value);
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (Array.isArray(next)) {
      for (const element of next) if (typeof element === 'object' && element !== null) pending.push(element);
      continue;
    }
    const record = next as Record<string, unknown>;
    // Whether this object's replaced strings leave sketches: asked once, when it has one (0: not asked yet).
    let sketchHere = sketch === undefined ? -1 : 0;
    for (const key in record) {
      const child = record[key];
      if (typeof child === 'string') {
        if (child.length > slimming.longerThan && BULK_KEYS.has(key) && replaceable(child, slimming)) {
          if (sketchHere === 0) sketchHere = (sketch as NonNullable<typeof sketch>)(record) ? 1 : -1;
          if (sketchHere === 1) keepSketch(record, key, child);
          record[key] = SLIMMED;
        }
      } else if (typeof child === 'object' && child !== null) {
        if (Array.isArray(child) && BULK_KEYS.has(key)) {
          for (let i = 0; i < child.length; i++) {
            const element: unknown = child[i];
            if (typeof element === 'string' && replaceable(element, slimming)) {
              if (sketchHere === 0) sketchHere = (sketch as NonNullable<typeof sketch>)(record) ? 1 : -1;
              if (sketchHere === 1) keepSketch(child, i, element);
              child[i] = SLIMMED;
            }
          }
        }
        pending.push(child);
      }
    }
  }
  return value;
}

function replaceable(text: string, slimming: Slimming): boolean {
  return text.length > slimming.longerThan && !slimming.keep(text) && text.trim() !== '';
}
