import {
  IDENTIFIER_KINDS,
  identifierKey,
  identifiersOfText,
  forEachIdentifier,
  forEachIdentifierText,
  type Identifier,
  type IdentifierKind,
} from '../core/identifiers/index.js';
import type { Message } from '../core/types.js';

/**
 * What a compaction forgets: the identifiers (src/core/identifiers/) named in what it removes, prunes or summarizes
 * and nowhere in what it keeps (the note and any summary included), and those that offloading moved to the store,
 * which stay recoverable through the pointer. Worked out only when an output asks for it (dry runs, plans, --stat).
 */

/** An identifier and where it came from. */
export interface LocatedIdentifier extends Identifier {
  /** The first message it came from: its position in the file's list (the library's message index). */
  readonly message: number;
}

/** What a conversation's compaction forgets, and what it leaves recoverable from the offload store. */
export interface Inventory {
  /** Named only in removed, pruned or summarized text: the agent no longer knows them. In message order. */
  readonly forgotten: readonly LocatedIdentifier[];
  /** Named only in offloaded results (and maybe in removed text): the pointer names the file that holds them. */
  readonly recoverable: readonly LocatedIdentifier[];
}

/** What an inventory is worked out from: the conversation as read and as decided, and what happened to each message. */
export interface InventoryInput {
  /** The messages as read. */
  readonly original: readonly Message[];
  /** The messages as decided: pruned and offloaded results hold their placeholders and pointers. */
  readonly decided: readonly Message[];
  readonly kept: readonly number[];
  readonly removed: readonly number[];
  /** Kept messages whose results pruning replaced (or a summary replaced): their original text leaves. */
  readonly replaced: readonly number[];
  /** Kept messages whose results offloading moved to the store. */
  readonly offloaded: readonly number[];
  /** Texts the output adds that the agent reads: the note, summaries. */
  readonly added: readonly (string | null)[];
  /** The position in the file's list a message is reported at. */
  readonly positionOf: (message: number) => number;
}

/**
 * The inventory of one conversation's compaction.
 * @returns forgotten and recoverable identifiers, each once, ordered by the message they first came from
 */
export function inventoryOf(input: InventoryInput): Inventory {
  const kept = new Set<string>();
  const keep = (id: Identifier): void => {
    for (const key of keptKeys(id)) kept.add(key);
  };
  const memo = textMemo();
  for (const m of input.kept) {
    forEachIdentifierText(input.decided[m] as Message, (text, isArguments) => {
      for (const key of memo.of(text, isArguments).keptKeys()) kept.add(key);
    });
  }
  for (const text of input.added) if (text !== null) forEachIdentifier(text, keep);
  const listed = new Set<string>();
  const collect = (messages: readonly number[]): LocatedIdentifier[] => {
    const out: LocatedIdentifier[] = [];
    for (const m of [...messages].sort((a, b) => a - b)) {
      const message = input.original[m];
      if (message === undefined) continue;
      forEachIdentifierText(message, (text, isArguments) => {
        const { ids, keys } = memo.of(text, isArguments);
        ids.forEach((id, k) => {
          const key = keys[k] as string;
          if (kept.has(key) || listed.has(key)) return;
          listed.add(key);
          out.push({ kind: id.kind, value: id.value, message: input.positionOf(m) });
        });
      });
    }
    return out;
  };
  // Offloaded first: an identifier both removed and offloaded can still be read back.
  const recoverable = collect(input.offloaded);
  const forgotten = collect([...input.removed, ...input.replaced]);
  return { forgotten, recoverable };
}

/** The keys a kept identifier keeps known: its own, and for a path every shorter path it holds. */
function keptKeys(id: Identifier): string[] {
  const keys = [identifierKey(id)];
  // A kept path names every shorter path it holds: with `/testbed/src/pkg/fields.py` kept, `fields.py` and `src/pkg`
  // are not forgotten.
  if (id.kind === 'path') for (const run of segmentRuns(id.value)) keys.push(identifierKey({ ...id, value: run }));
  return keys;
}

/** One text's identifiers as met (each as often as met), their keys, and (worked out once) the keys it keeps known. */
class TextIdentifiers {
  readonly ids: Identifier[] = [];
  readonly keys: string[] = [];
  private kept: string[] | undefined;

