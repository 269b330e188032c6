import { noteTemplate } from '../core/compact.js';
import { isEarlierNoteText } from '../core/note.js';
import { isSummaryText } from '../core/summarize.js';
import type { Plan } from '../core/compact.js';
import { elementReader } from '../core/lazy-list.js';
import { InputError } from '../errors.js';
import { isSketchedRecord, isTellingText } from '../formats/registry.js';
import type { FormatAdapter, Normalized } from '../formats/types.js';
import { readLayout, rebuild, type ItemSink, type Layout, type Slot } from '../io/layout.js';
import { isLineSource } from '../io/lines.js';
import { SLIM_LONGER_THAN } from '../io/slim.js';
import type { SourceText } from '../io/source.js';
import { outcomeOf, type ConversationOutcome, type OutcomeSettings, type Planned } from '../outcome/outcome.js';
import { createCounter, type CounterOptions, type TokenizerName } from '../tokens/index.js';
import { decide, type Decided } from './chain.js';
import { normalizeSlot, slotsWithAdapters, toolsText } from './detect.js';
import { narrowedTo, offloadRaws, offloadedItems, prunedItems, prunedRaws } from './edits.js';
import type { StrategyName } from './steps/index.js';
import { StreamedRead } from './stream.js';
import type { ChainOptions, OutputEntry, SummarizedConversation } from './steps/step.js';
import { referenceMaker, storeFiles } from './store.js';
import {
  EXACT_COUNT_UP_TO,
  type ConversationResult,
  type FileOptions,
  type FileResult,
  type StoreFile,
  type SummaryRunner,
} from './types.js';
import { writeSlot } from './write.js';

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
  /**
   * @param file where the result is written (its folder, absolute), which offloading's pointers are relative to
   * @throws InputError for a file it cannot compact (with summaries and `strict`, a failed round)
   */
  compact(source: SourceText, file?: { readonly home?: string }): Promise<FileResult>;
}

/**
 * Loads a run's tokenizer once and returns a compactor for its files: the road every command takes, so no caller
 * handles a counter.
 * @param summaries where summarize's replies come from (a chain without summarize needs none)
 */
export async function createFileCompactor(options: RunOptions, summaries?: SummaryRunner): Promise<FileCompactor> {
  const counter = await createCounter(options.tokenizer, options.counterOptions);
  return {
    tokenizer: counter.name,
    async compact(source, file) {
      const offload =
        options.offload !== undefined && file?.home !== undefined
          ? { offload: { ...options.offload, home: file.home } }
          : {};
      if (summaries === undefined) return compactSource(source, { ...options, counter, ...offload });
      const replies = summaries.forFile(source.file, counter);
      const settings = summaries.settings;
      const result = await compactSource(source, {
        ...options,
        counter,
        ...offload,
        summarize: { ...settings, answer: (request) => replies.answer(request) },
      });
      // Laid on, not spread: the result's output is a getter.
      return Object.assign(result, { summaries: await replies.finish(result) });
    },
  };
}

/**
 * Compacts every conversation in a decoded file.
 * @param source the decoded input
 * @param options target, settings, counter
 * @returns decisions and the output text
 */
