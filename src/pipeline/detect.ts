import { elementReader } from '../core/lazy-list.js';
import { parseJson } from '../core/json/value.js';
import { renderArguments } from '../core/json/python.js';
import { InputError, NoConversationError } from '../errors.js';
import { FORMATS, findFormat, formatNames } from '../formats/registry.js';
import { isRecord, own, type ConversationInput, type FormatAdapter, type Normalized } from '../formats/types.js';
import { arrayElements, findMember, objectMembers } from '../io/json-layout.js';
import { CONVERSATION_KEYS, type Layout, type Slot } from '../io/layout.js';
import { positionOf } from '../io/lines.js';
import type { SourceText } from '../io/source.js';

/** What choosing a format reads of a slot (the library hands in a list of its own). */
export type SlotShape = Pick<Slot, 'where' | 'items' | 'container' | 'key' | 'record'>;

/**
 * Auto-detection of a bare list (no key) that grows: which format `chooseFormat` would find for the list read so far,
 * each new item read once against every format's rules (`FormatAdapter.detection`). A list it finds no format for is
 * left to `chooseFormat`, which says why (or takes a partly broken list).
 */
export class GrowingDetection {
  private seen = 0;
  /** Per format, per rule: whether every item so far passed `each`, and whether some passed `some`. */
  private readonly state: { each: boolean; some: boolean }[][];

  constructor(container: Readonly<Record<string, unknown>> | null) {
    this.state = FORMATS.map((f) =>
      f.detection.map((rule) => ({
        each: rule.container === undefined || rule.container(container),
        some: rule.some === undefined,
      })),
    );
  }

  /**
   * The format of `items`, whose first items are those read before (the same values), or undefined for none.
   * @param items the list, grown since the last call
   */
  formatOf(items: readonly unknown[]): FormatAdapter | undefined {
    const n = items.length;
    // Through the list's reader: a stream's list (see stream.ts) is then read without a proxy trap per item.
    const at = elementReader(items);
    FORMATS.forEach((f, i) => {
      const states = this.state[i] as { each: boolean; some: boolean }[];
      f.detection.forEach((rule, r) => {
        const st = states[r] as { each: boolean; some: boolean };
        for (let k = this.seen; k < n && st.each; k++) {
          const item = at(k);
          if (!rule.each(item)) st.each = false;
          else if (!st.some && (rule.some as (item: unknown) => boolean)(item)) st.some = true;
        }
      });
    });
    this.seen = n;
    if (n === 0) return undefined;
    return FORMATS.find((_, i) =>
      (this.state[i] as { each: boolean; some: boolean }[]).some((st) => st.each && st.some),
    );
  }
}

/** Picks the adapter: the one named, or the first whose shape matches every item. */
export function chooseFormat(slot: SlotShape, format: string | undefined, file: string): FormatAdapter {
  if (format !== undefined && format !== 'auto') {
    const named = findFormat(format);
    if (!named)
      throw new InputError(`unknown format "${format}" (choose one of: auto, ${formatNames().join(', ')})`, file);
    return named;
  }
  // Formats that name the list's key are tried first; a format-specific key (`contents`, `input`) allows no
  // other, a record's key (`messages`, `traj`, `history`, a --conversation-key) allows any.
  const key = slot.key;
  const detects = (f: FormatAdapter): boolean => f.detect(slot.items, slot.container);
  const open =
    key === null ||
    (CONVERSATION_KEYS as readonly string[]).includes(key) ||
    !FORMATS.some((f) => f.listKeys.includes(key));
  const found =
    (key === null ? undefined : FORMATS.find((f) => f.listKeys.includes(key) && detects(f))) ??
    (open ? FORMATS.find(detects) : undefined);
  if (found) return found;
  const partial = formatOfTheRest(slot, key, open);
  if (partial) return partial;
  if (slot.items.length === 0)
    return FORMATS.find((f) => f.listKeys.includes(slot.key ?? 'messages')) ?? (FORMATS[0] as FormatAdapter);
  // The file's only list, none of whose items is a message of any format, holds no conversation; a record's list, or
  // one whose items are messages that fit no one format together, is a broken transcript.
  const holdsNone =
    slot.record === undefined && !slot.items.some((item) => FORMATS.some((f) => f.detect([item], slot.container)));
  throw new (holdsNone ? NoConversationError : InputError)(
    `cannot tell the transcript format of ${slot.where} (${describeShape(slot.items[0])}); pass --format (${formatNames().join(', ')})${recordHint(slot)}`,
    file,
  );
}

/**
 * The format of a list in which some items are broken: the first format whose own items, taken together, are in
 * it, when every other item fits no format at all. Its checks then name the broken item ("message 3: expected a
 * message object, found a number"). A list mixing two formats' messages gets none, and stays "cannot tell".
 */
