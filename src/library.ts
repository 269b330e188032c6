import { noteTemplate, planCompaction, type Plan } from './core/compact.js';
import { hookThresholds } from './core/hook.js';
import { noteTemplateProblem } from './core/note.js';
import { parseJson } from './core/json-value.js';
import { elementReader, lazyList } from './core/lazy-list.js';
import { renderArguments } from './core/python-json.js';
import { renderMessage } from './core/render.js';
import type { Message, Rendered, TokenCounter } from './core/types.js';
import { InputError, UsageError } from './errors.js';
import { FORMATS, findFormat, formatNames } from './formats/registry.js';
import type { ConversationInput, FormatAdapter, Normalized } from './formats/types.js';
import { inventoryOf, type LocatedIdentifier } from './outcome/forgotten.js';
import { noteBeforeItem, writtenItems } from './outcome/outcome.js';
import {
  chooseFormat,
  decideChain,
  EXACT_COUNT_UP_TO,
  planWithThresholds,
  STRATEGIES,
  type OutputEntry,
  type StrategyName,
  type SummarizedConversation,
  type WindowThresholds,
} from './pipeline.js';
import { DEFAULT_SUMMARY_TOKENS, type SummaryAnswer, type SummaryRequest } from './core/summarize.js';
import { DEFAULT_SUMMARY_INSTRUCTION } from './core/summary-instruction.js';
import { itemsReader, makeSummaryItem } from './formats/types.js';
import { withReplies } from './summarize-run.js';
import {
  createCounter,
  isTokenizerName,
  resolveCounterOptions,
  TOKENIZERS,
  type CounterOptions,
  type TokenizerName,
} from './tokens/index.js';

/**
 * Compacting the messages an agent holds in memory, in the shape its SDK gives them. Each message goes through the
 * same adapter and the same decision as a file of those messages written as JSON, so the library and `swc compact`
 * keep the same messages; kept messages are handed back as the very objects passed in.
 */

/** The formats the library reads; `auto` tells them apart as the command line does. */
export type MessageFormat =
  | 'auto'
  | 'openai'
  | 'anthropic'
  | 'responses'
  | 'gemini'
  | 'haystack'
  | 'langchain'
  | 'claude-code'
  | 'sharegpt'
  | 'ai-sdk';

/** Settings of a compactor. Give `target`, or `contextWindow` (with `compactAt`/`compactTo`). */
export interface CompactorOptions<M = unknown> {
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
  readonly strategy?: StrategyName | readonly StrategyName[] | string;
  /** Pruning: only results of more than this many tokens are replaced (default 200). */
  readonly minTokens?: number;
  /** Pruning: the text left in place of a result, `{tool_name}` filled in (default Haystack's). */
  readonly placeholder?: string;
  /** The note template; `null` or `''` removes silently. Default: the standard note. */
  readonly note?: string | null;
  /** Builds the note yourself (a LangChain `HumanMessage`, say) from its text, instead of the format's plain object. */
  readonly createNote?: (text: string) => M;
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
  readonly summarize?: (request: { readonly system: string; readonly user: string }) => Promise<string>;
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
}

/** What one compaction gives back. */
export interface CompactedMessages<M> {
  /** A new array: the kept messages (the objects passed in) and the note, in order. */
  readonly messages: M[];
  /** Whether anything was removed or pruned. */
  readonly changed: boolean;
  /**
   * The decision, its indices those of the normalized conversation (instructions held outside the list come first).
   * `tokensBefore` is exact when `tokensBeforeExact`; otherwise the decision stopped counting once past the budget,
   * and it is an estimate of the whole (as the command line's `≈`), never below what was counted.
   */
  readonly plan: Plan;
  /** The format the messages were read as. */
  readonly format: string;
  /**
   * The identifiers (file paths, URLs, hashes, UUIDs, errors, `inline code` symbols) named only in the messages this
   * compaction removed or pruned, nowhere in what it kept or in the note: what the agent no longer knows. `message` is
   * the index in the array passed in of the first message naming it. Worked out when first read.
   */
  readonly forgotten: readonly LocatedIdentifier[];
  /** With summarize: every round (what it replaced, its prompt, its summary), the summaries kept, a failed round. */
  readonly summarized?: SummarizedConversation;
}

/** A compactor with its tokenizer loaded: `compact` is synchronous, for an agent's loop. */
export interface Compactor {
  /** The counter's name. */
  readonly tokenizer: string;
  /**
   * Compacts a conversation.
   * @param messages the messages, in the compactor's format; never modified
   * @throws InputError naming the index of a message that does not fit the format (or cannot be written as JSON)
   */
  compact<M>(messages: readonly M[]): CompactedMessages<M>;
  /** As `compact`, awaiting the `summarize` option between rounds (the only way with `strategy: 'summarize'`). */
  compactAsync<M>(messages: readonly M[]): Promise<CompactedMessages<M>>;
}

/** Where each format keeps instructions held outside its list. */
const INSTRUCTION_KEYS: Readonly<Record<string, string>> = {
  anthropic: 'system',
  'ai-sdk': 'system',
  sharegpt: 'system',
  responses: 'instructions',
  gemini: 'systemInstruction',
};

/** The default share of the window from which, and to which, a conversation is compacted (as the command line's). */
const DEFAULT_COMPACT_AT = 0.7;
const DEFAULT_COMPACT_TO = 0.4;

