import zlib from 'node:zlib';
import { InputError } from '../errors.js';

/**
 * Compressed inputs: gzip (told by its magic bytes, whatever the file is called) and brotli (which has no magic
 * bytes, so only a name ending in `.br` says it). A compressed file is decompressed as it is read, a block at a
 * time. A result is compressed as the name it is written under says (`outputCompression`): a file rewritten under
 * its own name keeps its compression, and one written compressed as it was read, unchanged, is the bytes read.
 */

/** The compressed formats read and written. */
export type CompressionFormat = 'gzip' | 'brotli';

/** What a compressed input keeps: its format, and its bytes as read (an unchanged result is these bytes). */
export interface Compression {
  readonly format: CompressionFormat;
  /** The file's compressed bytes as they were read (read again, from the same unchanged file, when not held). */
  original(): Uint8Array;
}

/**
 * A decompressed file may be at most this many times its compressed size (or `BOMB_FLOOR`, when more): gzip can
 * reach about 1,000×, transcripts reach 5–50×, so past this the input is taken for a decompression bomb.
 */
export const BOMB_RATIO = 200;
/** Any compressed file may decompress to this much, whatever its size (a tiny file of repeated text reaches high ratios). */
export const BOMB_FLOOR = 64 << 20;

/** The most a compressed input of `size` bytes may decompress to. */
export function decompressedLimit(size: number): number {
  return Math.max(BOMB_RATIO * size, BOMB_FLOOR);
}

/** Whether a name ends in `.gz` or `.br` (any case). */
const COMPRESSED_SUFFIX = /\.(gz|br)$/i;

/** A name without its compression suffix (`a.jsonl.gz` → `a.jsonl`), to tell JSON from JSONL by extension. */
export function innerName(name: string): string {
  return name.replace(COMPRESSED_SUFFIX, '');
}

/**
 * The compression of an input: gzip when it starts with the gzip magic bytes (1f 8b), brotli when its name ends in
 * `.br`, else none. Plain JSON or JSONL never starts with 0x1f (a control character).
 * @param head the input's first bytes (two are enough)
 * @param names the names it goes by (the path read, the name shown); any ending in `.br` says brotli
 */
export function compressionOf(head: Uint8Array, names: readonly string[]): CompressionFormat | null {
  if (head[0] === 0x1f && head[1] === 0x8b) return 'gzip';
  if (names.some((n) => /\.br$/i.test(n))) return 'brotli';
  return null;
}

/**
 * The compression of a result written under `name`: gzip for a name ending in `.gz`, brotli for `.br` (any case),
 * none for any other name. The name is where a reader of the file learns how to open it, so `-o x.jsonl` of a gzip
 * input is plain JSONL, and `--in-place` and `--out-dir`, which keep each input's name, keep its compression.
 * A standard stream (`null`) has no name and gets plain text whatever the input was, as the tools that read
 * compressed files and write a result do (Nextclade's `-o -`, Miller, what ripgrep's `-z` prints):
 * the next command of a pipe (`jq`, a terminal, swc itself) reads it as it is, and `| gzip` compresses it if wanted.
 * @param name the path the result is written to, or `null` for standard output or standard error
 */
export function outputCompression(name: string | null): CompressionFormat | null {
  if (name === null) return null;
  if (/\.gz$/i.test(name)) return 'gzip';
  if (/\.br$/i.test(name)) return 'brotli';
  return null;
}

/** Compresses a result (gzip level 6, brotli quality 6: each tool's usual speed). */
export function compress(bytes: Uint8Array, format: CompressionFormat): Uint8Array {
  if (format === 'gzip') return zlib.gzipSync(bytes, { level: 6 });
  return zlib.brotliCompressSync(bytes, {
    params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 6, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: bytes.length },
  });
}

/** The parts of Node's zlib stream used for synchronous streaming (what `zlib.gunzipSync` itself drives). */
interface NativeHandle {
  writeSync(
    flush: number,
    input: Uint8Array,
    inOff: number,
    inLen: number,
    out: Uint8Array,
    outOff: number,
    outLen: number,
  ): void;
  onerror: (message: string, errno: number, code?: string) => void;
}

/** How much output one native call may produce. */
const OUT_CHUNK = 1 << 20;

/**
 * Decompresses a stream synchronously, a block at a time, so a reader that is synchronous throughout can take a
 * compressed file of any size with bounded memory. Node offers only whole-buffer synchronous calls
 * (`gunzipSync`) or asynchronous streams, so this drives the stream's native handle the way `gunzipSync` does
 * (write, read how much input and output space is left, repeat); test/io/compressed.test.ts checks it on every
 * kind of damaged input, so a Node release that changes this shows there.
 */
