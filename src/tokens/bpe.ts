import { letterEnd } from '../core/sketch.js';
import { elementReader } from '../core/lazy-list.js';
import type { Rendered, TokenCounter } from '../core/types.js';
import { TOKENS_PER_FILE, TOKENS_PER_IMAGE } from './options.js';
import { createPieceCounter, type PieceCount, type PieceCounter, type Resume } from './pieces.js';

/** What content with no text costs: tokens per image and per file. */
export interface FlatCosts {
  readonly tokensPerImage: number;
  readonly tokensPerFile: number;
}

/** Options that make an encoding read special-token text as plain text. */
type SpecialOptions = { disallowedSpecial?: Set<string>; allowedSpecial?: Set<string> };

/** The part of a gpt-tokenizer encoding this counter uses. */
export interface Encoding {
  countTokens(text: string, options?: SpecialOptions): number;
  /** The tokens of each pre-token piece in turn: lets a count stop at a limit inside a long text. */
  encodeGenerator?(text: string, options?: SpecialOptions): Iterable<number[]>;
  /** Empties the encoding's cache of merged pieces (shared by everything that uses the encoding in this thread). */
  clearMergeCache?(): void;
}

/**
 * gpt-tokenizer evicts from a full merge cache one entry at a time, and on varied text (many distinct words) each
 * eviction gets slower as deleted entries pile up: measured here, 60 files of random words counted in 23 s with the
 * cache left alone and 4.9 s when it was emptied now and then. So the cache is emptied just before it fills: its
 * room is looked at after every CACHE_CHECK_CHARS characters counted, and it is emptied when fewer entries than that
 * are left (a character adds at most one piece). Text with few distinct pieces (ordinary prose) never fills it and
 * keeps it warm. Without a view of the cache (another gpt-tokenizer version), it is emptied after every
 * CLEAR_CACHE_EVERY_CHARS characters instead (ordinary prose then counts ~15% slower).
 */
const CACHE_CHECK_CHARS = 16_384;
const CLEAR_CACHE_EVERY_CHARS = 512_000;

/**
 * Without the encoding's pieces at hand (another gpt-tokenizer version), a text at least this long is counted
 * through the public generator, stopping once it passes what is left of a limit, when it is also at least 8
 * characters per token left (so it most likely passes it): counting history that will be dropped would cost far
 * more than the decision needs.
 */
const PIECEWISE_MIN_LENGTH = 16_384;
const PIECEWISE_CHARS_PER_TOKEN = 8;

/** What a count that stopped at a limit left: the number it passed the limit with, and where to go on from. */
interface Bound {
  readonly atLeast: number;
  readonly resume: Resume | undefined;
}

/** Input text is never read as special tokens: `<|endoftext|>` in a transcript is just text. */
const PLAIN = { disallowedSpecial: new Set<string>(), allowedSpecial: new Set<string>() };

const LETTER_OR_NUMBER = /[\p{L}\p{N}]/u;

/**
 * A counter over a BPE encoding that counts each message once. Every rendered message starts with `[`, and the
 * encodings' pre-tokenizers always split before that `[` when a newline precedes it, so the tokens of a joined group
 * are the sum of `count(text + "\n")` for each message but the last, plus `count(last)`.
 * @param name the counter's name, as outputs show it
 * @param encoding a gpt-tokenizer encoding module
 * @param pieces how to count piece by piece (by default, through the encoding's inside when it has the one known)
 * @param costs tokens per image and per file (checked by the caller; by default Haystack's 85 and 1000)
 */
export function createBpeCounter(
  name: string,
  encoding: Encoding,
  pieces: PieceCounter | null = createPieceCounter(encoding),
  costs: FlatCosts = { tokensPerImage: TOKENS_PER_IMAGE, tokensPerFile: TOKENS_PER_FILE },
): TokenCounter {
  const { tokensPerImage, tokensPerFile } = costs;
  const { count, countWithin } = textCounter(encoding, pieces);
  const within = messageCounter(count, countWithin, pieces !== null, encoding.encodeGenerator !== undefined);
  const tailCount = tailCounter(count);
  return {
    name,
    measure(messages, limit) {
      const at = elementReader(messages);
      const last = messages.length - 1;
      let total = 0;
      for (let i = last; i >= 0; i--) {
        const r = at(i);
        const flat = r.images * tokensPerImage + r.files * tokensPerFile;
        total += within(r, i === last, limit === undefined ? undefined : limit - total - flat) + flat;
        if (limit !== undefined && total > limit) return total;
      }
      return total;
    },
    measureApart(messages, apart, limit) {
      const at = elementReader(messages);
      // A message apart costs, in the group, its count alone plus what its joining newline adds (nothing as the
      // last): only that newline is counted, on a short tail of its text. Those come first, since a newline is not
      // known never to lower a count; every other message then only adds.
      const last = messages.length - 1;
      let total = 0;
      for (const k of apart) {
        if (k < last && k >= 0) total += tailNewlineCost(at(k).text, tailCount);
      }
      for (let i = last; i >= 0; i--) {
        if (apart.has(i)) continue;
        const r = at(i);
        const flat = r.images * tokensPerImage + r.files * tokensPerFile;
        total += within(r, i === last, limit === undefined ? undefined : limit - total - flat) + flat;
        if (limit !== undefined && total > limit) return total;
      }
      return total;
    },
  };
}

