import { isUtf8 } from 'node:buffer';
import { readFileSync } from 'node:fs';
import { countMerges, LONG_PIECE, type PieceCount, type PieceCounter, type Resume } from './pieces.js';

/**
 * swc's own reading of a BPE encoding: the token bytes written at build time (scripts/build-ranks.mjs, from the
 * installed gpt-tokenizer) in an open-addressing table of typed arrays, and a counter that gives exactly
 * gpt-tokenizer's counts. Loading it reads one file of 0.7–1.6 MB and hashes the tokens (~20 ms); loading
 * gpt-tokenizer's own module compiles 2.4 MB of JavaScript and fills a 200,000-entry map (~0.3 s), a cost every
 * `swc compact` run and every worker paid before counting a single token.
 *
 * gpt-tokenizer's lookups, which these copy: a whole pre-token piece is looked up as a string (so a piece with a
 * lone surrogate is never found whole); a run of bytes during merging is looked up as a string when it is valid
 * UTF-8, decoded with a leading byte-order mark dropped, and by its bytes otherwise.
 */

const MAGIC = 'SWCRANK3';
/** Merged pieces whose count is remembered; the memory is emptied when full (no eviction cost). */
const CACHE_SIZE = 100_000;
const NONE = -1;
const NO_RANK = 0x7fffffff;

/** The tokens of one encoding, looked up by their bytes. */
export class RankTable {
  private readonly mask: number;

  private constructor(
    readonly name: string,
    /**
     * The pre-tokenizer, sticky: a piece is found where the previous one ended (test() then builds no match). Made
     * once per table: compiling the encodings' Unicode patterns costs milliseconds each time.
     */
    readonly pattern: RegExp,
    /** Every token's bytes, in rank order. */
    private readonly bytes: Uint8Array,
    /** Where each rank's bytes start in `bytes` (rank + 1: where they end); equal for a rank with no token. */
    private readonly starts: Uint32Array,
    /** Open addressing by `hashBytes`, linear probing: slot → rank + 1 (0: empty); a power of two long. */
    private readonly slots: Int32Array,
    /** The byte length of the longest token: a piece of n bytes has at least n / longest tokens. */
    readonly longest: number,
  ) {
    this.mask = slots.length - 1;
  }

  /**
   * Reads an encoding written at build time.
   * @returns the table, or null when the file is missing or not one this version reads
   * @throws the read's error when the process is out of open files or memory
   */
  static load(name: string): RankTable | null {
    let file: Buffer;
    try {
      // From src/tokens or dist/tokens alike: the build writes <package>/dist/ranks.
      file = readFileSync(new URL(`../../dist/ranks/${name}.bin`, import.meta.url));
    } catch (error) {
      // Out of open files or memory, the file is not missing: the caller hears why.
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EMFILE' || code === 'ENFILE' || code === 'ENOMEM') throw error;
      return null;
    }
    if (file.length < 20 || file.toString('latin1', 0, 8) !== MAGIC) return null;
    try {
      return RankTable.read(name, file);
    } catch {
      // Cut short or not one this version wrote.
      return null;
    }
  }

  private static read(name: string, file: Buffer): RankTable | null {
    let at = 8;
    const count = file.readUInt32LE(at);
    const slotCount = file.readUInt32LE(at + 4);
    const longest = file.readUInt32LE(at + 8);
    at += 12;
    const text = (): string => {
      const n = file.readUInt32LE(at);
      const value = file.toString('utf8', at + 4, at + 4 + n);
      at += 4 + n;
      return value;
    };
    const source = text();
    const flags = text();
    at = (at + 3) & ~3;
    const slots = int32View(file, at, slotCount);
    at += slotCount * 4;
    const starts = new Uint32Array(int32View(file, at, count + 1).buffer, file.byteOffset + at, count + 1);
    at += (count + 1) * 4;
    const bytes = file.subarray(at);
    if (bytes.length !== starts[count] || slotCount === 0 || (slotCount & (slotCount - 1)) !== 0) return null;
    return new RankTable(name, new RegExp(source, `${flags.replace(/[gy]/g, '')}y`), bytes, starts, slots, longest);
  }

