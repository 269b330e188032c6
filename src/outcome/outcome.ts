import type { Group, Plan } from '../core/compact.js';
import { analyze, isEarlierNoteAt } from '../core/groups.js';
import { renderMessage } from '../core/render.js';
import { elementReader, indexList } from '../core/lazy-list.js';
import type { Message, TokenCounter } from '../core/types.js';
import { itemsReader, type Normalized } from '../formats/types.js';
import { beforeFigure } from './before.js';
import { groupTokens, noteTokensOf, planTotals, tokenFigures, type TokenFigures } from './figures.js';
import type { MessageCounts, Miss, Planned, PlanTotals, TokenFigure } from './types.js';

export type { MessageCounts, Miss, OutputEntryShape, Planned, PlanTotals, TokenFigure } from './types.js';
import { inventoryOf, type Inventory } from './forgotten.js';

/**
 * Everything any output says about one conversation's decision, worked out once while the counter is at hand: message
 * counts in the file's own terms, where the note is written and what it costs, token sums by kind of group, and why
 * a target was missed. Summary lines, dry runs, JSON plans and reports read this and never measure.
 */

/** The context-window thresholds a conversation was planned against, in tokens. */
export interface OutcomeWindow {
  /** Sizes from here on are compacted. */
  readonly trigger: number;
  /** What they are compacted to. */
  readonly target: number;
}

