import { renderMessage } from '../core/render.js';
import type { Rendered, TokenCounter } from '../core/types.js';
import { itemsReader, type ConversationInput, type Normalized } from '../formats/types.js';
import { carriedMessages, samePrefix } from '../library/mirror.js';
import type { PrefixSums } from '../tokens/approx.js';

/**
 * A policy's history from call to call, kept so that a call costs what its new messages cost. Between two calls the
 * history only grows (the reply and the messages after it are appended) unless the hook compacted it. While it only
 * grows, a format that can continue its normalization (`Normalized.more`) reads the new items alone, only the new
 * messages are rendered, and a counter whose group counts add up message by message (`sumsMessages`) counts only
 * them and the message before. A compaction, or a format that cannot continue, reads the history whole again, as a
 * compaction itself does.
 */

/** What the history is as sent: its messages normalized and rendered, its tokens, and how much is as it was. */
export interface Look {
  readonly normalized: Normalized;
  readonly rendered: readonly Rendered[];
  readonly tokens: number;
  /**
   * How many leading messages are the very rendered objects of the history as last looked at (its whole length when
   * the history only grew since): they are the same messages, so a prefix cache reads them without comparing.
   */
  readonly unchanged: number;
}

/** How the history reads its items and counts its messages. */
export interface HistoryReading {
  /** The items as the format reads them (errors name the item in the file). */
  inputOf(items: readonly unknown[]): ConversationInput;
  /** Reads a whole input as the format does. */
  normalize(input: ConversationInput): Normalized;
  readonly counter: TokenCounter;
  /**
   * Whether the counter's count of a group is each message's count before another plus the last one's count alone
   * (and their flat costs): then a grown list's count is the old count with the old last message re-counted before
   * the new ones. True of the BPE counters (src/tokens/bpe.ts); not of `approx`, whose one division rounds the whole.
   */
  readonly sumsMessages: boolean;
  /**
   * Set for a counter whose count of a group is a function of sums over its messages (`approx`): a grown list's
   * count, and any prefix's, is then worked out from running sums.
   */
  readonly prefixSums?: PrefixSums;
}

/**
 * Renders messages as the hook counts them, each message once: a message read from the same item objects as one
 * rendered before (kept items stay the same objects from call to call) is the same rendered object, so the counter's
 * own cache counts it once and prefixes compare by identity.
 */
class RenderCache {
  private readonly known = new WeakMap<object, { readonly items: readonly unknown[]; readonly rendered: Rendered }>();

  /** The rendered messages of a normalized list of items, from message `from` on. */
  render(normalized: Normalized, items: readonly unknown[], from = 0): Rendered[] {
    const itemsAt = itemsReader(normalized.itemsOf);
    const messages = normalized.messages;
    const out: Rendered[] = [];
    for (let k = from; k < messages.length; k++) {
      const own = itemsAt(k).map((i) => items[i]);
      const first = own[0];
      const key = typeof first === 'object' && first !== null ? first : null;
      const hit = key === null ? undefined : this.known.get(key);
      if (hit !== undefined && hit.items.length === own.length && hit.items.every((x, i) => x === own[i])) {
        out.push(hit.rendered);
        continue;
      }
      const rendered = renderMessage(messages[k]!);
      if (key !== null) this.known.set(key, { items: own, rendered });
      out.push(rendered);
    }
    return out;
  }
}

/** What the last look read: the messages normalized and rendered, and their count. */
interface LastLook {
  readonly normalized: Normalized;
  readonly rendered: Rendered[];
  readonly tokens: number;
}

/** A policy's history: its items, and what was read of them at the last look. */
export class History {
  private items: unknown[];
  private readonly renders = new RenderCache();
  /** The last look, while `items` has only grown since (null when it must be read whole). */
  private last: LastLook | null = null;
  /** The last look before a compaction replaced the items, and the items it read: what is the same is kept. */
  private replaced: { readonly look: LastLook; readonly items: readonly unknown[] } | null = null;
  /** With `prefixSums`: the total length and flat cost of the first k messages of the last look, at index k. */
  private readonly sums = { chars: [0], flat: [0] };

  /**
   * @param items the messages before the first call
   * @param reading how items are read and counted
   */
  constructor(
    items: readonly unknown[],
    private readonly reading: HistoryReading,
  ) {
    this.items = [...items];
  }

  /** The items as they stand (the compactor is handed them; it copies what it keeps). */
  get current(): readonly unknown[] {
    return this.items;
  }

  /** Appends the items of a reply and what follows it. */
  append(items: readonly unknown[]): void {
    for (const item of items) this.items.push(item);
  }

