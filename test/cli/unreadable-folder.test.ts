/**
 * A folder the input search may not read (no read permission) is one failed input, as an unreadable file is: the
 * run reports it in path order, processes every readable file, and ends with exit 2. Tests run as root, which reads
 * any folder, so the refusal is injected at the search's readdir (`expandHooks`); where the tests run as another
 * user, a real chmod 000 folder is checked too.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { chmodSync, cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { expandHooks } from '../../src/io/expand.js';
import { ROOT, tempDir } from '../helpers/cli.js';
import { runSwc } from '../helpers/run-in-process.js';

const SAMPLE = path.join(ROOT, 'fixtures/sample.jsonl');
const APPROX = ['--tokenizer', 'approx', '-j', '1'];

/** archive/a.jsonl (compacted at 2,000), archive/locked/b.jsonl, archive/z/c.jsonl (a short chat). */
function archive(): string {
  const dir = tempDir();
  mkdirSync(path.join(dir, 'archive/locked'), { recursive: true });
  mkdirSync(path.join(dir, 'archive/z'));
  cpSync(SAMPLE, path.join(dir, 'archive/a.jsonl'));
  cpSync(SAMPLE, path.join(dir, 'archive/locked/b.jsonl'));
  writeFileSync(path.join(dir, 'archive/z/c.jsonl'), '{"role": "user", "content": "Hello!"}\n');
  return dir;
}

/** Makes the search's readdir of every folder named `name` fail with EACCES, as for a user without read permission. */
function refuse(name: string): void {
  expandHooks.readdirError = (dir) => {
    if (path.basename(dir) !== name) return undefined;
    return Object.assign(new Error(`EACCES: permission denied, scandir '${dir}'`), {
      code: 'EACCES',
      errno: -13,
      syscall: 'scandir',
      path: dir,
    });
  };
}

afterEach(() => {
  delete expandHooks.readdirError;
});

const FAILED = 'swc: archive/locked/: cannot read this folder: permission denied; the files in it were not searched';

describe('an unreadable folder among the inputs', () => {
  it('is reported as a failed input and the other files are still compacted (exit 2 at the end)', async () => {
    const dir = archive();
    refuse('locked');
    const r = await runSwc(['compact', 'archive', '--out-dir', 'out', '-t', '2000', ...APPROX], { cwd: dir });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`${FAILED}\n`);
    expect(r.stderr).not.toMatch(/EACCES|scandir|swc: error/);
    expect(r.stderr).toMatch(/3 files scanned: 1 compacted, 1 unchanged, 1 failed/);
    expect(readFileSync(path.join(dir, 'out/a.jsonl'), 'utf8').length).toBeLessThan(
      readFileSync(SAMPLE, 'utf8').length,
    );
    expect(readFileSync(path.join(dir, 'out/z/c.jsonl'), 'utf8')).toBe('{"role": "user", "content": "Hello!"}\n');
  });

  it('is a failed record, in path order, in the JSON report and under --check', async () => {
    const dir = archive();
    refuse('locked');
    const r = await runSwc(['compact', 'archive', '--check', '--json', '-t', '2000', ...APPROX], { cwd: dir });
    expect(r.status).toBe(2);
    const report = JSON.parse(r.stdout) as {
      files: Array<{ path: string; status: string; error: { message: string } | null }>;
    };
    expect(report.files.map((f) => [f.path, f.status])).toEqual([
      ['archive/a.jsonl', 'compacted'],
      ['archive/locked/', 'failed'],
      ['archive/z/c.jsonl', 'unchanged'],
    ]);
    expect(`swc: ${report.files[1]?.error?.message}`).toBe(FAILED);
  });

  it('fails, without a usage error, when it is the only folder named', async () => {
    const dir = archive();
    refuse('locked');
    const r = await runSwc(['compact', 'archive/locked', '--check', '-t', '2000', ...APPROX], { cwd: dir });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`${FAILED}\n`);
  });

  it('is left alone when --ignore leaves its files out', async () => {
    const dir = archive();
    refuse('locked');
    const r = await runSwc(
      ['compact', 'archive', '--check', '--ignore', 'archive/locked/**', '-t', '2000', ...APPROX],
      { cwd: dir },
    );
    expect(r.status).toBe(1);
    expect(r.stderr).not.toContain('locked');
  });

  it('is a failed input of swc inspect too, the rest inspected', async () => {
    const dir = archive();
    refuse('locked');
    const r = await runSwc(['inspect', 'archive', '--json-lines', ...APPROX.slice(0, 2)], { cwd: dir });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`${FAILED}\n`);
    expect(
      r.stdout
        .trimEnd()
        .split('\n')
        .map((l) => (JSON.parse(l) as { file: string }).file),
    ).toEqual(['archive/a.jsonl', 'archive/z/c.jsonl']);
  });

  const asUser = process.getuid?.() !== 0 ? it : it.skip;
  asUser('is reported for a real folder without read permission (run as a user other than root)', async () => {
    const dir = archive();
    chmodSync(path.join(dir, 'archive/locked'), 0o000);
    try {
      const r = await runSwc(['compact', 'archive', '--check', '-t', '2000', ...APPROX], { cwd: dir });
      expect(r.status).toBe(2);
      expect(r.stderr).toContain(`${FAILED}\n`);
      expect(r.stdout).toBe('archive/a.jsonl\n');
    } finally {
      chmodSync(path.join(dir, 'archive/locked'), 0o755);
    }
  });
});
