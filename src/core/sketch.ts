/**
 * Deciding from sketches: what pruning and offloading can tell of a tool result from its length and its ends (see
 * `Message.sketch`), so that a file read slim is not read and parsed again for every result. Every question here
 * answers exactly as the same question on the whole text would, or says it cannot tell (`undefined`, or null), and
 * then the caller reads the text.
 */
import type { Message, ResultSketch, TextSketch } from './types.js';

/** A message's sketched results, or undefined when its adapter gives none (or the caller wants the texts). */
export function sketchedResults(message: Message, use: boolean): readonly ResultSketch[] | undefined {
  if (!use || message.sketch === undefined) return undefined;
  const results = message.sketch();
  return results === undefined || results.length === 0 ? undefined : results;
}

/** The whole text, when the sketch holds it. */
export function wholeText(sketch: TextSketch): string | null {
  return sketch.head.length === sketch.length ? sketch.head : null;
}

/** Whether the text starts with `prefix`, or undefined when its sketch cannot tell. */
export function startsWith(sketch: TextSketch, prefix: string): boolean | undefined {
  const whole = wholeText(sketch);
  if (whole !== null) return whole.startsWith(prefix);
  if (prefix.length > sketch.length) return false;
  if (prefix.length <= sketch.head.length) return sketch.head.startsWith(prefix);
  return prefix.startsWith(sketch.head) ? undefined : false;
}

/** Whether the text ends with `suffix`, or undefined when its sketch cannot tell. */
export function endsWith(sketch: TextSketch, suffix: string): boolean | undefined {
  const whole = wholeText(sketch);
  if (whole !== null) return whole.endsWith(suffix);
  if (suffix.length > sketch.length) return false;
  if (suffix.length <= sketch.tail.length) return sketch.tail.endsWith(suffix);
  return suffix.endsWith(sketch.tail) ? undefined : false;
}

/** Whether the text is longer than `over` code points (Python's `len`), or undefined when its sketch cannot tell. */
export function longerThanCodePoints(
  sketch: TextSketch,
  over: number,
  codePoints: (text: string) => number,
): boolean | undefined {
  const whole = wholeText(sketch);
  if (whole !== null) return codePoints(whole) > over;
  // A code point is one or two units.
  if (sketch.length <= over) return false;
  if (Math.ceil(sketch.length / 2) > over) return true;
  return undefined;
}

const LETTER_OR_NUMBER = /[\p{L}\p{N}]/u;
const LETTER_NUMBER_OR_MARK = /[\p{L}\p{N}\p{M}]/u;

/**
 * The end of a text from its last letter or digit on, or null when the text's last letter, digit or mark is a mark,
 * or it has none. A counter's newline cost depends only on that end (a BPE pre-token piece that holds a letter or
 * digit ends with it: `tailNewlineCost` in src/tokens/bpe.ts reads the same end), so it can stand for the text when
 * the cost of the text's joining newline is all a count needs (`TokenCounter.measureApart`). Given any end of a text
 * (its sketch's tail), the answer is the whole text's or null.
 */
export function letterEnd(text: string): string | null {
  let s = text.length;
  while (s > 0) {
    const c = text.charCodeAt(s - 1);
    if (c < 0x80) {
      if ((c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)) return text.slice(s - 1);
      s--;
      continue;
    }
    const high = s > 1 ? text.charCodeAt(s - 2) : 0;
    const start = c >= 0xdc00 && c <= 0xdfff && high >= 0xd800 && high <= 0xdbff ? s - 2 : s - 1;
    const char = text.slice(start, s);
    if (LETTER_NUMBER_OR_MARK.test(char)) return LETTER_OR_NUMBER.test(char) ? text.slice(start) : null;
    s = start;
  }
  return null;
}

/**
 * The end of a tool message's rendered text (`renderMessage`: one `[tool:NAME] TEXT` line per result) from its last
 * letter or digit on, as `letterEnd` gives it, read from the message's sketch; null when the sketch cannot tell.
 */
export function renderedLetterEnd(results: readonly ResultSketch[]): string | null {
  const last = results[results.length - 1] as ResultSketch;
  const whole = wholeText(last.text);
  if (whole === null) return letterEnd(last.text.tail);
  return letterEnd(`[tool:${last.name}${last.error ? ' (error)' : ''}] ${whole}`);
}
