// The rules this module decides by, numbered and explained: docs/strategy.md (in the repository root).
import { analyze, groupsOf, isEarlierNoteAt, stepMessages, type Structure } from './groups.js';
import { knownOf } from './growing.js';
import { Meter, range, weightOf } from './meter.js';
import { DEFAULT_NOTE_TEMPLATE, formatNote, noteMessage } from './note.js';
import { renderMessage } from './render.js';
import type { Message, TokenCounter } from './types.js';

/** Settings of one compaction. */
export interface CompactOptions {
  /** The token target the result should come in under (a goal, not a promise). */
  readonly target: number;
  /** The fewest newest steps of the current task to keep even when they exceed the budget. Default 1. */
  readonly minKeepSteps?: number;
  /** The note template; null or '' removes silently. Default: the standard note. */
  readonly note?: string | null;
  /** Measure every group, even those the decision does not need (for dry runs and reports). */
  readonly exhaustive?: boolean;
}

export type GroupKind = 'system' | 'turn' | 'task' | 'step' | 'orphan' | 'note';

/** One group of the conversation and what the decision did with it. */
export interface Group {
  readonly kind: GroupKind;
  /** Message indices in the input, end exclusive; for the note, the output index it is inserted at. */
  readonly start: number;
  readonly end: number;
  /** The input indices of the messages it holds (a turn skips an earlier note inside it). */
  readonly indices: readonly number[];
  /** Its token cost, or null when the decision did not need to count it. */
  readonly tokens: number | null;
  readonly kept: boolean;
}

/** Why nothing changed, when nothing changed. */
export type Unchanged = 'fits' | 'nothing-removed' | 'only-notes';

/** The decision for one conversation. */
export interface Plan {
  readonly changed: boolean;
  readonly unchanged: Unchanged | null;
  /** Input indices kept, in output order (which is input order). */
  readonly kept: readonly number[];
  /** Input indices removed, ascending. */
  readonly removed: readonly number[];
  /** Items removed and kept, each message counting its weight: what the note's `{num_removed}` says. */
  readonly removedCount: number;
  readonly keptCount: number;
  /** Where the note goes among the output messages (0-based), or null for no note. */
  readonly noteIndex: number | null;
  readonly noteText: string | null;
  /** Tokens of the whole input: exact when `tokensBeforeExact`; otherwise the core's lower bound above the target (the pipeline and the library replace it with an estimate of the whole). */
  readonly tokensBefore: number;
  readonly tokensBeforeExact: boolean;
  /** Tokens of the output (kept messages and the note). */
  readonly tokensAfter: number;
  readonly targetMet: boolean;
  /** Tokens of the leading instructions plus the task (null when the decision did not need them). */
  readonly protectedTokens: number | null;
  /** Groups in conversation order, the note among them where it would be inserted. */
  readonly groups: readonly Group[];
  /** Set when min_keep_steps kept steps beyond the budget. */
  readonly heldByMinKeepSteps: boolean;
}

/** Resolves the note option: undefined means the default, '' and null mean none. */
export function noteTemplate(note: string | null | undefined): string | null {
  if (note === undefined) return DEFAULT_NOTE_TEMPLATE;
  return note === null || note === '' ? null : note;
}

/**
 * Counts groups newest first while each whole group fits what is left.
 * @returns the position of the oldest group kept (`groups.length` when none fits) and each group's count
 */
function firstGroupToKeep(
  meter: Meter,
  groups: ReadonlyArray<readonly number[]>,
  available: number,
  exhaustive: boolean,
): { first: number; counts: Map<number, number> } {
  const counts = new Map<number, number>();
  let first = groups.length;
  while (first > 0) {
    const g = groups[first - 1] as readonly number[];
    // Counting may stop just past what is left (a group that passes it is not kept either way), unless every
    // count is wanted exactly, for a plan or a dry run.
    const tokens = meter.measure(g, exhaustive ? undefined : Math.max(available, 0));
    if (tokens > available) {
      counts.set(first - 1, tokens);
      break;
    }
    counts.set(first - 1, tokens);
    available -= tokens;
    first--;
  }
  return { first, counts };
}