function formatOfTheRest(slot: SlotShape, key: string | null, open: boolean): FormatAdapter | undefined {
  const fitsAlone = (f: FormatAdapter, item: unknown): boolean => f.detect([item], slot.container);
  const takes = (f: FormatAdapter): boolean => {
    const fitting = slot.items.filter((item) => fitsAlone(f, item));
    if (fitting.length === 0 || !f.detect(fitting, slot.container)) return false;
    return slot.items.every((item) => fitsAlone(f, item) || !FORMATS.some((g) => fitsAlone(g, item)));
  };
  return (
    (key === null ? undefined : FORMATS.find((f) => f.listKeys.includes(key) && takes(f))) ??
    (open ? FORMATS.find(takes) : undefined)
  );
}

/** When the items look like records holding a list of objects under some key, names --conversation-key for it. */
function recordHint(slot: SlotShape): string {
  const item = slot.items[0];
  if (slot.record !== undefined || !isRecord(item)) return '';
  const key = Object.keys(item).find((k) => {
    const value = own(item, k);
    return Array.isArray(value) && value.length > 0 && value.every(isRecord);
  });
  return key === undefined
    ? ''
    : `, or --conversation-key ${JSON.stringify(key)} if each item is a record holding its conversation there`;
}

/** A short description of an item's shape, for the "cannot tell" error. */
function describeShape(item: unknown): string {
  if (item === null || typeof item !== 'object') return `first item is ${item === null ? 'null' : typeof item}`;
  if (Array.isArray(item)) return 'first item is a list';
  const keys = Object.keys(item).slice(0, 6);
  return `first item has keys ${keys.map((k) => JSON.stringify(k)).join(', ') || 'none'}`;
}

/** Normalizes a slot with an adapter, pointing errors at the offending item. */
export function normalizeSlot(
  source: SourceText,
  slot: Slot,
  adapter: FormatAdapter,
  template: string | null,
): Normalized {
  return adapter.normalize(conversationInput(source, slot), template);
}

/** A slot as an adapter reads it, with the one wording for an item it refuses (the record, the message, where it starts). */
export function conversationInput(source: SourceText, slot: Slot): ConversationInput {
  return {
    file: source.file,
    items: slot.items,
    raws: slot.raws,
    container: slot.container,
    fail(item, reason): never {
      const { line, column } = positionOf(source, slot.offsets[item] ?? 0);
      const where = slot.record === undefined ? '' : `${slot.where}, `;
      throw new InputError(`${where}message ${item + 1}: ${reason}`, source.file, line, column);
    },
  };
}

/** The adapter of a slot: the format asked for or detected; an empty conversation among records takes the one before it. */
function adapterOf(
  slot: Slot,
  previous: FormatAdapter | null,
  format: string | undefined,
  file: string,
): FormatAdapter {
  return slot.items.length === 0 && previous !== null ? previous : chooseFormat(slot, format, file);
}

/**
 * Each slot of a layout with its adapter, chosen as the slot is reached (so a file's errors come in slot order), and
 * the names of the formats met so far, in order, as a file's result names them.
 * @param known a slot whose format was found already (while its lines were read, see stream.ts)
 */
export function* slotsWithAdapters(
  layout: Layout,
  format: string | undefined,
  file: string,
  names: string[],
  known: { readonly slot: Slot; readonly adapter: FormatAdapter } | null = null,
): Generator<{ slot: Slot; adapter: FormatAdapter }> {
  let previous: FormatAdapter | null = null;
  for (const slot of layout.slots) {
    const adapter: FormatAdapter = known?.slot === slot ? known.adapter : adapterOf(slot, previous, format, file);
    previous = adapter;
    if (!names.includes(adapter.name)) names.push(adapter.name);
    yield { slot, adapter };
  }
}

/**
 * The `tools` of a slot's container as Haystack measures them, `json.dumps(tools, sort_keys=True)`, written
 * from a lossless parse of the file's own text (numbers keep their lexeme), or null when there are none.
 */
export function toolsText(source: SourceText, layout: Layout, slot: Slot): string | null {
  if (slot.container === null || !isRecord(slot.container)) return null;
  const tools = own(slot.container, 'tools');
  if (!Array.isArray(tools) || tools.length === 0) return null;
  const text = source.text;
  // Walk down from the value that holds the slot (the file, or its line) to the object whose member is the list.
  let pos = layout.framing === 'jsonl' ? text.lastIndexOf('\n', slot.region.start) + 1 : 0;
  while (pos < text.length && /\s/.test(text.charAt(pos))) pos++;
  for (;;) {
    const c = text.charCodeAt(pos);
    let inner: { start: number; end: number } | undefined;
    if (c === 0x7b) {
      const { members } = objectMembers(text, pos);
      if (members.some((m) => m.value.start === slot.region.start)) {
        const member = findMember(members, 'tools');
        return member === undefined ? null : renderArguments(parseJson(text, member.value.start, member.value.end));
      }
      inner = members.map((m) => m.value).find((v) => v.start <= slot.region.start && slot.region.start < v.end);
    } else if (c === 0x5b) {
      inner = arrayElements(text, pos).elements.find((v) => v.start <= slot.region.start && slot.region.start < v.end);
    }
    if (inner === undefined || inner.start === pos) return null;
    pos = inner.start;
  }
}
