/**
 * An independent model of Haystack's `CompactionHook` as of Haystack 3.4, transcribed from deepset-ai/haystack
 * (`haystack/hooks/compaction/hooks.py` with its `_estimated_context_tokens`, and `_last_assistant_index` of
 * `utils.py`; PR #12594 for issue #12580 changed the estimate when no assistant message is left), and of a replay: a
 * recorded run in which the hook runs before every LLM call. It drives the reference compactors of haystack.ts and
 * imports nothing from src/.
 */
import { applyWindow, slidingWindow, toolResultPruning, type HCounter, type HMessage, type HRole } from './haystack.js';

/** A `Compactor`'s `compact(messages, target_tokens, token_counter)`: null when it declines. */
export type HCompactor = (messages: readonly HMessage[], target: number, count: HCounter) => HMessage[] | null;

/** The hook's settings (`context_window`, `compact_at`, `compact_to`). */
export interface HookSettings {
  readonly contextWindow: number;
  readonly compactAt: number;
  readonly compactTo: number;
}

/** `_last_assistant_index`: the position of the newest assistant message, -1 when there is none. */
export function lastAssistantIndex(messages: readonly HMessage[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]?.role === 'assistant') return i;
  return -1;
}

/**
 * `_estimated_context_tokens` with no tool schemas: everything counted while the generator reports no usage
 * (`context_tokens` 0); else the reported figure, which accounts for the conversation through the newest assistant
 * message, plus the messages after it; with no assistant message the reported figure accounts for the whole
 * conversation, and is the estimate alone (Haystack 3.4).
 */
export function estimatedContextTokens(messages: readonly HMessage[], contextTokens: number, count: HCounter): number {
  if (contextTokens === 0) return count(messages);
  const last = lastAssistantIndex(messages);
  if (last < 0) return contextTokens;
  return contextTokens + count(messages.slice(last + 1));
}

/**
 * What `_apply` records as `context_tokens` after a compaction from a non-zero figure: the compacted conversation
 * through its newest assistant message (the trailing tool results are left to the next estimate, so a second hook
 * does not count them twice), or the whole compacted conversation when no assistant message is left, plus the
 * overhead the estimate held beyond the messages.
 */
export function accountedContextTokens(compacted: readonly HMessage[], overhead: number, count: HCounter): number {
  const last = lastAssistantIndex(compacted);
  return count(last < 0 ? compacted : compacted.slice(0, last + 1)) + overhead;
}

/**
 * `CompactionHook._target_tokens`: null below the trigger (`estimated >= context_window * compact_at`, in doubles),
 * else `max(int(context_window * compact_to) - overhead, 0)` and the overhead (what the estimate holds beyond the
 * messages).
 */
export function hookTargetTokens(
  messages: readonly HMessage[],
  contextTokens: number,
  count: HCounter,
  settings: HookSettings,
): { target: number; overhead: number } | null {
  const estimated = estimatedContextTokens(messages, contextTokens, count);
  if (!(estimated >= settings.contextWindow * settings.compactAt)) return null;
  const overhead = estimated - count(messages);
  return { target: Math.max(Math.trunc(settings.contextWindow * settings.compactTo) - overhead, 0), overhead };
}

/** What `CompactionHook.run` leaves in the state. */
export interface HookState {
  readonly messages: readonly HMessage[];
  readonly contextTokens: number;
}

/**
 * `CompactionHook.run` then `_apply`: the state's messages replaced by the compactor's result when it returns one;
 * `context_tokens` re-estimated only when it was not 0.
 */
export function runHook(
  state: HookState,
  compactor: HCompactor,
  count: HCounter,
  settings: HookSettings,
): HookState & { readonly compacted: boolean } {
  const target = hookTargetTokens(state.messages, state.contextTokens, count, settings);
  if (target === null) return { ...state, compacted: false };
  const compacted = compactor(state.messages, target.target, count);
  if (compacted === null) return { ...state, compacted: false };
  // 0 stays 0, so later steps keep counting the whole request locally.
  const contextTokens = state.contextTokens === 0 ? 0 : accountedContextTokens(compacted, target.overhead, count);
  return { messages: compacted, contextTokens, compacted: true };
}

/** `SlidingWindowCompactor(min_keep_steps, omission_note)` as a compactor. */
export function windowCompactor(options: { minKeepSteps: number; note: string | null }): HCompactor {
  return (messages, target, count) => {
    const result = slidingWindow(messages, target, count, options);
    return result === null ? null : applyWindow(messages, result);
  };
}

/** `ToolResultPruningCompactor(min_keep_steps, min_tokens, placeholder)` as a compactor. */
export function pruningCompactor(options: {
  minKeepSteps: number;
  minTokens: number;
  placeholder: string;
}): HCompactor {
  return (messages, target, count) => toolResultPruning(messages, target, count, options)?.messages ?? null;
}

/** One call of a replay: the message (by position in the run) it produced, whether the hook compacted, the tokens sent. */
export interface RefCall {
  readonly message: number;
  readonly compacted: boolean;
  readonly tokens: number;
  /** The history as sent. */
  readonly sent: readonly HMessage[];
}

/**
 * A replay of a recorded run: the history starts as the messages before the first assistant message; for each
 * assistant message the hooks run on the history in order, each its own `CompactionHook` (counting everything,
 * `context_tokens` 0), what would be sent is recorded, then that message and every following non-assistant message
 * are appended. No compactors is the run without compaction. `reread` is how the run's format reads a history back
 * (before each call and after each compaction): a list of messages as it is, unless a format groups its items by
 * their neighbours, so that a message that stood between two others decides whether they are one.
 */
export function replayReference(
  run: readonly HMessage[],
  compactors: readonly HCompactor[],
  count: HCounter,
  settings: HookSettings,
  reread: (history: readonly HMessage[]) => readonly HMessage[] = (history) => history,
): RefCall[] {
  const isAssistant = (m: HMessage | undefined): boolean => (m?.role as HRole | undefined) === 'assistant';
  let at = 0;
  while (at < run.length && !isAssistant(run[at])) at++;
  let history: readonly HMessage[] = run.slice(0, at);
  const calls: RefCall[] = [];
  while (at < run.length) {
    let compacted = false;
    history = reread(history);
    for (const compactor of compactors) {
      const state = runHook({ messages: history, contextTokens: 0 }, compactor, count, settings);
      history = reread(state.messages);
      compacted ||= state.compacted;
    }
    calls.push({ message: at, compacted, tokens: count(history), sent: history });
    let end = at + 1;
    while (end < run.length && !isAssistant(run[end])) end++;
    history = [...history, ...run.slice(at, end)];
    at = end;
  }
  return calls;
}