/**
 * Decides what the sliding-window strategy keeps. Pure: never mutates `messages`.
 * @param messages the conversation, oldest first
 * @param counter measures groups of rendered messages
 * @param options target, min_keep_steps, note template, exhaustive counting
 * @returns the full decision, also when nothing changes
 */
export function planCompaction(messages: readonly Message[], counter: TokenCounter, options: CompactOptions): Plan {
  const target = options.target;
  const minKeepSteps = options.minKeepSteps ?? 1;
  checkMinKeepSteps(minKeepSteps);
  const template = noteTemplate(options.note);
  const exhaustive = options.exhaustive ?? false;
  const meter = new Meter(messages, counter);
  const n = messages.length;
  const structure = analyze(messages);
  const { systemEnd, task } = structure;

  const whole = meter.measureAll(exhaustive ? undefined : target);
  const protectedIdx = task === null ? range(0, systemEnd) : [...range(0, systemEnd), task];
  const { turnGroups, stepGroups } = groupsOf(messages, structure);
  const p: Planning = { messages, size: n, meter, structure, turnGroups, stepGroups, exhaustive };

  if (whole <= target) return unchangedPlan(p, whole, target, 'fits');

  const protectedTokens = meter.measure(protectedIdx);
  const budget = target - protectedTokens;
  const allSteps = stepMessages(messages, structure);
  const stepsTokens = meter.measure(allSteps, exhaustive ? undefined : Math.max(budget, 0));
  const { firstTurn, firstStep, turnCounts, stepCounts, heldByMinKeepSteps } = cutOf(
    p,
    budget,
    stepsTokens,
    minKeepSteps,
  );

  const kept = keptIndices(structure, turnGroups, stepGroups, firstTurn, firstStep);
  const keptN = kept.length;
  const keptCount = weightOf(messages, kept);
  // The removed ones are weighed here and listed only when read (see `removed` below).
  const removedCount = removedWeight(messages, kept, keptCount);
  // Read up to the first removed message that is not an earlier note.
  const onlyNotes = template !== null && everyRemoved(n, kept, (i) => isEarlierNoteAt(messages, i, structure));

  if (keptN === n) return unchangedPlan(p, whole, target, 'nothing-removed');
  if (onlyNotes) return unchangedPlan(p, whole, target, 'only-notes');

  const noteText = template === null ? null : formatNote(template, removedCount);
  const keptTurnCount = turnGroups.slice(firstTurn).reduce((a, g) => a + g.length, 0);
  // The note stands where the removed messages were: after the task when steps went, else after the instructions.
  const noteIndex =
    noteText === null ? null : firstStep > 0 ? systemEnd + keptTurnCount + (task === null ? 0 : 1) : systemEnd;
  const outRendered = kept.map((i) => meter.render(i));
  if (noteText !== null && noteIndex !== null) outRendered.splice(noteIndex, 0, renderMessage(noteMessage(noteText)));
  const tokensAfter = meter.measureRendered(outRendered);

  // A warm step's loop reads only the kept messages: the removed ones (most of a long conversation) are listed once
  // asked for.
  const removed = once(() => {
    const out = new Array<number>(n - keptN);
    let r = 0;
    everyRemoved(n, kept, (i) => {
      out[r++] = i;
      return true;
    });
    return out;
  });
  const groups = once(() => {
    const marks = new Uint8Array(n);
    for (const i of kept) marks[i] = 1;
    return describeGroups(asMade(p), (i) => marks[i] === 1, {
      turnCounts,
      stepCounts,
      protectedTokens,
      noteIndex,
      noteText,
      noteAfterTask: firstStep > 0 && task !== null,
    });
  });
  return {
    changed: true,
    unchanged: null,
    kept,
    get removed(): readonly number[] {
      return removed();
    },
    removedCount,
    keptCount,
    noteIndex,
    noteText,
    tokensBefore: whole,
    tokensBeforeExact: exhaustive || whole <= target,
    tokensAfter,
    targetMet: tokensAfter <= target,
    protectedTokens,
    // Listed when read: a warm step that only wants the messages never lays out the whole conversation.
    get groups(): readonly Group[] {
      return groups();
    },
    heldByMinKeepSteps,
  };
}