/**
 * Loads the tokenizer once and returns a compactor.
 * @param options the budget, the format and the counter
 * @throws UsageError for options that contradict each other or are out of range
 */
export async function createCompactor(options: CompactorOptions): Promise<Compactor> {
  const checked = checkOptions(options);
  const settings = optionsObject(options);
  const counter = settings.counter ?? (await createCounter(checked.tokenizer, checked.counterOptions));
  return compactorWith(counter, settings, checked);
}

/**
 * Compacts a conversation once (a loop should keep one `createCompactor` instead: it loads the tokenizer once
 * and remembers what it counted).
 * @param messages the messages as the SDK holds them; never modified
 * @param options the budget, the format and the counter
 */
export async function compactMessages<M>(
  messages: readonly M[],
  options: CompactorOptions<M>,
): Promise<CompactedMessages<M>> {
  return (await createCompactor(options)).compactAsync(messages);
}

/** Options checked once. */
interface Checked {
  readonly tokenizer: TokenizerName;
  readonly counterOptions: CounterOptions;
  readonly target: number;
  readonly window: WindowThresholds | null;
  readonly minKeepSteps: number;
  readonly template: string | null;
  readonly adapter: FormatAdapter | null;
  readonly strategies: readonly StrategyName[];
  readonly minTokens: number | undefined;
  readonly placeholder: string | undefined;
  readonly summaryTokens: number;
  readonly summaryInstruction: string;
  readonly minRetention: number | undefined;
  /** The tool schemas' text as Haystack measures them, or null without any. */
  readonly tools: string | null;
}

/**
 * Every option a compactor takes, so that a misspelt one (`contextwindow`) is refused instead of silently ignored.
 * Typed against `CompactorOptions`: an option added there without a place here does not compile.
 */
const OPTION_NAMES: readonly string[] = Object.keys({
  format: true,
  target: true,
  contextWindow: true,
  compactAt: true,
  compactTo: true,
  minKeepSteps: true,
  strategy: true,
  minTokens: true,
  placeholder: true,
  note: true,
  createNote: true,
  tokenizer: true,
  charsPerToken: true,
  tokensPerImage: true,
  tokensPerFile: true,
  counter: true,
  system: true,
  tools: true,
  summarize: true,
  summaryTokens: true,
  summaryInstruction: true,
  strict: true,
  minRetention: true,
} satisfies Record<keyof CompactorOptions, true>);

/** A value as an error message shows it: a string quoted, a number as itself, anything else by what it is. */
function shown(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === undefined || value === null)
    return String(value);
  if (typeof value === 'bigint') return `${value}n`;
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/**
 * The strategies named: one name, a list, or a comma-separated chain, each name at most once (as `--strategy`).
 * @throws UsageError for an empty, unknown or repeated name, and for `offload`, which writes files
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
    throw new UsageError(
      `strategy must be a name, a list of names or a comma-separated chain (${STRATEGIES.join(', ')}), got ${shown(given)}`,
    );
  if (names.length === 0) throw new UsageError('strategy names no strategy');
  const out: StrategyName[] = [];
  for (const name of names) {
    if (typeof name !== 'string' || !(STRATEGIES as readonly string[]).includes(name)) {
      throw new UsageError(`unknown strategy ${shown(name)} (choose from: ${STRATEGIES.join(', ')})`);
    }
    if (out.includes(name as StrategyName))
      throw new UsageError(`strategy names "${name}" twice: each strategy runs once in a chain`);
    out.push(name as StrategyName);
  }
  if (out.includes('offload')) {
    throw new UsageError(
      'strategy offload writes each result to a file, which the library never does: use `swc compact --strategy offload`, or compactSource and write its `stored` files',
    );
  }
  return out;
}

/**
 * The options as an object of known names; no options (or null) are the empty object, whose missing budget is then
 * what is reported.
 * @throws UsageError for options that are not an object, and for an option name a compactor does not take
 */
function optionsObject(options: unknown): CompactorOptions {
  if (options === undefined || options === null) return {};
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw new UsageError(
      `options must be an object of settings, such as { target: 8000 } or { contextWindow: 128000 }, got ${shown(options)}`,
    );
  }
  for (const name of Object.keys(options)) {
    if (OPTION_NAMES.includes(name)) continue;
    const like = OPTION_NAMES.find((known) => known.toLowerCase() === name.toLowerCase());
    throw new UsageError(
      `unknown option ${JSON.stringify(name)} (${like === undefined ? `options: ${OPTION_NAMES.join(', ')}` : `did you mean ${like}?`})`,
    );
  }
  return options as CompactorOptions;
}

/**
 * The counter's settings, checked as the command line checks its flags, before any tokenizer is loaded.
 * @throws UsageError naming the option that is not valid, or that does not apply (a counter of your own counts as it does)
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
      throw new UsageError(
        `counter must be a TokenCounter (an object with a name and measure(rendered, limit?)), got ${shown(counter)}`,
      );
    }
    const stray = options.tokenizer !== undefined ? 'tokenizer' : given[0];
    if (stray !== undefined)
      throw new UsageError(`${stray} sets up the built-in counter, which counter replaces: give one or the other`);
    return {};
  }
  for (const key of given) {
    if (typeof options[key] !== 'number') throw new UsageError(`${key} must be a number, got ${shown(options[key])}`);
  }
  const counterOptions: CounterOptions = {
    ...(options.charsPerToken === undefined ? {} : { charsPerToken: options.charsPerToken }),
    ...(options.tokensPerImage === undefined ? {} : { tokensPerImage: options.tokensPerImage }),
    ...(options.tokensPerFile === undefined ? {} : { tokensPerFile: options.tokensPerFile }),
  };
  try {
    resolveCounterOptions(counterOptions, tokenizer);
  } catch (error) {
    if (error instanceof RangeError) throw new UsageError(error.message);
    throw error;
  }
  return counterOptions;
}

/**
 * Checks every option once, as the command line checks its flags: each error is a `UsageError` whose message starts
 * with, or names, the option.
 */