export async function compactSource(source: SourceText, options: FileOptions): Promise<FileResult> {
  const template = noteTemplate(options.note);
  const stream =
    options.streamBlock === 0
      ? null
      : new StreamedRead(source.file, options.format, template, options.streamBlock, options.keepStreamedItems);
  const layout = readForCompaction(source, options, template, stream ?? undefined);
  const streamed = stream?.finish(source, layout) ?? null;
  const replacements = new Map<Slot, string>();
  const stored: StoreFile[] = [];
  const settings = outcomeSettingsOf(source, options);
  const formats: string[] = [];
  const deciding: Array<Promise<SlotDone & { slot: Slot }>> = [];
  for (const { slot, adapter } of slotsWithAdapters(layout, options.format, source.file, formats, streamed)) {
    const read = streamed?.slot === slot ? streamed.normalized : normalizeSlot(source, slot, adapter, template);
    // Decided together: a conversation awaiting a summary does not hold up the next one's rounds.
    deciding.push(
      compactSlot({ source, layout, slot, adapter, read, options, template, settings }).then((done) => ({
        ...done,
        slot,
      })),
    );
  }
  const decided = await Promise.all(deciding);
  const conversations: ConversationResult[] = decided.map((d) => d.conversation);
  for (const done of decided) {
    if (done.written === null) continue;
    replacements.set(done.slot, done.written);
    stored.push(...done.stored);
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

/** A file's layout read for compacting: long strings left out of the items (slim), but what decisions read of them. */
function readForCompaction(
  source: SourceText,
  options: FileOptions,
  template: string | null,
  sink: ItemSink | undefined,
): Layout {
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
  return readLayout(source, undefined, {
    conversationKey: options.conversationKey,
    conversationPath: options.conversationPath,
    slimming,
    sink,
  });
}

/** What every conversation's outcome is worked out with: one object per file. */
function outcomeSettingsOf(source: SourceText, options: FileOptions): OutcomeSettings {
  let exactBefore: boolean | undefined;
  return {
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
}

/** One conversation of a file to compact, with what the file's run settled. */
interface SlotTask {
  readonly source: SourceText;
  readonly layout: Layout;
  readonly slot: Slot;
  readonly adapter: FormatAdapter;
  /** The slot normalized (while its lines were parsed, or after). */
  readonly read: Normalized;
  readonly options: FileOptions;
  readonly template: string | null;
  readonly settings: OutcomeSettings;
}

/** One conversation decided and written: its result, its new text (null when unchanged), the store files it needs. */
interface SlotDone {
  readonly conversation: ConversationResult;
  readonly written: string | null;
  readonly stored: readonly StoreFile[];
}

/**
 * Decides one conversation and writes it.
 * @throws InputError when pruning or offloading replaced a result the format has no way to write
 */
async function compactSlot(task: SlotTask): Promise<SlotDone> {
  const { source, layout, slot, adapter, read, options, template } = task;
  const strategies = options.strategies ?? ['window'];
  const decided = await decide(
    read.messages,
    options,
    template,
    strategies,
    strategies.length === 1 && strategies[0] === 'window'
      ? null
      : referenceMaker(source, slot, adapter, read, options.offload),
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
  // Outputs see the conversation as decided: pruned and offloaded results hold their placeholders and pointers.
  const normalized: Normalized =
    pruning.length === 0 && offloads.length === 0 ? read : { ...read, messages: decided.messages };
  const offloaded = narrowedTo(offloadCandidates, offloadEdits);
  const conversation = withOutcome(
    {
      slot,
      normalized,
      plan,
      target: decided.target,
      toolTokens: decided.toolTokens,
      pruned: narrowedTo(candidates, edits),
      offloaded,
      strategies,
      leftBelowTrigger: decided.leftBelowTrigger === true,
      itemLength: itemLengths(slot),
      input: read.messages,
      ...(decided.windowSaw === undefined ? {} : { measured: decided.windowSaw }),
      ...(decided.groupsExact === undefined ? {} : { groupsExact: decided.groupsExact }),
      ...summarizedOf(decided),
    },
    task.settings,
  );
  if (!plan.changed) return { conversation, written: null, stored: [] };
  for (const [item, raw] of offloadEdits) edits.set(item, raw);
  const finals = new Map<number, string>();
  for (const item of offloadEdits.keys()) finals.set(item, '');
  const output =
    decided.output !== undefined && decided.summarized !== undefined
      ? { entries: decided.output, summaries: decided.summarized.summaries }
      : undefined;
  const written = writeSlot(slot, adapter, normalized, plan, edits, finals, output);
  return {
    conversation,
    written,
    stored: storeFiles(slot, adapter, offloads, offloaded, offloadEdits, finals, options),
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
  // Through the list's reader: a summary line reads every item's length, and a big file's offsets are a lazy list.
  const at = elementReader(slot.offsets);
  const n = slot.offsets.length;
  return (item) => {
    if (!(item >= 0 && item < n)) return 0;
    return Math.max((item + 1 < n ? at(item + 1) : slot.region.end) - at(item), 0);
  };
}

/** The summarize fields of a conversation's result, present only when summarize was in its chain. */
function summarizedOf(decided: Decided): Pick<ConversationResult, 'summarized' | 'output'> {
  return {
    ...(decided.summarized !== undefined ? { summarized: decided.summarized } : {}),
    ...(decided.output !== undefined ? { output: decided.output } : {}),
  };
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
 * A conversation decided by a chain of strategies without offloading (which writes files), for the in-memory
 * library: the plan, the conversation as decided (pruned results hold their placeholders), and the new text of
 * each pruned item the output holds, written by the format as `swc compact` writes it.
 * @param raws the items' JSON texts, as a file of them would hold them
 * @param tools the tool schemas' text (with thresholds), or null
 * @throws InputError when pruning replaced a result the format has no way to write
 */
export async function decideChain(
  raws: readonly string[],
  adapter: FormatAdapter,
  read: Normalized,
  options: Omit<ChainOptions, 'offload'>,
  template: string | null,
  strategies: readonly StrategyName[],
  tools: string | null,
  where: string,
): Promise<{
  plan: Plan;
  normalized: Normalized;
  edits: Map<number, string>;
  summarized?: SummarizedConversation;
  output?: readonly OutputEntry[];
}> {
  if (strategies.includes('offload')) throw new RangeError('offloading writes files: it has no in-memory chain');
  const decided = await decide(read.messages, options, template, strategies, null, tools);
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
