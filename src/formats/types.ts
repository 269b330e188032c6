import { jsonValueOf, parseJson, type JsonValue } from '../core/json/value.js';
import { elementReader, lazyList } from '../core/lazy-list.js';
import type { Message } from '../core/types.js';

/** One conversation as an adapter receives it: parsed items, their raw text, and the object around them. */
export interface ConversationInput {
  readonly file: string;
  /** Each item parsed natively (cheap; numbers may have lost their lexeme, which only `raws` keeps). */
  readonly items: readonly unknown[];
  /** Each item's exact text in the input. */
  readonly raws: readonly string[];
  /**
   * Whether each item is the whole value its text is the JSON of (the library's messages), not a slimmed copy of a
   * big file's line: the lossless reading of an item is then made from the value (`itemValue`), its text unwritten.
   */
  readonly whole?: boolean;
  /** The object that holds the item list (request body, record), or null for a bare list or JSONL. */
  readonly container: Readonly<Record<string, unknown>> | null;
  /** Throws an InputError that points at an item. */
  fail(item: number, reason: string): never;
}

/** A conversation in the core's terms, with the link back to the items each message came from. */
export interface Normalized {
  /**
   * The messages. A normalization that can be continued (`more`) may hand over the list it continues: read this
   * property when the messages are needed rather than keeping the array, which a continuation grows.
   */
  readonly messages: Message[];
  /** For each message, the indices of the items it stands for (empty for instructions held outside the list). */
  readonly itemsOf: readonly (readonly number[])[];
  /** Items that belong to no message and are always kept where they are (e.g. leading non-message lines). */
  readonly pinned?: readonly number[];
  /**
   * For each message, the items its content is read from, when not all of its items are (a Claude Code message
   * holds a sub-agent's lines, which it does not render). Default: `itemsOf`.
   */
  readonly contentItemsOf?: readonly (readonly number[])[];
  /**
   * Optional: the normalization of a longer input whose first items are the ones this was made from, unchanged (the
   * same values, in the same `items` array grown in place, read with the same note template), continued from where
   * this one ended instead of reading those items again. Callable once: the continuation carries on its state.
   */
  readonly more?: (input: ConversationInput) => Normalized;
}

/**
 * Item `k` read losslessly, as `parseJson` reads its text: from the item itself where it is whole (no text written
 * and parsed again), from its text otherwise.
 */
export function itemValue(input: Pick<ConversationInput, 'items' | 'raws' | 'whole'>, k: number): JsonValue {
  return (input.whole === true ? jsonValueOf(input.items[k]) : undefined) ?? parseJson(input.raws[k] as string);
}

/** What a note is made from. */
export interface NoteRequest {
  readonly text: string;
  readonly removed: number;
  readonly kept: number;
  /** The parsed items, so a note can copy the file's own conventions. */
  readonly items: readonly unknown[];
}

/** What a summary message is made from: its whole text (wrapper included) and how many messages it replaced. */
export interface SummaryWrite {
  readonly text: string;
  /** Haystack's `summarized_messages`: the messages of the conversation that round replaced. */
  readonly summarized: number;
  /** The parsed items, so a summary can copy the file's own conventions. */
  readonly items: readonly unknown[];
}

/** What was decided for a list whose kept items refer to each other by id (Claude Code's `parentUuid` chain). */
export interface FinishRequest {
  /** The parsed items and their exact text, as the adapter received them. */
  readonly items: readonly unknown[];
  readonly raws: readonly string[];
  /** The indices of the items kept, ascending. */
  readonly kept: readonly number[];
  /** The item index the note is written before (Infinity: after the last kept item), or null without a note. */
  readonly noteBefore: number | null;
  /** The note as `makeNote` built it, or null without a note. */
  readonly note: unknown;
}

/** What an adapter changes after the decision so references stay valid; everything else is written as it came. */
export interface Finished {
  /** New text for some kept items, by item index (only references inside them may differ). */
  readonly raws?: ReadonlyMap<number, string>;
  /** The note to write instead of the one `makeNote` built. */
  readonly note?: unknown;
}

/** One message whose tool results a pruning replaced, to be written into the message's own items. */
export interface PruneWrite {
  /** Every item's exact text, as the adapter received them. */
  readonly raws: readonly string[];
  /** The items the message stands for, ascending. */
  readonly items: readonly number[];
  /** The new text of each of its results, in the order `normalize` gave them; null leaves a result as it is. */
  readonly texts: readonly (string | null)[];
  /** The message's tokens before pruning (Haystack records them as `original_tokens`). */
  readonly originalTokens: number;
  /**
   * The markers Haystack files add to the message's `meta`, in order, instead of pruning's `context_compaction`
   * (offloading's: the compactor's `context_compaction`, then `tool_result_offloaded` with its references).
   */
  readonly markers?: readonly { readonly key: string; readonly value: unknown }[];
}

