import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import {
  BOMB_FLOOR,
  BOMB_RATIO,
  compressionOf,
  decompressedLimit,
  Inflater,
  innerName,
} from '../../src/io/compressed.js';
import { isLineSource, readSourceFile, sourceFromBytes } from '../../src/io/lines.js';
import { compactSource, outputBytes } from '../../src/pipeline/index.js';
import { createFakeCounter } from '../helpers/fake-counter.js';
import { ROOT, tempDir } from '../helpers/cli.js';
import { scaled } from '../helpers/scale.js';

/**
 * Compressed inputs read as they are decompressed, a block at a time: the same text as the plain file, whatever the
 * block boundaries; damaged data, trailing bytes and bombs refused with one line.
 */

const SAMPLE = readFileSync(path.join(ROOT, 'fixtures/sample.jsonl'));

/** Decompresses with the streaming inflater, the compressed bytes pushed in pieces of `step` bytes. */
function inflate(
  bytes: Buffer,
  format: 'gzip' | 'brotli',
  step: number,
  limit = decompressedLimit(bytes.length),
): Buffer {
  const out: Buffer[] = [];
  const inflater = new Inflater(format, 'x', limit, (piece) => out.push(Buffer.from(piece)));
  try {
    for (let i = 0; i < bytes.length; i += step) inflater.push(bytes.subarray(i, i + step));
    inflater.finish();
  } finally {
    inflater.close();
  }
  return Buffer.concat(out);
}

function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    return (error as Error).message;
  }
  return 'no error';
}

describe('the streaming inflater', () => {
  it('gives the original bytes whatever the pieces the input comes in', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 20_000 }),
        fc.integer({ min: 1, max: 5000 }),
        fc.boolean(),
        (data, step, brotli) => {
          const bytes = Buffer.from(data);
          const packed = brotli ? brotliCompressSync(bytes) : gzipSync(bytes);
          expect(inflate(packed, brotli ? 'brotli' : 'gzip', step).equals(bytes)).toBe(true);
        },
      ),
      { numRuns: scaled(60) },
    );
  });

  it('reads gzip members one after another as one stream, as gzip does', () => {
    expect(inflate(Buffer.concat([gzipSync('ab'), gzipSync('cd')]), 'gzip', 7).toString()).toBe('abcd');
  });

  it('refuses truncated, corrupt and trailing data with one line', () => {
    const gz = gzipSync(SAMPLE);
    const br = brotliCompressSync(SAMPLE);
    expect(errorOf(() => inflate(gz.subarray(0, gz.length - 9), 'gzip', 4096))).toBe(
      'x: is not complete gzip data (it ends too early: truncated?)',
    );
    expect(errorOf(() => inflate(gz.subarray(0, 5), 'gzip', 4096))).toBe(
      'x: is not complete gzip data (it ends too early: truncated?)',
    );
    expect(errorOf(() => inflate(br.subarray(0, br.length - 3), 'brotli', 4096))).toBe(
      'x: is not complete brotli data (it ends too early: truncated?)',
    );
    const flipped = Buffer.from(gz);
    flipped[200] = (flipped[200] as number) ^ 0xff;
    expect(errorOf(() => inflate(flipped, 'gzip', 4096))).toMatch(/^x: is not valid gzip data \(/);
    for (const tail of ['garbage', '\u0000\u0000\u0000', '\u001fx']) {
      for (const step of [3, 4096, 1 << 20]) {
        expect(errorOf(() => inflate(Buffer.concat([gz, Buffer.from(tail)]), 'gzip', step))).toBe(
          'x: has bytes after the end of its gzip data (trailing garbage); refused',
        );
      }
      expect(errorOf(() => inflate(Buffer.concat([br, Buffer.from(tail)]), 'brotli', 4096))).toBe(
        'x: has bytes after the end of its brotli data (trailing garbage); refused',
      );
    }
  });

  it('stops a decompression bomb at its limit', () => {
    const bomb = gzipSync(Buffer.alloc(1 << 20, 0x61));
    expect(errorOf(() => inflate(bomb, 'gzip', 4096, 100_000))).toMatch(
      /^x: decompresses to more than 100000 bytes \(200 times its size, or 64 MiB, is the limit\); refused as a possible decompression bomb$/,
    );
    expect(decompressedLimit(1000)).toBe(BOMB_FLOOR);
    expect(decompressedLimit(1 << 30)).toBe(BOMB_RATIO * (1 << 30));
  });
});

