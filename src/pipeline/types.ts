import type { Plan } from '../core/compact.js';
import type { Normalized } from '../formats/types.js';
import type { Layout, Slot } from '../io/layout.js';
import type { ConversationOutcome } from '../outcome/outcome.js';
import type { StrategyName } from './steps/index.js';
import type { SummaryAnswer, SummaryRequest } from '../core/summarize.js';
import type { TokenCounter } from '../core/types.js';
import type { ChainOptions, OutputEntry, SummarizeSettings, SummarizedConversation } from './steps/step.js';

/** Settings for compacting one file: the chain's, and how the file is read and reported. */
export interface FileOptions extends ChainOptions {
  /** The note template as given (undefined: default; null or '': none). */
  readonly note?: string | null;
  /** A format name, or 'auto'. */
  readonly format?: string;
  /** The key each record of a many-conversation file holds its conversation under, tried before the usual ones. */
  readonly conversationKey?: string | undefined;
  /** A JSON Pointer to the conversation in the file, or in each of its records (`--conversation-path`). */
  readonly conversationPath?: string | undefined;
  /**
   * Bulk strings (message text, tool arguments and outputs) longer than this are left out of the parsed items and
   * read from the raw text when rendered (see io/slim.ts). Default SLIM_LONGER_THAN; Infinity keeps every string.
   */
  readonly slimLongerThan?: number;
  /**
   * How many items of a JSONL file are normalized at a time while its lines are parsed (see pipeline/stream.ts).
   * Default STREAM_BLOCK; tests make it small, to cross many blocks, or 0, to keep every item instead.
   */
  readonly streamBlock?: number;
  /**
   * Up to how many items a streamed JSONL file keeps parsed (default KEEP_STREAMED_ITEMS); a file of more keeps none
   * and parses an item again from its line when a decision reads it. Tests make it 0, to take that road.
   */
  readonly keepStreamedItems?: number;
  /**
   * Count the tokens before exactly in every file (`--exact`). Without it they are counted exactly in files up to
   * EXACT_COUNT_UP_TO characters and estimated above, where the decision stopped counting early.
   */
  readonly exact?: boolean;
  /** The strategies to apply, in order, each to what the previous left (default: the sliding window alone). */
  readonly strategies?: readonly StrategyName[];
  /** Work out what each compaction forgets (the outcome's `inventory`): dry runs, plans, --json and --stat ask for it. */
  readonly inventory?: boolean;
}

/**
 * Files up to this many characters get the exact tokens before even where the decision stopped counting early:
 * counting the rest costs 0.1–0.2 s per MB, so at most about half a second here (measured: docs/performance.md).
 */
export const EXACT_COUNT_UP_TO = 4 * 2 ** 20;

/** One conversation of a file and its decision. */
export interface ConversationResult {
  readonly slot: Slot;
  readonly normalized: Normalized;
  readonly plan: Plan;
  /** The target the plan was made against (with thresholds: the trigger or the target, less the tool schemas). */
  readonly target: number;
  /** Tokens the container's tool schemas add to the conversation (counted with thresholds only, else 0). */
  readonly toolTokens: number;
  /** What every output shows of it, worked out once with the counter the decision was made with. */
  readonly outcome: ConversationOutcome;
  /** The tool results pruning replaced and that the output holds, in conversation order (empty without pruning). */
  readonly pruned: readonly PrunedItems[];
  /** The results offloading replaced and that the output holds, in the file's item positions. */
  readonly offloaded?: readonly PrunedItems[];
  /** The strategies the conversation was compacted with, in order. */
  readonly strategies: readonly StrategyName[];
  /**
   * With thresholds: an earlier strategy of the chain brought the conversation below the trigger, above the target,
   * and the later ones, checking the trigger again, left it there.
   */
  readonly leftBelowTrigger?: boolean;
  /** With summarize in the chain: its rounds, the summaries written, a failed round. */
  readonly summarized?: SummarizedConversation;
  /** With summarize in the chain: the output's messages in order (the plan's `kept` are the input ones among them). */
  readonly output?: readonly OutputEntry[];
}

/** One message whose tool results were pruned, in the file's own item positions. */
export interface PrunedItems {
  /** Its message index in the conversation. */
  readonly message: number;
  /** Its first item and its last item + 1. */
  readonly start: number;
  readonly end: number;
  /** The tools whose results were replaced, in order (several for a message answering parallel calls). */
  readonly tools: readonly string[];
  /** The message measured alone, before and after. */
  readonly tokensBefore: number;
  readonly tokensAfter: number;
}

/** The outcome for one file. */
export interface FileResult {
  readonly file: string;
  readonly format: string;
  readonly layout: Layout;
  readonly conversations: readonly ConversationResult[];
  readonly changed: boolean;
  /** The output text (without BOM; the writer puts it back). Equals the input text when unchanged. */
  readonly output: string;
  /** Whether the file holds many conversations (a list of records, or one record per line). */
  readonly records: boolean;
  /** How many conversations the file holds, and how many of them changed. */
  readonly conversationCount: number;
  readonly changedConversations: number;
  /** The offload store's files for this output: each result, and what restoring its items needs (empty without offloading). */
  readonly stored: readonly StoreFile[];
  /** With summarize in the chain: what its model calls cost, and a warning per conversation whose rounds failed. */
  readonly summaries?: SummaryReport;
}

/**
 * Where summarize's replies come from, for a run's files (src/summarize-run.ts makes one from a model, or the stand-in
 * of dry runs and checks): the decision awaits each round's reply from it.
 */
export interface SummaryRunner {
  /** The prompt's instruction, the summary size planned with, the least retention. */
  readonly settings: Omit<SummarizeSettings, 'answer'>;
  /** The replies for one file's conversations (the same request is asked once), and what they cost. */
  forFile(file: string, counter: TokenCounter): FileReplies;
}

/** One file's summary replies. */
export interface FileReplies {
  /** The reply to a round's request; a failed call answers with its `error`. */
  answer(request: SummaryRequest): Promise<SummaryAnswer>;
  /**
   * What the file's calls cost and which conversations' rounds failed, once it is decided.
   * @throws InputError with `strict` when a round failed (nothing is written for the file)
   */
  finish(result: FileResult): Promise<SummaryReport>;
}

/** What summarizing one file cost, and the warnings of rounds that failed. */
export interface SummaryReport {
  readonly usage: SummaryUsage;
  /** One line per conversation whose rounds stopped at a failure (the last good result kept). */
  readonly warnings: readonly string[];
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

/** A file of the offload store to write before the transcript that points at it. */
export interface StoreFile {
  /** Absolute, inside the store directory; named by its content, so one already there with these bytes is this file. */
  readonly path: string;
  readonly content: string | Uint8Array;
}
