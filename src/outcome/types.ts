import type { Plan } from '../core/compact.js';
import type { Message } from '../core/types.js';
import type { Normalized } from '../formats/types.js';

// The shapes the outcome's modules share (outcome.ts assembles them, figures.ts works out the token figures), in a
// module of their own so neither imports the other.

/** Why a plan misses its target. */
export type Miss =
  /** The tool schemas alone take the whole share of the window compaction aims at (window thresholds only). */
  | { readonly kind: 'tools'; readonly toolTokens: number; readonly target: number }
  | { readonly kind: 'protected'; readonly protectedTokens: number }
  | { readonly kind: 'min-keep-steps'; readonly steps: number; readonly stepTokens: number; readonly budget: number }
  /** Only earlier notes could go, and a new note would take their place, so nothing changes. */
  | { readonly kind: 'earlier-notes'; readonly tokensAfter: number }
  | { readonly kind: 'note'; readonly noteTokens: number | null; readonly tokensAfter: number }
  | { readonly kind: 'joined'; readonly tokensAfter: number }
  /** A chain whose pruning or offloading left the conversation below the trigger, where the window leaves it alone. */
  | { readonly kind: 'below-trigger'; readonly tokensAfter: number }
  /** Without the window, pruning or offloading decided alone, and what is left they may not touch. */
  | { readonly kind: 'nothing-to-prune' | 'nothing-to-offload'; readonly tokensAfter: number }
  /** Summarize without the window: at its floor, or a round failed (the last good result kept). */
  | { readonly kind: 'summary-floor' | 'summary-failed'; readonly tokensAfter: number };

/** Message counts of one conversation, in the file's own terms. */
export interface MessageCounts {
  readonly before: number;
  readonly after: number;
  readonly removed: number;
}

/** Token sums of what a plan keeps and removes, by kind of group; null where a group was not counted. */
export interface PlanTotals {
  readonly messagesBefore: number;
  readonly messagesAfter: number;
  readonly protectedTokens: number | null;
  readonly keptTurnTokens: number | null;
  readonly keptStepTokens: number | null;
  /** Messages in no group that stay (only when nothing is removed). */
  readonly keptOtherTokens: number | null;
  readonly noteTokens: number | null;
  readonly removed: {
    readonly messages: number;
    readonly tokens: number | null;
    readonly turns: number;
    readonly steps: number;
    readonly orphans: number;
  };
  readonly miss: Miss | null;
}

/** A token count as outputs show it: exact, or an estimate (shown with `≈`). */
export interface TokenFigure {
  readonly tokens: number;
  readonly exact: boolean;
}

/** A conversation as planned: what its outcome is worked out from. */
export interface Planned {
  readonly plan: Plan;
  readonly normalized: Normalized;
  /** The target the plan was made against (with thresholds: the trigger or the target, less the tool schemas). */
  readonly target: number;
  /** Tokens the container's tool schemas add (counted with thresholds only, else 0). */
  readonly toolTokens: number;
  /** The length of an item of the file's list in its text (UTF-16 units), for an estimate of tokens not counted. */
  readonly itemLength?: (item: number) => number;
  /** The strategies applied, in order (the window alone when left out). */
  readonly strategies?: readonly string[];
  /** A chain with thresholds whose later strategy found the conversation below the trigger, as an earlier one left it. */
  readonly leftBelowTrigger?: boolean;
  /** The conversation as read, when the decision replaced some of its messages (`normalized` holds them replaced). */
  readonly input?: readonly Message[];
  /** The messages the window's plan counted its groups on, when they are not `normalized`'s (a chain). */
  readonly measured?: readonly Message[];
  /** Whether the plan's group counts are exact (by default what `plan.tokensBeforeExact` says). */
  readonly groupsExact?: boolean;
  /** Kept messages whose results pruning replaced, and those offloading moved to the store. */
  readonly pruned?: readonly { readonly message: number }[];
  readonly offloaded?: readonly { readonly message: number }[];
  /** With summarize: the summaries the output holds (their texts are what the agent keeps of what they replaced). */
  readonly summarized?: { readonly summaries: readonly { readonly text: string; readonly position?: number }[] };
  /**
   * With summarize in the chain, when it changed the conversation: the output's messages in order (an input message,
   * a summary, or the window's note), which then say what the file holds rather than the plan alone.
   */
  readonly output?: readonly OutputEntryShape[];
}

/** One message of a summarizing chain's output (the pipeline's `OutputEntry`). */
export type OutputEntryShape = { readonly input: number } | { readonly summary: number } | { readonly note: string };
