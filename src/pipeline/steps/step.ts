import type { Plan } from '../../core/compact.js';
import { lazyList } from '../../core/lazy-list.js';
import type { PrunePlan } from '../../core/prune.js';
import { renderMessage } from '../../core/render.js';
import type { Retention } from '../../core/identifiers/index.js';
import type { SummaryAnswer, SummaryFailure, SummaryRequest, SummaryTier } from '../../core/summarize.js';
import type { Message, TokenCounter } from '../../core/types.js';

/**
 * One strategy of a chain, as Haystack's `Compactor` protocol: it takes the conversation the previous strategy left
 * (`run.current`), decides, and leaves what it made for the next. The chain around it checks the trigger's outcome,
 * keeps each message's input index and works out the figures once, from the reports the steps give.
 */
export interface Step {
  /**
   * Applies the strategy to `run.current` (or leaves it, below the trigger or with nothing to do), updating the run.
   * @returns what it measured: whether it found the conversation below the trigger, its size before, what it left
   *   (awaited: summarizing awaits its model between rounds)
   */
  apply(run: ChainRun): StepReport | Promise<StepReport>;
}

/** What one step measured, for the chain's figures. */
export interface StepReport {
  /** It found the conversation below the trigger (with thresholds) and left it as it was. */
  readonly under: boolean;
  /** Its size as it measured it: the chain's tokens before are the first step's. */
  readonly before: number;
  readonly beforeExact: boolean;
  /** What it left, measured when an output asks (the chain's tokens after are the last step's). */
  readonly after: () => number;
}

/** What a chain of strategies reads of a file's settings. */
export interface ChainOptions {
  readonly target: number;
  readonly minKeepSteps?: number;
  readonly counter: TokenCounter;
  /** Count every group (dry runs, plans, reports). */
  readonly exhaustive?: boolean;
  /** Thresholds of a context window instead of a fixed `target` (which is then ignored). */
  readonly window?: WindowThresholds;
  /** Pruning: only results of more than this many tokens are replaced (default 200). */
  readonly minTokens?: number;
  /** Pruning: the placeholder template, `{tool_name}` filled in (default Haystack's). */
  readonly placeholder?: string;
  /**
   * Offloading: the store's directory (absolute); `over`, when given, selects `ToolResultOffloadHook`'s rule with
   * `OffloadOverChars(over)` instead of the `ToolResultOffloadCompactor`; `previewChars`, the code points of each
   * text its pointer shows (default 200); `home`, the folder the transcript is written to (absolute), makes each
   * pointer's reference relative to it, so a transcript and its store that move together still restore (without it
   * references are absolute).
   */
  readonly offload?: {
    readonly dir: string;
    readonly over?: number | undefined;
    readonly previewChars?: number | undefined;
    readonly home?: string;
  };
  /** Summarizing: the instruction, the summary size planned with, and the reply to each request. */
  readonly summarize?: SummarizeSettings;
}

/** A message the chain made (a summary, or the window's note), as the output writes it. */
export type Inserted =
  { readonly summary: number } | { readonly note: string; readonly removed: number; readonly kept: number };

/**
 * A chain's state as its steps see it: the settings and thresholds, worked out once, and the conversation as the
 * steps so far left it.
 */
export interface ChainRun {
  readonly options: ChainOptions;
  /** The counter every step measures with (one object per distinct text, so a second plan reuses counts). */
  readonly counter: TokenCounter;
  /** The note template, resolved. */
  readonly template: string | null;
  /** With thresholds: the largest size below the trigger (the schemas' tokens off); null without thresholds. */
  readonly gate: number | null;
  /** The target every step aims at (with thresholds: the window's target, the schemas' tokens off). */
  readonly target: number;
  /** Offloading's store references, or null where nothing may be offloaded. */
  readonly referenceOf: ReferenceMaker | null;
  /** The conversation the previous step left. */
  current: readonly Message[];
  /** For each message of `current`, its index in the input (null for one the chain made). */
  origin: readonly (number | null)[];
  /**
   * The input's messages, each replaced by what pruning or offloading made of it. Shared with another list until
   * written (see `writableFinal`): the input, a pruning plan's list, the window's view.
   */
  final: Message[];
  /** Whether `final` is the chain's own list, which it may write to. */
  finalOwned: boolean;
  /** The sliding window's plan, made on the list it saw; null until the window ran. */
  windowPlan: Plan | null;
  /** The list the window's plan was made on, in input indices (`final` as it was when the window ran). */
  windowSaw: readonly Message[] | undefined;
  readonly pruning: ChainPruning[];
  readonly offloads: ChainOffload[];
  /** What summarizing did; null until it ran. */
  summarizing: SummarizedConversation | null;
  /** The messages the chain made, by identity. */
  readonly inserted: Map<Message, Inserted>;
}

/**
 * The chain's `final` list to write to: copied first while another holds it too. A long conversation's chain then makes
 * no copy of it for steps that only read it (8 bytes a message each: the input's, the window's view).
 */
export function writableFinal(run: ChainRun): Message[] {
  if (!run.finalOwned) {
    run.final = run.final.slice();
    run.finalOwned = true;
  }
  return run.final;
}

/**
 * The size of the conversation as offloading and summarizing measure it before deciding: counted only past the
 * trigger (or the target), and all of it in exhaustive runs.
 * @returns the report of a step that leaves the conversation as it is, and whether it found it below the trigger
 */
