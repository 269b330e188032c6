// The rules this module decides by: docs/strategy.md#summarize (Haystack's SummarizationCompactor).
import { range } from './meter.js';
import { leadingSystemEnd, notesByText, stepSpans, taskIndex, turnSpans } from './groups.js';
import { lazyList } from './lazy-list.js';
import { retentionFailure, retentionOf, type Retention } from './identifiers/index.js';
import { contentOf, filePlaceholder, renderMessage, textContent } from './render.js';
import { SUMMARIZATION, SUMMARY_CLOSING, SUMMARY_OPENING } from './summary-text.js';
import type { Message, Rendered, TokenCounter } from './types.js';

/** What one summary call is given: Haystack's prompt, as two texts. */
export interface SummaryRequest {
  /** The instruction: what a summary must hold and how it reads. */
  readonly system: string;
  /** The transcript of the messages the summary replaces. */
  readonly user: string;
}

/** What a model answered. usage when the endpoint reported it; cached when it came from the cache. */
export interface SummaryReply {
  readonly text: string;
  readonly usage?: { readonly input: number; readonly output: number };
  readonly cached?: boolean;
}

/** Anything that writes summaries: an endpoint, a command, a library callback, a cache around one of them. Throws SummaryCallError for a failed call. */
export type Summarizer = (request: SummaryRequest) => Promise<SummaryReply>;

export { isSummaryText, SUMMARIZATION } from './summary-text.js';

/** Haystack's `approximate_summary_tokens` default. */
export const DEFAULT_SUMMARY_TOKENS = 1024;

const OPENING = SUMMARY_OPENING;
const CLOSING = SUMMARY_CLOSING;

/** The four tiers a round is chosen from, in the order they are tried. */
export type SummaryTier = 'historical_turns' | 'historical_summaries' | 'current_task_steps' | 'current_task_summaries';

/** Settings of a summarization. */
export interface SummarizeOptions {
  /** The token target the result should come in under. */
  readonly target: number;
  /** The fewest newest steps of the current task to keep. Default 1. */
  readonly minKeepSteps?: number;
  /** About how long a summary comes out, for planning (Haystack's `approximate_summary_tokens`). Default 1024. */
  readonly summaryTokens?: number;
  /** The system message of every prompt. */
  readonly instruction: string;
  /**
   * The least share of the replaced messages' identifiers a summary must keep (`--min-retention`, 0 to 1): one that
   * keeps less fails its round, as an empty one does. Simulated replies are never held to it.
   */
  readonly minRetention?: number;
  /**
   * Count every conversation exactly (for plans and dry runs, and to test the laziness). Otherwise a conversation
   * over the target is counted only until it passes it, and exact figures are made only where a decision needs them.
   */
  readonly exhaustive?: boolean;
}

/** A summary an earlier round or run wrote (Haystack's `_is_compaction_message(strategy="summarization")`). */
export function isSummary(message: Message): boolean {
  return message.compaction === SUMMARIZATION;
}

/** Python's `str.isspace` characters: `strip()` there removes these, which differ from JavaScript's `trim`. */
const PY_SPACE = /[\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/;

/** Python's `str.strip()`, so a summary's text is exactly Haystack's. */
export function pythonStrip(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && PY_SPACE.test(text.charAt(start))) start++;
  while (end > start && PY_SPACE.test(text.charAt(end - 1))) end--;
  return text.slice(start, end);
}

/** The text of the summary message a reply becomes: `<conversation_summary>\n{reply stripped}\n</conversation_summary>`. */
export function wrapSummary(reply: string): string {
  return `${OPENING}\n${pythonStrip(reply)}\n${CLOSING}`;
}

/** The summary message (a user message marked `summarization`) for a reply. */
export function summaryMessage(reply: string): Message {
  return { role: 'user', compaction: SUMMARIZATION, content: textContent(wrapSummary(reply)) };
}

/**
 * Renders each message once across the rounds (keyed by the message, as the list changes from round to round) and
 * measures lists of them: the whole conversation, or all but a selection.
 */
class RenderCache {
  private readonly cache = new WeakMap<Message, Rendered>();
  constructor(private readonly counter: TokenCounter) {}

  render(message: Message): Rendered {
    let r = this.cache.get(message);
    if (r === undefined) {
      r = renderMessage(message);
      this.cache.set(message, r);
    }
    return r;
  }

  /** The tokens of these messages joined (Haystack's `token_counter.count(messages)`), 0 for none. */
  measure(messages: readonly Message[], limit?: number): number {
    if (messages.length === 0) return 0;
    return this.counter.measure(
      lazyList(messages.length, (k) => this.render(messages[k] as Message)),
      limit,
    );
  }
}