  constructor(text: string, isArguments: boolean) {
    identifiersOfText(text, isArguments, (id) => {
      this.ids.push(id);
      this.keys.push(identifierKey(id));
    });
  }

  keptKeys(): readonly string[] {
    this.kept ??= this.ids.flatMap(keptKeys);
    return this.kept;
  }
}

/**
 * The identifiers of each text read, remembered from one inventory to the next: a warm compactor (a replay compacts
 * at most calls of a long run) keeps nearly all it kept last time, and extracting every message's identifiers again
 * at each compaction made a replay's inventories quadratic in its length. A text is remembered while one of the last
 * two inventories read it, and the memo is held weakly between inventories, so nothing is pinned in memory once
 * compactions stop (a collection may empty it; it is then filled again from the next inventory after). It costs
 * the memory of the texts read (a replay that prunes 2,000 calls of a 4 MB run peaks about 120 MB higher).
 */
class TextMemo {
  private readonly current = [new Map<string, TextIdentifiers>(), new Map<string, TextIdentifiers>()] as const;
  private previous: readonly [Map<string, TextIdentifiers>, Map<string, TextIdentifiers>] | null = null;

  /**
   * @param records whether what is read is remembered: not by an inventory that follows none (a single compaction
   *   gains nothing from it, and the texts it would hold may be copies, read again from JSON, of a large file's)
   */
  constructor(private readonly records: boolean) {}

  /** The memo of the next inventory: what this one did not read is forgotten. */
  next(): TextMemo {
    const memo = new TextMemo(true);
    memo.previous = this.current[0].size + this.current[1].size > 0 ? this.current : this.previous;
    return memo;
  }

  /** The identifiers of one text of a message (`isArguments`: a tool call's arguments). */
  of(text: string, isArguments: boolean): TextIdentifiers {
    const side = isArguments ? 1 : 0;
    const current = this.current[side];
    let found = current.get(text) ?? this.previous?.[side].get(text);
    if (found === undefined) found = new TextIdentifiers(text, isArguments);
    if (this.records) current.set(text, found);
    return found;
  }
}

let lastMemo: WeakRef<TextMemo> | undefined;

/** The memo for one inventory, carrying what the last one read (unless a collection took it). */
function textMemo(): TextMemo {
  const memo = lastMemo?.deref()?.next() ?? new TextMemo(false);
  lastMemo = new WeakRef(memo);
  return memo;
}

/** Every run of whole segments of a POSIX path (`a/b/c`: `a`, `a/b`, `b`, `b/c`, `c`, …), bounded for very deep ones. */
function segmentRuns(value: string): string[] {
  if (!value.includes('/') || value.includes('\\')) return [];
  const parts = value.split('/').filter((p) => p !== '');
  if (parts.length > 32) return [];
  const out: string[] = [];
  for (let i = 0; i < parts.length; i++)
    for (let j = i + 1; j <= parts.length; j++) out.push(parts.slice(i, j).join('/'));
  return out;
}

/** How many identifiers of each kind a list holds, kinds in the order outputs list them, only those present. */
export function countsByKind(ids: readonly Identifier[]): Partial<Record<IdentifierKind, number>> {
  const out: Partial<Record<IdentifierKind, number>> = {};
  for (const kind of IDENTIFIER_KINDS) {
    const n = ids.filter((id) => id.kind === kind).length;
    if (n > 0) out[kind] = n;
  }
  return out;
}

export { retentionFailure, retentionOf, type Retention } from '../core/identifiers/index.js';

/**
 * Reads a `--min-retention` value: a fraction from 0 to 1, or a percentage (`80%`).
 * @throws RangeError for anything else
 */
export function parseRetention(text: string): number {
  const percent = text.endsWith('%');
  const n = Number(percent ? text.slice(0, -1) : text);
  const value = percent ? n / 100 : n;
  if (text.trim() === '' || !Number.isFinite(value) || value < 0 || value > 1)
    throw new RangeError(`--min-retention must be a fraction from 0 to 1 or a percentage, got ${JSON.stringify(text)}`);
  return value;
}
