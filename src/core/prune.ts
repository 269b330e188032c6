// The rules this module decides by, numbered and explained: docs/strategy.md#tool-result-pruning.
import { lazyList } from './lazy-list.js';
import { protectedResults, replaceUntilTarget, resultSteps } from './replace-loop.js';
import { AscendingSet } from './sorted.js';
import { templatePieces } from './note.js';
import { isPointerText } from './pointer.js';
import { contentOf, marksOf, renderMessage } from './render.js';
import { endsWith, renderedLetterEnd, sketchedResults, startsWith, wholeText } from './sketch.js';
import type { Content, Message, Rendered, TextSketch, TokenCounter } from './types.js';

/** The strategy name Haystack records in the metadata of a pruned result. */
export const TOOL_RESULT_PRUNING = 'tool_result_pruning';

/** Haystack's `ToolResultPruningCompactor` placeholder; `{tool_name}` is the tool that produced the result. */
export const DEFAULT_PLACEHOLDER = '[Tool result removed to free up context. Call `{tool_name}` again if you need it.]';

export const TOOL_NAME = '{tool_name}';

/** Settings of one pruning. */
export interface PruneOptions {
  /** The token target the result should come in under (a goal, not a promise). */
  readonly target: number;
  /** The newest tool-calling steps whose results are never touched. At least 1; default 1. */
  readonly minKeepSteps?: number;
  /** Only results of more than this many tokens (the message measured alone) are pruned. Default 200. */
  readonly minTokens?: number;
  /** The text left in place of a result; `{tool_name}` is filled in literally. Default `DEFAULT_PLACEHOLDER`. */
  readonly placeholder?: string;
  /** Count every message exactly, even where the decision is known without (for plans, and to test the laziness). */
  readonly exhaustive?: boolean;
}

/** One message whose results were replaced. */
export interface PrunedMessage {
  /** Its index in the conversation. */
  readonly index: number;
  /** The placeholder written for each of its results, in order. */
  readonly texts: readonly string[];
  /** The tool names of its results, in order. */
  readonly tools: readonly string[];
  /** The message measured alone, before and after (Haystack's `original_tokens` is `tokensBefore`). */
  readonly tokensBefore: number;
  readonly tokensAfter: number;
}

/** The decision of one pruning. */
export interface PrunePlan {
  readonly changed: boolean;
  /** The messages pruned, oldest first. */
  readonly pruned: readonly PrunedMessage[];
  /** The conversation after pruning (the input list itself when nothing changed). */
  readonly messages: readonly Message[];
  /** Tokens of the whole conversation before and after (the latter measured again, not estimated). */
  readonly tokensBefore: number;
  readonly tokensAfter: number;
  readonly targetMet: boolean;
  /** Whether `tokensBefore` is exact; otherwise it is a lower bound above the target. */
  readonly tokensBeforeExact: boolean;
  /**
   * Set when the decision was made without counting the candidates (see `planPruning`): every tool result that may
   * be pruned, and the pruning of one of them, worked out when asked. `pruned` then works out all of them.
   */
  readonly lazy?: {
    readonly candidates: readonly number[];
    prunedAt(index: number): PrunedMessage | null;
  };
}

/**
 * Fills in a placeholder: every `{tool_name}` becomes the name, a literal replace, so other braces (a JSON example)
 * stay as written.
 */
export function fillPlaceholder(template: string, toolName: string): string {
  return template.split(TOOL_NAME).join(toolName);
}

/**
 * Whether a result's text is a placeholder an earlier pruning wrote: the active template or the default one, any
 * text standing where `{tool_name}` is. Matched literally, never as a regular expression.
 */
export function isPlaceholderText(text: string, template: string): boolean {
  return (
    matchesAnyName(text, template) || (template !== DEFAULT_PLACEHOLDER && matchesAnyName(text, DEFAULT_PLACEHOLDER))
  );
}

/**
 * `isPlaceholderText` asked of a text known by its sketch: the same answer, or undefined when the sketch cannot tell
 * (a placeholder is told by its pieces at the two ends; pieces between them need the whole text).
 */
