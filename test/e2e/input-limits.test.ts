/**
 * The built command line on inputs that never end or would not fit: each is refused with one line and exit code 2,
 * at once or as soon as the limit is passed. A run that does not stop is killed by the guard below, not waited for.
 */
import { describe, expect, it } from '@jest/globals';
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { closeSync, existsSync, ftruncateSync, openSync, writeSync } from 'node:fs';
import path from 'node:path';
import { BIN, ROOT, tempDir } from '../helpers/cli.js';
import { JSON_LIMIT } from '../../src/io/lines.js';

const SAMPLE = path.join(ROOT, 'fixtures/sample.jsonl');
/** Kills a run that reads on instead of stopping (an unbounded read of /dev/zero grows by gigabytes). */
const GUARD = 120_000;

/** Runs the built CLI with `stdin` as its standard input. */
function swcWith(args: readonly string[], stdin: number | 'pipe' = 'pipe', cwd = ROOT): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [BIN, ...args], {
    cwd,
    stdio: [stdin, 'pipe', 'pipe'],
    env: { ...process.env, NO_COLOR: '1' },
    encoding: 'utf8',
    timeout: GUARD,
    killSignal: 'SIGKILL',
  });
}

/** A sparse file of `size` bytes that starts with `[`: the size of a big JSON file without writing one. */
function sparseJson(dir: string, name: string, size: number): string {
  const file = path.join(dir, name);
  const fd = openSync(file, 'w');
  writeSync(fd, '[');
  ftruncateSync(fd, size);
  closeSync(fd);
  return file;
}

describe('swc compact on an input that never ends', () => {
  it(
    'refuses a device named as an input at once, with one line and exit code 2',
    () => {
      const run = swcWith(['compact', '/dev/zero', '-t', '10']);
      expect(run.signal).toBeNull();
      expect(run.stderr).toBe('swc: /dev/zero: is a device, not a transcript file\n');
      expect(run.stdout).toBe('');
      expect(run.status).toBe(2);
    },
    GUARD + 10_000,
  );

  it(
    'reads standard input named /dev/stdin even when it is a device, and stops at the stream limit',
    () => {
      const zero = openSync('/dev/zero', 'r');
      try {
        const run = swcWith(['compact', '/dev/stdin', '-t', '10'], zero);
        expect(run.signal).toBeNull();
        expect(run.stderr).toBe(
          'swc: /dev/stdin: the input is too large (more than 512 MiB from a pipe or standard input, which is held in memory whole; that is the limit)\n',
        );
        expect(run.stdout).toBe('');
        expect(run.status).toBe(2);
      } finally {
        closeSync(zero);
      }
    },
    GUARD + 10_000,
  );
});

describe('swc compact on a whole-JSON file over the JSON limit', () => {
  it('refuses it by its size with one line naming the limit, and exit code 2', () => {
    const file = sparseJson(tempDir(), 'big.json', JSON_LIMIT + (10 << 20));
    const run = swcWith(['compact', file, '-t', '8000']);
    expect(run.stderr).toBe(
      `swc: ${file}: is 522 MiB; whole JSON files over 512 MiB are refused (a JSON file is read as one text, and a JavaScript string holds about 512 MiB at most; a JSONL file has no such limit)\n`,
    );
    expect(run.stdout).toBe('');
    expect(run.status).toBe(2);
  });

  it('refuses it in a batch too, and still compacts the other files', () => {
    const dir = tempDir([SAMPLE]);
    sparseJson(dir, 'big.json', JSON_LIMIT + 1);
    const run = swcWith(
      ['compact', 'big.json', 'sample.jsonl', '-t', '2000', '--out-dir', 'out', '--tokenizer', 'approx'],
      'pipe',
      dir,
    );
    expect(run.stderr).toContain(
      'big.json: is 513 MiB; whole JSON files over 512 MiB are refused (a JSON file is read as one text, and a JavaScript string holds about 512 MiB at most; a JSONL file has no such limit)\n',
    );
    expect(run.status).toBe(2);
    expect(existsSync(path.join(dir, 'out', 'sample.jsonl'))).toBe(true);
    expect(existsSync(path.join(dir, 'out', 'big.json'))).toBe(false);
  });
});