/** The note of a conversation: where it is written in the output list, and its text. */
export interface PlanNote {
  readonly index: number;
  readonly text: string;
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

/** Why a message that belongs to no turn or step goes: an earlier note, after the task, before the first turn, elsewhere. */
export type OrphanKind = 'earlier-note' | 'after-task' | 'before-first-turn' | 'no-group';

/** What every output shows of one conversation. */
export interface ConversationOutcome {
  /**
   * The conversation's tokens before compaction: exact when the decision counted them all or when exact counting was
   * asked for (a small file, --exact), otherwise an estimate (see `estimateBefore` in src/outcome/before.ts).
   */
  readonly before: TokenFigure;
  /**
   * The token figures every output shows, in the input's terms, that add up: before = after + what pruning and
   * offloading saved + what was removed − the note (src/outcome/figures.ts).
   */
  readonly figures: TokenFigures;
  /**
   * For each of the plan's groups, in order, its tokens as outputs show them: a kept group as the output holds it, a
   * removed one as it was read (null where the decision did not count it).
   */
  readonly groupTokens: readonly (number | null)[];
  /** For each of the plan's groups, in order: why it goes when it is a removed orphan, else null. */
  readonly orphans: readonly (OrphanKind | null)[];
  readonly counts: MessageCounts;
  readonly totals: PlanTotals;
  /** Why the target was missed, or null when it was met: `totals.miss`, without listing the groups to get it. */
  readonly miss: Miss | null;
  /** The note's place in the written list and its text, or null without a note. */
  readonly note: PlanNote | null;
  readonly missContext: MissContext;
  /** Whether it stayed below the window's compact-at threshold (left alone, target met). */
  readonly belowThreshold: boolean;
  /**
   * The identifiers the compaction forgets and those it leaves recoverable from the offload store (see
   * src/outcome/forgotten.ts); null unless the settings asked for them (`inventory`): a plain run never pays for it.
   */
  readonly inventory: Inventory | null;
}

/** What an outcome is worked out with besides the conversation. */
export interface OutcomeSettings {
  readonly minKeepSteps: number;
  readonly counter: TokenCounter;
  readonly window?: OutcomeWindow | null | undefined;
  /** Count the tokens before exactly where the decision stopped early; otherwise they are estimated. */
  readonly exactBefore?: boolean;
  /** Work out what the compaction forgets (dry runs, plans, --json, --stat); left out, `inventory` is null. */
  readonly inventory?: boolean;
}

/**
 * The outcome of one planned conversation.
 * @param c the conversation and its decision
 * @param settings min_keep_steps, the counter the decision was made with, the window thresholds
 */
export function outcomeOf(c: Planned, settings: OutcomeSettings): ConversationOutcome {
  const index = notePlacement(c.plan, c.normalized);
  const note = noteTokensOf(c.plan, settings.counter, c.output);
  const counts = messageCounts(c);
  let before: TokenFigure | null = null;
  let miss: Miss | null | undefined;
  // Listed from the plan's groups, which a summary line does not need: a long file's groups are a list of their own
  // (about 50 MB at a million messages), so they are laid out only for the outputs that show them.
  let totals: PlanTotals | undefined;
  let orphans: readonly (OrphanKind | null)[] | undefined;
  let missContext: MissContext | undefined;
  let inventory: Inventory | null | undefined;
  let figures: TokenFigures | undefined;
  let tokensOfGroups: readonly (number | null)[] | undefined;
  return {
    // Worked out the first time an output reads it: counting the rest of a conversation costs as much as deciding.
    get before(): TokenFigure {
      before ??= beforeFigure(c, settings);
      return before;
    },
    get figures(): TokenFigures {
      figures ??= tokenFigures(c, this.before, note, settings.counter);
      return figures;
    },
    get groupTokens(): readonly (number | null)[] {
      tokensOfGroups ??= groupTokens(c, settings.counter);
      return tokensOfGroups;
    },
    get orphans(): readonly (OrphanKind | null)[] {
      orphans ??= orphanKinds(c);
      return orphans;
    },
    counts,
    get miss(): Miss | null {
      if (miss === undefined) miss = missOf(c, settings, note);
      return miss;
    },
    get totals(): PlanTotals {
      totals ??= planTotals(c, counts, note, this.miss, this.groupTokens, () => this.figures.removed);
      return totals;
    },
    note: c.plan.noteText !== null && index !== null ? { index, text: c.plan.noteText } : outputNote(c),
    get missContext(): MissContext {
      missContext ??= missContextOf(c, settings.minKeepSteps);
      return missContext;
    },
    belowThreshold: isBelowThreshold(c, settings.window),
    // Worked out when first read, and only when asked for: it reads every removed message's text.
    get inventory(): Inventory | null {
      if (inventory === undefined) inventory = settings.inventory === true ? conversationInventory(c) : null;
      return inventory;
    },
  };
}

/** What a planned conversation forgets: its removed and pruned text against what it keeps and the note. */
function conversationInventory(c: Planned): Inventory {
  const { plan, normalized } = c;
  const itemsAt = itemsReader(normalized.itemsOf);
  return inventoryOf({
    original: c.input ?? normalized.messages,
    decided: normalized.messages,
    kept: plan.kept,
    removed: plan.removed,
    replaced: (c.pruned ?? []).map((p) => p.message),
    offloaded: (c.offloaded ?? []).map((p) => p.message),
    added: [plan.noteText, ...(c.summarized?.summaries ?? []).map((s) => s.text)],
    positionOf: (m) => firstItem(itemsAt(m), m),
  });
}

/** A message's first item in the file's list (of its items); its own index when it stands for none. */
function firstItem(items: readonly number[], m: number): number {
  let first = Infinity;
  for (const k of items) first = Math.min(first, k);
  return first === Infinity ? m : first;
}

/** Why each removed orphan goes, from the conversation's structure as the decision saw it. */
function orphanKinds(c: Planned): (OrphanKind | null)[] {
  const { groups } = c.plan;
  const isRemovedOrphan = (g: Group): boolean => g.kind === 'orphan' && !g.kept;
  if (!groups.some(isRemovedOrphan)) return groups.map(() => null);
  const { messages } = c.normalized;
  const structure = analyze(messages);
  const firstTurn = structure.turns[0]?.[0] ?? structure.task ?? Infinity;
  return groups.map((g): OrphanKind | null => {
    if (!isRemovedOrphan(g)) return null;
    if (isEarlierNoteAt(messages, g.start, structure)) return 'earlier-note';
    if (structure.task !== null && g.start > structure.task) return 'after-task';
    return g.start < firstTurn ? 'before-first-turn' : 'no-group';
  });
}

/**
 * How many messages these are in the file's own count, the one the note's `{num_removed}` uses: a message
 * stands for `weight` items (e.g. the several lines of one split Claude Code message), 1 by default.
 * @param itemsOf when given, a message that stands for no item (instructions held outside the list) counts 0
 */
export function countOf(
  messages: readonly Message[],
  indices: readonly number[],
  itemsOf?: Normalized['itemsOf'],
): number {
  const itemsAt = itemsOf === undefined ? undefined : itemsReader(itemsOf);
  let n = 0;
  for (const i of indices) {
    if (itemsAt !== undefined && itemsAt(i).length === 0) continue;
    n += messages[i]?.weight ?? 1;
  }
  return n;
}

/**
 * The one definition of "messages" every report uses (summary line, batch record, JSON plan, dry run): items of
 * the file's list as the note's `{num_removed}` counts them, so a split Claude Code message counts its lines and
 * instructions held outside the list (Anthropic `system`, Gemini `systemInstruction`, Responses `instructions`)
 * count none. After = what stays, plus one for the note and one for each summary the output holds.
 */
function messageCounts(c: Planned): MessageCounts {
  const { messages, itemsOf } = c.normalized;
  const all = indexList(messages.length);
  const before = countOf(messages, all, itemsOf);
  // Kept and removed are every message: with whole weights the removed are the whole less the kept, so a long
  // file's removed indices (nearly all of them) are never listed. A sum of fractions is added up as it is listed.
  const removed = wholeWeights(messages)
    ? before - countOf(messages, c.plan.kept, itemsOf)
    : countOf(messages, c.plan.removed, itemsOf);
  if (c.output !== undefined) {
    // What the file holds: the kept input messages, each summary and the note.
    const kept = countOf(
      messages,
      c.output.flatMap((e) => ('input' in e ? [e.input] : [])),
      itemsOf,
    );
    return { before, after: kept + c.output.filter((e) => !('input' in e)).length, removed: before - kept };
  }
  return { before, after: before - removed + (c.plan.noteText !== null ? 1 : 0), removed };
}

/** Whether every message weighs a whole number of items (read through the list's reader: it may be lazy). */
function wholeWeights(messages: readonly Message[]): boolean {
  const at = elementReader(messages);
  for (let i = 0; i < messages.length; i++) if (!Number.isInteger(at(i).weight ?? 1)) return false;
  return true;
}

/** The window's note in a summarizing chain's output: its text and the index of its item in the written list. */
function outputNote(c: Planned): PlanNote | null {
  if (c.output === undefined) return null;
  const itemsAt = itemsReader(c.normalized.itemsOf);
  let index = 0;
  for (const e of c.output) {
    if ('note' in e) return { index, text: e.note };
    index += 'input' in e ? itemsAt(e.input).length : 1;
  }
  return null;
}

/** The items a plan writes, each once, in the file's order: those of its kept messages and those of no message. */
export function writtenItems(plan: Pick<Plan, 'kept'>, normalized: Pick<Normalized, 'itemsOf' | 'pinned'>): number[] {
  const written = new Set<number>(normalized.pinned ?? []);
  const itemsAt = itemsReader(normalized.itemsOf);
  for (const m of plan.kept) for (const k of itemsAt(m)) written.add(k);
  return [...written].sort((a, b) => a - b);
}

/** The items these messages stand for, each once, in the file's order. */
export function itemsOfAll(itemsOf: Normalized['itemsOf'], messages: readonly number[]): number[] {
  const itemsAt = itemsReader(itemsOf);
  return [...new Set(messages.flatMap((m) => [...itemsAt(m)]))].sort((a, b) => a - b);
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
  const itemsAt = itemsReader(itemsOf);
  const own = new Set<number>();
  let outside = false;
  for (const m of group.indices) {
    const items = itemsAt(m);
    if (items.length === 0) outside = true;
    for (const k of items) own.add(k);
  }
  let start = Infinity;
  let end = -Infinity;
  for (let m = group.start; m < group.end; m++) {
    for (const k of itemsAt(m)) {
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
 * The input item the note is written before: the first item of the first kept message from the note's place on
 * that stands for an item; Infinity when the note goes last (or there is none). The writer and every report use
 * this one rule.
 */
export function noteBeforeItem(plan: Plan, normalized: Pick<Normalized, 'itemsOf'>): number {
  if (plan.noteText === null || plan.noteIndex === null) return Infinity;
  const itemsAt = itemsReader(normalized.itemsOf);
  for (let pos = plan.noteIndex; pos < plan.kept.length; pos++) {
    const items = itemsAt(plan.kept[pos] as number);
    if (items.length > 0) return Math.min(...items);
  }
  return Infinity;
}

/**
 * Where the note lands in the written list: the number of items written before it (kept items and items that
 * belong to no message).
 * @returns the item index in the output, or null without a note
 */
export function notePlacement(plan: Plan, normalized: Pick<Normalized, 'itemsOf' | 'pinned'>): number | null {
  if (plan.noteText === null || plan.noteIndex === null) return null;
  const written = writtenItems(plan, normalized);
  const before = noteBeforeItem(plan, normalized);
  let index = 0;
  for (const k of written) if (k < before) index++;
  return index;
}

/** The leading instructions and the current task: never removed. */
function isProtected(g: Group): boolean {
  return g.kind === 'system' || g.kind === 'task';
}

/**
 * A group's tokens, exactly: as the decision counted them, or measured now. A plan that did not count every
 * group (tokensBefore not exact) may have stopped counting a step early, so its kept steps are measured again.
 */
function exactTokensOf(c: Planned, g: Group, counter: TokenCounter): number {
  if (g.tokens !== null && (c.groupsExact ?? c.plan.tokensBeforeExact)) return g.tokens;
  if (g.indices.length === 0) return 0;
  const messages = c.measured ?? c.normalized.messages;
  return counter.measure(g.indices.map((i) => renderMessage(messages[i] as Message)));
}

/**
 * The first reason that explains a missed target, or null when it is met: the tool schemas, the protected
 * part, min_keep_steps, earlier notes, the note, or joined counting. Counts the decision skipped (a plain run
 * stops counting early) are measured here, so every mode gives the same reason with the same numbers.
 */
function missOf(c: Planned, settings: OutcomeSettings, note: number | null): Miss | null {
  const { plan } = c;
  if (plan.targetMet) return null;
  if (c.leftBelowTrigger === true) return { kind: 'below-trigger', tokensAfter: plan.tokensAfter };
  if (c.strategies !== undefined && !c.strategies.includes('window')) {
    if (c.strategies.includes('summarize')) {
      const failed = (c as { summarized?: { failure: unknown } }).summarized?.failure;
      return {
        kind: failed !== undefined && failed !== null ? 'summary-failed' : 'summary-floor',
        tokensAfter: plan.tokensAfter,
      };
    }
    return {
      kind: c.strategies.includes('prune') ? 'nothing-to-prune' : 'nothing-to-offload',
      tokensAfter: plan.tokensAfter,
    };
  }
  const window = settings.window ?? null;
  if (window !== null && c.toolTokens > 0 && c.toolTokens >= window.target)
    return { kind: 'tools', toolTokens: c.toolTokens, target: window.target };
  const target = c.target;
  let protectedTokens = plan.protectedTokens;
  if (protectedTokens === null) {
    const indices = plan.groups.filter(isProtected).flatMap((g) => g.indices);
    protectedTokens =
      indices.length === 0
        ? 0
        : settings.counter.measure(indices.map((i) => renderMessage(c.normalized.messages[i] as Message)));
  }
  if (protectedTokens > target) return { kind: 'protected', protectedTokens };
  const budget = target - protectedTokens;
  const keptSteps = plan.groups.filter((g) => g.kind === 'step' && g.kept);
  let stepTokens = 0;
  for (const g of keptSteps) stepTokens += exactTokensOf(c, g, settings.counter);
  // Kept steps over the budget can only be there because min_keep_steps would not let them go.
  const held = keptSteps.length > 0 && keptSteps.length <= settings.minKeepSteps && stepTokens > budget;
  if (held || plan.heldByMinKeepSteps) return { kind: 'min-keep-steps', steps: keptSteps.length, stepTokens, budget };
  if (plan.unchanged === 'only-notes') return { kind: 'earlier-notes', tokensAfter: plan.tokensAfter };
  if (plan.noteText !== null) return { kind: 'note', noteTokens: note, tokensAfter: plan.tokensAfter };
  return { kind: 'joined', tokensAfter: plan.tokensAfter };
}

/** The context a missed target is phrased in. */
function missContextOf(c: Planned, minKeepSteps: number): MissContext {
  return {
    minKeepSteps,
    instructions: c.plan.groups.some((g) => g.kind === 'system'),
    task: c.plan.groups.some((g) => g.kind === 'task'),
    target: c.target,
    toolTokens: c.toolTokens,
  };
}

/** Whether a conversation stayed below the window's compact-at threshold (so it was left alone, target met). */
function isBelowThreshold(c: Planned, window: OutcomeWindow | null | undefined): boolean {
  return window != null && c.plan.unchanged === 'fits' && c.plan.tokensBefore + c.toolTokens < window.trigger;
}
