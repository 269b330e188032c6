/**
 * Eight processes offloading different standard-input conversations into one store at once: every run succeeds and
 * every transcript restores byte for byte (the in-process test in test/cli/restore.test.ts makes the placings meet
 * at one point; this one is the real thing, once).
 */
import { describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { BIN, tempDir } from '../helpers/cli.js';
import { runSwc } from '../helpers/run-in-process.js';

/** A conversation whose older result is offloaded; `shared` results are the same bytes in every run. */
function conversation(k: number, shared: boolean): string {
  const call = (id: string) => ({
    role: 'assistant',
    content: null,
    tool_calls: [{ id, type: 'function', function: { name: 'search', arguments: '{}' } }],
  });
  return JSON.stringify([
    { role: 'user', content: `task ${k}` },
    call('a'),
    { role: 'tool', tool_call_id: 'a', content: shared ? 's'.repeat(4000) : `${k}`.repeat(4000) },
    call('b'),
    { role: 'tool', tool_call_id: 'b', content: 'y'.repeat(4000) },
  ]);
}

/** Runs the built CLI with this standard input; resolves with the exit code and stderr. */
function run(args: readonly string[], cwd: string, input: string): Promise<{ status: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd, env: { ...process.env, NO_COLOR: '1' } });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (status) => resolve({ status, stderr }));
    child.stdin.end(input);
  });
}

describe('one store, eight processes', () => {
  it('all succeed and all restore byte for byte', async () => {
    const dir = tempDir();
    const texts = Array.from({ length: 8 }, (_, k) => conversation(k, k % 2 === 0));
    const args = (k: number) => [
      'compact',
      '-',
      '-t',
      '100',
      '--tokenizer',
      'approx',
      '--strategy',
      'offload',
      '--offload-dir',
      'store',
      '--offload-over',
      '1000',
      '-o',
      `out${k}.json`,
    ];
    const runs = await Promise.all(texts.map((text, k) => run(args(k), dir, text)));
    for (const r of runs) {
      expect(r.stderr).not.toMatch(/swc: error|already holds|cannot/);
      expect(r.status).toBe(0);
    }
    for (const [k, text] of texts.entries()) {
      expect(readFileSync(path.join(dir, `out${k}.json`), 'utf8')).toContain("at 'store/stdin/1_search_a-");
      expect((await runSwc(['restore', `out${k}.json`], { cwd: dir })).stdout).toBe(text);
    }
  }, 60_000);
});
