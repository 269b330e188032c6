import { applyPlan, keepEverything, planCompaction, noteTemplate, type Plan } from './core/compact.js';
import { planPruning, type PrunedMessage, type PrunePlan } from './core/prune.js';
import {
  OFFLOADED_META_KEY,
  isPointerText,
  offloadedMessage,
  parsePointer,
  planOffload,
  pointerText,
  portableName,
  quoteReference,
  storeKey,
} from './core/offload.js';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { parseJson } from './core/json-value.js';
import { elementReader, lazyList } from './core/lazy-list.js';
import { renderArguments } from './core/python-json.js';
import { contentOf, renderMessage } from './core/render.js';
import type { Message, Rendered, TokenCounter } from './core/types.js';
import { InputError, NoConversationError } from './errors.js';
import { FORMATS, findFormat, formatNames, isSketchedRecord, isTellingText } from './formats/registry.js';
import { isRecord, own, type ConversationInput, type FormatAdapter, type Normalized } from './formats/types.js';
import { arrayElements, findMember, objectMembers } from './io/json-layout.js';
import { CONVERSATION_KEYS, readLayout, rebuild, type Layout, type Slot } from './io/layout.js';
import { forEachLine, isLineSource, positionOf } from './io/lines.js';
import { SLIM_LONGER_THAN } from './io/slim.js';
import { isEarlierNoteText } from './core/note.js';
import {
  isSummaryText,
  summarizeRounds,
  type SummaryAnswer,
  type SummaryRequest,
  type SummaryTier,
  type SummaryFailure,
} from './core/summarize.js';
import { itemsReader, makeSummaryItem } from './formats/types.js';
import type { Retention } from './core/retention.js';
import { compress, type CompressionFormat } from './io/compressed.js';
import { encodeOutput, lineColumn, type SourceText } from './io/source.js';
import { findProblems } from './lint/problems.js';
import { createCounter, type CounterOptions, type TokenizerName } from './tokens/index.js';
import { inspectedConversation, type InspectedConversation, type Inspection } from './outcome/inspection.js';
import {
  noteBeforeItem,
  outcomeOf,
  writtenItems,
  type ConversationOutcome,
  type OutcomeSettings,
  type Planned,
} from './outcome/outcome.js';

// What the command line needs of the core and the formats comes through here.
export { noteTemplate } from './core/compact.js';
export { formatNames } from './formats/registry.js';
export { DEFAULT_PLACEHOLDER } from './core/prune.js';

/** Settings for compacting one file. */
export interface FileOptions {
  readonly target: number;
  readonly minKeepSteps?: number;
  /** The note template as given (undefined: default; null or '': none). */
  readonly note?: string | null;
  /** A format name, or 'auto'. */
  readonly format?: string;
  readonly counter: TokenCounter;
  /** Count every group (dry runs, plans, reports). */
  readonly exhaustive?: boolean;
  /** Thresholds of a context window instead of a fixed `target` (which is then ignored). */
  readonly window?: WindowThresholds;
  /** The key each record of a many-conversation file holds its conversation under, tried before the usual ones. */
  readonly conversationKey?: string | undefined;
  /** A JSON Pointer to the conversation in the file, or in each of its records (`--conversation-path`). */
  readonly conversationPath?: string | undefined;
  /**
   * Bulk strings (message text, tool arguments and outputs) longer than this are left out of the parsed items and
   * read from the raw text when rendered (see io/slim.ts). Default SLIM_LONGER_THAN; Infinity keeps every string.
   */
  readonly slimLongerThan?: number;
  /**
   * Count the tokens before exactly in every file (`--exact`). Without it they are counted exactly in files up to
   * EXACT_COUNT_UP_TO characters and estimated above, where the decision stopped counting early.
   */
  readonly exact?: boolean;
  /** The strategies to apply, in order, each to what the previous left (default: the sliding window alone). */
  readonly strategies?: readonly StrategyName[];
  /** Pruning: only results of more than this many tokens are replaced (default 200). */
  readonly minTokens?: number;
  /** Pruning: the placeholder template, `{tool_name}` filled in (default Haystack's). */
  readonly placeholder?: string;
  /**
   * Offloading: the store's directory (absolute) and the threshold in characters (`OffloadOverChars`); `home`, the
   * folder the transcript is written to (absolute), makes each pointer's reference relative to it, so a transcript
   * and its store that move together still restore (without it references are absolute).
   */
  readonly offload?: { readonly dir: string; readonly over: number; readonly home?: string };
  /** Work out what each compaction forgets (the outcome's `inventory`): dry runs, plans, --json and --stat ask for it. */
  readonly inventory?: boolean;
  /** Summarizing: the instruction, the summary size planned with, and the reply to each request (see summarize-run.ts). */
  readonly summarize?: SummarizeSettings;
}

/** What the summarize step of a chain needs: the decision's settings and a synchronous source of replies. */
export interface SummarizeSettings {
  readonly instruction: string;
  readonly summaryTokens: number;
  /** The least share of the replaced messages' identifiers a summary must keep (`--min-retention`), if any. */
  readonly minRetention?: number;
  /** The reply to a request; throws to stop the decision until the reply is known (the async driver's replay). */
  readonly answer: (request: SummaryRequest, counter: TokenCounter) => SummaryAnswer;
}

/** One message of a summarized conversation's output: an input message, a summary, or the window's note. */
export type OutputEntry =
  | { readonly input: number }
  | { readonly summary: number }
  | { readonly note: string; readonly removed: number; readonly kept: number };

/** A summary the output holds, with what it stands for (for reports, and for measuring what it kept). */
export interface PlacedSummary {
  /** Its position among the output's messages. */
  readonly position: number;
  /** The summary message's text (`<conversation_summary>` wrapper included). */
  readonly text: string;
  /** Haystack's `summarized_messages`: how many messages its round replaced. */
  readonly summarized: number;
  readonly tier: SummaryTier;
  /** The input messages it stands for (also through summaries of earlier rounds it replaced), ascending. */
  readonly replaced: readonly number[];
  /** The prompt its round sent. */
  readonly request: SummaryRequest;
}

/** What summarizing did to one conversation: every round in order, the summaries the output holds, a failure. */
export interface SummarizedConversation {
  readonly rounds: readonly {
    readonly tier: SummaryTier;
    readonly request: SummaryRequest;
    /** The input messages it stands for, ascending. */
    readonly replaced: readonly number[];
    /** How many messages of the list it saw it replaced (Haystack's `summarized_messages`). */
    readonly summarized: number;
    readonly text: string;
    readonly tokensBefore: number;
    readonly tokensAfter: number;
    /** The prompt's tokens (system and user texts), measured for plans and dry runs only; else null. */
    readonly promptTokens: number | null;
    /** How many identifiers the replaced messages name. */
    readonly identifiers: number;
    /** How many of them the summary keeps (src/core/retention.ts); null for a simulated summary (dry runs, plans). */
    readonly retention: Retention | null;
  }[];
  readonly summaries: readonly PlacedSummary[];
  readonly failure: SummaryFailure | null;
}

/** A file of the offload store to write before the transcript that points at it. */
export interface StoreFile {
  /** Absolute, inside the store directory; named by its content, so one already there with these bytes is this file. */
  readonly path: string;
  readonly content: string;
}

/** What a store record (`NAME.{hash}.swc.json` beside the result `NAME`) says. */
export interface StoreRecord {
  readonly swc: 'offload-record';
  readonly version: 2;
  /** The format and the options that found the conversation, so `swc restore` finds it again without them. */
  readonly format: string;
  readonly conversationKey?: string;
  readonly conversationPath?: string;
  /** The conversation in the file (`the lines`, `line 3`, `record 2`) and the result's message in it. */
  readonly where: string;
  readonly message: number;
  /** The items offloading replaced for this result: as they were read and as they were written. */
  readonly items: readonly { readonly item: number; readonly raw: string; readonly written: string }[];
}

/**
 * The strategies a run can chain: the sliding window (`SlidingWindowCompactor`), tool-result pruning
 * (`ToolResultPruningCompactor`) and offloading (`ToolResultOffloadHook` with a file-system store).
 */
export const STRATEGIES = ['window', 'prune', 'offload', 'summarize'] as const;
export type StrategyName = (typeof STRATEGIES)[number];

/**
 * Files up to this many characters get the exact tokens before even where the decision stopped counting early:
 * counting the rest costs 0.1–0.2 s per MB, so at most about half a second here (measured: docs/performance.md).
 */
export const EXACT_COUNT_UP_TO = 4 * 2 ** 20;

/**
 * Compact a conversation only once its size, with the tool schemas of its container, reaches `trigger`
 * tokens, and then to `target` tokens, the schemas' tokens coming off that target (like an agent's hook).
 */
export interface WindowThresholds {
  readonly trigger: number;
  readonly target: number;
}

/** One conversation of a file and its decision. */
export interface ConversationResult {
  readonly slot: Slot;
  readonly normalized: Normalized;
  readonly plan: Plan;
  /** The target the plan was made against (with thresholds: the trigger or the target, less the tool schemas). */
  readonly target: number;
  /** Tokens the container's tool schemas add to the conversation (counted with thresholds only, else 0). */
  readonly toolTokens: number;
  /** What every output shows of it, worked out once with the counter the decision was made with. */
  readonly outcome: ConversationOutcome;
  /** The tool results pruning replaced and that the output holds, in conversation order (empty without pruning). */
  readonly pruned: readonly PrunedItems[];
  /** The results offloading replaced and that the output holds, in the file's item positions. */
  readonly offloaded?: readonly PrunedItems[];
  /** The strategies the conversation was compacted with, in order. */
  readonly strategies: readonly StrategyName[];
  /**
   * With thresholds: an earlier strategy of the chain brought the conversation below the trigger, above the target,
   * and the later ones, checking the trigger again, left it there.
   */
  readonly leftBelowTrigger?: boolean;
  /** With summarize in the chain: its rounds, the summaries written, a failed round. */
  readonly summarized?: SummarizedConversation;
  /** With summarize in the chain: the output's messages in order (the plan's `kept` are the input ones among them). */
  readonly output?: readonly OutputEntry[];
}

