import { escapeUnsafe } from '../../safe-text.js';

/**
 * How wide text is on a terminal, and how to cut it to a width without breaking a character.
 * East Asian wide and fullwidth characters and emoji take two columns, combining marks and zero-width
 * characters none, everything else one (East Asian "ambiguous" characters count as narrow, as most
 * terminals draw them). Control characters never reach the terminal: `previewOf` shows them as escapes.
 */

/** Code point ranges of East Asian Wide (W) and Fullwidth (F) characters outside the emoji blocks. */
const WIDE: ReadonlyArray<readonly [number, number]> = [
  [0x1100, 0x115f],
  [0x2329, 0x232a],
  [0x2e80, 0x2e99],
  [0x2e9b, 0x2ef3],
  [0x2f00, 0x2fd5],
  [0x2ff0, 0x2fff],
  [0x3000, 0x303e],
  [0x3041, 0x3096],
  [0x3099, 0x30ff],
  [0x3105, 0x312f],
  [0x3131, 0x318e],
  [0x3190, 0x31e5],
  [0x31ef, 0x321e],
  [0x3220, 0x3247],
  [0x3250, 0x4dbf],
  [0x4e00, 0xa48c],
  [0xa490, 0xa4c6],
  [0xa960, 0xa97c],
  [0xac00, 0xd7a3],
  [0xf900, 0xfaff],
  [0xfe10, 0xfe19],
  [0xfe30, 0xfe52],
  [0xfe54, 0xfe66],
  [0xfe68, 0xfe6b],
  [0xff01, 0xff60],
  [0xffe0, 0xffe6],
  [0x16fe0, 0x16fe4],
  [0x16ff0, 0x16ff1],
  [0x17000, 0x187f7],
  [0x18800, 0x18cd5],
  [0x18d00, 0x18d08],
  [0x1aff0, 0x1affe],
  [0x1b000, 0x1b122],
  [0x1b132, 0x1b132],
  [0x1b150, 0x1b152],
  [0x1b155, 0x1b155],
  [0x1b164, 0x1b167],
  [0x1b170, 0x1b2fb],
  [0x1f200, 0x1f202],
  [0x1f210, 0x1f23b],
  [0x1f240, 0x1f248],
  [0x1f250, 0x1f251],
  [0x1f260, 0x1f265],
  [0x20000, 0x2fffd],
  [0x30000, 0x3fffd],
];

// eslint-disable-next-line no-misleading-character-class -- combining marks are matched one code point at a time
const ZERO_WIDTH = /^[\p{Mn}\p{Me}\p{Cf}\u1160-\u11ff\ufe00-\ufe0f]$/u;
const EMOJI_PRESENTATION = /^\p{Emoji_Presentation}$/u;
const PICTOGRAPHIC = /[\p{Extended_Pictographic}\p{Regional_Indicator}]/u;
/** What turns a pictograph into an emoji picture: VS16, ZWJ sequences, skin tones, flags, keycaps. */
// Each of these code points is looked for alone, never as a sequence in the class.
// eslint-disable-next-line no-misleading-character-class
const EMOJI_SEQUENCE = /[\ufe0f\u200d\u{1f3fb}-\u{1f3ff}\p{Regional_Indicator}\u20e3]/u;

let segmenter: Intl.Segmenter | undefined;

/** The grapheme clusters of a string, lazily (a long message is only read as far as a cut needs). */
export function* graphemes(text: string): Generator<string> {
  segmenter ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  for (const { segment } of segmenter.segment(text)) yield segment;
}

function isWide(cp: number): boolean {
  let lo = 0;
  let hi = WIDE.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const [a, b] = WIDE[mid] as readonly [number, number];
    if (cp < a) hi = mid - 1;
    else if (cp > b) lo = mid + 1;
    else return true;
  }
  return false;
}

/**
 * Columns one code point takes when it stands alone.
 * @returns 0 for combining marks, format and zero-width characters and controls, 2 for wide ones, else 1
 */
export function codePointWidth(cp: number): 0 | 1 | 2 {
  if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0)) return 0;
  if (cp < 0x300) return 1;
  const ch = String.fromCodePoint(cp);
  if (ZERO_WIDTH.test(ch)) return 0;
  if (isWide(cp) || EMOJI_PRESENTATION.test(ch)) return 2;
  return 1;
}

/**
 * Columns one grapheme cluster takes: its first character's width, except that emoji sequences take two
 * and a text-presentation selector (U+FE0E) makes a pictograph narrow.
 */
