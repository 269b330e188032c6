import { skipWhitespace } from '../core/json/value.js';
import { arrayElements, findMember, objectMembers, parseSlice, type Span } from '../io/json-layout.js';
import { writeJson } from '../io/json-style.js';

/**
 * Edits an item's exact text in place: a value is replaced, or a member added, and every other byte stays. Used to
 * write pruned tool results, whose items are otherwise written as they came (kept items are never re-serialized).
 */

/** One replacement in a text: [start, end) becomes `text`. */
export interface Edit {
  readonly start: number;
  readonly end: number;
  readonly text: string;
}

/** The span of the whole value an item's text holds. */
export function rootSpan(raw: string): Span {
  const start = skipWhitespace(raw, 0);
  let end = raw.length;
  while (end > start && /\s/.test(raw.charAt(end - 1))) end--;
  return { start, end };
}

/** Whether the value at a span is an object / an array. */
export const isObjectAt = (raw: string, span: Span): boolean => raw.charCodeAt(span.start) === 0x7b;
export const isArrayAt = (raw: string, span: Span): boolean => raw.charCodeAt(span.start) === 0x5b;

/** The value of an object's member (the last of duplicates, as JSON.parse takes it), or undefined. */
export function memberSpan(raw: string, object: Span, key: string): Span | undefined {
  if (!isObjectAt(raw, object)) return undefined;
  return findMember(objectMembers(raw, object.start, object.end).members, key)?.value;
}

/** The keys of an object, in order. */
export function keysAt(raw: string, object: Span): string[] {
  return isObjectAt(raw, object) ? objectMembers(raw, object.start, object.end).members.map((m) => m.key) : [];
}

/** The elements of an array, or none when the value is not one. */
export function elementSpans(raw: string, array: Span | undefined): Span[] {
  return array !== undefined && isArrayAt(raw, array) ? arrayElements(raw, array.start, array.end).elements : [];
}

/** A small value parsed (a type tag, a flag); never used for bulk text. */
export function valueAt(raw: string, span: Span | undefined): unknown {
  return span === undefined ? undefined : parseSlice(raw, span);
}

/** A string member's value, or undefined. */
export function stringMember(raw: string, object: Span, key: string): string | undefined {
  const span = memberSpan(raw, object, key);
  if (span === undefined || raw.charCodeAt(span.start) !== 0x22) return undefined;
  const value = valueAt(raw, span);
  return typeof value === 'string' ? value : undefined;
}

/** Applies edits that do not overlap. */
export function applyEdits(raw: string, edits: readonly Edit[]): string {
  const sorted = [...edits].sort((a, b) => a.start - b.start);
  let out = '';
  let pos = 0;
  for (const e of sorted) {
    if (e.start < pos) throw new Error('overlapping edits of one item');
    out += raw.slice(pos, e.start) + e.text;
    pos = e.end;
  }
  return out + raw.slice(pos);
}

/** The indentation of the line a position is on (empty on an item's first line, which the file indents). */
function lineIndent(raw: string, pos: number): string {
  const nl = raw.lastIndexOf('\n', pos - 1);
  if (nl === -1) return '';
  return /^[ \t]*/.exec(raw.slice(nl + 1))?.[0] ?? '';
}

/**
 * Sets an object's member to a value: its value replaced when the key is there, otherwise the member added last,
 * written as the object's other members are (the separator before its last member, the colon after its keys).
 * @param value the new value, as plain data, written in the object's style when it is an object or a list
 */
export function setMember(raw: string, object: Span, key: string, value: unknown): Edit {
  const { members } = objectMembers(raw, object.start, object.end);
  const existing = findMember(members, key);
  // The item's own colon style: its first key shows it.
  const colon = /"\s*:( ?)/.exec(raw)?.[1] === ' ' ? ': ' : ':';
  const eol = raw.includes('\r\n') ? '\r\n' : '\n';
  const multiline = raw.slice(object.start, object.end).includes('\n');
  const written = (indent: string): string => {
    if (typeof value !== 'object' || value === null) return JSON.stringify(value);
    const unit = multiline ? indent.slice(lineIndent(raw, object.start).length) || '  ' : null;
    return writeJson(value, { unit, baseIndent: indent, eol, colon, comma: colon === ': ' ? ', ' : ',' });
  };
  if (existing !== undefined) {
    return {
      start: existing.value.start,
      end: existing.value.end,
      text: written(lineIndent(raw, existing.value.start)),
    };
  }
  const last = members[members.length - 1];
  if (last === undefined)
    return { start: object.start, end: object.end, text: `{${JSON.stringify(key)}${colon}${written('')}}` };
  // The text between the member before the last (or the brace) and the last key, without its comma.
  const before = members.length > 1 ? (members[members.length - 2] as { value: Span }).value.end : object.start + 1;
  // Only whitespace and a comma stand between it and the last key's opening quote.
  const lastKeyStart = raw.indexOf('"', before);
  const separator = raw.slice(before, lastKeyStart).replace(',', '');
  const indent = lineIndent(raw, lastKeyStart);
  return {
    start: last.value.end,
    end: last.value.end,
    text: `,${separator}${JSON.stringify(key)}${colon}${written(indent)}`,
  };
}

/** Replaces a value with a string: the content of a pruned result. */
export function setString(span: Span, text: string): Edit {
  return { start: span.start, end: span.end, text: JSON.stringify(text) };
}

/** Where one result's content is: the member `key` of `object`, and what the placeholder text becomes there. */
export interface ResultSlot {
  readonly object: Span;
  readonly key: string;
  /** The value written for a text (default: the text itself, a string). */
  readonly wrap?: (text: string) => unknown;
}

/**
 * Writes a pruned message: the results found in its items, in order, each get the next placeholder text.
 * @param slotsOf the result slots of one item, in the order `normalize` reads its results
 * @param more further edits of an item, given the texts written into it (Claude Code's `toolUseResult` copy)
 * @throws Error when the items hold fewer results than texts the decision gave (an adapter bug, never guessed around)
 */
export function writeResults(
  request: {
    readonly raws: readonly string[];
    readonly items: readonly number[];
    readonly texts: readonly (string | null)[];
  },
  slotsOf: (raw: string, root: Span) => ResultSlot[],
  more?: (raw: string, root: Span, written: readonly string[]) => Edit[],
): Map<number, string> {
  const out = new Map<number, string>();
  let next = 0;
  for (const item of request.items) {
    const raw = request.raws[item] as string;
    const root = rootSpan(raw);
    const slots = slotsOf(raw, root);
    if (slots.length === 0) continue;
    const written: string[] = [];
    const edits: Edit[] = [];
    for (const slot of slots) {
      const text = request.texts[next++];
      if (text === undefined) throw new Error('a pruned message has more results in its items than the decision saw');
      if (text === null) continue;
      written.push(text);
      edits.push(setMember(raw, slot.object, slot.key, slot.wrap === undefined ? text : slot.wrap(text)));
    }
    if (written.length === 0) continue;
    edits.push(...(more?.(raw, root, written) ?? []));
    out.set(item, applyEdits(raw, edits));
  }
  if (next === 0) throw new Error('a pruned message has no result in its items');
  return out;
}

/** Whether an object's member holds this string. */
export function hasString(raw: string, object: Span, key: string, value: string): boolean {
  return stringMember(raw, object, key) === value;
}
