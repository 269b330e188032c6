import type { Plan } from '../core/compact.js';
import type { TokenFigures } from '../outcome/figures.js';
import type { LocatedIdentifier } from '../outcome/forgotten.js';
import type { SummarizedConversation } from '../pipeline/index.js';

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
  /**
   * The compaction's token figures, in the input's terms, as the command line's dry run and plan give them: they add
   * up, `before.tokens = after + saved.pruned + saved.offloaded + removed.tokens − note − summaries`. `removed` is what
   * the removed messages cost as they were passed in (an estimate when `before` is one), the same figure a chain that
   * removes the same messages gives; `saved` what pruning took out of the messages kept; `summaries` what the
   * summaries the output holds cost (0 without summarize). Worked out when first read.
   */
  readonly figures: TokenFigures;
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

/** A compactor with its tokenizer loaded, for an agent's loop: it remembers what it counted between calls. */
export interface Compactor {
  /** The counter's name. */
  readonly tokenizer: string;
  /**
   * Compacts a conversation, awaiting the `summarize` option between rounds when the strategy summarizes.
   * @param messages the messages, in the compactor's format; never modified (the array is read when the call begins)
   * @throws InputError naming the index of a message that does not fit the format (or cannot be written as JSON)
   */
  compact<M>(messages: readonly M[]): Promise<CompactedMessages<M>>;
}

/** What the AI SDK hands a `prepareStep` function (only `messages` is read). */
export interface PrepareStepInput<M> {
  readonly messages: readonly M[];
  readonly stepNumber?: number;
}