function checkOptions(given: unknown): Checked {
  const options = optionsObject(given);
  const tokenizer = options.tokenizer ?? 'o200k_base';
  if (!isTokenizerName(tokenizer))
    throw new UsageError(`unknown tokenizer ${shown(tokenizer)} (choose one of: ${TOKENIZERS.join(', ')})`);
  const format = options.format ?? 'auto';
  const adapter = format === 'auto' || typeof format !== 'string' ? null : (findFormat(format) ?? null);
  if (format !== 'auto' && adapter === null)
    throw new UsageError(`unknown format ${shown(format)} (choose one of: auto, ${formatNames().join(', ')})`);
  if (options.system !== undefined) checkSystem(options.system);
  if (options.system !== undefined && adapter !== null && INSTRUCTION_KEYS[adapter.name] === undefined) {
    throw new UsageError(`system: the ${adapter.name} format keeps its instructions in the message list`);
  }
  const minKeepSteps = options.minKeepSteps ?? 1;
  if (!Number.isSafeInteger(minKeepSteps) || minKeepSteps < 0)
    throw new UsageError(`minKeepSteps must be a whole number of at least 0, got ${shown(minKeepSteps)}`);
  const strategies =
    options.strategy === undefined && options.summarize !== undefined
      ? (['summarize'] as StrategyName[])
      : strategiesOf(options.strategy);
  const summarizing = strategies.includes('summarize');
  if (summarizing && typeof options.summarize !== 'function')
    throw new UsageError(
      'strategy summarize needs the summarize option: an async function from {system, user} to the summary text',
    );
  for (const [name, value] of [
    ['summarize', options.summarize],
    ['summaryTokens', options.summaryTokens],
    ['summaryInstruction', options.summaryInstruction],
    ['strict', options.strict],
    ['minRetention', options.minRetention],
  ] as const) {
    if (!summarizing && value !== undefined) throw new UsageError(`${name} only applies with strategy summarize`);
  }
  const summaryTokens = options.summaryTokens ?? DEFAULT_SUMMARY_TOKENS;
  if (!Number.isSafeInteger(summaryTokens) || summaryTokens < 1)
    throw new UsageError(`summaryTokens must be a whole number of at least 1, got ${shown(options.summaryTokens)}`);
  if (
    options.summaryInstruction !== undefined &&
    (typeof options.summaryInstruction !== 'string' || options.summaryInstruction.trim() === '')
  ) {
    throw new UsageError('summaryInstruction must be a non-empty string');
  }
  if (options.strict !== undefined && typeof options.strict !== 'boolean')
    throw new UsageError(`strict must be true or false, got ${shown(options.strict)}`);
  if (
    options.minRetention !== undefined &&
    (typeof options.minRetention !== 'number' || !(options.minRetention >= 0 && options.minRetention <= 1))
  ) {
    throw new UsageError(`minRetention must be a share from 0 to 1, got ${shown(options.minRetention)}`);
  }
  const pruning = strategies.includes('prune');
  if (pruning && minKeepSteps < 1) {
    throw new UsageError(
      'minKeepSteps must be at least 1 with strategy prune: the newest results are the ones the model is about to act on',
    );
  }
  if (options.minTokens !== undefined) {
    if (!pruning) throw new UsageError('minTokens only applies with strategy prune');
    if (!Number.isSafeInteger(options.minTokens) || options.minTokens < 0)
      throw new UsageError(`minTokens must be a whole number of at least 0, got ${shown(options.minTokens)}`);
  }
  if (options.placeholder !== undefined) {
    if (!pruning) throw new UsageError('placeholder only applies with strategy prune');
    if (typeof options.placeholder !== 'string' || options.placeholder === '') {
      throw new UsageError(
        `placeholder must be a non-empty string (it is what the model sees in place of a pruned result), got ${shown(options.placeholder)}`,
      );
    }
    if (options.placeholder.replaceAll('{tool_name}', '').trim() === '') throw new UsageError(BARE_PLACEHOLDER);
  }
  if (pruning && adapter !== null && adapter.writePruned === undefined) {
    throw new UsageError(
      `strategy prune cannot write ${adapter.name} messages: the format has no way to write a replaced result`,
    );
  }
  if (options.note !== undefined && options.note !== null) {
    if (typeof options.note !== 'string')
      throw new UsageError(
        `note must be a string, a template ({num_removed} is filled in), or null or '' for no note, got ${shown(options.note)}`,
      );
    const problem = options.note === '' ? null : noteTemplateProblem(options.note);
    if (problem !== null)
      throw new UsageError(
        `note ${problem} (as in '[{num_removed} earlier messages were removed.]'), or null for none`,
      );
  }
  if (options.createNote !== undefined && typeof options.createNote !== 'function') {
    throw new UsageError(
      `createNote must be a function that builds the note message from its text, got ${shown(options.createNote)}`,
    );
  }
  const counterOptions = counterOptionsOf(options, tokenizer);
  const window = windowOf(options);
  let target: number;
  if (window !== null) target = window.target;
  else {
    if (options.target === undefined) throw new UsageError('give target (a token budget) or contextWindow');
    if (!Number.isSafeInteger(options.target) || options.target < 1)
      throw new UsageError(`target must be a whole number of at least 1, got ${shown(options.target)}`);
    target = options.target;
  }
  return {
    tokenizer,
    counterOptions,
    target,
    window,
    minKeepSteps,
    template: noteTemplate(options.note),
    adapter,
    strategies,
    minTokens: options.minTokens,
    placeholder: options.placeholder,
    summaryTokens,
    summaryInstruction: options.summaryInstruction ?? DEFAULT_SUMMARY_INSTRUCTION,
    minRetention: options.minRetention,
    tools: options.tools === undefined || options.tools === null ? null : schemasText(options.tools),
  };
}

