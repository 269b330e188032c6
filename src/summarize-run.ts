import { InputError } from './errors.js';
import { simulatedReply, type Summarizer, type SummaryAnswer, type SummaryRequest } from './core/summarize.js';
import type { TokenCounter } from './core/types.js';
import { compactSource, type FileOptions, type FileResult, type RunOptions } from './pipeline/index.js';
import { createCounter } from './tokens/index.js';
import type { SourceText } from './io/source.js';

/**
 * The rounds of summarize for a file: the decision stays synchronous (compactSource) and asks for each round's reply
 * through `answer`. A pass decides every conversation of the file as far as the replies known so far allow; the
 * requests it could not answer are sent together, and the next pass goes one round further (each pass is
 * deterministic, so it asks the same questions in the same order). A file whose longest conversation takes R rounds
 * is decided R + 1 times: small beside a model call.
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

/** What the model calls of one file cost. */
export interface SummaryUsage {
  /** Calls made (cache hits included). */
  readonly calls: number;
  readonly cached: number;
  readonly failed: number;
  /** Prompt and reply tokens: the endpoint's `usage` where it reported one, else counted with the run's counter. */
  readonly input: number;
  readonly output: number;
  /** With a simulated model: the rounds that would call, and the tokens their prompts hold. */
  readonly simulated: number;
  readonly promptTokens: number;
  /**
   * Over the summaries the rounds kept (a model's, not simulated ones): the identifiers the messages they replaced
   * name, and how many of those the summaries still name (src/core/identifiers/retention.ts).
   */
  readonly identifiers: number;
  readonly identifiersKept: number;
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

/** A file's result with what summarizing it cost and the warnings of rounds that failed. */
export interface SummarizedFile {
  readonly result: FileResult;
  readonly usage: SummaryUsage;
  /** One line per conversation whose rounds stopped at a failure (the last good result kept). */
  readonly warnings: readonly string[];
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

/** Thrown inside the decision when a round's reply is not known yet. */
class PendingReply extends Error {
  constructor(readonly request: SummaryRequest) {
    super('a summary reply is pending');
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
 * Compacts a file whose chain holds summarize, awaiting the model between rounds.
 * @param source the decoded file
 * @param options the file's settings (their `summarize` is set here)
 * @param model the summarizer (or null to simulate), the instruction, the summary size, strictness
 * @throws InputError with --strict when a round fails (nothing is written for the file)
 */
export async function compactWithSummaries(
  source: SourceText,
  options: Omit<FileOptions, 'summarize'>,
  model: SummarySource,
): Promise<SummarizedFile> {
  const answers = new Map<string, SummaryAnswer>();
  let usage: SummaryUsage = NO_USAGE;
  const simulated = new Map<string, number>();
  for (;;) {
    // One pass decides every conversation as far as the replies known allow; the requests it could not answer are
    // sent together (the limiter bounds them), and the next pass goes one round further in each.
    const pending = new Map<string, SummaryRequest>();
    const result = compactSource(source, {
      ...options,
      summarize: {
        instruction: model.instruction,
        summaryTokens: model.summaryTokens,
        ...(model.minRetention === undefined ? {} : { minRetention: model.minRetention }),
        answer: (request, counter) => {
          const key = keyOf(request);
          if (model.summarizer === null) {
            if (!simulated.has(key)) simulated.set(key, promptTokens(options.counter, request));
            return { text: simulatedReply(counter, model.summaryTokens), simulated: true };
          }
          const known = answers.get(key);
          if (known !== undefined) return known;
          pending.set(key, request);
          // Stops this conversation's rounds for this pass; the pass's result is never used.
          return { error: 'pending' };
        },
      },
    });
    if (pending.size > 0 && model.summarizer !== null) {
      const summarizer = model.summarizer;
      const calls = await Promise.all(
        [...pending].map(([key, request]) =>
          callOnce(summarizer, request, options.counter).then((done) => ({ key, done })),
        ),
      );
      for (const { key, done } of calls) {
        answers.set(key, done.answer);
        usage = addUsage(usage, done.usage);
      }
      continue;
    }
    if (model.summarizer === null) {
      usage = { ...usage, simulated: simulated.size, promptTokens: [...simulated.values()].reduce((a, b) => a + b, 0) };
    }
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
      const failed =
        model.summarizer === null ? `would fail with a summary of ${model.summaryTokens} tokens` : 'failed';
      if (model.strict)
        throw new StrictSummaryError(
          `${where === '' ? '' : `${where.slice(2, -1)}: `}summarize round ${failure.round + 1} ${failed}: ${failure.reason} (--strict: nothing written)`,
          source.file,
          usage,
        );
      warnings.push(
        `${source.file}${where}: summarize round ${failure.round + 1} ${failed}: ${failure.reason}; ${kept > 0 ? `kept the result of ${kept} round${kept === 1 ? '' : 's'}` : 'left unchanged'}`,
      );
    }
    return { result, usage, warnings };
  }
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

/** Compacts files whose chain holds summarize, with one run's settings and summary source. */
export interface SummarizingCompactor {
  readonly tokenizer: string;
  /** `file.home`: the folder the result is written to, which offloading's pointers are relative to (see `FileCompactor`). */
  compactAsync(source: SourceText, file?: { readonly home?: string }): Promise<SummarizedFile>;
}

/**
 * Loads a run's tokenizer once and returns a compactor that runs summarize's rounds against the model.
 * @param options the run's settings
 * @param model where summaries come from
 */
export async function createSummarizingCompactor(
  options: RunOptions,
  model: SummarySource,
): Promise<SummarizingCompactor> {
  const counter = await createCounter(options.tokenizer, options.counterOptions);
  return {
    tokenizer: counter.name,
    compactAsync: (source, file) =>
      compactWithSummaries(
        source,
        {
          ...options,
          counter,
          ...(options.offload !== undefined && file?.home !== undefined
            ? { offload: { ...options.offload, home: file.home } }
            : {}),
        },
        model,
      ),
  };
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

/**
 * Runs a synchronous decision that asks for summary replies until every reply it asks for is known, awaiting each
 * missing one from `summarizer` (the same replay `compactWithSummaries` does for files, for the library's arrays).
 * A failed call is answered with its reason, which ends that conversation's rounds.
 * @param decide the decision, given the answers known so far
 * @param summarizer what writes a summary
 * @returns the decision's value and how many calls were made
 */
export async function withReplies<T>(
  decide: (answer: (request: SummaryRequest) => SummaryAnswer) => T,
  summarizer: Summarizer,
): Promise<{ value: T; calls: number }> {
  const answers = new Map<string, SummaryAnswer>();
  let calls = 0;
  for (;;) {
    try {
      const value = decide((request) => {
        const known = answers.get(keyOf(request));
        if (known === undefined) throw new PendingReply(request);
        return known;
      });
      return { value, calls };
    } catch (error) {
      if (!(error instanceof PendingReply)) throw error;
      calls++;
      try {
        const reply = await summarizer(error.request);
        answers.set(keyOf(error.request), { text: reply.text });
      } catch (failure) {
        answers.set(keyOf(error.request), { error: failure instanceof Error ? failure.message : String(failure) });
      }
    }
  }
}
