import type { Plan } from '../core/compact.js';
import { elementReader, lazyList } from '../core/lazy-list.js';
import { InputError } from '../errors.js';
import { itemsReader, makeSummaryItem, placedNew, type FormatAdapter, type Normalized } from '../formats/types.js';
import { compress, type CompressionFormat } from '../io/compressed.js';
import type { Slot } from '../io/layout.js';
import { isLineSource } from '../io/lines.js';
import { encodeOutput } from '../io/source.js';
import { noteBeforeItem, writtenItems } from '../outcome/outcome.js';
import type { OutputEntry, PlacedSummary } from './steps/step.js';
import type { FileResult } from './types.js';

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
  const { order, noteBefore, note: noteValue, edited } = finishedWrite(adapter, slot.items, raws, normalized, plan);
  const parts: string[] = [];
  let noteWritten = plan.noteText === null;
  let previous: number | undefined;
  const note = (next?: number): void => {
    parts.push(slot.writeItem(placedNew(adapter, noteValue, slot.items, previous ?? next)));
    noteWritten = true;
  };
  for (const item of order) {
    if (!noteWritten && item >= noteBefore) note(item);
    const text = edited?.get(item) ?? (raws[item] as string);
    if (finals?.has(item) === true) finals.set(item, text);
    parts.push(text);
    previous = item;
  }
  if (!noteWritten) note();
  return slot.write(parts);
}

/** What writing a plan's kept items needs, worked out once for files and for the library's lists alike. */
export interface FinishedWrite {
  /** The items written, in order. */
  readonly order: readonly number[];
  /** The item the note is written before (Infinity: after the last one). */
  readonly noteBefore: number;
  /** The note as the format writes it (null without one). */
  readonly note: unknown;
  /** New text for kept items whose references the format relinked. */
  readonly edited: ReadonlyMap<number, string> | undefined;
}

/**
 * The items a plan writes, in order, and its note as the format makes it; a format whose items link to each other
 * (Claude Code's `parentUuid`) relinks what was kept and chains the note in.
 * @param raws the items' texts, pruned ones with their placeholders
 */
export function finishedWrite(
  adapter: FormatAdapter,
  items: readonly unknown[],
  raws: readonly string[],
  normalized: Normalized,
  plan: Plan,
): FinishedWrite {
  const order = writtenItems(plan, normalized);
  const noteBefore = noteBeforeItem(plan, normalized);
  const note: unknown =
    plan.noteText === null
      ? null
      : adapter.makeNote({ text: plan.noteText, removed: plan.removedCount, kept: plan.keptCount, items });
  if (adapter.finish === undefined) return { order, noteBefore, note, edited: undefined };
  const done = adapter.finish({
    items,
    raws,
    kept: order,
    noteBefore: plan.noteText === null ? null : noteBefore,
    note,
  });
  return { order, noteBefore, note: done.note !== undefined ? done.note : note, edited: done.raws };
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
  for (const step of entryOrder(entries, itemsAt, pinned, summaries)) {
    if ('item' in step) {
      const text = edited?.get(step.item) ?? (raws[step.item] as string);
      if (finals?.has(step.item) === true) finals.set(step.item, text);
      parts.push(text);
    } else {
      const value = finished ?? valueOf(entries[step.entry] as OutputEntry, step.entry);
      parts.push(slot.writeItem(placedNew(adapter, value, slot.items, step.near)));
    }
  }
  return slot.write(parts);
}

/** One step of writing a conversation's output: a kept item, or the new item of an entry with the item it goes near. */
export type OrderStep = { readonly item: number } | { readonly entry: number; readonly near: number | undefined };

/**
 * The order an output is written in, for a file and for the library's arrays alike. Kept messages between two new
 * ones are written in line order, pinned items among them: a message's items need not be adjacent (a Codex call's
 * output can follow a later step, an event can stand between an item's lines). Pinned items that stood before what a
 * summary replaced (or before the next kept message) stay before the new item; a new item goes near the item written
 * last, else the next one (`placedNew`).
 * @param pinned the items of no message, ascending
 */
export function entryOrder(
  entries: readonly OutputEntry[],
  itemsAt: (message: number) => readonly number[],
  pinned: readonly number[],
  summaries: readonly PlacedSummary[],
): OrderStep[] {
  const out: OrderStep[] = [];
  let p = 0;
  let previous: number | undefined;
  const item = (k: number): void => {
    out.push({ item: k });
    previous = k;
  };
  const firstItem = (messages: readonly number[]): number =>
    Math.min(...messages.flatMap((m) => [...itemsAt(m)]), Infinity);
  let run: number[] = [];
  const flush = (): void => {
    for (const k of run.sort((a, b) => a - b)) {
      while (p < pinned.length && (pinned[p] as number) < k) item(pinned[p++] as number);
      item(k);
    }
    run = [];
  };
  entries.forEach((entry, position) => {
    if ('input' in entry) {
      run.push(...itemsAt(entry.input));
      return;
    }
    flush();
    const s = 'summary' in entry ? summaries.find((x) => x.position === position) : undefined;
    const next = entries.slice(position + 1).find((e): e is { input: number } => 'input' in e);
    const bound = s !== undefined ? firstItem(s.replaced) : next !== undefined ? firstItem([next.input]) : Infinity;
    while (p < pinned.length && (pinned[p] as number) < bound) item(pinned[p++] as number);
    const after = Math.min(pinned[p] ?? Infinity, bound);
    out.push({ entry: position, near: previous ?? (Number.isFinite(after) ? after : undefined) });
  });
  flush();
  while (p < pinned.length) item(pinned[p++] as number);
  return out;
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
