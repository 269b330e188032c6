// The rules this module decides by, numbered and explained: docs/strategy.md (in the repository root).
import { lazyList } from './lazy-list.js';
import { DEFAULT_NOTE_TEMPLATE, formatNote } from './note.js';
import { renderMessage } from './render.js';
import { SLIDING_WINDOW, type Message, type Rendered, type TokenCounter } from './types.js';

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
 * A sliding-window note of an earlier run: left out of turns and folded into the new note. Only a user message can be
 * one, as in Haystack's `_is_compaction_note`: a system message that carries the marker stays with its turn.
 */
export function isEarlierNote(message: Message): boolean {
  return message.role === 'user' && message.compaction === SLIDING_WINDOW;
}

/**
 * Whether the message at `index` is an earlier sliding-window note: marked as one, or the text of a literal template
 * (one without `{num_removed}`) where a note can stand (see `notesByText`).
 */
export function isEarlierNoteAt(
  messages: readonly Message[],
  index: number,
  structure: Pick<Structure, 'notes'>,
): boolean {
  return structure.notes.has(index) || isEarlierNote(messages[index] as Message);
}

const NO_NOTES: ReadonlySet<number> = new Set();

/** Whether compaction made the message at `index`, for the structure: marked so, or a note found by its text. */
function isMade(message: Message, index: number, notes: ReadonlySet<number>): boolean {
  return message.compaction !== undefined || notes.has(index);
}

/**
 * The notes of a literal template (one without `{num_removed}`), found by their exact text (`Message.exactNote`)
 * where the window writes a note: in the run of user messages right after the leading instructions, before its
 * second real user message (a note follows the instructions when history went, or the task right after them when
 * steps went). Such a text is never the current task: when every real user message would be a note, the latest of
 * them is the task.
 * @param messages the conversation
 * @param systemEnd the end of the leading instructions (see `leadingSystemEnd`)
 * @returns the indices of those notes, ascending
 */
export function notesByText(messages: readonly Message[], systemEnd: number): ReadonlySet<number> {
  let found: number[] | null = null;
  let real = 0;
  for (let i = systemEnd; i < messages.length; i++) {
    const m = messages[i] as Message;
    if (m.compaction !== undefined) continue;
    if (m.role !== 'user') break;
    if (m.exactNote === true) (found ??= []).push(i);
    else if (++real > 1) break;
  }
  if (found === null) return NO_NOTES;
  // Never the current task: with none of the others a real user message, the latest is the task.
  if (taskIndex(messages, new Set(found)) === null) found.pop();
  return found.length === 0 ? NO_NOTES : new Set(found);
}

/** End of the unbroken run of leading system messages that compaction did not make. */
export function leadingSystemEnd(messages: readonly Message[]): number {
  let i = 0;
  while (i < messages.length && messages[i]?.role === 'system' && messages[i]?.compaction === undefined) i++;
  return i;
}

/** Index of the latest user message compaction did not make: the current task. */
export function taskIndex(messages: readonly Message[], notes: ReadonlySet<number> = NO_NOTES): number | null {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as Message;
    if (m.role === 'user' && !isMade(m, i, notes)) return i;
  }
  return null;
}

/**
 * The user messages kept as the task, oldest first. Usually the latest user message compaction did not make alone.
 * A note written after the task by an earlier run with another template reads as a user message, so the task it
 * followed is kept with it, but only where such a note can really stand: the latest user message could be a note
 * (`couldBeNote`), everything between the leading instructions and it is a user message (a run that cuts steps has cut
 * all history, so its note follows a task that directly follows the instructions), and every real user message of that
 * stretch after its first could be a note too. Then the stretch's real user messages are the task.
 * @param messages the conversation
 * @param task the task's index (see `taskIndex`)
 * @param systemEnd the end of the leading instructions (see `leadingSystemEnd`)
 * @returns the indices, ending with `task`; notes between them are not among them
 */
export function taskRun(
  messages: readonly Message[],
  task: number,
  systemEnd: number,
  notes: ReadonlySet<number> = NO_NOTES,
): number[] {
  if (messages[task]?.couldBeNote !== true) return [task];
  const run: number[] = [];
  for (let i = systemEnd; i < task; i++) {
    const m = messages[i] as Message;
    if (m.role !== 'user') return [task];
    if (isMade(m, i, notes)) continue;
    if (run.length > 0 && m.couldBeNote !== true) return [task];
    run.push(i);
  }
  run.push(task);
  return run;
}

/** Steps after `start`: an assistant message and the tool-result messages right after it. */
export function stepSpans(messages: readonly Message[], start: number): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  let i = start;
  while (i < messages.length) {
    if (messages[i]?.role !== 'assistant') {
      i++;
      continue;
    }
    let end = i + 1;
    while (end < messages.length && messages[end]?.role === 'tool') end++;
    spans.push([i, end]);
    i = end;
  }
  return spans;
}

