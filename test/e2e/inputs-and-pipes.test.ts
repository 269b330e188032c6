import { describe, expect, it } from '@jest/globals';
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { BIN, ROOT, tempDir } from '../helpers/cli.js';
import { runSwc } from '../helpers/run-in-process.js';
import { sampleTree as tree } from '../helpers/trees.js';

/** Inputs from a FIFO, and the built binary when its reader goes away or its output is full (the rest: test/cli/inputs-and-pipes.test.ts). */

const SAMPLE = path.join(ROOT, 'fixtures/sample.jsonl');
const TARGET = ['-t', '200', '--tokenizer', 'approx'];

describe('finding the inputs', () => {
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