  /** Replaces the history with a compaction's result: it is read whole at the next look. */
  replace(items: readonly unknown[]): void {
    this.replaced = this.last === null ? null : { look: this.last, items: this.items };
    this.items = [...items];
    this.last = null;
  }

  /** The history as it stands, read from where the last look ended when it only grew since. */
  look(): Look {
    const last = this.last;
    const items = this.items;
    const more = last?.normalized.more;
    if (last === null || more === undefined) {
      const normalized = this.reading.normalize(this.reading.inputOf(items));
      // The messages a compaction left as they were read keep their renderings and running sums.
      const kept = last === null ? this.keptSince(normalized) : null;
      const from = kept === null ? 0 : kept.count;
      const rendered = kept === null ? [] : kept.rendered.slice(0, from);
      for (const r of this.renders.render(normalized, items, from)) rendered.push(r);
      const tokens = this.reading.prefixSums === undefined ? this.measure(rendered) : this.summed(rendered, from);
      this.last = { normalized, rendered, tokens };
      this.replaced = null;
      return { normalized, rendered, tokens, unchanged: 0 };
    }
    // The continuation only appends: the messages read before are the same, their renderings too.
    const normalized = more(this.reading.inputOf(items));
    const from = last.rendered.length;
    const rendered = last.rendered;
    for (const r of this.renders.render(normalized, items, from)) rendered.push(r);
    const tokens =
      this.reading.prefixSums === undefined
        ? this.grownCount(rendered, from, last.tokens)
        : this.summed(rendered, from);
    this.last = { normalized, rendered, tokens };
    return { normalized, rendered, tokens, unchanged: from };
  }

  /**
   * How many leading messages of a reading after a compaction say what the last look before it read (see
   * `carriedMessages`; only for a format that continues its normalizations), and that look's renderings.
   */
  private keptSince(normalized: Normalized): { readonly count: number; readonly rendered: readonly Rendered[] } | null {
    const replaced = this.replaced;
    if (replaced === null || replaced.look.normalized.more === undefined) return null;
    const was = replaced.items;
    const same = samePrefix(was, this.items, Math.min(was.length, this.items.length));
    const count = Math.min(carriedMessages(replaced.look.normalized, normalized, same), replaced.look.rendered.length);
    return { count, rendered: replaced.look.rendered };
  }

  /**
   * The count of the first `n` messages of a look: known for the messages unchanged since the look before (their
   * count then) and for all of them; in between, grown from the first when the counter sums messages.
   */
  prefixTokens(look: Look, before: number, n: number): number {
    if (n === look.rendered.length) return look.tokens;
    if (n === look.unchanged && n > 0) return before;
    const sums = this.reading.prefixSums;
    // The sums are the last look's, which is the one asked about (a later look only appends to them).
    if (sums !== undefined && look.rendered === this.last?.rendered)
      return sums.countOf(this.sums.chars[n] as number, this.sums.flat[n] as number, n);
    if (this.reading.sumsMessages && look.unchanged > 0 && n > look.unchanged)
      return this.grownCount(look.rendered, look.unchanged, before, n);
    return this.measure(look.rendered.slice(0, n));
  }

  /** The count of the whole of `rendered` from the running sums, carried on from message `from` (kept up to there). */
  private summed(rendered: readonly Rendered[], from: number): number {
    const sums = this.reading.prefixSums as PrefixSums;
    const { chars, flat } = this.sums;
    chars.length = from + 1;
    flat.length = from + 1;
    for (let k = from; k < rendered.length; k++) {
      const r = rendered[k] as Rendered;
      chars.push((chars[k] as number) + sums.lengthOf(r));
      flat.push((flat[k] as number) + sums.flatOf(r));
    }
    const n = rendered.length;
    return sums.countOf(chars[n] as number, flat[n] as number, n);
  }

  /** A group's count; an empty group counts 0. */
  measure(rendered: readonly Rendered[]): number {
    return rendered.length === 0 ? 0 : this.reading.counter.measure(rendered);
  }

  /**
   * The count of the first `end` messages of `rendered`, whose first `from` counted `was`: the messages after those
   * and the one before counted alone.
   */
  private grownCount(rendered: readonly Rendered[], from: number, was: number, end = rendered.length): number {
    if (from === end) return was;
    if (!this.reading.sumsMessages || from === 0)
      return this.measure(end === rendered.length ? rendered : rendered.slice(0, end));
    return was - this.measure([rendered[from - 1]!]) + this.measure(rendered.slice(from - 1, end));
  }
}
