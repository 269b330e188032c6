import { InputError } from '../errors.js';
import type { Compression } from './compressed.js';

/** A decoded input file and the conventions its writer used, so output can follow them. */
export interface SourceText {
  readonly file: string;
  /** The text without a byte-order mark. */
  readonly text: string;
  readonly bom: boolean;
  readonly eol: '\n' | '\r\n';
  /** Set when the input was compressed: its format and bytes as read (its result is compressed the same way). */
  readonly compressed?: Compression;
  /**
   * Frees what reading held outside memory (a decompressed input's temporary file). Call it once the source and
   * every result made from it are no longer read; without it, the process's exit frees it.
   */
  readonly release?: () => void;
}

const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * The encoding a byte-order mark other than UTF-8's names. UTF-32 LE's mark (FF FE 00 00) starts like UTF-16 LE's
 * (FF FE), so it is looked for first; a UTF-16 file whose first character is NUL would read as UTF-32 LE, which no
 * transcript starts with.
 */
function wideEncodingOf(bytes: Uint8Array): 'UTF-32 LE' | 'UTF-32 BE' | 'UTF-16' | null {
  const [a, b, c, d] = bytes;
  if (a === 0xff && b === 0xfe && c === 0x00 && d === 0x00) return 'UTF-32 LE';
  if (a === 0x00 && b === 0x00 && c === 0xfe && d === 0xff) return 'UTF-32 BE';
  if ((a === 0xff && b === 0xfe) || (a === 0xfe && b === 0xff)) return 'UTF-16';
  return null;
}

/**
 * Decodes a file's bytes as strict UTF-8 and refuses what no transcript can be: empty, whitespace only,
 * invalid UTF-8 (UTF-16 and UTF-32 with a byte-order mark named as such), NUL bytes, more text than one JavaScript string can hold.
 * @param bytes the file's content
 * @param file its name, for errors
 */
export function decodeSource(bytes: Uint8Array, file: string): SourceText {
  if (bytes.length === 0) throw new InputError('the file is empty', file);
  const wide = wideEncodingOf(bytes);
  if (wide === 'UTF-16')
    throw new InputError(
      'the file is UTF-16 (it starts with a UTF-16 byte-order mark); convert it to UTF-8 first',
      file,
    );
  if (wide !== null)
    throw new InputError(
      `the file is ${wide} (it starts with a ${wide} byte-order mark); convert it to UTF-8 first`,
      file,
    );
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    const at = firstInvalidUtf8(bytes);
    // Valid UTF-8 that still cannot be decoded is longer than the longest string the JavaScript engine can hold.
    if (at === bytes.length)
      throw new InputError(
        `the file is too large to read as text (${mebibytes(bytes.length)}; the limit is about 512 MiB)`,
        file,
      );
    const { line, column } = lineColumnOfByte(bytes, at);
    throw new InputError(
      `invalid UTF-8 (byte 0x${(bytes[at] ?? 0).toString(16).padStart(2, '0')} at byte offset ${at})`,
      file,
      line,
      column,
    );
  }
  const bom = text.charCodeAt(0) === 0xfeff;
  if (bom) text = text.slice(1);
  if (text === '') throw new InputError('the file is empty (it holds only a byte-order mark)', file);
  const nul = text.indexOf('\u0000');
  if (nul !== -1) {
    const { line, column } = lineColumn(text, nul);
    throw new InputError('NUL byte in the file (is it binary?)', file, line, column);
  }
  if (text.trim() === '') throw new InputError('the file holds only whitespace', file);
  const lf = text.indexOf('\n');
  const eol = lf > 0 && text.charCodeAt(lf - 1) === 0x0d ? '\r\n' : '\n';
  return { file, text, bom, eol };
}

/** 1-based line and column (in code points) of a string offset. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  let column = 1;
  for (let i = lineStart; i < offset; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xdc00 && c <= 0xdfff && i > lineStart) continue;
    column++;
  }
  return { line, column };
}

/** 1-based line and column (in code points, as `lineColumn` counts them) of a byte offset in valid UTF-8. */
function lineColumnOfByte(bytes: Uint8Array, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  for (let i = lineStart; i < offset; i++) {
    if (bytes[i] === 0x0a) {
      line++;
      lineStart = i + 1;
    }
  }
  let column = 1;
  // Every byte that is not a continuation byte starts a code point.
  for (let i = lineStart; i < offset; i++) if (((bytes[i] as number) & 0xc0) !== 0x80) column++;
  return { line, column };
}

function mebibytes(n: number): string {
  return `${(n / 1048576).toFixed(0)} MiB`;
}

/** Offset of the first byte that breaks UTF-8. */
function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i] as number;
    let need: number;
    let min: number;
    if (b < 0x80) {
      i++;
      continue;
    } else if (b >= 0xc2 && b <= 0xdf) {
      need = 1;
      min = 0x80;
    } else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      min = 0x800;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      min = 0x10000;
    } else return i;
    let cp = b & (0x3f >> need);
    for (let k = 1; k <= need; k++) {
      const c = bytes[i + k];
      if (c === undefined || (c & 0xc0) !== 0x80) return i;
      cp = (cp << 6) | (c & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += need + 1;
  }
  return bytes.length;
}

/** Encodes output text, putting back a byte-order mark the input had. */
export function encodeOutput(text: string, bom: boolean): Uint8Array {
  return Buffer.from(bom ? `\ufeff${text}` : text, 'utf8');
}
