import type { Group, GroupKind, Plan } from '../core/compact.js';
import { lazyList } from '../core/lazy-list.js';
import { noteMessage } from '../core/note.js';
import { renderMessage, textContent } from '../core/render.js';
import type { Message, Rendered, TokenCounter } from '../core/types.js';
import type { MessageCounts, Miss, Planned, PlanTotals, TokenFigure } from './types.js';

/**
 * The token figures of one conversation, each in the input's terms, worked out once so every output (the dry run's
 * text, the JSON plan, `--stat`, the library) shows the same numbers, and they add up:
 * before = after + saved.pruned + saved.offloaded + removed − note − summaries.
 */

/** What pruning and offloading took out of the messages the output keeps, in tokens. */
export interface Saved {
  readonly pruned: number;
  readonly offloaded: number;
}

/** A conversation's figures: before and after, what the kept messages were made smaller by, what went. */
export interface TokenFigures {
  readonly before: TokenFigure;
  readonly after: number;
  /** The note's own tokens, measured alone (0 without a note). */
  readonly note: number;
  readonly saved: Saved;
  /** The summaries' own tokens, the output's summaries measured together alone (0 without summarize). */
  readonly summaries: number;
  /**
   * What the removed messages cost in the input: the tokens before less what the output would count with every kept
   * message as it was read, the note's and the summaries' own tokens taken off that. Equal to the window alone's figure when a chain
   * removes the same messages; an estimate when the tokens before are one.
   */
  readonly removed: TokenFigure;
}

/** A message of the output, by what it stands for. */
type OutputMessage = { readonly input: number } | { readonly made: Message };

/**
 * The figures of a planned conversation.
 * @param before the tokens before (exact or an estimate)
 * @param note the note's own tokens, or null without a note
 */
export function tokenFigures(
  c: Planned,
  before: TokenFigure,
  note: number | null,
  counter: TokenCounter,
): TokenFigures {
  const after = c.plan.tokensAfter;
  const noteTokens = note ?? 0;
  const asRead = c.input ?? c.normalized.messages;
  const decided = c.normalized.messages;
  // Without a replaced message the output as read is the output: nothing is listed or counted again.
  const output = asRead === decided ? [] : outputMessages(c);
  const replaced = output.flatMap((o) => ('input' in o && asRead[o.input] !== decided[o.input] ? [o.input] : []));
  let saved: Saved = { pruned: 0, offloaded: 0 };
  let keptAsRead = after;
  if (replaced.length > 0) {
    const offloaded = new Set((c.offloaded ?? []).map((o) => o.message));
    const measure = (version: (m: number) => Message): number =>
      counter.measure(
        lazyList(output.length, (k): Rendered => {
          const o = output[k] as OutputMessage;
          return renderMessage('input' in o ? version(o.input) : o.made);
        }),
      );
    keptAsRead = measure((m) => asRead[m] as Message);
    // Messages offloading replaced count as offloaded (one pruning then offloaded too, as well); the rest as pruned.
    const kinds = new Set(replaced.map((m) => offloaded.has(m)));
    if (kinds.size === 1) {
      const all = keptAsRead - after;
      saved = kinds.has(true) ? { pruned: 0, offloaded: all } : { pruned: all, offloaded: 0 };
    } else {
      const prunedOnly = measure((m) => (offloaded.has(m) ? asRead[m] : decided[m]) as Message);
      saved = { pruned: keptAsRead - prunedOnly, offloaded: prunedOnly - after };
    }
  }
  const summaries = summaryTokens(c, counter);
  return {
    before,
    after,
    note: noteTokens,
    saved,
    summaries,
    removed: { tokens: before.tokens - keptAsRead + noteTokens + summaries, exact: before.exact },
  };
}

/** The summaries the output holds, measured together alone, as the note is: what they cost of the tokens after. */
function summaryTokens(c: Planned, counter: TokenCounter): number {
  if (c.output === undefined) return 0;
  const made = outputMessages(c).flatMap((o, position) =>
    'made' in o && 'summary' in (c.output?.[position] ?? {}) ? [renderMessage(o.made)] : [],
  );
  return made.length === 0 ? 0 : counter.measure(made);
}

