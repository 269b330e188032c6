import path from 'node:path';
import { isPointerLike, parsePointers } from '../core/offload.js';
import { contentOf } from '../core/render.js';
import { InputError } from '../errors.js';
import { isRecord, itemsReader } from '../formats/types.js';
import { readLayout, rebuild, type Slot } from '../io/layout.js';
import { isLineSource } from '../io/lines.js';
import type { SourceText } from '../io/source.js';
import { normalizeSlot, slotsWithAdapters } from './detect.js';
import { verifiedRecords, type StoreRecord, type StoreRecordFile } from './store.js';

/** What `swc restore` did to a file. */
export interface RestoreResult {
  readonly output: string;
  /** Items put back as they were before offloading. */
  readonly restored: number;
  readonly changed: boolean;
}

/** How restoring reaches the store: the pipeline never reads the disk itself. */
export interface StoreReader {
  /**
   * The result file a pointer's reference names, inside a store (relative references are relative to the
   * transcript's folder), or why it is refused (outside the store, in no store).
   */
  locate(reference: string): { readonly file: string } | { readonly refused: string };
  /**
   * The records beside a located result file (none when there are none, or they may not be read), each named
   * `NAME.{hash}.swc.json` after the result `NAME` (`NAME.swc.json` in stores from before names were hashed):
   * restoring checks each against the hash in its name.
   */
  records(file: string): readonly StoreRecordFile[];
}

/** Settings of one restore. */
export interface RestoreOptions {
  readonly store: StoreReader;
  /** The format, and where conversations are: by default what the store's records say (else as compact finds them). */
  readonly format?: string | undefined;
  readonly conversationKey?: string | undefined;
  readonly conversationPath?: string | undefined;
}

/** A record's entries that a message's items hold exactly as written, or undefined (also for a record not swc's). */
function recordEntries(
  text: string,
  raws: readonly string[],
  items: readonly number[],
): { item: number; raw: string }[] | undefined {
  let entries: unknown;
  try {
    entries = (JSON.parse(text) as { items?: unknown } | null)?.items;
  } catch {
    return undefined;
  }
  if (!Array.isArray(entries) || entries.length === 0) return undefined;
  const out: { item: number; raw: string }[] = [];
  // Matched by what was written, not by position: a later window run may have moved the items.
  for (const e of entries as unknown[]) {
    if (!isRecord(e) || typeof e.raw !== 'string' || typeof e.written !== 'string') return undefined;
    const k = items.find((i) => raws[i] === e.written);
    if (k === undefined) return undefined;
    out.push({ item: k, raw: e.raw });
  }
  return out;
}

