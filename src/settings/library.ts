import { noteTemplate } from '../core/compact.js';
import { parseJson } from '../core/json/value.js';
import { renderArguments } from '../core/json/python.js';
import type { SummaryRequest } from '../core/summarize.js';
import { DEFAULT_SUMMARY_INSTRUCTION } from '../core/summary-instruction.js';
import type { TokenCounter } from '../core/types.js';
import { findFormat, formatNames } from '../formats/registry.js';
import type { FormatAdapter } from '../formats/types.js';
import { STRATEGIES, type StrategyName, type WindowThresholds } from '../pipeline/index.js';
import { resolveCounterOptions, type CounterOptions, type TokenizerName } from '../tokens/index.js';
import {
  checkBudget,
  checkNote,
  checkPlaceholder,
  checkStrategies,
  checkStrategySettings,
  checkTokenizer,
  checkWindow,
  onlyWith,
  shown,
} from './rules.js';
import { defaultOf, libraryOptionNames, minOf, OPTIONS } from './options.js';
import { LIBRARY } from './surface.js';

/** The library's options (`CompactorOptions`), checked once when a compactor is made, by the rules the CLI follows. */

const fail = (message: string): never => LIBRARY.fail(message);

/**
 * The formats the library reads; `auto` tells them apart as the command line does. The list is the format registry's
 * names (`test/settings/message-format.test.ts` compares them), kept here as literals so the type can be read.
 */
export const MESSAGE_FORMATS = [
  'auto',
  'openai',
  'anthropic',
  'responses',
  'gemini',
  'haystack',
  'langchain',
  'claude-code',
  'codex',
  'sharegpt',
  'ai-sdk',
] as const;

/** One of {@link MESSAGE_FORMATS}. */
export type MessageFormat = (typeof MESSAGE_FORMATS)[number];

/** The `createNote` option: builds the note message (a LangChain `HumanMessage`, say) from the note's text. */
export type CreateNote<M> = (text: string) => M;

/**
 * The `summarize` option: given the prompt's instruction (`system`) and the transcript it replaces (`user`), resolves
 * to the summary's text.
 */
export type SummarizeCallback = (request: SummaryRequest) => Promise<string>;

/** The strategies that work on messages in memory (`offload` writes files, so only the command line has it). */
export type InMemoryStrategy = Exclude<StrategyName, 'offload'>;

type Rest<Used extends InMemoryStrategy> = Exclude<InMemoryStrategy, Used>;

/**
 * A chain of in-memory strategies, each at most once, as `--strategy` writes it: `'window'`, `'prune,window'`,
 * `'prune,summarize,window'`… (written out to three, as many as there are).
 */
export type StrategyChain =
  | InMemoryStrategy
  | {
      [A in InMemoryStrategy]: {
        [B in Rest<A>]: `${A},${B}` | { [C in Rest<A | B>]: `${A},${B},${C}` }[Rest<A | B>];
      }[Rest<A>];
    }[InMemoryStrategy];