/** A transcript format: recognises its items, normalizes them, and writes its note. Adapters never decide. */
export interface FormatAdapter {
  readonly name: string;
  /** Keys under which an object container holds this format's list, in order of preference. */
  readonly listKeys: readonly string[];
  /**
   * Optional: patterns, anchored at the start, of message texts whose beginning `normalize` reads (after leading
   * whitespace) to tell what a message is. Texts that match are kept whole in the slim items (see io/slim.ts);
   * any other long text is read only when a message is rendered.
   */
  readonly readsTextStarting?: readonly RegExp[];
  /**
   * The objects of its items whose long strings a file read slim should sketch (length and ends, see
   * src/io/slim.ts), because its messages give them as `Message.sketch`: tool results, which pruning and offloading
   * test without reading their texts again. Formats without it have their texts read again when those decide.
   */
  readonly sketchesIn?: (record: Readonly<Record<string, unknown>>) => boolean;
  /** Whether these items (and container) are in this format: some rule of `detection` holds (see `detectedBy`). */
  detect(items: readonly unknown[], container: Readonly<Record<string, unknown>> | null): boolean;
  /** The ways a list can be in this format, any one enough. */
  readonly detection: readonly DetectionRule[];
  /** @param noteTemplate the active note template, to recognise earlier notes in formats without metadata */
  normalize(input: ConversationInput, noteTemplate: string | null): Normalized;
  /** The note as a value of this format. */
  makeNote(request: NoteRequest): unknown;
  /**
   * Optional: a summary as a value of this format, for formats that mark it (Haystack's `meta.context_compaction`).
   * Without it a summary is written as the format writes a note: a user text message (see `makeSummaryItem`).
   */
  makeSummary?(request: SummaryWrite): unknown;
  /**
   * Optional: relinks kept items whose references pointed at removed ones and places the note in the chain.
   * Formats whose items do not refer to each other leave it out.
   */
  finish?(request: FinishRequest): Finished;
  /**
   * Optional: a new item (the note, a summary) as written where it stands, given the item written right before it (the
   * one right after it when it comes first). Codex lines copy their neighbour's timestamp. Without it, new items are
   * written as made.
   */
  placeNew?(value: unknown, neighbour: unknown): unknown;
  /**
   * Optional, for `swc inspect`: the tool calls and results of the items with their call ids, and the items
   * whose role the format does not know. Reads the items only (it runs before, and without, `normalize`).
   */
  pairing?(input: ConversationInput): Pairing;
  /**
   * Optional: writes a pruned message: the new text of each changed item, in which only the content of each result
   * differs (call ids, error flags and every other byte stay). Without it, a format's results cannot be pruned.
   */
  writePruned?(request: PruneWrite): ReadonlyMap<number, string>;
}

/**
 * One way a list can be in a format: every item passes `each`, some item passes `some` (when given), and the object
 * around the list passes `container` (when given). Rules of this form can be checked for a list that grows, item by
 * item, without reading the items before again (a warm compactor's detection does).
 */
export interface DetectionRule {
  readonly each: (item: unknown) => boolean;
  readonly some?: (item: unknown) => boolean;
  readonly container?: (container: Readonly<Record<string, unknown>> | null) => boolean;
}

/** A format's detection by its rules: a non-empty list of which some rule holds. */
export function detectedBy(detection: readonly DetectionRule[]): Pick<FormatAdapter, 'detect' | 'detection'> {
  return {
    detection,
    detect: (items, container) =>
      items.length > 0 &&
      detection.some(
        (rule) =>
          (rule.container === undefined || rule.container(container)) &&
          items.every(rule.each) &&
          (rule.some === undefined || items.some(rule.some)),
      ),
  };
}

/** One tool call as `pairing` reports it. */
export interface PairedCall {
  /** The item (index into `input.items`) that holds the call. */
  readonly item: number;
  /** The call id, or null when the format or the item gives none (then calls and results pair by tool name, in order). */
  readonly id: string | null;
  readonly name: string;
  /**
   * Optional: the unit the call is made in, for formats whose pairing unit is not the normalized message
   * (Claude Code sub-agent lines). A call or result with a `turn` pairs only with one of the same `turn`.
   */
  readonly turn?: string;
}