/** Whether a text is one JSON value (and, for a line of JSONL, holds no line break but the `\r` of a CRLF ending). */
function isOneJsonValue(text: string, line: boolean): boolean {
  if (line && /[\r\n]/.test(text.endsWith('\r') ? text.slice(0, -1) : text)) return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

const POINTER_IN_JSON = 'Tool result offloaded to ';

/** The references of the pointers a file's JSON text holds in its strings, wherever they are (found without parsing). */
function pointerReferences(text: string, limit: number): string[] {
  const out: string[] = [];
  for (
    let at = text.indexOf(POINTER_IN_JSON);
    at !== -1 && out.length < limit;
    at = text.indexOf(POINTER_IN_JSON, at + 1)
  ) {
    // The JSON string goes on to the first quote no backslash escapes.
    let end = at;
    while (end < text.length && text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
    let decoded: string;
    try {
      decoded = JSON.parse(`"${text.slice(at, end)}"`) as string;
    } catch {
      continue;
    }
    for (const pointer of parsePointers(decoded) ?? []) out.push(pointer.reference);
  }
  return out;
}

/** A reference as an error line shows it: a pointer may name a path of any length, a line shows 200 characters. */
function shownReference(reference: string): string {
  if (reference.length <= 200) return reference;
  const end = /[\ud800-\udbff]/.test(reference[199] as string) ? 199 : 200;
  return `${reference.slice(0, end)}… (${reference.length} characters)`;
}

/** Where the store's records say this file's conversations are, from the first record that says it. */
function recordedLayout(
  source: SourceText,
  store: StoreReader,
): Partial<Pick<StoreRecord, 'format' | 'conversationKey' | 'conversationPath'>> {
  const text = source.text;
  for (const reference of pointerReferences(text, 16)) {
    const located = store.locate(reference);
    if (!('file' in located)) continue;
    for (const record of verifiedRecords(store.records(located.file), located.file, source.file)) {
      let parsed: Partial<StoreRecord> | null;
      try {
        parsed = JSON.parse(record.text) as Partial<StoreRecord> | null;
      } catch {
        continue;
      }
      if (parsed?.swc !== 'offload-record' || typeof parsed.format !== 'string') continue;
      // Only a record of this file counts (a pointer quoted from another transcript leads to that one's records).
      const written = Array.isArray(parsed.items)
        ? (parsed.items[0] as { written?: unknown } | undefined)?.written
        : undefined;
      if (typeof written !== 'string' || !text.includes(written)) continue;
      return {
        format: parsed.format,
        ...(typeof parsed.conversationKey === 'string' ? { conversationKey: parsed.conversationKey } : {}),
        ...(typeof parsed.conversationPath === 'string' ? { conversationPath: parsed.conversationPath } : {}),
      };
    }
  }
  return {};
}

/**
 * A store reader for `restoreSource(source, dir, read)`: references inside `dir` (relative ones relative to it), and
 * the record `REF.swc.json` beside each, read with `read`, as stores before hashed records named them.
 */
function readerOf(dir: string, read: (file: string) => string | null): StoreReader {
  return {
    locate(reference) {
      const file = path.resolve(dir, reference);
      const rel = path.relative(dir, file);
      return rel === '' || rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)
        ? { refused: `which is outside the offload store ${dir}` }
        : { file };
    },
    records(file) {
      const text = read(`${file}.swc.json`);
      return text === null ? [] : [{ path: `${file}.swc.json`, text }];
    },
  };
}

/**
 * Puts offloaded results back: every tool result that is a pointer (as offloading writes them; a pointer quoted in
 * other text is no candidate) has its message's items become, byte for byte, the items they were before offloading,
 * as the result's record in the store holds them, when the items are still exactly as offloading wrote them. All or
 * nothing: a pointer that cannot be put back fails the file, naming it.
 * @param source the decoded transcript
 * @param options how the store is reached, and where the conversations are
 * @throws InputError for a pointer outside the store, or whose record is missing, is not what its name says (its
 *   hash) or does not match its items
 */
export function restoreSource(source: SourceText, options: RestoreOptions): RestoreResult;

/**
 * The earlier form: the store directory (absolute) and a reader of its files; reads records named `REF.swc.json`.
 * @deprecated pass `RestoreOptions` with a `StoreReader`, which finds the hashed records of today's stores
 */
export function restoreSource(source: SourceText, dir: string, read: (file: string) => string | null): RestoreResult;

export function restoreSource(
  source: SourceText,
  settings: RestoreOptions | string,
  read?: (file: string) => string | null,
): RestoreResult {
  const options: RestoreOptions =
    typeof settings === 'string' ? { store: readerOf(settings, read ?? (() => null)) } : settings;
  const named = options.format !== undefined && options.format !== 'auto' ? options.format : undefined;
  const given = named !== undefined || options.conversationKey !== undefined || options.conversationPath !== undefined;
  const recorded = given ? {} : recordedLayout(source, options.store);
  // The recorded format is not forced: detection finds it again, and a file of records may mix formats.
  const format = named;
  const layout = readLayout(source, undefined, {
    conversationKey: options.conversationKey ?? recorded.conversationKey,
    conversationPath: options.conversationPath ?? recorded.conversationPath,
  });
  const replacements = new Map<Slot, string>();
  let restored = 0;
  for (const { slot, adapter } of slotsWithAdapters(layout, format, source.file, [])) {
    const normalized = normalizeSlot(source, slot, adapter, null);
    const parts = slot.raws.slice();
    const put = new Set<number>();
    const itemsAt = itemsReader(normalized.itemsOf);
    normalized.messages.forEach((message, m) => {
      if (message.role !== 'tool') return;
      const items = itemsAt(m);
      const at = `${slot.where}: item ${items[0] ?? m}`;
      contentOf(message).results.forEach((r) => {
        if (!isPointerLike(r.text)) return;
        const pointers = parsePointers(r.text);
        if (pointers === null)
          throw new InputError(
            `${at} holds a pointer whose reference cannot be read (was it edited?); nothing was restored`,
            source.file,
          );
        // Every part a pointer names must resolve: one part left in the store would be a result half put back.
        for (const pointer of pointers) restorePart(pointer.reference);
      });
      /** Puts back the items of the part stored under `ref`, from its record, or fails naming why it cannot. */
      function restorePart(ref: string): void {
        const reference = shownReference(ref);
        const located = options.store.locate(ref);
        if ('refused' in located)
          throw new InputError(`${at} points at ${reference}, ${located.refused}; nothing was restored`, source.file);
        const records = verifiedRecords(options.store.records(located.file), located.file, source.file);
        if (records.length === 0)
          throw new InputError(
            `${at} points at ${reference}, but the store has no record of it (${shownReference(located.file)}.*.swc.json); nothing was restored`,
            source.file,
          );
        let entries: { item: number; raw: string }[] | undefined;
        let from = '';
        for (const record of records) {
          entries = recordEntries(record.text, slot.raws, items);
          from = record.path;
          if (entries !== undefined) break;
        }
        if (entries === undefined)
          throw new InputError(
            `${at} changed since ${reference} was offloaded, so it cannot be put back; nothing was restored`,
            source.file,
          );
        // A record is trusted only as far as it can be checked: what it puts back must be one JSON value (one line in
        // a JSONL file), as every item offloading replaced was.
        for (const e of entries) {
          if (!isOneJsonValue(e.raw, isLineSource(source))) {
            throw new InputError(
              `${slot.where}: the store's record ${from} does not hold a valid item to put back (was it edited?); nothing was restored`,
              source.file,
            );
          }
          parts[e.item] = e.raw;
          put.add(e.item);
        }
      }
    });
    if (put.size > 0) {
      replacements.set(slot, slot.write(parts));
      restored += put.size;
    }
  }
  const changed = replacements.size > 0;
  return { output: changed ? rebuild(layout, replacements) : source.text, restored, changed };
}