/**
 * Settings of a compactor. Give `target`, or `contextWindow` (with `compactAt`/`compactTo`).
 *
 * `M` is the type of the note `createNote` builds. The entry points take the element type from the messages alone
 * (`compactMessages<M>` returns `CompactedMessages<M>`), and check `createNote` against it. `CompactorOptions`
 * without it fits messages of any type, so that options named before the messages are known need no type argument;
 * its `createNote` is then not checked (`any`, not `unknown`: options built for no type in particular must fit a
 * call whose messages are of one).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above: the default must fit every message type
export interface CompactorOptions<M = any> {
  /** The messages' format (default `auto`). */
  readonly format?: MessageFormat;
  /** The token budget: compact whenever the conversation is larger. */
  readonly target?: number;
  /** Instead of `target`: compact only once the conversation reaches `contextWindow × compactAt` tokens, then to `contextWindow × compactTo`. */
  readonly contextWindow?: number;
  /** With `contextWindow`: the share of the window from which to compact (default 0.7). */
  readonly compactAt?: number;
  /** With `contextWindow`: the share to compact to (default 0.4); `0 < compactTo < compactAt ≤ 1`. */
  readonly compactTo?: number;
  /** The fewest newest steps of the current task to keep, even over the budget (default 1; at least 1 with pruning). */
  readonly minKeepSteps?: number;
  /**
   * The strategies to apply, in order, each to what the previous left, as `swc compact --strategy`: a name, a list,
   * or a comma-separated chain (`'prune,window'`). Default `'window'`. `offload` writes files, so it is refused here.
   */
  readonly strategy?: StrategyChain | readonly InMemoryStrategy[];
  /** Pruning: only results of more than this many tokens are replaced (default 200). */
  readonly minTokens?: number;
  /** Pruning: the text left in place of a result, `{tool_name}` filled in (default Haystack's). */
  readonly placeholder?: string;
  /** The note template; `null` or `''` removes silently. Default: the standard note. */
  readonly note?: string | null;
  /** Builds the note yourself (a LangChain `HumanMessage`, say) from its text, instead of the format's plain object. */
  readonly createNote?: CreateNote<M>;
  /** The tokenizer (default `o200k_base`). */
  readonly tokenizer?: TokenizerName;
  /** Characters per token (`approx` only), tokens per image, tokens per file: Haystack's 4, 85 and 1000 by default. */
  readonly charsPerToken?: number;
  readonly tokensPerImage?: number;
  readonly tokensPerFile?: number;
  /** A counter of your own instead of `tokenizer` (it is given the same rendered object for an unchanged message each call). */
  readonly counter?: TokenCounter;
  /**
   * Instructions held outside the list: Anthropic's and the AI SDK's `system`, Responses' `instructions`, Gemini's
   * `systemInstruction`, a ShareGPT record's `system`. They are measured and never removed (nor returned).
   */
  readonly system?: unknown;
  /**
   * The tool schemas sent with the messages, as JSON (an OpenAI `tools` array, say; not the AI SDK's tool objects):
   * with `contextWindow`, their tokens come off both thresholds, as the command line counts a request body's `tools`.
   */
  readonly tools?: unknown;
  /**
   * Writes a summary for `strategy: 'summarize'` (Haystack's SummarizationCompactor): given the prompt's instruction
   * and transcript, returns the summary text (the AI SDK's `generateText`, say). Setting it without `strategy` makes
   * the strategy `summarize`. A call that throws ends the rounds, the last good result kept (see `strict`).
   */
  readonly summarize?: SummarizeCallback;
  /** Summarize: about how long a summary comes out, for planning (default 1024). */
  readonly summaryTokens?: number;
  /** Summarize: the prompt's instruction (default swc's own). */
  readonly summaryInstruction?: string;
  /** Summarize: a failed call, an empty reply or a summary that does not shrink throws instead of being skipped. */
  readonly strict?: boolean;
  /**
   * Summarize: the least share (0 to 1) of the replaced messages' identifiers (paths, URLs, hashes, errors…) a
   * summary must keep; one that keeps less counts as a failed call (the last good result stands; see `strict`).
   */
  readonly minRetention?: number;
  /**
   * A warm compactor's promise (like git's `--assume-unchanged`): a message object it has read is never edited in
   * place afterwards. Appended, replaced, deleted and moved messages are still noticed (by identity); an edit in
   * place is not (the compactor may decide on what the message held when it was read, or on a mix), so a caller that
   * edits a message should hand a new object instead. Saves walking every message's contents on every call (default
   * false: each message's shape is checked again, and edits in place are seen).
   */
  readonly assumeUnchanged?: boolean;
}

/** Where each format keeps instructions held outside its list. */
export const INSTRUCTION_KEYS: Readonly<Record<string, string>> = {
  anthropic: 'system',
  'ai-sdk': 'system',
  sharegpt: 'system',
  responses: 'instructions',
  gemini: 'systemInstruction',
};

/** Options checked once. */
export interface Checked {
  readonly tokenizer: TokenizerName;
  readonly counterOptions: CounterOptions;
  readonly target: number;
  readonly window: WindowThresholds | null;
  readonly minKeepSteps: number;
  readonly template: string | null;
  readonly adapter: FormatAdapter | null;
  readonly strategies: readonly StrategyName[];
  /** Messages read once are taken as unchanged while they are the same objects (see `assumeUnchanged`). */
  readonly assumeUnchanged: boolean;
  readonly minTokens: number | undefined;
  readonly placeholder: string | undefined;
  readonly summaryTokens: number;
  readonly summaryInstruction: string;
  readonly minRetention: number | undefined;
  /** The tool schemas' text as Haystack measures them, or null without any. */
  readonly tools: string | null;
}

