import { describe, expect, it } from '@jest/globals';
import { chmodSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { ROOT, tempDir } from '../helpers/cli.js';
import { isTemporary, listFiles, writeTree } from '../helpers/trees.js';
import { runSwc } from '../helpers/run-in-process.js';

/**
 * --in-place in process: only changed files are rewritten, modes are kept, and no temporary file is left. Runs
 * interrupted by kill -9 or Ctrl-C are in test/e2e/in-place.test.ts.
 */

const ARGS = ['--in-place', '-t', '400', '--tokenizer', 'approx', '--jobs', '2'];

describe('swc compact --in-place', () => {
  it('rewrites only the files that change, keeps their mode, and leaves no temporary file', async () => {
    const dir = tempDir();
    writeTree(path.join(dir, 'tree'), 12);
    const small = path.join(dir, 'tree/group-0/even/t0000.jsonl');
    const big = path.join(dir, 'tree/group-1/odd/t0001.jsonl');
    chmodSync(big, 0o640);
    const smallBefore = statSync(small).mtimeMs;
    const expected = (await runSwc(['compact', big, '-t', '400', '--tokenizer', 'approx'], { cwd: ROOT })).stdout;
    const run = await runSwc(['compact', 'tree', ...ARGS], { cwd: dir });
    expect(run.status).toBe(0);
    expect(run.stdout).toBe('');
    expect(readFileSync(big, 'utf8')).toBe(expected);
    expect(statSync(big).mode & 0o777).toBe(0o640);
    expect(statSync(small).mtimeMs).toBe(smallBefore);
    expect(listFiles(dir).filter(isTemporary)).toEqual([]);
  });
});