/** Historical turns in [start, end): each real user message up to the next one. */
export function turnSpans(
  messages: readonly Message[],
  start: number,
  end: number,
  notes: ReadonlySet<number> = NO_NOTES,
): Array<[number, number]> {
  const starts: number[] = [];
  for (let i = start; i < end; i++) {
    const m = messages[i] as Message;
    if (m.role === 'user' && !isMade(m, i, notes)) starts.push(i);
  }
  return starts.map((s, k) => [s, starts[k + 1] ?? end]);
}

/** The structure of a conversation, before any counting. */
export interface Structure {
  readonly systemEnd: number;
  readonly task: number | null;
  /** The user messages kept as the task (see `taskRun`), empty without a task. */
  readonly taskRun: readonly number[];
  readonly turns: ReadonlyArray<readonly [number, number]>;
  readonly steps: ReadonlyArray<readonly [number, number]>;
  /** Notes of a literal template, found by their text where a note can stand (see `notesByText`). */
  readonly notes: ReadonlySet<number>;
}

/** Cuts a conversation into leading instructions, historical turns, the task and its steps. */
export function analyze(messages: readonly Message[]): Structure {
  const systemEnd = leadingSystemEnd(messages);
  const notes = notesByText(messages, systemEnd);
  const task = taskIndex(messages, notes);
  const run = task === null ? [] : taskRun(messages, task, systemEnd, notes);
  const steps = stepSpans(messages, task === null ? systemEnd : task + 1);
  const turns = turnSpans(messages, systemEnd, run[0] ?? systemEnd, notes);
  return { systemEnd, task, taskRun: run, turns, steps, notes };
}

/** Renders each message at most once and measures groups of them. */
class Meter {
  private readonly rendered: Array<Rendered | undefined>;
  constructor(
    private readonly messages: readonly Message[],
    private readonly counter: TokenCounter,
  ) {
    this.rendered = new Array<Rendered | undefined>(messages.length);
  }

  render(i: number): Rendered {
    let r = this.rendered[i];
    if (r === undefined) {
      r = renderMessage(this.messages[i] as Message);
      this.rendered[i] = r;
    }
    return r;
  }

  measure(indices: readonly number[], limit?: number): number {
    if (indices.length === 0) return 0;
    // Rendered only as the counter reads them: one that stops at its limit never renders the older messages.
    return this.counter.measure(
      lazyList(indices.length, (k) => this.render(indices[k] as number)),
      limit,
    );
  }

  measureRendered(items: readonly Rendered[]): number {
    return items.length === 0 ? 0 : this.counter.measure(items);
  }
}

/** Total weight of the messages at these indices. */
function weightOf(messages: readonly Message[], indices: readonly number[]): number {
  let total = 0;
  for (const i of indices) total += (messages[i] as Message).weight ?? 1;
  return total;
}