/** Every option a compactor takes (the options table's), so that a misspelt one (`contextwindow`) is refused. */
const OPTION_NAMES: readonly string[] = libraryOptionNames();

/** A whole-number option, at least its bound in the options table. */
function checkWhole(name: string, value: unknown): void {
  const min = minOf(name);
  if (!Number.isSafeInteger(value) || (value as number) < min)
    fail(`${name} must be a whole number of at least ${min}, got ${shown(value)}`);
}

/**
 * The strategies named: one name, a list, or a comma-separated chain, each name at most once (as `--strategy`).
 * @throws OptionsError for an empty, unknown or repeated name, and for `offload`, which writes files
 */
function strategiesOf(given: CompactorOptions['strategy']): StrategyName[] {
  if (given === undefined) return ['window'];
  const names =
    typeof given === 'string'
      ? given.split(',').map((name) => name.trim())
      : Array.isArray(given)
        ? (given as unknown[])
        : null;
  if (names === null)
    fail(
      `strategy must be a name, a list of names or a comma-separated chain (${STRATEGIES.join(', ')}), got ${shown(given)}`,
    );
  const out = checkStrategies(LIBRARY, names as unknown[], typeof given === 'string' ? given : '');
  if (out.includes('offload')) {
    fail(
      'strategy offload writes each result to a file, which the library never does: use `swc compact --strategy offload`, or compactSource and write its `stored` files',
    );
  }
  return out;
}

/**
 * The options as an object of known names; no options (or null) are the empty object, whose missing budget is then
 * what is reported.
 * @throws OptionsError for options that are not an object, and for an option name a compactor does not take
 */
export function optionsObject(options: unknown): CompactorOptions {
  if (options === undefined || options === null) return {};
  if (typeof options !== 'object' || Array.isArray(options)) {
    fail(
      `options must be an object of settings, such as { target: 8000 } or { contextWindow: 128000 }, got ${shown(options)}`,
    );
  }
  for (const name of Object.keys(options)) {
    if (OPTION_NAMES.includes(name)) continue;
    const like = OPTION_NAMES.find((known) => known.toLowerCase() === name.toLowerCase());
    fail(
      `unknown option ${JSON.stringify(name)} (${like === undefined ? `options: ${OPTION_NAMES.join(', ')}` : `did you mean ${like}?`})`,
    );
  }
  return options as CompactorOptions;
}

/**
 * The counter's settings, checked as the command line checks its flags, before any tokenizer is loaded.
 * @throws OptionsError naming the option that is not valid, or that does not apply (a counter of your own counts as it does)
 */
function counterOptionsOf(options: CompactorOptions, tokenizer: TokenizerName): CounterOptions {
  const given = (['charsPerToken', 'tokensPerImage', 'tokensPerFile'] as const).filter(
    (key) => options[key] !== undefined,
  );
  if (options.counter !== undefined) {
    const counter = options.counter as unknown;
    if (
      typeof counter !== 'object' ||
      counter === null ||
      typeof (counter as TokenCounter).measure !== 'function' ||
      typeof (counter as TokenCounter).name !== 'string'
    ) {
      fail(
        `counter must be a TokenCounter (an object with a name and measure(rendered, limit?)), got ${shown(counter)}`,
      );
    }
    const stray = options.tokenizer !== undefined ? 'tokenizer' : given[0];
    if (stray !== undefined)
      fail(`${stray} sets up the built-in counter, which counter replaces: give one or the other`);
    return {};
  }
  for (const key of given) {
    if (typeof options[key] !== 'number') fail(`${key} must be a number, got ${shown(options[key])}`);
  }
  const counterOptions: CounterOptions = {
    ...(options.charsPerToken === undefined ? {} : { charsPerToken: options.charsPerToken }),
    ...(options.tokensPerImage === undefined ? {} : { tokensPerImage: options.tokensPerImage }),
    ...(options.tokensPerFile === undefined ? {} : { tokensPerFile: options.tokensPerFile }),
  };
  try {
    resolveCounterOptions(counterOptions, tokenizer);
  } catch (error) {
    if (error instanceof RangeError) fail(error.message);
    throw error;
  }
  return counterOptions;
}

