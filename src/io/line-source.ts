import { closeSync, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import { isUtf8 } from 'node:buffer';
import { lowerBound } from '../core/sorted.js';
import { lazyList } from '../core/lazy-list.js';
import { InputError } from '../errors.js';
import { Uint32Column } from './column.js';
import { describeFsError } from './files.js';
import { changedWhileCompacted } from './read-errors.js';
import { lineColumn, type SourceText } from './source.js';

/**
 * A JSONL file held as its lines: its bytes in blocks that end at a line break, cut into lines by `LineSplitter`, a
 * line decoded into a string only when something reads it; a big file's lines read again from the file
 * (`FileLines`), which must still be the one first read. How files are read into one is `lines.ts`.
 */

/** A visitor of lines: a line's text (its "\r" kept), its 1-based number, and where it starts in the text. */
export type LineVisitor = (line: string, lineNo: number, offset: number) => void;

/** A decoded JSONL file held as its lines. */
export interface LineSource extends SourceText {
  /** What tells a line source (read without touching anything that would read the file). */
  readonly heldAs: 'lines';
  /**
   * The text split at each "\n" (a line keeps its "\r"): `lines.join("\n")` is `text`. A line is decoded each time
   * it is read, so read each once where it matters.
   */
  readonly lines: readonly string[];
  /** The length of `text` in UTF-16 units (counted on first read, without building the text). */
  readonly length: number;
  /** The number of bytes read (a byte-order mark included): bounds `length` without counting it. */
  readonly byteLength?: number;
  /** Whether the file ends with a line break (then the last element of `lines` is ''). */
  readonly finalNewline: boolean;
  /** The file's bytes as they were read (with its byte-order mark), without building its text. */
  bytes(): Buffer;
  /** Goes through the lines as `forEachLine` does, reading a file not read yet only once (big files). */
  visitLines?(visit: LineVisitor): void;
}

/** Whether a source is held as lines (its `text` is built only on demand). */
export function isLineSource(source: SourceText): source is LineSource {
  return (source as Partial<LineSource>).heldAs === 'lines';
}

/**
 * Calls `visit` for each line of a source (its text up to a "\n", a "\r" kept) with the line's 1-based number and
 * the offset in `text` where it starts. A line source decodes its lines one at a time; other text is sliced.
 */
export function forEachLine(source: SourceText, visit: LineVisitor): void {
  if (isLineSource(source)) {
    if (source.visitLines !== undefined) {
      source.visitLines(visit);
      return;
    }
    let offset = 0;
    const lines = source.lines;
    // The empty piece after a final "\n" is not a line.
    const count = source.finalNewline ? lines.length - 1 : lines.length;
    for (let k = 0; k < count; k++) {
      const line = lines[k] as string;
      visit(line, k + 1, offset);
      offset += line.length + 1;
    }
    return;
  }
  const text = source.text;
  let lineNo = 0;
  let pos = 0;
  while (pos < text.length) {
    let nl = text.indexOf('\n', pos);
    if (nl === -1) nl = text.length;
    lineNo++;
    visit(text.slice(pos, nl), lineNo, pos);
    pos = nl + 1;
  }
}

/** 1-based line and column of an offset in a source's text, found in its lines when it has them. */
export function positionOf(source: SourceText, offset: number): { line: number; column: number } {
  if (!isLineSource(source)) return lineColumn(source.text, offset);
  let start = 0;
  const lines = source.lines;
  for (let k = 0; k < lines.length; k++) {
    const line = lines[k] as string;
    if (offset <= start + line.length) return { line: k + 1, column: lineColumn(line, offset - start).column };
    start += line.length + 1;
  }
  return { line: lines.length, column: 1 };
}

/**
 * Cuts blocks of bytes into lines. It gives up (returns false) at anything `decodeSource` refuses (a UTF-16
 * byte-order mark, invalid UTF-8, a NUL byte, a file of only whitespace), so that those errors are always
 * worded and placed by the one function that owns them.
 */
export class LineSplitter {
  /** The blocks, and for each line where it starts and ends (before its "\n") in its block. */
  readonly blocks: Buffer[] = [];
  /** Where in the file each block starts, and its first line. */
  readonly blockStarts: number[] = [];
  readonly blockLines: number[] = [];
  /** The bytes pushed so far. */
  size = 0;
  readonly starts = new Uint32Column();
  readonly ends = new Uint32Column();
  /** Whether the last line is the empty piece after a final line break (in no block). */
  emptyLast = false;
  /** A big file's one block buffer, once read: reading lines back takes it over, its pages already mapped. */
  spare: Buffer | null = null;
  bom = false;
  finalNewline = false;
  /** Whether the first line ends with "\r" before its "\n". */
  firstLineCr = false;
  private started = false;
  private content = false;
  private failed = false;

  /**
   * @param hold whether to keep the block's bytes (else its lines are read again from the file when read)
   */
  constructor(readonly holds = true) {}

  /** Takes the next block, which must end at a line break unless it is the last. False once the input needs the exact checks. */
  push(block: Buffer, fileOffset = 0): boolean {
    if (this.failed) return false;
    if (block.length === 0) return true;
    if (block.indexOf(0) !== -1 || !isUtf8(block)) return this.fail();
    let pos = 0;
    if (!this.started) {
      this.started = true;
      if ((block[0] === 0xff && block[1] === 0xfe) || (block[0] === 0xfe && block[1] === 0xff)) return this.fail();
      if (block[0] === 0xef && block[1] === 0xbb && block[2] === 0xbf) {
        this.bom = true;
        pos = 3;
      }
    }
    if (!this.content) this.content = hasContent(block, pos);
    this.size += block.length;
    this.blockStarts.push(fileOffset);
    this.blockLines.push(this.starts.length);
    if (this.holds) this.blocks.push(block);
    const firstLine = this.starts.length === 0;
    for (;;) {
      const nl = block.indexOf(0x0a, pos);
      this.starts.push(pos);
      if (nl === -1) {
        this.ends.push(block.length);
        this.finalNewline = false;
        break;
      }
      this.ends.push(nl);
      if (firstLine && this.ends.length === 1) this.firstLineCr = nl > pos && block[nl - 1] === 0x0d;
      pos = nl + 1;
      if (pos === block.length) {
        this.finalNewline = true;
        break;
      }
    }
    return true;
  }

  /** Ends the input; false when it needs the exact checks (empty, only whitespace). */
  end(): boolean {
    if (this.failed || !this.content) return false;
    // The empty piece after a final line break, as "a\n".split("\n") has it.
    if (this.finalNewline) {
      this.emptyLast = true;
      this.starts.push(0);
      this.ends.push(0);
    }
    return true;
  }

  private fail(): false {
    this.failed = true;
    return false;
  }
}

/** Whether bytes from `pos` hold anything but JSON whitespace. */
export function hasContent(block: Buffer, pos: number): boolean {
  for (let i = pos; i < block.length; i++) {
    const b = block[i];
    if (b !== 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d) return true;
  }
  return false;
}

/** The regular file a source was read from and how it was then, to read lines from again (its bytes not held). */
export interface Origin {
  readonly path: string;
  readonly stat: Stats;
}

/** Builds a LineSource from split blocks. */
export function lineSource(file: string, splitter: LineSplitter, origin?: Origin): LineSource {
  const { starts, ends, blockStarts, blockLines } = splitter;
  const blocks: Buffer[] | null = splitter.holds ? splitter.blocks : null;
  const reader = origin === undefined ? null : new FileLines(file, origin, splitter.spare);
  const last = starts.length - 1;
  const line = (k: number): string => {
    if (k === last && splitter.emptyLast) return '';
    const b = lowerBound(blockLines, k + 1) - 1;
    if (blocks !== null) return (blocks[b] as Buffer).toString('utf8', starts.at(k), ends.at(k));
    const at = blockStarts[b] as number;
    return (reader as FileLines).read(at + starts.at(k), at + ends.at(k));
  };
  const lines = lazyList(starts.length, line);
  const eol = starts.length > 1 && splitter.firstLineCr ? '\r\n' : '\n';
  let text: string | undefined;
  let length: number | undefined;
  const source: LineSource = {
    file,
    heldAs: 'lines',
    bom: splitter.bom,
    eol,
    lines,
    finalNewline: splitter.finalNewline,
    byteLength: splitter.size,
    get length(): number {
      length ??= utf16Length(blocks ?? [(reader as FileLines).whole()], splitter.bom);
      return length;
    },
    bytes(): Buffer {
      return blocks === null ? (reader as FileLines).whole() : Buffer.concat(blocks);
    },
    get text(): string {
      if (text === undefined) {
        try {
          // Blocks end at line breaks, so they decode on their own.
          const bytes = blocks ?? [(reader as FileLines).whole()];
          text = bytes.map((block, k) => block.toString('utf8', k === 0 && splitter.bom ? 3 : 0)).join('');
        } catch (error) {
          if (error instanceof InputError) throw error;
          throw new InputError(
            'this file is too large to be handled as one text (about 512 MiB is the limit); only its lines can be read',
            file,
          );
        }
      }
      return text;
    },
  };
  return source;
}

/**
 * Reads lines of a file again, through a window of the file around the last line read (lines are read in runs,
 * newest first when counting and in order when writing). The file is opened for each window and must still be
 * the one first read.
 */
export class FileLines {
  /** The window's bytes: the start of one buffer, reused for every window (lines are copied out as strings). */
  private window: Buffer = Buffer.alloc(0);
  private buffer: Buffer;
  private windowStart = 0;
  /** How much the next window reads: doubled by each read next to the last window, up to WINDOW. */
  private span = FIRST_WINDOW;

  /** @param buffer a buffer to read windows into (the one the file was read in), if any */
  constructor(
    private readonly file: string,
    private readonly origin: Origin,
    buffer: Buffer | null = null,
  ) {
    this.buffer = buffer ?? Buffer.alloc(0);
  }

  /** The decoded bytes from `start` to `end` of the file. */
  read(start: number, end: number): string {
    const windowEnd = this.windowStart + this.window.length;
    if (start < this.windowStart || end > windowEnd) {
      // A run of lines (read in order to write them, newest first to count them) reads ever bigger windows; a line
      // read far from the last window (a result pruning reads, scattered over the file) reads a small one.
      const near = this.window.length > 0 && start <= windowEnd + this.span && end >= this.windowStart - this.span;
      this.span = near ? Math.min(this.span * 2, WINDOW) : FIRST_WINDOW;
      // Reading on from the window: the next window starts at the line; reading back: it ends at the line.
      const from = start >= this.windowStart ? start : Math.max(0, Math.min(start, end - this.span));
      const to = Math.min(Math.max(end, from + this.span), this.origin.stat.size);
      if (this.buffer.length < to - from) this.buffer = Buffer.allocUnsafeSlow(Math.max(to - from, WINDOW));
      // The old window goes first: its bytes are overwritten, and a failed read must leave no stale window.
      this.window = Buffer.alloc(0);
      this.window = this.fill(this.buffer.subarray(0, to - from), from);
      this.windowStart = from;
    }
    return this.window.toString('utf8', start - this.windowStart, end - this.windowStart);
  }

  /** The whole file, in a buffer of its own. */
  whole(): Buffer {
    return this.fill(Buffer.allocUnsafeSlow(this.origin.stat.size), 0);
  }

  /** Fills `buffer` with the file's bytes from `from` on, after checking the file is still the one read. */
  private fill(buffer: Buffer, from: number): Buffer {
    let fd: number;
    try {
      fd = openSync(this.origin.path, 'r');
    } catch (error) {
      throw this.changed(describeFsError(error));
    }
    try {
      if (!sameFile(fstatSync(fd), this.origin.stat)) throw this.changed('its size, times or inode differ');
      let filled = 0;
      while (filled < buffer.length) {
        const n = readSync(fd, buffer, filled, buffer.length - filled, from + filled);
        if (n === 0) throw this.changed('it got shorter');
        filled += n;
      }
      return buffer;
    } finally {
      closeSync(fd);
    }
  }

  private changed(how: string): InputError {
    return changedWhileCompacted(this.file, how);
  }
}

/** How much of a file is read at once when lines are read again, at most. */
export const WINDOW = 4 << 20;

/**
 * How much of a file a line read far from the last one reads. Pruning reads a few results' lines scattered over the
 * file: at 4 MiB each, 37 of them took 20 ms of a 1.3 s `prune,window` run at 100 MB.
 */
const FIRST_WINDOW = 64 << 10;

/** Whether a file is still the one that was read: same inode, size and times. */
export function sameFile(now: Stats, then: Stats): boolean {
  return (
    now.ino === then.ino &&
    now.dev === then.dev &&
    now.size === then.size &&
    now.mtimeMs === then.mtimeMs &&
    now.ctimeMs === then.ctimeMs
  );
}

/** The UTF-16 length of the text in blocks: one unit per code point, two for those above U+FFFF. */
function utf16Length(blocks: readonly Buffer[], bom: boolean): number {
  let length = 0;
  blocks.forEach((block, k) => {
    for (let i = k === 0 && bom ? 3 : 0; i < block.length; i++) {
      const b = block[i] as number;
      if ((b & 0xc0) !== 0x80) length += b >= 0xf0 ? 2 : 1;
    }
  });
  return length;
}
