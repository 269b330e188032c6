import type { Group, GroupKind, Plan } from '../core/compact.js';
import { renderMessage, textContent } from '../core/render.js';
import type { Message, TokenCounter } from '../core/types.js';
import type { ConversationResult, FileResult } from '../pipeline.js';

/**
 * What a compaction plan says, in numbers: the JSON plan of `--dry-run --json` / `--report`, and the totals
 * the dry-run view prints. Both read the same summary, so the text and the JSON never disagree.
 */

/** Settings a plan was made with, as the plan document records them. */
export interface PlanSettings {
  readonly target: number;
  readonly tokenizer: string;
  readonly minKeepSteps: number;
  /** The active note template, or null when notes are off. */
  readonly note: string | null;
  /** The format asked for (`auto` or a name). */
  readonly format: string;
  /** When given, the note's own tokens are measured (otherwise the note group's `tokens` is null). */
  readonly counter?: TokenCounter;
}

/** Why a plan misses its target. */
export type Miss =
  | { readonly kind: 'protected'; readonly protectedTokens: number }
  | { readonly kind: 'min-keep-steps'; readonly steps: number; readonly stepTokens: number; readonly budget: number }
  | { readonly kind: 'note'; readonly noteTokens: number | null; readonly tokensAfter: number }
  | { readonly kind: 'joined'; readonly tokensAfter: number };

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

/** A sum of counts that stays null when any part was not counted. */
function sumTokens(groups: readonly Group[]): number | null {
  let total = 0;
  for (const g of groups) {
    if (g.tokens === null) return null;
    total += g.tokens;
  }
  return total;
}

/**
 * How many messages these are in the file's own count, the one the note's `{num_removed}` uses: a message
 * stands for `weight` items (e.g. the several lines of one split Claude Code message), 1 by default.
 */
export function countOf(messages: readonly Message[], indices: readonly number[]): number {
  let n = 0;
  for (const i of indices) n += messages[i]?.weight ?? 1;
  return n;
}

/**
 * The note's own cost, measured alone.
 * @returns null when there is no note or no counter to measure it with
 */
export function noteTokens(plan: Plan, counter: TokenCounter | undefined): number | null {
  if (plan.noteText === null || counter === undefined) return null;
  return counter.measure([renderMessage({ role: 'user', content: textContent(plan.noteText) })]);
}

/**
 * Totals of one conversation's plan and, when it misses the target, why.
 * @param plan the decision (made with `exhaustive` so every group has its tokens)
 * @param target the token target
 * @param minKeepSteps the min_keep_steps setting
 * @param counter measures the note, when given
 */
export function planTotals(plan: Plan, target: number, minKeepSteps: number, counter?: TokenCounter): PlanTotals {
  const groups = plan.groups;
  const of = (kind: GroupKind, kept: boolean): Group[] => groups.filter((g) => g.kind === kind && g.kept === kept);
  const protectedGroups = groups.filter((g) => g.kind === 'system' || g.kind === 'task');
  const removedGroups = groups.filter((g) => !g.kept && g.kind !== 'note');
  const keptSteps = of('step', true);
  const note = noteTokens(plan, counter);
  const protectedTokens = plan.protectedTokens ?? sumTokens(protectedGroups);
  const keptStepTokens = sumTokens(keptSteps);
  const hasNote = plan.noteText !== null;
  return {
    messagesBefore: plan.keptCount + plan.removedCount,
    messagesAfter: plan.keptCount + (hasNote ? 1 : 0),
    protectedTokens,
    keptTurnTokens: sumTokens(of('turn', true)),
    keptStepTokens,
    keptOtherTokens: sumTokens(of('orphan', true)),
    noteTokens: note,
    removed: {
      messages: plan.removedCount,
      tokens: sumTokens(removedGroups),
      turns: of('turn', false).length,
      steps: of('step', false).length,
      orphans: of('orphan', false).length,
    },
    miss: plan.targetMet ? null : missOf(plan, target, minKeepSteps, protectedTokens, keptSteps.length, keptStepTokens, note),
  };
}

