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
 * Compressed transcripts through the command line: a `.jsonl.gz` compacts to what the plain file gives; the result is
 * compressed as the name it is written under says (`-o`), as its input was under the input's own name (`--in-place`,
 * `--out-dir`), plain on standard output; an unchanged one kept compressed is copied byte for byte; damaged ones fail
 * alone.
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

type Packing = 'plain' | 'gzip' | 'brotli';

/** The text of bytes written as `packing`, after checking they are that: gzip's magic bytes, brotli's round trip, plain JSON. */
function unpack(bytes: Buffer, packing: Packing): Buffer {
  const gzipMagic = bytes[0] === 0x1f && bytes[1] === 0x8b;
  expect(gzipMagic).toBe(packing === 'gzip');
  if (packing === 'gzip') return gunzipSync(bytes);
  if (packing === 'brotli') return brotliDecompressSync(bytes);
  // Plain text: a transcript's first byte, and no decompressor would take it.
  expect(['{', '[']).toContain(String.fromCharCode(bytes[0] as number));
  expect(() => brotliDecompressSync(bytes)).toThrow();
  return bytes;
}

/** The sample's inputs by packing, as folder() writes them. */
const INPUTS: Record<Packing, string> = { plain: 's.jsonl', gzip: 's.jsonl.gz', brotli: 's.jsonl.br' };
/** -o names and the packing each asks for. */
const OUTPUTS: Array<[string, Packing]> = [
  ['out.jsonl', 'plain'],
  ['out.json.txt', 'plain'],
  ['out.jsonl.gz', 'gzip'],
  ['OUT.JSONL.GZ', 'gzip'],
  ['out.jsonl.br', 'brotli'],
  ['out.Br', 'brotli'],
];
const CASES = (Object.keys(INPUTS) as Packing[]).flatMap((input) =>
  OUTPUTS.map(([name, packing]) => [input, name, packing] as const),
);

describe('the name given to -o', () => {
  it.each(CASES)('writes a %s input to %s as %s', async (input, name, packing) => {
    const dir = folder();
    const plain = await plainResult(dir);
    expect(plain.length).toBeLessThan(SAMPLE_BYTES.length);
    const r = await runSwc(['compact', INPUTS[input], ...TARGET, '-o', name], { cwd: dir });
    expect(r.status).toBe(0);
    expect(unpack(readFileSync(path.join(dir, name)), packing).equals(plain)).toBe(true);
  });

  it.each(CASES)('writes an unchanged %s input to %s as %s', async (input, name, packing) => {
    const dir = folder();
    const r = await runSwc(['compact', INPUTS[input], '-t', '1000000', '--tokenizer', 'approx', '-o', name], {
      cwd: dir,
    });
    expect(r.status).toBe(0);
    const written = readFileSync(path.join(dir, name));
    expect(unpack(written, packing).equals(SAMPLE_BYTES)).toBe(true);
    // Kept as it was compressed, it is the very bytes read.
    if (input === packing) expect(written.equals(readFileSync(path.join(dir, INPUTS[input])))).toBe(true);
  });

  it('decides for gzip bytes named .jsonl, and for a gzip standard input', async () => {
    const dir = folder();
    const plain = await plainResult(dir);
    cpSync(path.join(dir, 's.jsonl.gz'), path.join(dir, 'named.jsonl'));
    expect((await runSwc(['compact', 'named.jsonl', ...TARGET, '-o', 'out.jsonl'], { cwd: dir })).status).toBe(0);
    expect(unpack(readFileSync(path.join(dir, 'out.jsonl')), 'plain').equals(plain)).toBe(true);
    expect(
      (await runSwc(['compact', '-', ...TARGET, '-o', 'in.jsonl'], { cwd: dir, stdin: gzipSync(SAMPLE_BYTES) })).status,
    ).toBe(0);
    expect(unpack(readFileSync(path.join(dir, 'in.jsonl')), 'plain').equals(plain)).toBe(true);
  });
});

