import { noteTemplate } from '../core/compact.js';
import { identifierKey, identifiersOfMessage } from '../core/identifiers/index.js';
import { lazyList } from '../core/lazy-list.js';
import { renderMessage } from '../core/render.js';
import { simulatedReply, type Summarizer, type SummaryFailure } from '../core/summarize.js';
import type { Message, Rendered, TokenCounter } from '../core/types.js';
import { InputError } from '../errors.js';
import { itemsReader, type ConversationInput, type FormatAdapter, type Normalized } from '../formats/types.js';
import { createCompactor } from '../library/compactor.js';
import { samePrefix } from '../library/mirror.js';
import type { Compactor } from '../library/types.js';
import { INSTRUCTION_KEYS, type StrategyChain } from '../settings/library.js';
import { prefixSumsOf } from '../tokens/approx.js';
import { prefixCache } from './cache.js';
import { History, type Look } from './history.js';
import { policyFigures } from './figures.js';
import { recordedUsage } from './recorded.js';
import type {
  ReplayCall,
  ReplayCompaction,
  ReplayLost,
  ReplayPolicy,
  ReplayPrices,
  ReplayRemovedUser,
  ReplayRun,
} from './types.js';

/**
 * A recorded run replayed as if Haystack's `CompactionHook` had run before every LLM call: each assistant message is
 * the reply of one call; the history starts as the messages before the first one; before each call the hook compacts
 * the history (counting every message, as the hook does when the model reports no usage), the history as sent is
 * recorded, then the reply and the messages up to the next reply are appended. One warm compactor per policy is kept
 * across the calls, so a long run costs what its new messages cost.
 */

/** One conversation to replay: its items as the file holds them, the adapter that reads them, the list's container. */
export interface ReplaySource {
  readonly file: string;
  readonly adapter: FormatAdapter;
  readonly items: readonly unknown[];
  readonly container: Readonly<Record<string, unknown>> | null;
}

/** The settings every policy of a replay shares. */
export interface ReplaySettings {
  readonly contextWindow: number;
  readonly compactAt: number;
  readonly compactTo: number;
  /** The trigger and target as `hookThresholds` works them out. */
  readonly trigger: number;
  readonly target: number;
  readonly minKeepSteps?: number;
  /** undefined: the default note; null: none. */
  readonly note?: string | null;
  readonly minTokens?: number;
  readonly placeholder?: string;
  readonly summaryTokens?: number;
  readonly summaryInstruction?: string;
  readonly minRetention?: number;
  readonly counter: TokenCounter;
  /**
   * Whether the counter's count of a group is each message's count before another plus the last one's alone (the
   * BPE counters), so a grown history is counted from its new messages (see history.ts); otherwise it is counted
   * whole at every call.
   */
  readonly sumsMessages?: boolean;
  readonly prices: ReplayPrices;
  /** Writes summaries; null plans with simulated summaries of `summaryTokens` (nothing is called). */
  readonly summarizer: Summarizer | null;
}

/** What the replay cannot know, said with every result. */
export const REPLAY_NOTES: readonly string[] = [
  'Replies are taken as recorded: a model given a shorter history may have answered otherwise, so later calls of a compacting policy are what the recorded run would have sent, not what a new run would send.',
  'Tokens are counted as the hook counts them when the model reports no usage: every message of the history, no tool schemas, no provider overhead.',
];

/** Summarize's own calls of one policy. */
interface SummaryUse {
  calls: number;
  promptTokens: number;
  replyTokens: number;
  /** Calls that failed (the model could not be reached, the command exited non-zero), and the first one's reason. */
  failed: number;
  failure: string | null;
}

/** One conversation's calls: where each reply starts among the items, and what each message names. */
interface Script {
  /** The first item of each assistant message, ascending. */
  readonly starts: readonly number[];
  /** For each identifier key, the items (first item of a message) naming it, ascending. */
  readonly namedAt: ReadonlyMap<string, readonly number[]>;
  /** Each original item's index, by identity. */
  readonly indexOf: ReadonlyMap<unknown, number>;
  /** Each call's reply, rendered as the whole run reads it. */
  readonly replies: readonly Rendered[];
}

