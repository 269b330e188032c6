import { InputError } from './errors.js';
import { simulatedReply, type Summarizer, type SummaryAnswer, type SummaryRequest } from './core/summarize.js';
import type { TokenCounter } from './core/types.js';
import type { FileReplies, FileResult, SummaryReport, SummaryRunner, SummaryUsage } from './pipeline/index.js';

/**
 * Who calls the model: summarize's replies for a run's files. The decision awaits each round's reply from
 * `answer`; the conversations of a file are decided together, so their rounds' calls go out side by side (the
 * limiter bounds them), and a request asked twice in a file is sent once.
 */

/** Where a run's summaries come from, and what to do when a round fails. */
export interface SummarySource {
  /** The model, or null for a dry run, a check or a plan: every reply is then simulated and nothing is called. */
  readonly summarizer: Summarizer | null;
  readonly instruction: string;
  /** Haystack's `approximate_summary_tokens`: planned with, and the size of a simulated reply. */
  readonly summaryTokens: number;
  /** Fail the file when a round fails (Haystack's `raise_on_failure`), instead of keeping the last good result. */
  readonly strict: boolean;
  /** `--min-retention`: a summary keeping less of the replaced messages' identifiers fails its round. */
  readonly minRetention?: number;
}

export const NO_USAGE: SummaryUsage = {
  calls: 0,
  cached: 0,
  failed: 0,
  input: 0,
  output: 0,
  simulated: 0,
  promptTokens: 0,
  identifiers: 0,
  identifiersKept: 0,
};

/** Adds two usages. */
export function addUsage(a: SummaryUsage, b: SummaryUsage): SummaryUsage {
  return {
    calls: a.calls + b.calls,
    cached: a.cached + b.cached,
    failed: a.failed + b.failed,
    input: a.input + b.input,
    output: a.output + b.output,
    simulated: a.simulated + b.simulated,
    promptTokens: a.promptTokens + b.promptTokens,
    identifiers: a.identifiers + b.identifiers,
    identifiersKept: a.identifiersKept + b.identifiersKept,
  };
}

/** One call: its reply (or the failure's reason) and what it cost. */
async function callOnce(
  summarizer: Summarizer,
  request: SummaryRequest,
  counter: TokenCounter,
): Promise<{ answer: SummaryAnswer; usage: SummaryUsage }> {
  try {
    const reply = await summarizer(request);
    return {
      answer: { text: reply.text },
      usage: {
        ...NO_USAGE,
        calls: 1,
        cached: reply.cached === true ? 1 : 0,
        // A cache hit costs nothing; a call without reported usage is counted with the run's counter.
        input: reply.cached === true ? 0 : (reply.usage?.input ?? promptTokens(counter, request)),
        output:
          reply.cached === true
            ? 0
            : (reply.usage?.output ??
              (reply.text === '' ? 0 : counter.measure([{ text: reply.text, images: 0, files: 0 }]))),
      },
    };
  } catch (failure) {
    // Any failure of the call (a SummaryCallError after retries, a callback that threw) ends that conversation's rounds.
    return {
      answer: { error: failure instanceof Error ? failure.message : String(failure) },
      usage: { ...NO_USAGE, calls: 1, failed: 1 },
    };
  }
}

const keyOf = (request: SummaryRequest): string => `${request.system}\u0000${request.user}`;

/** The tokens of a prompt, as the counter measures its two texts. */
function promptTokens(counter: TokenCounter, request: SummaryRequest): number {
  return counter.measure([
    { text: request.system, images: 0, files: 0 },
    { text: request.user, images: 0, files: 0 },
  ]);
}

/**
 * Where a run's summaries come from, for the pipeline: a model's replies (each request sent once per file), or with
 * no model the stand-in of dry runs and checks, each reply the planned size.
 * @param model the summarizer (or null to simulate), the instruction, the summary size, strictness
 */
export function summaryRunner(model: SummarySource): SummaryRunner {
  return {
    settings: {
      instruction: model.instruction,
      summaryTokens: model.summaryTokens,
      ...(model.minRetention === undefined ? {} : { minRetention: model.minRetention }),
    },
    forFile: (file, counter) => fileReplies(file, counter, model),
  };
}

/** One file's replies and what they cost. */
function fileReplies(file: string, counter: TokenCounter, model: SummarySource): FileReplies {
  const calls = new Map<string, Promise<SummaryAnswer>>();
  const simulated = new Map<string, number>();
  let usage: SummaryUsage = NO_USAGE;
  return {
    answer(request) {
      const key = keyOf(request);
      const summarizer = model.summarizer;
      if (summarizer === null) {
        if (!simulated.has(key)) simulated.set(key, promptTokens(counter, request));
        return Promise.resolve({ text: simulatedReply(counter, model.summaryTokens), simulated: true });
      }
      let call = calls.get(key);
      if (call === undefined) {
        call = callOnce(summarizer, request, counter).then((done) => {
          usage = addUsage(usage, done.usage);
          return done.answer;
        });
        calls.set(key, call);
      }
      return call;
    },
    finish: async (result) => {
      if (model.summarizer === null) {
        const prompts = [...simulated.values()].reduce((a, b) => a + b, 0);
        usage = { ...usage, simulated: simulated.size, promptTokens: prompts };
      }
      return finishFile(file, result, usage, model);
    },
  };
}