/**
 * Checks every option once, by the rules the command line follows (src/settings/rules.ts): each error is an
 * `OptionsError` whose message starts with, or names, the option.
 */
export function checkOptions(given: unknown): Checked {
  const options = optionsObject(given);
  const tokenizer = checkTokenizer(LIBRARY, options.tokenizer ?? defaultOf('tokenizer'));
  const adapter = adapterOf(options);
  const minKeepSteps = options.minKeepSteps ?? (defaultOf('minKeepSteps') as number);
  checkWhole('minKeepSteps', minKeepSteps);
  const strategies =
    options.strategy === undefined && options.summarize !== undefined
      ? (['summarize'] as StrategyName[])
      : strategiesOf(options.strategy);
  const summarizing = summarizeOptionsOf(options, strategies);
  checkPruneOptions(options, strategies, minKeepSteps, adapter);
  if (options.note !== undefined && options.note !== null) {
    if (typeof options.note !== 'string')
      fail(
        `note must be a string, a template ({num_removed} is filled in), or null or '' for no note, got ${shown(options.note)}`,
      );
    if (options.note !== '') checkNote(LIBRARY, options.note);
  }
  if (options.createNote !== undefined && typeof options.createNote !== 'function') {
    fail(`createNote must be a function that builds the note message from its text, got ${shown(options.createNote)}`);
  }
  if (options.assumeUnchanged !== undefined && typeof options.assumeUnchanged !== 'boolean')
    fail(`assumeUnchanged must be true or false, got ${shown(options.assumeUnchanged)}`);
  const counterOptions = counterOptionsOf(options, tokenizer);
  const window = windowOf(options);
  return {
    assumeUnchanged: options.assumeUnchanged === true,
    tokenizer,
    counterOptions,
    target: window !== null ? window.target : targetOf(options.target),
    window,
    minKeepSteps,
    template: noteTemplate(options.note),
    adapter,
    strategies,
    minTokens: options.minTokens,
    placeholder: options.placeholder,
    ...summarizing,
    tools: options.tools === undefined || options.tools === null ? null : schemasText(options.tools),
  };
}

/** The format named (null for `auto`), and the instructions held outside the list, which only some formats have. */
function adapterOf(options: CompactorOptions): FormatAdapter | null {
  const format = options.format ?? 'auto';
  const adapter = format === 'auto' || typeof format !== 'string' ? null : (findFormat(format) ?? null);
  if (format !== 'auto' && adapter === null)
    fail(`unknown format ${shown(format)} (choose one of: auto, ${formatNames().join(', ')})`);
  if (options.system !== undefined) checkSystem(options.system);
  if (options.system !== undefined && adapter !== null && INSTRUCTION_KEYS[adapter.name] === undefined)
    fail(`system: the ${adapter.name} format keeps its instructions in the message list`);
  return adapter;
}

/** A fixed budget, when no context window sets it. */
function targetOf(target: unknown): number {
  if (target === undefined) fail('give target (a token budget) or contextWindow');
  checkWhole('target', target);
  return target as number;
}

/** The summarize options, each refused without the strategy. */
function summarizeOptionsOf(
  options: CompactorOptions,
  strategies: readonly StrategyName[],
): Pick<Checked, 'summaryTokens' | 'summaryInstruction' | 'minRetention'> {
  const summarizing = strategies.includes('summarize');
  if (summarizing && typeof options.summarize !== 'function')
    fail('strategy summarize needs the summarize option: an async function from {system, user} to the summary text');
  const given = options as Readonly<Record<string, unknown>>;
  const stray = OPTIONS.find(
    (row) => row.library === true && row.strategy === 'summarize' && given[row.name] !== undefined,
  );
  if (!summarizing && stray !== undefined) onlyWith(LIBRARY, stray.name, 'summarize');
  const summaryTokens = options.summaryTokens ?? (defaultOf('summaryTokens') as number);
  checkWhole('summaryTokens', summaryTokens);
  if (
    options.summaryInstruction !== undefined &&
    (typeof options.summaryInstruction !== 'string' || options.summaryInstruction.trim() === '')
  )
    fail('summaryInstruction must be a non-empty string');
  if (options.strict !== undefined && typeof options.strict !== 'boolean')
    fail(`strict must be true or false, got ${shown(options.strict)}`);
  const min = options.minRetention;
  if (min !== undefined && (typeof min !== 'number' || !(min >= 0 && min <= 1)))
    fail(`minRetention must be a share from 0 to 1, got ${shown(min)}`);
  return {
    summaryTokens,
    summaryInstruction: options.summaryInstruction ?? DEFAULT_SUMMARY_INSTRUCTION,
    minRetention: min,
  };
}

