import { withFields, type Plan } from '../core/compact.js';
import type { Message, TokenCounter } from '../core/types.js';
import type { Normalized } from '../formats/types.js';
import { groupTokens, noteTokensOf, tokenFigures, type TokenFigures } from '../outcome/figures.js';
import { beforeFigure } from '../outcome/before.js';
import type { Planned, TokenFigure } from '../outcome/outcome.js';
import { EXACT_COUNT_UP_TO } from '../pipeline/index.js';

/**
 * The plan with the tokens before the command line gives for these messages written as a file, one item's JSON a line
 * (`beforeFigure` in src/outcome/before.ts: exact up to EXACT_COUNT_UP_TO characters of that file, an estimate above,
 * where the decision stopped counting early), its groups' tokens as every output shows them (a removed group as it was read, a
 * kept one as the output holds it), and the compaction's figures (src/outcome/figures.ts), which add up as the command
 * line's do: before = after + what pruning saved + what was removed − the note − the summaries. Each is worked out
 * when first read: a loop that never reads them never pays for them.
 * @param plan the chain's plan
 * @param read the conversation as it was read
 * @param raws the items' JSON texts, as the file would hold them
 * @param decided the conversation as decided (pruned results hold their placeholders)
 * @param chain with summarize, the output's messages and the summaries it holds
 */
export function withChainFigures(
  plan: Plan,
  read: Normalized,
  raws: readonly string[],
  decided: Normalized,
  counter: TokenCounter,
  chain: Pick<Planned, 'output' | 'summarized'>,
): { plan: Plan; figures: () => TokenFigures } {
  const planned: Planned = {
    plan,
    normalized: decided,
    target: 0,
    toolTokens: 0,
    // Read when a figure is, not now: a warm compactor's list may have grown since (see Normalized).
    get input(): readonly Message[] {
      return read.messages;
    },
    // An item's line: its JSON and the newline (in a compact JSON array, the comma or the closing bracket).
    itemLength: (item) => (item >= 0 && item < raws.length ? (raws[item] as string).length + 1 : 0),
    ...chain,
  };
  let exact: boolean | undefined;
  let before: TokenFigure | undefined;
  const beforeOf = (): TokenFigure =>
    (before ??= beforeFigure(planned, {
      counter,
      get exactBefore(): boolean {
        exact ??= isWithin(raws, EXACT_COUNT_UP_TO);
        return exact;
      },
    }));
  let figures: TokenFigures | undefined;
  const figuresOf = (): TokenFigures =>
    (figures ??= tokenFigures(planned, beforeOf(), noteTokensOf(plan, counter, chain.output), counter));
  // Laid over the plan one by one, never spread: a spread would call each getter now.
  let shown = plan;
  if (!plan.tokensBeforeExact)
    shown = withFields(shown, {
      get tokensBefore(): number {
        return beforeOf().tokens;
      },
      get tokensBeforeExact(): boolean {
        return beforeOf().exact;
      },
    });
  let groups: Plan['groups'] | undefined;
  if (read.messages !== decided.messages)
    shown = withFields(shown, {
      get groups(): Plan['groups'] {
        if (groups === undefined) {
          const tokens = groupTokens(planned, counter);
          groups = plan.groups.map((g, k) => ({ ...g, tokens: tokens[k] ?? null }));
        }
        return groups;
      },
    });
  return { plan: shown, figures: figuresOf };
}

/** Whether items written one a line (each its text and a newline) take at most `limit` characters. */
function isWithin(texts: readonly string[], limit: number): boolean {
  let total = 0;
  for (const t of texts) if ((total += t.length + 1) > limit) return false;
  return true;
}

/** A result with `figures` as a getter: worked out when first read, and never by a spread of the result. */
export function withFigures<T extends object>(result: T, figures: () => TokenFigures): T & { figures: TokenFigures } {
  return Object.defineProperty(result, 'figures', { get: figures, enumerable: true }) as T & { figures: TokenFigures };
}
