import { elementReader, liveList } from '../core/lazy-list.js';
import { findFormat } from '../formats/registry.js';
import type { ConversationInput, FormatAdapter, Normalized } from '../formats/types.js';
import type { ItemSink, Layout, Slot } from '../io/layout.js';
import type { SourceText } from '../io/source.js';
import { conversationInput, GrowingDetection } from './detect.js';

/**
 * A JSONL file's conversation normalized while its lines are parsed, so that its items are never all held at once
 * (a 1 GB file's parsed items took ~160 MB beside its messages). The layout hands the parsed items over a block at a
 * time (`ItemSink`); each block is read against every format's rules (`GrowingDetection`, which finds what
 * `chooseFormat` finds) and normalized as a continuation of the blocks before (`Normalized.more`). Only formats that
 * can continue a normalization stream; for any other the layout keeps the items, as it does without a sink.
 *
 * Nothing here decides differently: when the format found at the end is not the one the stream normalized with, or
 * a block could not be read (a message the format refuses, an adapter reading an item of an earlier block), the
 * stream gives up and the slot is detected and normalized again from its items, parsed again from their lines, so
 * that errors and their order are those of the road without a stream.
 */

/** Items a block holds: the larger, the fewer continuations; the smaller, the less held while one is read. */
export const STREAM_BLOCK = 1024;

/**
 * Up to how many items a streamed file still has kept parsed, as a file read without a stream has: the decisions that
 * read items again (pruning's and offloading's sketch of every tool result) then find them in hand, where parsing
 * each again from its line would cost about a third of a `prune,window` run. A parsed slim item takes about 160 bytes
 * beside its message, so these take about 32 MB; a file of more keeps none, and memory follows what is kept.
 */
export const KEEP_STREAMED_ITEMS = 200_000;

/** Thrown when a block's normalization reads outside the block, or refuses an item: the stream gives up. */
class OutsideTheBlock extends Error {}

/** What a stream read, for the one slot it read. */
export interface Streamed {
  readonly slot: Slot;
  readonly adapter: FormatAdapter;
  readonly normalized: Normalized;
}

export class StreamedRead implements ItemSink {
  private block: readonly unknown[] = [];
  private from = 0;
  private count = 0;
  /** The slot's own input, once the layout is done: reads past the stream go to its items and raws. */
  private real: ConversationInput | null = null;
  private readItem: ((k: number) => unknown) | null = null;
  private readonly detection = new GrowingDetection(null);
  private adapter: FormatAdapter | undefined;
  private normalized: Normalized | null = null;
  private failed = false;
  /** The items as the adapter reads them: the block in hand while streaming, then each parsed again from its line. */
  private readonly items = liveList(
    () => this.count,
    (k) => {
      if (this.readItem !== null) return this.readItem(k);
      if (k < this.from) throw new OutsideTheBlock();
      return this.block[k - this.from];
    },
  );
  /** The raw texts, which only rendering reads, after the layout is done. */
  private readonly raws = liveList(
    () => this.count,
    (k) => {
      if (this.real === null) throw new OutsideTheBlock();
      return this.real.raws[k] as string;
    },
  );

  /**
   * @param file the file's name, as messages show it
   * @param format the format asked for, or undefined / 'auto' to detect it
   * @param template the note template the slot is normalized with
   * @param keepUpTo up to how many items the layout keeps while it streams them (see KEEP_STREAMED_ITEMS)
   */
  constructor(
    private readonly file: string,
    private readonly format: string | undefined,
    private readonly template: string | null,
    readonly blockSize: number = STREAM_BLOCK,
    readonly keepUpTo: number = KEEP_STREAMED_ITEMS,
  ) {}

  take(block: readonly unknown[], from: number): boolean {
    this.block = block;
    this.from = from;
    this.count = from + block.length;
    if (from === 0) return this.start();
    if (this.failed) return true;
    try {
      const found = this.found();
      const more = (this.normalized as Normalized).more;
      if (found !== this.adapter || more === undefined) this.failed = true;
      else this.normalized = more(this.input());
    } catch {
      this.failed = true;
    }
    return true;
  }

  /**
   * What the stream read of `layout`'s one slot, or null when it read nothing or gave up (read the slot again).
   * Afterwards its messages read their items and raw texts from the slot.
   */
  finish(source: SourceText, layout: Layout): Streamed | null {
    const slot = layout.slots.length === 1 ? (layout.slots[0] as Slot) : null;
    if (slot === null || this.normalized === null) return null;
    this.real = conversationInput(source, slot);
    this.readItem = elementReader(slot.items);
    this.block = [];
    // The format was checked after every block, the last one included.
    if (this.failed || this.count !== slot.items.length) return null;
    const adapter = this.adapter as FormatAdapter;
    // Without its continuation, which holds what only a longer input would need (the call names read so far).
    const { more: _more, ...normalized } = this.normalized;
    this.normalized = null;
    return { slot, adapter, normalized };
  }

  /** The first block: whether the stream takes the file (a format found, and one that can continue). */
  private start(): boolean {
    try {
      const adapter = this.found();
      if (adapter === undefined) return false;
      const normalized = adapter.normalize(this.input(), this.template);
      if (normalized.more === undefined) return false;
      this.adapter = adapter;
      this.normalized = normalized;
      return true;
    } catch {
      return false;
    }
  }

  /** The format asked for, or the one found for the items so far (undefined for none: `chooseFormat` says why). */
  private found(): FormatAdapter | undefined {
    if (this.format !== undefined && this.format !== 'auto') return findFormat(this.format);
    return this.detection.formatOf(this.items);
  }

  private input(): ConversationInput {
    return {
      file: this.file,
      items: this.items,
      raws: this.raws,
      container: null,
      fail: (item, reason): never => {
        if (this.real === null) throw new OutsideTheBlock();
        return this.real.fail(item, reason);
      },
    };
  }
}