/** Meters kept per counter, so rounds of one conversation render each message once. */
const meters = new WeakMap<TokenCounter, RenderCache>();
function meterOf(counter: TokenCounter): RenderCache {
  let m = meters.get(counter);
  if (m === undefined) {
    m = new RenderCache(counter);
    meters.set(counter, m);
  }
  return m;
}

/**
 * The whole conversation's tokens, as every round compares them.
 * @param messages the conversation
 * @param counter the counter
 */
export function measureConversation(messages: readonly Message[], counter: TokenCounter, limit?: number): number {
  return meterOf(counter).measure(messages, limit);
}

/**
 * The fewest oldest groups whose removal makes room for a summary of the expected size (Haystack's
 * `_groups_to_summarize`): all of them when even that is not enough.
 */
function groupsToSummarize(
  messages: readonly Message[],
  groups: readonly (readonly number[])[],
  target: number,
  summaryTokens: number,
  meter: RenderCache,
): number[] {
  const selected: number[] = [];
  const left = new Set<number>();
  // Only whether what remains fits matters, so counting may stop just past that.
  const limit = target - summaryTokens;
  for (const group of groups) {
    for (const i of group) {
      selected.push(i);
      left.add(i);
    }
    if (limit < 0) continue;
    const remaining = meter.measure(
      messages.filter((_, i) => !left.has(i)),
      limit,
    );
    if (remaining + summaryTokens <= target) break;
  }
  return selected;
}

/** The positions of earlier summaries in [start, end) (Haystack's `_previous_summary_indices`). */
function summaryIndices(messages: readonly Message[], start: number, end: number): number[] {
  return range(start, end).filter((i) => isSummary(messages[i] as Message));
}

/** What the next round replaces: its tier and the message indices, ascending within each group. */
export interface SummarySelection {
  readonly tier: SummaryTier;
  readonly indices: readonly number[];
}

/**
 * Chooses the next stretch to replace with a summary (Haystack's `_next_summary`): the four tiers in order.
 * @param messages the conversation, oldest first
 * @param counter measures candidate selections
 * @param options target, min_keep_steps, summary tokens
 * @returns the tier and indices, or null when nothing is left that may be given up (the floor)
 */
export function nextSummary(
  messages: readonly Message[],
  counter: TokenCounter,
  options: Omit<SummarizeOptions, 'instruction'>,
): SummarySelection | null {
  const minKeepSteps = options.minKeepSteps ?? 1;
  const summaryTokens = options.summaryTokens ?? DEFAULT_SUMMARY_TOKENS;
  const meter = meterOf(counter);
  const systemEnd = leadingSystemEnd(messages);
  const notes = notesByText(messages, systemEnd);
  const task = taskIndex(messages, notes);
  const historyEnd = task ?? systemEnd;
  const taskStart = task === null ? systemEnd : task + 1;
  const pick = (groups: readonly (readonly number[])[]): number[] =>
    groupsToSummarize(messages, groups, options.target, summaryTokens, meter);

  // Tier 1: each group is anchored by a real user message; earlier summaries inside a turn go with it.
  const turns = turnSpans(messages, systemEnd, historyEnd, notes).map(([s, e]) => range(s, e));
  if (turns.length > 0) return { tier: 'historical_turns', indices: pick(turns) };

  // Tier 2: history is only summaries; combining one would only rewrite it, so at least two.
  const history = summaryIndices(messages, systemEnd, historyEnd);
  if (history.length > 1) {
    const selected = pick(history.map((i) => [i]));
    return { tier: 'historical_summaries', indices: history.slice(0, Math.max(selected.length, 2)) };
  }

  // Tier 3: the fewest oldest steps of the current task, the newest min_keep_steps kept.
  const steps = stepSpans(messages, taskStart).map(([s, e]) => range(s, e));
  const eligible = steps.slice(0, Math.max(steps.length - minKeepSteps, 0));
  if (eligible.length > 0) return { tier: 'current_task_steps', indices: pick(eligible) };

  // Tier 4: no step may go, so combine the current task's summaries, at least two.
  const current = summaryIndices(messages, taskStart, messages.length);
  if (current.length > 1) {
    const selected = pick(current.map((i) => [i]));
    return { tier: 'current_task_summaries', indices: current.slice(0, Math.max(selected.length, 2)) };
  }
  return null;
}

