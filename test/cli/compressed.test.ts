import { afterEach, describe, expect, it } from '@jest/globals';
import { appendFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import { Readable } from 'node:stream';
import type { CliIo } from '../../src/cli/io.js';
import { run as runCli } from '../../src/cli/program.js';
import { writeHooks } from '../../src/io/files.js';
import { ROOT, tempDir } from '../helpers/cli.js';
import { runSwc } from '../helpers/run-in-process.js';

/**
 * Compressed transcripts through the command line: a `.jsonl.gz` compacts to what the plain file gives, written back
 * compressed the same way wherever it goes; an unchanged one is copied byte for byte; damaged ones fail alone.
 */

const SAMPLE = path.join(ROOT, 'fixtures/sample.jsonl');
const SAMPLE_BYTES = readFileSync(SAMPLE);
const TARGET = ['-t', '200', '--tokenizer', 'approx'];

afterEach(() => {
  delete writeHooks.beforeRename;
});

/** A folder holding the sample plain and compressed. */
function folder(): string {
  const dir = tempDir();
  cpSync(SAMPLE, path.join(dir, 's.jsonl'));
  writeFileSync(path.join(dir, 's.jsonl.gz'), gzipSync(SAMPLE_BYTES));
  writeFileSync(path.join(dir, 's.jsonl.br'), brotliCompressSync(SAMPLE_BYTES));
  return dir;
}

/** What compacting the plain sample gives. */
async function plainResult(dir: string, args: readonly string[] = TARGET): Promise<Buffer> {
  const r = await runSwc(['compact', 's.jsonl', ...args, '-o', 'plain.out.jsonl'], { cwd: dir });
  expect(r.status).toBe(0);
  return readFileSync(path.join(dir, 'plain.out.jsonl'));
}

describe('a compressed transcript', () => {
  it('compacts with -o to the plain result, compressed the same way', async () => {
    const dir = folder();
    const plain = await plainResult(dir);
    expect(plain.length).toBeLessThan(SAMPLE_BYTES.length);
    const gz = await runSwc(['compact', 's.jsonl.gz', ...TARGET, '-o', 'out.jsonl.gz'], { cwd: dir });
    expect(gz.status).toBe(0);
    expect(gunzipSync(readFileSync(path.join(dir, 'out.jsonl.gz'))).equals(plain)).toBe(true);
    const br = await runSwc(['compact', 's.jsonl.br', ...TARGET, '-o', 'out.jsonl.br'], { cwd: dir });
    expect(br.status).toBe(0);
    expect(brotliDecompressSync(readFileSync(path.join(dir, 'out.jsonl.br'))).equals(plain)).toBe(true);
  });

  it('is rewritten compressed by --in-place, and by --out-dir under its own name', async () => {
    const dir = folder();
    const plain = await plainResult(dir);
    mkdirSync(path.join(dir, 'in'));
    cpSync(path.join(dir, 's.jsonl.gz'), path.join(dir, 'in/a.jsonl.gz'));
    cpSync(path.join(dir, 's.jsonl.br'), path.join(dir, 'in/b.jsonl.br'));
    const out = await runSwc(['compact', 'in', ...TARGET, '--out-dir', 'out'], { cwd: dir });
    expect(out.status).toBe(0);
    expect(readdirSync(path.join(dir, 'out')).sort()).toEqual(['a.jsonl.gz', 'b.jsonl.br']);
    expect(gunzipSync(readFileSync(path.join(dir, 'out/a.jsonl.gz'))).equals(plain)).toBe(true);
    expect(brotliDecompressSync(readFileSync(path.join(dir, 'out/b.jsonl.br'))).equals(plain)).toBe(true);
    const inPlace = await runSwc(['compact', 'in', ...TARGET, '--in-place'], { cwd: dir });
    expect(inPlace.status).toBe(0);
    expect(gunzipSync(readFileSync(path.join(dir, 'in/a.jsonl.gz'))).equals(plain)).toBe(true);
    expect(brotliDecompressSync(readFileSync(path.join(dir, 'in/b.jsonl.br'))).equals(plain)).toBe(true);
  });

  it('is copied byte for byte when nothing changes, never recompressed', async () => {
    const dir = tempDir();
    const packed = gzipSync(SAMPLE_BYTES, { level: 1 });
    mkdirSync(path.join(dir, 'in'));
    writeFileSync(path.join(dir, 'in/a.jsonl.gz'), packed);
    const big = ['-t', '1000000', '--tokenizer', 'approx'];
    expect((await runSwc(['compact', 'in', ...big, '--out-dir', 'out'], { cwd: dir })).status).toBe(0);
    expect(readFileSync(path.join(dir, 'out/a.jsonl.gz')).equals(packed)).toBe(true);
    expect((await runSwc(['compact', 'in/a.jsonl.gz', ...big, '-o', 'copy.jsonl.gz'], { cwd: dir })).status).toBe(0);
    expect(readFileSync(path.join(dir, 'copy.jsonl.gz')).equals(packed)).toBe(true);
  });

  it('is known by its gzip bytes whatever its name', async () => {
    const dir = folder();
    const plain = await plainResult(dir);
    cpSync(path.join(dir, 's.jsonl.gz'), path.join(dir, 'named.jsonl'));
    const r = await runSwc(['compact', 'named.jsonl', ...TARGET, '-o', 'out.jsonl'], { cwd: dir });
    expect(r.status).toBe(0);
    expect(gunzipSync(readFileSync(path.join(dir, 'out.jsonl'))).equals(plain)).toBe(true);
  });

  it('comes through standard input, known by its gzip bytes, and goes out compressed', async () => {
    const dir = folder();
    const plain = await plainResult(dir);
    const r = await runSwc(['compact', '-', ...TARGET, '-o', 'out.jsonl.gz'], { cwd: dir, stdin: gzipSync(SAMPLE_BYTES) });
    expect(r.status).toBe(0);
    expect(gunzipSync(readFileSync(path.join(dir, 'out.jsonl.gz'))).equals(plain)).toBe(true);
  });

  it('leaves an --out-dir result of an earlier run as it is (the same bytes again)', async () => {
    const dir = folder();
    mkdirSync(path.join(dir, 'in'));
    cpSync(path.join(dir, 's.jsonl.gz'), path.join(dir, 'in/a.jsonl.gz'));
    expect((await runSwc(['compact', 'in', ...TARGET, '--out-dir', 'out'], { cwd: dir })).status).toBe(0);
    const again = await runSwc(['compact', 'in', ...TARGET, '--out-dir', 'out'], { cwd: dir });
    expect(again.status).toBe(0);
  });

  it('goes to a piped standard output compressed, and never to a terminal', async () => {
    const dir = folder();
    const plain = await plainResult(dir);
    const compact = async (isTTY: boolean): Promise<{ status: number; out: Buffer; err: string }> => {
      const out: Buffer[] = [];
      const err: string[] = [];
      const io: CliIo = {
        stdout: { isTTY, write: (chunk) => out.push(Buffer.from(chunk)) > 0 },
        stderr: { write: (chunk) => err.push(Buffer.from(chunk).toString()) > 0 },
        stdin: Readable.from([]),
        env: { NO_COLOR: '1' },
        cwd: dir,
      };
      const status = await runCli(['compact', 's.jsonl.gz', ...TARGET], io);
      return { status, out: Buffer.concat(out), err: err.join('') };
    };
    const piped = await compact(false);
    expect(piped.status).toBe(0);
    expect(gunzipSync(piped.out).equals(plain)).toBe(true);
    const terminal = await compact(true);
    expect(terminal.status).toBe(2);
    expect(terminal.out.length).toBe(0);
    expect(terminal.err).toBe('swc: s.jsonl.gz: is gzip-compressed, so its result is too, and it is not written to a terminal (use -o FILE, or a pipe)\n');
  });

  it('is read by swc inspect', async () => {
    const dir = folder();
    const plain = await runSwc(['inspect', 's.jsonl', '--tokenizer', 'approx'], { cwd: dir });
    const gz = await runSwc(['inspect', 's.jsonl.gz', '--tokenizer', 'approx'], { cwd: dir });
    expect(gz.status).toBe(plain.status);
    expect(gz.stdout.replaceAll('s.jsonl.gz', 's.jsonl')).toBe(plain.stdout);
  });
});

describe('a damaged compressed file', () => {
  const gz = gzipSync(SAMPLE_BYTES);
  const cases: Array<[string, Buffer, string]> = [
    ['truncated', gz.subarray(0, gz.length - 20), 'is not complete gzip data (it ends too early: truncated?)'],
    ['followed by garbage', Buffer.concat([gz, Buffer.from('garbage\n')]), 'has bytes after the end of its gzip data (trailing garbage); refused'],
    ['holding invalid UTF-8', gzipSync(Buffer.from('{"role":"user","content":"\xff"}\n', 'latin1')), 'a.jsonl.gz:1:27: invalid UTF-8 (byte 0xff at byte offset 26)'],
    ['a decompression bomb', gzipSync(Buffer.alloc(80 << 20, 0x20)), 'refused as a possible decompression bomb'],
  ];

  it.each(cases)('is refused with one line, exit 2, nothing written, when %s', async (_name, bytes, message) => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'a.jsonl.gz'), bytes);
    const r = await runSwc(['compact', 'a.jsonl.gz', ...TARGET, '-o', 'out.jsonl.gz'], { cwd: dir });
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(message);
    expect(existsSync(path.join(dir, 'out.jsonl.gz'))).toBe(false);
    const inPlace = await runSwc(['compact', 'a.jsonl.gz', ...TARGET, '--in-place'], { cwd: dir });
    expect(inPlace.status).toBe(2);
    expect(readFileSync(path.join(dir, 'a.jsonl.gz')).equals(bytes)).toBe(true);
    expect(readdirSync(dir)).toEqual(['a.jsonl.gz']);
  });
});

