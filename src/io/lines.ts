import { closeSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { InputError } from '../errors.js';
import { describeFsError } from './files.js';
import { decodeSource, lineColumn, type SourceText } from './source.js';

/**
 * Reading JSONL line by line. A JSONL file is decoded one line at a time into a string of its own, so no string of
 * the whole file is ever built (a file can be larger than the ~512 MB one JavaScript string holds) and the file's
 * bytes are never held whole (the file is read in 1 MiB chunks). The result is still a SourceText: its `text` is
 * joined from the lines only if something asks for it.
 */

/** A decoded JSONL file held as its lines. */
export interface LineSource extends SourceText {
  /** The text split at each "\n" (a line keeps its "\r"): `lines.join("\n")` is `text`. */
  readonly lines: readonly string[];
  /** The length of `text` in UTF-16 units, known without building it. */
  readonly length: number;
}

/** Whether a source is held as lines (its `text` is built only on demand). */
export function isLineSource(source: SourceText): source is LineSource {
  return Array.isArray((source as Partial<LineSource>).lines);
}

/** The length of a source's text, without building the text of a line source. */
export function textLength(source: SourceText): number {
  return isLineSource(source) ? source.length : source.text.length;
}

/**
 * Calls `visit` for each line of a source (its text up to a "\n", a "\r" kept) with the line's 1-based number and
 * the offset in `text` where it starts. A line source hands out its own lines; other text is sliced.
 */
export function forEachLine(source: SourceText, visit: (line: string, lineNo: number, offset: number) => void): void {
  if (isLineSource(source)) {
    let offset = 0;
    const lines = source.lines;
    // The empty piece after a final "\n" is not a line.
    const count = lines.length > 1 && lines[lines.length - 1] === '' ? lines.length - 1 : lines.length;
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

const CHUNK = 1 << 20;
const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Cuts bytes into decoded lines. It gives up (returns false) at anything `decodeSource` refuses (a UTF-16
 * byte-order mark, invalid UTF-8, a NUL byte, a file of only whitespace), so that those errors are always
 * worded and placed by the one function that owns them.
 */
class LineSplitter {
  readonly lines: string[] = [];
  length = 0;
  bom = false;
  private bytes = 0;
  private carry: Buffer[] = [];
  private content = false;
  private failed = false;

  /** Takes the next chunk; false once the input needs the exact checks. */
  push(chunk: Uint8Array): boolean {
    if (this.failed) return false;
    if (chunk.length === 0) return true;
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
    if (buffer.indexOf(0) !== -1) return this.fail();
    let pos = 0;
    // The first chunk is the whole file or a full 1 MiB, so a byte-order mark is never cut.
    if (this.bytes === 0) {
      if ((buffer[0] === 0xff && buffer[1] === 0xfe) || (buffer[0] === 0xfe && buffer[1] === 0xff)) return this.fail();
      if (buffer[0] === 0xef && buffer[1] === 0xbb && buffer[2] === 0xbf) {
        this.bom = true;
        pos = 3;
      }
    }
    this.bytes += buffer.length;
    for (;;) {
      const nl = buffer.indexOf(0x0a, pos);
      if (nl === -1) break;
      if (!this.line(this.joinCarry(buffer.subarray(pos, nl)))) return this.fail();
      pos = nl + 1;
    }
    // Copied: the caller may reuse its buffer for the next chunk.
    if (pos < buffer.length) this.carry.push(Buffer.from(buffer.subarray(pos)));
    return true;
  }

  /** Ends the input; false when it needs the exact checks (empty, only whitespace, bad last line). */
  end(): boolean {
    if (this.failed) return false;
    if (!this.line(this.joinCarry(Buffer.alloc(0)))) return this.fail();
    return this.content;
  }

  private joinCarry(tail: Buffer): Buffer {
    if (this.carry.length === 0) return tail;
    const whole = Buffer.concat([...this.carry, tail]);
    this.carry = [];
    return whole;
  }

  private line(bytes: Buffer): boolean {
    let line: string;
    try {
      line = decoder.decode(bytes);
    } catch {
      return false;
    }
    if (!this.content && line.trim() !== '') this.content = true;
    this.lines.push(line);
    this.length += line.length + (this.lines.length > 1 ? 1 : 0);
    return true;
  }

  private fail(): false {
    this.failed = true;
    return false;
  }
}

/** Builds a LineSource from split lines. */
function lineSource(file: string, splitter: LineSplitter): LineSource {
  const lines = splitter.lines;
  const first = lines[0] ?? '';
  const eol = lines.length > 1 && first.length > 0 && first.charCodeAt(first.length - 1) === 0x0d ? '\r\n' : '\n';
  let text: string | undefined;
  return {
    file,
    bom: splitter.bom,
    eol,
    lines,
    length: splitter.length,
    get text(): string {
      if (text === undefined) {
        try {
          text = lines.join('\n');
        } catch {
          throw new InputError('this file is too large to be handled as one text (about 512 MiB is the limit); only its lines can be read', file);
        }
      }
      return text;
    },
  };
}

const JSON_WHITESPACE = /^[ \t\r\n]*$/;

/**
 * Whether a file's beginning shows JSONL by the rule `detectFraming` applies to the whole text (a complete value
 * on the first line, more after it). Only a sure yes counts; anything unclear reads the file the ordinary way.
 * @param head the first bytes of the file, at least one whole line
 */
function looksLikeJsonl(file: string, head: Uint8Array, complete: boolean): boolean {
  const lower = file.toLowerCase();
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
 * @param bytes the content
 * @param file the name shown in messages (its extension, if any, says JSON or JSONL)
 * @throws InputError as `decodeSource` does
 */
export function sourceFromBytes(bytes: Uint8Array, file: string): SourceText {
  if (!looksLikeJsonl(file, bytes.subarray(0, CHUNK), bytes.length <= CHUNK)) return decodeSource(bytes, file);
  const splitter = new LineSplitter();
  if (splitter.push(bytes) && splitter.end()) return lineSource(file, splitter);
  return decodeSource(bytes, file);
}

/**
 * Reads and decodes a file: JSONL (by extension, or by its first lines) one line at a time, anything else whole.
 * A pipe or other special file is read whole first, since it cannot be read twice.
 * @param path the file to read
 * @param file the name shown in messages
 * @throws InputError as `decodeSource` does, and "cannot read: …" when the file system refuses
 */
export function readSourceFile(path: string, file: string = path): SourceText {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    throw cannotRead(error, file);
  }
  try {
    if (!fstatSync(fd).isFile()) return sourceFromBytes(readFileSync(fd), file);
    const buffer = Buffer.allocUnsafe(CHUNK);
    let n = readSync(fd, buffer, 0, CHUNK, null);
    if (!looksLikeJsonl(file, buffer.subarray(0, n), n < CHUNK)) return decodeSource(readFileSync(path), file);
    const splitter = new LineSplitter();
    while (n > 0) {
      if (!splitter.push(buffer.subarray(0, n))) break;
      n = readSync(fd, buffer, 0, CHUNK, null);
    }
    if (n === 0 && splitter.end()) return lineSource(file, splitter);
    // Something to refuse: let decodeSource say what and where.
    return decodeSource(readFileSync(path), file);
  } catch (error) {
    // File-system errors carry a code; anything else is a fault to show as it is.
    throw (error as NodeJS.ErrnoException | undefined)?.code === undefined ? error : cannotRead(error, file);
  } finally {
    closeSync(fd);
  }
}

function cannotRead(error: unknown, file: string): InputError {
  return new InputError(`cannot read: ${describeFsError(error)}`, file);
}
