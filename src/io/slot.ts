import { arrayElements, parseSlice, type Member, type Span } from './json-layout.js';
import { detectStyle, writeJson, type JsonStyle } from './json-style.js';
import { slimItem, type Slimming } from './slim.js';
import { lineColumn, type SourceText } from './source.js';

/**
 * A slot: one list of items in a file that holds a conversation, with what writes it back (the items keep their
 * exact text; only the joins between them and the note are written fresh, in the file's own style).
 */

export type Framing = 'json' | 'jsonl';

/** One list of items that holds a conversation. */
export interface Slot {
  /** Where the list is, for messages: "the whole file", "key messages"… */
  readonly where: string;
  readonly items: readonly unknown[];
  readonly raws: readonly string[];
  /** The object holding the list (other keys parsed), or null. */
  readonly container: Readonly<Record<string, unknown>> | null;
  /** The key of the list in its container, or null for a bare list / JSONL. */
  readonly key: string | null;
  /** Offset in the file of each item, for errors. */
  readonly offsets: readonly number[];
  /** Writes the list back with these item texts (kept raws and a note). */
  write(raws: readonly string[]): string;
  /** Serializes a note value as an item of this list. */
  writeItem(value: unknown): string;
  /** The region of the file this slot's text replaces. */
  readonly region: Span;
  /** For files of many conversations: the record (array element or line) this list belongs to, 0-based. */
  readonly record?: number;
  /** Set when the slot's region is the whole file (JSONL lines): its text alone is the rebuilt file. */
  readonly wholeFile?: boolean;
}

/** A file's conversations: its framing and one slot per conversation. */
export interface Layout {
  readonly framing: Framing;
  readonly source: SourceText;
  readonly slots: readonly Slot[];
}

/** Whitespace before `offset` on its line (the indentation an item sits at). */
function indentBefore(text: string, offset: number): string {
  let i = offset;
  while (i > 0 && (text.charCodeAt(i - 1) === 0x20 || text.charCodeAt(i - 1) === 0x09)) i--;
  return i === 0 || text.charCodeAt(i - 1) === 0x0a ? text.slice(i, offset) : '';
}

/** A slot over the array at `arrayStart` in the file's text. */
export function arraySlot(
  source: SourceText,
  arrayStart: number,
  where: string,
  container: Readonly<Record<string, unknown>> | null,
  key: string | null,
  slimming?: Slimming,
): Slot {
  const text = source.text;
  const { elements, end } = arrayElements(text, arrayStart);
  const raws = elements.map((e) => text.slice(e.start, e.end));
  const items = elements.map((e) =>
    slimming === undefined ? parseSlice(text, e) : slimItem(parseSlice(text, e), slimming),
  );
  const first = elements[0];
  const second = elements[1];
  const last = elements[elements.length - 1];
  const open = first ? text.slice(arrayStart + 1, first.start) : '';
  const close = last ? text.slice(last.end, end - 1) : '';
  const between =
    first && second ? text.slice(first.end, second.start) : `,${open.includes('\n') ? open : open === '' ? '' : ' '}`;
  const baseIndent = first ? indentBefore(text, first.start) : '';
  const style: JsonStyle = first
    ? detectStyle(raws[0] as string, baseIndent, source.eol)
    : { unit: null, baseIndent: '', eol: source.eol, colon: ':', comma: ',' };
  return {
    where,
    items,
    raws,
    container,
    key,
    offsets: elements.map((e) => e.start),
    region: { start: arrayStart, end },
    write(parts) {
      if (parts.length === 0) return '[]';
      return `[${open}${parts.join(between)}${close}]`;
    },
    writeItem(value) {
      return writeJson(value, style);
    },
  };
}

/** Parses the members of an object except `skip`, natively, into a prototype-free record. */
export function parseMembers(text: string, members: readonly Member[], skip: string | null): Record<string, unknown> {
  const out = Object.create(null) as Record<string, unknown>;
  for (const m of members) {
    if (m.key === skip) continue;
    out[m.key] = parseSlice(text, m.value);
  }
  return out;
}

/** A Responses body whose `input` is one string: one user message that can never be removed. */
export function stringInputSlot(source: SourceText, span: Span, container: Record<string, unknown>): Slot {
  const raw = source.text.slice(span.start, span.end);
  return {
    where: '"input"',
    items: [parseSlice(source.text, span)],
    raws: [raw],
    container,
    key: 'input',
    offsets: [span.start],
    region: span,
    write: (parts) => (parts.length === 1 && parts[0] === raw ? raw : `[${parts.join(', ')}]`),
    writeItem: (value) => JSON.stringify(value),
  };
}

/** The 1-based line and column of an offset, to spread into an InputError. */
export function lineCol(source: SourceText, offset: number): [number, number] {
  const { line, column } = lineColumn(source.text, offset);
  return [line, column];
}
