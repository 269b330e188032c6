/**
 * What `swc replay` reports: a recorded agent run replayed as if Haystack's `CompactionHook` had run before every LLM
 * call, once per policy. The JSON output (`swc replay --json`) is this shape, and the HTML report is drawn from it.
 * Every token figure is here, so anyone can price a run their own way.
 */

/** One LLM call of a replayed run: the history the hook would have sent before one recorded assistant message. */
export interface ReplayCall {
  /** The index, in the file's message list, of the assistant message the call produced. */
  readonly message: number;
  /** Whether the hook compacted the history before this call. */
  readonly compacted: boolean;
  /** The history's tokens as sent, counted as the hook counts them. */
  readonly tokens: number;
  /** Of `tokens`, those a prefix cache would have served: the longest prefix equal to the previous request and reply. */
  readonly cacheRead: number;
  /** Of `tokens`, those written to the cache by this call (what follows the cached prefix, when cacheable). */
  readonly cacheWrite: number;
  /** The recorded reply's tokens (the assistant message itself). */
  readonly output: number;
  /** Whether `tokens` exceeds the context window. */
  readonly overflow: boolean;
}

/** One compaction of a policy. */
export interface ReplayCompaction {
  /** The call (index into `calls`) it ran before. */
  readonly call: number;
  /** The history's tokens before and after it. */
  readonly before: number;
  readonly after: number;
  /** Messages of the history it removed (pruned ones are not counted here). */
  readonly removed: number;
}

/** An identifier that left the context at a compaction and was named again later in the run. */
export interface ReplayLost {
  readonly identifier: string;
  /** The identifier's kind, as the forgets inventory names kinds (`path`, `url`, `error`, …). */
  readonly kind: string;
  /** The call before which the compaction that dropped it ran. */
  readonly leftAt: number;
  /** The index, in the file's message list, of the first later message naming it again. */
  readonly neededAt: number;
}

/** A user message a compaction removed (an instruction or a correction; notes and summaries are not listed). */
export interface ReplayRemovedUser {
  /** Its index in the file's message list. */
  readonly message: number;
  /** The call before which it was removed. */
  readonly call: number;
  /** Its text's first 120 characters, as rendered for counting. */
  readonly preview: string;
}

/** Money, in the price model's currency, per part of the bill. */
export interface ReplayCost {
  readonly input: number;
  readonly cacheRead: number;
  readonly cacheWrite: number;
  readonly output: number;
  readonly total: number;
}

/** One policy's replay of one run. */
export interface ReplayPolicy {
  /** The `--strategy` value as given (`window` when none is given; `none` for the run without compaction). */
  readonly strategy: string;
  readonly calls: readonly ReplayCall[];
  readonly compactions: readonly ReplayCompaction[];
  readonly peakTokens: number;
  readonly meanTokens: number;
  /** Calls whose history exceeds the context window. */
  readonly overflows: number;
  /** Input tokens sent over all calls, and the parts a prefix cache would have read and written. */
  readonly inputTokens: number;
  readonly cacheReadTokens: number;
  readonly cacheWriteTokens: number;
  readonly outputTokens: number;
  /**
   * Summarize's own model calls (zero for other strategies); `failed` of them failed (a replay always writes it, 0
   * when none did), `failure` the first failure's reason or null.
   */
  readonly summary: {
    readonly calls: number;
    readonly promptTokens: number;
    readonly replyTokens: number;
    readonly failed?: number;
    readonly failure?: string | null;
  };
  readonly cost: ReplayCost;
  readonly lost: readonly ReplayLost[];
  readonly removedUserMessages: readonly ReplayRemovedUser[];
}

/** The price model a cost was worked out with, per million tokens. */
export interface ReplayPrices {
  readonly name: string;
  readonly currency: string;
  readonly input: number;
  readonly cacheRead: number;
  readonly cacheWrite: number;
  readonly output: number;
  /** The smallest prefix, in tokens, the provider caches. */
  readonly minCacheablePrefix: number;
  /** Where the figures come from, and when they were read. */
  readonly source: string;
}

/** The run as the file recorded it, where it records real usage (Claude Code, Gemini ADK and LangChain files). */
export interface ReplayRecorded {
  readonly calls: number;
  readonly inputTokens: number;
  readonly cacheReadTokens: number;
  readonly cacheWriteTokens: number;
  readonly outputTokens: number;
}

/** The replay of one run. */
export interface ReplayRun {
  readonly file: string;
  readonly format: string;
  readonly tokenizer: string;
  readonly contextWindow: number;
  readonly compactAt: number;
  readonly compactTo: number;
  /** The smallest count that compacts (`>= contextWindow * compactAt` in doubles), and the target it compacts to. */
  readonly trigger: number;
  readonly target: number;
  readonly prices: ReplayPrices;
  readonly recorded: ReplayRecorded | null;
  readonly policies: readonly ReplayPolicy[];
  /** What the replay cannot know (a model's replies to a shorter history), said with every result. */
  readonly notes: readonly string[];
}

/** The replay of several runs, with each policy's totals across them. */
export interface ReplayRuns {
  readonly runs: readonly ReplayRun[];
  readonly totals: readonly ReplayTotal[];
}

/** One policy's figures summed over runs. */
export interface ReplayTotal {
  readonly strategy: string;
  readonly calls: number;
  readonly compactions: number;
  readonly overflows: number;
  readonly inputTokens: number;
  readonly cacheReadTokens: number;
  readonly cacheWriteTokens: number;
  readonly outputTokens: number;
  readonly cost: ReplayCost;
  readonly lost: number;
  readonly removedUserMessages: number;
}
