import { JsonSyntaxError, skipWhitespace } from '../core/json-value.js';
import { InputError } from '../errors.js';
import { arrayElements, objectMembers, parseSlice, skipValue, type Member, type Span } from './json-layout.js';
import { detectStyle, writeJson, type JsonStyle } from './json-style.js';
import { lineColumn, type SourceText } from './source.js';

/**
 * Where a file's conversations are and how to write them back: the items of each list keep their exact
 * text; only the joins between them and the note are written fresh, in the file's own style.
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
}

export interface Layout {
  readonly framing: Framing;
  readonly source: SourceText;
  readonly slots: readonly Slot[];
}

/** Keys under which request bodies keep their message list. */
export const LIST_KEYS = ['messages', 'input', 'contents'] as const;

/** Converts a syntax error at an offset into an InputError with line and column. */
export function syntaxError(source: SourceText, error: JsonSyntaxError, prefix = 'invalid JSON: '): InputError {
  const { line, column } = lineColumn(source.text, error.offset);
  return new InputError(`${prefix}${error.message}`, source.file, line, column);
}

/** Decides JSON or JSONL: by extension when it says, else by whether the first value ends the file. */
export function detectFraming(source: SourceText): Framing {
  const lower = source.file.toLowerCase();
  if (lower.endsWith('.jsonl') || lower.endsWith('.ndjson')) return 'jsonl';
  if (lower.endsWith('.json')) return 'json';
  const text = source.text;
  const start = skipWhitespace(text, 0);
  const firstLineEnd = text.indexOf('\n', start);
  if (firstLineEnd === -1) return 'json';
  try {
    const end = skipValue(text, start);
    const rest = skipWhitespace(text, end);
    if (rest >= text.length) return 'json';
    // A complete value on the first line followed by more values: one value per line.
    return end <= firstLineEnd + 1 ? 'jsonl' : 'json';
  } catch {
    return 'json';
  }
}

/**
 * Lays out a file as JSON or JSONL.
 * @throws InputError for syntax errors, with line and column
 */
export function readLayout(source: SourceText, framing: Framing = detectFraming(source)): Layout {
  try {
    return framing === 'jsonl' ? jsonlLayout(source) : jsonLayout(source);
  } catch (error) {
    if (error instanceof JsonSyntaxError) throw syntaxError(source, error);
    throw error;
  }
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
): Slot {
  const text = source.text;
  const { elements, end } = arrayElements(text, arrayStart);
  const raws = elements.map((e) => text.slice(e.start, e.end));
  const items = elements.map((e) => parseSlice(text, e));
  const first = elements[0];
  const second = elements[1];
  const last = elements[elements.length - 1];
  const open = first ? text.slice(arrayStart + 1, first.start) : '';
  const close = last ? text.slice(last.end, end - 1) : '';
  const between = first && second ? text.slice(first.end, second.start) : `,${open.includes('\n') ? open : open === '' ? '' : ' '}`;
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

function jsonLayout(source: SourceText): Layout {
  const text = source.text;
  const start = skipWhitespace(text, 0);
  const end = skipValue(text, start);
  const rest = skipWhitespace(text, end);
  if (rest < text.length) throw new JsonSyntaxError('unexpected data after the JSON value (trailing garbage, or JSONL saved as .json?)', rest);
  const c = text.charCodeAt(start);
  if (c === 0x5b) return { framing: 'json', source, slots: [arraySlot(source, start, 'the top-level list', null, null)] };
  if (c !== 0x7b) {
    parseSlice(text, { start, end });
    throw new InputError('expected a list of messages or an object holding one, found a single value', source.file, ...lineCol(source, start));
  }
  const { members } = objectMembers(text, start);
  for (const key of LIST_KEYS) {
    let member: Member | undefined;
    for (let k = members.length - 1; k >= 0 && member === undefined; k--) if (members[k]?.key === key) member = members[k];
    if (member === undefined) continue;
    const container = parseMembers(text, members, key);
    if (text.charCodeAt(member.value.start) === 0x5b) return { framing: 'json', source, slots: [arraySlot(source, member.value.start, `"${key}"`, container, key)] };
    if (key === 'input' && text.charCodeAt(member.value.start) === 0x22) {
      return { framing: 'json', source, slots: [stringInputSlot(source, member.value, container)] };
    }
  }
  // Validate the whole object so a syntax error is reported before "no list".
  parseSlice(text, { start, end });
  const keys = members.map((m) => m.key).slice(0, 8).join(', ');
  throw new InputError(
    `no message list found: expected a top-level list or an object with ${LIST_KEYS.map((k) => `"${k}"`).join(', ')} (found keys: ${keys || 'none'})`,
    source.file,
    ...lineCol(source, start),
  );
}

/** A Responses body whose `input` is one string: one user message that can never be removed. */
function stringInputSlot(source: SourceText, span: Span, container: Record<string, unknown>): Slot {
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

function lineCol(source: SourceText, offset: number): [number, number] {
  const { line, column } = lineColumn(source.text, offset);
  return [line, column];
}

function jsonlLayout(source: SourceText): Layout {
  const text = source.text;
  const items: unknown[] = [];
  const raws: string[] = [];
  const offsets: number[] = [];
  let lineNo = 0;
  let pos = 0;
  while (pos < text.length) {
    let nl = text.indexOf('\n', pos);
    if (nl === -1) nl = text.length;
    lineNo++;
    const line = text.slice(pos, nl);
    const body = line.endsWith('\r') ? line.slice(0, -1) : line;
    if (body.trim() !== '') {
      try {
        items.push(JSON.parse(body));
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        const m = /at position (\d+)/.exec(message);
        const col = m ? Number(m[1]) + 1 : body.length + 1;
        throw new InputError(`line ${lineNo} is not valid JSON: ${message.replace(/ in JSON at position \d+.*$/s, '').replace(/^Unexpected token .*?, ".*$/s, 'unexpected token')}`, source.file, lineNo, col);
      }
      raws.push(line);
      offsets.push(pos);
    }
    pos = nl + 1;
  }
  const finalNewline = text.endsWith('\n');
  const firstRaw = raws[0] ?? '';
  const style = detectStyle(firstRaw, '', source.eol);
  return {
    framing: 'jsonl',
    source,
    slots: [
      {
        where: 'the lines',
        items,
        raws,
        container: null,
        key: null,
        offsets,
        region: { start: 0, end: text.length },
        write(parts) {
          // Line endings are the file's own; a line's text is kept exactly.
          const lines = parts.map((p) => (p.endsWith('\r') ? p.slice(0, -1) : p));
          return lines.join(source.eol) + (finalNewline ? source.eol : '');
        },
        writeItem(value) {
          return writeJson(value, { ...style, unit: null });
        },
      },
    ],
  };
}

/** Rebuilds the file's text with some slots rewritten (regions replaced from the end so offsets hold). */
export function rebuild(layout: Layout, replacements: ReadonlyMap<Slot, string>): string {
  const text = layout.source.text;
  const changed = layout.slots.filter((s) => replacements.has(s)).sort((a, b) => b.region.start - a.region.start);
  let out = text;
  for (const slot of changed) out = out.slice(0, slot.region.start) + (replacements.get(slot) as string) + out.slice(slot.region.end);
  return out;
}
