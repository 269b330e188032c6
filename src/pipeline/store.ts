import { createHash } from 'node:crypto';
import path from 'node:path';
import { portableName, quoteReference, storeKey } from '../core/offload.js';
import { InputError } from '../errors.js';
import { itemsReader, type FormatAdapter, type Normalized } from '../formats/types.js';
import type { Slot } from '../io/layout.js';
import type { SourceText } from '../io/source.js';
import { conversationInput } from './detect.js';
import type { ChainOffload, ReferenceMaker } from './steps/step.js';
import type { FileOptions, PrunedItems, StoreFile } from './types.js';

// The offload store: where each result goes (its name, by its bytes), the record beside it that `swc restore` reads,
// and the rule that checks a record against its name. The record's shape and version live here alone.

/** The version of the store record this build writes (`StoreRecord.version`). */
export const STORE_RECORD_VERSION = 2;

/** What a store record (`NAME.{hash}.swc.json` beside the result `NAME`) says. */
export interface StoreRecord {
  readonly swc: 'offload-record';
  readonly version: typeof STORE_RECORD_VERSION;
  /** The format and the options that found the conversation, so `swc restore` finds it again without them. */
  readonly format: string;
  readonly conversationKey?: string;
  readonly conversationPath?: string;
  /** The conversation in the file (`the lines`, `line 3`, `record 2`) and the result's message in it. */
  readonly where: string;
  readonly message: number;
  /** The items offloading replaced for this result: as they were read and as they were written. */
  readonly items: readonly { readonly item: number; readonly raw: string; readonly written: string }[];
}

/** The short hash in a store name: the first 16 hex digits of the SHA-256 of the bytes the file holds. */
export function storeHash(content: string | Uint8Array): string {
  const hash = createHash('sha256');
  return (typeof content === 'string' ? hash.update(content, 'utf8') : hash.update(content)).digest('hex').slice(0, 16);
}

/** The store file a reference names: relative references are relative to the transcript's folder. */
function storePath(reference: string, offload: NonNullable<FileOptions['offload']>): string {
  return offload.home === undefined ? path.resolve(reference) : path.resolve(offload.home, reference);
}

/**
 * The store references of a conversation's results: `DIR/FOLDER/{step}_{tool}_{call id}-{hash}.txt`, FOLDER being the
 * input file's path (and the record, in a file of several conversations), each segment a portable name (so it stays
 * under DIR and the store can be copied to any file system); written relative to the transcript's folder when it is
 * known.
 */
export function referenceMaker(
  source: SourceText,
  slot: Slot,
  adapter: FormatAdapter,
  normalized: Normalized,
  offload: FileOptions['offload'],
): ReferenceMaker | null {
  if (offload === undefined) return null;
  const parts =
    source.file === '<stdin>'
      ? ['stdin']
      : source.file
          .split(/[/\\]+/)
          .filter((p) => p !== '' && p !== '.')
          .map(portableName);
  const folder = path.join(
    offload.dir,
    ...(parts.length > 0 ? parts : ['stdin']),
    ...(slot.record !== undefined ? [`record-${slot.record}`] : []),
  );
  let pairing: ReturnType<NonNullable<FormatAdapter['pairing']>> | null | undefined;
  const idsOf = (message: number): (string | null)[] => {
    pairing ??= adapter.pairing?.(conversationInput(source, slot)) ?? null;
    const items = new Set(itemsReader(normalized.itemsOf)(message));
    return (pairing?.results ?? []).filter((r) => items.has(r.item)).map((r) => r.id);
  };
  return (message, c) => {
    // Named by its bytes too: two results of one name hold other bytes (another name) or the same (one file).
    const file = path.join(
      folder,
      storeKey(c.step, c.tool, idsOf(message)[c.result] ?? null, c.result, storeHash(c.text), {
        position: c.part ?? null,
        extension: c.extension ?? '.txt',
      }),
    );
    return offload.home === undefined ? file : path.relative(offload.home, file);
  };
}

/**
 * The store files of a slot's offloaded results: each result's text as `NAME`, and beside it its record
 * `NAME.{hash}.swc.json` (a `StoreRecord`: the items as they were and as they were written, and where they live), so
 * `swc restore` can put them back byte for byte. Both are named by their bytes: a record differs per conversation,
 * the result's text may be shared.
 */