/**
 * Instructions are a string or the format's parts (an array or an object), and must be JSON: whether they fit the
 * messages' format is known only with the messages.
 */
function checkSystem(system: unknown): void {
  if (system !== null && typeof system !== 'string' && typeof system !== 'object') {
    throw new UsageError(
      `system must be the instructions as your SDK takes them (a string, or the format's parts), got ${shown(system)}`,
    );
  }
  try {
    JSON.stringify(system, binaryAsText);
  } catch (error) {
    throw new UsageError(`system must be the instructions as JSON: ${(error as Error).message}`);
  }
}

/** The thresholds of `contextWindow`, in doubles as Haystack's hook computes them (see `hookThresholds`). */
function windowOf(options: CompactorOptions): WindowThresholds | null {
  if (options.contextWindow === undefined) {
    const stray = options.compactAt !== undefined ? 'compactAt' : options.compactTo !== undefined ? 'compactTo' : null;
    if (stray !== null) throw new UsageError(`${stray} needs contextWindow: its fraction is a share of that window`);
    return null;
  }
  if (options.target !== undefined) throw new UsageError('target and contextWindow both set the budget: give one');
  const tokens = options.contextWindow;
  if (!Number.isSafeInteger(tokens) || tokens < 1)
    throw new UsageError(`contextWindow must be a whole number of at least 1, got ${shown(tokens)}`);
  const at = share('compactAt', options.compactAt ?? DEFAULT_COMPACT_AT);
  const to = share('compactTo', options.compactTo ?? DEFAULT_COMPACT_TO);
  if (!(to < at)) throw new UsageError(`compactTo (${to}) must be below compactAt (${at})`);
  const { trigger, target } = hookThresholds(tokens, at, to);
  if (target < 1) throw new UsageError(`compactTo ${to} of a ${tokens}-token window is less than one token`);
  return { trigger, target };
}

/** A share in (0, 1], as given. */
function share(name: string, value: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > 1)
    throw new UsageError(`${name} must be a number above 0 and at most 1, got ${shown(value)}`);
  return value;
}

/** A message as the adapters read it: its JSON text and that text parsed, as a file of the messages would give them. */
interface AsJson {
  readonly raw: string;
  readonly item: unknown;
}

/**
 * Writes binary data (an image's bytes in an AI SDK part, say) as a short stand-in: its size never decides anything
 * (images and files cost flat amounts), and a file could not hold it anyway.
 */
function binaryAsText(this: unknown, key: string, value: unknown): unknown {
  const original = (this as Record<string, unknown>)[key];
  if (original instanceof ArrayBuffer) return `<${original.byteLength} bytes>`;
  if (ArrayBuffer.isView(original)) return `<${original.byteLength} bytes>`;
  return value;
}

/** A message's JSON, or the InputError that names it. */
/** Why a placeholder of nothing but `{tool_name}` is refused, in the library's words and the command line's. */
const BARE_PLACEHOLDER =
  'placeholder needs text besides {tool_name}: earlier placeholders are recognised by that text, and a bare {tool_name} would match every result, so nothing would be pruned';

function toJson(message: unknown, k: number): AsJson {
  let raw: string | undefined;
  try {
    raw = JSON.stringify(message, binaryAsText);
  } catch (error) {
    const cyclic = error instanceof TypeError && /circular/i.test(error.message);
    throw new InputError(
      cyclic
        ? 'a message that refers to itself (a cycle) cannot be compacted'
        : `cannot be written as JSON (${(error as Error).message})`,
      `messages[${k}]`,
    );
  }
  if (raw === undefined) throw new InputError(`expected a message, found ${typeof message}`, `messages[${k}]`);
  return { raw, item: JSON.parse(raw) as unknown };
}

/**
 * Remembers, from one call to the next, one rendered object per rendered text: counters keep counts per rendered
 * object, so a message already counted in the previous call is not counted again. Two generations are kept, so
 * what it holds is at most the texts of the last two conversations.
 */
class RenderedMemory {
  private current = new Map<string, Rendered>();
  private previous = new Map<string, Rendered>();

  /** A counter that hands `inner` the remembered object for each text it has seen. */
  counter(inner: TokenCounter): TokenCounter {
    const canonical = (r: Rendered): Rendered => {
      const known = this.current.get(r.text) ?? this.previous.get(r.text);
      if (known !== undefined && known.images === r.images && known.files === r.files) {
        this.current.set(r.text, known);
        return known;
      }
      this.current.set(r.text, r);
      return r;
    };
    const view = (messages: readonly Rendered[]): readonly Rendered[] => {
      const at = elementReader(messages);
      return lazyList(messages.length, (k) => canonical(at(k)));
    };
    const apart = inner.measureApart;
    return {
      name: inner.name,
      measure: (messages, limit) => inner.measure(view(messages), limit),
      // Passed on, so chains decide lazily here as on the command line.
      ...(apart === undefined
        ? {}
        : {
            measureApart: (messages: readonly Rendered[], set: ReadonlySet<number>, limit?: number) =>
              apart.call(inner, view(messages), set, limit),
          }),
    };
  }

