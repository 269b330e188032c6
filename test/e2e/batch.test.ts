/** `swc compact` on a large archive, with the built binary under a limit of open files (the rest: test/cli/batch.test.ts). */
import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { BIN, ROOT, tempDir } from '../helpers/cli.js';
import { runSwc } from '../helpers/run-in-process.js';
import { listFiles } from '../helpers/trees.js';

const APPROX = ['--tokenizer', 'approx'];

describe('swc compact on a large archive', () => {
  it('compacts 10,000 small files with at most 64 open file descriptors', async () => {
    const dir = tempDir();
    const lines = (i: number): string =>
      `${[
        { role: 'system', content: 'sys' },
        { role: 'user', content: `question ${i} ${'word '.repeat(i % 40)}` },
        { role: 'assistant', content: 'answer '.repeat(20) },
        { role: 'user', content: `again ${i}` },
        { role: 'assistant', content: 'ok' },
      ]
        .map((m) => JSON.stringify(m))
        .join('\n')}\n`;
    for (let i = 0; i < 10_000; i++) {
      const sub = path.join(dir, 'load', `d${i % 50}`);
      if (i < 50) mkdirSync(sub, { recursive: true });
      writeFileSync(path.join(sub, `f${i}.jsonl`), lines(i));
    }
    const run = spawnSync(
      'bash',
      [
        '-c',
        `ulimit -n 64 && exec "${process.execPath}" "${BIN}" compact load --out-dir out -t 20 --tokenizer approx --jobs 2`,
      ],
      {
        cwd: dir,
        env: { ...process.env, NO_COLOR: '1' },
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
      },
    );
    expect(run.status).toBe(0);
    // Every file is over 20 tokens and keeps more than that (its system prompt and last question).
    expect(run.stderr.split('\n').at(-2)).toMatch(
      /^swc: 10,000 files scanned: 10,000 compacted, 0 unchanged, 0 failed, 10,000 over target; tokens 789,444 → 379,900 \(−52%, approx\); \d+\.\d\d s$/,
    );
    expect(listFiles(path.join(dir, 'out'))).toHaveLength(10_000);
    expect(readFileSync(path.join(dir, 'out/d7/f7.jsonl'), 'utf8')).toBe(
      (await runSwc(['compact', '-', '-t', '20', ...APPROX], { cwd: ROOT, stdin: lines(7) })).stdout,
    );
  }, 240_000);
});
