import { JsonDepthError, JsonSyntaxError, skipWhitespace } from '../core/json/value.js';
import { InputError, NoConversationError } from '../errors.js';
import {
  arrayElements,
  depthOverflow,
  explainJsonError,
  findMember,
  objectMembers,
  parseSlice,
  skipValue,
  type Member,
} from './json-layout.js';
import { isIndexToken } from './json-pointer.js';
import { detectStyle, writeJson } from './json-style.js';
import { elementReader, lazyList } from '../core/lazy-list.js';
import { forEachLine, isLineSource, type LineSource } from './lines.js';
import { OffsetColumn } from './column.js';
import { slimItem, type Slimming } from './slim.js';
import { innerName } from './compressed.js';
import { messageListPath, pointerSlot, pointerTokens } from './conversation-path.js';
import { arraySlot, lineCol, parseMembers, stringInputSlot, type Framing, type Layout, type Slot } from './slot.js';
import { lineColumn, type SourceText } from './source.js';

export type { Framing, Layout, Slot } from './slot.js';

/**
 * Where a file's conversations are and how to write them back: the items of each list keep their exact
 * text; only the joins between them and the note are written fresh, in the file's own style.
 */

/** Keys under which request bodies keep their message list (`events`: an ADK session's events holding Gemini contents). */
export const LIST_KEYS = ['messages', 'input', 'contents', 'events'] as const;

/** Keys under which a record (dataset row, trajectory, archive entry) holds its conversation, in order of preference. */
export const CONVERSATION_KEYS = ['messages', 'conversations', 'traj', 'history'] as const;

/** How to find the conversations in a file. */
export interface LayoutOptions {
  /** A key to look for each conversation under before the usual ones (`--conversation-key`). */
  readonly conversationKey?: string | undefined;
  /** Keep items slim (see slim.ts): for compacting, where only rendering reads message text. */
  readonly slimming?: Slimming | undefined;
  /**
   * A JSON Pointer (RFC 6901) to the conversation (`--conversation-path`): from the top-level value of a JSON file,
   * from each record of a top-level list when its first token is not a list index, and from each line of JSONL.
   */
  readonly conversationPath?: string | undefined;
  /** Takes a JSONL file's items as they are parsed, so that the layout need not keep them (see `ItemSink`). */
  readonly sink?: ItemSink | undefined;
}

/**
 * Takes the items of a JSONL file's lines as they are parsed, a block at a time, so that the layout need not keep
 * them all: the compactor normalizes each block as it comes (pipeline/stream.ts), and the slot's items are then
 * parsed again from their lines when read. Offered only lines that hold one conversation (not records, not under a
 * conversation path).
 */
export interface ItemSink {
  /** How many items a block holds (the last may hold fewer). */
  readonly blockSize: number;
  /**
   * Up to how many items the layout keeps while it offers them, as it does without a sink: a file of more keeps none
   * (each is parsed again from its line when read), one of at most this many keeps them all.
   */
  readonly keepUpTo: number;
  /**
   * Items `from`… as parsed (slim). For the first block (`from` 0), whether the sink takes the file's items: if not,
   * the layout keeps them as usual and offers no more. Once it took the first, it is handed every block.
   */
  take(block: readonly unknown[], from: number): boolean;
}

/** The keys to try for a record's conversation: the one named first, then the usual ones. */
function conversationKeys(options: LayoutOptions): string[] {
  const named = options.conversationKey;
  return named === undefined ? [...CONVERSATION_KEYS] : [named, ...CONVERSATION_KEYS.filter((k) => k !== named)];
}

/** Converts a syntax error at an offset into an InputError with line and column. */
export function syntaxError(source: SourceText, error: JsonSyntaxError, prefix = 'invalid JSON: '): InputError {
  const { line, column } = lineColumn(source.text, error.offset);
  // Too deep is valid JSON that swc refuses, not invalid JSON.
  return new InputError(
    `${error instanceof JsonDepthError ? 'the JSON is ' : prefix}${error.message}`,
    source.file,
    line,
    column,
  );
}

