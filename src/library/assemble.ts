import type { Plan } from '../core/compact.js';
import { InputError } from '../errors.js';
import type { ConversationInput, FormatAdapter, Normalized } from '../formats/types.js';
import { itemsReader, makeSummaryItem, placedNew } from '../formats/types.js';
import { inventoryOf, type LocatedIdentifier } from '../outcome/forgotten.js';
import { finishedWrite, type OutputEntry, type SummarizedConversation } from '../pipeline/index.js';

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
  let p = 0;
  let previous: number | undefined;
  const item = (k: number): void => {
    const changed = pruned.get(k);
    out.push(changed === undefined ? (messages[k] as M) : (JSON.parse(changed) as M));
    previous = k;
  };
  /** A new item where it stands: after the item written last, else before the next entry's first item. */
  const placed = (value: unknown, position: number): M => {
    const next = output
      .slice(position + 1)
      .find((e): e is { input: number } => 'input' in e && itemsAt(e.input).length > 0);
    const after = next === undefined ? undefined : Math.min(...itemsAt(next.input), pinned[p] ?? Infinity);
    return placedNew(adapter, value, input.items, previous ?? after) as M;
  };
  // Kept messages between two new ones go in line order, pinned items among them (see writeEntries).
  let run: number[] = [];
  const flush = (): void => {
    for (const k of run.sort((a, b) => a - b)) {
      while (p < pinned.length && (pinned[p] as number) < k) item(pinned[p++] as number);
      item(k);
    }
    run = [];
  };
  output.forEach((entry, position) => {
    if (!('input' in entry)) flush();
    if ('summary' in entry) {
      const s = summarized.summaries.find((x) => x.position === position);
      if (s === undefined) return;
      out.push(
        createNote !== undefined
          ? createNote(s.text)
          : placed(makeSummaryItem(adapter, { text: s.text, summarized: s.summarized, items: input.items }), position),
      );
      return;
    }
    if ('note' in entry) {
      out.push(
        createNote !== undefined
          ? createNote(entry.note)
          : placed(
              adapter.makeNote({ text: entry.note, removed: entry.removed, kept: entry.kept, items: input.items }),
              position,
            ),
      );
      return;
    }
    run.push(...itemsAt(entry.input));
  });
  flush();
  while (p < pinned.length) item(pinned[p++] as number);
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