export function isPlaceholderSketch(sketch: TextSketch, template: string): boolean | undefined {
  const whole = wholeText(sketch);
  if (whole !== null) return isPlaceholderText(whole, template);
  const active = matchesAnyNameSketch(sketch, template);
  if (active === true || template === DEFAULT_PLACEHOLDER) return active;
  const fallback = matchesAnyNameSketch(sketch, DEFAULT_PLACEHOLDER);
  return fallback === true ? true : active === false && fallback === false ? false : undefined;
}

/** `matchesAnyName` asked of a sketched text that is not whole. */
function matchesAnyNameSketch(sketch: TextSketch, template: string): boolean | undefined {
  if (template === '') return false;
  const pieces = templatePieces(template, TOOL_NAME);
  if (pieces.length === 1) return sketch.length !== template.length ? false : undefined;
  const first = pieces[0] as string;
  const last = pieces[pieces.length - 1] as string;
  if (sketch.length < first.length + last.length) return false;
  const starts = startsWith(sketch, first);
  const ends = endsWith(sketch, last);
  if (starts === false || ends === false) return false;
  return starts === true && ends === true && pieces.length === 2 ? true : undefined;
}

/** A wildcard match where each `{tool_name}` stands for any text: leftmost placement of each literal piece is enough. */
function matchesAnyName(text: string, template: string): boolean {
  if (template === '') return false;
  const pieces = templatePieces(template, TOOL_NAME);
  if (pieces.length === 1) return text === template;
  const first = pieces[0] as string;
  const last = pieces[pieces.length - 1] as string;
  if (text.length < first.length + last.length || !text.startsWith(first) || !text.endsWith(last)) return false;
  let pos = first.length;
  const end = text.length - last.length;
  for (let k = 1; k < pieces.length - 1; k++) {
    const found = text.indexOf(pieces[k] as string, pos);
    if (found === -1 || found + (pieces[k] as string).length > end) return false;
    pos = found + (pieces[k] as string).length;
  }
  return true;
}

/**
 * The message with every result's content replaced by the placeholder (its tool's name filled in); the error flag,
 * the tool name and everything beside the results stay. Images and files inside a result go with its content.
 */
export function prunedMessage(message: Message, template: string): Message {
  const content = contentOf(message);
  const pruned: Content = {
    ...content,
    results: content.results.map((r) => ({
      name: r.name,
      text: fillPlaceholder(template, r.name),
      error: r.error,
      images: 0,
      files: 0,
    })),
  };
  return { ...marksOf(message), compaction: TOOL_RESULT_PRUNING, content: pruned };
}

export { protectedResults, resultSteps };

/** Checks the settings as Haystack's constructor does. */
function checkOptions(minKeepSteps: number, minTokens: number, placeholder: string): void {
  if (!Number.isInteger(minKeepSteps) || minKeepSteps < 1) {
    throw new RangeError(
      `min_keep_steps must be at least 1 for pruning, got ${minKeepSteps}: the newest results are the ones the model is about to act on`,
    );
  }
  if (!Number.isInteger(minTokens) || minTokens < 0)
    throw new RangeError(`min_tokens must be a whole number of at least 0, got ${minTokens}`);
  if (placeholder === '') throw new RangeError('the placeholder must not be empty');
}

/**
 * Decides which tool results `ToolResultPruningCompactor` replaces. Pure: never mutates `messages`.
 * @param messages the conversation, oldest first
 * @param counter measures groups of rendered messages
 * @param options target, min_keep_steps, min_tokens, placeholder
 * @returns the decision and the conversation it leaves
 */