  /** Starts the next call: what the last one did not see is forgotten. */
  nextCall(): void {
    this.previous = this.current;
    this.current = new Map();
  }
}

function compactorWith(counter: TokenCounter, options: CompactorOptions, checked: Checked): Compactor {
  // Each message object's JSON, made once: the input is never modified, so an object's JSON cannot change.
  const json = new WeakMap<object, AsJson>();
  const memory = new RenderedMemory();
  const remembering = memory.counter(counter);
  const toolsText = checked.tools;
  const asJson = (message: unknown, k: number): AsJson => {
    if (typeof message !== 'object' || message === null) return toJson(message, k);
    let known = json.get(message);
    if (known === undefined) {
      known = toJson(message, k);
      json.set(message, known);
    }
    return known;
  };
  /** One compaction, its summary replies (if any) taken from `answer`. */
  const compactWith = <M>(
    messages: readonly M[],
    answer: ((request: SummaryRequest) => SummaryAnswer) | null,
  ): CompactedMessages<M> => {
    if (!Array.isArray(messages))
      throw new InputError(
        `expected an array of messages, found ${messages === null ? 'null' : typeof messages}`,
        'messages',
      );
    // Array.from visits holes too (as undefined), so a sparse array is refused like any other non-message.
    const converted = Array.from(messages as readonly unknown[], (m, k) => asJson(m, k));
    const items = converted.map((c) => c.item);
    const raws = converted.map((c) => c.raw);
    const { adapter, container } = formatOf(items, checked.adapter, options.system);
    const input: ConversationInput = {
      file: 'messages',
      items,
      raws,
      container,
      fail(item, reason): never {
        throw new InputError(reason, `messages[${item}]`);
      },
    };
    const normalized = adapter.normalize(input, checked.template);
    memory.nextCall();
    let summarized: SummarizedConversation | undefined;
    let output: readonly OutputEntry[] | undefined;
    const settings = { minKeepSteps: checked.minKeepSteps, note: checked.template };
    let plan: Plan;
    let decided = normalized;
    let edits: ReadonlyMap<number, string> = new Map();
    if (checked.strategies.length === 1 && checked.strategies[0] === 'window') {
      plan =
        checked.window === null
          ? planCompaction(normalized.messages, remembering, { ...settings, target: checked.target })
          : planWithThresholds(normalized.messages, remembering, settings, checked.window, toolsText).plan;
    } else {
      // The chain `swc compact --strategy` runs, on the same items: pruned ones come back as the format writes them.
      const chainOptions = {
        target: checked.target,
        minKeepSteps: checked.minKeepSteps,
        counter: remembering,
        ...(checked.window === null ? {} : { window: checked.window }),
        ...(checked.minTokens === undefined ? {} : { minTokens: checked.minTokens }),
        ...(checked.placeholder === undefined ? {} : { placeholder: checked.placeholder }),
        ...(answer === null
          ? {}
          : {
              summarize: {
                instruction: checked.summaryInstruction,
                summaryTokens: checked.summaryTokens,
                ...(checked.minRetention === undefined ? {} : { minRetention: checked.minRetention }),
                answer,
              },
            }),
      };
      const chain = decideChain(
        raws,
        adapter,
        normalized,
        chainOptions,
        checked.template,
        checked.strategies,
        toolsText,
        'messages',
      );
      ({ plan, normalized: decided, edits } = chain);
      summarized = chain.summarized;
      output = chain.output;
    }
    const failure = summarized?.failure;
    if (options.strict === true && failure !== undefined && failure !== null)
      throw new InputError(`summarize round ${failure.round + 1} failed: ${failure.reason}`, 'messages');
    const extra = summarized === undefined ? {} : { summarized };
    // Estimated on the messages as read: a chain may have pruned kept ones.
    plan = withEstimatedBefore(plan, normalized, remembering, () => isWithin(raws, EXACT_COUNT_UP_TO));
    const forgotten = forgottenOf(
      normalized,
      decided,
      plan,
      (summarized?.summaries ?? []).map((x) => x.text),
    );
    if (!plan.changed)
      return { messages: [...messages], changed: false, plan, format: adapter.name, forgotten: [], ...extra };
    const out =
      output !== undefined && summarized !== undefined
        ? assembleEntries(
            adapter,
            input,
            messages,
            decided,
            output,
            summarized,
            edits,
            options.createNote as ((text: string) => M) | undefined,
          )
        : assemble(
            adapter,
            input,
            messages,
            decided,
            plan,
            edits,
            options.createNote as ((text: string) => M) | undefined,
          );
    return {
      messages: out,
      changed: true,
      plan,
      format: adapter.name,
      get forgotten(): readonly LocatedIdentifier[] {
        return forgotten();
      },
      ...extra,
    };
  };
  const summarize = options.summarize;
  return {
    tokenizer: counter.name,
    compact<M>(messages: readonly M[]): CompactedMessages<M> {
      if (checked.strategies.includes('summarize'))
        throw new UsageError('strategy summarize awaits a model: use compactAsync (or compactMessages)');
      return compactWith(messages, null);
    },
    async compactAsync<M>(messages: readonly M[]): Promise<CompactedMessages<M>> {
      if (summarize === undefined || !checked.strategies.includes('summarize')) return compactWith(messages, null);
      // The conversation as it was when the call began: a caller that changes its array while a summary is awaited
      // gets the compaction of what it passed, never of messages added since.
      const snapshot = [...messages];
      const done = await withReplies(
        (answer) => compactWith(snapshot, answer),
        async (request) => ({ text: summaryTextOf(await summarize({ system: request.system, user: request.user })) }),
      );
      return done.value;
    },
  };
}

