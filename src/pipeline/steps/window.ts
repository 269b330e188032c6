import { applyPlan, planCompaction } from '../../core/compact.js';
import type { Message } from '../../core/types.js';
import type { ChainRun, Step, StepReport } from './step.js';

/**
 * The sliding window (Haystack's `SlidingWindowCompactor`): keeps the instructions, the task and the newest turns and
 * steps that fit, with a note where the rest was. With thresholds a first plan against the trigger tells whether it
 * is reached; only then a second one aims at the target, reusing every count of the first.
 */
export const windowStep: Step = {
  apply(run: ChainRun): StepReport {
    if (run.windowPlan !== null) throw new RangeError('the sliding window can be applied once in a chain');
    const { current, counter, gate, options } = run;
    // Until the window, every strategy keeps the input's indices.
    run.windowSaw = run.final;
    run.finalOwned = false;
    const settings = {
      minKeepSteps: options.minKeepSteps,
      note: run.template,
      exhaustive: options.exhaustive === true,
    };
    const below = gate === null ? null : planCompaction(current, counter, { ...settings, target: gate });
    const fits = below !== null && below.unchanged === 'fits';
    const plan = fits ? below : planCompaction(current, counter, { ...settings, target: run.target });
    run.windowPlan = plan;
    const after = plan.tokensAfter;
    const report = { under: fits, before: plan.tokensBefore, beforeExact: plan.tokensBeforeExact, after: () => after };
    if (!plan.changed) return report;
    // The plan just made is the one compacting would make again.
    const out = applyPlan(current, plan);
    if (plan.noteIndex !== null && plan.noteText !== null) {
      run.inserted.set(out[plan.noteIndex] as Message, {
        note: plan.noteText,
        removed: plan.removedCount,
        kept: plan.keptCount,
      });
    }
    const keptOrigin = plan.kept.map((i) => run.origin[i] ?? null);
    if (plan.noteIndex !== null) keptOrigin.splice(plan.noteIndex, 0, null);
    run.origin = keptOrigin;
    run.current = out;
    return report;
  },
};