export function storeFiles(
  slot: Slot,
  adapter: FormatAdapter,
  offloads: readonly ChainOffload[],
  offloaded: readonly PrunedItems[],
  edits: ReadonlyMap<number, string>,
  finals: ReadonlyMap<number, string>,
  options: FileOptions,
): StoreFile[] {
  const out: StoreFile[] = [];
  if (options.offload === undefined) return out;
  const held = new Set(offloaded.map((o) => o.message));
  const seen = new Set<string>();
  const add = (file: StoreFile): void => {
    if (seen.has(file.path)) return;
    seen.add(file.path);
    out.push(file);
  };
  for (const o of offloads) {
    if (!held.has(o.message)) continue;
    const item = offloaded.find((x) => x.message === o.message) as PrunedItems;
    // Each store entry (a result's text, or each part of a result of several) with its record beside it.
    const entries = [...o.results.values()].flatMap(
      (r) => r.stored ?? [{ reference: r.reference, content: r.original }],
    );
    for (const entry of entries) {
      const file = storePath(entry.reference, options.offload);
      add({ path: file, content: entry.content });
      // The items of the message this result's pointer sits in, as read and as written.
      const pointer = JSON.stringify(quoteReference(entry.reference)).slice(1, -1);
      const items: { item: number; raw: string; written: string }[] = [];
      for (let k = item.start; k < item.end; k++) {
        if (!edits.has(k)) continue;
        const written = finals.get(k);
        if (written !== undefined && written !== '' && (edits.get(k) as string).includes(pointer))
          items.push({ item: k, raw: slot.raws[k] as string, written });
      }
      const record: StoreRecord = {
        swc: 'offload-record',
        version: STORE_RECORD_VERSION,
        format: adapter.name,
        ...(options.conversationKey !== undefined ? { conversationKey: options.conversationKey } : {}),
        ...(options.conversationPath !== undefined ? { conversationPath: options.conversationPath } : {}),
        where: slot.where,
        message: o.message,
        items,
      };
      const content = `${JSON.stringify(record)}\n`;
      add({ path: `${file}.${storeHash(content)}.swc.json`, content });
    }
  }
  return out;
}

/** A store record file beside a result, as read. */
export interface StoreRecordFile {
  /** Its path, as errors name it. */
  readonly path: string;
  readonly text: string;
}

/** A result's name in a store that names files by their hash: `…-{16 hex digits}.txt`. */
const HASHED_RESULT = /-[0-9a-f]{16}\.txt$/;

/**
 * A result's records, each checked to be what its name says, since what a record holds is put back as history:
 * `NAME.{hash}.swc.json` must hold bytes of that hash. `NAME.swc.json` (stores from before names were hashed) holds
 * nothing to check, so it is taken only beside a result whose name has no hash either: a store that hashes names
 * hashes every record.
 * @param records the records a store reader gave for `file`
 * @param file the located result file
 * @param source the transcript, as errors name it
 * @throws InputError naming the first record that is not what its name says; nothing is then restored
 */
export function verifiedRecords(
  records: readonly StoreRecordFile[],
  file: string,
  source: string,
): readonly StoreRecordFile[] {
  const result = path.basename(file);
  for (const record of records) {
    const name = path.basename(record.path);
    const named =
      name.length >= result.length + '.swc.json'.length && name.startsWith(result) && name.endsWith('.swc.json');
    const middle = named ? name.slice(result.length, name.length - '.swc.json'.length) : null;
    let problem: string | null = null;
    if (middle === null || (middle !== '' && !/^\.[0-9a-f]{16}$/.test(middle)))
      problem = `is not named as a record of ${result} (${result}.{hash}.swc.json)`;
    else if (middle === '' && HASHED_RESULT.test(result))
      problem =
        'has no hash in its name, beside a result whose name has one (a store that hashes names hashes every record)';
    else if (middle !== '' && storeHash(record.text) !== middle.slice(1))
      problem = 'does not hold the bytes the hash in its name says (was it edited?)';
    if (problem !== null)
      throw new InputError(`the offload store's record ${record.path} ${problem}; nothing was restored`, source);
  }
  return records;
}