/** What a compaction forgets, worked out on first call: removed messages and the results pruning replaced. */
function forgottenOf(
  read: Normalized,
  decided: Normalized,
  plan: Plan,
  summaries: readonly string[],
): () => readonly LocatedIdentifier[] {
  let found: readonly LocatedIdentifier[] | null = null;
  const itemsAt = itemsReader(read.itemsOf);
  return () => {
    found ??= inventoryOf({
      original: read.messages,
      decided: decided.messages,
      kept: plan.kept,
      removed: plan.removed,
      replaced: plan.kept.filter((m) => decided.messages[m] !== read.messages[m]),
      offloaded: [],
      added: [plan.noteText, ...summaries],
      positionOf: (m) => itemsAt(m)[0] ?? m,
    }).forgotten;
    return found;
  };
}

/**
 * The summarized list: the output's messages in order, kept ones as the objects passed in (pruned ones parsed from
 * the text the format wrote), each summary as the format writes it (or `createNote` of its text).
 */
function assembleEntries<M>(
  adapter: FormatAdapter,
  input: ConversationInput,
  messages: readonly M[],
  normalized: Normalized,
  output: readonly OutputEntry[],
  summarized: SummarizedConversation,
  pruned: ReadonlyMap<number, string>,
  createNote: ((text: string) => M) | undefined,
): M[] {
  if (adapter.finish !== undefined && output.filter((e) => !('input' in e)).length > 0) {
    throw new InputError(
      `strategy summarize cannot write ${adapter.name} messages in memory: their lines link to each other; use swc compact`,
      'messages',
    );
  }
  const pinned = [...(normalized.pinned ?? [])].sort((a, b) => a - b);
  const itemsAt = itemsReader(normalized.itemsOf);
  const out: M[] = [];
  let p = 0;
  const item = (k: number): void => {
    const changed = pruned.get(k);
    out.push(changed === undefined ? (messages[k] as M) : (JSON.parse(changed) as M));
  };
  output.forEach((entry, position) => {
    if ('summary' in entry) {
      const s = summarized.summaries.find((x) => x.position === position);
      if (s === undefined) return;
      out.push(
        createNote !== undefined
          ? createNote(s.text)
          : (makeSummaryItem(adapter, { text: s.text, summarized: s.summarized, items: input.items }) as M),
      );
      return;
    }
    if ('note' in entry) {
      out.push(
        createNote !== undefined
          ? createNote(entry.note)
          : (adapter.makeNote({ text: entry.note, removed: entry.removed, kept: entry.kept, items: input.items }) as M),
      );
      return;
    }
    const items = [...itemsAt(entry.input)].sort((a, b) => a - b);
    const first = items[0];
    if (first !== undefined) while (p < pinned.length && (pinned[p] as number) < first) item(pinned[p++] as number);
    for (const k of items) item(k);
  });
  while (p < pinned.length) item(pinned[p++] as number);
  return out;
}

/**
 * The plan with `tokensBefore` an estimate of the whole conversation where the decision stopped counting early, as
 * the command line's `≈`: the kept messages' exact tokens as they were read plus an estimate of the removed ones, never below the decision's own lower bound. Worked out the first time it is read: a loop that never
 * reads it never pays for it.
 */
function withEstimatedBefore(plan: Plan, normalized: Normalized, counter: TokenCounter, small: () => boolean): Plan {
  if (plan.tokensBeforeExact) return plan;
  let tokensBefore: number | null = null;
  let exact: boolean | null = null;
  const { messages } = normalized;
  return {
    ...plan,
    // Counted exactly up to the size the command line counts exactly (EXACT_COUNT_UP_TO), estimated above.
    get tokensBeforeExact(): boolean {
      exact ??= small();
      return exact;
    },
    get tokensBefore(): number {
      if (tokensBefore === null && this.tokensBeforeExact) {
        tokensBefore = counter.measure(lazyList(messages.length, (k) => renderMessage(messages[k] as Message)));
      }
      if (tokensBefore === null) {
        // The kept messages as they were read (a chain may have pruned or offloaded some of them), counted exactly.
        const kept =
          plan.kept.length === 0
            ? 0
            : counter.measure(
                lazyList(plan.kept.length, (k) =>
                  renderMessage(normalized.messages[plan.kept[k] as number] as Message),
                ),
              );
        tokensBefore = Math.max(plan.tokensBefore, kept + removedTokens(plan.removed, normalized.messages, counter));
      }
      return tokensBefore;
    },
  };
}

/**
 * The summary a `summarize` callback gave: a string, or a failed call naming what it returned instead (an AI SDK
 * result object is the most common slip: its summary is its `.text`).
 */