describe('telling a compressed input', () => {
  it('knows gzip by its magic bytes and brotli only by the name .br', () => {
    expect(compressionOf(gzipSync('x'), ['a.json'])).toBe('gzip');
    expect(compressionOf(Buffer.from('{}'), ['a.json.gz'])).toBeNull();
    expect(compressionOf(Buffer.from('xx'), ['a.jsonl.BR'])).toBe('brotli');
    expect(innerName('a.JSONL.GZ')).toBe('a.JSONL');
  });
});

describe('reading a compressed file', () => {
  const options = { target: 300, counter: createFakeCounter() };

  it('compacts to the same text as the plain file, held in memory or spooled through a temporary file', async () => {
    const dir = tempDir();
    const plain = await compactSource(sourceFromBytes(SAMPLE, 'sample.jsonl'), options);
    expect(plain.changed).toBe(true);
    for (const [name, packed] of [
      ['s.jsonl.gz', gzipSync(SAMPLE)],
      ['s.jsonl.br', brotliCompressSync(SAMPLE)],
    ] as const) {
      const file = path.join(dir, name);
      writeFileSync(file, packed);
      // holdUpTo 0: everything past nothing goes to the spool; 4096-byte blocks cross many lines.
      for (const holdUpTo of [undefined, 0]) {
        const source = readSourceFile(file, name, holdUpTo, 4096);
        expect(isLineSource(source)).toBe(true);
        expect(source.compressed?.format).toBe(name.endsWith('.gz') ? 'gzip' : 'brotli');
        const result = await compactSource(source, options);
        expect(result.output).toBe(plain.output);
        const bytes = outputBytes(result);
        const back = name.endsWith('.gz') ? gunzipSync(bytes) : brotliDecompressSync(bytes);
        expect(back.toString()).toBe(plain.output);
        source.release?.();
      }
    }
  });

  it('gives back the bytes read, not recompressed, when nothing changes', async () => {
    const dir = tempDir();
    const packed = gzipSync(SAMPLE, { level: 1 });
    const file = path.join(dir, 's.jsonl.gz');
    writeFileSync(file, packed);
    for (const holdUpTo of [undefined, 0]) {
      const source = readSourceFile(file, 's.jsonl.gz', holdUpTo);
      const result = await compactSource(source, { target: 1_000_000, counter: createFakeCounter() });
      expect(result.changed).toBe(false);
      expect(Buffer.compare(outputBytes(result), packed)).toBe(0);
      source.release?.();
    }
  });

  it('removes its temporary file when released', () => {
    const dir = tempDir();
    const file = path.join(dir, 's.jsonl.gz');
    writeFileSync(file, gzipSync(SAMPLE));
    const before = spoolDirs();
    const source = readSourceFile(file, 's.jsonl.gz', 0);
    const made = spoolDirs().filter((d) => !before.includes(d));
    expect(made).toHaveLength(1);
    source.release?.();
    expect(existsSync(made[0] as string)).toBe(false);
  });

  it('words invalid UTF-8 inside as a plain file would', () => {
    const bytes = gzipSync(
      Buffer.concat([Buffer.from('{"role":"user","content":"a'), Buffer.from([0xff]), Buffer.from('"}\n')]),
    );
    expect(errorOf(() => sourceFromBytes(bytes, 'bad.jsonl.gz'))).toBe(
      'bad.jsonl.gz:1:28: invalid UTF-8 (byte 0xff at byte offset 27)',
    );
  });
});

/** The decompression spools now in the temporary folder. */
function spoolDirs(): string[] {
  return readdirSync(tmpdir())
    .filter((n) => n.startsWith('swc-spool-'))
    .map((n) => path.join(tmpdir(), n));
}