export function planPruning(messages: readonly Message[], counter: TokenCounter, options: PruneOptions): PrunePlan {
  const minKeepSteps = options.minKeepSteps ?? 1;
  const minTokens = options.minTokens ?? 200;
  const template = options.placeholder ?? DEFAULT_PLACEHOLDER;
  checkOptions(minKeepSteps, minTokens, template);
  if (options.exhaustive !== true && counter.measureApart !== undefined) {
    const lazy = planWithoutCounting(messages, counter, options.target, minKeepSteps, minTokens, template);
    if (lazy !== null) return lazy;
  }
  const learned = learning(messages);
  const rendered = new Array<Rendered | undefined>(messages.length);
  const renderAt = (i: number): Rendered => (rendered[i] ??= learned.render(i));
  const all = messages.map((_, i) => renderAt(i));
  const before = all.length === 0 ? 0 : counter.measure(all);
  const unchanged: PrunePlan = {
    changed: false,
    pruned: [],
    messages,
    tokensBefore: before,
    tokensAfter: before,
    targetMet: before <= options.target,
    tokensBeforeExact: true,
  };
  if (before <= options.target) return unchanged;

  // Haystack's shared loop: oldest first, each replacement kept only if it saves tokens, stopping at the target.
  const replaced = replaceUntilTarget(messages, before, options.target, minKeepSteps, (message, i) => {
    if (!learned.isPrunable(i, template)) return null;
    const original = counter.measure([renderAt(i)]);
    if (original <= minTokens) return null;
    const replacement = prunedMessage(message, template);
    const replacementRendered = renderMessage(replacement);
    const after = counter.measure([replacementRendered]);
    const results = contentOf(replacement).results;
    const record: PrunedMessage = {
      index: i,
      texts: results.map((r) => r.text),
      tools: results.map((r) => r.name),
      tokensBefore: original,
      tokensAfter: after,
    };
    return { message: replacement, saved: original - after, record: { record, rendered: replacementRendered } };
  });
  if (replaced === null) return unchanged;
  const outRendered = all.slice();
  for (const { record, rendered: r } of replaced.records) outRendered[record.index] = r;
  const pruned = replaced.records.map((r) => r.record);
  const out = replaced.messages;
  const tokensAfter = counter.measure(outRendered);
  return {
    changed: true,
    pruned,
    messages: out,
    tokensBefore: before,
    tokensAfter,
    targetMet: tokensAfter <= options.target,
    tokensBeforeExact: true,
  };
}

/**
 * The results that may be pruned as far as the messages' marks tell (their texts unread), less those `learned` knows
 * cannot be: a superset of those pruned.
 */
function candidatePositions(
  messages: readonly Message[],
  minKeepSteps: number,
  learned: Learning,
  template: string,
): number[] {
  const kept = protectedResults(messages, minKeepSteps);
  const isCandidate = (m: Message, i: number): boolean =>
    m.role === 'tool' &&
    !kept.has(i) &&
    m.compaction === undefined &&
    m.offloaded !== true &&
    m.fixed !== true &&
    learned.mayPrune(i, template);
  // Counted first, then listed into a list of that size: nearly half a long run's messages are candidates, and a
  // list pushed to leaves each smaller one it outgrew behind.
  let count = 0;
  messages.forEach((m, i) => {
    if (isCandidate(m, i)) count++;
  });
  const out = new Array<number>(count);
  let k = 0;
  messages.forEach((m, i) => {
    if (isCandidate(m, i)) out[k++] = i;
  });
  return out;
}

/**
 * The decision where it is not close, made without counting the candidates. Haystack's loop prunes oldest first
 * and stops once its running total (the whole, less each saving) reaches the target; each saving is at most the
 * result's own count, so when the whole less every candidate's own count already exceeds the target, the loop never
 * stops early and prunes exactly the candidates that pass their own tests. Those tests (more than `minTokens`, and
 * a saving above 0) both ask whether the result's count passes the larger of `minTokens` and its placeholder's, so
 * counting stops there; a candidate is looked at only when its message is read (a window after pruning reads the
 * newest few), and its exact count only when asked for.
 * @returns the plan, or null when the decision is close (then everything is counted)
 */
