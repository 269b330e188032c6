import type { Plan } from '../core/compact.js';
import { InputError } from '../errors.js';
import type { ConversationInput, FormatAdapter, Normalized } from '../formats/types.js';
import { itemsReader, makeSummaryItem, placedNew } from '../formats/types.js';
import { inventoryOf, type LocatedIdentifier } from '../outcome/forgotten.js';
import {
  entryOrder,
  finishedWrite,
  type OutputEntry,
  type PlacedSummary,
  type SummarizedConversation,
} from '../pipeline/index.js';

/** What a compaction forgets, worked out on first call: removed messages and the results pruning replaced. */
export function forgottenOf(
  read: Normalized,
  decided: Normalized,
  plan: Plan,
  summaries: readonly string[],
): () => readonly LocatedIdentifier[] {
  let found: readonly LocatedIdentifier[] | null = null;
  const itemsAt = itemsReader(read.itemsOf);
  return () => {
    found ??= inventoryOf({
      original: read.messages,
      decided: decided.messages,
      kept: plan.kept,
      removed: plan.removed,
      replaced: plan.kept.filter((m) => decided.messages[m] !== read.messages[m]),
      offloaded: [],
      added: [plan.noteText, ...summaries],
      positionOf: (m) => itemsAt(m)[0] ?? m,
    }).forgotten;
    return found;
  };
}

/**
 * The summarized list: the output's messages in order, kept ones as the objects passed in (pruned ones parsed from
 * the text the format wrote), each summary as the format writes it (or `createNote` of its text).
 */
export function assembleEntries<M>(
  adapter: FormatAdapter,
  input: ConversationInput,
  messages: readonly M[],
  normalized: Normalized,
  output: readonly OutputEntry[],
  summarized: SummarizedConversation,
  pruned: ReadonlyMap<number, string>,
  createNote: ((text: string) => M) | undefined,
): M[] {
  if (adapter.finish !== undefined && output.filter((e) => !('input' in e)).length > 0) {
    throw new InputError(
      `strategy summarize cannot write ${adapter.name} messages in memory: their lines link to each other; use swc compact`,
      'messages',
    );
  }
  const pinned = [...(normalized.pinned ?? [])].sort((a, b) => a - b);
  const itemsAt = itemsReader(normalized.itemsOf);
  const out: M[] = [];
  const valueOf = (entry: OutputEntry, position: number): unknown => {
    if ('summary' in entry) {
      const s = summarized.summaries.find((x) => x.position === position) as PlacedSummary;
      return createNote !== undefined
        ? createNote(s.text)
        : makeSummaryItem(adapter, { text: s.text, summarized: s.summarized, items: input.items });
    }
    if (!('note' in entry)) return null;
    return createNote !== undefined
      ? createNote(entry.note)
      : adapter.makeNote({ text: entry.note, removed: entry.removed, kept: entry.kept, items: input.items });
  };
  // The order a file is written in (`entryOrder`), the kept messages as the objects passed in.
  for (const step of entryOrder(output, itemsAt, pinned, summarized.summaries)) {
    if ('item' in step) {
      const changed = pruned.get(step.item);
      out.push(changed === undefined ? (messages[step.item] as M) : (JSON.parse(changed) as M));
      continue;
    }
    const value = valueOf(output[step.entry] as OutputEntry, step.entry);
    out.push((createNote !== undefined ? value : placedNew(adapter, value, input.items, step.near)) as M);
  }
  return out;
}

/**
 * The compacted list: kept messages (the objects passed in) in order, messages that stand for no message of their
 * own where they were, and the note before the first kept message after it. A format whose messages refer to each
 * other (Claude Code's `parentUuid`) relinks kept messages whose parent was removed, and a pruned message is the text
 * the format wrote for it: those come back as new objects, parsed from that text.
 */
export function assemble<M>(
  adapter: FormatAdapter,
  input: ConversationInput,
  messages: readonly M[],
  normalized: Normalized,
  plan: Plan,
  pruned: ReadonlyMap<number, string>,
  createNote: ((text: string) => M) | undefined,
): M[] {
  const raws = pruned.size === 0 ? input.raws : input.raws.map((raw, k) => pruned.get(k) ?? raw);
  const written = finishedWrite(adapter, input.items, raws, normalized, plan);
  const { order, noteBefore, edited } = written;
  let note = written.note;
  if (createNote !== undefined && plan.noteText !== null) note = createNote(plan.noteText);
  const out: M[] = [];
  let noteWritten = plan.noteText === null;
  let previous: number | undefined;
  const place = (next?: number): M =>
    (createNote === undefined ? placedNew(adapter, note, input.items, previous ?? next) : note) as M;
  for (const item of order) {
    if (!noteWritten && item >= noteBefore) {
      out.push(place(item));
      noteWritten = true;
    }
    const changed = edited?.get(item) ?? pruned.get(item);
    out.push(changed === undefined ? (messages[item] as M) : (JSON.parse(changed) as M));
    previous = item;
  }
  if (!noteWritten) out.push(place());
  return out;
}
