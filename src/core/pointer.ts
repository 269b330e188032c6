// The text left in place of an offloaded result, as Haystack 3.4 writes it (`_offload_content_blocks`, PR #12534), and
// every pointer swc or Haystack ever wrote read back.

import { codePointLength } from './code-points.js';

/** How every pointer begins, of any Haystack release: its own module, so pruning can tell one. */
export const POINTER_START = 'Tool result offloaded to ';

/** How the pointers of Haystack before 3.4 (and of swc before it followed 3.4) go on: `'REF' (N characters)`. */
const OLD_POINTER_START = "Tool result offloaded to '";

/** Whether a result's text is a pointer an offloading wrote. */
export function isPointerText(text: string): boolean {
  return text.startsWith(POINTER_START);
}

/**
 * A reference as the pointer quotes it: `\` and `'` escaped with a backslash, so a path holding `'` (`O'Brien.jsonl`)
 * still ends where its quote does. A reference with neither reads exactly as Haystack writes it.
 */
export function quoteReference(reference: string): string {
  return reference.replace(/[\\']/g, '\\$&');
}

/** The first `chars` code points of a text, then `...` when the text is longer (Haystack's preview). */
function previewOf(text: string, chars: number): string {
  let end = 0;
  for (let n = 0; n < chars && end < text.length; n++) end += (text.codePointAt(end) as number) > 0xffff ? 2 : 1;
  return `${text.slice(0, end)}${end < text.length ? '...' : ''}`;
}

/**
 * One stored part of a result: its reference, and its text, or for an image or file its size in bytes, its label
 * (its MIME type, else `image` or `file`) and its file name.
 */
export type StoredPart =
  | { readonly reference: string; readonly text: string }
  | {
      readonly reference: string;
      readonly bytes: number;
      readonly label: string;
      readonly filename: string | null;
    };

/**
 * How Haystack describes one offloaded part: `text (N characters) at 'REF'. Preview: …`, or
 * `LABEL[ named 'FILE'] (N bytes) at 'REF'`.
 */
function describeText(part: StoredPart, previewChars: number): string {
  if (!('text' in part)) {
    const named = part.filename !== null && part.filename !== '' ? ` named '${part.filename}'` : '';
    return `${part.label}${named} (${part.bytes} bytes) at '${quoteReference(part.reference)}'`;
  }
  return `text (${codePointLength(part.text)} characters) at '${quoteReference(part.reference)}'. Preview: ${previewOf(part.text, previewChars)}`;
}

/** `mimetypes.guess_extension` for the MIME types tools return (Python's table: `image/jpeg` is `.jpg`). */
const EXTENSIONS: Readonly<Record<string, string>> = {
  'image/png': '.png',
  'image/jpeg': '.jpg',
  'image/gif': '.gif',
  'image/webp': '.webp',
  'image/svg+xml': '.svg',
  'image/bmp': '.bmp',
  'image/tiff': '.tiff',
  'application/pdf': '.pdf',
  'application/json': '.json',
  'application/zip': '.zip',
  'text/plain': '.txt',
  'text/csv': '.csv',
  'text/html': '.html',
  'text/markdown': '.md',
  'audio/mpeg': '.mp3',
  'audio/wav': '.wav',
  'video/mp4': '.mp4',
};

/**
 * A binary part's store extension as Haystack picks it: the file name's suffix, then the MIME type's, then `.bin`.
 * @returns the extension with its dot
 */
export function binaryExtension(filename: string | null, mimeType: string | null): string {
  const name = (filename ?? '').split(/[/\\]/).pop() ?? '';
  const dot = name.lastIndexOf('.');
  const suffix = dot <= 0 || dot === name.length - 1 ? '' : name.slice(dot);
  return suffix || (mimeType !== null ? EXTENSIONS[mimeType.toLowerCase()] : undefined) || '.bin';
}

/**
 * Haystack 3.4's pointer: one part is `Tool result offloaded to text (N characters) at 'REF'. Preview: …`; several
 * are `Tool result offloaded to K files:` and one numbered line each.
 * @param parts the stored parts, in order (at least one)
 * @param previewChars code points of each text kept in the pointer (`preview_chars`)
 */
export function pointerText(parts: readonly StoredPart[], previewChars: number): string {
  const described = parts.map((p) => describeText(p, previewChars));
  if (described.length === 1) return `${POINTER_START}${described[0] as string}`;
  return [`${POINTER_START}${described.length} files:`, ...described.map((d, k) => `${k + 1}. ${d}`)].join('\n');
}

/** The pointer of Haystack before 3.4: `Tool result offloaded to 'REF' (N characters). Preview: …` (200 code points). */
export function oldPointerText(reference: string, text: string): string {
  return `${OLD_POINTER_START}${quoteReference(reference)}' (${codePointLength(text)} characters). Preview: ${previewOf(text, 200)}`;
}

/** A store reference a pointer gives, and the length it states (characters for a text, bytes for a binary part). */
export interface ParsedPointer {
  readonly reference: string;
  readonly characters: number;
}

/** A quoted reference from `at` (just past its opening quote), unescaped: the reference and the index past its quote. */
function quoted(text: string, at: number): { reference: string; end: number } | null {
  let reference = '';
  let i = at;
  for (; i < text.length; i++) {
    const c = text[i] as string;
    if (c === "'") break;
    if (c === '\\' && i + 1 < text.length) {
      i++;
      reference += text[i];
    } else reference += c;
  }
  return i >= text.length || reference === '' ? null : { reference, end: i + 1 };
}

/** One description of a 3.4 pointer at `at`: a text (`text (N characters) at 'REF'. Preview: `) or a binary part. */
function description(text: string, at: number): ParsedPointer | null {
  const head = /^text \((\d+) characters\) at '/.exec(text.slice(at, at + 48));
  if (head !== null) {
    const q = quoted(text, at + head[0].length);
    if (q === null || !text.startsWith('. Preview: ', q.end)) return null;
    return { reference: q.reference, characters: Number(head[1]) };
  }
  // `image/png (N bytes) at 'REF'`, `application/pdf named 'q3.pdf' (N bytes) at 'REF'`: on one line.
  const lineEnd = text.indexOf('\n', at);
  const line = text.slice(at, lineEnd === -1 ? text.length : lineEnd);
  const bytes = / \((\d+) bytes\) at '/.exec(line);
  if (bytes === null) return null;
  const q = quoted(text, at + bytes.index + bytes[0].length);
  return q === null ? null : { reference: q.reference, characters: Number(bytes[1]) };
}

/**
 * Every reference a pointer gives, of any form swc or Haystack wrote: before 3.4 (`'REF' (N characters)`), 3.4's one
 * part, and 3.4's numbered list of several parts.
 * @returns the references in order, or null when the text is not a whole pointer's beginning
 */
export function parsePointers(text: string): ParsedPointer[] | null {
  if (text.startsWith(OLD_POINTER_START)) {
    const q = quoted(text, OLD_POINTER_START.length);
    if (q === null) return null;
    const tail = /^ \((\d+) characters\)\. Preview: /.exec(text.slice(q.end, q.end + 64));
    return tail === null ? null : [{ reference: q.reference, characters: Number(tail[1]) }];
  }
  if (!text.startsWith(POINTER_START)) return null;
  const at = POINTER_START.length;
  const list = /^(\d+) files:\n/.exec(text.slice(at, at + 32));
  if (list === null) {
    const one = description(text, at);
    return one === null ? null : [one];
  }
  const out: ParsedPointer[] = [];
  let from = at + list[0].length;
  for (let k = 1; k <= Number(list[1]); k++) {
    // A preview may hold line breaks: item k is the first `k. ` at a line's start that reads as a description.
    let found: ParsedPointer | null = null;
    for (let p = from; p !== -1 && found === null; p = text.indexOf(`\n${k}. `, p + 1)) {
      const start = p === from ? p : p + 1;
      if (!text.startsWith(`${k}. `, start)) continue;
      found = description(text, start + `${k}. `.length);
      if (found !== null) from = start + `${k}. `.length;
    }
    if (found === null) return null;
    out.push(found);
  }
  return out;
}

/**
 * Whether a text is meant as a pointer: one that reads as one, or begins as only a pointer does (`'REF' (`, `text (`,
 * `K files:`), so an edited pointer is told apart from a result that merely starts with the same words.
 */
export function isPointerLike(text: string): boolean {
  if (!text.startsWith(POINTER_START)) return false;
  const rest = text.slice(POINTER_START.length, POINTER_START.length + 32);
  return (
    rest.startsWith("'") || rest.startsWith('text (') || /^\d+ files:\n/.test(rest) || parsePointers(text) !== null
  );
}

/**
 * The first reference a pointer gives (see `parsePointers`).
 * @returns null when the text is not a whole pointer's beginning
 */
export function parsePointer(text: string): ParsedPointer | null {
  return parsePointers(text)?.[0] ?? null;
}
