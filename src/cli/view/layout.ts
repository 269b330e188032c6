import type { ChalkInstance } from 'chalk';
import { cutToWidth, displayWidth, padEndTo, padStartTo, previewOf } from './text-width.js';

// The text-layout toolkit of every view: pieces of text with a tone, laid out in plain text to a width and only then
// coloured (so colour never changes what fits), rows of columns, items flowed onto lines, and bars.

/** What a piece of a line means; each meaning has one colour. */
export type Tone = 'plain' | 'removed' | 'kept' | 'protected' | 'note' | 'strong' | 'hunk' | 'bad' | 'good';

/** A piece of a line: visible text (already escaped) and its meaning. */
export interface Piece {
  readonly text: string;
  readonly tone?: Tone;
}

/** Colours a piece by its meaning. */
export function paint(color: ChalkInstance, piece: Piece): string {
  switch (piece.tone) {
    case 'removed':
    case 'bad':
      return color.red(piece.text);
    case 'kept':
    case 'good':
      return color.green(piece.text);
    case 'protected':
      return color.dim(piece.text);
    case 'note':
      return color.yellow(piece.text);
    case 'strong':
      return color.bold(piece.text);
    case 'hunk':
      return color.cyan(piece.text);
    default:
      return piece.text;
  }
}

/**
 * Lays out one line: cuts its pieces to `width` columns (an ellipsis where cut), then colours them.
 * Trailing spaces are dropped so padding never shows as a coloured tail.
 */
export function emitLine(pieces: readonly Piece[], width: number, color: ChalkInstance): string {
  const out: Piece[] = [];
  let left = width;
  for (const piece of pieces) {
    if (left <= 0) break;
    const w = displayWidth(piece.text);
    if (w <= left) {
      out.push(piece);
      left -= w;
      continue;
    }
    out.push({ text: cutToWidth(piece.text, left), tone: piece.tone });
    break;
  }
  while (out.length > 0) {
    const last = out[out.length - 1] as Piece;
    let end = last.text.length;
    while (end > 0 && last.text.charCodeAt(end - 1) === 0x20) end--;
    const trimmed = last.text.slice(0, end);
    if (trimmed !== '') {
      out[out.length - 1] = { text: trimmed, tone: last.tone };
      break;
    }
    out.pop();
  }
  return out.map((p) => paint(color, p)).join('');
}

/** One table row: a group's marker, label, message range, size, cost and preview. */
export interface Row {
  readonly marker: string;
  readonly label: string;
  readonly range: string;
  readonly count: string;
  readonly tokens: string;
  /** Raw text, escaped and cut to what is left of the width. */
  readonly text: string;
  readonly tone: Tone;
}

/**
 * Lays out rows in aligned columns (widths measured in terminal columns, so CJK and emoji keep alignment).
 * @returns the lines, each at most `width` columns
 */
export function layoutRows(rows: readonly Row[], width: number, color: ChalkInstance): string[] {
  const w = (pick: (r: Row) => string): number => rows.reduce((m, r) => Math.max(m, displayWidth(pick(r))), 0);
  const label = w((r) => r.label);
  const range = w((r) => r.range);
  const count = w((r) => r.count);
  const tokens = w((r) => r.tokens);
  return rows.map((r) => {
    const fixed = `${r.marker} ${padEndTo(r.label, label)}  ${padEndTo(r.range, range)}  ${padStartTo(r.count, count)}  ${padStartTo(r.tokens, tokens)}  `;
    const left = width - displayWidth(fixed);
    const text = left > 0 ? previewOf(r.text, left) : '';
    return emitLine([{ text: fixed + text, tone: r.tone }], width, color);
  });
}

/** Places items side by side, two spaces apart, starting a new line when the next one does not fit. */
export function flowItems(items: readonly (readonly Piece[])[], width: number, color: ChalkInstance): string[] {
  const lines: string[] = [];
  let line: Piece[] = [];
  let used = 0;
  for (const item of items) {
    const w = item.reduce((a, p) => a + displayWidth(p.text), 0);
    if (line.length > 0 && used + 2 + w > width) {
      lines.push(emitLine(line, width, color));
      line = [];
      used = 0;
    }
    if (line.length > 0) {
      line.push({ text: '  ' });
      used += 2;
    }
    line.push(...item);
    used += w;
  }
  if (line.length > 0) lines.push(emitLine(line, width, color));
  return lines;
}

/** Joins neighbouring pieces of the same tone, so a bar is a few colour codes, not one per column. */
export function merge(pieces: readonly Piece[]): Piece[] {
  const out: Piece[] = [];
  for (const p of pieces) {
    const last = out[out.length - 1];
    if (last !== undefined && last.tone === p.tone) out[out.length - 1] = { text: last.text + p.text, tone: p.tone };
    else out.push(p);
  }
  return out;
}

/**
 * Splits `cells` columns among parts in proportion to their tokens: each part ends at its cumulative share of
 * `scale`, rounded, so the bar is proportional as a whole and a boundary is never more than half a column off (a
 * part too small for half a column gets none; the legend still names it).
 * @returns the columns of each part; together at most `cells`
 */
export function allocate(tokens: readonly number[], scale: number, cells: number): number[] {
  if (scale <= 0 || cells <= 0) return tokens.map(() => 0);
  let sum = 0;
  let previous = 0;
  return tokens.map((t) => {
    sum += Math.max(t, 0);
    const boundary = Math.min(cells, Math.round((sum / scale) * cells));
    const columns = boundary - previous;
    previous = boundary;
    return columns;
  });
}

/** The column the target mark stands before: its true position, and when the target is met never inside the kept part. */
export function markColumn(target: number, scale: number, cells: number, keptColumns: number, met: boolean): number {
  const at = scale <= 0 ? 0 : Math.min(cells, Math.max(0, Math.round((target / scale) * cells)));
  return met ? Math.max(at, keptColumns) : at;
}