/**
 * The input indices the window keeps, ascending: the instructions, the newest turns from `firstTurn`, the task and
 * the newest steps from `firstStep` (which is their order in the conversation). Read from the groups kept alone.
 */
function keptIndices(
  structure: Structure,
  turnGroups: ReadonlyArray<readonly number[]>,
  stepGroups: ReadonlyArray<readonly number[]>,
  firstTurn: number,
  firstStep: number,
): number[] {
  const kept = range(0, structure.systemEnd);
  for (let g = firstTurn; g < turnGroups.length; g++) for (const i of turnGroups[g] as readonly number[]) kept.push(i);
  if (structure.task !== null) kept.push(structure.task);
  for (let g = firstStep; g < stepGroups.length; g++) for (const i of stepGroups[g] as readonly number[]) kept.push(i);
  return kept;
}

/**
 * Total weight of the messages not in `kept` (ascending, weighing `keptCount`): the whole less what stays where the
 * whole is known (`knownOf`), else added up in order.
 */
function removedWeight(messages: readonly Message[], kept: readonly number[], keptCount: number): number {
  const whole = knownOf(messages)?.weight ?? null;
  if (whole !== null) return whole - keptCount;
  let total = 0;
  everyRemoved(messages.length, kept, (i) => {
    total += (messages[i] as Message).weight ?? 1;
    return true;
  });
  return total;
}

/**
 * Whether `test` holds for every index below `n` not in `kept` (ascending), asked in order and up to the first for
 * which it does not.
 */
function everyRemoved(n: number, kept: readonly number[], test: (index: number) => boolean): boolean {
  for (let i = 0, k = 0; i < n; i++) {
    if (k < kept.length && kept[k] === i) k++;
    else if (!test(i)) return false;
  }
  return true;
}

/** A value made on first use and kept. */
function once<T>(make: () => T): () => T {
  let made: { value: T } | null = null;
  return () => (made ??= { value: make() }).value;
}

/**
 * A plan with some fields replaced, its other fields copied as they are (a field listed when read stays so; a spread
 * would list it now).
 */
export function withFields(plan: Plan, fields: Partial<Plan>): Plan {
  const copy = Object.defineProperties({}, Object.getOwnPropertyDescriptors(plan)) as Plan;
  return Object.defineProperties(copy, Object.getOwnPropertyDescriptors(fields)) as Plan;
}

/** A conversation as a plan sees it: its messages, their meter, its structure and its groups of message indices. */
interface Planning {
  readonly messages: readonly Message[];
  /** How many messages the plan was made on: a warm compactor's list may grow after (see `asMade`). */
  readonly size: number;
  readonly meter: Meter;
  readonly structure: Structure;
  readonly turnGroups: ReadonlyArray<readonly number[]>;
  readonly stepGroups: ReadonlyArray<readonly number[]>;
  /** Count every group, even those the decision does not need. */
  readonly exhaustive: boolean;
}

/**
 * Where the window cuts: the oldest turn and step it keeps. When the steps alone pass the budget, every turn goes and
 * the newest steps that fit stay (at least `minKeepSteps` of them); otherwise every step stays with the newest turns
 * that fit beside them.
 */