/** Counts of one text: whole (`count`), or until they pass a room (`countWithin`); from where a count stopped. */
interface TextCounter {
  count(text: string, from?: Resume): number;
  countWithin(text: string, room: number, from?: Resume): PieceCount;
}

/**
 * Counts texts through the encoding's pieces when they are at hand, else through its public API, and empties its
 * merge cache before it fills (see CACHE_CHECK_CHARS).
 * @param encoding the encoding
 * @param pieces its piece counter, or null
 * @returns the two ways of counting a text, as plain functions (called directly on the hot path)
 */
function textCounter(encoding: Encoding, pieces: PieceCounter | null): TextCounter {
  const generator = encoding.encodeGenerator?.bind(encoding);
  let counted = 0;
  /** Empties the merge cache before it fills (see CACHE_CHECK_CHARS). */
  const track = (text: string): void => {
    counted += text.length;
    if (counted < CACHE_CHECK_CHARS) return;
    const room = pieces?.cacheRoom();
    if (room === undefined) {
      if (counted < CLEAR_CACHE_EVERY_CHARS) return;
    } else if (room > Math.max(counted, CACHE_CHECK_CHARS)) {
      counted = 0;
      return;
    }
    counted = 0;
    encoding.clearMergeCache?.();
  };
  const count = (text: string, from?: Resume): number => {
    track(text);
    return pieces !== null ? pieces.count(text, undefined, from).tokens : encoding.countTokens(text, PLAIN);
  };
  /**
   * Counts `text` until the count passes `room`.
   * @returns the exact count, or (when it stopped) a number above `room` that the exact count is at least
   */
  const countWithin = (text: string, room: number, from?: Resume): PieceCount => {
    track(text);
    if (pieces !== null) return pieces.count(text, room, from);
    let tokens = 0;
    for (const piece of (generator as NonNullable<typeof generator>)(text, PLAIN)) {
      tokens += piece.length;
      if (tokens > room) return { tokens, exact: false };
    }
    return { tokens, exact: true };
  };
  return { count, countWithin };
}

/**
 * Each message's count as the last of its group (plain) or before another (linked), remembered per rendered message,
 * with the lower bounds left by counts that stopped at a room inside a text and where to go on from.
 * @param count counts a text whole
 * @param countWithin counts a text until it passes a room
 * @param hasPieces whether the encoding's pieces are at hand (a count can then always stop at a room)
 * @param hasGenerator whether the encoding has the public generator (to stop inside long texts without pieces)
 * @returns a message's count, or (given a room) some number above the room that the exact count is at least
 */
function messageCounter(
  count: TextCounter['count'],
  countWithin: TextCounter['countWithin'],
  hasPieces: boolean,
  hasGenerator: boolean,
): (r: Rendered, isLast: boolean, room: number | undefined) => number {
  const linked = new WeakMap<Rendered, number>();
  const plain = new WeakMap<Rendered, number>();
  // Lower bounds left by counts that stopped at a limit inside a text, and where to go on from (when the counter can).
  const linkedAtLeast = new WeakMap<Rendered, Bound>();
  const plainAtLeast = new WeakMap<Rendered, Bound>();
  /**
   * Whether to count with the room: always when the encoding's pieces are at hand (it costs nothing extra);
   * through the public generator only for a long text that most likely passes it.
   */
  const canStop = (r: Rendered, room: number | undefined): room is number =>
    room !== undefined &&
    (hasPieces ||
      (hasGenerator &&
        r.text.length >= PIECEWISE_MIN_LENGTH &&
        r.text.length > (Math.max(room, 0) + 1) * PIECEWISE_CHARS_PER_TOKEN));
  /** A message's count as the last of its group (plain) or before another (linked), or some number above `room`. */
  const within = (r: Rendered, isLast: boolean, room: number | undefined): number => {
    const exact = (isLast ? plain : linked).get(r);
    if (exact !== undefined) return exact;
    const bounds = isLast ? plainAtLeast : linkedAtLeast;
    const bound = bounds.get(r);
    if (room !== undefined && bound !== undefined && bound.atLeast > room) return bound.atLeast;
    if (canStop(r, room)) {
      // A count that stopped before goes on from where it stopped.
      const { tokens, exact: whole, resume } = countWithin(isLast ? r.text : `${r.text}\n`, room, bound?.resume);
      if (!whole) {
        bounds.set(r, { atLeast: tokens, resume });
        return tokens;
      }
      if (!isLast) linked.set(r, tokens);
      else plain.set(r, tokens);
      return tokens;
    }
    return isLast ? plainOf(r) : linkedOf(r);
  };
  const linkedOf = (r: Rendered): number => {
    let n = linked.get(r);
    if (n === undefined) {
      n = count(r.text + '\n', linkedAtLeast.get(r)?.resume);
      linked.set(r, n);
    }
    return n;
  };
  const plainOf = (r: Rendered): number => {
    let n = plain.get(r);
    if (n === undefined) {
      // A plain count that stopped is finished; otherwise the linked count less what the newline adds.
      const started = plainAtLeast.get(r)?.resume;
      n = started !== undefined ? count(r.text, started) : linkedOf(r) - newlineCost(r.text, (t) => count(t));
      plain.set(r, n);
    }
    return n;
  };
  return within;
}

