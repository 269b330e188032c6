import { hookThresholds } from '../core/hook.js';
import { OptionsError } from '../errors.js';
import {
  binaryAsText,
  checkOptions,
  INSTRUCTION_KEYS as INSTRUCTIONS,
  type CompactorOptions,
  type StrategyChain,
} from '../settings/library.js';
import { DEFAULT_COMPACT_AT, DEFAULT_COMPACT_TO } from '../settings/defaults.js';
import { chooseFormat } from '../pipeline/index.js';
import { createCounter } from '../tokens/index.js';
import { DEFAULT_PRICES, findPrices, PRICE_MODELS, pricesOf } from './prices.js';
import { replaySource, type ReplaySettings } from './run.js';
import type { ReplayPrices, ReplayRun } from './types.js';

export { DEFAULT_PRICES, findPrices, PRICE_MODELS, pricesOf } from './prices.js';
export { replaySource, REPLAY_NOTES, type ReplaySettings, type ReplaySource } from './run.js';
export { totalsOf } from './figures.js';
export { prefixCache, costOf } from './cache.js';
export type * from './types.js';

/** The library's replay options: a compactor's settings for the window, the policies to compare, the prices. */
export interface ReplayOptions extends Omit<
  CompactorOptions,
  'target' | 'strategy' | 'createNote' | 'tools' | 'strict' | 'contextWindow'
> {
  /** The model's context window in tokens (Haystack's `context_window`). */
  readonly contextWindow: number;
  /** The policies, each `none` or a strategy chain as `strategy` takes it (default `['window']`). */
  readonly strategies?: readonly string[];
  /** A built-in price model's name, or a price model (see `PRICE_MODELS`). Default `anthropic-sonnet`. */
  readonly prices?: string | ReplayPrices;
}

/**
 * Replays a recorded agent run as if Haystack's `CompactionHook` had run before every LLM call, once per policy:
 * each assistant message is one call's reply, and every call's history is recorded as it would have been sent.
 * With `strategy` summarize and no `summarize` callback, summaries of `summaryTokens` are assumed and nothing is
 * called.
 * @param messages the run's messages, in any format the library reads; never modified
 * @param options the window, the policies, the compaction settings, the prices
 * @returns the replay: every call of every policy with its tokens, compactions, cache figures, cost and losses
 * @throws OptionsError for options that contradict each other; InputError for a message the format refuses
 */
export async function replay(messages: readonly unknown[], options: ReplayOptions): Promise<ReplayRun> {
  if (options === null || typeof options !== 'object') throw new OptionsError('options must be an object');
  const { strategies: given, prices: priced, ...rest } = options;
  const strategies = given ?? ['window'];
  if (!Array.isArray(strategies) || strategies.length === 0)
    throw new OptionsError('strategies must be a non-empty list of policies (none, window, prune, prune,window…)');
  // Each policy's settings are checked as a compactor's are; `none` is checked as the window.
  let checked: ReturnType<typeof checkOptions> | null = null;
  for (const s of strategies) {
    if (typeof s !== 'string') throw new OptionsError(`strategies holds ${String(s)}, not a policy name`);
    const c = checkOptions(policyOptions(rest, s));
    checked ??= c;
  }
  const first = checked as ReturnType<typeof checkOptions>;
  const prices = pricesFor(priced);
  const counter = options.counter ?? (await createCounter(first.tokenizer, first.counterOptions));
  if (!Array.isArray(messages))
    throw new OptionsError(`messages must be an array, found ${messages === null ? 'null' : typeof messages}`);
  // Read through their JSON, as the library reads every message.
  const items = messages.map((m) => JSON.parse(JSON.stringify(m, binaryAsText) ?? 'null') as unknown);
  const adapter =
    first.adapter ?? chooseFormat({ where: 'the messages', items, container: null, key: null }, 'auto', 'messages');
  const compactAt = options.compactAt ?? DEFAULT_COMPACT_AT;
  const compactTo = options.compactTo ?? DEFAULT_COMPACT_TO;
  const { trigger, target } = hookThresholds(options.contextWindow, compactAt, compactTo);
  const summarize = options.summarize;
  const settings: ReplaySettings = {
    contextWindow: options.contextWindow,
    compactAt,
    compactTo,
    trigger,
    target,
    counter,
    // A BPE counter made here adds up message by message; one passed in is counted whole at every call.
    sumsMessages: options.counter === undefined && first.tokenizer !== 'approx',
    prices,
    ...(options.minKeepSteps === undefined ? {} : { minKeepSteps: options.minKeepSteps }),
    ...(options.note === undefined ? {} : { note: options.note }),
    ...(options.minTokens === undefined ? {} : { minTokens: options.minTokens }),
    ...(options.placeholder === undefined ? {} : { placeholder: options.placeholder }),
    ...(options.summaryTokens === undefined ? {} : { summaryTokens: options.summaryTokens }),
    ...(options.summaryInstruction === undefined ? {} : { summaryInstruction: options.summaryInstruction }),
    ...(options.minRetention === undefined ? {} : { minRetention: options.minRetention }),
    summarizer: summarize === undefined ? null : async (request) => ({ text: await summarize(request) }),
  };
  const key = adapter.name;
  const container =
    options.system === undefined ? null : { [INSTRUCTIONS[key] ?? 'system']: options.system as unknown };
  return replaySource({ file: 'messages', adapter, items, container }, strategies, settings);
}

/** The options one policy is checked with: another policy's strategy settings left out, `none` as the window. */
function policyOptions(options: Omit<ReplayOptions, 'strategies' | 'prices'>, policy: string): CompactorOptions {
  const uses = (name: string): boolean => policy.split(',').some((x) => x.trim() === name);
  const {
    minTokens,
    placeholder,
    summarize,
    summaryTokens,
    summaryInstruction,
    minRetention,
    contextWindow,
    ...shared
  } = options;
  return {
    ...shared,
    contextWindow,
    // A chain `checkOptions` checks (the policies are given as text).
    strategy: (policy === 'none' ? 'window' : policy) as StrategyChain,
    ...(uses('prune') ? { minTokens, placeholder } : {}),
    ...(uses('summarize') ? { summarize, summaryTokens, summaryInstruction, minRetention } : {}),
  };
}

/** The price model named or given. */
function pricesFor(given: string | ReplayPrices | undefined): ReplayPrices {
  if (given === undefined) return DEFAULT_PRICES;
  if (typeof given === 'string') {
    const found = findPrices(given);
    if (found === undefined)
      throw new OptionsError(
        `prices: unknown price model "${given}" (choose one of: ${PRICE_MODELS.map((p) => p.name).join(', ')})`,
      );
    return found;
  }
  const read = pricesOf(given, 'prices');
  if (typeof read === 'string') throw new OptionsError(read);
  return read;
}