export function graphemeWidth(cluster: string): number {
  const first = cluster.codePointAt(0);
  if (first === undefined) return 0;
  if (cluster.length === 1 || (cluster.length === 2 && first > 0xffff)) return codePointWidth(first);
  if (PICTOGRAPHIC.test(cluster) || cluster.includes('\u20e3')) {
    if (cluster.includes('\ufe0e')) return 1;
    if (EMOJI_SEQUENCE.test(cluster)) return 2;
  }
  return codePointWidth(first);
}

/** Whether a string is plain printable ASCII, where width is length (the common case, kept fast). */
function isPrintableAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

/**
 * The number of terminal columns a string takes (control characters count 0: escape them first).
 * @param text the string as it will be printed, without colour codes
 */
export function displayWidth(text: string): number {
  if (isPrintableAscii(text)) return text.length;
  let width = 0;
  for (const g of graphemes(text)) width += graphemeWidth(g);
  return width;
}

/** A grapheme as it is printed: unchanged, or with its unsafe characters escaped. */
function visible(cluster: string): string {
  return escapeUnsafe(cluster, 'readable');
}

/**
 * Shows control characters, newlines, line separators and bidi overrides as escapes (`\n`, `\t`, `\x1b`),
 * so text stays on one line and cannot drive the terminal.
 */
export function escapeControls(text: string): string {
  return escapeUnsafe(text, 'readable');
}

/**
 * Cuts text to at most `width` columns without splitting a grapheme (or an escape), ending with `…` when cut.
 * Unsafe characters are escaped first. Reads only as much of `text` as the cut needs.
 * @param text any text; may be long and hold newlines
 * @param width the columns available
 * @returns the visible text, at most `width` columns wide
 */
export function cutToWidth(text: string, width: number): string {
  if (width <= 0) return '';
  if (isPrintableAscii(text)) return text.length <= width ? text : `${text.slice(0, Math.max(width - 1, 0))}…`;
  const pieces: string[] = [];
  const widths: number[] = [];
  let used = 0;
  let cut = false;
  for (const g of graphemes(text)) {
    const shown = visible(g);
    const w = shown === g ? graphemeWidth(g) : shown.length;
    if (used + w > width) {
      cut = true;
      break;
    }
    pieces.push(shown);
    widths.push(w);
    used += w;
  }
  if (!cut) return pieces.join('');
  // Make room for the ellipsis (one column), dropping whole graphemes from the end.
  while (pieces.length > 0 && used + 1 > width) {
    used -= widths.pop() as number;
    pieces.pop();
  }
  // A dropped wide character can leave a column free; trailing zero-width pieces stay attached to their base.
  return `${pieces.join('')}…`;
}

/**
 * A one-line preview of a message text: surrounding whitespace trimmed, unsafe characters escaped,
 * cut to `width` columns.
 */
export function previewOf(text: string, width: number): string {
  return cutToWidth(text.trim(), width);
}

/** Pads with spaces on the right to `width` columns (never cuts). */
export function padEndTo(text: string, width: number): string {
  const w = displayWidth(text);
  return w >= width ? text : text + ' '.repeat(width - w);
}

/** Pads with spaces on the left to `width` columns (never cuts). */
export function padStartTo(text: string, width: number): string {
  const w = displayWidth(text);
  return w >= width ? text : ' '.repeat(width - w) + text;
}

/**
 * Cuts text to at most `width` columns from the left, keeping its end (`…` first when cut): for file paths,
 * whose name is at the end.
 */
export function cutStartToWidth(text: string, width: number): string {
  const shown = escapeControls(text);
  if (displayWidth(shown) <= width) return shown;
  if (width <= 0) return '';
  const pieces = [...graphemes(shown)];
  let used = 1;
  let start = pieces.length;
  while (start > 0) {
    const w = graphemeWidth(pieces[start - 1] as string);
    if (used + w > width) break;
    used += w;
    start--;
  }
  return `…${pieces.slice(start).join('')}`;
}

/**
 * Breaks text into lines of at most `width` columns at spaces (unsafe characters escaped first);
 * a word longer than a line is cut.
 * @param indent put before every line but the first
 */
export function wrapToWidth(text: string, width: number, indent = ''): string[] {
  const words = escapeControls(text).split(' ');
  const lines: string[] = [];
  let line = '';
  for (const word of words) {
    const candidate = line === '' ? word : `${line} ${word}`;
    const room = width - (lines.length === 0 ? 0 : displayWidth(indent));
    if (displayWidth(candidate) <= room || line === '') {
      line = candidate;
      continue;
    }
    lines.push(line);
    line = word;
  }
  lines.push(line);
  return lines.map((l, k) => cutToWidth(k === 0 ? l : indent + l, width));
}
