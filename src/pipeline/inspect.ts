import { noteTemplate, planCompaction } from '../core/compact.js';
import type { TokenCounter } from '../core/types.js';
import type { FormatAdapter } from '../formats/types.js';
import { itemsReader } from '../formats/types.js';
import { readLayout, type Slot } from '../io/layout.js';
import { forEachLine, isLineSource, positionOf } from '../io/lines.js';
import { lineColumn, type SourceText } from '../io/source.js';
import { findProblems } from '../lint/problems.js';
import { inspectedConversation, type InspectedConversation, type Inspection } from '../outcome/inspection.js';
import { createCounter, type CounterOptions, type TokenizerName } from '../tokens/index.js';
import { conversationInput, normalizeSlot, slotsWithAdapters } from './detect.js';

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
