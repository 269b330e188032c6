import type { Group, GroupKind, Plan } from '../core/compact.js';
import { renderMessage, textContent } from '../core/render.js';
import type { Message, TokenCounter } from '../core/types.js';
import type { Normalized } from '../formats/types.js';
import type { ConversationResult, FileResult } from '../pipeline.js';

/**
 * What a compaction plan says, in numbers: the JSON plan of `--dry-run --json` / `--report`, the totals the
 * dry-run view prints, the message counts and the reason for a missed target every summary line uses. All read
 * the same definitions, so the text, the records and the JSON never disagree.
 */

/** Context-window thresholds a plan was made with (`--context-window`), in tokens and as typed shares. */
export interface PlanWindow {
  readonly contextWindow: number;
  /** The shares as numbers (0.7), for the plan's settings and the text. */
  readonly compactAt: number;
  readonly compactTo: number;
  /** Sizes from here on are compacted: ceil(window × compact-at). */
  readonly trigger: number;
  /** What they are compacted to: floor(window × compact-to). */
  readonly target: number;
}

/** The window settings of a run as the CLI resolves them (tokens, exact fractions), or null. */
export function planWindowOf(
  window: { readonly tokens: number; readonly compactAt: { readonly value: number }; readonly compactTo: { readonly value: number }; readonly trigger: number; readonly target: number } | null,
): PlanWindow | null {
  if (window === null) return null;
  return { contextWindow: window.tokens, compactAt: window.compactAt.value, compactTo: window.compactTo.value, trigger: window.trigger, target: window.target };
}

/** Settings a plan was made with, as the plan document records them. */
export interface PlanSettings {
  /** The run's token target: --target, or context window × compact-to. */
  readonly target: number;
  readonly tokenizer: string;
  readonly minKeepSteps: number;
  /** The active note template, or null when notes are off. */
  readonly note: string | null;
  /** The format asked for (`auto` or a name). */
  readonly format: string;
  /** When given, the note's own tokens are measured, and so are groups a missed target's reason needs. */
  readonly counter?: TokenCounter;
  /** The context-window thresholds, when the run used them instead of a fixed target. */
  readonly window?: PlanWindow | null;
}

/** A conversation as planned: the parts of a pipeline result that what is said about it reads. */
export type Planned = Pick<ConversationResult, 'plan' | 'normalized' | 'target' | 'toolTokens'>;

/** Why a plan misses its target. */
export type Miss =
  /** The tool schemas alone take the whole share of the window compaction aims at (window thresholds only). */
  | { readonly kind: 'tools'; readonly toolTokens: number; readonly target: number }
  | { readonly kind: 'protected'; readonly protectedTokens: number }
  | { readonly kind: 'min-keep-steps'; readonly steps: number; readonly stepTokens: number; readonly budget: number }
  /** Only earlier notes could go, and a new note would take their place, so nothing changes. */
  | { readonly kind: 'earlier-notes'; readonly tokensAfter: number }
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
 * @param itemsOf when given, a message that stands for no item (instructions held outside the list) counts 0
 */
export function countOf(messages: readonly Message[], indices: readonly number[], itemsOf?: Normalized['itemsOf']): number {
  let n = 0;
  for (const i of indices) {
    if (itemsOf !== undefined && (itemsOf[i]?.length ?? 0) === 0) continue;
    n += messages[i]?.weight ?? 1;
  }
  return n;
}

/** Message counts of one conversation, in the file's own terms. */
export interface MessageCounts {
  readonly before: number;
  readonly after: number;
  readonly removed: number;
}

/**
 * The one definition of "messages" every report uses (summary line, batch record, JSON plan, dry run): items of
 * the file's list as the note's `{num_removed}` counts them, so a split Claude Code message counts its lines and
 * instructions held outside the list (Anthropic `system`, Gemini `systemInstruction`, Responses `instructions`)
 * count none. After = what stays, plus one for the note.
 */
export function messageCounts(c: Planned): MessageCounts {
  const { messages, itemsOf } = c.normalized;
  const all = messages.map((_, i) => i);
  const before = countOf(messages, all, itemsOf);
  const removed = countOf(messages, c.plan.removed, itemsOf);
  return { before, after: before - removed + (c.plan.noteText !== null ? 1 : 0), removed };
}

/** Where a group sits in the file's list. */
export interface ItemSpan {
  /** Its first item; 0 for a group that holds no item. */
  readonly start: number;
  /** Its last item + 1; equal to `start` for a group that holds no item. */
  readonly end: number;
  /** Items inside [start, end) that are not its own (an earlier note inside a turn, another message's line). */
  readonly skip: readonly number[];
  /** Whether some of its messages are instructions held outside the list, which stand for no item. */
  readonly outside: boolean;
}

