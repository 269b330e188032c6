import { growsOnly } from '../core/growing.js';
import { lazyList } from '../core/lazy-list.js';
import { InputError } from '../errors.js';
import type { ConversationInput, FormatAdapter, Normalized } from '../formats/types.js';
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
    return { input, adapter, normalized };
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