/** One tool result as `pairing` reports it: one entry per call it answers. */
export interface PairedResult {
  readonly item: number;
  /** The id of the call it answers, or null when it names none. */
  readonly id: string | null;
  /** The tool's name when the result says it (used to pair results without ids), else ''. */
  readonly name: string;
  /** Optional: the unit of the call it answers (see `PairedCall.turn`). */
  readonly turn?: string;
}

/** What `pairing` finds in a conversation's items. */
export interface Pairing {
  /** In item order; within one item, in the order they appear. */
  readonly calls: readonly PairedCall[];
  readonly results: readonly PairedResult[];
  /** Items that are not messages of a role this format knows (`normalize` would refuse them); role null when there is none. */
  readonly unknownRoles?: readonly { readonly item: number; readonly role: string | null }[];
  /** Other problems a provider would reject, each at an item. */
  readonly problems?: readonly { readonly item: number; readonly text: string }[];
  /**
   * Optional: calls left without a result because the run was still going when the file was copied (a Codex session
   * read while Codex runs): each a warning, never an error, and left out of `calls`.
   */
  readonly running?: readonly { readonly item: number; readonly text: string }[];
  /**
   * Optional: results without an id may answer calls that have one, by tool name in order (Gemini, where ids
   * are optional on either side). Otherwise a result without an id answers only calls without one.
   */
  readonly idsOptional?: boolean;
}

/**
 * A new item as the format writes it at its place (`FormatAdapter.placeNew`), next to item `neighbour` of `items`.
 * @param neighbour the item written right before it, else right after it; undefined when there is none
 */
export function placedNew(
  adapter: FormatAdapter,
  value: unknown,
  items: readonly unknown[],
  neighbour: number | undefined,
): unknown {
  return adapter.placeNew === undefined || neighbour === undefined ? value : adapter.placeNew(value, items[neighbour]);
}

/** A summary message as a value of the adapter's format: its own `makeSummary`, else its note, a user text message. */
export function makeSummaryItem(adapter: FormatAdapter, request: SummaryWrite): unknown {
  return (
    adapter.makeSummary?.(request) ??
    adapter.makeNote({ text: request.text, removed: request.summarized, kept: 0, items: request.items })
  );
}

/**
 * `itemsOf` of a format whose every message is one item, the item of the same index: made as it is read, since a long
 * file would otherwise hold a one-element list for each of its messages. Read it with `itemsReader` in a loop.
 */
export function oneItemEach(count: number): readonly (readonly number[])[] {
  return lazyList(count, (k) => [k]);
}

/**
 * The normalization of a format whose every message is one item, continued at most once by `continueWith`, which
 * appends to the same list: the list is handed over as it is, and copied only once a continuation has grown it, so
 * a warm step does not copy the whole conversation and an earlier result still reads the messages it was made of.
 * @param messages the messages read so far (a continuation appends to this list)
 * @param continueWith reads a longer input on from `messages`
 */
export function continuableOneEach(
  messages: Message[],
  continueWith: (next: ConversationInput, messages: Message[]) => Normalized,
): Normalized {
  const n = messages.length;
  let continued = false;
  let own: Message[] | null = null;
  return {
    get messages(): Message[] {
      if (!continued) return messages;
      own ??= messages.slice(0, n);
      return own;
    },
    itemsOf: oneItemEach(n),
    more(next) {
      if (continued) throw new Error('a normalization is continued once');
      continued = true;
      return continueWith(next, messages);
    },
  };
}

const NO_ITEMS: readonly number[] = Object.freeze([]);

/**
 * Reads `itemsOf` message by message: a lazy one's elements through its producer (indexing it passes each index
 * through a proxy trap, as a string: a summary line's counts over 100,000 messages took ~100 ms so), and no items
 * past its end.
 */
export function itemsReader(itemsOf: Normalized['itemsOf']): (message: number) => readonly number[] {
  const read = elementReader(itemsOf);
  const length = itemsOf.length;
  return (m) => (m >= 0 && m < length ? (read(m) ?? NO_ITEMS) : NO_ITEMS);
}

/** A plain-object guard that does not trust prototypes. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether an object has no own keys but these (a note's exact shape, say). */
export function hasOnlyKeys(value: Record<string, unknown>, keys: readonly string[]): boolean {
  return Object.keys(value).every((key) => keys.includes(key));
}

/** Reads an own property only (a `__proto__` or `constructor` key in the input is data, not behaviour). */
export function own(value: Record<string, unknown>, key: string): unknown {
  return Object.prototype.hasOwnProperty.call(value, key) ? value[key] : undefined;
}