describe('a compressed transcript', () => {
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

  it('is known by its gzip bytes whatever its name, and rewritten in place as gzip under that name', async () => {
    const dir = folder();
    const plain = await plainResult(dir);
    mkdirSync(path.join(dir, 'in'));
    cpSync(path.join(dir, 's.jsonl.gz'), path.join(dir, 'in/named.jsonl'));
    const r = await runSwc(['compact', 'in/named.jsonl', ...TARGET, '--in-place'], { cwd: dir });
    expect(r.status).toBe(0);
    expect(unpack(readFileSync(path.join(dir, 'in/named.jsonl')), 'gzip').equals(plain)).toBe(true);
    expect((await runSwc(['compact', 'in', ...TARGET, '--out-dir', 'out'], { cwd: dir })).status).toBe(0);
    expect(unpack(readFileSync(path.join(dir, 'out/named.jsonl')), 'gzip').equals(plain)).toBe(true);
  });

  it('comes through standard input, known by its gzip bytes, and goes out compressed', async () => {
    const dir = folder();
    const plain = await plainResult(dir);
    const r = await runSwc(['compact', '-', ...TARGET, '-o', 'out.jsonl.gz'], {
      cwd: dir,
      stdin: gzipSync(SAMPLE_BYTES),
    });
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

  it.each([['gzip'], ['brotli']] as const)(
    'goes to standard output plain from a %s input, piped or to a terminal',
    async (packing) => {
      const dir = folder();
      const plain = await plainResult(dir);
      const compact = async (
        isTTY: boolean,
        extra: readonly string[] = [],
      ): Promise<{ status: number; out: Buffer; err: string }> => {
        const out: Buffer[] = [];
        const err: string[] = [];
        const io: CliIo = {
          stdout: { isTTY, write: (chunk) => out.push(Buffer.from(chunk)) > 0 },
          stderr: { write: (chunk) => err.push(Buffer.from(chunk).toString()) > 0 },
          stdin: Readable.from([]),
          env: { NO_COLOR: '1' },
          cwd: dir,
        };
        const status = await runCli(['compact', INPUTS[packing], ...TARGET, ...extra], io);
        return { status, out: Buffer.concat(out), err: err.join('') };
      };
      for (const run of [
        await compact(false),
        await compact(true),
        await compact(false, ['-o', '-']),
        await compact(false, ['-o', '/dev/stdout']),
      ]) {
        expect(run.status).toBe(0);
        expect(unpack(run.out, 'plain').equals(plain)).toBe(true);
      }
    },
  );

  it('goes to standard output plain from a gzip standard input', async () => {
    const dir = folder();
    const plain = await plainResult(dir);
    const r = await runSwc(['compact', '-', ...TARGET], { cwd: dir, stdin: gzipSync(SAMPLE_BYTES) });
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(plain.toString('utf8'));
  });

  it('is read by swc inspect', async () => {
    const dir = folder();
    const plain = await runSwc(['inspect', 's.jsonl', '--tokenizer', 'approx'], { cwd: dir });
    const gz = await runSwc(['inspect', 's.jsonl.gz', '--tokenizer', 'approx'], { cwd: dir });
    expect(gz.status).toBe(plain.status);
    expect(gz.stdout.replaceAll('s.jsonl.gz', 's.jsonl')).toBe(plain.stdout);
  });
});

// A decompression bomb (80 MiB to inflate): test/e2e/compressed.test.ts.
describe('a damaged compressed file', () => {
  const gz = gzipSync(SAMPLE_BYTES);
  const cases: Array<[string, Buffer, string]> = [
    ['truncated', gz.subarray(0, gz.length - 20), 'is not complete gzip data (it ends too early: truncated?)'],
    [
      'followed by garbage',
      Buffer.concat([gz, Buffer.from('garbage\n')]),
      'has bytes after the end of its gzip data (trailing garbage); refused',
    ],
    [
      'holding invalid UTF-8',
      gzipSync(Buffer.from('{"role":"user","content":"\xff"}\n', 'latin1')),
      'a.jsonl.gz:1:27: invalid UTF-8 (byte 0xff at byte offset 26)',
    ],
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
    expect(r.stderr).toContain(
      'in/live.jsonl.gz: the file changed while it was being compacted; nothing was written for it',
    );
    expect(readFileSync(file).equals(Buffer.concat([packed, appended]))).toBe(true);
    expect(readdirSync(path.join(dir, 'in'))).toEqual(['live.jsonl.gz']);
  });
});

describe('a directory search', () => {
  it('finds compressed files, .ndjson, and extensions in any case', async () => {
    const dir = tempDir();
    const names = [
      'a.json.gz',
      'b.jsonl.gz',
      'c.ndjson',
      'd.NDJSON.GZ',
      'e.JSONL',
      'f.Json',
      'g.jsonl.br',
      'h.txt',
      'i.gz',
    ];
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

describe('swc restore of a compressed transcript', () => {
  it('writes as the name given to -o says, and plain to standard output', async () => {
    const dir = tempDir();
    const id = 'call-1';
    const text = JSON.stringify([
      { role: 'user', content: 'task' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id, type: 'function', function: { name: 'search', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: id, content: 'x'.repeat(4000) },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: `${id}-2`, type: 'function', function: { name: 'search', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: `${id}-2`, content: 'y'.repeat(4000) },
    ]);
    writeFileSync(path.join(dir, 'run.json'), text);
    const offload = [
      '-t',
      '100',
      '--tokenizer',
      'approx',
      '--strategy',
      'offload',
      '--offload-over',
      '1000',
      '--offload-dir',
      'store',
    ];
    expect((await runSwc(['compact', 'run.json', ...offload, '-o', 'off.json.gz'], { cwd: dir })).status).toBe(0);
    expect(unpack(readFileSync(path.join(dir, 'off.json.gz')), 'gzip').toString()).toMatch(/Tool result offloaded/);
    for (const [name, packing] of [
      ['back.json', 'plain'],
      ['back.json.br', 'brotli'],
      ['back.json.gz', 'gzip'],
    ] as const) {
      expect((await runSwc(['restore', 'off.json.gz', '-o', name], { cwd: dir })).status).toBe(0);
      expect(unpack(readFileSync(path.join(dir, name)), packing).toString()).toBe(text);
    }
    const out: Buffer[] = [];
    const io: CliIo = {
      stdout: { isTTY: true, write: (chunk) => out.push(Buffer.from(chunk)) > 0 },
      stderr: { write: () => true },
      stdin: Readable.from([]),
      env: { NO_COLOR: '1' },
      cwd: dir,
    };
    expect(await runCli(['restore', 'off.json.gz'], io)).toBe(0);
    expect(unpack(Buffer.concat(out), 'plain').toString()).toBe(text);
  });
});