describe('--in-place on a compressed file', () => {
  it('refuses a file that changed during the run', async () => {
    const dir = tempDir();
    mkdirSync(path.join(dir, 'in'));
    const file = path.join(dir, 'in/live.jsonl.gz');
    const packed = gzipSync(SAMPLE_BYTES);
    writeFileSync(file, packed);
    const appended = gzipSync('{"role":"user","content":"late"}\n');
    writeHooks.beforeRename = () => appendFileSync(file, appended);
    const r = await runSwc(['compact', 'in/live.jsonl.gz', ...TARGET, '--in-place'], { cwd: dir });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('in/live.jsonl.gz: the file changed while it was being compacted; nothing was written for it');
    expect(readFileSync(file).equals(Buffer.concat([packed, appended]))).toBe(true);
    expect(readdirSync(path.join(dir, 'in'))).toEqual(['live.jsonl.gz']);
  });
});

describe('a directory search', () => {
  it('finds compressed files, .ndjson, and extensions in any case', async () => {
    const dir = tempDir();
    const names = ['a.json.gz', 'b.jsonl.gz', 'c.ndjson', 'd.NDJSON.GZ', 'e.JSONL', 'f.Json', 'g.jsonl.br', 'h.txt', 'i.gz'];
    mkdirSync(path.join(dir, 'in'));
    for (const n of names) writeFileSync(path.join(dir, 'in', n), '[]\n');
    const r = await runSwc(['compact', 'in', ...TARGET, '--check'], { cwd: dir });
    const seen = r.stderr.match(/(\d+) files? scanned/);
    expect(seen?.[1]).toBe('7');
  });

  it('names every kind it looks for when it finds none', async () => {
    const dir = tempDir();
    mkdirSync(path.join(dir, 'in'));
    writeFileSync(path.join(dir, 'in/notes.txt'), 'x');
    const r = await runSwc(['compact', 'in', ...TARGET, '--check'], { cwd: dir });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('no .json, .jsonl or .ndjson files (or .gz, .br of them) under "in"');
  });
});
