import type { SummaryAnswer, SummaryRequest } from '../core/summarize.js';
import type { TokenCounter } from '../core/types.js';
import { InputError, OptionsError } from '../errors.js';
import { FORMATS, findFormat } from '../formats/registry.js';
import type { FormatAdapter } from '../formats/types.js';
import type { LocatedIdentifier } from '../outcome/forgotten.js';
import { chooseFormat, decideChain, type ChainOptions } from '../pipeline/index.js';
import { shown } from '../settings/index.js';
import {
  checkOptions,
  INSTRUCTION_KEYS,
  optionsObject,
  type Checked,
  type CompactorOptions,
} from '../settings/library.js';
import { createCounter } from '../tokens/index.js';
import { assemble, assembleEntries, forgottenOf } from './assemble.js';
import { withChainFigures, withFigures } from './figures.js';
import { RenderedMemory } from './memory.js';
import { MessageMirror } from './mirror.js';
import type { CompactedMessages, Compactor } from './types.js';

/**
 * Compacting the messages an agent holds in memory, in the shape its SDK gives them. Each message goes through the
 * same adapter and the same decision as a file of those messages written as JSON, so the library and `swc compact`
 * keep the same messages; kept messages are handed back as the very objects passed in.
 */

/**
 * Loads the tokenizer once and returns a compactor.
 * @param options the budget, the format and the counter
 * @throws OptionsError for options that contradict each other or are out of range
 */
export async function createCompactor(options: CompactorOptions): Promise<Compactor> {
  return compactorOf(options, false);
}

/** A compactor for the options; `once`: for one call, so it records nothing for the next (see JsonCache). */
async function compactorOf(options: CompactorOptions, once: boolean): Promise<Compactor> {
  const checked = checkOptions(options);
  const settings = optionsObject(options);
  const counter = settings.counter ?? (await createCounter(checked.tokenizer, checked.counterOptions));
  return compactorWith(counter, settings, checked, once);
}

/**
 * Compacts a conversation once (a loop should keep one `createCompactor` instead: it loads the tokenizer once
 * and remembers what it counted).
 * @param messages the messages as the SDK holds them; never modified
 * @param options the budget, the format and the counter; `createNote` must build a message of the messages' type
 * @returns the messages' own type: it is taken from `messages` alone (`NoInfer`), so options typed as plain
 * `CompactorOptions` cannot widen it
 */
export async function compactMessages<M>(
  messages: readonly M[],
  options: CompactorOptions<NoInfer<M>>,
): Promise<CompactedMessages<M>> {
  return (await compactorOf(options, true)).compact(messages);
}

function compactorWith(counter: TokenCounter, options: CompactorOptions, checked: Checked, once: boolean): Compactor {
  // The conversation read last, read again only where the caller changed it since (see MessageMirror).
  const mirror = new MessageMirror({
    formatOf: (items) => formatOf(items, checked.adapter, options.system),
    detects: checked.adapter === null && options.system === undefined,
    noteTemplate: checked.template,
    assumeUnchanged: checked.assumeUnchanged,
    once,
  });
  const memory = new RenderedMemory();
  const remembering = memory.counter(counter);
  const summarize = options.summarize;
  /** A summary round's reply from the `summarize` callback; a failed call answers with its reason. */
  const answer =
    summarize === undefined
      ? null
      : async (request: SummaryRequest): Promise<SummaryAnswer> => {
          try {
            return { text: summaryTextOf(await summarize({ system: request.system, user: request.user })) };
          } catch (failure) {
            return { error: failure instanceof Error ? failure.message : String(failure) };
          }
        };
  /** One compaction, awaiting summary replies (if any) between rounds. */
  const compactWith = async <M>(messages: readonly M[]): Promise<CompactedMessages<M>> => {
    const read = mirror.read(messages);
    memory.nextCall();
    // The chain `swc compact --strategy` runs, on the same items: pruned ones come back as the format writes them.
    const chain = await decideChain(
      read.input.raws,
      read.adapter,
      read.normalized,
      chainOptionsOf(checked, remembering, answer),
      checked.template,
      checked.strategies,
      checked.tools,
      'messages',
    );
    const { normalized: decided, edits, summarized, output } = chain;
    const failure = summarized?.failure;
    if (options.strict === true && failure !== undefined && failure !== null)
      throw new InputError(`summarize round ${failure.round + 1} failed: ${failure.reason}`, 'messages');
    const extra = summarized === undefined ? {} : { summarized };
    const { normalized, adapter, input } = read;
    // Estimated on the messages as read: a chain may have pruned kept ones.
    const { plan, figures } = withChainFigures(chain.plan, normalized, input.raws, decided, remembering, {
      ...(output === undefined ? {} : { output }),
      ...(summarized === undefined ? {} : { summarized }),
    });
    const forgotten = forgottenOf(
      normalized,
      decided,
      plan,
      (summarized?.summaries ?? []).map((x) => x.text),
    );
    if (!plan.changed)
      return withFigures(
        { messages: [...messages], changed: false, plan, format: adapter.name, forgotten: [], ...extra },
        figures,
      );
    const createNote = options.createNote as ((text: string) => M) | undefined;
    const out =
      output !== undefined && summarized !== undefined
        ? assembleEntries(adapter, input, messages, decided, output, summarized, edits, createNote)
        : assemble(adapter, input, messages, decided, plan, edits, createNote);
    return withFigures(
      {
        messages: out,
        changed: true,
        plan,
        format: adapter.name,
        get forgotten(): readonly LocatedIdentifier[] {
          return forgotten();
        },
        ...extra,
      },
      figures,
    );
  };
  return {
    tokenizer: counter.name,
    // The conversation as it was when the call began: a caller that changes its array while the decision awaits (a
    // summary) gets the compaction of what it passed, never of messages added since.
    compact: <M>(messages: readonly M[]) => compactWith(Array.isArray(messages) ? [...messages] : messages),
  };
}

/** The chain's settings for the options checked, counting with `counter`, its summaries from `answer`. */
function chainOptionsOf(
  checked: Checked,
  counter: TokenCounter,
  answer: ((request: SummaryRequest) => Promise<SummaryAnswer>) | null,
): Omit<ChainOptions, 'offload'> {
  return {
    target: checked.target,
    minKeepSteps: checked.minKeepSteps,
    counter,
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
      throw new OptionsError(`system: the ${adapter.name} format keeps its instructions in the message list`);
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