function summaryTextOf(reply: unknown): string {
  if (typeof reply === 'string') return reply;
  const hint =
    reply !== null && typeof reply === 'object' && typeof (reply as { text?: unknown }).text === 'string'
      ? ' (return its .text)'
      : '';
  throw new Error(`the summarize callback returned ${shown(reply)}, not the summary's text as a string${hint}`);
}

/** Whether texts add up to at most `limit` characters. */
function isWithin(texts: readonly string[], limit: number): boolean {
  let total = 0;
  for (const t of texts) if ((total += t.length) > limit) return false;
  return true;
}

/** Rendered characters of removed messages counted exactly for an estimate: about 16,000 tokens. */
const SAMPLE_CHARS = 64_000;

/**
 * An estimate of the removed messages' tokens: their rendered text (what is counted: not a Claude Code line's
 * metadata, nor JSON's escapes) at the tokens per character of an exactly counted sample of them, every k-th message,
 * so that tool results and prose weigh in as often as they occur; their images and files at the counter's flat
 * costs. All of them are counted when their text is within the sample's size.
 */
function removedTokens(removed: readonly number[], messages: readonly Message[], counter: TokenCounter): number {
  const texts: string[] = [];
  const media = { text: '', images: 0, files: 0 };
  let length = 0;
  for (const i of removed) {
    const r = renderMessage(messages[i] as Message);
    texts.push(r.text);
    length += r.text.length;
    media.images += r.images;
    media.files += r.files;
  }
  const mediaTokens = media.images + media.files > 0 ? counter.measure([media]) : 0;
  if (length === 0) return mediaTokens;
  const stride = Math.max(1, Math.round(length / SAMPLE_CHARS));
  let sampleTokens = 0;
  let sampleLength = 0;
  for (let k = 0; k < texts.length; k += stride) {
    const text = texts[k] as string;
    if (text === '') continue;
    sampleTokens += counter.measure([{ text, images: 0, files: 0 }]);
    sampleLength += text.length;
  }
  const rate = sampleLength > 0 ? sampleTokens / sampleLength : 1 / FALLBACK_CHARS_PER_TOKEN;
  return sampleTokens + Math.round((length - sampleLength) * rate) + mediaTokens;
}

/** Characters per token an estimate assumes when no sampled message has text (Haystack's 4). */
const FALLBACK_CHARS_PER_TOKEN = 4;

/** Tool schemas as Haystack measures them (`json.dumps(tools, sort_keys=True)`). */
function schemasText(tools: unknown): string {
  if (typeof tools !== 'object')
    throw new UsageError(
      `tools must be the JSON tool schemas sent to the model (an array or an object), got ${shown(tools)}`,
    );
  let json: string | undefined;
  try {
    json = JSON.stringify(tools, binaryAsText);
  } catch (error) {
    throw new UsageError(`tools must be the JSON tool schemas sent to the model: ${(error as Error).message}`);
  }
  return json === undefined ? 'null' : renderArguments(parseJson(json));
}

/** The adapter for the messages, and the container its instructions are handed in. */
function formatOf(
  items: readonly unknown[],
  named: FormatAdapter | null,
  system: unknown,
): { adapter: FormatAdapter; container: Record<string, unknown> | null } {
  const containerFor = (adapter: FormatAdapter): Record<string, unknown> | null => {
    if (system === undefined) return null;
    const key = INSTRUCTION_KEYS[adapter.name];
    if (key === undefined)
      throw new UsageError(`system: the ${adapter.name} format keeps its instructions in the message list`);
    return { [key]: system };
  };
  if (named !== null) return { adapter: named, container: containerFor(named) };
  const shape = { where: 'the messages', items, container: null, key: null };
  let found: FormatAdapter;
  try {
    found = chooseFormat(shape, 'auto', 'messages');
  } catch (error) {
    // The command line's advice names its flags; here the option is `format`.
    if (!(error instanceof InputError)) throw error;
    throw new InputError(
      error.reason.replace('pass --format (', 'pass the format option (').replace(/, or --conversation-key .*$/, ''),
      error.file,
    );
  }
  if (system === undefined || INSTRUCTION_KEYS[found.name] !== undefined)
    return { adapter: found, container: containerFor(found) };
  // Instructions outside the list: the first format that keeps them there and takes these messages with them
  // (plain `{role, content}` messages with a `system` beside them are Anthropic's).
  // An empty list with instructions beside it: any such format reads it the same (nothing to remove).
  const keeping =
    FORMATS.find((f) => INSTRUCTION_KEYS[f.name] !== undefined && f.detect(items, containerFor(f))) ??
    (items.length === 0 ? findFormat('anthropic') : undefined);
  return { adapter: keeping ?? found, container: containerFor(keeping ?? found) };
}

/**
 * The compacted list: kept messages (the objects passed in) in order, messages that stand for no message of their
 * own where they were, and the note before the first kept message after it. A format whose messages refer to each
 * other (Claude Code's `parentUuid`) relinks kept messages whose parent was removed, and a pruned message is the text
 * the format wrote for it: those come back as new objects, parsed from that text.
 */
