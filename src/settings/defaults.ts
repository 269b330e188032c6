import { DEFAULT_SUMMARY_TOKENS } from '../core/summarize.js';
import type { TokenizerName } from '../tokens/index.js';

/** The defaults of every compaction setting, for the command line and the library alike. */

/** The share of the context window from which a conversation is compacted (Haystack's `compact_at`). */
export const DEFAULT_COMPACT_AT = 0.7;
/** The share of the context window it is compacted to (Haystack's `compact_to`). */
export const DEFAULT_COMPACT_TO = 0.4;
/** The fewest newest steps of the current task kept, even over the budget (Haystack's `min_keep_steps`). */
export const DEFAULT_MIN_KEEP_STEPS = 1;
/** Pruning: only results of more than this many tokens are replaced (Haystack's `min_tokens_to_prune`). */
export const DEFAULT_MIN_TOKENS = 200;
/** Offloading with the hook's rule: an example threshold in characters (Haystack's example `OffloadOverChars`). */
export const DEFAULT_OFFLOAD_OVER = 8000;
/** Offloading: code points of each offloaded text its pointer shows (Haystack's `preview_chars`). */
export const DEFAULT_PREVIEW_CHARS = 200;
/** Summarizing: about how long a summary comes out, for planning (Haystack's `approximate_summary_tokens`). */
export { DEFAULT_SUMMARY_TOKENS };
/** The tokenizer when none is named. */
export const DEFAULT_TOKENIZER: TokenizerName = 'o200k_base';
/** Summary calls in flight at once across a run. */
export const DEFAULT_CONCURRENCY = 4;