/** The error for a JSONL line JSON.parse refused: which line, the column, and why in swc's own words. */
function jsonlLineError(source: SourceText, lineNo: number, body: string, error: unknown): InputError {
  // Explained from the line alone, so a file held as lines never has its whole text built.
  const found = explainJsonError(body, { start: 0, end: body.length }, error);
  const reason =
    found.offset >= body.length
      ? 'the line ends inside a JSON value (truncated, or one value spread over several lines?)'
      : found.message;
  const column = lineColumn(body, Math.min(found.offset, body.length)).column;
  return new InputError(`line ${lineNo} is not valid JSON: ${reason}`, source.file, lineNo, column);
}

/** Decides JSON or JSONL: by extension when it says, else by whether the first value ends the file. */
export function detectFraming(source: SourceText): Framing {
  // `a.jsonl.gz` is JSONL: a compression suffix does not hide the extension.
  const lower = innerName(source.file).toLowerCase();
  if (lower.endsWith('.jsonl') || lower.endsWith('.ndjson')) return 'jsonl';
  if (lower.endsWith('.json')) return 'json';
  // Held as lines only when its first lines showed JSONL by the rule below.
  if (isLineSource(source)) return 'jsonl';
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
export function readLayout(
  source: SourceText,
  framing: Framing = detectFraming(source),
  options: LayoutOptions = {},
): Layout {
  try {
    return framing === 'jsonl' ? jsonlLayout(source, options) : jsonLayout(source, options);
  } catch (error) {
    if (error instanceof JsonSyntaxError) throw syntaxError(source, error);
    throw error;
  }
}

/** The member of the object at `pos` that holds a conversation list under one of `keys`, or null. */
function conversationMember(
  text: string,
  pos: number,
  keys: readonly string[],
): { members: Member[]; member: Member } | null {
  if (text.charCodeAt(pos) !== 0x7b) return null;
  const { members } = objectMembers(text, pos);
  for (const key of keys) {
    const member = findMember(members, key);
    if (member !== undefined && text.charCodeAt(member.value.start) === 0x5b) return { members, member };
  }
  return null;
}

/**
 * Whether an object is a message rather than a record: it has a string `role` (chat formats) or `from`
 * (ShareGPT). Records (dataset rows, trajectories) name their conversation but have no role of their own.
 */
function isMessageLike(keys: readonly string[], isString: (key: string) => boolean): boolean {
  return (keys.includes('role') && isString('role')) || (keys.includes('from') && isString('from'));
}

/**
 * Whether the list at `arrayStart` is a list of records rather than of messages: its first element is an
 * object holding, under a conversation key, a list that is empty or starts with an object. Only the first
 * element is looked at, so a long message list costs nothing extra.
 */
function isRecordList(text: string, arrayStart: number, keys: readonly string[]): boolean {
  const first = skipWhitespace(text, arrayStart + 1);
  const found = conversationMember(text, first, keys);
  // A message with an extra list-valued field (a `history` of its own, say) is still a message.
  if (
    found === null ||
    isMessageLike(
      found.members.map((m) => m.key),
      (key) => text.charCodeAt((findMember(found.members, key) as Member).value.start) === 0x22,
    )
  )
    return false;
  const inner = skipWhitespace(text, found.member.value.start + 1);
  const c = text.charCodeAt(inner);
  return c === 0x7b || c === 0x5d;
}

/**
 * One slot for the conversation of the record at `pos`; every other member of the record is left as it is.
 * @throws InputError when the record is not an object holding a list under one of `keys`
 */
function recordSlot(
  source: SourceText,
  pos: number,
  keys: readonly string[],
  record: number,
  label: string,
  slimming?: Slimming,
): Slot {
  const text = source.text;
  const found = conversationMember(text, pos, keys);
  if (found === null) {
    if (text.charCodeAt(pos) === 0x7b) parseSlice(text, { start: pos, end: skipValue(text, pos) });
    const what = text.charCodeAt(pos) === 0x7b ? 'holds no conversation' : 'is not an object';
    throw new InputError(
      `${label} ${what}: expected a list under ${keys.map((k) => `"${k}"`).join(', ')} (as in the first record; --conversation-key names another key)`,
      source.file,
      ...lineCol(source, pos),
    );
  }
  const { members, member } = found;
  const container = parseMembers(text, members, member.key);
  return {
    ...arraySlot(source, member.value.start, `${label} "${member.key}"`, container, member.key, slimming),
    record,
  };
}

/** One slot per record of the top-level list at `arrayStart`. */
function recordListSlots(
  source: SourceText,
  arrayStart: number,
  keys: readonly string[],
  slimming: Slimming | undefined,
): Slot[] {
  const { elements } = arrayElements(source.text, arrayStart);
  return elements.map((e, k) => recordSlot(source, e.start, keys, k, `record ${k + 1}`, slimming));
}

function jsonLayout(source: SourceText, options: LayoutOptions): Layout {
  const text = source.text;
  const start = skipWhitespace(text, 0);
  const end = skipValue(text, start);
  const rest = skipWhitespace(text, end);
  if (rest < text.length)
    throw new JsonSyntaxError(
      'unexpected data after the JSON value (trailing garbage, or JSONL saved as .json?)',
      rest,
    );
  const c = text.charCodeAt(start);
  if (options.conversationPath !== undefined) {
    // Validated whole first, so a syntax error anywhere is reported as one.
    parseSlice(text, { start, end });
    const tokens = pointerTokens(options.conversationPath, source);
    if (c === 0x5b && tokens.length > 0 && !isIndexToken(tokens[0] as string)) {
      const { elements } = arrayElements(text, start);
      return {
        framing: 'json',
        source,
        slots: elements.map((e, k) => pointerSlot(source, e.start, tokens, `record ${k + 1}`, k, options.slimming)),
      };
    }
    return { framing: 'json', source, slots: [pointerSlot(source, start, tokens, null, undefined, options.slimming)] };
  }
  const recordKeys = conversationKeys(options);
  if (c === 0x5b) {
    if (isRecordList(text, start, recordKeys))
      return { framing: 'json', source, slots: recordListSlots(source, start, recordKeys, options.slimming) };
    return {
      framing: 'json',
      source,
      slots: [arraySlot(source, start, 'the top-level list', null, null, options.slimming)],
    };
  }
  if (c !== 0x7b) {
    parseSlice(text, { start, end });
    throw new NoConversationError(
      'expected a list of messages or an object holding one, found a single value',
      source.file,
      ...lineCol(source, start),
    );
  }
  const { members } = objectMembers(text, start);
  const objectKeys = [
    ...new Set([
      ...(options.conversationKey === undefined ? [] : [options.conversationKey]),
      ...LIST_KEYS,
      ...CONVERSATION_KEYS,
    ]),
  ];
  for (const key of objectKeys) {
    const member = findMember(members, key);
    if (member === undefined) continue;
    const container = parseMembers(text, members, key);
    if (text.charCodeAt(member.value.start) === 0x5b)
      return {
        framing: 'json',
        source,
        slots: [arraySlot(source, member.value.start, `"${key}"`, container, key, options.slimming)],
      };
    if (key === 'input' && text.charCodeAt(member.value.start) === 0x22) {
      return { framing: 'json', source, slots: [stringInputSlot(source, member.value, container)] };
    }
  }
  // Validate the whole object so a syntax error is reported before "no list".
  const whole = parseSlice(text, { start, end });
  const keys = members
    .map((m) => m.key)
    .slice(0, 8)
    .join(', ');
  const deeper = messageListPath(whole);
  const hint = deeper === null ? '' : `; a list of messages is at ${deeper}: pass --conversation-path ${deeper}`;
  throw new NoConversationError(
    `no message list found: expected a top-level list or an object with ${objectKeys.map((k) => `"${k}"`).join(', ')} (found keys: ${keys || 'none'})${hint}`,
    source.file,
    ...lineCol(source, start),
  );
}

/** Whether a parsed line is a record holding a conversation list under one of `keys`. */
function isRecordLine(value: unknown, keys: readonly string[]): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const record = value as Record<string, unknown>;
  if (isMessageLike(Object.keys(record), (key) => typeof record[key] === 'string')) return false;
  for (const key of keys) {
    if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
    const list = (value as Record<string, unknown>)[key];
    if (!Array.isArray(list)) continue;
    const first: unknown = list[0];
    return list.length === 0 || (typeof first === 'object' && first !== null && !Array.isArray(first));
  }
  return false;
}

