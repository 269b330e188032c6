import {
  closeSync,
  fstatSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  writeSync,
  type Stats,
} from 'node:fs';
import { isUtf8 } from 'node:buffer';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  compressionOf,
  decompressedLimit,
  Inflater,
  innerName,
  type Compression,
  type CompressionFormat,
} from './compressed.js';
import { lazyList } from '../core/lazy-list.js';
import { InputError } from '../errors.js';
import { describeFsError, spoolPrefix } from './files.js';
import { decodeSource, lineColumn, type SourceText } from './source.js';

/**
 * Reading JSONL line by line. A JSONL file is kept as its bytes (one copy, outside the JavaScript heap, read in
 * blocks that end at a line break) and a line is decoded into a string only when something reads it. No string
 * of the whole file is ever built unless asked for (a file can be larger than the ~512 MB one JavaScript string
 * holds), and lines that are only parsed once (history a decision drops) never stay in memory as text.
 *
 * A big file's bytes are not held at all: its lines are read again from the file when read (the parse reads each
 * once, then a decision reads the few it counts and keeps), and the file must then still be the one first read
 * (same size, times and inode), or the read fails and nothing is written.
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

/** How much of a file is read at a time; a block is cut at its last line break, so no line spans two blocks. */
const BLOCK = 64 << 20;
/** Files up to this size are held in memory while compacted; bigger ones are read again for the lines kept. */
const HOLD = 32 << 20;
/** How much is read past the size a file had when opened, to find its end. */
const TAIL = 1 << 12;
/** How much of a file's beginning decides whether it is JSONL. */
const HEAD = 1 << 20;
/** How much of a pipe or device is read at a time. */
const CHUNK = 1 << 20;

/**
 * The largest whole-JSON input: 512 MiB, about the longest text one JavaScript string holds (2^29 - 24 UTF-16 units),
 * since a JSON file is decoded as one text and laid out on it. Per message it costs what JSONL does; beyond that it
 * holds the text (a byte a character when all of it is Latin-1, else two) and, while decoding it, the file's bytes:
 * an OpenAI-chat transcript peaks at 3 to 4.5 times its size (Node 20: 103 MB, 444 MB, as JSONL 137 MB; 310 MB,
 * 1.16 GB, as JSONL 217 MB; 516 MB, 1.59 GB within a 2 GB heap, as JSONL 319 MB). The text is at most 1 GiB of the
 * heap. Very short messages cost more in either framing (100 MB of ~40 B messages: 1.5 GB as JSON, 1.2 GB as JSONL),
 * so the limit is the text's, not the memory's (docs/performance.md, "Memory of whole JSON files").
 */
export const JSON_LIMIT = 512 << 20;

/** The most a pipe, FIFO or standard input may bring: it cannot be read twice, so it is held in memory whole. */
export const STREAM_LIMIT = 512 << 20;

/** Sizes past which an input is refused instead of read, in bytes. */
export interface ReadLimits {
  /** The largest whole-JSON input (JSONL has no limit). */
  readonly json: number;
  /** The most a pipe, FIFO or standard input may bring. */
  readonly stream: number;
}

const LIMITS: ReadLimits = { json: JSON_LIMIT, stream: STREAM_LIMIT };

/** The names of standard input: whatever it is (a terminal, a pipe, a file, even /dev/zero) it is read, bounded. */
const STANDARD_INPUT = new Set(['-', '/dev/stdin', '/dev/fd/0', '/proc/self/fd/0', `/proc/${process.pid}/fd/0`]);

/**
 * Cuts blocks of bytes into lines. It gives up (returns false) at anything `decodeSource` refuses (a UTF-16
 * byte-order mark, invalid UTF-8, a NUL byte, a file of only whitespace), so that those errors are always
 * worded and placed by the one function that owns them.
 */