/** Describes an image or a file the summary cannot keep, when the format gave no details. */
function defaultAttachments(images: number, files: readonly (string | null)[]): string[] {
  return [
    ...Array.from({ length: images }, () => '<image: unknown type>'),
    ...files.map((name) => `${filePlaceholder(name).slice(0, -1)}, unknown type>`),
  ];
}

/**
 * One message as the summary prompt shows it (Haystack's `_render_message` with tool call ids and descriptive
 * placeholders): results as `[tool:NAME id=ID (error)] TEXT`, else texts, calls with their ids, attachments.
 */
export function renderForSummary(message: Message): string {
  const content = contentOf(message);
  if (content.results.length > 0) {
    return content.results
      .map((r) => `[tool:${r.name}${r.id ? ` id=${r.id}` : ''}${r.error ? ' (error)' : ''}] ${r.described ?? r.text}`)
      .join('\n');
  }
  const role = message.role;
  const lines: string[] = [];
  if (content.texts.length > 0) lines.push(`[${role}] ${content.texts.join('\n')}`);
  for (const call of content.toolCalls)
    lines.push(`[${role} -> tool_call${call.id ? ` id=${call.id}` : ''}] ${call.name}(${call.arguments})`);
  for (const placeholder of content.attachments ?? defaultAttachments(content.images, content.files))
    lines.push(`[${role}] ${placeholder}`);
  return lines.length > 0 ? lines.join('\n') : `[${role}] <no content>`;
}

/**
 * The selected messages for the summarizer (Haystack's `_summary_transcript`): earlier summaries as
 * `[conversation_summary]` and their text without the wrapper, everything else as `renderForSummary`.
 */
export function summaryTranscript(messages: readonly Message[]): string {
  return messages
    .map((m) => {
      if (!isSummary(m)) return renderForSummary(m);
      let text = contentOf(m).texts[0] ?? '';
      if (text.startsWith(OPENING) && text.endsWith(CLOSING))
        text = pythonStrip(text.slice(OPENING.length, text.length - CLOSING.length));
      return `[conversation_summary]\n${text}`;
    })
    .join('\n');
}

/**
 * The prompt for replacing these messages (Haystack's `_prompt`): the instruction, and the transcript wrapped in
 * `<conversation_to_summarize>`.
 */
export function summaryRequest(
  messages: readonly Message[],
  indices: readonly number[],
  instruction: string,
): SummaryRequest {
  const transcript = summaryTranscript(indices.map((i) => messages[i] as Message));
  return { system: instruction, user: `<conversation_to_summarize>\n${transcript}\n</conversation_to_summarize>` };
}

/**
 * Replaces the selected messages, which need not be contiguous, with one summary at the oldest one's position
 * (Haystack's `_replace_indices`).
 */
export function replaceIndices<T>(messages: readonly T[], indices: readonly number[], summary: T): T[] {
  const selected = new Set(indices);
  const at = Math.min(...indices);
  const out: T[] = [];
  messages.forEach((m, i) => {
    if (i === at) out.push(summary);
    if (!selected.has(i)) out.push(m);
  });
  return out;
}

/** One round to run: what it replaces and the prompt for it. */
export interface SummaryRound {
  readonly tier: SummaryTier;
  readonly indices: readonly number[];
  readonly request: SummaryRequest;
  /** The conversation's tokens before this round: exact, or (without `exhaustive`) a number above the target that the exact count is at least. */
  readonly tokensBefore: number;
}

/**
 * The next round of a summarization, or null when the conversation fits the target or is at the floor.
 * @param messages the conversation as the previous rounds left it
 * @param counter the counter
 * @param options target, min_keep_steps, summary tokens, instruction
 * @param tokens the conversation's tokens, when already measured
 */
export function planRound(
  messages: readonly Message[],
  counter: TokenCounter,
  options: SummarizeOptions,
  tokens?: number,
): SummaryRound | null {
  const tokensBefore = tokens ?? measureConversation(messages, counter);
  if (tokensBefore <= options.target) return null;
  const selection = nextSummary(messages, counter, options);
  if (selection === null) return null;
  return { ...selection, request: summaryRequest(messages, selection.indices, options.instruction), tokensBefore };
}

/** A reply applied: the new conversation, or why it was refused. */
export type AppliedSummary =
  | { readonly ok: true; readonly messages: Message[]; readonly summary: Message; readonly tokensAfter: number }
  | { readonly ok: false; readonly reason: 'empty' | 'not-smaller'; readonly tokensAfter: number | null };

/**
 * Swaps a round's messages for the summary of a reply (Haystack's `_apply_summary`). A reply with no text, or a
 * summary that does not make the conversation smaller, is refused: keeping the raw messages is then better.
 */