/** The first reason that explains a missed target: protected part, min_keep_steps, the note, or joined counting. */
function missOf(
  plan: Plan,
  target: number,
  minKeepSteps: number,
  protectedTokens: number | null,
  keptSteps: number,
  keptStepTokens: number | null,
  note: number | null,
): Miss {
  if (protectedTokens !== null && protectedTokens > target) return { kind: 'protected', protectedTokens };
  const budget = target - (protectedTokens ?? 0);
  // Kept steps over the budget can only be there because min_keep_steps would not let them go.
  if (keptSteps > 0 && keptStepTokens !== null && keptSteps <= minKeepSteps && keptStepTokens > budget) {
    return { kind: 'min-keep-steps', steps: keptSteps, stepTokens: keptStepTokens, budget };
  }
  if (plan.heldByMinKeepSteps) return { kind: 'min-keep-steps', steps: keptSteps, stepTokens: keptStepTokens ?? 0, budget };
  if (plan.noteText !== null) return { kind: 'note', noteTokens: note, tokensAfter: plan.tokensAfter };
  return { kind: 'joined', tokensAfter: plan.tokensAfter };
}

/** One group in the JSON plan. */
export interface PlanGroup {
  readonly kind: GroupKind;
  readonly start: number;
  readonly end: number;
  /** How many messages it holds, in the file's own count (as the note counts them). */
  readonly messages: number;
  readonly tokens: number | null;
  readonly kept: boolean;
  /** Indices inside [start, end) that are not this group's (an earlier note inside a turn, listed as its own orphan). */
  readonly skip?: number[];
  /** The note's final text. */
  readonly text?: string;
  /** Which conversation of the file (0-based); only when the file holds several. */
  readonly conversation?: number;
}

/** One conversation's totals in the JSON plan (only listed when a file holds several). */
export interface PlanConversation {
  readonly conversation: number;
  readonly where: string;
  readonly target: number;
  readonly toolTokens?: number;
  readonly changed: boolean;
  readonly messagesBefore: number;
  readonly messagesAfter: number;
  readonly tokensBefore: number;
  readonly tokensBeforeExact: boolean;
  readonly tokensAfter: number;
  readonly targetMet: boolean;
  readonly removed: PlanTotals['removed'];
  readonly note: { readonly index: number; readonly text: string } | null;
  readonly missReason: Miss | null;
}

/** The JSON plan of one file. */
export interface PlanDocument {
  readonly file: string;
  readonly format: string;
  readonly settings: {
    readonly target: number;
    readonly tokenizer: string;
    readonly minKeepSteps: number;
    readonly note: string | null;
    readonly format: string;
  };
  readonly changed: boolean;
  readonly messagesBefore: number;
  readonly messagesAfter: number;
  readonly tokensBefore: number;
  readonly tokensBeforeExact: boolean;
  readonly tokensAfter: number;
  readonly targetMet: boolean;
  readonly removed: PlanTotals['removed'];
  /** The target the plan was made against (differs from settings.target only with window thresholds). */
  readonly target?: number;
  /** Tokens of the tool schemas taken off the target (window thresholds only). */
  readonly toolTokens?: number;
  /** The note of a single-conversation file; per conversation in `conversations` otherwise. */
  readonly note?: { readonly index: number; readonly text: string } | null;
  readonly missReason?: Miss | null;
  readonly groups: PlanGroup[];
  readonly conversations?: PlanConversation[];
}

/** A group as the JSON plan lists it. */
function planGroup(group: Group, plan: Plan, messages: readonly Message[], note: number | null, conversation: number | null): PlanGroup {
  const isNote = group.kind === 'note';
  const skip: number[] = [];
  if (!isNote && group.indices.length !== group.end - group.start) {
    const own = new Set(group.indices);
    for (let i = group.start; i < group.end; i++) if (!own.has(i)) skip.push(i);
  }
  return {
    kind: group.kind,
    start: group.start,
    end: group.end,
    messages: isNote ? 1 : countOf(messages, group.indices),
    tokens: isNote ? note : group.tokens,
    kept: group.kept,
    ...(skip.length > 0 ? { skip } : {}),
    ...(isNote && plan.noteText !== null ? { text: plan.noteText } : {}),
    ...(conversation !== null ? { conversation } : {}),
  };
}