/**
 * The item span of a group: items are positions in the file's list (JSONL lines, array elements), and a message
 * stands for the items `itemsOf` gives it (several for a split Claude Code message or a Responses run, none for
 * instructions held outside the list). The span covers the items of the group's message range [start, end)
 * (a turn's range runs to the next turn, an earlier note inside it included); `skip` lists those not its own.
 * @param group the group's message range and its own messages
 */
export function itemSpan(itemsOf: Normalized['itemsOf'], group: Pick<Group, 'start' | 'end' | 'indices'>): ItemSpan {
  const own = new Set<number>();
  let outside = false;
  for (const m of group.indices) {
    const items = itemsOf[m] ?? [];
    if (items.length === 0) outside = true;
    for (const k of items) own.add(k);
  }
  let start = Infinity;
  let end = -Infinity;
  for (let m = group.start; m < group.end; m++) {
    for (const k of itemsOf[m] ?? []) {
      start = Math.min(start, k);
      end = Math.max(end, k + 1);
    }
  }
  if (start === Infinity) return { start: 0, end: 0, skip: [], outside };
  const skip: number[] = [];
  if (own.size !== end - start) for (let k = start; k < end; k++) if (!own.has(k)) skip.push(k);
  return { start, end, skip, outside };
}

/**
 * Where the note lands in the written list: the number of items written before it (kept items and items that
 * belong to no message), as `writeSlot` places it before the first item of the kept message it precedes.
 * @returns the item index in the output, or null without a note
 */
export function noteItemIndex(c: Planned): number | null {
  const { plan, normalized } = c;
  if (plan.noteText === null || plan.noteIndex === null) return null;
  const written = new Set<number>(normalized.pinned ?? []);
  for (const m of plan.kept) for (const k of normalized.itemsOf[m] ?? []) written.add(k);
  let before = Infinity;
  for (let pos = plan.noteIndex; pos < plan.kept.length; pos++) {
    const items = normalized.itemsOf[plan.kept[pos] as number] ?? [];
    if (items.length > 0) {
      before = Math.min(...items);
      break;
    }
  }
  let index = 0;
  for (const k of written) if (k < before) index++;
  return index;
}

/**
 * The note's own cost, measured alone.
 * @returns null when there is no note or no counter to measure it with
 */
export function noteTokens(plan: Plan, counter: TokenCounter | undefined): number | null {
  if (plan.noteText === null || counter === undefined) return null;
  return counter.measure([renderMessage({ role: 'user', content: textContent(plan.noteText) })]);
}

/** What `planTotals` needs besides the conversation. */
export interface TotalsSettings {
  readonly minKeepSteps: number;
  /** Measures the note, and the groups a missed target's reason needs when the decision did not count them. */
  readonly counter?: TokenCounter | undefined;
  readonly window?: PlanWindow | null | undefined;
}

/**
 * Totals of one conversation's plan and, when it misses its target, why.
 * @param c the conversation and its decision (made with `exhaustive` for every group's tokens)
 * @param settings min_keep_steps, a counter, the window thresholds
 */
export function planTotals(c: Planned, settings: TotalsSettings): PlanTotals {
  const { plan } = c;
  const groups = plan.groups;
  const of = (kind: GroupKind, kept: boolean): Group[] => groups.filter((g) => g.kind === kind && g.kept === kept);
  const removedGroups = groups.filter((g) => !g.kept && g.kind !== 'note');
  const note = noteTokens(plan, settings.counter);
  const counts = messageCounts(c);
  return {
    messagesBefore: counts.before,
    messagesAfter: counts.after,
    protectedTokens: plan.protectedTokens ?? sumTokens(groups.filter(isProtected)),
    keptTurnTokens: sumTokens(of('turn', true)),
    keptStepTokens: sumTokens(of('step', true)),
    keptOtherTokens: sumTokens(of('orphan', true)),
    noteTokens: note,
    removed: {
      messages: counts.removed,
      tokens: sumTokens(removedGroups),
      turns: of('turn', false).length,
      steps: of('step', false).length,
      orphans: of('orphan', false).length,
    },
    miss: missOf(c, settings, note),
  };
}

/** The leading instructions and the current task: never removed. */
function isProtected(g: Group): boolean {
  return g.kind === 'system' || g.kind === 'task';
}

/**
 * A group's tokens, exactly: as the decision counted them, or measured now. A plan that did not count every
 * group (tokensBefore not exact) may have stopped counting a step early, so its kept steps are measured again.
 * @returns null when it cannot be known without a counter
 */
function exactTokensOf(c: Planned, g: Group, counter: TokenCounter | undefined): number | null {
  if (g.tokens !== null && (c.plan.tokensBeforeExact || counter === undefined)) return g.tokens;
  if (g.indices.length === 0) return 0;
  if (counter === undefined) return null;
  return counter.measure(g.indices.map((i) => renderMessage(c.normalized.messages[i] as Message)));
}

