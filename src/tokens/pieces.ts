/**
 * Counting a text piece by piece, exactly as gpt-tokenizer's `countTokens` does, but able to stop at a limit and
 * safe on very long pieces. gpt-tokenizer merges the bytes of one pre-token piece with a loop that is quadratic in
 * the piece's length: a run of a million letters, spaces or dashes in a tool output takes hours. Long pieces are
 * merged here with a heap instead (the same merges in the same order, so the same count), and with a limit a long
 * piece is not merged at all when its least possible count already passes it.
 */

/** The inside of a gpt-tokenizer encoding used here (not part of its typed API, so it is checked before use). */
interface Core {
  readonly tokenSplitRegex: RegExp;
  readonly bytePairRankDecoder: ReadonlyArray<string | readonly number[] | undefined>;
  getBpeRankFromString(piece: string): number | undefined;
  getBpeRankFromBytes(bytes: Uint8Array): number | undefined;
  bytePairEncode(piece: string): readonly number[];
  /** The cache of merged pieces and its capacity (absent when caching is off or in other versions). */
  readonly mergeCache?: { readonly size: number };
  readonly mergeCacheSize?: number;
}

/** Pieces longer than this (in UTF-16 units) are merged with a heap; shorter ones by gpt-tokenizer, with its cache. */
export const LONG_PIECE = 1000;

const encoder = new TextEncoder();

/** A count, and whether it is exact or only some number above the room it was allowed. */
export interface PieceCount {
  readonly tokens: number;
  readonly exact: boolean;
  /** When it stopped: where counting can go on from (a piece boundary) and the tokens before it. */
  readonly resume?: Resume;
}

/** A count that stopped, to go on with instead of starting again. */
export interface Resume {
  readonly at: number;
  readonly tokens: number;
}

/** Counts texts with one encoding's pre-tokenizer and ranks. */
export interface PieceCounter {
  /**
   * @param text the text, read as plain text (special-token text is not special)
   * @param room when given, counting stops once the count passes it
   * @param from where an earlier count of the same text stopped (counters that cannot go on start again)
   */
  count(text: string, room?: number, from?: Resume): PieceCount;
  /**
   * How many more pieces the encoding's merge cache takes before it is full, or undefined when that cannot be
   * seen (no cache, or a gpt-tokenizer without one where it is looked for).
   */
  cacheRoom(): number | undefined;
}

/**
 * A piece counter over a gpt-tokenizer encoding module, or null when the module does not have the inside this
 * relies on (another version of gpt-tokenizer): callers then count with its public functions.
 */
export function createPieceCounter(encoding: unknown): PieceCounter | null {
  const core = coreOf(encoding);
  if (core === null) return null;
  let longest = 0;
  /** The byte length of the longest token: a piece of n bytes has at least n / longest tokens. */
  const longestToken = (): number => {
    if (longest === 0) {
      for (const token of core.bytePairRankDecoder) {
        if (token === undefined) continue;
        longest = Math.max(longest, typeof token === 'string' ? encoder.encode(token).length : token.length);
      }
    }
    return longest;
  };
  return {
    count(text, room) {
      let tokens = 0;
      for (const match of text.matchAll(core.tokenSplitRegex)) {
        const piece = match[0];
        if (piece.length <= LONG_PIECE) {
          tokens += core.getBpeRankFromString(piece) !== undefined ? 1 : core.bytePairEncode(piece).length;
        } else {
          const bytes = encoder.encode(piece);
          const least = Math.ceil(bytes.length / longestToken());
          if (room !== undefined && tokens + least > room) return { tokens: tokens + least, exact: false };
          tokens += countMerges(bytes, (b) => (b.length > longestToken() ? undefined : core.getBpeRankFromBytes(b)));
        }
        if (room !== undefined && tokens > room) return { tokens, exact: false };
      }
      return { tokens, exact: true };
    },
    cacheRoom() {
      const size = core.mergeCache?.size;
      const capacity = core.mergeCacheSize;
      return typeof size === 'number' && typeof capacity === 'number' ? capacity - size : undefined;
    },
  };
}

