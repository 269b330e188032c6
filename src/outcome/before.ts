import { lazyList } from '../core/lazy-list.js';
import { renderMessage } from '../core/render.js';
import type { Message, Rendered, TokenCounter } from '../core/types.js';
import { itemsReader } from '../formats/types.js';
import type { Planned, TokenFigure } from './types.js';

/**
 * The tokens before, the one figure the command line and the library give: exact where it can be had cheaply, an
 * estimate above that. The library passes its messages' JSON texts as the item lengths of a file of them, one a line,
 * so both give the same figure for the same messages.
 */

/** File characters of the removed messages whose tokens are counted exactly for an estimate: about 16,000 tokens. */
const SAMPLE_CHARS = 64_000;

/** Characters per token an estimate assumes when no sampled message has a length (Haystack's 4). */
const FALLBACK_CHARS_PER_TOKEN = 4;

/**
 * The tokens before: the decision's own count when it counted everything; a count of the whole conversation when
 * exact counting is asked for; otherwise an estimate (`estimateBefore`).
 * @param settings the counter, and whether to count exactly (read only where the decision stopped early)
 */
export function beforeFigure(c: Planned, settings: { counter: TokenCounter; exactBefore?: boolean }): TokenFigure {
  const { plan } = c;
  if (plan.tokensBeforeExact) return { tokens: plan.tokensBefore, exact: true };
  const messages = c.input ?? c.normalized.messages;
  if (settings.exactBefore === true) {
    const tokens =
      messages.length === 0
        ? 0
        : settings.counter.measure(lazyList(messages.length, (k) => renderMessage(messages[k] as Message)));
    return { tokens, exact: true };
  }
  return { tokens: estimateBefore(c, settings.counter), exact: false };
}

/**
 * An estimate of the tokens before, for a decision that stopped counting early: the kept messages as they were read,
 * counted exactly, plus the rest at the tokens per file character of an exactly counted sample of the removed
 * messages (every k-th, about SAMPLE_CHARS characters of the file; all of them when they are fewer), so that tool
 * results and prose weigh in as often as they occur. The rate is per character of the file (`itemLength`), applied to
 * the rest's length in the file, so a big file's removed messages are never all rendered. Kept messages a chain
 * replaced (pruned, offloaded) are estimated with the removed ones. Never below the decision's own lower bound.
 */
export function estimateBefore(c: Planned, counter: TokenCounter): number {
  const { plan, normalized } = c;
  const asRead = c.input ?? normalized.messages;
  const itemsAt = itemsReader(normalized.itemsOf);
  const lengthOf = (m: number): number => {
    let n = 0;
    for (const item of itemsAt(m)) n += c.itemLength?.(item) ?? 0;
    return n;
  };
  const exact = plan.kept.filter((m) => asRead[m] === normalized.messages[m]);
  const keptTokens =
    exact.length === 0
      ? 0
      : counter.measure(lazyList(exact.length, (k) => renderMessage(asRead[exact[k] as number] as Message)));
  let keptLength = 0;
  for (const m of exact) keptLength += lengthOf(m);
  // The kept and the removed are every message: the rest weigh the whole less the kept, so a long file's removed
  // indices (nearly all of them) are never listed.
  let wholeLength = 0;
  for (let m = 0; m < normalized.messages.length; m++) wholeLength += lengthOf(m);
  const restLength = Math.max(wholeLength - keptLength, 0);
  const sample = sampleOfRemoved(plan.kept, normalized.messages.length, Math.round(restLength / SAMPLE_CHARS));
  const rendered: Rendered[] = [];
  let sampleLength = 0;
  for (const m of sample) {
    rendered.push(renderMessage(asRead[m] as Message));
    sampleLength += lengthOf(m);
  }
  const sampleTokens = rendered.length === 0 ? 0 : counter.measure(rendered);
  const rate = sampleLength > 0 ? sampleTokens / sampleLength : 1 / FALLBACK_CHARS_PER_TOKEN;
  return Math.max(plan.tokensBefore, keptTokens + Math.round(restLength * rate));
}

/**
 * Every `stride`-th removed message (the first, then every stride-th after it), walking past the kept ones without
 * listing the removed.
 * @param kept the kept messages, ascending
 * @param n the conversation's messages
 */
function sampleOfRemoved(kept: readonly number[], n: number, stride: number): number[] {
  const step = Math.max(1, stride);
  const sample: number[] = [];
  let next = 0;
  let removed = 0;
  for (let m = 0; m < n; m++) {
    if (next < kept.length && kept[next] === m) {
      next++;
      continue;
    }
    if (removed++ % step === 0) sample.push(m);
  }
  return sample;
}