export class Inflater {
  private readonly stream: zlib.Gunzip | zlib.BrotliDecompress;
  private readonly handle: NativeHandle;
  private readonly state: Uint32Array;
  private readonly flush: number;
  private readonly finishFlush: number;
  private error: { message: string; code: string | undefined } | null = null;
  private out = Buffer.allocUnsafeSlow(OUT_CHUNK);
  private total = 0;
  private closed = false;

  /**
   * @param format what to decompress
   * @param file the name shown in messages
   * @param limit the most it may decompress to
   * @param emit takes each piece of output (its buffer is not reused)
   */
  constructor(
    readonly format: CompressionFormat,
    private readonly file: string,
    private readonly limit: number,
    private readonly emit: (piece: Uint8Array) => void,
  ) {
    this.stream = format === 'gzip' ? zlib.createGunzip() : zlib.createBrotliDecompress();
    const internals = this.stream as unknown as { _handle: NativeHandle | null; _writeState: Uint32Array };
    // Checked without instanceof: the array comes from Node's own realm (not a test's).
    if (internals._handle === null || !ArrayBuffer.isView(internals._writeState))
      throw new Error('this Node.js release has no synchronous zlib stream handle');
    this.handle = internals._handle;
    this.state = internals._writeState;
    // Errors are taken here, synchronously, instead of closing the stream and emitting them later.
    this.handle.onerror = (message, _errno, code) => {
      this.error = { message, code };
    };
    const c = zlib.constants;
    this.flush = format === 'gzip' ? c.Z_NO_FLUSH : c.BROTLI_OPERATION_PROCESS;
    this.finishFlush = format === 'gzip' ? c.Z_FINISH : c.BROTLI_OPERATION_FINISH;
  }

  /** Takes the next compressed bytes. */
  push(input: Uint8Array): void {
    this.run(input, this.flush);
  }

  /** Ends the input: a stream cut short fails here. */
  finish(): void {
    this.run(new Uint8Array(0), this.finishFlush);
    this.close();
  }

  /** Frees the native stream (also after a failure). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.stream.close();
  }

  /** Total bytes of output so far. */
  get size(): number {
    return this.total;
  }

  private run(input: Uint8Array, flush: number): void {
    let inOff = 0;
    let inLen = input.length;
    for (;;) {
      this.handle.writeSync(flush, input, inOff, inLen, this.out, 0, OUT_CHUNK);
      if (this.error !== null) throw this.damaged(this.error);
      const availOut = this.state[0] as number;
      const availIn = this.state[1] as number;
      const produced = OUT_CHUNK - availOut;
      if (produced > 0) {
        this.total += produced;
        if (this.total > this.limit)
          throw new InputError(
            `decompresses to more than ${describeBytes(this.limit)} (${BOMB_RATIO} times its size, or ${describeBytes(BOMB_FLOOR)}, is the limit); refused as a possible decompression bomb`,
            this.file,
          );
        if (produced < OUT_CHUNK / 2) {
          // A small piece is copied out, so the big buffer is reused instead of held for a few bytes.
          this.emit(Buffer.from(this.out.subarray(0, produced)));
        } else {
          this.emit(this.out.subarray(0, produced));
          this.out = Buffer.allocUnsafeSlow(OUT_CHUNK);
        }
      }
      inOff += inLen - availIn;
      inLen = availIn;
      if (availOut !== 0) {
        // Room for output was left, so the stream took all it could: input left over follows the end of the data.
        if (availIn > 0)
          throw new InputError(
            `has bytes after the end of its ${this.format} data (trailing garbage); refused`,
            this.file,
          );
        return;
      }
    }
  }

  private damaged(error: { message: string; code: string | undefined }): InputError {
    const what = this.format === 'gzip' ? 'gzip' : 'brotli';
    const truncated = error.code === 'Z_BUF_ERROR' || /unexpected end/i.test(error.message);
    if (truncated) return new InputError(`is not complete ${what} data (it ends too early: truncated?)`, this.file);
    // The input started with the gzip magic bytes, so a header that fails is one after the end of the data.
    if (this.format === 'gzip' && /header check/i.test(error.message)) {
      return new InputError('has bytes after the end of its gzip data (trailing garbage); refused', this.file);
    }
    return new InputError(`is not valid ${what} data (${error.message})`, this.file);
  }
}

/** A size in MiB or bytes, rounded up. */
function describeBytes(bytes: number): string {
  if (bytes >= 1 << 20) return `${Math.ceil(bytes / (1 << 20))} MiB`;
  return `${bytes} bytes`;
}