/**
 * Replays one conversation under each policy.
 * @param source the conversation's items, adapter and container
 * @param strategies the policies as given: `none`, or a strategy chain (`window`, `prune,window`)
 * @param settings the thresholds, the compaction options, the counter, the prices and the summarizer
 * @throws InputError for a message the format refuses
 */
export async function replaySource(
  source: ReplaySource,
  strategies: readonly string[],
  settings: ReplaySettings,
): Promise<ReplayRun> {
  const template = noteTemplate(settings.note);
  // Read first: a count that is not one fails the file before any policy is replayed.
  const recorded = recordedUsage(source.adapter.name, source.items, source.container, source.file);
  const whole = normalizeItems(source, source.items, template);
  const script = scriptOf(source, whole);
  const policies: ReplayPolicy[] = [];
  const idleNotes: string[] = [];
  for (const strategy of strategies) {
    const { policy, idle } = await replayPolicy(source, script, strategy, settings);
    policies.push(policy);
    if (idle.length > 0) idleNotes.push(idleNote(strategy, idle));
  }
  return {
    file: source.file,
    format: source.adapter.name,
    tokenizer: settings.counter.name,
    contextWindow: settings.contextWindow,
    compactAt: settings.compactAt,
    compactTo: settings.compactTo,
    trigger: settings.trigger,
    target: settings.target,
    prices: settings.prices,
    recorded,
    policies,
    notes: [...REPLAY_NOTES, ...idleNotes],
  };
}

/** A compaction that called the summarizer and changed nothing: the LLM call it came before, its calls, and why. */
interface Idle {
  readonly call: number;
  readonly calls: number;
  readonly why: string;
}

/**
 * Why a policy spent summary calls without compacting (issue 57: 11 calls, 0 compactions read as a bug): how many,
 * before which LLM calls, and the reason the compactor gave for keeping the history (each distinct one, first first).
 */
function idleNote(strategy: string, idle: readonly Idle[]): string {
  const calls = idle.reduce((n, i) => n + i.calls, 0);
  const at = idle.map((i) => i.call + 1);
  const shown = at.length <= 6 ? at.join(', ') : `${at.slice(0, 5).join(', ')} … ${at[at.length - 1] as number}`;
  const whys = [...new Set(idle.map((i) => i.why))];
  return (
    `${strategy}: ${calls} summary call${calls === 1 ? '' : 's'} compacted nothing ` +
    `(before LLM call${at.length === 1 ? '' : 's'} ${shown}): ${whys.join('; ')}; the hook then keeps the history as it was.`
  );
}

/** The calls of a conversation and where each identifier is named. */
function scriptOf(source: ReplaySource, whole: Normalized): Script {
  const itemsAt = itemsReader(whole.itemsOf);
  const starts = new Map<number, Message>();
  const namedAt = new Map<string, number[]>();
  whole.messages.forEach((message, m) => {
    const first = itemsAt(m)[0];
    if (first === undefined) return;
    if (message.role === 'assistant' && !starts.has(first)) starts.set(first, message);
    identifiersOfMessage(message, (id) => {
      const key = identifierKey(id);
      const at = namedAt.get(key);
      if (at === undefined) namedAt.set(key, [first]);
      else if (at[at.length - 1] !== first) at.push(first);
    });
  });
  const indexOf = new Map<unknown, number>();
  source.items.forEach((item, i) => indexOf.set(item, i));
  const ordered = [...starts.keys()].sort((a, b) => a - b);
  const replies = ordered.map((at) => renderMessage(starts.get(at) as Message));
  return { starts: ordered, namedAt, indexOf, replies };
}

/** Reads items as the adapter does (errors name the item in the file, as every command names them). */
function normalizeItems(source: ReplaySource, items: readonly unknown[], template: string | null): Normalized {
  return source.adapter.normalize(inputOf(source, items), template);
}