export function applySummary(
  messages: readonly Message[],
  round: SummaryRound,
  reply: string,
  counter: TokenCounter,
  exhaustive = true,
): AppliedSummary & { readonly tokensBefore?: number } {
  // (`exhaustive` false: `round.tokensBefore` may be a bound; the exact count before is made only where it decides.)
  if (pythonStrip(reply) === '') return { ok: false, reason: 'empty', tokensAfter: null };
  const summary = summaryMessage(reply);
  const out = replaceIndices(messages, round.indices, summary);
  if (!exhaustive) {
    // A round is made only for a conversation over the target: one that comes to the target or less is smaller,
    // whatever its exact size before; otherwise both are counted exactly, as Haystack compares them.
    // Counted up to one less than the bound before: at most that is exact, and smaller than the exact count before.
    const within = measureConversation(out, counter, Math.max(0, round.tokensBefore - 1));
    if (within < round.tokensBefore) return { ok: true, messages: out, summary, tokensAfter: within };
    const before = measureConversation(messages, counter);
    const after = measureConversation(out, counter);
    if (after >= before) return { ok: false, reason: 'not-smaller', tokensAfter: after, tokensBefore: before };
    return { ok: true, messages: out, summary, tokensAfter: after, tokensBefore: before };
  }
  const tokensAfter = measureConversation(out, counter);
  if (tokensAfter >= round.tokensBefore) return { ok: false, reason: 'not-smaller', tokensAfter };
  return { ok: true, messages: out, summary, tokensAfter };
}

/**
 * What a round's call gave: a reply's text, or the reason the call failed. `simulated` marks a stand-in's reply (dry
 * runs, plans): its retention says nothing, so it is neither measured nor held to `minRetention`.
 */
export type SummaryAnswer = { readonly text: string; readonly simulated?: boolean } | { readonly error: string };

/** Where a message of the result comes from: an input message, or the summary a round wrote. */
export type SummaryOrigin = { readonly input: number } | { readonly summary: number };

/** One round that succeeded. */
export interface SummaryRecord {
  readonly tier: SummaryTier;
  /** The positions it replaced, in the conversation that round saw. */
  readonly indices: readonly number[];
  /** How many messages it replaced (Haystack's `summarized_messages`). */
  readonly summarized: number;
  readonly request: SummaryRequest;
  /** The summary message's text (the reply stripped and wrapped). */
  readonly text: string;
  /** The input messages it stands for, directly or through the earlier summaries of this run it replaced. */
  readonly replaced: readonly number[];
  /** The earlier rounds' summaries it replaced. */
  readonly replacedSummaries: readonly number[];
  readonly tokensBefore: number;
  readonly tokensAfter: number;
  /** How many of the replaced messages' identifiers the summary keeps; null for a simulated reply. */
  readonly retention: Retention | null;
  /** How many identifiers the replaced messages name (what a summary would have to keep), simulated or not. */
  readonly identifiers: number;
}

/** Why the rounds stopped. */
export type SummaryStop = 'fits' | 'floor' | 'failed';

/** A round that failed: its number (0-based), the reason, and whether the call itself failed. */
export interface SummaryFailure {
  readonly round: number;
  readonly kind: 'call' | 'empty' | 'not-smaller' | 'retention';
  readonly reason: string;
  readonly request: SummaryRequest;
  /** For a summary that kept too little (`retention`): what it kept and lost. */
  readonly retention?: Retention;
}

/** A summarization's result. */
export interface SummarizeResult {
  /** The conversation after the last successful round (the input when none succeeded). */
  readonly messages: readonly Message[];
  /** For each of `messages`, where it comes from. */
  readonly origin: readonly SummaryOrigin[];
  readonly changed: boolean;
  readonly rounds: readonly SummaryRecord[];
  readonly failure: SummaryFailure | null;
  readonly stopped: SummaryStop;
  /** Exact, or (without `exhaustive`, `tokensBeforeExact` false) a number above the target the exact count is at least. */
  readonly tokensBefore: number;
  readonly tokensBeforeExact: boolean;
  readonly tokensAfter: number;
}

/**
 * Runs rounds until the conversation fits, reaches the floor, or a round fails (Haystack's `compact`), each
 * round awaiting its reply from `answer` (a model, or the stand-in of dry runs and checks) before the next.
 * @param messages the conversation (never mutated)
 * @param counter the counter
 * @param options target, min_keep_steps, summary tokens, instruction
 * @param answer gives round k's reply to its request
 */
