import { summarizeRounds } from '../../core/summarize.js';
import type { Message } from '../../core/types.js';
import { measureAgainstGate, type ChainRun, type Step, type StepReport } from './step.js';

/**
 * Summarizing (Haystack's `SummarizationCompactor`): rounds that replace the oldest history with a summary the model
 * writes, each reply awaited from the settings' `answer`. Counted only past the trigger (or the target), as
 * offloading counts.
 */
export const summarizeStep: Step = {
  async apply(run: ChainRun): Promise<StepReport> {
    const { options, counter } = run;
    if (options.summarize === undefined) throw new RangeError('summarizing needs a source of summaries');
    if (run.summarizing !== null) throw new RangeError('summarize can be applied once in a chain');
    const measured = measureAgainstGate(run);
    if (measured.under) return measured;
    const settings = options.summarize;
    const exhaustive = options.exhaustive === true;
    const result = await summarizeRounds(
      run.current,
      counter,
      {
        target: run.target,
        minKeepSteps: options.minKeepSteps,
        summaryTokens: settings.summaryTokens,
        instruction: settings.instruction,
        exhaustive,
        ...(settings.minRetention === undefined ? {} : { minRetention: settings.minRetention }),
      },
      (request) => settings.answer(request, counter),
    );
    const seen = run.origin;
    const inputsOf = (indices: readonly number[]): number[] =>
      indices
        .flatMap((i) => (seen[i] === null || seen[i] === undefined ? [] : [seen[i] as number]))
        .sort((a, b) => a - b);
    run.summarizing = {
      rounds: result.rounds.map((r) => ({
        tier: r.tier,
        request: r.request,
        replaced: inputsOf(r.replaced),
        summarized: r.summarized,
        text: r.text,
        tokensBefore: r.tokensBefore,
        tokensAfter: r.tokensAfter,
        promptTokens: exhaustive
          ? counter.measure([
              { text: r.request.system, images: 0, files: 0 },
              { text: r.request.user, images: 0, files: 0 },
            ])
          : null,
        identifiers: r.identifiers,
        retention: r.retention,
      })),
      summaries: [],
      failure: result.failure,
    };
    if (!result.changed) return measured;
    result.origin.forEach((o, k) => {
      if ('summary' in o) run.inserted.set(result.messages[k] as Message, { summary: o.summary });
    });
    run.origin = result.origin.map((o) => ('input' in o ? (seen[o.input] ?? null) : null));
    run.current = result.messages;
    const summarizedAfter = result.tokensAfter;
    return { ...measured, after: () => summarizedAfter };
  },
};