/** One message whose tool results were pruned, in the file's own item positions. */
export interface PrunedItems {
  /** Its message index in the conversation. */
  readonly message: number;
  /** Its first item and its last item + 1. */
  readonly start: number;
  readonly end: number;
  /** The tools whose results were replaced, in order (several for a message answering parallel calls). */
  readonly tools: readonly string[];
  /** The message measured alone, before and after. */
  readonly tokensBefore: number;
  readonly tokensAfter: number;
}

/** The outcome for one file. */
export interface FileResult {
  readonly file: string;
  readonly format: string;
  readonly layout: Layout;
  readonly conversations: readonly ConversationResult[];
  readonly changed: boolean;
  /** The output text (without BOM; the writer puts it back). Equals the input text when unchanged. */
  readonly output: string;
  /** Whether the file holds many conversations (a list of records, or one record per line). */
  readonly records: boolean;
  /** How many conversations the file holds, and how many of them changed. */
  readonly conversationCount: number;
  readonly changedConversations: number;
  /** The offload store's files for this output: each result, and what restoring its items needs (empty without offloading). */
  readonly stored: readonly StoreFile[];
}

/** What choosing a format reads of a slot (the library hands in a list of its own). */
export type SlotShape = Pick<Slot, 'where' | 'items' | 'container' | 'key' | 'record'>;

/** Picks the adapter: the one named, or the first whose shape matches every item. */
export function chooseFormat(slot: SlotShape, format: string | undefined, file: string): FormatAdapter {
  if (format !== undefined && format !== 'auto') {
    const named = findFormat(format);
    if (!named)
      throw new InputError(`unknown format "${format}" (choose one of: auto, ${formatNames().join(', ')})`, file);
    return named;
  }
  // Formats that name the list's key are tried first; a format-specific key (`contents`, `input`) allows no
  // other, a record's key (`messages`, `traj`, `history`, a --conversation-key) allows any.
  const key = slot.key;
  const detects = (f: FormatAdapter): boolean => f.detect(slot.items, slot.container);
  const open =
    key === null ||
    (CONVERSATION_KEYS as readonly string[]).includes(key) ||
    !FORMATS.some((f) => f.listKeys.includes(key));
  const found =
    (key === null ? undefined : FORMATS.find((f) => f.listKeys.includes(key) && detects(f))) ??
    (open ? FORMATS.find(detects) : undefined);
  if (found) return found;
  const partial = formatOfTheRest(slot, key, open);
  if (partial) return partial;
  if (slot.items.length === 0)
    return FORMATS.find((f) => f.listKeys.includes(slot.key ?? 'messages')) ?? (FORMATS[0] as FormatAdapter);
  // The file's only list, none of whose items is a message of any format, holds no conversation; a record's list, or
  // one whose items are messages that fit no one format together, is a broken transcript.
  const holdsNone =
    slot.record === undefined && !slot.items.some((item) => FORMATS.some((f) => f.detect([item], slot.container)));
  throw new (holdsNone ? NoConversationError : InputError)(
    `cannot tell the transcript format of ${slot.where} (${describeShape(slot.items[0])}); pass --format (${formatNames().join(', ')})${recordHint(slot)}`,
    file,
  );
}

/**
 * The format of a list in which some items are broken: the first format whose own items, taken together, are in
 * it, when every other item fits no format at all. Its checks then name the broken item ("message 3: expected a
 * message object, found a number"). A list mixing two formats' messages gets none, and stays "cannot tell".
 */
function formatOfTheRest(slot: SlotShape, key: string | null, open: boolean): FormatAdapter | undefined {
  const fitsAlone = (f: FormatAdapter, item: unknown): boolean => f.detect([item], slot.container);
  const takes = (f: FormatAdapter): boolean => {
    const fitting = slot.items.filter((item) => fitsAlone(f, item));
    if (fitting.length === 0 || !f.detect(fitting, slot.container)) return false;
    return slot.items.every((item) => fitsAlone(f, item) || !FORMATS.some((g) => fitsAlone(g, item)));
  };
  return (
    (key === null ? undefined : FORMATS.find((f) => f.listKeys.includes(key) && takes(f))) ??
    (open ? FORMATS.find(takes) : undefined)
  );
}

/** When the items look like records holding a list of objects under some key, names --conversation-key for it. */
function recordHint(slot: SlotShape): string {
  const item = slot.items[0];
  if (slot.record !== undefined || !isRecord(item)) return '';
  const key = Object.keys(item).find((k) => {
    const value = own(item, k);
    return Array.isArray(value) && value.length > 0 && value.every(isRecord);
  });
  return key === undefined
    ? ''
    : `, or --conversation-key ${JSON.stringify(key)} if each item is a record holding its conversation there`;
}

/** A short description of an item's shape, for the "cannot tell" error. */
function describeShape(item: unknown): string {
  if (item === null || typeof item !== 'object') return `first item is ${item === null ? 'null' : typeof item}`;
  if (Array.isArray(item)) return 'first item is a list';
  const keys = Object.keys(item).slice(0, 6);
  return `first item has keys ${keys.map((k) => JSON.stringify(k)).join(', ') || 'none'}`;
}

/** Normalizes a slot with an adapter, pointing errors at the offending item. */
export function normalizeSlot(
  source: SourceText,
  slot: Slot,
  adapter: FormatAdapter,
  template: string | null,
): Normalized {
  return adapter.normalize(conversationInput(source, slot), template);
}

/** A slot as an adapter reads it, with the one wording for an item it refuses (the record, the message, where it starts). */
function conversationInput(source: SourceText, slot: Slot): ConversationInput {
  return {
    file: source.file,
    items: slot.items,
    raws: slot.raws,
    container: slot.container,
    fail(item, reason): never {
      const { line, column } = positionOf(source, slot.offsets[item] ?? 0);
      const where = slot.record === undefined ? '' : `${slot.where}, `;
      throw new InputError(`${where}message ${item + 1}: ${reason}`, source.file, line, column);
    },
  };
}

/** The adapter of a slot: the format asked for or detected; an empty conversation among records takes the one before it. */
function adapterOf(
  slot: Slot,
  previous: FormatAdapter | null,
  format: string | undefined,
  file: string,
): FormatAdapter {
  return slot.items.length === 0 && previous !== null ? previous : chooseFormat(slot, format, file);
}

/**
 * Each slot of a layout with its adapter, chosen as the slot is reached (so a file's errors come in slot order), and
 * the names of the formats met so far, in order, as a file's result names them.
 */
function* slotsWithAdapters(
  layout: Layout,
  format: string | undefined,
  file: string,
  names: string[],
): Generator<{ slot: Slot; adapter: FormatAdapter }> {
  let previous: FormatAdapter | null = null;
  for (const slot of layout.slots) {
    const adapter = adapterOf(slot, previous, format, file);
    previous = adapter;
    if (!names.includes(adapter.name)) names.push(adapter.name);
    yield { slot, adapter };
  }
}

/**
 * Writes a slot's items back after a decision: kept items in order, pinned items where they were, the note
 * before the first item of the message it precedes.
 */
export function writeSlot(
  slot: Slot,
  adapter: FormatAdapter,
  normalized: Normalized,
  plan: Plan,
  pruned?: ReadonlyMap<number, string>,
  finals?: Map<number, string>,
  output?: { readonly entries: readonly OutputEntry[]; readonly summaries: readonly PlacedSummary[] },
): string {
  // Pruned items are written with their placeholders; a format that relinks items does so on those texts.
  // A lazy list: a big file's lines are read again only where they are written.
  const rawAt = elementReader(slot.raws);
  const raws =
    pruned === undefined || pruned.size === 0
      ? slot.raws
      : lazyList(slot.raws.length, (k) => pruned.get(k) ?? rawAt(k));
  if (output !== undefined)
    return writeEntries(slot, adapter, normalized, raws, output.entries, output.summaries, finals);
  const order = writtenItems(plan, normalized);
  const noteBefore = noteBeforeItem(plan, normalized);
  let noteValue: unknown =
    plan.noteText === null
      ? null
      : adapter.makeNote({ text: plan.noteText, removed: plan.removedCount, kept: plan.keptCount, items: slot.items });
  let edited: ReadonlyMap<number, string> | undefined;
  if (adapter.finish !== undefined) {
    // Formats whose items link to each other relink what was kept and chain the note in.
    const done = adapter.finish({
      items: slot.items,
      raws,
      kept: order,
      noteBefore: plan.noteText === null ? null : noteBefore,
      note: noteValue,
    });
    if (done.note !== undefined) noteValue = done.note;
    edited = done.raws;
  }
  const parts: string[] = [];
  let noteWritten = plan.noteText === null;
  const note = (): void => {
    parts.push(slot.writeItem(noteValue));
    noteWritten = true;
  };
  for (const item of order) {
    if (!noteWritten && item >= noteBefore) note();
    const text = edited?.get(item) ?? (raws[item] as string);
    if (finals?.has(item) === true) finals.set(item, text);
    parts.push(text);
  }
  if (!noteWritten) note();
  return slot.write(parts);
}

/**
 * Writes a summarized slot: its output messages in order (kept items as they were, each summary and note as the
 * format writes them), items that belong to no message where they were.
 */