  /** The rank of the token whose bytes are exactly `buf[start..end)`, or NONE. */
  rankOfExactly(buf: Uint8Array, start: number, end: number): number {
    const length = end - start;
    if (length <= 0 || length > this.longest) return NONE;
    let slot = hashBytes(buf, start, end) & this.mask;
    for (;;) {
      const entry = this.slots[slot] as number;
      if (entry === 0) return NONE;
      const rank = entry - 1;
      const from = this.starts[rank] as number;
      if ((this.starts[rank + 1] as number) - from === length) {
        let i = 0;
        while (i < length && this.bytes[from + i] === buf[start + i]) i++;
        if (i === length) return rank;
      }
      slot = (slot + 1) & this.mask;
    }
  }

  /** The rank gpt-tokenizer finds for the bytes `buf[start..end)` while merging, or NONE. */
  rankOf(buf: Uint8Array, start: number, end: number): number {
    // Valid UTF-8 that starts with a byte-order mark is looked up without it.
    if (
      end - start >= 3 &&
      buf[start] === 0xef &&
      buf[start + 1] === 0xbb &&
      buf[start + 2] === 0xbf &&
      isUtf8(buf.subarray(start, end))
    ) {
      return this.rankOfExactly(buf, start + 3, end);
    }
    return this.rankOfExactly(buf, start, end);
  }
}

/** 32-bit words at a 4-aligned offset of a file read whole (readFileSync gives a buffer of its own, aligned). */
function int32View(file: Buffer, at: number, length: number): Int32Array {
  if ((file.byteOffset + at) % 4 !== 0) throw new Error('rank file buffer is not aligned');
  return new Int32Array(file.buffer, file.byteOffset + at, length);
}

/** Where each token starts in the concatenated bytes, from each token's length (one more entry: the end). */
export function startsOf(lengths: Uint8Array): Uint32Array {
  const starts = new Uint32Array(lengths.length + 1);
  for (let rank = 0; rank < lengths.length; rank++)
    starts[rank + 1] = (starts[rank] as number) + (lengths[rank] as number);
  return starts;
}

/**
 * The lookup slots of a table (written at build time, so loading one only reads them): twice as many as tokens,
 * rounded up to a power of two; a token's slot is its hash, or the next free one after it.
 */
export function buildSlots(bytes: Uint8Array, starts: Uint32Array): Int32Array {
  const count = starts.length - 1;
  let size = 1;
  while (size < count * 2) size <<= 1;
  const slots = new Int32Array(size);
  const mask = size - 1;
  for (let rank = 0; rank < count; rank++) {
    const start = starts[rank] as number;
    const end = starts[rank + 1] as number;
    if (end === start) continue;
    let slot = hashBytes(bytes, start, end) & mask;
    while (slots[slot] !== 0) slot = (slot + 1) & mask;
    slots[slot] = rank + 1;
  }
  return slots;
}

/** FNV-1a over bytes. */
function hashBytes(buf: Uint8Array, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) h = Math.imul(h ^ (buf[i] as number), 0x01000193);
  return h >>> 0;
}

const encoder = new TextEncoder();

/**
 * Counts texts with a rank table: each pre-token piece is one token when it is a token, else the number of parts
 * byte-pair merging leaves (the adjacent pair whose joined bytes have the lowest rank merged first, the leftmost
 * of equals, until no pair is a token), the same merges gpt-tokenizer makes.
 */
