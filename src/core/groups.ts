import { knownOf, type Known } from './growing.js';
import { lazyList } from './lazy-list.js';
import { range } from './meter.js';
import { contentOf } from './render.js';
import { lowerBound, partitionPoint } from './sorted.js';
import { SLIDING_WINDOW, type Message, type ToolCall, type ToolResult } from './types.js';

// How a conversation falls into groups, for every strategy (Haystack's compaction `utils.py`): the leading
// instructions, the historical turns, the current task and its steps, and the notes of earlier runs left out of them.
// The window keeps or drops whole groups, pruning and offloading replace results in the older steps, summarizing
// replaces the oldest groups.

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
 * where the window writes a note: in the run of user messages right after the leading instructions (a note follows
 * the instructions when history went; when steps went, all history went with them, so the note follows the task,
 * right after the instructions). Such a text is never the current task: when every real user message would be a
 * note, the latest of them is the task.
 * @param messages the conversation
 * @param systemEnd the end of the leading instructions (see `leadingSystemEnd`)
 * @returns the indices of those notes, ascending
 */
export function notesByText(messages: readonly Message[], systemEnd: number): ReadonlySet<number> {
  let found: number[] | null = null;
  for (let i = systemEnd; i < messages.length; i++) {
    const m = messages[i] as Message;
    if (m.compaction !== undefined) continue;
    if (m.role !== 'user') break;
    if (m.exactNote === true) (found ??= []).push(i);
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
 * Steps after `start`: an assistant message and the tool-result messages right after it (Haystack's
 * `_agent_step_spans`), except that a run of consecutive assistant messages whose calls the results right after the
 * last of them answer is one step from the first such message on (see `runJoin`): cut apart, a call would lose its
 * result, a request its provider accepts one it rejects. `start` is never inside a run of assistant messages.
 */
export function stepSpans(messages: readonly Message[], start: number): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  const n = messages.length;
  let i = start;
  while (i < n) {
    if (messages[i]?.role !== 'assistant') {
      i++;
      continue;
    }
    let runEnd = i + 1;
    while (runEnd < n && messages[runEnd]?.role === 'assistant') runEnd++;
    let end = runEnd;
    while (end < n && messages[end]?.role === 'tool') end++;
    const join = runJoin(messages, i, runEnd, end);
    for (let a = i; a < join; a++) spans.push([a, a + 1]);
    spans.push([join, end]);
    i = end;
  }
  return spans;
}

/**
 * Where the last step of a run of consecutive assistant messages [runStart, runEnd) begins, its results in
 * [runEnd, toolsEnd): at the first message of the run with a call that one of those results answers, or at the last
 * message of the run when none has. A call never answered there leaves its message a step of its own, as in Haystack.
 */
export function runJoin(messages: readonly Message[], runStart: number, runEnd: number, toolsEnd: number): number {
  const last = runEnd - 1;
  if (runEnd - runStart < 2 || toolsEnd === runEnd) return last;
  const results = range(runEnd, toolsEnd).flatMap((i) => contentOf(messages[i] as Message).results);
  for (let a = runStart; a < last; a++)
    if (contentOf(messages[a] as Message).toolCalls.some((call) => isAnsweredBy(call, results))) return a;
  return last;
}

/**
 * Whether one of the results answers a call: the result of its id, or, for a result without an id, of its tool (a
 * result without a name answers any call), as inspect pairs them (src/lint/pairing.ts).
 */
function isAnsweredBy(call: ToolCall, results: readonly ToolResult[]): boolean {
  return results.some((r) => (r.id !== undefined ? r.id === call.id : r.name === '' || r.name === call.name));
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
  /** The latest user message compaction did not make (Haystack's `_latest_user_index`), or null. */
  readonly task: number | null;
  readonly turns: ReadonlyArray<readonly [number, number]>;
  readonly steps: ReadonlyArray<readonly [number, number]>;
  /** Notes of a literal template, found by their text where a note can stand (see `notesByText`). */
  readonly notes: ReadonlySet<number>;
}

/**
 * Cuts a conversation into leading instructions, historical turns, the task and its steps. For a list that only grows
 * (`growsOnly`), the turns and the task come from its user messages known already, not from reading every message.
 */
export function analyze(messages: readonly Message[]): Structure {
  const known = knownOf(messages);
  const systemEnd = leadingSystemEnd(messages);
  const notes = notesByText(messages, systemEnd);
  const task = known === null ? taskIndex(messages, notes) : latestAmong(known.users, notes);
  const stepsFrom = task === null ? systemEnd : task + 1;
  const steps = known === null ? stepSpans(messages, stepsFrom) : stepsAmong(messages, known, stepsFrom);
  // Every earlier real user message starts a historical turn, even with no reply between (Haystack's
  // `_historical_turn_spans`): the task is the latest alone.
  const end = task ?? systemEnd;
  const turns =
    known === null ? turnSpans(messages, systemEnd, end, notes) : turnsAmong(known.users, systemEnd, end, notes);
  return { systemEnd, task, turns, steps, notes };
}

/** `taskIndex` from the list's unmarked user messages: the latest that is not a note found by its text. */
function latestAmong(users: readonly number[], notes: ReadonlySet<number>): number | null {
  for (let k = users.length - 1; k >= 0; k--) if (!notes.has(users[k] as number)) return users[k] as number;
  return null;
}

/**
 * `stepSpans` from the list's assistant messages, listed when read (each step's end found then): every assistant
 * message from `start` on begins a step but those a run's last step holds from an earlier message (`absorbedOf`).
 */
function stepsAmong(
  messages: readonly Message[],
  known: Known,
  start: number,
): ReadonlyArray<readonly [number, number]> {
  const { assistants } = known;
  // The list may grow after: the steps are those of its messages now.
  const n = messages.length;
  const from = lowerBound(assistants, start);
  const absorbed = absorbedOf(messages, known);
  const j0 = lowerBound(absorbed.indices, start);
  const skipped = absorbed.indices.length - j0;
  const positions = absorbed.positions;
  const isAbsorbed = (i: number): boolean => absorbed.indices[lowerBound(absorbed.indices, i)] === i;
  return lazyList(assistants.length - from - skipped, (k) => {
    // The k-th step begins at the k-th assistant from `from` that no earlier step holds (as in `stepMessages`).
    const j = partitionPoint(j0, positions.length, (m) => (positions[m] as number) - from - (m - j0) > k);
    const s = assistants[from + k + (j - j0)] as number;
    let e = s + 1;
    while (e < n && messages[e]?.role === 'assistant' && isAbsorbed(e)) e++;
    while (e < n && messages[e]?.role === 'tool') e++;
    return [s, e] as const;
  });
}

/** Assistant messages a step begun at an earlier one holds: their indices and their positions among the assistants. */
interface Absorbed {
  readonly indices: readonly number[];
  readonly positions: readonly number[];
}

/** What is worked out of a growing list's runs: the absorbed of its runs that can no longer change. */
interface RunMemo {
  /** How many of the known followers the settled runs cover. */
  followers: number;
  readonly indices: number[];
  readonly positions: number[];
}

const RUNS = new WeakMap<Known, RunMemo>();

/**
 * The assistant messages of a growing list that a run's last step holds from an earlier message of the run (see
 * `runJoin`). A run whose results a message after them ends is settled and remembered; only the newest run, which the
 * list's growth may still change, is worked out on every call.
 */
function absorbedOf(messages: readonly Message[], known: Known): Absorbed {
  const n = messages.length;
  const { followers, assistants } = known;
  let memo = RUNS.get(known);
  if (memo === undefined) RUNS.set(known, (memo = { followers: 0, indices: [], positions: [] }));
  let open: number[] = [];
  for (let f = memo.followers; f < followers.length;) {
    const runStart = (followers[f] as number) - 1;
    let g = f + 1;
    while (g < followers.length && followers[g] === (followers[g - 1] as number) + 1) g++;
    const runEnd = (followers[g - 1] as number) + 1;
    let toolsEnd = runEnd;
    while (toolsEnd < n && messages[toolsEnd]?.role === 'tool') toolsEnd++;
    const join = runJoin(messages, runStart, runEnd, toolsEnd);
    const own = range(join + 1, runEnd);
    if (toolsEnd < n) {
      for (const i of own) {
        memo.indices.push(i);
        memo.positions.push(lowerBound(assistants, i));
      }
      memo.followers = g;
    } else open = own;
    f = g;
  }
  // Copies: a list read later (a result read after more calls) must see the runs as they were at this call, and the
  // memo grows with the list. Absorbed messages are few (runs of answered assistant calls), so copying is cheap.
  if (open.length === 0) return { indices: memo.indices.slice(), positions: memo.positions.slice() };
  return {
    indices: [...memo.indices, ...open],
    positions: [...memo.positions, ...open.map((i) => lowerBound(assistants, i))],
  };
}

/**
 * The indices of every message of the structure's steps, ascending. For a list that only grows, listed when read:
 * every message from the first step on but those no step holds (known from earlier calls).
 */
export function stepMessages(messages: readonly Message[], structure: Structure): readonly number[] {
  const first = structure.steps[0];
  if (first === undefined) return [];
  const known = knownOf(messages);
  if (known === null) return structure.steps.flatMap(([s, e]) => range(s, e));
  const from = first[0];
  const outside = known.outsideSteps;
  const j0 = lowerBound(outside, from);
  const strays = outside.length - j0;
  return lazyList(messages.length - from - strays, (k) => {
    // The k-th message from `from` in a step comes after every message outside that has at most k in steps before it.
    const j = partitionPoint(j0, outside.length, (m) => (outside[m] as number) - from - (m - j0) > k);
    return from + k + (j - j0);
  });
}

/**
 * `turnSpans` from the list's unmarked user messages, listed when read. Notes found by their text stand in the run of
 * user messages right after the instructions (see `notesByText`): the starts up to the last of them are listed, the
 * rest are the known ones as they are.
 */
function turnsAmong(
  users: readonly number[],
  start: number,
  end: number,
  notes: ReadonlySet<number>,
): ReadonlyArray<readonly [number, number]> {
  let from = lowerBound(users, start);
  const to = lowerBound(users, end);
  const head: number[] = [];
  if (notes.size > 0) {
    // A loop, not a spread: a run of notes can be longer than a call takes arguments.
    let lastNote = -1;
    for (const i of notes) if (i > lastNote) lastNote = i;
    for (; from < to && (users[from] as number) <= lastNote; from++)
      if (!notes.has(users[from] as number)) head.push(users[from] as number);
  }
  const count = head.length + to - from;
  const startOf = (k: number): number => (k < head.length ? head[k] : users[from + k - head.length]) as number;
  return lazyList(count, (k) => [startOf(k), k + 1 < count ? startOf(k + 1) : end] as const);
}

/** The message indices of each turn (earlier notes left out: they are never kept as history) and of each step. */
export function groupsOf(
  messages: readonly Message[],
  structure: Structure,
): { turnGroups: ReadonlyArray<readonly number[]>; stepGroups: ReadonlyArray<readonly number[]> } {
  // Listed when read: the window reads the newest groups until its budget is spent, so a long conversation's older
  // groups are never listed (a dry run's description reads them all).
  const { turns, steps } = structure;
  return {
    turnGroups: lazyList(turns.length, (k) => {
      const [s, e] = turns[k] as readonly [number, number];
      return range(s, e).filter((i) => !isEarlierNoteAt(messages, i, structure));
    }),
    stepGroups: lazyList(steps.length, (k) => {
      const [s, e] = steps[k] as readonly [number, number];
      return range(s, e);
    }),
  };
}