function conversationSummary(c: ConversationResult, k: number, settings: PlanSettings) {
  const { plan } = c;
  const target = typeof c.target === 'number' ? c.target : settings.target;
  const toolTokens = typeof c.toolTokens === 'number' ? c.toolTokens : 0;
  const totals = planTotals(plan, target, settings.minKeepSteps, settings.counter);
  const note = plan.noteText !== null && plan.noteIndex !== null ? { index: plan.noteIndex, text: plan.noteText } : null;
  return { k, plan, totals, note, where: c.slot.where, target, toolTokens, messages: c.normalized.messages };
}

/**
 * The JSON plan of one file: settings, tokens before and after, whether the target is met, and every group
 * in conversation order as `{kind, start, end, messages, tokens, kept}`. A file holding several conversations
 * lists the groups of all of them, each tagged with `conversation`, plus per-conversation totals in `conversations`.
 * @param result a compaction of the file (made with `exhaustive: true`, so every group is counted)
 * @param settings the settings it was made with
 * @returns a plain object, ready for JSON.stringify
 */
export function planDocument(result: FileResult, settings: PlanSettings): PlanDocument {
  const several = result.conversations.length > 1;
  const parts = result.conversations.map((c, k) => conversationSummary(c, k, settings));
  const groups: PlanGroup[] = [];
  for (const p of parts) for (const g of p.plan.groups) groups.push(planGroup(g, p.plan, p.messages, p.totals.noteTokens, several ? p.k : null));
  const sumOf = (f: (p: (typeof parts)[number]) => number): number => parts.reduce((a, p) => a + f(p), 0);
  const removedTokens = parts.every((p) => p.totals.removed.tokens !== null) ? sumOf((p) => p.totals.removed.tokens ?? 0) : null;
  const base = {
    file: result.file,
    format: result.format,
    settings: {
      target: settings.target,
      tokenizer: settings.tokenizer,
      minKeepSteps: settings.minKeepSteps,
      note: settings.note,
      format: settings.format,
    },
    changed: result.changed,
    messagesBefore: sumOf((p) => p.totals.messagesBefore),
    messagesAfter: sumOf((p) => p.totals.messagesAfter),
    tokensBefore: sumOf((p) => p.plan.tokensBefore),
    tokensBeforeExact: parts.every((p) => p.plan.tokensBeforeExact),
    tokensAfter: sumOf((p) => p.plan.tokensAfter),
    targetMet: parts.every((p) => p.plan.targetMet),
    removed: {
      messages: sumOf((p) => p.totals.removed.messages),
      tokens: removedTokens,
      turns: sumOf((p) => p.totals.removed.turns),
      steps: sumOf((p) => p.totals.removed.steps),
      orphans: sumOf((p) => p.totals.removed.orphans),
    },
  };
  if (!several) {
    const only = parts[0];
    return {
      ...base,
      target: only?.target ?? settings.target,
      ...(only !== undefined && only.toolTokens > 0 ? { toolTokens: only.toolTokens } : {}),
      note: only?.note ?? null,
      missReason: only?.totals.miss ?? null,
      groups,
    };
  }
  return {
    ...base,
    groups,
    conversations: parts.map((p) => ({
      conversation: p.k,
      where: p.where,
      target: p.target,
      ...(p.toolTokens > 0 ? { toolTokens: p.toolTokens } : {}),
      changed: p.plan.changed,
      messagesBefore: p.totals.messagesBefore,
      messagesAfter: p.totals.messagesAfter,
      tokensBefore: p.plan.tokensBefore,
      tokensBeforeExact: p.plan.tokensBeforeExact,
      tokensAfter: p.plan.tokensAfter,
      targetMet: p.plan.targetMet,
      removed: p.totals.removed,
      note: p.note,
      missReason: p.totals.miss,
    })),
  };
}