function range(start: number, end: number): number[] {
  const out = new Array<number>(Math.max(0, end - start));
  for (let i = start; i < end; i++) out[i - start] = i;
  return out;
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

  const whole = meter.measure(range(0, n), exhaustive ? undefined : target);
  const protectedIdx = [...range(0, systemEnd), ...structure.taskRun];
  const { turnGroups, stepGroups } = groupsOf(messages, structure);

  if (whole <= target) {
    return unchangedPlan(messages, meter, structure, turnGroups, stepGroups, whole, target, 'fits', exhaustive);
  }

  const protectedTokens = meter.measure(protectedIdx);
  const budget = target - protectedTokens;
  const allSteps = stepGroups.flat();
  const stepsTokens = meter.measure(allSteps, exhaustive ? undefined : Math.max(budget, 0));
  let firstTurn: number;
  let firstStep: number;
  let turnCounts = new Map<number, number>();
  let stepCounts = new Map<number, number>();
  let heldByMinKeepSteps = false;
  if (stepsTokens > budget) {
    firstTurn = turnGroups.length;
    const r = firstGroupToKeep(meter, stepGroups, budget, exhaustive);
    stepCounts = r.counts;
    firstStep = Math.min(r.first, Math.max(stepGroups.length - minKeepSteps, 0));
    heldByMinKeepSteps = firstStep < r.first;
  } else {
    const r = firstGroupToKeep(meter, turnGroups, budget - stepsTokens, exhaustive);
    turnCounts = r.counts;
    firstTurn = r.first;
    firstStep = 0;
  }

  const keptSet = new Set<number>(protectedIdx);
  for (const g of turnGroups.slice(firstTurn)) for (const i of g) keptSet.add(i);
  for (const g of stepGroups.slice(firstStep)) for (const i of g) keptSet.add(i);
  const kept: number[] = [];
  const removed: number[] = [];
  for (let i = 0; i < n; i++) (keptSet.has(i) ? kept : removed).push(i);

  if (removed.length === 0) {
    return unchangedPlan(
      messages,
      meter,
      structure,
      turnGroups,
      stepGroups,
      whole,
      target,
      'nothing-removed',
      exhaustive,
    );
  }
  if (template !== null && removed.every((i) => isEarlierNoteAt(messages, i, structure))) {
    return unchangedPlan(messages, meter, structure, turnGroups, stepGroups, whole, target, 'only-notes', exhaustive);
  }

  const removedCount = weightOf(messages, removed);
  const noteText = template === null ? null : formatNote(template, removedCount);
  const keptTurnCount = turnGroups.slice(firstTurn).reduce((a, g) => a + g.length, 0);
  // The note stands where the removed messages were: after the task when steps went, else after the instructions.
  const noteIndex =
    noteText === null ? null : firstStep > 0 ? systemEnd + keptTurnCount + structure.taskRun.length : systemEnd;
  const outRendered = kept.map((i) => meter.render(i));
  if (noteText !== null && noteIndex !== null) {
    outRendered.splice(
      noteIndex,
      0,
      renderMessage({ role: 'user', content: { texts: [noteText], toolCalls: [], results: [], images: 0, files: [] } }),
    );
  }
  const tokensAfter = meter.measureRendered(outRendered);

  const groups = describeGroups(messages, meter, structure, turnGroups, stepGroups, (i) => keptSet.has(i), exhaustive, {
    turnCounts,
    stepCounts,
    protectedTokens,
    noteIndex,
    noteText,
    noteAfterTask: firstStep > 0 && task !== null,
  });
  return {
    changed: true,
    unchanged: null,
    kept,
    removed,
    removedCount,
    keptCount: weightOf(messages, kept),
    noteIndex,
    noteText,
    tokensBefore: whole,
    tokensBeforeExact: exhaustive || whole <= target,
    tokensAfter,
    targetMet: tokensAfter <= target,
    protectedTokens,
    groups,
    heldByMinKeepSteps,
  };
}

function checkMinKeepSteps(minKeepSteps: number): void {
  if (!Number.isInteger(minKeepSteps) || minKeepSteps < 0) {
    throw new RangeError(`min_keep_steps must be a whole number of at least 0, got ${minKeepSteps}`);
  }
}

/** The message indices of each turn (earlier notes left out: they are never kept as history) and of each step. */
function groupsOf(
  messages: readonly Message[],
  structure: Structure,
): { turnGroups: number[][]; stepGroups: number[][] } {
  return {
    turnGroups: structure.turns.map(([s, e]) => range(s, e).filter((i) => !isEarlierNoteAt(messages, i, structure))),
    stepGroups: structure.steps.map(([s, e]) => range(s, e)),
  };
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
  const plan = unchangedPlan(
    messages,
    new Meter(messages, counter),
    structure,
    turnGroups,
    stepGroups,
    0,
    Number.MAX_SAFE_INTEGER,
    'fits',
    false,
  );
  return { ...plan, tokensBeforeExact: false };
}

function unchangedPlan(
  messages: readonly Message[],
  meter: Meter,
  structure: Structure,
  turnGroups: number[][],
  stepGroups: number[][],
  whole: number,
  target: number,
  why: Unchanged,
  exhaustive: boolean,
): Plan {
  const protectedIdx = [...range(0, structure.systemEnd), ...structure.taskRun];
  const exact = exhaustive || whole <= target;
  // An unchanged conversation is measured whole: the output is the input.
  const tokens = exact ? whole : meter.measure(range(0, messages.length));
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
    groups: describeGroups(messages, meter, structure, turnGroups, stepGroups, () => true, exhaustive, {
      turnCounts: new Map(),
      stepCounts: new Map(),
      protectedTokens: null,
      noteIndex: null,
      noteText: null,
      noteAfterTask: false,
    }),
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
function describeGroups(
  messages: readonly Message[],
  meter: Meter,
  structure: Structure,
  turnGroups: number[][],
  stepGroups: number[][],
  isKept: (index: number) => boolean,
  exhaustive: boolean,
  known: Known,
): Group[] {
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
    const idx = structure.taskRun;
    for (const i of idx) covered[i] = 1;
    groups.push({
      kind: 'task',
      start: idx[0] ?? task,
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
    out.splice(plan.noteIndex, 0, {
      role: 'user',
      compaction: SLIDING_WINDOW,
      content: { texts: [plan.noteText], toolCalls: [], results: [], images: 0, files: [] },
    });
  }
  return out;
}