export async function summarizeRounds(
  messages: readonly Message[],
  counter: TokenCounter,
  options: SummarizeOptions,
  answer: (request: SummaryRequest, round: number) => SummaryAnswer | Promise<SummaryAnswer>,
): Promise<SummarizeResult> {
  const exhaustive = options.exhaustive !== false;
  // Counted only until it passes the target, unless every figure must be exact.
  const tokensBefore = exhaustive
    ? measureConversation(messages, counter)
    : measureConversation(messages, counter, options.target);
  let current: readonly Message[] = messages;
  let origin: SummaryOrigin[] = messages.map((_, input) => ({ input }));
  let tokens = tokensBefore;
  const rounds: SummaryRecord[] = [];
  let failure: SummaryFailure | null = null;
  let stopped: SummaryStop = 'fits';
  for (;;) {
    if (tokens <= options.target) break;
    const round = planRound(current, counter, options, tokens);
    if (round === null) {
      stopped = 'floor';
      break;
    }
    const k = rounds.length;
    const reply = await answer(round.request, k);
    if ('error' in reply) {
      failure = { round: k, kind: 'call', reason: reply.error, request: round.request };
      stopped = 'failed';
      break;
    }
    const applied = applySummary(current, round, reply.text, counter, exhaustive);
    if (!applied.ok) {
      const reason =
        applied.reason === 'empty'
          ? 'the model returned no usable text'
          : `the summary did not make the conversation smaller (${applied.tokensBefore ?? round.tokensBefore} tokens before, ${applied.tokensAfter ?? 0} after)`;
      failure = { round: k, kind: applied.reason, reason, request: round.request };
      stopped = 'failed';
      break;
    }
    const text = contentOf(applied.summary).texts[0] as string;
    const retention = retentionOf(
      round.indices.map((i) => current[i] as Message),
      text,
    );
    const simulated = reply.simulated === true;
    const failed =
      simulated || options.minRetention === undefined ? null : retentionFailure(retention, options.minRetention);
    if (failed !== null) {
      failure = {
        round: k,
        kind: 'retention',
        reason: `${failed}${lostText(retention)}`,
        request: round.request,
        retention,
      };
      stopped = 'failed';
      break;
    }
    const covered = round.indices.map((i) => origin[i] as SummaryOrigin);
    const replaced = covered
      .flatMap((o) => ('input' in o ? [o.input] : [...(rounds[o.summary] as SummaryRecord).replaced]))
      .sort((a, b) => a - b);
    rounds.push({
      tier: round.tier,
      indices: round.indices,
      summarized: round.indices.length,
      request: round.request,
      text,
      replaced,
      replacedSummaries: covered.flatMap((o) => ('summary' in o ? [o.summary] : [])),
      tokensBefore: applied.tokensBefore ?? round.tokensBefore,
      tokensAfter: applied.tokensAfter,
      retention: simulated ? null : retention,
      identifiers: retention.total,
    });
    origin = replaceIndices(origin, round.indices, { summary: k });
    current = applied.messages;
    tokens = applied.tokensAfter;
  }
  return {
    messages: current,
    origin,
    changed: rounds.length > 0,
    rounds,
    failure,
    stopped,
    tokensBefore,
    tokensBeforeExact: exhaustive || tokensBefore <= options.target,
    tokensAfter: tokens,
  };
}

/** `; lost src/a.ts, TypeError, …`: the first identifiers a summary dropped, for the warning that fails its round. */
function lostText(retention: Retention): string {
  if (retention.lost.length === 0) return '';
  const shown = retention.lost.slice(0, 3).map((id) => id.value);
  return `; lost ${shown.join(', ')}${retention.lost.length > 3 ? `, and ${retention.lost.length - 3} more` : ''}`;
}

/**
 * A reply standing in for a model's in dry runs and plans: about `tokens` tokens long by the counter, so rounds
 * are simulated as if every summary came out at `--summary-tokens`.
 * @param counter the counter
 * @param tokens the size to aim at
 */
export function simulatedReply(counter: TokenCounter, tokens: number): string {
  const word = 'summary ';
  const sized = (n: number): number => measureConversation([summaryMessage(word.repeat(n))], counter);
  const base = sized(0);
  let n = Math.max(1, tokens);
  // Two corrections by proportion are enough for any counter that grows about linearly with the text.
  for (let pass = 0; pass < 3; pass++) {
    const got = sized(n) - base;
    if (got <= 0 || got === tokens) break;
    n = Math.max(1, Math.round((n * tokens) / got));
  }
  return word.repeat(n).trimEnd();
}