function writeEntries(
  slot: Slot,
  adapter: FormatAdapter,
  normalized: Normalized,
  raws: readonly string[],
  entries: readonly OutputEntry[],
  summaries: readonly PlacedSummary[],
  finals?: Map<number, string>,
): string {
  const pinned = [...(normalized.pinned ?? [])].sort((a, b) => a - b);
  const valueOf = (entry: OutputEntry, position: number): unknown => {
    if ('summary' in entry) {
      const s = summaries.find((x) => x.position === position) as PlacedSummary;
      return makeSummaryItem(adapter, { text: s.text, summarized: s.summarized, items: slot.items });
    }
    if ('note' in entry)
      return adapter.makeNote({ text: entry.note, removed: entry.removed, kept: entry.kept, items: slot.items });
    return null;
  };
  const inserted = entries.filter((e) => !('input' in e)).length;
  const itemsAt = itemsReader(normalized.itemsOf);
  let edited: ReadonlyMap<number, string> | undefined;
  let finished: unknown;
  if (adapter.finish !== undefined && inserted > 0) {
    // Formats whose items link to each other chain one new message in; more than one they cannot place.
    if (inserted > 1)
      throw new InputError(
        `--strategy summarize writes at most one new message per conversation in ${adapter.name} files; this one needs ${inserted}`,
        slot.where ?? '',
      );
    const at = entries.findIndex((e) => !('input' in e));
    const order = entries
      .flatMap((e) => ('input' in e ? [...itemsAt(e.input)] : []))
      .concat(pinned)
      .sort((a, b) => a - b);
    const next = entries.slice(at + 1).find((e): e is { input: number } => 'input' in e && itemsAt(e.input).length > 0);
    const noteBefore = next === undefined ? Infinity : Math.min(...itemsAt(next.input));
    const note = valueOf(entries[at] as OutputEntry, at);
    const done = adapter.finish({ items: slot.items, raws, kept: order, noteBefore, note });
    finished = done.note ?? note;
    edited = done.raws;
  }
  const parts: string[] = [];
  let p = 0;
  const item = (k: number): void => {
    const text = edited?.get(k) ?? (raws[k] as string);
    if (finals?.has(k) === true) finals.set(k, text);
    parts.push(text);
  };
  const firstItem = (messages: readonly number[]): number =>
    Math.min(...messages.flatMap((m) => [...itemsAt(m)]), Infinity);
  entries.forEach((entry, position) => {
    if (!('input' in entry)) {
      // Items of no message that stood before what the summary replaced stay before it.
      const s = 'summary' in entry ? summaries.find((x) => x.position === position) : undefined;
      const next = entries.slice(position + 1).find((e): e is { input: number } => 'input' in e);
      const bound = s !== undefined ? firstItem(s.replaced) : next !== undefined ? firstItem([next.input]) : Infinity;
      while (p < pinned.length && (pinned[p] as number) < bound) item(pinned[p++] as number);
      parts.push(slot.writeItem(finished ?? valueOf(entry, position)));
      return;
    }
    const items = [...itemsAt(entry.input)].sort((a, b) => a - b);
    const first = items[0];
    if (first !== undefined) while (p < pinned.length && (pinned[p] as number) < first) item(pinned[p++] as number);
    for (const k of items) item(k);
  });
  while (p < pinned.length) item(pinned[p++] as number);
  return slot.write(parts);
}

/**
 * The bytes to write for a result. An unchanged file held as lines is written as the bytes it was read from, so its
 * text is never built (a JSONL file can be larger than one JavaScript string).
 * @param compression how the place written to wants it compressed (`outputCompression`), whatever the input was;
 *   by default the input's own, for a result written under its input's name (`--in-place`, `--out-dir`)
 */
export function outputBytes(
  result: FileResult,
  compression: CompressionFormat | null = result.layout.source.compressed?.format ?? null,
): Uint8Array {
  const source = result.layout.source;
  // Unchanged and wanted compressed as it was read: the bytes read, never recompressed.
  if (!result.changed && source.compressed !== undefined && source.compressed.format === compression)
    return source.compressed.original();
  const plain = !result.changed && isLineSource(source) ? source.bytes() : encodeOutput(result.output, source.bom);
  return compression === null ? plain : compress(plain, compression);
}

/** Settings of a run: a file's settings with the tokenizer named instead of a counter handed in. */
export interface RunOptions extends Omit<FileOptions, 'counter'> {
  readonly tokenizer: TokenizerName;
  /** Characters per token (approx only) and the flat image and file costs; Haystack's defaults where left out. */
  readonly counterOptions?: CounterOptions;
}

/** Compacts files with one run's settings; the counter is loaded once and stays inside. */
export interface FileCompactor {
  /** The tokenizer's name, as outputs show it. */
  readonly tokenizer: string;
  /** @param file where the result is written (its folder, absolute), which offloading's pointers are relative to */
  compact(source: SourceText, file?: { readonly home?: string }): FileResult;
}

/**
 * Loads a run's tokenizer once and returns a compactor for its files: the road every command takes, so no caller
 * handles a counter.
 */
export async function createFileCompactor(options: RunOptions): Promise<FileCompactor> {
  const counter = await createCounter(options.tokenizer, options.counterOptions);
  return {
    tokenizer: counter.name,
    compact: (source, file) =>
      compactSource(source, {
        ...options,
        counter,
        ...(options.offload !== undefined && file?.home !== undefined
          ? { offload: { ...options.offload, home: file.home } }
          : {}),
      }),
  };
}

/**
 * Compacts every conversation in a decoded file.
 * @param source the decoded input
 * @param options target, settings, counter
 * @returns decisions and the output text
 */
export function compactSource(source: SourceText, options: FileOptions): FileResult {
  const template = noteTemplate(options.note);
  const longerThan = options.slimLongerThan ?? SLIM_LONGER_THAN;
  // Pruning and offloading decide by sketches of the texts left out (their lengths and ends).
  const sketch =
    (options.strategies ?? []).some((s) => s === 'prune' || s === 'offload') && options.exhaustive !== true
      ? isSketchedRecord
      : undefined;
  const slimming =
    longerThan === Infinity
      ? undefined
      : {
          longerThan,
          sketch,
          keep: (text: string) => isEarlierNoteText(text, template) || isTellingText(text) || isSummaryText(text),
        };
  const layout = readLayout(source, undefined, {
    conversationKey: options.conversationKey,
    conversationPath: options.conversationPath,
    slimming,
  });
  const replacements = new Map<Slot, string>();
  const conversations: ConversationResult[] = [];
  const stored: StoreFile[] = [];
  let exactBefore: boolean | undefined;
  const outcomeSettings: OutcomeSettings = {
    minKeepSteps: options.minKeepSteps ?? 1,
    counter: options.counter,
    window: options.window ?? null,
    // Decided when a figure is first shown: a quiet run never asks.
    get exactBefore(): boolean {
      exactBefore ??= options.exact === true || isTextAtMost(source, EXACT_COUNT_UP_TO);
      return exactBefore;
    },
    inventory: options.inventory === true,
  };
  const formats: string[] = [];
  for (const { slot, adapter } of slotsWithAdapters(layout, options.format, source.file, formats)) {
    const read = normalizeSlot(source, slot, adapter, template);
    const strategies = options.strategies ?? ['window'];
    const decided: Decided =
      strategies.length === 1 && strategies[0] === 'window'
        ? {
            ...(options.window
              ? planAgainstWindow(source, layout, slot, read.messages, options, options.window, template)
              : {
                  plan: planCompaction(read.messages, options.counter, {
                    target: options.target,
                    minKeepSteps: options.minKeepSteps,
                    note: template,
                    exhaustive: options.exhaustive,
                  }),
                  target: options.target,
                  toolTokens: 0,
                }),
            pruning: [],
            offloads: [],
            messages: read.messages,
          }
        : planChain(
            read.messages,
            options,
            template,
            strategies,
            referenceMaker(source, slot, adapter, read, options.offload),
            options.window ? toolsText(source, layout, slot) : null,
          );
    const { plan, pruning, offloads } = decided;
    const candidates = prunedItems(pruning, read, plan);
    const offloadCandidates = offloadedItems(offloads, read, plan);
    if ((candidates.length > 0 || offloadCandidates.length > 0) && adapter.writePruned === undefined) {
      const what = candidates.length > 0 ? 'prune' : 'offload';
      throw new InputError(
        `--strategy ${what} cannot write ${adapter.name} files: the format has no way to write a replaced result`,
        source.file,
      );
    }
    // The items rewritten, found before anything is reported, so plans and dry runs name exactly those (a Claude
    // Code message spans several lines, of which only the result's changes).
    const edits = prunedRaws(slot.raws, adapter, read, candidates, pruning);
    const offloadEdits = offloadRaws(slot, adapter, read, offloadCandidates, offloads);
    const pruned = narrowedTo(candidates, edits);
    const offloaded = narrowedTo(offloadCandidates, offloadEdits);
    // Outputs see the conversation as decided: pruned and offloaded results hold their placeholders and pointers.
    const normalized: Normalized =
      pruning.length === 0 && offloads.length === 0 ? read : { ...read, messages: decided.messages };
    conversations.push(
      withOutcome(
        {
          slot,
          normalized,
          plan,
          target: decided.target,
          toolTokens: decided.toolTokens,
          pruned,
          offloaded,
          strategies,
          leftBelowTrigger: decided.leftBelowTrigger === true,
          itemLength: itemLengths(slot),
          input: read.messages,
          ...(decided.windowSaw === undefined ? {} : { measured: decided.windowSaw }),
          ...(decided.groupsExact === undefined ? {} : { groupsExact: decided.groupsExact }),
          ...summarizedOf(decided),
        },
        outcomeSettings,
      ),
    );
    if (plan.changed) {
      for (const [item, raw] of offloadEdits) edits.set(item, raw);
      const finals = new Map<number, string>();
      for (const item of offloadEdits.keys()) finals.set(item, '');
      const output =
        decided.output !== undefined && decided.summarized !== undefined
          ? { entries: decided.output, summaries: decided.summarized.summaries }
          : undefined;
      replacements.set(slot, writeSlot(slot, adapter, normalized, plan, edits, finals, output));
      stored.push(...storeFiles(slot, adapter, offloads, offloaded, offloadEdits, finals, options));
    }
  }
  const changed = replacements.size > 0;
  const rebuilt = changed ? rebuild(layout, replacements) : null;
  return {
    file: source.file,
    format: formats.join(', '),
    layout,
    conversations,
    changed,
    // A getter: an unchanged file held as lines has its text built only if the output is read.
    get output(): string {
      return rebuilt ?? source.text;
    },
    records: layout.slots.some((s) => s.record !== undefined),
    conversationCount: conversations.length,
    changedConversations: replacements.size,
    stored,
  };
}

/**
 * Whether a source's text has at most `limit` UTF-16 units. A file held as lines is first bounded by its bytes (a
 * unit takes one to three bytes, a pair of units four), so a big file is never read again to count them.
 */
function isTextAtMost(source: SourceText, limit: number): boolean {
  if (!isLineSource(source)) return source.text.length <= limit;
  const bytes = source.byteLength;
  if (bytes !== undefined && bytes <= limit) return true;
  // Less the byte-order mark, which the text leaves out.
  if (bytes !== undefined && (bytes - 3) / 3 > limit) return false;
  return source.length <= limit;
}

/** The length of each item of a slot in the file's text: from its offset to the next item's (or the slot's end). */
function itemLengths(slot: Slot): (item: number) => number {
  return (item) => {
    const start = slot.offsets[item];
    if (start === undefined) return 0;
    return Math.max((slot.offsets[item + 1] ?? slot.region.end) - start, 0);
  };
}

