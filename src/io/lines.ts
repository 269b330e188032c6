import { closeSync, fstatSync, openSync, readFileSync, readSync, statSync, type Stats } from 'node:fs';
import { resolve } from 'node:path';
import {
  compressionOf,
  decompressedLimit,
  Inflater,
  innerName,
  type Compression,
  type CompressionFormat,
} from './compressed.js';
import { InputError } from '../errors.js';
import { describeFsError } from './files.js';
import {
  FileLines,
  forEachLine,
  hasContent,
  LineSplitter,
  lineSource,
  sameFile,
  WINDOW,
  type LineSource,
  type LineVisitor,
} from './line-source.js';
import {
  cannotRead,
  changedWhileCompacted,
  changedWhileRead,
  deviceRefused,
  jsonTooLarge,
  streamTooLarge,
} from './read-errors.js';
import { Spool } from './spool.js';
import { decodeSource, type SourceText } from './source.js';

export { forEachLine, isLineSource, positionOf, type LineSource, type LineVisitor } from './line-source.js';

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
    const line = block.toString('utf8', starts.at(k), ends.at(k));
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