/** The pruning options: refused without the strategy, of the right type, and a format that can write a pruned result. */
function checkPruneOptions(
  options: CompactorOptions,
  strategies: readonly StrategyName[],
  minKeepSteps: number,
  adapter: FormatAdapter | null,
): void {
  checkStrategySettings(LIBRARY, strategies, {
    minKeepSteps,
    minTokens: options.minTokens,
    placeholder: options.placeholder,
  });
  if (options.minTokens !== undefined) checkWhole('minTokens', options.minTokens);
  const placeholder = options.placeholder;
  if (placeholder !== undefined && typeof placeholder !== 'string')
    fail(
      `placeholder must be a non-empty string (it is what the model sees in place of a pruned result), got ${shown(placeholder)}`,
    );
  if (placeholder !== undefined) checkPlaceholder(LIBRARY, placeholder);
  if (strategies.includes('prune') && adapter !== null && adapter.writePruned === undefined)
    fail(`strategy prune cannot write ${adapter.name} messages: the format has no way to write a replaced result`);
}

/**
 * Instructions are a string or the format's parts (an array or an object), and must be JSON: whether they fit the
 * messages' format is known only with the messages.
 */
function checkSystem(system: unknown): void {
  if (system !== null && typeof system !== 'string' && typeof system !== 'object') {
    fail(
      `system must be the instructions as your SDK takes them (a string, or the format's parts), got ${shown(system)}`,
    );
  }
  try {
    JSON.stringify(system, binaryAsText);
  } catch (error) {
    fail(`system must be the instructions as JSON: ${(error as Error).message}`);
  }
}

/** The thresholds of `contextWindow`, in doubles as Haystack's hook computes them (see `hookThresholds`). */
function windowOf(options: CompactorOptions): WindowThresholds | null {
  const given = {
    target: options.target !== undefined,
    contextWindow: options.contextWindow !== undefined,
    compactAt: options.compactAt !== undefined,
    compactTo: options.compactTo !== undefined,
  };
  if (!checkBudget(LIBRARY, given)) return null;
  const tokens = options.contextWindow;
  checkWhole('contextWindow', tokens);
  const { trigger, target } = checkWindow(
    LIBRARY,
    tokens as number,
    share('compactAt', options.compactAt ?? defaultOf('compactAt')),
    share('compactTo', options.compactTo ?? defaultOf('compactTo')),
  );
  return { trigger, target };
}

/** A share of the window as given: a finite number (its range is `checkWindow`'s). */
function share(name: string, value: unknown): { value: number; text: string } {
  if (typeof value !== 'number' || !Number.isFinite(value))
    fail(`${name} must be a number above 0 and at most 1, got ${shown(value)}`);
  return { value: value as number, text: String(value) };
}

/**
 * Writes binary data (an image's bytes in an AI SDK part, say) as a short stand-in: its size never decides anything
 * (images and files cost flat amounts), and a file could not hold it anyway.
 */
export function binaryAsText(this: unknown, key: string, value: unknown): unknown {
  const original = (this as Record<string, unknown>)[key];
  if (original instanceof ArrayBuffer) return `<${original.byteLength} bytes>`;
  if (ArrayBuffer.isView(original)) return `<${original.byteLength} bytes>`;
  return value;
}

/** Tool schemas as Haystack measures them (`json.dumps(tools, sort_keys=True)`). */
function schemasText(tools: unknown): string {
  if (typeof tools !== 'object')
    fail(`tools must be the JSON tool schemas sent to the model (an array or an object), got ${shown(tools)}`);
  let json: string | undefined;
  try {
    json = JSON.stringify(tools, binaryAsText);
  } catch (error) {
    fail(`tools must be the JSON tool schemas sent to the model: ${(error as Error).message}`);
  }
  return json === undefined ? 'null' : renderArguments(parseJson(json));
}