function planWithoutCounting(
  messages: readonly Message[],
  counter: TokenCounter,
  target: number,
  minKeepSteps: number,
  minTokens: number,
  template: string,
): PrunePlan | null {
  const n = messages.length;
  const learned = learning(messages);
  // The few messages rendered (the newest, a count reads until it passes the target): a map, not a list as long as
  // the conversation.
  const rendered = new Map<number, Rendered>();
  const renderAt =
    learned.peek !== undefined
      ? learned.render
      : (i: number): Rendered => {
          let r = rendered.get(i);
          if (r === undefined) {
            r = learned.render(i);
            rendered.set(i, r);
          }
          return r;
        };
  const renderedAt = learned.peek ?? ((i: number): Rendered | undefined => rendered.get(i));
  const all = lazyList(n, renderAt);
  const whole = n === 0 ? 0 : counter.measure(all, target);
  if (whole <= target) {
    return {
      changed: false,
      pruned: [],
      messages,
      tokensBefore: whole,
      tokensAfter: whole,
      targetMet: true,
      tokensBeforeExact: true,
    };
  }
  const candidates = candidatePositions(messages, minKeepSteps, learned, template);
  // A byte a message, not a Set's dozen bytes a candidate (nearly half a long agent run's messages are results).
  const apart = new AscendingSet(candidates, n);
  // The candidates' texts are read once here, and not kept: only the few a window reads are wanted again. The bound
  // needs only each one's end (from its last letter or digit), which a sketch gives without reading the text.
  const endOf = (i: number): Rendered => {
    const known = renderedAt(i);
    const sketched = known === undefined ? sketchedResults(messages[i] as Message, true) : undefined;
    const end = sketched === undefined ? null : renderedLetterEnd(sketched);
    return end !== null ? { text: end, images: 0, files: 0 } : (known ?? learned.render(i));
  };
  const each = lazyList(n, (i) => (apart.has(i) ? endOf(i) : renderAt(i)));
  const rest = (counter.measureApart as NonNullable<TokenCounter['measureApart']>)(each, apart, target);
  if (rest <= target) return null;

  const decide = candidateDecider(messages, counter, renderAt, minTokens, template, learned);
  // Whether anything changes: the newest candidates are looked at first (they are the ones a window keeps).
  let changed = false;
  for (let k = candidates.length - 1; k >= 0 && !changed; k--) changed = decide(candidates[k] as number) !== null;
  let out: readonly Message[] = messages;
  if (changed) {
    const list = messages.slice();
    const StandIn = deferredMessages(messages, (i) => decide(i)?.message ?? (messages[i] as Message));
    for (const i of candidates) list[i] = new StandIn(i);
    out = list;
  }
  const outRendered = lazyList(n, (i) =>
    apart.has(i) && decide(i) !== null ? renderMessage((decide(i) as { message: Message }).message) : renderAt(i),
  );
  let after: number | undefined;
  let met: boolean | undefined;
  return {
    changed,
    get pruned(): readonly PrunedMessage[] {
      return candidates.map(decide).flatMap((d) => (d === null ? [] : [d.pruned]));
    },
    messages: out,
    tokensBefore: Math.max(whole, rest),
    tokensBeforeExact: false,
    // Measured only when asked for: a window after pruning gives the figures.
    get tokensAfter(): number {
      after ??= counter.measure(outRendered);
      return after;
    },
    get targetMet(): boolean {
      met ??= after !== undefined ? after <= target : counter.measure(outRendered, target) <= target;
      return met;
    },
    lazy: { candidates: changed ? candidates : [], prunedAt: (i) => decide(i)?.pruned ?? null },
  };
}

/**
 * Decides candidates one at a time, each when first asked and then remembered: whether its result passes the larger
 * of `minTokens` and its placeholder's count (counting stops there), and if so its pruned message.
 */
function candidateDecider(
  messages: readonly Message[],
  counter: TokenCounter,
  renderAt: (i: number) => Rendered,
  minTokens: number,
  template: string,
  learned: Learning,
): (i: number) => { pruned: PrunedMessage; message: Message } | null {
  const decided = new Map<number, { pruned: PrunedMessage; message: Message } | null>();
  return (i: number): { pruned: PrunedMessage; message: Message } | null => {
    if (decided.has(i)) return decided.get(i) ?? null;
    const message = messages[i] as Message;
    let out: { pruned: PrunedMessage; message: Message } | null = null;
    if (learned.isPrunable(i, template)) {
      const replacement = prunedMessage(message, template);
      const after = counter.measure([renderMessage(replacement)]);
      const bound = Math.max(minTokens, after);
      if (counter.measure([renderAt(i)], bound) > bound) {
        const results = contentOf(replacement).results;
        let original: number | undefined;
        const pruned: PrunedMessage = {
          index: i,
          texts: results.map((r) => r.text),
          tools: results.map((r) => r.name),
          get tokensBefore(): number {
            original ??= counter.measure([renderAt(i)]);
            return original;
          },
          tokensAfter: after,
        };
        out = { pruned, message: replacement };
      }
    }
    decided.set(i, out);
    return out;
  };
}

/** A message read as a plan resolves it, made by `deferredMessages`. */
type Deferred = new (index: number) => Message;