function jsonlLayout(source: SourceText, options: LayoutOptions): Layout {
  const items: unknown[] = [];
  const offsets = new OffsetColumn();
  // Each item's line number: its index + 1 until a blank line has come, so the list is made only once one has.
  let lineNos: number[] | null = null;
  const lineNoOf = (k: number): number => (lineNos === null ? k + 1 : (lineNos[k] as number));
  const slimming = options.slimming;
  // A source that has the whole text keeps each line's text as a slice of it; one held as lines decodes a line
  // again when it is read (kept lines when writing, messages when rendering), so parsed-only history costs nothing.
  const held = isLineSource(source);
  const sliced: string[] = [];
  let length = 0;
  const recordKeys = conversationKeys(options);
  const offers = new Offers(
    options.conversationPath === undefined ? options.sink : undefined,
    recordKeys,
    items,
    held ? (source as LineSource).byteLength : source.text.length,
  );
  forEachLine(source, (line, lineNo, pos) => {
    length = pos + line.length;
    const body = line.endsWith('\r') ? line.slice(0, -1) : line;
    if (body.trim() === '') return;
    const deep = depthOverflow(body);
    if (deep !== -1) {
      const message = new JsonDepthError(deep).message;
      throw new InputError(`line ${lineNo} is ${message}`, source.file, lineNo, lineColumn(body, deep).column);
    }
    let item: unknown;
    try {
      item = JSON.parse(body);
    } catch (error) {
      throw jsonlLineError(source, lineNo, body, error);
    }
    if (lineNos === null && lineNo !== offsets.length + 1)
      lineNos = Array.from({ length: offsets.length }, (_, k) => k + 1);
    lineNos?.push(lineNo);
    const read = slimming === undefined ? item : slimItem(item, slimming);
    if (!held) sliced.push(line);
    offsets.push(pos);
    offers.add(read, length + 1);
  });
  offers.end();
  const streamed = offers.streamed;
  // Read only now: a big file is read while its lines are parsed, and has its lines once that is done.
  const lines = held ? (source as LineSource).lines : null;
  const lineAt = lines === null ? null : elementReader(lines);
  const count = offsets.length;
  const offsetList = lazyList(count, (k) => offsets.at(k));
  const raws: readonly string[] = lineAt === null ? sliced : lazyList(count, (k) => lineAt(lineNoOf(k) - 1));
  if (options.conversationPath !== undefined) {
    // With a pointer, every line is a record holding its conversation where the pointer leads.
    const tokens = pointerTokens(options.conversationPath, source);
    const slots = Array.from({ length: count }, (_, k) => {
      const raw = raws[k] as string;
      const start = offsets.at(k) + (raw.length - raw.trimStart().length);
      return pointerSlot(source, start, tokens, `line ${lineNoOf(k)}`, k, slimming);
    });
    return { framing: 'jsonl', source, slots };
  }
  if (!streamed && isRecordLine(items[0], recordKeys)) {
    // One record per line: each line's list is a conversation of its own.
    const slots = Array.from({ length: count }, (_, k) => {
      const raw = raws[k] as string;
      const start = offsets.at(k) + (raw.length - raw.trimStart().length);
      return recordSlot(source, start, recordKeys, k, `line ${lineNoOf(k)}`, slimming);
    });
    return { framing: 'jsonl', source, slots };
  }
  const finalNewline = isLineSource(source) ? source.finalNewline : source.text.endsWith('\n');
  if (finalNewline) length++;
  const style = detectStyle(raws[0] ?? '', '', source.eol);
  return {
    framing: 'jsonl',
    source,
    slots: [
      {
        where: 'the lines',
        // Streamed items past the sink's `keepUpTo` were not kept: each is parsed again from its line when read.
        items: streamed && !offers.kept ? lazyList(count, (k) => reparsed(raws, k, slimming)) : items,
        raws,
        container: null,
        key: null,
        offsets: offsetList,
        region: { start: 0, end: length },
        wholeFile: true,
        write(parts) {
          // Line endings are the file's own; a line's text is kept exactly. No line left is an empty file, not a
          // blank line.
          if (parts.length === 0) return '';
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

/**
 * The items of a file's lines as they are parsed: offered to a sink a block at a time, or kept in `items`; a sink
 * that took them has them kept too while there are at most its `keepUpTo`.
 */
class Offers {
  /** Items parsed and not yet offered (null once the sink refused them, or without one). */
  private pending: unknown[] | null;
  private count = 0;
  /** Whether the sink took the items. */
  streamed = false;
  /** Whether the items are all in `items` (false once a sink took more than its `keepUpTo`). */
  kept = true;
  /** Where the last line offered ends. */
  private reached = 0;

  /**
   * @param size the file's length (in bytes or characters: a measure of how far its lines reach), if known
   */
  constructor(
    private readonly sink: ItemSink | undefined,
    private readonly recordKeys: readonly string[],
    private readonly items: unknown[],
    private readonly size: number | undefined,
  ) {
    this.pending = sink === undefined ? null : [];
  }

  /** Takes an item parsed from the line whose line break ends at `end`. */
  add(item: unknown, end: number): void {
    this.count++;
    this.reached = end;
    if (this.pending === null) {
      this.items.push(item);
      return;
    }
    if (this.streamed) this.keep(item);
    if (this.pending.push(item) === (this.sink as ItemSink).blockSize) this.end();
  }

  /** Keeps an item the sink took, while they are few enough; past that, lets go of every one kept. */
  private keep(item: unknown): void {
    if (!this.kept) return;
    if (this.items.length < (this.sink as ItemSink).keepUpTo) {
      this.items.push(item);
      return;
    }
    this.kept = false;
    this.items.length = 0;
  }

  /** Offers the items parsed since the last block (also at the end of the file). */
  end(): void {
    const block = this.pending;
    const sink = this.sink;
    if (sink === undefined || block === null || block.length === 0) return;
    if (this.streamed) sink.take(block, this.count - block.length);
    else if (!isRecordLine(block[0], this.recordKeys) && sink.take(block, 0)) {
      this.streamed = true;
      // A file whose length promises more items than are kept, at the rate of its first block, keeps none: items
      // kept and let go of part way would stay in memory as garbage while the rest is read.
      const size = this.size;
      if (size !== undefined && this.reached > 0 && (size / this.reached) * this.count > sink.keepUpTo)
        this.kept = false;
      for (const item of block) this.keep(item);
    } else {
      // Refused: the items are kept, as without a sink.
      for (const item of block) this.items.push(item);
      this.pending = null;
      return;
    }
    this.pending = [];
  }
}

/** Item `k` of a file's lines parsed again from its text, slimmed as the layout slimmed it (its depth checked then). */
function reparsed(raws: readonly string[], k: number, slimming: Slimming | undefined): unknown {
  const item: unknown = JSON.parse(raws[k] as string);
  return slimming === undefined ? item : slimItem(item, slimming);
}

/** Rebuilds the file's text with some slots rewritten, every byte outside their regions as it was. */
export function rebuild(layout: Layout, replacements: ReadonlyMap<Slot, string>): string {
  const changed = layout.slots.filter((s) => replacements.has(s)).sort((a, b) => b.region.start - a.region.start);
  const only = changed.length === 1 ? (changed[0] as Slot) : null;
  // A slot that is the whole file (JSONL lines) replaces it: a file held as lines never has its text built.
  if (only?.wholeFile === true) return replacements.get(only) as string;
  // Regions never overlap: the pieces between them are joined once, so many changed records cost one copy.
  const text = layout.source.text;
  const pieces: string[] = [];
  let pos = 0;
  for (const slot of [...changed].reverse()) {
    pieces.push(text.slice(pos, slot.region.start), replacements.get(slot) as string);
    pos = slot.region.end;
  }
  pieces.push(text.slice(pos));
  return pieces.join('');
}
