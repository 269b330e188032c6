import { addCosts, costOf, NO_COST } from './cache.js';
import type {
  ReplayCall,
  ReplayCompaction,
  ReplayLost,
  ReplayPolicy,
  ReplayPrices,
  ReplayRemovedUser,
  ReplayRun,
  ReplayTotal,
} from './types.js';

/** A policy's figures from its calls: peaks, means, sums and the cost, worked out once for every output. */
export function policyFigures(
  strategy: string,
  gathered: {
    readonly calls: readonly ReplayCall[];
    readonly compactions: readonly ReplayCompaction[];
    readonly lost: readonly ReplayLost[];
    readonly removedUsers: readonly ReplayRemovedUser[];
  },
  summary: {
    readonly calls: number;
    readonly promptTokens: number;
    readonly replyTokens: number;
    readonly failed: number;
    readonly failure: string | null;
  },
  prices: ReplayPrices,
): ReplayPolicy {
  const { calls } = gathered;
  const sum = (f: (c: ReplayCall) => number): number => calls.reduce((n, c) => n + f(c), 0);
  const inputTokens = sum((c) => c.tokens);
  const figures = {
    input: inputTokens,
    cacheRead: sum((c) => c.cacheRead),
    cacheWrite: sum((c) => c.cacheWrite),
    output: sum((c) => c.output),
  };
  // Summary calls are priced as uncached input and output of the same model.
  const summaryCost = costOf(
    { input: summary.promptTokens, cacheRead: 0, cacheWrite: 0, output: summary.replyTokens },
    prices,
  );
  return {
    strategy,
    calls,
    compactions: gathered.compactions,
    peakTokens: calls.reduce((n, c) => Math.max(n, c.tokens), 0),
    meanTokens: calls.length === 0 ? 0 : inputTokens / calls.length,
    overflows: calls.filter((c) => c.overflow).length,
    inputTokens,
    cacheReadTokens: figures.cacheRead,
    cacheWriteTokens: figures.cacheWrite,
    outputTokens: figures.output,
    summary: {
      calls: summary.calls,
      promptTokens: summary.promptTokens,
      replyTokens: summary.replyTokens,
      failed: summary.failed,
      failure: summary.failure,
    },
    cost: addCosts(costOf(figures, prices), summaryCost),
    lost: gathered.lost,
    removedUserMessages: gathered.removedUsers,
  };
}

/** Each policy's figures summed over runs, in the order the policies were given. */
export function totalsOf(runs: readonly ReplayRun[]): ReplayTotal[] {
  const order: string[] = [];
  const totals = new Map<string, ReplayTotal>();
  for (const run of runs) {
    for (const p of run.policies) {
      const was = totals.get(p.strategy);
      if (was === undefined) order.push(p.strategy);
      const base: ReplayTotal = was ?? {
        strategy: p.strategy,
        calls: 0,
        compactions: 0,
        overflows: 0,
        inputTokens: 0,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
        outputTokens: 0,
        cost: NO_COST,
        lost: 0,
        removedUserMessages: 0,
      };
      totals.set(p.strategy, {
        strategy: p.strategy,
        calls: base.calls + p.calls.length,
        compactions: base.compactions + p.compactions.length,
        overflows: base.overflows + p.overflows,
        inputTokens: base.inputTokens + p.inputTokens,
        cacheReadTokens: base.cacheReadTokens + p.cacheReadTokens,
        cacheWriteTokens: base.cacheWriteTokens + p.cacheWriteTokens,
        outputTokens: base.outputTokens + p.outputTokens,
        cost: addCosts(base.cost, p.cost),
        lost: base.lost + p.lost.length,
        removedUserMessages: base.removedUserMessages + p.removedUserMessages.length,
      });
    }
  }
  return order.map((s) => totals.get(s) as ReplayTotal);
}
