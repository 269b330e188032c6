import { growsOnly } from '../core/growing.js';
import { lazyList } from '../core/lazy-list.js';
import { remembersMessages } from '../core/prune.js';
import type { Message } from '../core/types.js';
import { InputError } from '../errors.js';
import { itemsReader, type ConversationInput, type FormatAdapter, type Normalized } from '../formats/types.js';
import { GrowingDetection } from '../pipeline/index.js';
import { JsonCache, stillHolds, type AsJson, type JsonEntry } from './memory.js';

/** The messages as the adapters read them, the format they were read in, and the normalized conversation. */
export interface ReadMessages {
  readonly input: ConversationInput;
  readonly adapter: FormatAdapter;
  readonly normalized: Normalized;
}

/** What the mirror asks of the compactor: the format of the items, and how a format normalizes them. */
export interface MirrorReading {
  /** The adapter for these items, and the container their instructions are handed in. */
  formatOf(items: readonly unknown[]): { adapter: FormatAdapter; container: Record<string, unknown> | null };
  /** Whether `formatOf` detects the format of a bare list (no format named, no instructions beside it). */
  readonly detects: boolean;
  readonly noteTemplate: string | null;
  /** Take each message read before as unchanged while it is the same object (no shape check; `assumeUnchanged`). */
  readonly assumeUnchanged: boolean;
  /** The messages are compacted once (`compactMessages`): no shape is recorded for a later call (see JsonCache). */
  readonly once?: boolean;
}

/**
 * A warm compactor's copy of the conversation it read last: the message objects, each one's JSON and the shape it
 * was read at, and the normalized conversation. The next call reads only what changed since: the messages up to the
 * first one that is not the same object with the same shape at the same index are taken as read; the rest is read
 * again. When the call only adds messages after those (the same array pushed to, or a fresh array holding the same
 * objects first, as the AI SDK hands them over), a format that can continue its normalization (`Normalized.more`)
 * reads the new messages alone. Anything else (a message replaced, edited in place, deleted or moved) normalizes the
 * whole conversation again, its messages' JSON still taken from the cache while their objects keep their shapes.
 * Detection goes the same way: a list that only grew has its new messages read against each format's rules.
 * With `assumeUnchanged`, a message is the same while it is the same object: its shape is not walked again.
 */
export class MessageMirror {
  private readonly cache: JsonCache;
  private objects: unknown[] = [];
  private entries: JsonEntry[] = [];
  private items: unknown[] = [];
  private last: { readonly adapter: FormatAdapter; readonly normalized: Normalized } | null = null;
  private detection: GrowingDetection | null = null;

  constructor(private readonly reading: MirrorReading) {
    this.cache = new JsonCache(reading.assumeUnchanged, reading.once === true);
  }

  /**
   * Reads the messages of one call.
   * @throws InputError for something other than an array, and for a message the format refuses
   */
  read(messages: unknown): ReadMessages {
    if (!Array.isArray(messages))
      throw new InputError(
        `expected an array of messages, found ${messages === null ? 'null' : typeof messages}`,
        'messages',
      );
    try {
      return this.readList(messages as readonly unknown[]);
    } catch (error) {
      // A call that failed part way leaves nothing half read behind it.
      this.forget();
      throw error;
    }
  }

  private readList(messages: readonly unknown[]): ReadMessages {
    const n = messages.length;
    const same = this.unchangedPrefix(messages);
    const extends_ = same === this.objects.length;
    if (!extends_) {
      // New arrays, so the lists an earlier result still holds keep what they held.
      this.objects = this.objects.slice(0, same);
      this.entries = this.entries.slice(0, same);
      this.items = this.items.slice(0, same);
    }
    const { objects, entries, items } = this;
    // Indexed, not iterated: a hole in a sparse array is read as undefined and refused like any other non-message.
    for (let k = same; k < n; k++) {
      const message = messages[k];
      const entry = this.cache.entryOf(message, k);
      objects.push(message);
      entries.push(entry);
      items.push(entry.json.item);
    }
    const read = this.entries;
    // Written only for the messages rendered or rewritten (see AsJson).
    const raws = lazyList(n, (k) => ((read[k] as JsonEntry).json as AsJson).raw());
    const { adapter, container } = this.formatOf(extends_);
    const input: ConversationInput = {
      file: 'messages',
      whole: true,
      items: this.items,
      raws,
      container,
      fail(item, reason): never {
        throw new InputError(reason, `messages[${item}]`);
      },
    };
    const last = this.last;
    const more = extends_ && last !== null && last.adapter === adapter ? last.normalized.more : undefined;
    const normalized = more !== undefined ? more(input) : adapter.normalize(input, this.reading.noteTemplate);
    this.last = { adapter, normalized };
    // Its list is the mirror's own, which later calls only append to (a continuation) or leave (a new one).
    growsOnly(normalized.messages);
    if (this.reading.once !== true) this.remember(normalized, last?.adapter === adapter ? last.normalized : null, same);
    return { input, adapter, normalized };
  }