/**
 * Counts the short tails `tailNewlineCost` looks at, remembering them.
 * @param count counts a text whole
 * @returns the counter of tails
 */
function tailCounter(count: TextCounter['count']): (t: string) => number {
  // The ends tailNewlineCost counts repeat (`"}`, `.`, `)`): their counts are remembered, a few thousand at most.
  const tails = new Map<string, number>();
  const tailCount = (t: string): number => {
    if (t.length > 64) return count(t);
    let n = tails.get(t);
    if (n === undefined) {
      if (tails.size >= 4096) tails.clear();
      n = count(t);
      tails.set(t, n);
    }
    return n;
  };
  return tailCount;
}

/**
 * How many tokens a trailing newline adds to `text`, found by re-counting only a short tail that starts at a
 * pre-token boundary (after a letter or digit before a space, or after a newline before a letter or digit).
 */
export function newlineCost(text: string, count: (t: string) => number): number {
  const lastChar = lastCodePoint(text);
  // After a letter or digit the newline is always a pre-token of its own.
  if (lastChar !== '' && LETTER_OR_NUMBER.test(lastChar)) return count('\n');
  const floor = Math.max(1, text.length - 512);
  for (let p = text.length - 1; p >= floor; p--) {
    const prev = text.charCodeAt(p - 1);
    const here = text.charCodeAt(p);
    const boundary =
      (here === 0x20 && isLetterOrNumberBefore(text, p)) || (prev === 0x0a && isLetterOrNumberFrom(text, p));
    if (boundary) {
      const tail = text.slice(p);
      return count(tail + '\n') - count(tail);
    }
  }
  return count(text + '\n') - count(text);
}

/**
 * What a trailing newline adds to `text`, as `newlineCost` gives it, re-counting only what follows the last letter or
 * digit. Every pre-token piece that holds a letter or digit ends with it, or with marks (o200k) or a contraction's
 * letters after it, so when the text's last letter, digit or mark is a letter or digit, the pieces up to it are the
 * same with the newline and the tail after it is split as it would be alone. Otherwise `newlineCost` decides.
 * (`letterEnd` finds that end: the core reads it from a sketch when the rest of the text is not at hand.)
 */
export function tailNewlineCost(text: string, count: (t: string) => number): number {
  const end = letterEnd(text);
  if (end === null) return newlineCost(text, count);
  const tail = end.slice((end.codePointAt(0) as number) > 0xffff ? 2 : 1);
  if (tail === '') return count('\n');
  return count(`${tail}\n`) - count(tail);
}

/** Whether the code point that ends just before `p` is a letter or number. */
function isLetterOrNumberBefore(text: string, p: number): boolean {
  let start = p - 1;
  const c = text.charCodeAt(start);
  if (c >= 0xdc00 && c <= 0xdfff && start > 0) start--;
  return isLetterOrNumberFrom(text, start);
}

/** Whether the code point that starts at `p` is a letter or number. */
function isLetterOrNumberFrom(text: string, p: number): boolean {
  const cp = text.codePointAt(p);
  return cp !== undefined && LETTER_OR_NUMBER.test(String.fromCodePoint(cp));
}

function lastCodePoint(text: string): string {
  if (text.length === 0) return '';
  let i = text.length - 1;
  const c = text.charCodeAt(i);
  if (c >= 0xdc00 && c <= 0xdfff && i > 0) i--;
  return String.fromCodePoint(text.codePointAt(i) as number);
}
