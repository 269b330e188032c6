import { describe, expect, it } from '@jest/globals';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { shardOf } from '../../src/cli/batch.js';
import { tempDir } from '../helpers/cli.js';
import { runSwc } from '../helpers/run-in-process.js';

/**
 * --shard i/n: each file goes to the shard its path hash (under the base, `/`-separated, NFC) names, so the
 * shards are disjoint and complete, and the split is the same in any order, from any directory, on any machine.
 */

const LINE = (i: number): string =>
  `${JSON.stringify({ role: 'user', content: `hello ${i}` })}\n${JSON.stringify({ role: 'assistant', content: 'hi' })}\n`;

/** A tree of `count` small transcripts in a few folders; returns the root (files under root/tree). */
function archive(count: number): string {
  const root = tempDir();
  for (let i = 0; i < count; i++) {
    const dir = path.join(root, 'tree', `d${i % 6}`, i % 2 === 0 ? 'x' : 'y');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, `f${i}.jsonl`), LINE(i));
  }
  return root;
}

/** The files a shard run processed, from its report, as paths relative to `root`. */
async function shardFiles(
  root: string,
  cwd: string,
  inputs: readonly string[],
  shard: string | null,
  extra: readonly string[] = [],
): Promise<string[]> {
  const report = path.join(tempDir(), 'report.json');
  const run = await runSwc(
    [
      'compact',
      ...inputs,
      '--check',
      '-qq',
      '-t',
      '1000000',
      '--tokenizer',
      'approx',
      ...(shard === null ? [] : ['--shard', shard]),
      '--report',
      report,
      ...extra,
    ],
    { cwd },
  );
  expect(run).toEqual({ status: 0, stdout: '', stderr: '' });
  const { files } = JSON.parse(readFileSync(report, 'utf8')) as { files: Array<{ path: string }> };
  return files.map((f) => path.relative(root, path.resolve(cwd, f.path)).split(path.sep).join('/'));
}

describe('swc compact --shard', () => {
  it('splits the files into disjoint shards that together cover every file exactly once', async () => {
    const root = archive(90);
    const all = await shardFiles(root, root, ['tree'], null);
    expect(all).toHaveLength(90);
    for (const n of [1, 2, 3, 5]) {
      const shards: string[][] = [];
      for (let i = 0; i < n; i++) shards.push(await shardFiles(root, root, ['tree'], `${i + 1}/${n}`));
      const seen = shards.flat();
      expect(new Set(seen).size).toBe(seen.length);
      expect([...seen].sort()).toEqual([...all].sort());
      // Each shard keeps the sorted order of the whole run.
      for (const s of shards) expect(s).toEqual(all.filter((f) => s.includes(f)));
      if (n > 1) for (const s of shards) expect(s.length).toBeGreaterThan(0);
    }
  });

  it('puts each file in the same shard whatever the order of the inputs, the working directory or absolute paths', async () => {
    const root = archive(40);
    const inputs: Array<[string, string[]]> = [
      [root, ['tree']],
      [path.join(root, 'tree'), ['.']],
      [root, ['tree/d5', 'tree/d3', 'tree/d0', 'tree/d1', 'tree/d4', 'tree/d2']],
      [path.join(root, 'tree/d2'), [path.join(root, 'tree')]],
      [root, ['tree/**/*.jsonl']],
    ];
    for (const shard of ['1/3', '2/3', '3/3']) {
      const runs: string[][] = [];
      for (const [cwd, args] of inputs) runs.push(await shardFiles(root, cwd, args, shard));
      for (const run of runs.slice(1)) expect(run).toEqual(runs[0]);
    }
  });

  it('hashes the path under the base, so --base decides the split', async () => {
    const root = archive(40);
    const fromTree = await shardFiles(root, root, ['tree'], '1/2');
    expect(
      await shardFiles(root, root, ['tree/d0', 'tree/d1', 'tree/d2', 'tree/d3', 'tree/d4', 'tree/d5'], '1/2', [
        '--base',
        'tree',
      ]),
    ).toEqual(fromTree);
    const fromRoot = await shardFiles(root, root, ['tree'], '1/2', ['--base', '.']);
    expect(fromRoot).toEqual((await shardFiles(root, root, ['tree'], null)).filter((f) => shardOf(f, 2) === 1));
  });

  it('uses a fixed hash of the path: sha-256, its first 8 bytes big-endian, modulo the shard count', () => {
    // The same numbers from Python: int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], 'big') % n + 1
    expect([1, 2, 3, 4, 5, 6, 7, 8].map((n) => shardOf('archive/2024/run-17.jsonl', n))).toEqual([
      1, 1, 1, 3, 3, 1, 7, 3,
    ]);
    expect([1, 2, 3, 4, 5, 6, 7, 8].map((n) => shardOf('d0/x/f0.jsonl', n))).toEqual([1, 1, 3, 1, 2, 3, 5, 5]);
  });

  it('hashes names in NFC, so decomposed and composed accents land in the same shard', async () => {
    const nfc = tempDir();
    const nfd = tempDir();
    writeFileSync(path.join(nfc, 'caf\u00e9.jsonl'), LINE(1));
    writeFileSync(path.join(nfd, 'cafe\u0301.jsonl'), LINE(1));
    for (let n = 2; n <= 9; n++) {
      const shard = shardOf('caf\u00e9.jsonl', n);
      expect(await shardFiles(nfc, nfc, ['.'], `${shard}/${n}`)).toHaveLength(1);
      expect(await shardFiles(nfd, nfd, ['.'], `${shard}/${n}`)).toHaveLength(1);
    }
  });

  it('names the shard in the summary and writes only its own files under --out-dir', async () => {
    const root = archive(30);
    const mine = await shardFiles(root, root, ['tree'], '2/3');
    const run = await runSwc(
      ['compact', 'tree', '--out-dir', 'out', '-t', '1000000', '--tokenizer', 'approx', '--shard', '2/3'],
      { cwd: root },
    );
    expect(run.status).toBe(0);
    expect(run.stderr).toMatch(
      new RegExp(
        `^swc: shard 2/3 \\(${mine.length} of 30 files\\): ${mine.length} files scanned: 0 compacted, ${mine.length} unchanged, 0 failed;`,
      ),
    );
    for (const f of mine)
      expect(readFileSync(path.join(root, 'out', path.relative('tree', f)), 'utf8')).toBe(
        readFileSync(path.join(root, f), 'utf8'),
      );
  });

  const bad: Array<[string, string]> = [
    ['0/3', '--shard 0/3: the shard must be between 1 and 3 (shards count from 1)'],
    ['4/3', '--shard 4/3: the shard must be between 1 and 3 (shards count from 1)'],
    ['1/0', '--shard 1/0: the number of shards must be at least 1'],
    ['2', '--shard must look like 2/4 (the 2nd of 4 shards), got "2"'],
    ['a/b', '--shard must look like 2/4 (the 2nd of 4 shards), got "a/b"'],
  ];
  it.each(bad)('refuses --shard %s', async (spec, message) => {
    const root = archive(2);
    const run = await runSwc(['compact', 'tree', '--check', '-t', '10', '--shard', spec], { cwd: root });
    expect(run.status).toBe(2);
    expect(run.stderr.split('\n')[0]).toBe(`swc: error: ${message}`);
  });
});