  /**
   * Lets pruning learn each message of this reading once, keeping what it learned of the same messages read last:
   * those a continuation kept (the same objects), or, for a format that continues its normalizations, those made of
   * the same items before `same` (see `carriedMessages`).
   */
  private remember(normalized: Normalized, before: Normalized | null, same: number): void {
    const list = normalized.messages;
    if (before === null) return remembersMessages(list);
    const was = before.messages;
    if (was === list) return remembersMessages(list);
    const count =
      before.more === undefined
        ? 0
        : was.length <= list.length && samePrefix(was, list, was.length) === was.length
          ? was.length
          : carriedMessages(before, normalized, same);
    remembersMessages(list, { from: was, count });
  }

  /** The format of the items read, detected from the new ones alone when the list only grew. */
  private formatOf(extends_: boolean): { adapter: FormatAdapter; container: Record<string, unknown> | null } {
    if (!this.reading.detects) return this.reading.formatOf(this.items);
    if (!extends_ || this.detection === null) this.detection = new GrowingDetection(null);
    const found = this.detection.formatOf(this.items);
    // No format takes the whole list: detection proper says why, or finds the format of a partly broken one.
    return found === undefined ? this.reading.formatOf(this.items) : { adapter: found, container: null };
  }

  /** How many messages, from the first, are the objects read last time at the same index, with the same shapes. */
  private unchangedPrefix(messages: readonly unknown[]): number {
    const { objects, entries } = this;
    const m = Math.min(messages.length, objects.length);
    let k = 0;
    if (this.reading.assumeUnchanged) return samePrefix(messages, objects, m);
    while (k < m) {
      const message = messages[k];
      if (message !== objects[k] || !stillHolds(message, entries[k] as JsonEntry)) break;
      k++;
    }
    return k;
  }

  /** Forgets the conversation read last (the JSON cache stays: it vouches for each object by its shape). */
  private forget(): void {
    this.objects = [];
    this.entries = [];
    this.items = [];
    this.last = null;
    this.detection = null;
  }
}

/**
 * Where, from `from` on and below `m`, two lists first hold different values, index by index (`m` when they hold the
 * same). Four at a time: it is the one part of a warm step that reads the whole conversation, and this runs it about
 * a third faster.
 */
export function samePrefix(a: readonly unknown[], b: readonly unknown[], m: number, from = 0): number {
  let k = from;
  while (k + 4 <= m && a[k] === b[k] && a[k + 1] === b[k + 1] && a[k + 2] === b[k + 2] && a[k + 3] === b[k + 3]) k += 4;
  while (k < m && a[k] === b[k]) k++;
  return k;
}

/**
 * How many messages, from the first, say what the messages read last said: made of the same items, all before `same`
 * (the objects read last, with their shapes), with the same marks. A compaction that rewrote a message near the end
 * (pruning replaces the results of the step before the newest) leaves the rest to be read again, not rendered again.
 * Only for a format that continues its normalizations (`Normalized.more`): a message of it stands for the items up to
 * its own alone, so the same items read at the same place say the same.
 * @param before the normalization of the items read last
 * @param now the normalization of the items read now
 * @param same how many leading items are the objects read last, unchanged
 * @returns how many leading messages of `now` say what those of `before` said
 */
export function carriedMessages(before: Normalized, now: Normalized, same: number): number {
  const wasAt = itemsReader(before.itemsOf);
  const isAt = itemsReader(now.itemsOf);
  const wasContent = before.contentItemsOf;
  const isContent = now.contentItemsOf;
  const was = before.messages;
  const is = now.messages;
  const m = Math.min(was.length, is.length);
  for (let k = 0; k < m; k++) {
    const a = wasAt(k);
    const b = isAt(k);
    if (!sameItems(a, b, same) || !sameItems(wasContent?.[k] ?? a, isContent?.[k] ?? b, same)) return k;
    if (!sameMarks(was[k] as Message, is[k] as Message)) return k;
  }
  return m;
}

/** Whether two messages stand for the same items, all of them before `end`. */
function sameItems(a: readonly number[], b: readonly number[], end: number): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i] || (a[i] as number) >= end) return false;
  return true;
}

/** Whether two messages have the same role and marks. */
function sameMarks(p: Message, q: Message): boolean {
  return (
    p.role === q.role &&
    p.compaction === q.compaction &&
    p.weight === q.weight &&
    p.exactNote === q.exactNote &&
    p.offloaded === q.offloaded &&
    p.fixed === q.fixed
  );
}