export function createRankCounter(table: RankTable): PieceCounter {
  let scratch = new Uint8Array(4096);
  // Per merge: where each part starts, and the rank of joining it with the next.
  let starts = new Int32Array(256);
  let pairs = new Int32Array(256);
  const cache = new Map<string, number>();

  /**
   * Writes the UTF-8 bytes of `text[start..end)` to `scratch`; returns their length, negated when the piece has a
   * lone surrogate. Plain ASCII is copied without making a string of the piece.
   */
  const bytesOf = (text: string, start: number, end: number): number => {
    const n = end - start;
    if (scratch.length < n * 3) scratch = new Uint8Array(n * 3);
    for (let i = 0; i < n; i++) {
      const c = text.charCodeAt(start + i);
      if (c >= 0x80) {
        const piece = text.slice(start, end);
        const { written } = encoder.encodeInto(piece, scratch);
        return (piece as string & { isWellFormed(): boolean }).isWellFormed() ? written : -written;
      }
      scratch[i] = c;
    }
    return n;
  };

  /** Merges `scratch[0..n)` with the direct loop (n small). */
  const mergeShort = (n: number): number => {
    if (starts.length < n + 1) {
      starts = new Int32Array(n + 1);
      pairs = new Int32Array(n + 1);
    }
    for (let i = 0; i <= n; i++) starts[i] = i;
    let parts = n;
    for (let i = 0; i < n - 1; i++) {
      const r = table.rankOf(scratch, i, i + 2);
      pairs[i] = r === NONE ? NO_RANK : r;
    }
    pairs[n - 1] = NO_RANK;
    const rankAt = (i: number): number => {
      if (i + 2 > parts) return NO_RANK;
      const r = table.rankOf(scratch, starts[i] as number, starts[i + 2] as number);
      return r === NONE ? NO_RANK : r;
    };
    while (parts > 1) {
      let lowest = NO_RANK;
      let at = -1;
      for (let i = 0; i < parts - 1; i++) {
        const r = pairs[i] as number;
        if (r < lowest) {
          lowest = r;
          at = i;
        }
      }
      if (at === -1) break;
      // Part at+1 joins part at: drop its start and its pair.
      starts.copyWithin(at + 1, at + 2, parts + 1);
      pairs.copyWithin(at + 1, at + 2, parts);
      parts--;
      pairs[at] = rankAt(at);
      if (at > 0) pairs[at - 1] = rankAt(at - 1);
    }
    return parts;
  };

  /** The tokens of the piece `text[start..end)`. */
  const countPiece = (text: string, start: number, end: number): number => {
    const signed = bytesOf(text, start, end);
    const n = signed < 0 ? -signed : signed;
    // A whole piece is looked up as a string: one with a lone surrogate is never found.
    if (signed > 0 && table.rankOfExactly(scratch, 0, n) !== NONE) return 1;
    if (n <= 1) return n;
    const piece = text.slice(start, end);
    const known = cache.get(piece);
    if (known !== undefined) return known;
    const tokens = mergeShort(n);
    if (cache.size >= CACHE_SIZE) cache.clear();
    cache.set(piece, tokens);
    return tokens;
  };

  return {
    count: (text: string, room?: number, from?: Resume): PieceCount => countPieces(table, countPiece, text, room, from),
    // The cache empties itself when full, at no cost: nothing for the caller to manage.
    cacheRoom: () => Infinity,
  };
}

/**
 * Counts a text piece by piece with the table's pattern, until the count passes `room` when one is given.
 * @param table the rank table (its pattern finds the pieces; a long piece is merged against it directly)
 * @param countPiece counts a short piece
 * @param text the text
 * @param room stop once the count passes it
 * @param from where an earlier count of this text stopped
 * @returns the count, exact or (when it stopped) above `room`, with where to go on from
 */
function countPieces(
  table: RankTable,
  countPiece: (text: string, start: number, end: number) => number,
  text: string,
  room: number | undefined,
  from: Resume | undefined,
): PieceCount {
  // Counters of one table share its pattern: each sets lastIndex before every test(), and a count runs to its end
  // without yielding.
  const sticky = table.pattern;
  let tokens = from?.tokens ?? 0;
  let at = from?.at ?? 0;
  if (room !== undefined && tokens > room) return { tokens, exact: false, resume: { at, tokens } };
  while (at < text.length) {
    sticky.lastIndex = at;
    if (!sticky.test(text)) {
      // No piece starts here (the encodings' patterns leave no gaps, but a global search would move on).
      const c = text.charCodeAt(at);
      const pair = c >= 0xd800 && c <= 0xdbff && at + 1 < text.length && (text.charCodeAt(at + 1) & 0xfc00) === 0xdc00;
      at += pair ? 2 : 1;
      continue;
    }
    const end = sticky.lastIndex;
    if (end - at <= LONG_PIECE) {
      tokens += countPiece(text, at, end);
    } else {
      const bytes = encoder.encode(text.slice(at, end));
      const least = Math.ceil(bytes.length / table.longest);
      if (room !== undefined && tokens + least > room)
        return { tokens: tokens + least, exact: false, resume: { at, tokens } };
      tokens += countMerges(bytes, (b) => {
        const r = table.rankOf(b, 0, b.length);
        return r === NONE ? undefined : r;
      });
    }
    at = end;
    if (room !== undefined && tokens > room) return { tokens, exact: false, resume: { at, tokens } };
  }
  return { tokens, exact: true };
}
