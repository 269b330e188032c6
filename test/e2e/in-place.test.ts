import { describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { cpSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { BIN, tempDir } from '../helpers/cli.js';
import { isTemporary, listFiles, random, readTree, writeTree } from '../helpers/trees.js';
import { runSwc } from '../helpers/run-in-process.js';

/**
 * --in-place interrupted, with the built binary: a run killed with kill -9 or Ctrl-C at any moment leaves every file
 * wholly old or wholly new, and Ctrl-C leaves no temporary file. (The uninterrupted run: test/cli/in-place.test.ts.)
 */

/** Runs the built CLI without waiting, so a test can interrupt it. */
function start(
  args: readonly string[],
  cwd: string,
): { child: ReturnType<typeof spawn>; exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }> } {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd,
    env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '' },
    stdio: 'ignore',
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, exited };
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until a file's content differs from `old` (the run has started writing), or the run ends. */
async function firstWrite(file: string, old: string, exited: Promise<unknown>): Promise<void> {
  let done = false;
  void exited.then(() => (done = true));
  while (!done && readFileSync(file, 'utf8') === old) await sleep(2);
}

const ARGS = ['--in-place', '-t', '400', '--tokenizer', 'approx', '--jobs', '2'];

/**
 * Checks an interrupted tree against the originals and the finished results.
 * @returns how many files hold the new content
 */
function expectOldOrNew(work: string, before: Map<string, string>, after: Map<string, string>): number {
  const now = readTree(work);
  let fresh = 0;
  for (const [file, text] of now) {
    if (isTemporary(file)) continue;
    for (const line of text.trimEnd().split('\n')) expect(() => JSON.parse(line)).not.toThrow();
    const old = before.get(file);
    const next = after.get(file);
    if (text !== old) {
      expect(text).toBe(next);
      fresh++;
    }
  }
  expect([...now.keys()].filter((f) => !isTemporary(f))).toEqual([...before.keys()]);
  return fresh;
}

describe('swc compact --in-place', () => {
  /**
   * A tree to interrupt runs on, and what an uninterrupted run makes of it: the files before and after, and one
   * file the run changes (to wait for its first write).
   */
  async function pristineAndDone(files: number, seed: number) {
    const root = tempDir();
    const pristine = path.join(root, 'pristine');
    writeTree(pristine, files, seed);
    const before = readTree(pristine);
    const done = path.join(root, 'done');
    cpSync(pristine, done, { recursive: true });
    expect(await runSwc(['compact', '.', ...ARGS, '-qq'], { cwd: done })).toEqual({
      status: 0,
      stdout: '',
      stderr: '',
    });
    const after = readTree(done);
    const watched = [...before.keys()].find((f) => after.get(f) !== before.get(f)) as string;
    return { root, pristine, before, after, watched };
  }

  it('leaves every file wholly old or wholly new when killed with SIGKILL at any moment', async () => {
    const { root, pristine, before, after, watched } = await pristineAndDone(160, 7);
    const r = random(42);
    let partial = 0;
    for (let round = 0; round < 24; round++) {
      const work = path.join(root, `work-${round}`);
      cpSync(pristine, work, { recursive: true });
      const { child, exited } = start(['compact', '.', ...ARGS], work);
      // Half the kills land anywhere from start-up on, half once writing has begun.
      if (round % 2 === 0) await sleep(Math.floor(r() * 900));
      else {
        await firstWrite(path.join(work, watched), before.get(watched) as string, exited);
        await sleep(Math.floor(r() * 60));
      }
      child.kill('SIGKILL');
      await exited;
      const fresh = expectOldOrNew(work, before, after);
      if (fresh > 0 && fresh < [...after.keys()].filter((f) => after.get(f) !== before.get(f)).length) partial++;
      rmSync(work, { recursive: true, force: true });
    }
    // The kills did land in the middle of writing, not only before or after it.
    expect(partial).toBeGreaterThan(0);
  }, 240_000);

  it('leaves no temporary file and no half-written file when interrupted with SIGINT', async () => {
    const { root, pristine, before, after, watched } = await pristineAndDone(120, 9);
    const r = random(7);
    for (let round = 0; round < 10; round++) {
      const work = path.join(root, `work-${round}`);
      cpSync(pristine, work, { recursive: true });
      const { child, exited } = start(['compact', '.', ...ARGS], work);
      await firstWrite(path.join(work, watched), before.get(watched) as string, exited);
      await sleep(Math.floor(r() * 80));
      child.kill('SIGINT');
      const { code, signal } = await exited;
      // Either the signal ended it, or it had already finished.
      expect(signal === 'SIGINT' || code === 0).toBe(true);
      expectOldOrNew(work, before, after);
      expect(listFiles(work).filter(isTemporary)).toEqual([]);
      rmSync(work, { recursive: true, force: true });
    }
  }, 180_000);
});
