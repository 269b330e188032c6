/**
 * A rank file that cannot be read because the process is out of open files (or memory) is not a missing file: the
 * command line says what stops it in one line, as start-up does, instead of asking for a reinstall.
 */
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { writeFileSync } from 'node:fs';
import path from 'node:path';

const realFs = await import('node:fs');
let failure: string | null = null;
/** readFileSync, except that reading a rank file fails with `failure` while it is set. */
const readFileSync = jest.fn((...args: Parameters<typeof realFs.readFileSync>) => {
  const file = args[0];
  if (failure !== null && String(file instanceof URL ? file.pathname : file).includes('/dist/ranks/')) {
    throw Object.assign(new Error(`${failure}: cannot open`), { code: failure });
  }
  return realFs.readFileSync(...args);
});
jest.unstable_mockModule('node:fs', () => ({ ...realFs, readFileSync }));
const { RankTable } = await import('../../src/tokens/ranks.js');
const { runSwc } = await import('../helpers/run-in-process.js');
const { tempDir } = await import('../helpers/cli.js');

afterEach(() => {
  failure = null;
});

describe('a rank file the process cannot open', () => {
  it('passes on the error when out of open files or memory, and is missing for any other', () => {
    failure = 'EMFILE';
    expect(() => RankTable.load('o200k_base')).toThrow('EMFILE: cannot open');
    failure = 'ENOMEM';
    expect(() => RankTable.load('o200k_base')).toThrow('ENOMEM: cannot open');
    failure = 'ENOENT';
    expect(RankTable.load('o200k_base')).toBeNull();
    failure = null;
    expect(RankTable.load('o200k_base')).not.toBeNull();
  });

  it('stops swc compact with one line, as start-up does, when the limit is on open files', async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'log.jsonl'), '{"role":"user","content":"hi"}\n');
    failure = 'EMFILE';
    const run = await runSwc(['compact', 'log.jsonl', '-t', '8000', '-o', 'out.jsonl'], { cwd: dir });
    expect(run.stderr).toBe('swc: cannot start: too many open files (raise the limit with ulimit -n)\n');
    expect(run.status).toBe(2);
  });

  it('still calls a rank file that is not there missing', async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'log.jsonl'), '{"role":"user","content":"hi"}\n');
    failure = 'ENOENT';
    const run = await runSwc(['compact', 'log.jsonl', '-t', '8000', '-o', 'out.jsonl'], { cwd: dir });
    expect(run.stderr).toContain(
      'swc: unexpected error: the o200k_base rank file (dist/ranks/o200k_base.bin) is missing or damaged',
    );
    expect(run.status).toBe(2);
  });
});