/** The output's messages in order: the kept ones by input index, the note and the summaries the chain made. */
function outputMessages(c: Planned): OutputMessage[] {
  if (c.output !== undefined) {
    const summaries = c.summarized?.summaries ?? [];
    return c.output.map((e, position): OutputMessage => {
      if ('input' in e) return e;
      if ('note' in e) return { made: noteMessage(e.note) };
      const text = summaries.find((s) => s.position === position)?.text ?? '';
      return { made: { role: 'user', content: textContent(text) } };
    });
  }
  const { plan } = c;
  const out: OutputMessage[] = plan.kept.map((input) => ({ input }));
  if (plan.noteText !== null && plan.noteIndex !== null)
    out.splice(plan.noteIndex, 0, { made: noteMessage(plan.noteText) });
  return out;
}

/**
 * Each group's tokens as outputs show them: a kept group as the output holds it (a pruned result as its placeholder),
 * a removed one as it was read, so removed groups cost what they cost in the input. A group none of whose messages a
 * chain replaced keeps the plan's count (either list holds it alike); the others are measured here. Null where the
 * plan did not count it.
 */
export function groupTokens(
  c: Pick<Planned, 'plan' | 'normalized' | 'input'>,
  counter: TokenCounter,
): (number | null)[] {
  const decided = c.normalized.messages;
  const asRead = c.input ?? decided;
  const groups = c.plan.groups;
  if (asRead === decided) return groups.map((g) => g.tokens);
  return groups.map((g: Group): number | null => {
    if (g.tokens === null || g.kind === 'note') return g.tokens;
    if (g.indices.every((i) => asRead[i] === decided[i])) return g.tokens;
    const wanted = g.kept ? decided : asRead;
    return counter.measure(g.indices.map((i) => renderMessage(wanted[i] as Message)));
  });
}

/**
 * The note's own cost, measured alone: the plan's note, or in a summarizing chain's output the note the window wrote
 * there (the chain's plan does not hold it).
 * @param output with summarize, the output's messages in order
 * @returns null when there is no note
 */
export function noteTokensOf(
  plan: Pick<Plan, 'noteText'>,
  counter: TokenCounter,
  output?: Planned['output'],
): number | null {
  let text = plan.noteText;
  for (const e of output ?? []) if (text === null && 'note' in e) text = e.note;
  if (text === null) return null;
  return counter.measure([renderMessage(noteMessage(text))]);
}

/**
 * Totals of one conversation's plan and, when it misses its target, why: the groups' tokens as outputs show them
 * (`groupTokens`), and the removed messages' tokens the figure that adds up (null where it is an estimate).
 */
export function planTotals(
  c: Planned,
  counts: MessageCounts,
  note: number | null,
  miss: Miss | null,
  tokens: readonly (number | null)[],
  removed: () => TokenFigure,
): PlanTotals {
  const { plan } = c;
  const groups = plan.groups;
  // Indexes, not copies, of the groups: a long file's groups are a list of their own.
  const where = (test: (g: Group) => boolean): number[] => groups.flatMap((g, k) => (test(g) ? [k] : []));
  const of = (kind: GroupKind, kept: boolean): number[] => where((g) => g.kind === kind && g.kept === kept);
  const sum = (at: readonly number[]): number | null => sumTokens(at.map((k) => tokens[k] ?? null));
  const removedFigure = counts.removed === 0 && plan.noteText === null ? null : removed();
  return {
    messagesBefore: counts.before,
    messagesAfter: counts.after,
    protectedTokens: plan.protectedTokens ?? sum(where((g) => g.kind === 'system' || g.kind === 'task')),
    keptTurnTokens: sum(of('turn', true)),
    keptStepTokens: sum(of('step', true)),
    keptOtherTokens: sum(of('orphan', true)),
    noteTokens: note,
    removed: {
      messages: counts.removed,
      tokens: removedFigure === null ? 0 : removedFigure.exact ? removedFigure.tokens : null,
      turns: of('turn', false).length,
      steps: of('step', false).length,
      orphans: of('orphan', false).length,
    },
    miss,
  };
}

/** A sum of counts that stays null when any part was not counted. */
function sumTokens(tokens: readonly (number | null)[]): number | null {
  let total = 0;
  for (const t of tokens) {
    if (t === null) return null;
    total += t;
  }
  return total;
}
