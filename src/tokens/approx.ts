import { codePointLength } from '../core/code-points.js';
import { elementReader } from '../core/lazy-list.js';
import type { Rendered, TokenCounter } from '../core/types.js';
import { counterName, resolveCounterOptions, type CounterOptions, type CounterWithSettings } from './options.js';

/** Haystack's defaults: 4 characters per token, and the flat costs of content that has no text. */
export { CHARS_PER_TOKEN, TOKENS_PER_FILE, TOKENS_PER_IMAGE } from './options.js';

export { codePointLength } from '../core/code-points.js';

/**
 * Haystack's `ApproximateTokenCounter`: `int(len(text) / chars_per_token)` over the group's texts joined with
 * newlines (code points, float division, truncated), plus each image and file at its flat cost, those inside tool
 * results included. Additive over messages before the division (each join is one code point).
 * @param options characters per token and the flat costs; any left out take Haystack's defaults (4, 85, 1000)
 * @returns the counter, named `approx` with the defaults and with its settings otherwise (see `counterName`)
 * @throws RangeError for a rate that is not a positive finite number or a cost that is not a whole number >= 0
 */
export function createApproxCounter(options: CounterOptions = {}): TokenCounter & CounterWithSettings {
  const settings = resolveCounterOptions(options, 'approx');
  const { tokensPerImage, tokensPerFile } = settings;
  const rate = settings.charsPerToken as number;
  /** Python's `int()` of a non-negative quotient: truncation is the floor. */
  const tokensOf = (chars: number): number => Math.trunc(chars / rate);
  const lengths = new WeakMap<Rendered, number>();
  const lengthOf = (r: Rendered): number => {
    let n = lengths.get(r);
    if (n === undefined) {
      n = codePointLength(r.text);
      lengths.set(r, n);
    }
    return n;
  };
  const counter: TokenCounter & CounterWithSettings = {
    name: counterName('approx', settings),
    settings,
    measure(messages, limit) {
      const at = elementReader(messages);
      let chars = messages.length > 0 ? messages.length - 1 : 0;
      let flat = 0;
      for (let i = messages.length - 1; i >= 0; i--) {
        const r = at(i);
        chars += lengthOf(r);
        flat += r.images * tokensPerImage + r.files * tokensPerFile;
        // Every message adds at least its flat cost and its join, so a partial total above the limit is final.
        if (limit !== undefined && tokensOf(chars) + flat > limit && i > 0) return tokensOf(chars) + flat;
      }
      return tokensOf(chars) + flat;
    },
    measureApart(messages, apart, limit) {
      const at = elementReader(messages);
      // The division's floor is superadditive: the whole less each message apart (its text and flat costs alone) is
      // at least the count of the rest with every join, so the messages apart are never read.
      let chars = messages.length > 0 ? messages.length - 1 : 0;
      let flat = 0;
      for (let i = messages.length - 1; i >= 0; i--) {
        if (apart.has(i)) continue;
        const r = at(i);
        chars += lengthOf(r);
        flat += r.images * tokensPerImage + r.files * tokensPerFile;
        if (limit !== undefined && tokensOf(chars) + flat > limit) return tokensOf(chars) + flat;
      }
      return tokensOf(chars) + flat;
    },
  };
  SUMS.set(counter, {
    lengthOf,
    flatOf: (r) => r.images * tokensPerImage + r.files * tokensPerFile,
    countOf: (chars, flat, n) => (n === 0 ? 0 : tokensOf(chars + n - 1) + flat),
  });
  return counter;
}

/**
 * An approx counter's count of a group, from sums over its messages: the group's count is a function of its
 * messages' total length, total flat cost and number, so a list's prefixes are counted from running sums (a replay
 * grows its history a message at a time and asks for its prefixes' counts).
 */
export interface PrefixSums {
  /** A message's text length in code points. */
  lengthOf(r: Rendered): number;
  /** A message's flat cost (its images and files). */
  flatOf(r: Rendered): number;
  /** The count of `n` messages of total length `chars` and total flat cost `flat`: `measure` of them. */
  countOf(chars: number, flat: number, n: number): number;
}

const SUMS = new WeakMap<TokenCounter, PrefixSums>();

/** The prefix sums of a counter made by `createApproxCounter`; undefined for any other counter. */
export function prefixSumsOf(counter: TokenCounter): PrefixSums | undefined {
  return SUMS.get(counter);
}