/**
 * The class of one plan's stand-ins: a message whose role and marks are its original's (pruning keeps them), so that
 * walking a conversation's structure reads only those, and whose content and compaction mark are `resolve(index)`'s,
 * worked out when read. A class per plan, so that a stand-in holds its index alone (32 bytes; a long run's
 * candidates are nearly half its messages) and every stand-in shares the getters.
 */
function deferredMessages(messages: readonly Message[], resolve: (index: number) => Message): Deferred {
  return class implements Message {
    constructor(private readonly index: number) {}

    get role(): Message['role'] {
      return (messages[this.index] as Message).role;
    }

    get weight(): number | undefined {
      return (messages[this.index] as Message).weight;
    }

    get exactNote(): boolean | undefined {
      return (messages[this.index] as Message).exactNote;
    }

    get compaction(): string | undefined {
      return resolve(this.index).compaction;
    }

    get content(): Content {
      return contentOf(resolve(this.index));
    }
  };
}

/**
 * Whether a tool-result message may be pruned at all: not made by compaction (Haystack metadata), not offloaded,
 * and not already holding a placeholder.
 */
function isPrunable(message: Message, template: string): boolean {
  if (message.compaction !== undefined || message.offloaded === true || message.fixed === true) return false;
  const results = contentOf(message).results;
  // A pointer is what leads back to an offloaded result (Haystack's meta `tool_result_offloaded`, which formats
  // without metadata carry as the text itself): pruning it would lose the way back.
  return results.length > 0 && !results.some((r) => isPlaceholderText(r.text, template) || isPointerText(r.text));
}

/** What pruning learned of one message: its rendering, and whether it may be pruned under a placeholder template. */
interface Learned {
  rendered?: Rendered;
  prunable?: { readonly template: string; readonly value: boolean };
}

/**
 * What pruning learned of the messages of the lists a warm compactor hands it again and again (see
 * `remembersMessages`), each at its message's index: a long replay compacts at most of its calls, and each compaction
 * read every message again.
 */
const LEARNED = new WeakMap<readonly Message[], (Learned | undefined)[]>();

/**
 * Marks a list whose messages pruning may learn once (a warm compactor's normalized conversation: a message of it
 * never changes what it says), rendering each and testing its results once, not at every compaction. A list not
 * marked is read as before, and nothing of it is kept (a file's messages are compacted once).
 * @param list the normalized messages; a list marked before keeps what was learned of it (a continuation appends)
 * @param carried a list marked before whose first `count` messages say what `list`'s first `count` say (the same
 *   items read again): what was learned of those is kept
 */
export function remembersMessages(
  list: readonly Message[],
  carried?: { readonly from: readonly Message[]; readonly count: number },
): void {
  if (LEARNED.has(list)) return;
  const known = carried === undefined ? undefined : LEARNED.get(carried.from);
  LEARNED.set(list, known === undefined ? [] : known.slice(0, carried?.count));
}

/** How a plan renders messages and tests them for pruning: once per message of a remembered list. */
interface Learning {
  render(i: number): Rendered;
  isPrunable(i: number, template: string): boolean;
  /** False only where message `i` is known not to be prunable (nothing is read to know it). */
  mayPrune(i: number, template: string): boolean;
  /** For a remembered list: message `i`'s rendering if it was made (a plan then keeps none of its own). */
  peek?(i: number): Rendered | undefined;
}

/** How the messages of `list` are rendered and tested. */
function learning(list: readonly Message[]): Learning {
  const known = LEARNED.get(list);
  if (known === undefined) {
    return {
      render: (i) => renderMessage(list[i] as Message),
      isPrunable: (i, template) => isPrunable(list[i] as Message, template),
      mayPrune: () => true,
    };
  }
  const at = (i: number): Learned => (known[i] ??= {});
  return {
    peek: (i) => known[i]?.rendered,
    render: (i) => {
      const entry = at(i);
      return (entry.rendered ??= renderMessage(list[i] as Message));
    },
    isPrunable(i, template) {
      const entry = at(i);
      if (entry.prunable?.template !== template)
        entry.prunable = { template, value: isPrunable(list[i] as Message, template) };
      return entry.prunable.value;
    },
    mayPrune(i, template) {
      const verdict = known[i]?.prunable;
      return verdict === undefined || verdict.template !== template || verdict.value;
    },
  };
}