/** A conversation's decision: the window's plan (combined with the pruning's figures), the prunings and the result. */
interface Decided {
  readonly plan: Plan;
  readonly target: number;
  readonly toolTokens: number;
  readonly pruning: readonly ChainPruning[];
  readonly offloads: readonly ChainOffload[];
  readonly messages: Message[];
  /** A chain with thresholds whose later strategy found the conversation below the trigger, as an earlier one left it. */
  readonly leftBelowTrigger?: boolean;
  /** With summarize in the chain: what it did, and the output's messages in order when it changed the conversation. */
  readonly summarized?: SummarizedConversation;
  readonly output?: readonly OutputEntry[];
  /** The messages the window's plan was made on, in input indices, when a later strategy changed some of them. */
  readonly windowSaw?: readonly Message[];
  /** Whether the plan's group counts are exact, when that is not what `tokensBeforeExact` says (a chain). */
  readonly groupsExact?: boolean;
}

/** The summarize fields of a conversation's result, present only when summarize was in its chain. */
function summarizedOf(decided: Decided): Pick<ConversationResult, 'summarized' | 'output'> {
  return {
    ...(decided.summarized !== undefined ? { summarized: decided.summarized } : {}),
    ...(decided.output !== undefined ? { output: decided.output } : {}),
  };
}

/** What a chain of strategies reads of a file's settings. */
type ChainOptions = Pick<
  FileOptions,
  | 'target'
  | 'minKeepSteps'
  | 'counter'
  | 'exhaustive'
  | 'window'
  | 'minTokens'
  | 'placeholder'
  | 'offload'
  | 'summarize'
>;

/**
 * A conversation decided by a chain of strategies without offloading (which writes files), for the in-memory
 * library: the plan, the conversation as decided (pruned results hold their placeholders), and the new text of
 * each pruned item the output holds, written by the format as `swc compact` writes it.
 * @param raws the items' JSON texts, as a file of them would hold them
 * @param tools the tool schemas' text (with thresholds), or null
 * @throws InputError when pruning replaced a result the format has no way to write
 */
export function decideChain(
  raws: readonly string[],
  adapter: FormatAdapter,
  read: Normalized,
  options: Omit<ChainOptions, 'offload'>,
  template: string | null,
  strategies: readonly StrategyName[],
  tools: string | null,
  where: string,
): {
  plan: Plan;
  normalized: Normalized;
  edits: Map<number, string>;
  summarized?: SummarizedConversation;
  output?: readonly OutputEntry[];
} {
  if (strategies.includes('offload')) throw new RangeError('offloading writes files: it has no in-memory chain');
  const decided = planChain(read.messages, options, template, strategies, null, tools);
  const pruned = prunedItems(decided.pruning, read, decided.plan);
  if (pruned.length > 0 && adapter.writePruned === undefined) {
    throw new InputError(
      `strategy prune cannot write ${adapter.name} messages: the format has no way to write a replaced result`,
      where,
    );
  }
  const normalized: Normalized = decided.pruning.length === 0 ? read : { ...read, messages: decided.messages };
  return {
    plan: decided.plan,
    normalized,
    edits: decided.plan.changed ? prunedRaws(raws, adapter, read, pruned, decided.pruning) : new Map(),
    ...summarizedOf(decided),
  };
}

/** One strategy's result in a chain: the pruning made, with message indices in the input conversation. */
interface ChainPruning {
  readonly plan: PrunePlan;
  /** For each message of the list pruning saw, its index in the input (null for a note the window wrote). */
  readonly origin: readonly (number | null)[];
}

/**
 * Applies the strategies in order, each to the conversation the previous left, as Haystack runs its hooks: with
 * window thresholds each checks the trigger again, so pruning that brings the conversation under it leaves the
 * window nothing to do.
 * @returns the sliding window's plan in input indices (an unchanged one when the window is not in the chain, or did
 *   nothing), the prunings, and the input's messages with the pruned ones replaced
 */
