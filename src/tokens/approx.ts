import type { Rendered, TokenCounter } from '../core/types.js';

/** Flat costs of content that has no text, as Haystack's approximate counter charges them. */
export const TOKENS_PER_IMAGE = 85;
export const TOKENS_PER_FILE = 1000;

/** Counts Unicode code points (what Python's len() gives), not UTF-16 units. */
export function codePointLength(s: string): number {
  let pairs = 0;
  for (let i = 0; i < s.length - 1; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        pairs++;
        i++;
      }
    }
  }
  return s.length - pairs;
}

/**
 * floor(code points / 4) of the group's joined text, plus flat image and file costs: exactly Haystack's
 * `ApproximateTokenCounter` defaults. Additive over messages (the joins are one code point each).
 */
export function createApproxCounter(): TokenCounter {
  const lengths = new WeakMap<Rendered, number>();
  const lengthOf = (r: Rendered): number => {
    let n = lengths.get(r);
    if (n === undefined) {
      n = codePointLength(r.text);
      lengths.set(r, n);
    }
    return n;
  };
  return {
    name: 'approx',
    measure(messages, limit) {
      let chars = messages.length > 0 ? messages.length - 1 : 0;
      let flat = 0;
      for (let i = messages.length - 1; i >= 0; i--) {
        const r = messages[i] as Rendered;
        chars += lengthOf(r);
        flat += r.images * TOKENS_PER_IMAGE + r.files * TOKENS_PER_FILE;
        // Every message adds at least its flat cost and its join, so a partial total above the limit is final.
        if (limit !== undefined && Math.floor(chars / 4) + flat > limit && i > 0) return Math.floor(chars / 4) + flat;
      }
      return Math.floor(chars / 4) + flat;
    },
  };
}