/** Items as an adapter reads them: their JSON texts written when asked for, failures naming the file. */
function inputOf(source: ReplaySource, items: readonly unknown[]): ConversationInput {
  return {
    file: source.file,
    items,
    raws: lazyList(items.length, (k) => JSON.stringify(items[k]) ?? 'null'),
    container: source.container,
    fail(item, reason): never {
      throw new InputError(`message ${item + 1}: ${reason}`, source.file);
    },
  };
}

/** The instructions a format holds beside its list, as the library is handed them. */
function systemOf(source: ReplaySource): unknown {
  const key = INSTRUCTION_KEYS[source.adapter.name];
  if (key === undefined || source.container === null) return undefined;
  return Object.prototype.hasOwnProperty.call(source.container, key) ? source.container[key] : undefined;
}

/** A warm compactor for one policy, its summaries counted into `use`. */
async function compactorFor(
  source: ReplaySource,
  strategy: string,
  settings: ReplaySettings,
  use: SummaryUse,
): Promise<Compactor> {
  const counter = settings.counter;
  const summaryTokens = settings.summaryTokens;
  const summarizer = settings.summarizer;
  const system = systemOf(source);
  return createCompactor({
    format: source.adapter.name as never,
    contextWindow: settings.contextWindow,
    compactAt: settings.compactAt,
    compactTo: settings.compactTo,
    // A chain `checkOptions` checks when the compactor is made (the policies are given as text).
    strategy: strategy as StrategyChain,
    counter,
    // The history's items are the file's, never edited in place: a message read before is the same object.
    assumeUnchanged: true,
    ...(system === undefined ? {} : { system }),
    ...(settings.note === undefined ? {} : { note: settings.note }),
    ...(settings.minKeepSteps === undefined ? {} : { minKeepSteps: settings.minKeepSteps }),
    ...(settings.minTokens === undefined || !strategy.includes('prune') ? {} : { minTokens: settings.minTokens }),
    ...(settings.placeholder === undefined || !strategy.includes('prune') ? {} : { placeholder: settings.placeholder }),
    ...(strategy.includes('summarize')
      ? {
          ...(summaryTokens === undefined ? {} : { summaryTokens }),
          ...(settings.summaryInstruction === undefined ? {} : { summaryInstruction: settings.summaryInstruction }),
          ...(settings.minRetention === undefined ? {} : { minRetention: settings.minRetention }),
          summarize: async (request: { readonly system: string; readonly user: string }): Promise<string> => {
            use.calls++;
            use.promptTokens += counter.measure([
              { text: request.system, images: 0, files: 0 },
              { text: request.user, images: 0, files: 0 },
            ]);
            if (summarizer === null) {
              const text = simulatedReply(counter, summaryTokens ?? 1024);
              use.replyTokens += counter.measure([{ text, images: 0, files: 0 }]);
              return text;
            }
            let reply: Awaited<ReturnType<Summarizer>>;
            try {
              reply = await summarizer(request);
            } catch (error) {
              // The compactor keeps its last good result; the run says the call failed.
              use.failed++;
              use.failure ??= error instanceof Error ? error.message : String(error);
              throw error;
            }
            // An empty reply is a failed call, as the command's and compactMessages' are: the compactor refuses it.
            if (reply.text.trim() === '') {
              use.failed++;
              use.failure ??= 'the summarizer returned no summary';
            }
            const reported = reply.usage?.output;
            // A reported count that is not a whole number of tokens is not one: the reply is counted instead.
            use.replyTokens +=
              reported !== undefined && Number.isSafeInteger(reported) && reported >= 0
                ? reported
                : counter.measure([{ text: reply.text, images: 0, files: 0 }]);
            return reply.text;
          },
        }
      : {}),
  });
}

/** What one policy's loop gathers. */
interface Gathered {
  readonly calls: ReplayCall[];
  readonly compactions: ReplayCompaction[];
  readonly lost: ReplayLost[];
  readonly removedUsers: ReplayRemovedUser[];
}

