import { planCompaction, noteTemplate, type Plan } from './core/compact.js';
import type { TokenCounter } from './core/types.js';
import { InputError } from './errors.js';
import { FORMATS, findFormat, formatNames } from './formats/registry.js';
import type { FormatAdapter, Normalized } from './formats/types.js';
import { readLayout, rebuild, type Layout, type Slot } from './io/layout.js';
import { lineColumn, type SourceText } from './io/source.js';

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
}

/** One conversation of a file and its decision. */
export interface ConversationResult {
  readonly slot: Slot;
  readonly normalized: Normalized;
  readonly plan: Plan;
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
}

/** Picks the adapter: the one named, or the first whose shape matches every item. */
export function chooseFormat(slot: Slot, format: string | undefined, file: string): FormatAdapter {
  if (format !== undefined && format !== 'auto') {
    const named = findFormat(format);
    if (!named) throw new InputError(`unknown format "${format}" (choose one of: auto, ${formatNames().join(', ')})`, file);
    return named;
  }
  const found = FORMATS.find((f) => f.listKeys.includes(slot.key ?? f.listKeys[0] ?? '') && f.detect(slot.items, slot.container));
  if (found) return found;
  if (slot.items.length === 0) return FORMATS.find((f) => f.listKeys.includes(slot.key ?? 'messages')) ?? (FORMATS[0] as FormatAdapter);
  throw new InputError(
    `cannot tell the transcript format of ${slot.where} (${describeShape(slot.items[0])}); pass --format (${formatNames().join(', ')})`,
    file,
  );
}

/** A short description of an item's shape, for the "cannot tell" error. */
function describeShape(item: unknown): string {
  if (item === null || typeof item !== 'object') return `first item is ${item === null ? 'null' : typeof item}`;
  if (Array.isArray(item)) return 'first item is a list';
  const keys = Object.keys(item).slice(0, 6);
  return `first item has keys ${keys.map((k) => JSON.stringify(k)).join(', ') || 'none'}`;
}

/** Normalizes a slot with an adapter, pointing errors at the offending item. */
export function normalizeSlot(source: SourceText, slot: Slot, adapter: FormatAdapter, template: string | null): Normalized {
  return adapter.normalize(
    {
      file: source.file,
      items: slot.items,
      raws: slot.raws,
      container: slot.container,
      fail(item, reason): never {
        const { line, column } = lineColumn(source.text, slot.offsets[item] ?? 0);
        throw new InputError(`message ${item + 1}: ${reason}`, source.file, line, column);
      },
    },
    template,
  );
}

/**
 * Writes a slot's items back after a decision: kept items in order, pinned items where they were, the note
 * before the first item of the message it precedes.
 */
export function writeSlot(slot: Slot, adapter: FormatAdapter, normalized: Normalized, plan: Plan): string {
  const keep = new Set<number>(normalized.pinned ?? []);
  for (const m of plan.kept) for (const item of normalized.itemsOf[m] ?? []) keep.add(item);
  const order = [...keep].sort((a, b) => a - b);
  let noteBefore = Infinity;
  if (plan.noteText !== null && plan.noteIndex !== null) {
    for (let pos = plan.noteIndex; pos < plan.kept.length; pos++) {
      const items = normalized.itemsOf[plan.kept[pos] as number] ?? [];
      if (items.length > 0) {
        noteBefore = Math.min(...items);
        break;
      }
    }
  }
  const parts: string[] = [];
  let noteWritten = plan.noteText === null;
  const note = (): void => {
    parts.push(
      slot.writeItem(adapter.makeNote({ text: plan.noteText as string, removed: plan.removedCount, kept: plan.keptCount, items: slot.items })),
    );
    noteWritten = true;
  };
  for (const item of order) {
    if (!noteWritten && item >= noteBefore) note();
    parts.push(slot.raws[item] as string);
  }
  if (!noteWritten) note();
  return slot.write(parts);
}

/**
 * Compacts every conversation in a decoded file.
 * @param source the decoded input
 * @param options target, settings, counter
 * @returns decisions and the output text
 */
export function compactSource(source: SourceText, options: FileOptions): FileResult {
  const layout = readLayout(source);
  const template = noteTemplate(options.note);
  const replacements = new Map<Slot, string>();
  const conversations: ConversationResult[] = [];
  let format = '';
  for (const slot of layout.slots) {
    const adapter = chooseFormat(slot, options.format, source.file);
    format = adapter.name;
    const normalized = normalizeSlot(source, slot, adapter, template);
    const plan = planCompaction(normalized.messages, options.counter, {
      target: options.target,
      minKeepSteps: options.minKeepSteps,
      note: template,
      exhaustive: options.exhaustive,
    });
    conversations.push({ slot, normalized, plan });
    if (plan.changed) replacements.set(slot, writeSlot(slot, adapter, normalized, plan));
  }
  const changed = replacements.size > 0;
  return { file: source.file, format, layout, conversations, changed, output: changed ? rebuild(layout, replacements) : source.text };
}