function cutOf(
  p: Planning,
  budget: number,
  stepsTokens: number,
  minKeepSteps: number,
): {
  firstTurn: number;
  firstStep: number;
  turnCounts: Map<number, number>;
  stepCounts: Map<number, number>;
  heldByMinKeepSteps: boolean;
} {
  const { meter, turnGroups, stepGroups, exhaustive } = p;
  if (stepsTokens > budget) {
    const r = firstGroupToKeep(meter, stepGroups, budget, exhaustive);
    const firstStep = Math.min(r.first, Math.max(stepGroups.length - minKeepSteps, 0));
    return {
      firstTurn: turnGroups.length,
      firstStep,
      turnCounts: new Map(),
      stepCounts: r.counts,
      heldByMinKeepSteps: firstStep < r.first,
    };
  }
  const r = firstGroupToKeep(meter, turnGroups, budget - stepsTokens, exhaustive);
  return { firstTurn: r.first, firstStep: 0, turnCounts: r.counts, stepCounts: new Map(), heldByMinKeepSteps: false };
}

function checkMinKeepSteps(minKeepSteps: number): void {
  if (!Number.isInteger(minKeepSteps) || minKeepSteps < 0) {
    throw new RangeError(`min_keep_steps must be a whole number of at least 0, got ${minKeepSteps}`);
  }
}

/**
 * The plan of keeping every message, with its structure (groups, the task, the kept set) and nothing counted: what a
 * chain without the window reports its groups by. Its figures are 0 and marked inexact; the strategies that ran give
 * the chain's own.
 */
export function keepEverything(messages: readonly Message[], counter: TokenCounter, minKeepSteps = 1): Plan {
  checkMinKeepSteps(minKeepSteps);
  const structure = analyze(messages);
  const { turnGroups, stepGroups } = groupsOf(messages, structure);
  const p: Planning = {
    messages,
    size: messages.length,
    meter: new Meter(messages, counter),
    structure,
    turnGroups,
    stepGroups,
    exhaustive: false,
  };
  return withFields(unchangedPlan(p, 0, Number.MAX_SAFE_INTEGER, 'fits'), { tokensBeforeExact: false });
}

/**
 * The conversation as the plan was made on it, for what is worked out when first read: a warm compactor hands the
 * plan its own list, which later calls only append to, so the messages the plan saw are its first `size`.
 */
function asMade(p: Planning): Planning {
  return p.messages.length === p.size ? p : { ...p, messages: p.messages.slice(0, p.size) };
}

/** The plan of a conversation left as it is, with its groups; `whole` is what the decision counted of it. */
function unchangedPlan(p: Planning, whole: number, target: number, why: Unchanged): Plan {
  const { messages, meter, structure, exhaustive } = p;
  const protectedIdx =
    structure.task === null ? range(0, structure.systemEnd) : [...range(0, structure.systemEnd), structure.task];
  const exact = exhaustive || whole <= target;
  // An unchanged conversation is measured whole: the output is the input.
  const tokens = exact ? whole : meter.measureAll();
  const groups = once(() =>
    describeGroups(asMade(p), () => true, {
      turnCounts: new Map(),
      stepCounts: new Map(),
      protectedTokens: null,
      noteIndex: null,
      noteText: null,
      noteAfterTask: false,
    }),
  );
  return {
    changed: false,
    unchanged: why,
    kept: range(0, messages.length),
    removed: [],
    removedCount: 0,
    keptCount: weightOf(messages, range(0, messages.length)),
    noteIndex: null,
    noteText: null,
    tokensBefore: tokens,
    tokensBeforeExact: true,
    tokensAfter: tokens,
    targetMet: tokens <= target,
    protectedTokens: exhaustive ? meter.measure(protectedIdx) : null,
    get groups(): readonly Group[] {
      return groups();
    },
    heldByMinKeepSteps: false,
  };
}

interface Known {
  turnCounts: Map<number, number>;
  stepCounts: Map<number, number>;
  protectedTokens: number | null;
  noteIndex: number | null;
  noteText: string | null;
  noteAfterTask: boolean;
}

