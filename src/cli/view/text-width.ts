import stringWidth from 'string-width';
import { escapeUnsafe } from '../../safe-text.js';

/**
 * How wide text is on a terminal, and how to cut it to a width without breaking a character. The columns are
 * string-width's (East Asian Wide and Fullwidth characters and emoji two, combining marks, zero-width characters and
 * colour codes none, East Asian "ambiguous" characters one, as most terminals draw them), its tables
 * get-east-asian-width's, kept current with each Unicode version. One choice is ours: a pictograph with the
 * text-presentation selector (U+FE0E) is one column, as terminals that honour the selector draw it.
 * Control characters never reach the terminal: `previewOf` shows them as escapes.
 */

/** The variation selector that asks for a pictograph's text form. */
const TEXT_SELECTOR = '\ufe0e';
const PICTOGRAPHIC = /[\p{Extended_Pictographic}\p{Regional_Indicator}]/u;

let segmenter: Intl.Segmenter | undefined;

/** The grapheme clusters of a string, lazily (a long message is only read as far as a cut needs). */
export function* graphemes(text: string): Generator<string> {
  segmenter ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  for (const { segment } of segmenter.segment(text)) yield segment;
}

/** Whether a cluster is a pictograph (or keycap) asking for its text form, which is one column wide. */
function isTextPresentation(cluster: string): boolean {
  return cluster.includes(TEXT_SELECTOR) && (PICTOGRAPHIC.test(cluster) || cluster.includes('\u20e3'));
}

/** Columns one grapheme cluster takes. */
export function graphemeWidth(cluster: string): number {
  // A printable ASCII character, by far the most common cluster of a cut.
  if (cluster.length === 1 && cluster >= ' ' && cluster <= '~') return 1;
  return isTextPresentation(cluster) ? 1 : stringWidth(cluster);
}

/**
 * The number of terminal columns a string takes (colour codes count 0, other control characters too: escape them
 * before printing).
 * @param text the string as it will be printed
 */
export function displayWidth(text: string): number {
  const width = stringWidth(text);
  if (!text.includes(TEXT_SELECTOR)) return width;
  let narrower = 0;
  for (const g of graphemes(text)) if (isTextPresentation(g)) narrower += stringWidth(g) - 1;
  return width - narrower;
}

/** Whether a string is plain printable ASCII, where width is length (the common case, kept fast). */
function isPrintableAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
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