/**
 * A decided file's usage, with what its summaries kept, and a warning per conversation whose rounds failed.
 * @throws StrictSummaryError with `strict` when a round failed
 */
async function finishFile(
  file: string,
  result: FileResult,
  spent: SummaryUsage,
  model: SummarySource,
): Promise<SummaryReport> {
  let usage = spent;
  const warnings: string[] = [];
  for (const c of result.conversations) {
    for (const r of c.summarized?.rounds ?? []) {
      if (r.retention === null) continue;
      usage = {
        ...usage,
        identifiers: usage.identifiers + r.retention.total,
        identifiersKept: usage.identifiersKept + r.retention.kept,
      };
    }
    const failure = c.summarized?.failure;
    if (failure === undefined || failure === null) continue;
    // A reply the decision refused is not kept for the next run: that one asks the model again.
    if (failure.kind === 'not-smaller' || failure.kind === 'retention')
      await forgetReply(model.summarizer, failure.request);
    const where = c.slot.record !== undefined ? ` (record ${c.slot.record + 1})` : '';
    const kept = c.summarized?.rounds.length ?? 0;
    // A simulated round says what would happen: its summary is the assumed size, not a model's.
    const failed = model.summarizer === null ? `would fail with a summary of ${model.summaryTokens} tokens` : 'failed';
    if (model.strict)
      throw new StrictSummaryError(
        `${where === '' ? '' : `${where.slice(2, -1)}: `}summarize round ${failure.round + 1} ${failed}: ${failure.reason} (--strict: nothing written)`,
        file,
        usage,
      );
    warnings.push(
      `${file}${where}: summarize round ${failure.round + 1} ${failed}: ${failure.reason}; ${kept > 0 ? `kept the result of ${kept} round${kept === 1 ? '' : 's'}` : 'left unchanged'}`,
    );
  }
  return { usage, warnings };
}

/** A --strict failure: the file fails, and what the calls made so far cost is still reported. */
export class StrictSummaryError extends InputError {
  constructor(
    reason: string,
    file: string,
    readonly usage: SummaryUsage,
  ) {
    super(reason, file);
  }
}

/** Drops a refused reply from the cache, when the summaries come through one. */
async function forgetReply(summarizer: unknown, request: SummaryRequest): Promise<void> {
  const forget = (summarizer as { forget?: (request: SummaryRequest) => Promise<void> } | null)?.forget;
  if (typeof forget === 'function') await forget(request);
}

/** The run's summary line: what summarize's model calls cost, or what a dry run's rounds would send. */
export function usageLine(usage: SummaryUsage, simulated: boolean, summaryTokens: number): string {
  const n = (x: number): string => x.toLocaleString('en-US');
  if (simulated) {
    if (usage.simulated === 0) return 'summarize: would make no model call (nothing was sent)';
    return `summarize: would make ${n(usage.simulated)} model call${usage.simulated === 1 ? '' : 's'} sending ${n(usage.promptTokens)} prompt tokens (each summary assumed ${n(summaryTokens)} tokens; nothing was sent)`;
  }
  if (usage.calls === 0) return 'summarize: no model call was needed';
  // What every successful round's summary kept of the identifiers it replaced (one a later round replaced counts too).
  const kept =
    usage.identifiers === 0
      ? ''
      : `; the summaries keep ${n(usage.identifiersKept)} of ${n(usage.identifiers)} identifiers they replace (${Math.round((usage.identifiersKept / usage.identifiers) * 1000) / 10}%)`;
  // Only the counts that are not zero: `(2 from the cache, 1 failed)`, or nothing in parentheses.
  const how = [
    ...(usage.cached > 0 ? [`${n(usage.cached)} from the cache`] : []),
    ...(usage.failed > 0 ? [`${n(usage.failed)} failed`] : []),
  ];
  const tokens = [
    ...(usage.input > 0 ? [`${n(usage.input)} input`] : []),
    ...(usage.output > 0 ? [`${n(usage.output)} output`] : []),
  ];
  return `summarize: ${n(usage.calls)} model call${usage.calls === 1 ? '' : 's'}${how.length === 0 ? '' : ` (${how.join(', ')})`}${tokens.length === 0 ? '' : `, ${tokens.join(' and ')} tokens`}${kept}`;
}