/** Lists every group in conversation order with its fate; counts are filled in where known or when exhaustive. */
function describeGroups(p: Planning, isKept: (index: number) => boolean, known: Known): Group[] {
  const { messages, meter, structure, turnGroups, stepGroups, exhaustive } = p;
  const { systemEnd, task } = structure;
  const groups: Group[] = [];
  const covered = new Uint8Array(messages.length);
  const tokensOf = (indices: readonly number[], knownCount: number | undefined): number | null =>
    knownCount !== undefined ? knownCount : exhaustive ? meter.measure(indices) : null;

  if (systemEnd > 0) {
    const idx = range(0, systemEnd);
    groups.push({
      kind: 'system',
      start: 0,
      end: systemEnd,
      indices: idx,
      tokens: tokensOf(idx, undefined),
      kept: true,
    });
    for (const i of idx) covered[i] = 1;
  }
  structure.turns.forEach(([s, e], k) => {
    const idx = turnGroups[k] as number[];
    for (const i of idx) covered[i] = 1;
    groups.push({
      kind: 'turn',
      start: s,
      end: e,
      indices: idx,
      tokens: tokensOf(idx, known.turnCounts.get(k)),
      kept: idx.every(isKept),
    });
  });
  if (task !== null) {
    const idx = [task];
    covered[task] = 1;
    groups.push({
      kind: 'task',
      start: task,
      end: task + 1,
      indices: idx,
      tokens: tokensOf(idx, undefined),
      kept: true,
    });
  }
  structure.steps.forEach(([s, e], k) => {
    const idx = stepGroups[k] as number[];
    for (const i of idx) covered[i] = 1;
    groups.push({
      kind: 'step',
      start: s,
      end: e,
      indices: idx,
      tokens: tokensOf(idx, known.stepCounts.get(k)),
      kept: idx.every(isKept),
    });
  });
  // Messages in no group: before the first turn, earlier notes, strays after the task.
  for (let i = 0; i < messages.length; i++) {
    if (covered[i] === 1) continue;
    groups.push({
      kind: 'orphan',
      start: i,
      end: i + 1,
      indices: [i],
      tokens: tokensOf([i], undefined),
      kept: isKept(i),
    });
  }
  groups.sort((a, b) => a.start - b.start || a.end - b.end);
  if (known.noteIndex !== null && known.noteText !== null) {
    // The note follows the task when steps were cut, otherwise the leading instructions.
    const anchor = known.noteAfterTask ? 'task' : 'system';
    const at = groups.findIndex((g) => g.kind === anchor) + 1;
    groups.splice(at, 0, {
      kind: 'note',
      start: known.noteIndex,
      end: known.noteIndex + 1,
      indices: [],
      tokens: null,
      kept: true,
    });
  }
  return groups;
}

/**
 * Compacts a conversation held in memory.
 * @param messages the conversation, oldest first (never mutated)
 * @param counter measures groups of rendered messages
 * @param options target, min_keep_steps and note
 * @returns the new message list (the note as a user message with `compaction: 'sliding_window'`), or null when nothing would get smaller
 */
export function compact(
  messages: readonly Message[],
  counter: TokenCounter,
  options: CompactOptions,
): Message[] | null {
  const plan = planCompaction(messages, counter, options);
  return plan.changed ? applyPlan(messages, plan) : null;
}

/**
 * The message list a changed plan leaves: the kept messages and the note where it goes.
 * @param messages the conversation the plan was made on
 * @param plan its plan
 */
export function applyPlan(messages: readonly Message[], plan: Plan): Message[] {
  const out: Message[] = plan.kept.map((i) => messages[i] as Message);
  if (plan.noteText !== null && plan.noteIndex !== null) {
    out.splice(plan.noteIndex, 0, noteMessage(plan.noteText));
  }
  return out;
}