export function measureAgainstGate(run: ChainRun): StepReport {
  const { current, gate, target } = run;
  const exhaustive = run.options.exhaustive === true;
  const limit = gate ?? target;
  const size = exhaustive ? measureAll(run.counter, current) : measureUpTo(run.counter, current, limit);
  const exact = exhaustive || size <= limit;
  const under = gate !== null && size <= gate;
  const seen = current;
  return { under, before: size, beforeExact: exact, after: exact ? () => size : () => measureAll(run.counter, seen) };
}

/** The tokens of a whole list of messages. */
export function measureAll(counter: TokenCounter, list: readonly Message[]): number {
  return list.length === 0 ? 0 : counter.measure(list.map(renderMessage));
}

/** The tokens of a list, counted until they pass `limit` (each message rendered only as the counter reads it). */
function measureUpTo(counter: TokenCounter, list: readonly Message[], limit: number): number {
  return list.length === 0
    ? 0
    : counter.measure(
        lazyList(list.length, (k) => renderMessage(list[k] as Message)),
        limit,
      );
}

/**
 * Compact a conversation only once its size, with the tool schemas of its container, reaches `trigger`
 * tokens, and then to `target` tokens, the schemas' tokens coming off that target (like an agent's hook).
 */
export interface WindowThresholds {
  readonly trigger: number;
  readonly target: number;
}

/** What the summarize step of a chain needs: the decision's settings and where each round's reply comes from. */
export interface SummarizeSettings {
  readonly instruction: string;
  readonly summaryTokens: number;
  /** The least share of the replaced messages' identifiers a summary must keep (`--min-retention`), if any. */
  readonly minRetention?: number;
  /**
   * The reply to a round's request, awaited before the next round: a model's, or the stand-in of dry runs and checks.
   * A failed call is an answer with its `error`, which ends the conversation's rounds.
   */
  readonly answer: (request: SummaryRequest, counter: TokenCounter) => SummaryAnswer | Promise<SummaryAnswer>;
}

/** One message of a summarized conversation's output: an input message, a summary, or the window's note. */
export type OutputEntry =
  | { readonly input: number }
  | { readonly summary: number }
  | { readonly note: string; readonly removed: number; readonly kept: number };

/** A summary the output holds, with what it stands for (for reports, and for measuring what it kept). */
export interface PlacedSummary {
  /** Its position among the output's messages. */
  readonly position: number;
  /** The summary message's text (`<conversation_summary>` wrapper included). */
  readonly text: string;
  /** Haystack's `summarized_messages`: how many messages its round replaced. */
  readonly summarized: number;
  readonly tier: SummaryTier;
  /** The input messages it stands for (also through summaries of earlier rounds it replaced), ascending. */
  readonly replaced: readonly number[];
  /** The prompt its round sent. */
  readonly request: SummaryRequest;
}

/** What summarizing did to one conversation: every round in order, the summaries the output holds, a failure. */
export interface SummarizedConversation {
  readonly rounds: readonly SummaryRound[];
  readonly summaries: readonly PlacedSummary[];
  readonly failure: SummaryFailure | null;
}

/** One round of summarizing: the tier it drew from, its prompt, what it replaced and the summary it wrote. */
export interface SummaryRound {
  readonly tier: SummaryTier;
  readonly request: SummaryRequest;
  /** The input messages it stands for, ascending. */
  readonly replaced: readonly number[];
  /** How many messages of the list it saw it replaced (Haystack's `summarized_messages`). */
  readonly summarized: number;
  readonly text: string;
  readonly tokensBefore: number;
  readonly tokensAfter: number;
  /** The prompt's tokens (system and user texts), measured for plans and dry runs only; else null. */
  readonly promptTokens: number | null;
  /** How many identifiers the replaced messages name. */
  readonly identifiers: number;
  /** How many of them the summary keeps (src/core/identifiers/retention.ts); null for a simulated summary (dry runs, plans). */
  readonly retention: Retention | null;
}

/** One strategy's result in a chain: the pruning made, with message indices in the input conversation. */
export interface ChainPruning {
  readonly plan: PrunePlan;
  /** For each message of the list pruning saw, its index in the input (null for a note the window wrote). */
  readonly origin: readonly (number | null)[];
}

/** An offloaded result: its pointer, its store reference and its text (each worked out when first read). */
export interface OffloadedResult {
  readonly text: string;
  /** Its first store entry's reference (its only one, but for a result of several parts). */
  readonly reference: string;
  readonly original: string;
  /** Its store entries, one per part, where they are not its text alone in `reference` (the compactor's parts). */
  readonly stored?: readonly { readonly reference: string; readonly content: string | Uint8Array }[];
}

/** One message offloading changed: its input index, and for each offloaded result its pointer, reference and text. */
export interface ChainOffload {
  readonly message: number;
  readonly results: ReadonlyMap<number, OffloadedResult>;
  /** The message measured alone, before and after. */
  readonly tokensBefore: number;
  readonly tokensAfter: number;
  /**
   * Made by the compactor, which marks it as compacted (`context_compaction` with `original_tokens` in Haystack
   * files); the hook's rule marks it offloaded only.
   */
  readonly compacted?: boolean;
}

/** Gives an offloaded result its store reference: its file in the store, relative to the transcript's folder. */
export type ReferenceMaker = (
  message: number,
  candidate: {
    step: number;
    tool: string;
    result: number;
    /** What the entry holds: the result's text, or one part of it (a text, or an image's or file's bytes). */
    text: string | Uint8Array;
    /** The part's position in a result of several, and the entry's extension (default `.txt`). */
    part?: number | null;
    extension?: string;
  },
) => string;