/**
 * The first reason that explains a missed target, or null when it is met: the tool schemas, the protected
 * part, min_keep_steps, earlier notes, the note, or joined counting. Counts the decision skipped (a plain run
 * stops counting early) are measured here, so every mode gives the same reason with the same numbers.
 */
export function missOf(c: Planned, settings: TotalsSettings, note: number | null = noteTokens(c.plan, settings.counter)): Miss | null {
  const { plan } = c;
  if (plan.targetMet) return null;
  const window = settings.window ?? null;
  if (window !== null && c.toolTokens > 0 && c.toolTokens >= window.target) return { kind: 'tools', toolTokens: c.toolTokens, target: window.target };
  const target = c.target;
  let protectedTokens = plan.protectedTokens;
  if (protectedTokens === null && settings.counter !== undefined) {
    const indices = plan.groups.filter(isProtected).flatMap((g) => g.indices);
    protectedTokens = indices.length === 0 ? 0 : settings.counter.measure(indices.map((i) => renderMessage(c.normalized.messages[i] as Message)));
  }
  if (protectedTokens !== null && protectedTokens > target) return { kind: 'protected', protectedTokens };
  const budget = target - (protectedTokens ?? 0);
  const keptSteps = plan.groups.filter((g) => g.kind === 'step' && g.kept);
  let stepTokens: number | null = 0;
  for (const g of keptSteps) {
    const t = exactTokensOf(c, g, settings.counter);
    stepTokens = t === null || stepTokens === null ? null : stepTokens + t;
  }
  // Kept steps over the budget can only be there because min_keep_steps would not let them go.
  const held = keptSteps.length > 0 && stepTokens !== null && keptSteps.length <= settings.minKeepSteps && stepTokens > budget;
  if (held || plan.heldByMinKeepSteps) return { kind: 'min-keep-steps', steps: keptSteps.length, stepTokens: stepTokens ?? 0, budget };
  if (plan.unchanged === 'only-notes') return { kind: 'earlier-notes', tokensAfter: plan.tokensAfter };
  if (plan.noteText !== null) return { kind: 'note', noteTokens: note, tokensAfter: plan.tokensAfter };
  return { kind: 'joined', tokensAfter: plan.tokensAfter };
}

/** What the phrase of a missed target says besides the reason's own numbers. */
export interface MissContext {
  readonly minKeepSteps: number;
  /** Whether the conversation has leading instructions and a current task (the protected part). */
  readonly instructions: boolean;
  readonly task: boolean;
  /** The target the conversation was planned against, and the tool schemas' tokens taken off it. */
  readonly target: number;
  readonly toolTokens: number;
}

/** The context a missed target is phrased in. */
export function missContextOf(c: Planned, minKeepSteps: number): MissContext {
  return {
    minKeepSteps,
    instructions: c.plan.groups.some((g) => g.kind === 'system'),
    task: c.plan.groups.some((g) => g.kind === 'task'),
    target: c.target,
    toolTokens: c.toolTokens,
  };
}

/** Whether a conversation stayed below the window's compact-at threshold (so it was left alone, target met). */
export function isBelowThreshold(c: Planned, window: PlanWindow | null | undefined): boolean {
  return window != null && c.plan.unchanged === 'fits' && c.plan.tokensBefore + c.toolTokens < window.trigger;
}

/** One group in the JSON plan. */
export interface PlanGroup {
  readonly kind: GroupKind;
  /**
   * Item positions in the file's list (JSONL lines, array elements), end exclusive: the group's first item and
   * its last + 1. For the note, the position it is written at in the output. A group held entirely outside the
   * list (instructions in a request's `system`) has start = end = 0.
   */
  readonly start: number;
  readonly end: number;
  /** How many messages it holds, in the file's own count (as the note counts them). */
  readonly messages: number;
  readonly tokens: number | null;
  readonly kept: boolean;
  /** Items inside [start, end) that are not this group's (an earlier note inside a turn, listed as its own orphan). */
  readonly skip?: number[];
  /** Set on leading instructions held outside the message list: they take no position in it and count no message. */
  readonly outside?: true;
  /** The note's final text. */
  readonly text?: string;
  /** Which conversation of the file (0-based); only when the file holds several. */
  readonly conversation?: number;
}

/** The note of a conversation: where it is written in the output list, and its text. */
export interface PlanNote {
  readonly index: number;
  readonly text: string;
}

/** What a plan says of a file or of one of its conversations: the outcome in counts. */
interface PlanOutcome {
  readonly changed: boolean;
  readonly messagesBefore: number;
  readonly messagesAfter: number;
  readonly tokensBefore: number;
  readonly tokensBeforeExact: boolean;
  readonly tokensAfter: number;
  readonly targetMet: boolean;
  readonly removed: PlanTotals['removed'];
}

