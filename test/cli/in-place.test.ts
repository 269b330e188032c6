import { describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { BIN, ROOT, tempDir } from '../helpers/cli.js';
import { runSwc } from '../helpers/run-in-process.js';

/**
 * --in-place end to end: only changed files are rewritten, modes are kept, and an interrupted run (kill -9 or
 * Ctrl-C at any moment) leaves every file wholly old or wholly new; Ctrl-C and normal exits leave no temporary file.
 */

/** A deterministic pseudo-random source, so a failing tree can be rebuilt. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

/** An OpenAI-chat JSONL transcript of a few turns with tool calls; `size` scales the texts. */
function transcript(seed: number, size: number): string {
  const r = random(seed);
  const lines = [{ role: 'system', content: `You are agent ${seed}.` }];
  const turns = 2 + Math.floor(r() * 6);
  for (let t = 0; t < turns; t++) {
    const id = `call_${seed}_${t}`;
    lines.push({
      role: 'user',
      content: `Question ${t}: ${'please look this up '.repeat(1 + Math.floor(r() * size))}`,
    });
    lines.push({
      role: 'assistant',
      content: null,
      tool_calls: [{ id, type: 'function', function: { name: 'search', arguments: `{"q": "${t}"}` } }],
    } as never);
    lines.push({
      role: 'tool',
      tool_call_id: id,
      content: 'found it '.repeat(1 + Math.floor(r() * size * 2)),
    } as never);
    lines.push({ role: 'assistant', content: `Answer ${t}: ${'here it is '.repeat(1 + Math.floor(r() * size))}` });
  }
  return `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`;
}

/** Writes `count` transcripts under `dir`, in nested folders, some small enough to stay unchanged. */
function writeTree(dir: string, count: number, seed = 1): void {
  for (let i = 0; i < count; i++) {
    const sub = path.join(dir, `group-${i % 5}`, i % 2 === 0 ? 'even' : 'odd');
    mkdirSync(sub, { recursive: true });
    writeFileSync(
      path.join(sub, `t${String(i).padStart(4, '0')}.jsonl`),
      transcript(seed * 100_000 + i, i % 4 === 0 ? 1 : 30),
    );
  }
}

/** Every file under `dir` (relative paths), temporary ones included. */
function listFiles(dir: string): string[] {
  return (readdirSync(dir, { recursive: true }) as string[]).filter((p) => statSync(path.join(dir, p)).isFile()).sort();
}

function readTree(dir: string): Map<string, string> {
  return new Map(listFiles(dir).map((p) => [p, readFileSync(path.join(dir, p), 'utf8')]));
}

const isTemporary = (p: string): boolean => path.basename(p).startsWith('.') && p.endsWith('.tmp');

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