class LineSplitter {
  /** The blocks, and for each line the block it is in and where it starts and ends (before its "\n"). */
  readonly blocks: Buffer[] = [];
  /** Where in the file each block starts. */
  readonly blockStarts: number[] = [];
  readonly blockOf: number[] = [];
  /** The bytes pushed so far. */
  size = 0;
  readonly starts: number[] = [];
  readonly ends: number[] = [];
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
    const index = this.blockStarts.push(fileOffset) - 1;
    if (this.holds) this.blocks.push(block);
    const firstLine = this.starts.length === 0;
    for (;;) {
      const nl = block.indexOf(0x0a, pos);
      this.blockOf.push(index);
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
      this.blockOf.push(-1);
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
function hasContent(block: Buffer, pos: number): boolean {
  for (let i = pos; i < block.length; i++) {
    const b = block[i];
    if (b !== 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d) return true;
  }
  return false;
}

/** The regular file a source was read from and how it was then, to read lines from again (its bytes not held). */
interface Origin {
  readonly path: string;
  readonly stat: Stats;
}

/** Builds a LineSource from split blocks. */
function lineSource(file: string, splitter: LineSplitter, origin?: Origin): LineSource {
  const { blockOf, starts, ends, blockStarts } = splitter;
  const blocks: Buffer[] | null = splitter.holds ? splitter.blocks : null;
  const reader = origin === undefined ? null : new FileLines(file, origin, splitter.spare);
  const line = (k: number): string => {
    const b = blockOf[k] as number;
    if (b === -1) return '';
    if (blocks !== null) return (blocks[b] as Buffer).toString('utf8', starts[k], ends[k]);
    const at = blockStarts[b] as number;
    return (reader as FileLines).read(at + (starts[k] as number), at + (ends[k] as number));
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
class FileLines {
  /** The window's bytes: the start of one buffer, reused for every window (lines are copied out as strings). */
  private window: Buffer = Buffer.alloc(0);
  private buffer: Buffer;
  private windowStart = 0;

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
    if (start < this.windowStart || end > this.windowStart + this.window.length) {
      // Reading on from the window: the next window starts at the line; reading back: it ends at the line.
      const from = start >= this.windowStart ? start : Math.max(0, Math.min(start, end - WINDOW));
      const to = Math.min(Math.max(end, from + WINDOW), this.origin.stat.size);
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

/** How much of a file is read at once when lines are read again. */
const WINDOW = 4 << 20;

/** Whether a file is still the one that was read: same inode, size and times. */
function sameFile(now: Stats, then: Stats): boolean {
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

const JSON_WHITESPACE = /^[ \t\r\n]*$/;

/**
 * Whether a file's beginning shows JSONL by the rule `detectFraming` applies to the whole text (a complete value
 * on the first line, more after it). Only a sure yes counts; anything unclear reads the file the ordinary way.
 * @param head the first bytes of the file, at least one whole line
 */
function looksLikeJsonl(file: string, head: Uint8Array, complete: boolean): boolean {
  const lower = innerName(file).toLowerCase();
  if (lower.endsWith('.jsonl') || lower.endsWith('.ndjson')) return true;
  if (lower.endsWith('.json')) return false;
  let text: string;
  try {
    const cut = complete ? head.length : Buffer.from(head.buffer, head.byteOffset, head.length).lastIndexOf(0x0a) + 1;
    text = new TextDecoder('utf-8', { fatal: true }).decode(head.subarray(0, cut));
  } catch {
    return false;
  }
  const lines = text.split('\n');
  const first = lines.findIndex((l) => !JSON_WHITESPACE.test(l));
  if (first === -1 || first === lines.length - 1) return false;
  try {
    JSON.parse(lines[first] as string);
  } catch {
    return false;
  }
  return lines.slice(first + 1).some((l) => !JSON_WHITESPACE.test(l));
}

/**
 * Decodes bytes already in memory (standard input): JSONL as lines, anything else as one text.
 * @param bytes the content (kept, not copied: the caller must not change it afterwards)
 * @param file the name shown in messages (its extension, if any, says JSON or JSONL)
 * @param jsonLimit the largest whole-JSON content; JSONL has no limit
 * @throws InputError as `decodeSource` does, and for JSON over `jsonLimit`
 */
export function sourceFromBytes(bytes: Uint8Array, file: string, jsonLimit: number = JSON_LIMIT): SourceText {
  const format = compressionOf(bytes, [file]);
  if (format !== null) {
    const original = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
    return decompressed(
      file,
      format,
      bytes.length,
      { format, original: () => original },
      HOLD,
      WINDOW,
      { json: jsonLimit, stream: STREAM_LIMIT },
      (inflater) => inflater.push(bytes),
    );
  }
  return plainSourceFromBytes(bytes, file, jsonLimit);
}

/** `sourceFromBytes` for bytes that are not compressed (or no longer). */
function plainSourceFromBytes(bytes: Uint8Array, file: string, jsonLimit: number): SourceText {
  if (!looksLikeJsonl(file, bytes.subarray(0, HEAD), bytes.length <= HEAD)) {
    if (bytes.length > jsonLimit) throw jsonTooLarge(file, bytes.length, jsonLimit);
    return decodeSource(bytes, file);
  }
  const splitter = new LineSplitter();
  const buffer = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  if (splitter.push(buffer) && splitter.end()) return lineSource(file, splitter);
  return decodeSource(bytes, file);
}

/**
 * Reads and decodes a file: JSONL (by extension, or by its first lines) as lines, anything else whole.
 * A pipe is read whole first, since it cannot be read twice, and refused once it brings more than the stream limit;
 * a device is refused unless it is standard input by name. A whole-JSON file over the JSON limit is refused by its
 * size, having read at most its first MiB (to tell JSONL, which has no limit).
 * @param path the file to read
 * @param file the name shown in messages
 * @param holdUpTo the size up to which a JSONL file's bytes are held; a bigger file's lines are read again from it
 * @param blockSize how much is read at a time (by default a held file at once, a bigger one a window at a time)
 * @param limits the sizes past which an input is refused
 * @throws InputError as `decodeSource` does, "cannot read: …" when the file system refuses, "is a device", and
 *   "too large" past a limit
 */
export function readSourceFile(
  path: string,
  file: string = path,
  holdUpTo: number = HOLD,
  blockSize?: number,
  limits: ReadLimits = LIMITS,
): SourceText {
  return readFile(path, file, holdUpTo, blockSize, limits, true);
}

/** `readSourceFile`; with `detect` false the file is taken as plain text (a decompressed spool). */
function readFile(
  path: string,
  file: string,
  holdUpTo: number,
  blockSize: number | undefined,
  limits: ReadLimits,
  detect: boolean,
): SourceText {
  let fd: number;
  try {
    // Looked at before it is opened: opening a device can have effects of its own (a tape rewinds).
    if (isRefusedDevice(statSync(path), path, file)) throw deviceRefused(file);
    fd = openSync(path, 'r');
  } catch (error) {
    throw error instanceof InputError ? error : cannotRead(error, file);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) {
      // Replaced by a device between the look and the open.
      if (isRefusedDevice(stat, path, file)) throw deviceRefused(file);
      const bytes = readFdBounded(fd, file, limits.stream);
      return detect ? sourceFromBytes(bytes, file, limits.json) : plainSourceFromBytes(bytes, file, limits.json);
    }
    if (detect) {
      const magic = Buffer.alloc(2);
      const format = compressionOf(magic.subarray(0, readSync(fd, magic, 0, 2, 0)), [path, file]);
      if (format !== null) return readCompressed(fd, path, file, stat, format, holdUpTo, blockSize ?? WINDOW, limits);
    }
    const holds = stat.size <= holdUpTo;
    if (!holds || stat.size > limits.json) {
      // Only the beginning is read here, to tell JSONL: a big JSONL file is read once, when its lines are first gone
      // through (see deferredLineSource), and a JSON file over the limit not at all.
      const head = Buffer.allocUnsafe(Math.min(HEAD, stat.size));
      const got = readSync(fd, head, 0, head.length, 0);
      if (!looksLikeJsonl(file, head.subarray(0, got), got === stat.size))
        return readJson(path, file, stat.size, limits.json);
      // A beginning of only whitespace goes the plain way, where decodeSource words what it refuses.
      if (!holds && hasContent(head.subarray(0, got), 0))
        return deferredLineSource(path, file, stat, blockSize ?? WINDOW);
    }
    const splitter = new LineSplitter(holds);
    const outcome = readBlocks(fd, stat.size, file, splitter, holds, null, blockSize ?? (holds ? BLOCK : WINDOW));
    if (outcome === 'json') return readJson(path, file, stat.size, limits.json);
    // Something to refuse: decodeSource reads it whole, and says what and where.
    if (outcome !== 'read' || !splitter.end()) return decodeSource(readFileSync(path), file);
    // Read again only from a file that did not change while it was read.
    const same = sameFile(fstatSync(fd), stat);
    if (!same && !holds) throw changedWhileRead(file);
    return lineSource(file, splitter, same ? { path, stat } : undefined);
  } catch (error) {
    // File-system errors carry a code; anything else is a fault to show as it is.
    throw (error as NodeJS.ErrnoException | undefined)?.code === undefined ? error : cannotRead(error, file);
  } finally {
    closeSync(fd);
  }
}

/**
 * Reads a compressed file: decompressed as it is read, a MiB of it at a time, and then read as a plain file would be
 * (JSONL line by line). The file must not change while it is read; its bytes are held when small (an unchanged result
 * is those bytes), else read again, from the same unchanged file, when asked for.
 */
function readCompressed(
  fd: number,
  path: string,
  file: string,
  stat: Stats,
  format: CompressionFormat,
  holdUpTo: number,
  blockSize: number,
  limits: ReadLimits,
): SourceText {
  const held: Buffer[] | null = stat.size <= holdUpTo ? [] : null;
  const original = (): Buffer => (held !== null ? Buffer.concat(held) : new FileLines(file, { path, stat }).whole());
  const pump = (inflater: Inflater): void => {
    let pos = 0;
    let spare: Buffer | null = null;
    for (;;) {
      // A new buffer each time when the bytes are held; else one, reused.
      const chunk = held !== null ? Buffer.allocUnsafeSlow(CHUNK) : (spare ??= Buffer.allocUnsafeSlow(CHUNK));
      const n = readSync(fd, chunk, 0, CHUNK, pos);
      if (n === 0) break;
      pos += n;
      held?.push(chunk.subarray(0, n));
      inflater.push(chunk.subarray(0, n));
    }
    if (!sameFile(fstatSync(fd), stat)) throw changedWhileRead(file);
  };
  let kept: Buffer | null = null;
  return decompressed(
    file,
    format,
    stat.size,
    { format, original: () => (kept ??= original()) },
    holdUpTo,
    blockSize,
    limits,
    pump,
  );
}

/**
 * Decompresses an input and reads the result as plain text. Up to `holdUpTo` bytes of result are held in memory;
 * past that the result goes to a temporary file (in the system's temporary folder, readable only by this user)
 * that is read like a big plain file and removed by the source's `release`, or when the process exits.
 * @param pump pushes the compressed bytes into the inflater
 * @throws InputError for damaged data, trailing bytes, a result over the decompression limit, and what reading
 *   the result as plain text refuses
 */
function decompressed(
  file: string,
  format: CompressionFormat,
  size: number,
  compression: Compression,
  holdUpTo: number,
  blockSize: number,
  limits: ReadLimits,
  pump: (inflater: Inflater) => void,
): SourceText {
  const spool = new Spool(file, holdUpTo);
  const inflater = new Inflater(format, file, decompressedLimit(size), (piece) => spool.write(piece));
  let source: SourceText;
  try {
    pump(inflater);
    inflater.finish();
    const temp = spool.finish();
    source =
      temp === null
        ? plainSourceFromBytes(spool.bytes(), file, limits.json)
        : readFile(temp, file, 0, blockSize, limits, false);
  } catch (error) {
    spool.discard();
    throw error;
  } finally {
    inflater.close();
  }
  Object.defineProperty(source, 'compressed', { value: compression, enumerable: true });
  Object.defineProperty(source, 'release', { value: () => spool.discard() });
  return source;
}

/** Temporary files of decompressed inputs not released yet, removed when the process exits. */
const spools = new Set<string>();
let spoolCleanup = false;

/** Where a decompressed result goes: memory up to a size, then a temporary file. */
class Spool {
  private readonly pieces: Uint8Array[] = [];
  private held = 0;
  private dir: string | null = null;
  private fd: number | null = null;

  constructor(
    private readonly file: string,
    private readonly holdUpTo: number,
  ) {}

  write(piece: Uint8Array): void {
    if (this.dir === null && this.held + piece.length <= this.holdUpTo) {
      this.pieces.push(piece);
      this.held += piece.length;
      return;
    }
    try {
      if (this.fd === null) this.open();
      for (const p of this.pieces.splice(0)) this.writeAll(p);
      this.writeAll(piece);
    } catch (error) {
      if (error instanceof InputError) throw error;
      throw new InputError(
        `cannot decompress into a temporary file in ${tmpdir()}: ${describeFsError(error)} (set TMPDIR to a folder with room)`,
        this.file,
      );
    }
  }

  /** Ends the writing. @returns the temporary file, or null when the result is held in memory */
  finish(): string | null {
    if (this.fd !== null) {
      closeSync(this.fd);
      this.fd = null;
    }
    return this.dir === null ? null : join(this.dir, 'decompressed');
  }

  /** The result held in memory. */
  bytes(): Buffer {
    return Buffer.concat(this.pieces, this.held);
  }

  /** Removes the temporary file, if any. */
  discard(): void {
    this.pieces.length = 0;
    if (this.fd !== null) {
      closeSync(this.fd);
      this.fd = null;
    }
    if (this.dir !== null) {
      rmSync(this.dir, { recursive: true, force: true });
      spools.delete(this.dir);
      this.dir = null;
    }
  }

  private open(): void {
    if (!spoolCleanup) {
      spoolCleanup = true;
      process.on('exit', () => {
        for (const dir of spools) rmSync(dir, { recursive: true, force: true });
      });
    }
    // A new folder of its own (mode 0700), and the file created in it exclusively: nothing there can be a link.
    this.dir = mkdtempSync(join(tmpdir(), spoolPrefix()));
    spools.add(this.dir);
    this.fd = openSync(join(this.dir, 'decompressed'), 'wx', 0o600);
  }

  private writeAll(piece: Uint8Array): void {
    let done = 0;
    while (done < piece.length) done += writeSync(this.fd as number, piece, done, piece.length - done);
  }
}

/** Reads a whole-JSON file as one text, unless it is over the limit. */
function readJson(path: string, file: string, size: number, limit: number): SourceText {
  if (size > limit) throw jsonTooLarge(file, size, limit);
  return decodeSource(readFileSync(path), file);
}

/**
 * Whether a file is a device to refuse: reading one may never end (/dev/zero, /dev/urandom). Standard input named
 * as such is read whatever it is (often a terminal or a pipe); its reading is bounded. The name shown counts too,
 * since the path read may be where the name led (`/dev/stdin` resolved is `/dev/pts/0`, or `/dev/zero` under `<`).
 */
function isRefusedDevice(stat: Stats, path: string, file: string): boolean {
  return (
    (stat.isCharacterDevice() || stat.isBlockDevice()) &&
    !STANDARD_INPUT.has(resolve(path)) &&
    !STANDARD_INPUT.has(file)
  );
}

/**
 * Reads a pipe or device to its end, and stops as soon as it has brought more than `limit` bytes.
 * @throws InputError "too large" past the limit
 */
function readFdBounded(fd: number, file: string, limit: number): Buffer {
  const chunks: Buffer[] = [];
  const chunk = Buffer.allocUnsafeSlow(CHUNK);
  let total = 0;
  for (;;) {
    const n = readSync(fd, chunk, 0, CHUNK, null);
    if (n === 0) return Buffer.concat(chunks, total);
    total += n;
    if (total > limit) throw streamTooLarge(file, limit);
    // Copied: a pipe gives a little at a time, and the chunk is read into again.
    chunks.push(Buffer.from(chunk.subarray(0, n)));
  }
}

/**
 * Reads a stream (standard input) to its end, held in memory since it cannot be read twice, and stops as soon as it
 * has brought more than `limit` bytes (the stream is then destroyed: nothing more is read from it).
 * @param stream the stream to read
 * @param file the name shown in messages
 * @param limit the most bytes taken
 * @returns the bytes read
 * @throws InputError "too large" past the limit
 */
export async function readStreamBounded(
  stream: AsyncIterable<Uint8Array | string>,
  file = '<stdin>',
  limit: number = STREAM_LIMIT,
): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of stream) {
    const bytes =
      typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    total += bytes.length;
    if (total > limit) throw streamTooLarge(file, limit);
    chunks.push(bytes);
  }
  return Buffer.concat(chunks, total);
}

/** Lines handed to a visitor while a file is read: the next line's number and offset, and what the visitor threw. */
interface Visiting {
  readonly visit: LineVisitor;
  next: number;
  offset: number;
  failed: boolean;
  error: unknown;
}

/**
 * Reads a file from where its descriptor is into a splitter, in blocks cut at line breaks; with `visiting`, each
 * line is handed over as soon as its block is read, so the file is read once. A visitor that throws is not called
 * again, but the file is still read to its end, so a problem of the file itself (invalid UTF-8, a NUL byte) is
 * what gets reported, wherever it is.
 * @param decide whether the first block must first show JSONL (a file read whole that was not looked at yet)
 * @returns 'json' when it is not JSONL, 'refused' at bytes decodeSource must word, else 'read'
 */
function readBlocks(
  fd: number,
  size: number,
  file: string,
  splitter: LineSplitter,
  decide: boolean,
  visiting: Visiting | null,
  blockSize: number,
): 'read' | 'json' | 'refused' {
  let carry: Buffer = Buffer.alloc(0);
  let remaining = size;
  let read = 0;
  let decided = !decide;
  /** A big file's blocks are not kept, so one buffer serves them all (the carried tail moves to its start). */
  let spare: Buffer | null = null;
  for (;;) {
    // Sized to what is left of the file, so a block wastes nothing; at the end, a small read finds the end of
    // the file (or reads on if it grew).
    const want = carry.length + (remaining > 0 ? Math.min(blockSize, remaining) : TAIL);
    let block: Buffer;
    if (splitter.holds) block = Buffer.allocUnsafeSlow(want);
    else {
      // Room for a block and the tail of a line carried over (an exact fit would be too small from the second
      // block on, and each block would be a new buffer whose pages the system must map afresh).
      if (spare === null || spare.length < want) spare = Buffer.allocUnsafeSlow(want + (want >> 2));
      block = spare.subarray(0, want);
      splitter.spare = spare;
    }
    // Overlapping when the block reuses the buffer the tail is in: copy moves bytes as memmove does.
    carry.copy(block);
    const blockStart = read - carry.length;
    const n = readSync(fd, block, carry.length, block.length - carry.length, null);
    remaining -= n;
    read += n;
    const filled = carry.length + n;
    if (!decided) {
      // The first block holds the file's first MiB, or all of a smaller file.
      if (!looksLikeJsonl(file, block.subarray(0, Math.min(filled, HEAD)), filled < HEAD || n === 0)) return 'json';
      decided = true;
    }
    const cut = n === 0 ? filled : block.lastIndexOf(0x0a, filled - 1) + 1;
    if (cut > 0 || n === 0) {
      if (!splitter.push(block.subarray(0, cut), blockStart)) return 'refused';
      if (visiting !== null) visitNewLines(splitter, block, visiting);
    }
    if (n === 0) return 'read';
    // The unfinished last line starts the next block (its bytes here are never read again).
    carry = block.subarray(cut, filled);
  }
}

/** Hands the lines the splitter took from `block` to the visitor, decoded from the block. */
function visitNewLines(splitter: LineSplitter, block: Buffer, visiting: Visiting): void {
  const { starts, ends } = splitter;
  for (let k = visiting.next; k < starts.length; k++) {
    const line = block.toString('utf8', starts[k] as number, ends[k] as number);
    if (!visiting.failed) {
      try {
        visiting.visit(line, k + 1, visiting.offset);
      } catch (error) {
        visiting.failed = true;
        visiting.error = error;
      }
    }
    visiting.offset += line.length + 1;
  }
  visiting.next = starts.length;
}

/**
 * A big JSONL file that has not been read yet: the first time its lines are gone through (`forEachLine`, the
 * parse), the file is read once and each line handed over as its block is read; anything else read from it before
 * reads the file first without visiting. The file must still be the one opened (same size, times and inode).
 */
function deferredLineSource(path: string, file: string, stat: Stats, blockSize: number): LineSource {
  let ready: LineSource | null = null;
  const scan = (visit: LineVisitor | null): LineSource => {
    if (ready !== null) return ready;
    let fd: number;
    try {
      fd = openSync(path, 'r');
    } catch (error) {
      throw changedWhileCompacted(file, describeFsError(error));
    }
    try {
      if (!sameFile(fstatSync(fd), stat)) throw changedWhileCompacted(file, 'its size, times or inode differ');
      const splitter = new LineSplitter(false);
      const visiting: Visiting | null =
        visit === null ? null : { visit, next: 0, offset: 0, failed: false, error: undefined };
      const outcome = readBlocks(fd, stat.size, file, splitter, false, visiting, blockSize);
      if (outcome !== 'read' || !splitter.end()) {
        // The bytes decodeSource refuses: it says what and where.
        decodeSource(readFileSync(path), file);
        throw new InputError('cannot be read as UTF-8 lines', file);
      }
      if (!sameFile(fstatSync(fd), stat)) throw changedWhileCompacted(file, 'its size, times or inode differ');
      const source = lineSource(file, splitter, { path, stat });
      ready = source;
      if (visiting?.failed === true) throw visiting.error;
      return source;
    } catch (error) {
      throw (error as NodeJS.ErrnoException | undefined)?.code === undefined ? error : cannotRead(error, file);
    } finally {
      closeSync(fd);
    }
  };
  return {
    file,
    heldAs: 'lines',
    get bom() {
      return scan(null).bom;
    },
    get eol() {
      return scan(null).eol;
    },
    get lines() {
      return scan(null).lines;
    },
    get length() {
      return scan(null).length;
    },
    byteLength: stat.size,
    get finalNewline() {
      return scan(null).finalNewline;
    },
    get text() {
      return scan(null).text;
    },
    bytes: () => scan(null).bytes(),
    visitLines(visit) {
      if (ready === null) scan(visit);
      else forEachLine(ready, visit);
    },
  };
}

function changedWhileRead(file: string): InputError {
  return new InputError('the file changed while it was being read; nothing was written for it', file);
}

function changedWhileCompacted(file: string, how: string): InputError {
  return new InputError(`the file changed while it was being compacted (${how}); nothing was written for it`, file);
}

function deviceRefused(file: string): InputError {
  return new InputError('is a device, not a transcript file', file);
}

function streamTooLarge(file: string, limit: number): InputError {
  return new InputError(
    `the input is too large (more than ${describeSize(limit)} from a pipe or standard input, which is held in memory whole; that is the limit)`,
    file,
  );
}

function jsonTooLarge(file: string, size: number, limit: number): InputError {
  return new InputError(
    `is ${describeSize(size)}; whole JSON files over ${describeSize(limit)} are refused (a JSON file is read as one text, and a JavaScript string holds about 512 MiB at most; a JSONL file has no such limit)`,
    file,
  );
}

/** A size in MiB, KiB or bytes, rounded up (a size just over a limit is never shown as the limit). */
function describeSize(bytes: number): string {
  if (bytes >= 1 << 20) return `${Math.ceil(bytes / (1 << 20))} MiB`;
  if (bytes >= 1 << 10) return `${Math.ceil(bytes / (1 << 10))} KiB`;
  return `${bytes} bytes`;
}

function cannotRead(error: unknown, file: string): InputError {
  return new InputError(`cannot read: ${describeFsError(error)}`, file);
}