function coreOf(encoding: unknown): Core | null {
  const api = (encoding as { default?: { bytePairEncodingCoreProcessor?: Partial<Core> } } | null)?.default;
  const core = api?.bytePairEncodingCoreProcessor;
  if (
    core === undefined ||
    !(core.tokenSplitRegex instanceof RegExp) ||
    !Array.isArray(core.bytePairRankDecoder) ||
    typeof core.getBpeRankFromString !== 'function' ||
    typeof core.getBpeRankFromBytes !== 'function' ||
    typeof core.bytePairEncode !== 'function'
  ) {
    return null;
  }
  return core as Core;
}

/**
 * The number of tokens byte-pair merging makes of one piece. At each step the adjacent pair whose joined bytes
 * have the lowest rank is merged, the leftmost of equals first, until no adjacent pair is a token: the rule of
 * gpt-tokenizer's (and tiktoken's) merge, with a heap so a piece of n bytes costs O(n log n), not O(n²).
 * @param bytes the piece's UTF-8 bytes
 * @param rankOf the rank of a token's bytes, or undefined for bytes that are no token
 */
export function countMerges(bytes: Uint8Array, rankOf: (bytes: Uint8Array) => number | undefined): number {
  const n = bytes.length;
  if (n <= 1) return n;
  // Parts are named by the byte they start at; `next` links them left to right (n ends the list).
  const next = new Int32Array(n);
  const prev = new Int32Array(n);
  const version = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    next[i] = i + 1;
    prev[i] = i - 1;
  }
  const heap = new MergeHeap();
  /** Queues the merge of part i with the part after it, if their joined bytes are a token. */
  const offer = (i: number): void => {
    const j = next[i] as number;
    if (j >= n) return;
    const rank = rankOf(bytes.subarray(i, next[j] as number));
    if (rank !== undefined) heap.push(rank, i, version[i] as number);
  };
  for (let i = 0; i < n - 1; i++) offer(i);
  let parts = n;
  while (heap.size > 0) {
    const { start: i, version: v } = heap.pop();
    // A merge queued before either part changed no longer joins the same bytes.
    if (version[i] !== v) continue;
    const j = next[i] as number;
    const k = next[j] as number;
    next[i] = k;
    if (k < n) prev[k] = i;
    version[j] = -1;
    version[i] = (version[i] as number) + 1;
    parts--;
    offer(i);
    const p = prev[i] as number;
    if (p >= 0) {
      version[p] = (version[p] as number) + 1;
      offer(p);
    }
  }
  return parts;
}

/** A binary min-heap of merges ordered by rank, then by start (leftmost first). */
class MergeHeap {
  private readonly ranks: number[] = [];
  private readonly starts: number[] = [];
  private readonly versions: number[] = [];

  get size(): number {
    return this.ranks.length;
  }

  push(rank: number, start: number, version: number): void {
    let i = this.ranks.length;
    this.ranks.push(rank);
    this.starts.push(start);
    this.versions.push(version);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(i, parent)) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  pop(): { start: number; version: number } {
    const top = { start: this.starts[0] as number, version: this.versions[0] as number };
    const last = this.ranks.length - 1;
    this.swap(0, last);
    this.ranks.pop();
    this.starts.pop();
    this.versions.pop();
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < last && this.less(l, m)) m = l;
      if (r < last && this.less(r, m)) m = r;
      if (m === i) break;
      this.swap(i, m);
      i = m;
    }
    return top;
  }

  private less(a: number, b: number): boolean {
    const ra = this.ranks[a] as number;
    const rb = this.ranks[b] as number;
    return ra < rb || (ra === rb && (this.starts[a] as number) < (this.starts[b] as number));
  }

  private swap(a: number, b: number): void {
    [this.ranks[a], this.ranks[b]] = [this.ranks[b] as number, this.ranks[a] as number];
    [this.starts[a], this.starts[b]] = [this.starts[b] as number, this.starts[a] as number];
    [this.versions[a], this.versions[b]] = [this.versions[b] as number, this.versions[a] as number];
  }
}