function planChain(
  input: readonly Message[],
  options: ChainOptions,
  template: string | null,
  strategies: readonly StrategyName[],
  referenceOf: ReferenceMaker | null,
  tools: string | null,
): Decided {
  const counter = sharingCounter(options.counter);
  const toolTokens = options.window ? schemaTokens(input, counter, tools) : 0;
  // Below the trigger means a size of at most trigger - 1 tokens.
  const gate = options.window ? Math.max(options.window.trigger - 1 - toolTokens, 0) : null;
  const target = options.window ? Math.max(options.window.target - toolTokens, 0) : options.target;
  // Each strategy counts only what its decision needs, as the window alone does; the outcome counts the rest of the
  // conversation as it was read when an exact "before" is wanted (see Planned.input).
  const windowSettings = {
    minKeepSteps: options.minKeepSteps,
    note: template,
    exhaustive: options.exhaustive === true,
  };
  const pruneSettings = {
    minKeepSteps: options.minKeepSteps,
    minTokens: options.minTokens,
    placeholder: options.placeholder,
    exhaustive: options.exhaustive === true,
  };
  let current: readonly Message[] = input;
  let origin: (number | null)[] = input.map((_, i) => i);
  const final = input.slice();
  let windowPlan: Plan | null = null;
  let windowSaw: Message[] | undefined;
  // Whether some strategy found the conversation at or over the trigger (always, without thresholds).
  let reached = gate === null;
  // Whether the last strategy found it below the trigger and left it.
  let lastSkipped = false;
  const pruning: ChainPruning[] = [];
  const offloads: ChainOffload[] = [];
  let tokensBefore: number | null = null;
  let tokensBeforeExact = true;
  // What the last strategy left, measured only if it is shown (a window after pruning gives its own).
  let tokensAfter: () => number = () => 0;
  const measureAll = (list: readonly Message[]): number =>
    list.length === 0 ? 0 : counter.measure(list.map(renderMessage));
  // Summarizing: what it did, and the messages the chain made (summaries, the window's note) by identity.
  let summarizing: SummarizedConversation | null = null;
  const inserted = new Map<Message, { summary: number } | { note: string; removed: number; kept: number }>();
  const measureUpTo = (list: readonly Message[], limit: number): number =>
    list.length === 0
      ? 0
      : counter.measure(
          lazyList(list.length, (k) => renderMessage(list[k] as Message)),
          limit,
        );
  for (const strategy of strategies) {
    if (strategy === 'offload') {
      if (options.offload === undefined || referenceOf === null)
        throw new RangeError('offloading needs a store directory');
      // Its decision needs no count but the trigger's: the size is counted only past the trigger (or the target).
      const limit = gate ?? target;
      const size = options.exhaustive === true ? measureAll(current) : measureUpTo(current, limit);
      const sizeExact = options.exhaustive === true || size <= limit;
      const under = gate !== null && size <= gate;
      reached ||= !under;
      lastSkipped = under;
      if (tokensBefore === null) {
        tokensBefore = size;
        tokensBeforeExact = sizeExact;
      }
      const seen = current;
      tokensAfter = sizeExact ? () => size : () => measureAll(seen);
      if (under) continue;
      const candidates = planOffload(current, {
        over: options.offload.over,
        minKeepSteps: options.minKeepSteps,
        placeholder: options.placeholder,
        sketches: options.exhaustive !== true,
      });
      if (candidates.length === 0) continue;
      const byMessage = new Map<number, Map<number, OffloadedResult>>();
      for (const c of candidates) {
        const at = origin[c.index];
        if (at === null || at === undefined) continue;
        const entry = byMessage.get(c.index) ?? new Map<number, OffloadedResult>();
        entry.set(
          c.result,
          offloadedResult(c, () => referenceOf(at, c)),
        );
        byMessage.set(c.index, entry);
      }
      const next = current.slice();
      for (const [index, results] of byMessage) {
        // Its pointers (and the texts they are made from) are worked out when the message is read.
        const message = offloadedMessage(
          current[index] as Message,
          new Map([...results].map(([k, r]) => [k, () => r.text])),
        );
        next[index] = message;
        final[origin[index] as number] = message;
        // Counted only for the messages an output shows (those kept).
        const alone = (m: Message): (() => number) => {
          let n: number | undefined;
          return () => (n ??= counter.measure([renderMessage(m)]));
        };
        const before = alone(current[index] as Message);
        const after = alone(message);
        offloads.push({
          message: origin[index] as number,
          results,
          get tokensBefore(): number {
            return before();
          },
          get tokensAfter(): number {
            return after();
          },
        });
      }
      current = next;
      const left = current;
      tokensAfter = () => measureAll(left);
    } else if (strategy === 'prune') {
      const below = gate === null ? null : planPruning(current, counter, { ...pruneSettings, target: gate });
      const under = below !== null && !below.changed && below.targetMet;
      const p = under ? below : planPruning(current, counter, { ...pruneSettings, target });
      reached ||= !under;
      lastSkipped = under;
      if (tokensBefore === null) {
        tokensBefore = p.tokensBefore;
        tokensBeforeExact = p.tokensBeforeExact;
      }
      tokensAfter = () => p.tokensAfter;
      if (!p.changed) continue;
      pruning.push({ plan: p, origin });
      // A plan made without counting the candidates works each out when its message is read.
      for (const index of p.lazy?.candidates ?? p.pruned.map((r) => r.index)) {
        const at = origin[index];
        if (at !== null && at !== undefined) final[at] = p.messages[index] as Message;
      }
      current = p.messages;
    } else if (strategy === 'summarize') {
      if (options.summarize === undefined) throw new RangeError('summarizing needs a source of summaries');
      if (summarizing !== null) throw new RangeError('summarize can be applied once in a chain');
      // Counted only past the trigger (or the target), as offloading counts: the rounds count what they decide by.
      const limit = gate ?? target;
      const size = options.exhaustive === true ? measureAll(current) : measureUpTo(current, limit);
      const sizeExact = options.exhaustive === true || size <= limit;
      const under = gate !== null && size <= gate;
      reached ||= !under;
      lastSkipped = under;
      if (tokensBefore === null) {
        tokensBefore = size;
        tokensBeforeExact = sizeExact;
      }
      const seenSize = current;
      tokensAfter = sizeExact ? () => size : () => measureAll(seenSize);
      if (under) continue;
      const settings = options.summarize;
      const result = summarizeRounds(
        current,
        counter,
        {
          target,
          minKeepSteps: options.minKeepSteps,
          summaryTokens: settings.summaryTokens,
          instruction: settings.instruction,
          exhaustive: options.exhaustive === true,
          ...(settings.minRetention === undefined ? {} : { minRetention: settings.minRetention }),
        },
        (request) => settings.answer(request, counter),
      );
      const seen = origin;
      const inputsOf = (indices: readonly number[]): number[] =>
        indices
          .flatMap((i) => (seen[i] === null || seen[i] === undefined ? [] : [seen[i] as number]))
          .sort((a, b) => a - b);
      summarizing = {
        rounds: result.rounds.map((r) => ({
          tier: r.tier,
          request: r.request,
          replaced: inputsOf(r.replaced),
          summarized: r.summarized,
          text: r.text,
          tokensBefore: r.tokensBefore,
          tokensAfter: r.tokensAfter,
          promptTokens:
            options.exhaustive === true
              ? counter.measure([
                  { text: r.request.system, images: 0, files: 0 },
                  { text: r.request.user, images: 0, files: 0 },
                ])
              : null,
          identifiers: r.identifiers,
          retention: r.retention,
        })),
        summaries: [],
        failure: result.failure,
      };
      if (!result.changed) continue;
      result.origin.forEach((o, k) => {
        if ('summary' in o) inserted.set(result.messages[k] as Message, { summary: o.summary });
      });
      origin = result.origin.map((o) => ('input' in o ? (seen[o.input] ?? null) : null));
      current = result.messages;
      const summarizedAfter = result.tokensAfter;
      tokensAfter = () => summarizedAfter;
    } else {
      if (windowPlan !== null) throw new RangeError('the sliding window can be applied once in a chain');
      // Until the window, every strategy keeps the input's indices.
      windowSaw = final.slice();
      const below = gate === null ? null : planCompaction(current, counter, { ...windowSettings, target: gate });
      const fits = below !== null && below.unchanged === 'fits';
      windowPlan = fits ? below : planCompaction(current, counter, { ...windowSettings, target });
      reached ||= !fits;
      lastSkipped = fits;
      if (tokensBefore === null) {
        tokensBefore = windowPlan.tokensBefore;
        tokensBeforeExact = windowPlan.tokensBeforeExact;
      }
      const windowAfter = windowPlan.tokensAfter;
      tokensAfter = () => windowAfter;
      if (!windowPlan.changed) continue;
      // The plan just made is the one compacting would make again.
      const out = applyPlan(current, windowPlan);
      if (windowPlan.noteIndex !== null && windowPlan.noteText !== null) {
        inserted.set(out[windowPlan.noteIndex] as Message, {
          note: windowPlan.noteText,
          removed: windowPlan.removedCount,
          kept: windowPlan.keptCount,
        });
      }
      const keptOrigin = windowPlan.kept.map((i) => origin[i] ?? null);
      if (windowPlan.noteIndex !== null) keptOrigin.splice(windowPlan.noteIndex, 0, null);
      origin = keptOrigin;
      current = out;
    }
  }
  // The window's plan is made on the list it saw; when pruning went first, that list has the input's indices.
  // The input's groups with everything kept. Outside plans and dry runs only their structure: the strategies that
  // ran give the figures, so nothing is counted for it.
  const planOfInput = (): Plan =>
    options.exhaustive === true
      ? planCompaction(final, counter, {
          target: Number.MAX_SAFE_INTEGER,
          minKeepSteps: options.minKeepSteps,
          note: null,
          exhaustive: true,
        })
      : keepEverything(final, counter, options.minKeepSteps);
  const base = windowPlan ?? planOfInput();
  const pruned = pruning.length > 0 || offloads.length > 0;
  const changed = base.changed || pruned;
  // Below the trigger, the conversation is measured against it, as the window alone does.
  const planned = reached ? target : (gate as number);
  // Every strategy leaves what it measured (the window its plan's; pruning and offloading theirs, even unchanged).
  // Measured when an output asks (pruning alone keeps every message: its count after is the whole output's).
  let after: number | undefined;
  const afterOf = (): number => (after ??= tokensAfter());
  const plan: Plan = {
    ...base,
    changed,
    unchanged: changed ? null : base.unchanged,
    tokensBefore: tokensBefore ?? base.tokensBefore,
    tokensBeforeExact: tokensBefore === null ? base.tokensBeforeExact : tokensBeforeExact,
    get tokensAfter(): number {
      return afterOf();
    },
    get targetMet(): boolean {
      return afterOf() <= planned;
    },
  };
  const left = reached && lastSkipped && !plan.targetMet;
  const lazy = { ...(windowSaw === undefined ? {} : { windowSaw }), groupsExact: base.tokensBeforeExact };
  if (summarizing === null)
    return { plan, target: planned, toolTokens, pruning, offloads, messages: final, leftBelowTrigger: left, ...lazy };
  const done: SummarizedConversation = summarizing;
  if (!done.rounds.length || !current.some((m) => inserted.has(m)))
    return {
      plan,
      target: planned,
      toolTokens,
      pruning,
      offloads,
      messages: final,
      leftBelowTrigger: left,
      ...lazy,
      summarized: done,
    };
  // The output is the chain's last list: input messages, the summaries and a note the chain made.
  const output: OutputEntry[] = current.map((m, k) => {
    const at = origin[k];
    if (at !== null && at !== undefined) return { input: at };
    return inserted.get(m) ?? { note: '', removed: 0, kept: 0 };
  });
  const summaries: PlacedSummary[] = output.flatMap((e, position) => {
    if (!('summary' in e)) return [];
    const r = done.rounds[e.summary] as SummarizedConversation['rounds'][number];
    return [
      { position, text: r.text, summarized: r.summarized, tier: r.tier, replaced: r.replaced, request: r.request },
    ];
  });
  const keptSet = new Set(output.flatMap((e) => ('input' in e ? [e.input] : [])));
  const kept = final.map((_, i) => i).filter((i) => keptSet.has(i));
  const removed = final.map((_, i) => i).filter((i) => !keptSet.has(i));
  const weight = (list: readonly number[]): number => list.reduce((a, i) => a + ((final[i] as Message).weight ?? 1), 0);
  const summarizedPlan: Plan = {
    ...plan,
    changed: true,
    unchanged: null,
    kept,
    removed,
    removedCount: weight(removed),
    keptCount: weight(kept),
    noteIndex: null,
    noteText: null,
    // Groups in input terms (a window after summarize planned on the summarized list).
    groups: (windowPlan === null ? base : planOfInput()).groups.map((g) => ({
      ...g,
      kept: g.indices.every((i) => keptSet.has(i)),
    })),
  };
  return {
    plan: summarizedPlan,
    target: planned,
    toolTokens,
    pruning,
    offloads,
    messages: final,
    leftBelowTrigger: left,
    ...lazy,
    summarized: { ...done, summaries },
    output,
  };
}

/** One message offloading changed: its input index, and for each offloaded result its pointer, reference and text. */
/** An offloaded result: its pointer, its store reference and its text (each worked out when first read). */
interface OffloadedResult {
  readonly text: string;
  readonly reference: string;
  readonly original: string;
}

/** A result's pointer, reference and text, worked out when first read: a run reads those of the results it keeps. */
function offloadedResult(candidate: { readonly text: string }, referenceOf: () => string): OffloadedResult {
  let reference: string | undefined;
  let text: string | undefined;
  return {
    get reference(): string {
      reference ??= referenceOf();
      return reference;
    },
    get text(): string {
      text ??= pointerText(this.reference, candidate.text);
      return text;
    },
    get original(): string {
      return candidate.text;
    },
  };
}

interface ChainOffload {
  readonly message: number;
  readonly results: ReadonlyMap<number, OffloadedResult>;
  /** The message measured alone, before and after. */
  readonly tokensBefore: number;
  readonly tokensAfter: number;
}

/** Gives an offloaded result its store reference: its file in the store, relative to the transcript's folder. */
type ReferenceMaker = (
  message: number,
  candidate: { step: number; tool: string; result: number; text: string },
) => string;

/** The short hash in a store name: the first 16 hex digits of the SHA-256 of the bytes the file holds. */
export function storeHash(content: string): string {
  return createHash('sha256').update(content, 'utf8').digest('hex').slice(0, 16);
}

/** The store file a reference names: relative references are relative to the transcript's folder. */
function storePath(reference: string, offload: NonNullable<FileOptions['offload']>): string {
  return offload.home === undefined ? path.resolve(reference) : path.resolve(offload.home, reference);
}

/**
 * The store references of a conversation's results: `DIR/FOLDER/{step}_{tool}_{call id}-{hash}.txt`, FOLDER being the
 * input file's path (and the record, in a file of several conversations), each segment a portable name (so it stays
 * under DIR and the store can be copied to any file system); written relative to the transcript's folder when it is
 * known.
 */
function referenceMaker(
  source: SourceText,
  slot: Slot,
  adapter: FormatAdapter,
  normalized: Normalized,
  offload: FileOptions['offload'],
): ReferenceMaker | null {
  if (offload === undefined) return null;
  const parts =
    source.file === '<stdin>'
      ? ['stdin']
      : source.file
          .split(/[/\\]+/)
          .filter((p) => p !== '' && p !== '.')
          .map(portableName);
  const folder = path.join(
    offload.dir,
    ...(parts.length > 0 ? parts : ['stdin']),
    ...(slot.record !== undefined ? [`record-${slot.record}`] : []),
  );
  let pairing: ReturnType<NonNullable<FormatAdapter['pairing']>> | null | undefined;
  const idsOf = (message: number): (string | null)[] => {
    pairing ??= adapter.pairing?.(conversationInput(source, slot)) ?? null;
    const items = new Set(itemsReader(normalized.itemsOf)(message));
    return (pairing?.results ?? []).filter((r) => items.has(r.item)).map((r) => r.id);
  };
  return (message, c) => {
    // Named by its bytes too: two results of one name hold other bytes (another name) or the same (one file).
    const file = path.join(
      folder,
      storeKey(c.step, c.tool, idsOf(message)[c.result] ?? null, c.result, storeHash(c.text)),
    );
    return offload.home === undefined ? file : path.relative(offload.home, file);
  };
}

/** Each entry's range narrowed to the items really rewritten (left as it is when none of its items is). */
function narrowedTo(entries: readonly PrunedItems[], edits: ReadonlyMap<number, string>): PrunedItems[] {
  return entries.map((e) => {
    let start = Infinity;
    let end = -Infinity;
    for (let k = e.start; k < e.end; k++) {
      if (!edits.has(k)) continue;
      start = Math.min(start, k);
      end = Math.max(end, k + 1);
    }
    return start === Infinity ? e : rangedItems(e, start, end);
  });
}