/** Replays the conversation under one policy. */
async function replayPolicy(
  source: ReplaySource,
  script: Script,
  strategy: string,
  settings: ReplaySettings,
): Promise<{ policy: ReplayPolicy; idle: Idle[] }> {
  const use: SummaryUse = { calls: 0, promptTokens: 0, replyTokens: 0, failed: 0, failure: null };
  const idle: Idle[] = [];
  const compactor = strategy === 'none' ? null : await compactorFor(source, strategy, settings, use);
  const template = noteTemplate(settings.note);
  const { starts } = script;
  const items = source.items;
  const gathered: Gathered = { calls: [], compactions: [], lost: [], removedUsers: [] };
  const history = new History(items.slice(0, starts[0] ?? items.length), {
    inputOf: (list) => inputOf(source, list),
    normalize: (input) => source.adapter.normalize(input, template),
    counter: settings.counter,
    sumsMessages: settings.sumsMessages === true,
    prefixSums: prefixSumsOf(settings.counter),
  });
  let previous: Previous | null = null;
  for (let call = 0; call < starts.length; call++) {
    const start = starts[call] as number;
    const end = starts[call + 1] ?? items.length;
    let sent = history.look();
    let compacted = false;
    // Below the trigger the hook never calls its compactor (Haystack's `_target_tokens` returns None).
    if (compactor !== null && sent.tokens >= settings.trigger) {
      const before = sent;
      const was = history.current;
      const callsBefore = use.calls;
      const done = await compactor.compact(was);
      if (!done.changed && use.calls > callsBefore)
        idle.push({ call, calls: use.calls - callsBefore, why: idleReason(done.summarized?.failure ?? null) });
      if (done.changed) {
        compacted = true;
        history.replace(done.messages);
        sent = history.look();
        gathered.compactions.push({
          call,
          before: before.tokens,
          after: sent.tokens,
          removed: done.plan.removed.length,
        });
        noteRemovedUsers(before.normalized, done.plan.removed, was, script, call, gathered);
        // Working out what a compaction forgot reads every kept message: only when it may matter.
        if (mayLoseNeeded(before.normalized, was, done.messages, script, start))
          noteLost(done.forgotten, script, call, start, gathered);
      }
    }
    const reply = script.replies[call] as Rendered;
    gathered.calls.push(callOf(call, start, compacted, sent, previous, history, reply, settings));
    // Its length now: a later look may grow the same list.
    previous = { rendered: sent.rendered, length: sent.rendered.length, tokens: sent.tokens, reply };
    history.append(items.slice(start, end));
  }
  return { policy: policyFigures(strategy, gathered, use, settings.prices), idle };
}

/** Why summarizing left the history as it was, in the compactor's words where it gave some. */
function idleReason(failure: SummaryFailure | null): string {
  if (failure === null) return 'its summaries did not make the history smaller';
  return failure.kind === 'not-smaller' ? 'its summary was no smaller than the messages it replaced' : failure.reason;
}

/** The previous call's history as sent: its first `length` rendered messages, their count, then its reply. */
interface Previous {
  readonly rendered: readonly Rendered[];
  readonly length: number;
  readonly tokens: number;
  readonly reply: Rendered;
}

/**
 * One call's figures: its tokens, what a prefix cache read and wrote (the previous call's history and reply as the
 * cached prefix; the messages the history kept since are the same without comparing them), its reply's tokens.
 */
function callOf(
  call: number,
  start: number,
  compacted: boolean,
  sent: Look,
  previous: Previous | null,
  history: History,
  reply: Rendered,
  settings: ReplaySettings,
): ReplayCall {
  const { rendered, tokens } = sent;
  // The previous request, read through a view: the history is not copied for every call.
  const before =
    previous === null
      ? null
      : lazyList(previous.length + 1, (k) =>
          k < previous.length ? (previous.rendered[k] as Rendered) : previous.reply,
        );
  const cached = prefixCache(
    rendered,
    before,
    (n) => history.prefixTokens(sent, previous?.tokens ?? 0, n),
    tokens,
    settings.prices,
    previous === null ? 0 : sent.unchanged,
  );
  return {
    message: start,
    compacted,
    tokens,
    cacheRead: cached.read,
    cacheWrite: cached.write,
    output: history.measure([reply]),
    overflow: tokens > settings.contextWindow,
  };
}