function assemble<M>(
  adapter: FormatAdapter,
  input: ConversationInput,
  messages: readonly M[],
  normalized: Normalized,
  plan: Plan,
  pruned: ReadonlyMap<number, string>,
  createNote: ((text: string) => M) | undefined,
): M[] {
  const raws = pruned.size === 0 ? input.raws : input.raws.map((raw, k) => pruned.get(k) ?? raw);
  const order = writtenItems(plan, normalized);
  const noteBefore = noteBeforeItem(plan, normalized);
  let note: unknown =
    plan.noteText === null
      ? null
      : adapter.makeNote({ text: plan.noteText, removed: plan.removedCount, kept: plan.keptCount, items: input.items });
  let edited: ReadonlyMap<number, string> | undefined;
  if (adapter.finish !== undefined) {
    const done = adapter.finish({
      items: input.items,
      raws,
      kept: order,
      noteBefore: plan.noteText === null ? null : noteBefore,
      note,
    });
    if (done.note !== undefined) note = done.note;
    edited = done.raws;
  }
  if (createNote !== undefined && plan.noteText !== null) note = createNote(plan.noteText);
  const out: M[] = [];
  let noteWritten = plan.noteText === null;
  for (const item of order) {
    if (!noteWritten && item >= noteBefore) {
      out.push(note as M);
      noteWritten = true;
    }
    const changed = edited?.get(item) ?? pruned.get(item);
    out.push(changed === undefined ? (messages[item] as M) : (JSON.parse(changed) as M));
  }
  if (!noteWritten) out.push(note as M);
  return out;
}

/** What the AI SDK hands a `prepareStep` function (only `messages` is read). */
export interface PrepareStepInput<M> {
  readonly messages: readonly M[];
  readonly stepNumber?: number;
}

/**
 * A `prepareStep` for the Vercel AI SDK (`generateText`, `streamText`, `Agent`). The SDK hands each step the whole
 * history; once the history reaches the threshold, the step is sent a compacted view of it (`{ messages }`), and that
 * view is kept: later steps are sent the same messages with only what is new appended, so the prompt's prefix stays
 * byte for byte the same (a provider's prompt cache keeps hitting), until the view itself reaches the threshold and is
 * compacted once more. Before the first compaction it returns nothing (the step runs on its messages as they are).
 * The tokenizer is loaded on the first step, once.
 * @param options as `createCompactor`'s; the format defaults to `ai-sdk`, and `system` is the `system` you pass the SDK
 * @returns the function to pass as `prepareStep`
 * @throws UsageError for bad options, at once (not at the first step)
 */
export function swcPrepareStep(
  options: CompactorOptions,
): <M>(step: PrepareStepInput<M>) => Promise<{ messages: M[] } | undefined> {
  const given = optionsObject(options);
  const settings: CompactorOptions = { ...given, format: given.format ?? 'ai-sdk' };
  checkOptions(settings);
  let compactor: Promise<Compactor> | null = null;
  const views = new KeptViews();
  return async <M>(step: PrepareStepInput<M>): Promise<{ messages: M[] } | undefined> => {
    compactor ??= createCompactor(settings);
    const history = step.messages;
    // Not an array: compact refuses it with its InputError.
    const view = Array.isArray(history) ? views.viewOf(history) : null;
    const result = await (await compactor).compactAsync(view ?? history);
    const sent = result.changed ? result.messages : view;
    if (sent === null) return undefined;
    views.keep(history, sent);
    return { messages: [...sent] };
  };
}

/** A history a step was handed, and the messages it was sent instead. */
interface KeptView {
  readonly history: readonly unknown[];
  readonly sent: readonly unknown[];
}

/**
 * The views sent, one per conversation, the most recent first. A step's history that extends one's history (the same
 * messages first: the same objects, or equal as JSON) is sent that view with the new messages appended; any other
 * history (a new conversation, an edited or shortened one) starts over. A few are kept, so that one `prepareStep`
 * serves several conversations at once (an `Agent` answering several requests).
 */
class KeptViews {
  private views: KeptView[] = [];
  private readonly json = new WeakMap<object, string | undefined>();

  /** The kept view with the history's new messages appended, or null when no kept view's history it extends. */
  viewOf<M>(history: readonly M[]): M[] | null {
    const at = this.views.findIndex((v) => this.extends(history, v.history));
    if (at === -1) return null;
    const { history: before, sent } = this.views[at] as KeptView;
    return [...(sent as readonly M[]), ...history.slice(before.length)];
  }

  /** Remembers what a history was sent instead (copies of both: the caller's arrays may change). */
  keep(history: readonly unknown[], sent: readonly unknown[]): void {
    const kept = { history: [...history], sent: [...sent] };
    this.views = [kept, ...this.views.filter((v) => !this.extends(history, v.history))].slice(0, KEPT_VIEWS);
  }

  /** Whether a history begins with every message of an earlier one. */
  private extends(history: readonly unknown[], earlier: readonly unknown[]): boolean {
    if (history.length < earlier.length) return false;
    for (let k = 0; k < earlier.length; k++) if (!this.same(history[k], earlier[k])) return false;
    return true;
  }

  /** The same message: the same object, or one written as the same JSON (what cannot be written never is the same). */
  private same(a: unknown, b: unknown): boolean {
    if (a === b) return true;
    try {
      const json = this.jsonOf(a);
      return json !== undefined && json === this.jsonOf(b);
    } catch {
      return false;
    }
  }

  private jsonOf(message: unknown): string | undefined {
    if (typeof message !== 'object' || message === null) return JSON.stringify(message, binaryAsText);
    let known = this.json.get(message);
    if (known === undefined) {
      known = JSON.stringify(message, binaryAsText);
      this.json.set(message, known);
    }
    return known;
  }
}

/** The conversations one `prepareStep` keeps a view for: the most recent ones. */
const KEPT_VIEWS = 8;