/**
 * Pruned or offloaded items over another range, their counts read from the entry when asked for (a spread would
 * count every message's tokens before now: pruning alone on a big file keeps thousands of pruned results).
 */
function rangedItems(e: PrunedItems, start: number, end: number): PrunedItems {
  return {
    message: e.message,
    start,
    end,
    tools: e.tools,
    get tokensBefore(): number {
      return e.tokensBefore;
    },
    get tokensAfter(): number {
      return e.tokensAfter;
    },
  };
}

/** The offloaded messages the output holds, in the file's item positions. */
function offloadedItems(offloads: readonly ChainOffload[], normalized: Normalized, plan: Plan): PrunedItems[] {
  const kept = new Set(plan.kept);
  const itemsAt = itemsReader(normalized.itemsOf);
  const out: PrunedItems[] = [];
  for (const o of offloads) {
    if (!kept.has(o.message)) continue;
    const items = itemsAt(o.message);
    if (items.length === 0) continue;
    out.push({
      message: o.message,
      start: Math.min(...items),
      end: Math.max(...items) + 1,
      tools: [...o.results.keys()].map((k) =>
        normalized.messages[o.message] === undefined ? '' : toolOf(normalized.messages[o.message] as Message, k),
      ),
      tokensBefore: o.tokensBefore,
      tokensAfter: o.tokensAfter,
    });
  }
  return out.sort((a, b) => a.message - b.message);
}

/** The tool name of a message's result. */
function toolOf(message: Message, result: number): string {
  const content = typeof message.content === 'function' ? message.content() : message.content;
  return content.results[result]?.name ?? '';
}

/** The new texts of the offloaded items, written by the format with Haystack's `tool_result_offloaded` marker. */
function offloadRaws(
  slot: Slot,
  adapter: FormatAdapter,
  normalized: Normalized,
  offloaded: readonly PrunedItems[],
  offloads: readonly ChainOffload[],
): Map<number, string> {
  const out = new Map<number, string>();
  if (offloaded.length === 0 || adapter.writePruned === undefined) return out;
  const byMessage = new Map(offloads.map((o) => [o.message, o]));
  for (const r of offloaded) {
    const o = byMessage.get(r.message) as ChainOffload;
    // Every result of the message has its slot in the items: the ones not offloaded are left as they are (null).
    const count = Math.max(
      contentOf(normalized.messages[r.message] as Message).results.length,
      Math.max(...o.results.keys()) + 1,
    );
    const texts = Array.from({ length: count }, (_, k) => o.results.get(k)?.text ?? null);
    const references = [...o.results.values()].map((x) => x.reference);
    const written = adapter.writePruned({
      raws: slot.raws,
      items: (normalized.contentItemsOf ?? normalized.itemsOf)[r.message] ?? [],
      texts,
      originalTokens: 0,
      marker: { key: OFFLOADED_META_KEY, value: references.length === 1 ? references[0] : references },
    });
    for (const [item, raw] of written) out.set(item, raw);
  }
  return out;
}

/**
 * The store files of a slot's offloaded results: each result's text as `NAME`, and beside it its record
 * `NAME.{hash}.swc.json` (a `StoreRecord`: the items as they were and as they were written, and where they live), so
 * `swc restore` can put them back byte for byte. Both are named by their bytes: a record differs per conversation,
 * the result's text may be shared.
 */
function storeFiles(
  slot: Slot,
  adapter: FormatAdapter,
  offloads: readonly ChainOffload[],
  offloaded: readonly PrunedItems[],
  edits: ReadonlyMap<number, string>,
  finals: ReadonlyMap<number, string>,
  options: FileOptions,
): StoreFile[] {
  const out: StoreFile[] = [];
  if (options.offload === undefined) return out;
  const held = new Set(offloaded.map((o) => o.message));
  const seen = new Set<string>();
  const add = (file: StoreFile): void => {
    if (seen.has(file.path)) return;
    seen.add(file.path);
    out.push(file);
  };
  for (const o of offloads) {
    if (!held.has(o.message)) continue;
    const item = offloaded.find((x) => x.message === o.message) as PrunedItems;
    for (const r of o.results.values()) {
      const file = storePath(r.reference, options.offload);
      add({ path: file, content: r.original });
      // The items of the message this result's pointer sits in, as read and as written.
      const pointer = JSON.stringify(quoteReference(r.reference)).slice(1, -1);
      const items: { item: number; raw: string; written: string }[] = [];
      for (let k = item.start; k < item.end; k++) {
        if (!edits.has(k)) continue;
        const written = finals.get(k);
        if (written !== undefined && written !== '' && (edits.get(k) as string).includes(pointer))
          items.push({ item: k, raw: slot.raws[k] as string, written });
      }
      const record: StoreRecord = {
        swc: 'offload-record',
        version: 2,
        format: adapter.name,
        ...(options.conversationKey !== undefined ? { conversationKey: options.conversationKey } : {}),
        ...(options.conversationPath !== undefined ? { conversationPath: options.conversationPath } : {}),
        where: slot.where,
        message: o.message,
        items,
      };
      const content = `${JSON.stringify(record)}\n`;
      add({ path: `${file}.${storeHash(content)}.swc.json`, content });
    }
  }
  return out;
}

/**
 * The messages a pruning replaced whose input index is among `kept`: of a plan made without counting, only those
 * are worked out.
 */
function keptPrunings(p: PrunePlan, origin: readonly (number | null)[], kept: ReadonlySet<number>): PrunedMessage[] {
  const isKept = (index: number): boolean => {
    const at = origin[index];
    return at !== null && at !== undefined && kept.has(at);
  };
  const lazy = p.lazy;
  if (lazy === undefined) return p.pruned.filter((r) => isKept(r.index));
  return lazy.candidates.filter(isKept).flatMap((index) => lazy.prunedAt(index) ?? []);
}

/** The pruned messages the output holds, in the file's item positions. */
function prunedItems(pruning: readonly ChainPruning[], normalized: Normalized, plan: Plan): PrunedItems[] {
  const kept = new Set(plan.kept);
  const itemsAt = itemsReader(normalized.itemsOf);
  const out: PrunedItems[] = [];
  for (const { plan: p, origin } of pruning) {
    for (const r of keptPrunings(p, origin, kept)) {
      const message = origin[r.index] as number;
      const items = itemsAt(message);
      if (items.length === 0) continue;
      out.push({
        message,
        start: Math.min(...items),
        end: Math.max(...items) + 1,
        tools: r.tools,
        // Counted when an output shows it.
        get tokensBefore(): number {
          return r.tokensBefore;
        },
        tokensAfter: r.tokensAfter,
      });
    }
  }
  return out.sort((a, b) => a.message - b.message);
}

/** The new texts of the pruned items, written by the format. */
function prunedRaws(
  raws: readonly string[],
  adapter: FormatAdapter,
  normalized: Normalized,
  pruned: readonly PrunedItems[],
  pruning: readonly ChainPruning[],
): Map<number, string> {
  const out = new Map<number, string>();
  if (pruned.length === 0 || adapter.writePruned === undefined) return out;
  const texts = new Map<number, readonly string[]>();
  const wanted = new Set(pruned.map((r) => r.message));
  for (const { plan: p, origin } of pruning) {
    for (const r of keptPrunings(p, origin, wanted)) texts.set(origin[r.index] as number, r.texts);
  }
  for (const r of pruned) {
    // The count before is read only by formats that record it (Haystack's meta `original_tokens`).
    const written = adapter.writePruned({
      raws,
      items: (normalized.contentItemsOf ?? normalized.itemsOf)[r.message] ?? [],
      texts: texts.get(r.message) ?? [],
      get originalTokens(): number {
        return r.tokensBefore;
      },
    });
    for (const [item, raw] of written) out.set(item, raw);
  }
  return out;
}

/** A conversation with its outcome, worked out the first time an output asks for it (a plain run may never). */
function withOutcome(
  c: Omit<ConversationResult, 'outcome'> & Pick<Planned, 'itemLength' | 'input' | 'measured' | 'groupsExact'>,
  settings: OutcomeSettings,
): ConversationResult {
  let outcome: ConversationOutcome | null = null;
  return {
    ...c,
    get outcome(): ConversationOutcome {
      outcome ??= outcomeOf(c, settings);
      return outcome;
    },
  };
}

/**
 * Plans a conversation against window thresholds. A first plan against the trigger tells whether it is
 * reached; only then a second one aims at the target, reusing every count of the first.
 */
function planAgainstWindow(
  source: SourceText,
  layout: Layout,
  slot: Slot,
  messages: readonly Message[],
  options: FileOptions,
  window: WindowThresholds,
  template: string | null,
): { plan: Plan; target: number; toolTokens: number } {
  return planWithThresholds(
    messages,
    options.counter,
    { minKeepSteps: options.minKeepSteps, note: template, exhaustive: options.exhaustive },
    window,
    toolsText(source, layout, slot),
  );
}

/**
 * The plan against window thresholds for a conversation whose tool schemas (as Haystack measures them) are known:
 * the file pipeline's and the in-memory library's one way of deciding with `--context-window`.
 * @param messages the normalized conversation
 * @param inner the counter
 * @param settings the decision's settings besides the target (`note` is the resolved template)
 * @param window the trigger and the target
 * @param tools the schemas' text, or null without any
 */
export function planWithThresholds(
  messages: readonly Message[],
  inner: TokenCounter,
  settings: {
    readonly minKeepSteps?: number | undefined;
    readonly note: string | null;
    readonly exhaustive?: boolean | undefined;
  },
  window: WindowThresholds,
  tools: string | null,
): { plan: Plan; target: number; toolTokens: number } {
  const counter = sharingCounter(inner);
  const toolTokens = schemaTokens(messages, counter, tools);
  // Below the trigger means a size of at most trigger - 1 tokens.
  const gate = Math.max(window.trigger - 1 - toolTokens, 0);
  const below = planCompaction(messages, counter, { ...settings, target: gate });
  if (below.unchanged === 'fits') return { plan: below, target: gate, toolTokens };
  const target = Math.max(window.target - toolTokens, 0);
  return { plan: planCompaction(messages, counter, { ...settings, target }), target, toolTokens };
}