/** One conversation's totals in the JSON plan (only listed when a file holds several). */
export interface PlanConversation extends PlanOutcome {
  readonly conversation: number;
  readonly where: string;
  readonly target: number;
  readonly toolTokens?: number;
  readonly note: PlanNote | null;
  readonly missReason: Miss | null;
}

/** The settings part of a plan document. */
export interface PlanDocumentSettings {
  /** The fixed --target, or null when the context window sets it. */
  readonly target: number | null;
  readonly tokenizer: string;
  readonly minKeepSteps: number;
  readonly note: string | null;
  readonly format: string;
  /** With --context-window only: the window and its two shares. */
  readonly contextWindow?: number;
  readonly compactAt?: number;
  readonly compactTo?: number;
}

/** The JSON plan of one file. */
export interface PlanDocument extends PlanOutcome {
  readonly file: string;
  readonly format: string;
  readonly settings: PlanDocumentSettings;
  /**
   * The target the conversation was planned against: the fixed target, or with window thresholds window ×
   * compact-to less the tool schemas (below the compact-at threshold: the largest size that stays below it).
   */
  readonly target?: number;
  /** Tokens of the tool schemas taken off the target (window thresholds only). */
  readonly toolTokens?: number;
  /** The note of a single-conversation file; per conversation in `conversations` otherwise. */
  readonly note?: PlanNote | null;
  readonly missReason?: Miss | null;
  readonly groups: PlanGroup[];
  readonly conversations?: PlanConversation[];
}

/** A group as the JSON plan lists it, in item positions. */
function planGroup(group: Group, c: Planned, note: { index: number | null; tokens: number | null }, conversation: number | null): PlanGroup {
  const { plan, normalized } = c;
  const isNote = group.kind === 'note';
  const span = isNote ? null : itemSpan(normalized.itemsOf, group);
  const at = note.index ?? 0;
  return {
    kind: group.kind,
    start: span === null ? at : span.start,
    end: span === null ? at + 1 : span.end,
    messages: isNote ? 1 : countOf(normalized.messages, group.indices, normalized.itemsOf),
    tokens: isNote ? note.tokens : group.tokens,
    kept: group.kept,
    ...(span !== null && span.skip.length > 0 ? { skip: [...span.skip] } : {}),
    ...(span?.outside === true ? { outside: true as const } : {}),
    ...(isNote && plan.noteText !== null ? { text: plan.noteText } : {}),
    ...(conversation !== null ? { conversation } : {}),
  };
}

function conversationSummary(c: ConversationResult, k: number, settings: PlanSettings) {
  const { plan } = c;
  const totals = planTotals(c, { minKeepSteps: settings.minKeepSteps, counter: settings.counter, window: settings.window });
  const index = noteItemIndex(c);
  const note = plan.noteText !== null && index !== null ? { index, text: plan.noteText } : null;
  return { k, c, plan, totals, note, index, where: c.slot.where, target: c.target, toolTokens: c.toolTokens };
}

/** The settings a plan records: the command line's meaning, the window's shares when it was used. */
function documentSettings(settings: PlanSettings): PlanDocumentSettings {
  const window = settings.window ?? null;
  const base = { target: window === null ? settings.target : null, tokenizer: settings.tokenizer, minKeepSteps: settings.minKeepSteps, note: settings.note, format: settings.format };
  return window === null ? base : { ...base, contextWindow: window.contextWindow, compactAt: window.compactAt, compactTo: window.compactTo };
}

/**
 * The JSON plan of one file: settings, tokens before and after, whether the target is met, and every group
 * in conversation order as `{kind, start, end, messages, tokens, kept}` in item positions of the file's list.
 * A file holding several conversations lists the groups of all of them, each tagged with `conversation`, plus
 * per-conversation totals in `conversations`.
 * @param result a compaction of the file (made with `exhaustive: true`, so every group is counted)
 * @param settings the settings it was made with
 * @returns a plain object, ready for JSON.stringify
 */
export function planDocument(result: FileResult, settings: PlanSettings): PlanDocument {
  const several = result.conversations.length > 1;
  const parts = result.conversations.map((c, k) => conversationSummary(c, k, settings));
  const groups: PlanGroup[] = [];
  for (const p of parts) {
    for (const g of p.plan.groups) groups.push(planGroup(g, p.c, { index: p.index, tokens: p.totals.noteTokens }, several ? p.k : null));
  }
  const sumOf = (f: (p: (typeof parts)[number]) => number): number => parts.reduce((a, p) => a + f(p), 0);
  const removedTokens = parts.every((p) => p.totals.removed.tokens !== null) ? sumOf((p) => p.totals.removed.tokens ?? 0) : null;
  const base = {
    file: result.file,
    format: result.format,
    settings: documentSettings(settings),
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
