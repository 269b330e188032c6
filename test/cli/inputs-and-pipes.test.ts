import { describe, expect, it } from '@jest/globals';
import { spawn, spawnSync } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { cpSync, existsSync, mkdirSync, readdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { exitCodeAfter, guardStream, type RawStream } from '../../src/cli/io.js';
import { BIN, ROOT, tempDir } from '../helpers/cli.js';
import { runSwc } from '../helpers/run-in-process.js';

/** Inputs are unique real files found without following links into loops; a reader that goes away never turns a failing run into a pass. */

const SAMPLE = path.join(ROOT, 'fixtures/sample.jsonl');
const TARGET = ['-t', '200', '--tokenizer', 'approx'];

function tree(...files: string[]): string {
  const dir = tempDir();
  for (const f of files) {
    mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    cpSync(SAMPLE, path.join(dir, f));
  }
  return dir;
}

describe('finding the inputs', () => {
  it('does not follow directory links, so two links back to the folder end instead of walking forever', async () => {
    const dir = tree('in/a.jsonl');
    symlinkSync('.', path.join(dir, 'in/s1'));
    symlinkSync('.', path.join(dir, 'in/s2'));
    const r = await runSwc(['compact', 'in', '--check', ...TARGET], { cwd: dir });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('in/a.jsonl\n');
    expect(r.stderr).toContain('1 file scanned');
  });

  it('writes one copy through --out-dir when the input folder links to itself', async () => {
    const dir = tree('in/a.jsonl');
    symlinkSync('.', path.join(dir, 'in/self'));
    const r = await runSwc(['compact', 'in', '--out-dir', 'out', ...TARGET], { cwd: dir });
    expect(r.status).toBe(0);
    expect(readdirSync(path.join(dir, 'out'), { recursive: true })).toEqual(['a.jsonl']);
  });

  it('compacts a file and a link to it once, under the path given first', async () => {
    const dir = tree('in/a.jsonl');
    symlinkSync('a.jsonl', path.join(dir, 'in/link.jsonl'));
    const r = await runSwc(['compact', 'in/link.jsonl', 'in/a.jsonl', '--check', ...TARGET], { cwd: dir });
    expect(r.stdout).toBe('in/link.jsonl\n');
    expect(r.stderr).toContain('1 file scanned');
  });

  it('takes a path that exists as a file, whatever its characters (a backslash included)', async () => {
    const dir = tree('q\\*.jsonl');
    const r = await runSwc(['compact', 'q\\*.jsonl', '--check', ...TARGET], { cwd: dir });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('q\\*.jsonl\n');
  });

  it('never reads its own results back from an out-dir whose name holds a backslash', async () => {
    const dir = tree('in/a.jsonl');
    expect((await runSwc(['compact', 'in', '--out-dir', 'in/o\\ut', ...TARGET], { cwd: dir })).status).toBe(0);
    const again = await runSwc(['compact', 'in', '--out-dir', 'in/o\\ut', ...TARGET], { cwd: dir });
    expect(again.status).toBe(0);
    expect(again.stderr).toContain('1 file scanned');
    expect(existsSync(path.join(dir, 'in/o\\ut/o\\ut'))).toBe(false);
  });

  it('reads a FIFO named in a check instead of calling it missing', async () => {
    const dir = tempDir();
    const fifo = path.join(dir, 'pipe.jsonl');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const writer = spawn('sh', ['-c', `cat "${SAMPLE}" > "${fifo}"`]);
    const written = new Promise((resolve) => writer.on('exit', resolve));
    const r = await runSwc(['compact', 'pipe.jsonl', '--check', ...TARGET], { cwd: dir });
    await written;
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('pipe.jsonl\n');
  });

  it('says a shard number past what it can count is too large', async () => {
    const r = await runSwc(
      ['compact', 'in', '--check', ...TARGET, '--shard', '99999999999999999998/99999999999999999999'],
      { cwd: tempDir() },
    );
    expect(r.status).toBe(2);
    expect(r.stderr).toBe('swc: error: --shard is too large: "99999999999999999998/99999999999999999999"\n');
  });
});

/** A stream like process.stdout whose writes can be made to fail. */
class FakeStream extends EventEmitter implements RawStream {
  written: string[] = [];
  full = false;
  write(chunk: string | Uint8Array): boolean {
    this.written.push(String(chunk));
    return !this.full;
  }
}

describe('standard output that fails', () => {
  it('drops writes after an error and lets a writer waiting for drain go on', () => {
    const raw = new FakeStream();
    const out = guardStream(raw);
    raw.full = true;
    expect(out.write('a')).toBe(false);
    let resumed = false;
    out.once?.('drain', () => {
      resumed = true;
    });
    raw.emit('error', Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    expect(resumed).toBe(true);
    expect(out.write('b')).toBe(true);
    expect(raw.written).toEqual(['a']);
    expect(out.failure?.code).toBe('EPIPE');
  });

  it('keeps the exit code a run earned when its reader hangs up, and never reports success', () => {
    const epipe = Object.assign(new Error('EPIPE'), { code: 'EPIPE' });
    expect(exitCodeAfter(1, epipe)).toBe(1);
    expect(exitCodeAfter(2, epipe)).toBe(2);
    expect(exitCodeAfter(0, epipe)).toBe(141);
    expect(exitCodeAfter(0, Object.assign(new Error('ENOSPC'), { code: 'ENOSPC' }))).toBe(2);
    expect(exitCodeAfter(1, null)).toBe(1);
  });
});

describe('the binary with a broken standard output', () => {
  it('exits 1 from a failing --check whose reader went away before it wrote', async () => {
    const dir = tree('in/a.jsonl', 'in/b.jsonl');
    const child = spawn(process.execPath, [BIN, 'compact', 'in', '--check', ...TARGET], {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    // The reader is gone before swc can have written anything: node has not even started yet.
    child.stdout.destroy();
    const code = await new Promise((resolve) => child.on('exit', resolve));
    expect(code).toBe(1);
  });

  it('exits 2 with one line when standard output is full', () => {
    const dir = tree('in/a.jsonl');
    const r = spawnSync(
      'sh',
      ['-c', `"${process.execPath}" "${BIN}" compact in/a.jsonl ${TARGET.join(' ')} > /dev/full`],
      { cwd: dir, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } },
    );
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n').at(-1)).toBe(
      'swc: cannot write to standard output: no space left on the device',
    );
    expect(r.stderr).not.toContain('    at ');
  });

  it('keeps a passing check at 0 when standard error cannot be written', () => {
    const dir = tree('in/a.jsonl');
    const r = spawnSync(
      'sh',
      ['-c', `"${process.execPath}" "${BIN}" compact in/a.jsonl --check -t 100000 --tokenizer approx 2> /dev/full`],
      { cwd: dir, encoding: 'utf8' },
    );
    expect(r.status).toBe(0);
  });

  it.each([24, 32, 48])('says in one line what stops it under an open-file limit of %i, never a stack', (limit) => {
    const r = spawnSync('sh', ['-c', `ulimit -n ${limit} && "${process.execPath}" "${BIN}" compact x.jsonl -t 10`], {
      cwd: tempDir(),
      encoding: 'utf8',
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^swc: [^\n]*\n$/);
  });
});