/** What tool schemas' text adds to a conversation's size: Haystack appends it after the last message. */
function schemaTokens(messages: readonly Message[], counter: TokenCounter, tools: string | null): number {
  if (tools === null) return 0;
  const toolsRendered: Rendered = { text: tools, images: 0, files: 0 };
  const last = messages.length > 0 ? renderMessage(messages[messages.length - 1] as Message) : null;
  return last === null
    ? counter.measure([toolsRendered])
    : counter.measure([last, toolsRendered]) - counter.measure([last]);
}

/** A counter that passes one object per distinct text to `inner`, whose per-object caches then serve a second plan. */
function sharingCounter(inner: TokenCounter): TokenCounter {
  const seen = new Map<string, Rendered>();
  const canonical = (r: Rendered): Rendered => {
    const known = seen.get(r.text);
    if (known === undefined) {
      seen.set(r.text, r);
      return r;
    }
    return known.images === r.images && known.files === r.files ? known : r;
  };
  // Mapped lazily: a counter that stops at its limit never renders the older messages.
  const mapped = (messages: readonly Rendered[]): readonly Rendered[] => {
    const at = elementReader(messages);
    return lazyList(messages.length, (k) => canonical(at(k)));
  };
  const apart = inner.measureApart?.bind(inner);
  return {
    name: inner.name,
    measure: (messages, limit) => inner.measure(mapped(messages), limit),
    // The messages apart are read for their last characters only: not worth remembering.
    ...(apart === undefined
      ? {}
      : {
          measureApart: (messages: readonly Rendered[], at: ReadonlySet<number>, limit?: number) => {
            const read = elementReader(messages);
            return apart(
              lazyList(messages.length, (k) => (at.has(k) ? read(k) : canonical(read(k)))),
              at,
              limit,
            );
          },
        }),
  };
}

/**
 * The `tools` of a slot's container as Haystack measures them, `json.dumps(tools, sort_keys=True)`, written
 * from a lossless parse of the file's own text (numbers keep their lexeme), or null when there are none.
 */
export function toolsText(source: SourceText, layout: Layout, slot: Slot): string | null {
  if (slot.container === null || !isRecord(slot.container)) return null;
  const tools = own(slot.container, 'tools');
  if (!Array.isArray(tools) || tools.length === 0) return null;
  const text = source.text;
  // Walk down from the value that holds the slot (the file, or its line) to the object whose member is the list.
  let pos = layout.framing === 'jsonl' ? text.lastIndexOf('\n', slot.region.start) + 1 : 0;
  while (pos < text.length && /\s/.test(text.charAt(pos))) pos++;
  for (;;) {
    const c = text.charCodeAt(pos);
    let inner: { start: number; end: number } | undefined;
    if (c === 0x7b) {
      const { members } = objectMembers(text, pos);
      if (members.some((m) => m.value.start === slot.region.start)) {
        const member = findMember(members, 'tools');
        return member === undefined ? null : renderArguments(parseJson(text, member.value.start, member.value.end));
      }
      inner = members.map((m) => m.value).find((v) => v.start <= slot.region.start && slot.region.start < v.end);
    } else if (c === 0x5b) {
      inner = arrayElements(text, pos).elements.find((v) => v.start <= slot.region.start && slot.region.start < v.end);
    }
    if (inner === undefined || inner.start === pos) return null;
    pos = inner.start;
  }
}

/** Settings of an inspect run: the tokenizer named, the format (`auto` or a name) and the records' conversation key. */
export interface InspectOptions {
  readonly tokenizer: TokenizerName;
  /** The counter's parameters (characters per token, image and file costs); Haystack's defaults when left out. */
  readonly counterOptions?: CounterOptions;
  readonly format?: string;
  readonly conversationKey?: string | undefined;
  /** A JSON Pointer to the conversation (`--conversation-path`). */
  readonly conversationPath?: string | undefined;
}

/** Inspects files with one run's settings; the counter is loaded once and stays inside. */
export interface FileInspector {
  /** The tokenizer's name, as outputs show it. */
  readonly tokenizer: string;
  inspect(source: SourceText): Inspection;
}

/**
 * Loads a run's tokenizer once and returns an inspector for its files: the road `swc inspect` takes, reading
 * slots, formats and failures as compacting does.
 */
export async function createInspector(options: InspectOptions): Promise<FileInspector> {
  const counter = await createCounter(options.tokenizer, options.counterOptions);
  const settings = {
    format: options.format,
    counter,
    conversationKey: options.conversationKey,
    conversationPath: options.conversationPath,
  };
  return { tokenizer: counter.name, inspect: (source) => inspectSource(source, settings) };
}

/**
 * Reads a decoded file's structure and problems: every conversation's groups, each counted, and what a provider
 * would reject it for.
 * @param source the decoded input
 * @param options the format (`auto` or a name), the token counter, and the key records hold their conversation under
 * @returns the inspection, named after the counter
 * @throws InputError when the file cannot be laid out, placed in a format or normalized
 */
export function inspectSource(
  source: SourceText,
  options: {
    format?: string;
    counter: TokenCounter;
    conversationKey?: string | undefined;
    conversationPath?: string | undefined;
  },
): Inspection {
  // Not slimmed: the pairing checks read names and ids inside message text (ShareGPT's function calls).
  const layout = readLayout(source, undefined, {
    conversationKey: options.conversationKey,
    conversationPath: options.conversationPath,
  });
  const locate = offsetLocator(source);
  const conversations: InspectedConversation[] = [];
  const formats: string[] = [];
  for (const { slot, adapter } of slotsWithAdapters(layout, options.format, source.file, formats)) {
    conversations.push(inspectSlot(source, slot, adapter, options.counter, locate));
  }
  return { file: source.file, format: formats.join(', '), tokenizer: options.counter.name, conversations };
}

/**
 * Inspects one slot: normalizes it without the items the adapter finds of no known role (they are problems, not
 * messages), counts every group, and checks it.
 */
function inspectSlot(
  source: SourceText,
  slot: Slot,
  adapter: FormatAdapter,
  counter: TokenCounter,
  locateOffset: OffsetLocator,
): InspectedConversation {
  const template = noteTemplate(undefined);
  const locate = (item: number): { line: number; column: number } => locateOffset(slot.offsets[item] ?? 0);
  const pairing = adapter.pairing?.(conversationInput(source, slot)) ?? null;
  const unknown = pairing?.unknownRoles ?? [];
  const { slot: known, original } = withoutItems(slot, new Set(unknown.map((u) => u.item)));
  const normalized = normalizeSlot(source, known, adapter, template);
  const messageOfItem = new Map<number, number>();
  const itemsAt = itemsReader(normalized.itemsOf);
  for (let m = 0; m < normalized.itemsOf.length; m++) {
    for (const item of itemsAt(m)) messageOfItem.set(original[item] as number, m);
  }
  const messageOf = (item: number): number | null => messageOfItem.get(item) ?? null;
  const firstItemOf = (m: number): number | null => {
    const item = itemsAt(m)[0];
    return item === undefined ? null : (original[item] as number);
  };
  const plan = planCompaction(normalized.messages, counter, {
    target: Number.MAX_SAFE_INTEGER,
    exhaustive: true,
    note: null,
  });
  return inspectedConversation({
    where: slot.where,
    format: adapter.name,
    messages: normalized.messages,
    itemsOf: normalized.itemsOf,
    groups: plan.groups,
    tokens: plan.tokensBefore,
    problems: findProblems({
      format: adapter.name,
      pairing,
      messages: normalized.messages,
      messageOf,
      firstItemOf,
      locate,
    }),
    pairingChecked: pairing !== null,
  });
}

/** A slot without some of its items, and for each remaining item the index it had. */
function withoutItems(slot: Slot, drop: ReadonlySet<number>): { slot: Slot; original: number[] } {
  if (drop.size === 0) return { slot, original: slot.items.map((_, k) => k) };
  const original = slot.items.map((_, k) => k).filter((k) => !drop.has(k));
  return {
    slot: {
      ...slot,
      items: original.map((k) => slot.items[k]),
      raws: original.map((k) => slot.raws[k] as string),
      offsets: original.map((k) => slot.offsets[k] as number),
    },
    original,
  };
}

/** The 1-based line and column of an offset in a source's text. */
type OffsetLocator = (offset: number) => { line: number; column: number };

/**
 * Places offsets in a source's text as `positionOf` does, from the starts of its lines, found on first use: a file
 * with many problems is gone through once, not once per problem, and a file held as lines never as one text.
 */
function offsetLocator(source: SourceText): OffsetLocator {
  let starts: number[] | null = null;
  return (offset) => {
    if (starts === null) {
      const found: number[] = [];
      forEachLine(source, (_line, _lineNo, start) => found.push(start));
      starts = found;
    }
    // The last line that starts at or before the offset.
    let lo = 0;
    let hi = starts.length - 1;
    if (hi < 0) return positionOf(source, offset);
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((starts[mid] as number) <= offset) lo = mid;
      else hi = mid - 1;
    }
    const start = starts[lo] as number;
    const line = isLineSource(source) ? (source.lines[lo] as string) : source.text.slice(start, offset);
    return { line: lo + 1, column: lineColumn(line, offset - start).column };
  };
}

/** What `swc restore` did to a file. */
export interface RestoreResult {
  readonly output: string;
  /** Items put back as they were before offloading. */
  readonly restored: number;
  readonly changed: boolean;
}

/** A store record file beside a result, as read. */
export interface StoreRecordFile {
  /** Its path, as errors name it. */
  readonly path: string;
  readonly text: string;
}

/** How restoring reaches the store: the pipeline never reads the disk itself. */
export interface StoreReader {
  /**
   * The result file a pointer's reference names, inside a store (relative references are relative to the
   * transcript's folder), or why it is refused (outside the store, in no store).
   */
  locate(reference: string): { readonly file: string } | { readonly refused: string };
  /**
   * The records beside a located result file (none when there are none, or they may not be read), each named
   * `NAME.{hash}.swc.json` after the result `NAME` (`NAME.swc.json` in stores from before names were hashed):
   * restoring checks each against the hash in its name.
   */
  records(file: string): readonly StoreRecordFile[];
}

/** Settings of one restore. */
export interface RestoreOptions {
  readonly store: StoreReader;
  /** The format, and where conversations are: by default what the store's records say (else as compact finds them). */
  readonly format?: string | undefined;
  readonly conversationKey?: string | undefined;
  readonly conversationPath?: string | undefined;
}

