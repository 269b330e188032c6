import { elementReader } from '../../core/lazy-list.js';
import { planPruning } from '../../core/prune.js';
import type { Message } from '../../core/types.js';
import { writableFinal, type ChainRun, type Step, type StepReport } from './step.js';

/**
 * Tool-result pruning (Haystack's `ToolResultPruningCompactor`): replaces the older steps' large results with a
 * placeholder. With thresholds a first plan against the trigger tells whether it is reached.
 */
export const pruneStep: Step = {
  apply(run: ChainRun): StepReport {
    const { current, counter, gate, options } = run;
    const settings = {
      minKeepSteps: options.minKeepSteps,
      minTokens: options.minTokens,
      placeholder: options.placeholder,
      exhaustive: options.exhaustive === true,
    };
    const below = gate === null ? null : planPruning(current, counter, { ...settings, target: gate });
    const under = below !== null && !below.changed && below.targetMet;
    const p = under ? below : planPruning(current, counter, { ...settings, target: run.target });
    const report = { under, before: p.tokensBefore, beforeExact: p.tokensBeforeExact, after: () => p.tokensAfter };
    if (!p.changed) return report;
    run.pruning.push({ plan: p, origin: run.origin });
    if (run.final === current) {
      // No step moved a message yet (the chain's list is the one pruned): the plan's list is the final one as it is.
      run.final = p.messages as Message[];
      run.finalOwned = false;
    } else {
      // A plan made without counting the candidates works each out when its message is read.
      const originAt = elementReader(run.origin);
      for (const index of p.lazy?.candidates ?? p.pruned.map((r) => r.index)) {
        const at = originAt(index);
        if (at !== null && at !== undefined) writableFinal(run)[at] = p.messages[index] as Message;
      }
    }
    run.current = p.messages;
    return report;
  },
};