/** The user messages a compaction removed (not notes or summaries), by their index in the file. */
function noteRemovedUsers(
  before: Normalized,
  removed: readonly number[],
  history: readonly unknown[],
  script: Script,
  call: number,
  gathered: Gathered,
): void {
  const itemsAt = itemsReader(before.itemsOf);
  for (const m of removed) {
    const message = before.messages[m] as Message | undefined;
    if (message === undefined || message.role !== 'user' || message.compaction !== undefined) continue;
    const first = itemsAt(m)[0];
    const index = first === undefined ? undefined : script.indexOf.get(history[first]);
    if (index === undefined) continue;
    gathered.removedUsers.push({ message: index, call, preview: previewOf(renderMessage(message).text) });
  }
}

/** The most UTF-16 code units a removed user message's preview holds. */
const PREVIEW_UNITS = 120;

let segmenter: Intl.Segmenter | undefined;

/**
 * The start of a text, at most `PREVIEW_UNITS` code units of whole grapheme clusters: never half an emoji (a lone
 * surrogate) or part of a cluster (a flag, a family, a letter and its accents). Whether a boundary falls at an index
 * depends only on the text before it and the character at it, so only that much is segmented (on Node 20
 * `Intl.Segmenter` costs time in proportion to the whole string). A first cluster longer than the limit is cut at the
 * last whole code point.
 */
export function previewOf(text: string, units = PREVIEW_UNITS): string {
  if (text.length <= units) return text;
  segmenter ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  let end = 0;
  for (const { index, segment } of segmenter.segment(text.slice(0, units + 2))) {
    if (index + segment.length > units) break;
    end = index + segment.length;
  }
  if (end > 0) return text.slice(0, end);
  const high = text.charCodeAt(units - 1);
  return text.slice(0, high >= 0xd800 && high <= 0xdbff ? units - 1 : units);
}

/**
 * Whether a compaction may have forgotten an identifier a message from `from` on names: some message it did not
 * hand back as the very items it was read from (removed, pruned or summarized) names one. What it forgot is named
 * only in such messages, so when none does, nothing it forgot is needed again and what it forgot need not be worked
 * out (which reads the identifiers of every message it kept).
 */
function mayLoseNeeded(
  before: Normalized,
  was: readonly unknown[],
  after: readonly unknown[],
  script: Script,
  from: number,
): boolean {
  // Up to where the lists first differ, every item is handed back where it was; past it, looked up among the rest.
  const kept = samePrefix(was, after, Math.min(was.length, after.length));
  const handedBack = new Set(after.slice(kept));
  const itemsAt = itemsReader(before.itemsOf);
  const messages = before.messages;
  for (let m = 0; m < messages.length; m++) {
    const own = itemsAt(m);
    if (own.every((i) => i < kept || handedBack.has(was[i]))) continue;
    let needed = false;
    identifiersOfMessage(messages[m] as Message, (id) => {
      const at = script.namedAt.get(identifierKey(id));
      if (at !== undefined && (at[at.length - 1] as number) >= from) needed = true;
    });
    if (needed) return true;
  }
  return false;
}

/** Identifiers a compaction forgot that a message from the call's reply on names again. */
function noteLost(
  forgotten: readonly { readonly kind: string; readonly value: string }[],
  script: Script,
  call: number,
  from: number,
  gathered: Gathered,
): void {
  for (const id of forgotten) {
    const at = script.namedAt.get(identifierKey(id as never));
    const neededAt = at?.find((i) => i >= from);
    if (neededAt === undefined) continue;
    gathered.lost.push({ identifier: id.value, kind: id.kind, leftAt: call, neededAt });
  }
}