/** A record's entries that a message's items hold exactly as written, or undefined (also for a record not swc's). */
function recordEntries(
  text: string,
  raws: readonly string[],
  items: readonly number[],
): { item: number; raw: string }[] | undefined {
  let entries: unknown;
  try {
    entries = (JSON.parse(text) as { items?: unknown } | null)?.items;
  } catch {
    return undefined;
  }
  if (!Array.isArray(entries) || entries.length === 0) return undefined;
  const out: { item: number; raw: string }[] = [];
  // Matched by what was written, not by position: a later window run may have moved the items.
  for (const e of entries as unknown[]) {
    if (!isRecord(e) || typeof e.raw !== 'string' || typeof e.written !== 'string') return undefined;
    const k = items.find((i) => raws[i] === e.written);
    if (k === undefined) return undefined;
    out.push({ item: k, raw: e.raw });
  }
  return out;
}

/** Whether a text is one JSON value (and, for a line of JSONL, holds no line break but the `\r` of a CRLF ending). */
function isOneJsonValue(text: string, line: boolean): boolean {
  if (line && /[\r\n]/.test(text.endsWith('\r') ? text.slice(0, -1) : text)) return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

const POINTER_IN_JSON = "Tool result offloaded to '";

/** The references of the pointers a file's JSON text holds in its strings, wherever they are (found without parsing). */
function pointerReferences(text: string, limit: number): string[] {
  const out: string[] = [];
  for (
    let at = text.indexOf(POINTER_IN_JSON);
    at !== -1 && out.length < limit;
    at = text.indexOf(POINTER_IN_JSON, at + 1)
  ) {
    // The JSON string goes on to the first quote no backslash escapes.
    let end = at;
    while (end < text.length && text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
    let decoded: string;
    try {
      decoded = JSON.parse(`"${text.slice(at, end)}"`) as string;
    } catch {
      continue;
    }
    const pointer = parsePointer(decoded);
    if (pointer !== null) out.push(pointer.reference);
  }
  return out;
}

/** A reference as an error line shows it: a pointer may name a path of any length, a line shows 200 characters. */
function shownReference(reference: string): string {
  if (reference.length <= 200) return reference;
  const end = /[\ud800-\udbff]/.test(reference[199] as string) ? 199 : 200;
  return `${reference.slice(0, end)}… (${reference.length} characters)`;
}

/** A result's name in a store that names files by their hash: `…-{16 hex digits}.txt`. */
const HASHED_RESULT = /-[0-9a-f]{16}\.txt$/;

/**
 * A result's records, each checked to be what its name says, since what a record holds is put back as history:
 * `NAME.{hash}.swc.json` must hold bytes of that hash. `NAME.swc.json` (stores from before names were hashed) holds
 * nothing to check, so it is taken only beside a result whose name has no hash either: a store that hashes names
 * hashes every record.
 * @param records the records a store reader gave for `file`
 * @param file the located result file
 * @param source the transcript, as errors name it
 * @throws InputError naming the first record that is not what its name says; nothing is then restored
 */
function verifiedRecords(
  records: readonly StoreRecordFile[],
  file: string,
  source: string,
): readonly StoreRecordFile[] {
  const result = path.basename(file);
  for (const record of records) {
    const name = path.basename(record.path);
    const named =
      name.length >= result.length + '.swc.json'.length && name.startsWith(result) && name.endsWith('.swc.json');
    const middle = named ? name.slice(result.length, name.length - '.swc.json'.length) : null;
    let problem: string | null = null;
    if (middle === null || (middle !== '' && !/^\.[0-9a-f]{16}$/.test(middle)))
      problem = `is not named as a record of ${result} (${result}.{hash}.swc.json)`;
    else if (middle === '' && HASHED_RESULT.test(result))
      problem =
        'has no hash in its name, beside a result whose name has one (a store that hashes names hashes every record)';
    else if (middle !== '' && storeHash(record.text) !== middle.slice(1))
      problem = 'does not hold the bytes the hash in its name says (was it edited?)';
    if (problem !== null)
      throw new InputError(`the offload store's record ${record.path} ${problem}; nothing was restored`, source);
  }
  return records;
}

/** Where the store's records say this file's conversations are, from the first record that says it. */
function recordedLayout(
  source: SourceText,
  store: StoreReader,
): Partial<Pick<StoreRecord, 'format' | 'conversationKey' | 'conversationPath'>> {
  const text = source.text;
  for (const reference of pointerReferences(text, 16)) {
    const located = store.locate(reference);
    if (!('file' in located)) continue;
    for (const record of verifiedRecords(store.records(located.file), located.file, source.file)) {
      let parsed: Partial<StoreRecord> | null;
      try {
        parsed = JSON.parse(record.text) as Partial<StoreRecord> | null;
      } catch {
        continue;
      }
      if (parsed?.swc !== 'offload-record' || typeof parsed.format !== 'string') continue;
      // Only a record of this file counts (a pointer quoted from another transcript leads to that one's records).
      const written = Array.isArray(parsed.items)
        ? (parsed.items[0] as { written?: unknown } | undefined)?.written
        : undefined;
      if (typeof written !== 'string' || !text.includes(written)) continue;
      return {
        format: parsed.format,
        ...(typeof parsed.conversationKey === 'string' ? { conversationKey: parsed.conversationKey } : {}),
        ...(typeof parsed.conversationPath === 'string' ? { conversationPath: parsed.conversationPath } : {}),
      };
    }
  }
  return {};
}

/**
 * A store reader for `restoreSource(source, dir, read)`: references inside `dir` (relative ones relative to it), and
 * the record `REF.swc.json` beside each, read with `read`, as stores before hashed records named them.
 */
function readerOf(dir: string, read: (file: string) => string | null): StoreReader {
  return {
    locate(reference) {
      const file = path.resolve(dir, reference);
      const rel = path.relative(dir, file);
      return rel === '' || rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)
        ? { refused: `which is outside the offload store ${dir}` }
        : { file };
    },
    records(file) {
      const text = read(`${file}.swc.json`);
      return text === null ? [] : [{ path: `${file}.swc.json`, text }];
    },
  };
}

/**
 * Puts offloaded results back: every tool result that is a pointer (as offloading writes them; a pointer quoted in
 * other text is no candidate) has its message's items become, byte for byte, the items they were before offloading,
 * as the result's record in the store holds them, when the items are still exactly as offloading wrote them. All or
 * nothing: a pointer that cannot be put back fails the file, naming it.
 * @param source the decoded transcript
 * @param options how the store is reached, and where the conversations are
 * @throws InputError for a pointer outside the store, or whose record is missing, is not what its name says (its
 *   hash) or does not match its items
 */
export function restoreSource(source: SourceText, options: RestoreOptions): RestoreResult;
/**
 * The earlier form: the store directory (absolute) and a reader of its files; reads records named `REF.swc.json`.
 * @deprecated pass `RestoreOptions` with a `StoreReader`, which finds the hashed records of today's stores
 */
export function restoreSource(source: SourceText, dir: string, read: (file: string) => string | null): RestoreResult;
export function restoreSource(
  source: SourceText,
  settings: RestoreOptions | string,
  read?: (file: string) => string | null,
): RestoreResult {
  const options: RestoreOptions =
    typeof settings === 'string' ? { store: readerOf(settings, read ?? (() => null)) } : settings;
  const named = options.format !== undefined && options.format !== 'auto' ? options.format : undefined;
  const given = named !== undefined || options.conversationKey !== undefined || options.conversationPath !== undefined;
  const recorded = given ? {} : recordedLayout(source, options.store);
  // The recorded format is not forced: detection finds it again, and a file of records may mix formats.
  const format = named;
  const layout = readLayout(source, undefined, {
    conversationKey: options.conversationKey ?? recorded.conversationKey,
    conversationPath: options.conversationPath ?? recorded.conversationPath,
  });
  const replacements = new Map<Slot, string>();
  let restored = 0;
  for (const { slot, adapter } of slotsWithAdapters(layout, format, source.file, [])) {
    const normalized = normalizeSlot(source, slot, adapter, null);
    const parts = slot.raws.slice();
    const put = new Set<number>();
    const itemsAt = itemsReader(normalized.itemsOf);
    normalized.messages.forEach((message, m) => {
      if (message.role !== 'tool') return;
      const items = itemsAt(m);
      const at = `${slot.where}: item ${items[0] ?? m}`;
      contentOf(message).results.forEach((r) => {
        if (!isPointerText(r.text)) return;
        const pointer = parsePointer(r.text);
        if (pointer === null)
          throw new InputError(
            `${at} holds a pointer whose reference cannot be read (was it edited?); nothing was restored`,
            source.file,
          );
        const reference = shownReference(pointer.reference);
        const located = options.store.locate(pointer.reference);
        if ('refused' in located)
          throw new InputError(`${at} points at ${reference}, ${located.refused}; nothing was restored`, source.file);
        const records = verifiedRecords(options.store.records(located.file), located.file, source.file);
        if (records.length === 0)
          throw new InputError(
            `${at} points at ${reference}, but the store has no record of it (${shownReference(located.file)}.*.swc.json); nothing was restored`,
            source.file,
          );
        let entries: { item: number; raw: string }[] | undefined;
        let from = '';
        for (const record of records) {
          entries = recordEntries(record.text, slot.raws, items);
          from = record.path;
          if (entries !== undefined) break;
        }
        if (entries === undefined)
          throw new InputError(
            `${at} changed since ${reference} was offloaded, so it cannot be put back; nothing was restored`,
            source.file,
          );
        // A record is trusted only as far as it can be checked: what it puts back must be one JSON value (one line in
        // a JSONL file), as every item offloading replaced was.
        for (const e of entries) {
          if (!isOneJsonValue(e.raw, isLineSource(source))) {
            throw new InputError(
              `${slot.where}: the store's record ${from} does not hold a valid item to put back (was it edited?); nothing was restored`,
              source.file,
            );
          }
          parts[e.item] = e.raw;
          put.add(e.item);
        }
      });
    });
    if (put.size > 0) {
      replacements.set(slot, slot.write(parts));
      restored += put.size;
    }
  }
  const changed = replacements.size > 0;
  return { output: changed ? rebuild(layout, replacements) : source.text, restored, changed };
}
