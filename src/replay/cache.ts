import { elementReader } from '../core/lazy-list.js';
import type { Rendered } from '../core/types.js';
import type { ReplayCost, ReplayPrices } from './types.js';

/**
 * The prefix-cache model of a replay. A provider's prompt cache serves the longest prefix of a request that an
 * earlier request (with its reply) already held; here the earlier request is the previous call's, and prefixes are
 * compared message by message on the rendered text the hook counts.
 */

/**
 * What a prefix cache would have read and written for one call.
 * @param sent the history sent, rendered (or its texts), in order
 * @param previous the previous call's sent history followed by its reply, or null for the first call
 * @param prefixTokens the tokens of the first `n` sent messages
 * @param tokens the tokens of the whole history sent
 * @param prices the price model (its minimum cacheable prefix)
 * @param known how many leading messages are known to be the same in both (compared from there on)
 * @returns `read`: the matching prefix's tokens, 0 below the minimum; `write`: the rest of the request when the
 *   request reaches the minimum, else 0
 */
export function prefixCache(
  sent: readonly (string | Rendered)[],
  previous: readonly (string | Rendered)[] | null,
  prefixTokens: (n: number) => number,
  tokens: number,
  prices: Pick<ReplayPrices, 'minCacheablePrefix'>,
  known = 0,
): { read: number; write: number } {
  const same = previous === null ? 0 : commonPrefix(sent, previous, known);
  const matched = same === 0 ? 0 : same === sent.length ? tokens : prefixTokens(same);
  const read = matched >= prices.minCacheablePrefix ? matched : 0;
  const write = tokens >= prices.minCacheablePrefix ? tokens - read : 0;
  return { read, write };
}

/** How many leading messages two lists share (the first `known` known to): the same rendered object, or the same text. */
export function commonPrefix(a: readonly (string | Rendered)[], b: readonly (string | Rendered)[], known = 0): number {
  const n = Math.min(a.length, b.length);
  // Read through their producers: the previous request is a view over its history and reply.
  const at = elementReader(a);
  const bt = elementReader(b);
  let i = Math.min(known, n);
  while (i < n && isSame(at(i), bt(i))) i++;
  return i;
}

/** Whether two rendered messages read the same (an image or file placeholder counts as its text says). */
function isSame(a: string | Rendered, b: string | Rendered): boolean {
  if (a === b) return true;
  if (typeof a === 'string' || typeof b === 'string')
    return (typeof a === 'string' ? a : a.text) === (typeof b === 'string' ? b : b.text);
  return a.text === b.text && a.images === b.images && a.files === b.files;
}

/**
 * The money a call (or a sum of calls) costs: uncached input at the input price, cache reads and writes at theirs,
 * output at the output price, all per million tokens.
 */
export function costOf(
  figures: { readonly input: number; readonly cacheRead: number; readonly cacheWrite: number; readonly output: number },
  prices: ReplayPrices,
): ReplayCost {
  const perToken = (price: number, tokens: number): number => (price * tokens) / 1_000_000;
  const input = perToken(prices.input, figures.input - figures.cacheRead - figures.cacheWrite);
  const cacheRead = perToken(prices.cacheRead, figures.cacheRead);
  const cacheWrite = perToken(prices.cacheWrite, figures.cacheWrite);
  const output = perToken(prices.output, figures.output);
  return { input, cacheRead, cacheWrite, output, total: input + cacheRead + cacheWrite + output };
}

/** Adds costs part by part. */
export function addCosts(a: ReplayCost, b: ReplayCost): ReplayCost {
  return {
    input: a.input + b.input,
    cacheRead: a.cacheRead + b.cacheRead,
    cacheWrite: a.cacheWrite + b.cacheWrite,
    output: a.output + b.output,
    total: a.total + b.total,
  };
}

export const NO_COST: ReplayCost = { input: 0, cacheRead: 0, cacheWrite: 0, output: 0, total: 0 };
