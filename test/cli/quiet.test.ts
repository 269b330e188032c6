import { describe, expect, it } from '@jest/globals';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, tempDir } from '../helpers/cli.js';
import { runSwc, type InProcessRun } from '../helpers/run-in-process.js';

/**
 * How much each command prints at each quiet level, checked against the table in docs/cli.md ("How much is printed"):
 * nothing given prints everything; -q drops the line of each file but keeps errors and the closing total of a run
 * over several files; -qq prints errors only. What the command was asked to put on stdout (the check's list, diffs)
 * stays at every level.
 */

const SAMPLE = path.join(ROOT, 'fixtures/sample.jsonl');
const APPROX = ['--tokenizer', 'approx'];
const LEVELS = [[], ['-q'], ['-qq']] as const;

/** A folder of three transcripts: one that compacts at -t 2000, one that does not change, one broken. */
function archive(): string {
  const dir = tempDir();
  mkdirSync(path.join(dir, 'archive'));
  cpSync(SAMPLE, path.join(dir, 'archive/a.jsonl'));
  writeFileSync(path.join(dir, 'archive/b.jsonl'), readFileSync(SAMPLE, 'utf8').split('\n').slice(0, 3).join('\n'));
  writeFileSync(path.join(dir, 'archive/bad.json'), '{');
  return dir;
}

type Kind = 'error' | 'file' | 'total' | 'restored';

/** What each stderr line is: an error, a file's outcome line, the closing total, restore's line. */
function kinds(stderr: string): Kind[] {
  return stderr
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      if (/^swc: (shard \S+ )?\d+ files? scanned: /.test(line)) return 'total';
      if (/^swc: \S+: restored |nothing to restore/.test(line)) return 'restored';
      if (/^swc: \S+:\d+:\d+: |^swc: error: /.test(line)) return 'error';
      if (/^swc: \S+: (unchanged|[\d,]+ → )/.test(line)) return 'file';
      throw new Error(`an unexpected line: ${line}`);
    });
}

describe('the quiet levels of swc compact over several files', () => {
  it.each([
    ['--in-place', ['--in-place'], [['file', 'error', 'total'], ['error', 'total'], ['error']]],
    ['--out-dir', ['--out-dir', 'out'], [['file', 'error', 'total'], ['error', 'total'], ['error']]],
    ['--check', ['--check'], [['error', 'total'], ['error', 'total'], ['error']]],
    ['--dry-run', ['--dry-run'], [['error', 'total'], ['error', 'total'], ['error']]],
  ] as const)('%s prints on stderr what the table says', async (_mode, flags, expected) => {
    for (const [level, quiet] of LEVELS.entries()) {
      const r = await runSwc(['compact', 'archive', '-t', '2000', ...APPROX, ...flags, ...quiet], { cwd: archive() });
      expect(r.status).toBe(2);
      expect([quiet, kinds(r.stderr)]).toEqual([quiet, expected[level]]);
    }
  });

  it("keeps what the command puts on stdout at every level: the check's list and the dry run's lines", async () => {
    for (const quiet of LEVELS) {
      const check = await runSwc(['compact', 'archive', '--check', '-t', '2000', ...APPROX, ...quiet], {
        cwd: archive(),
      });
      expect(check.stdout).toBe('archive/a.jsonl\n');
      const stat = await runSwc(['compact', 'archive', '--dry-run', '--stat', '-t', '2000', ...APPROX, ...quiet], {
        cwd: archive(),
      });
      expect(stat.stdout).toMatch(/^archive\/a\.jsonl .*\n3 files, 1 would change, /);
    }
  });

  it('counts --quiet given twice as -qq, and more than twice as -qq too', async () => {
    const argv = ['compact', 'archive', '--check', '-t', '2000', ...APPROX];
    const qq = await runSwc([...argv, '-qq'], { cwd: archive() });
    expect(await runSwc([...argv, '--quiet', '--quiet'], { cwd: archive() })).toEqual(qq);
    expect(await runSwc([...argv, '-q', '-qq'], { cwd: archive() })).toEqual(qq);
  });
});

describe('the quiet levels of a run on one file', () => {
  it('prints its one line without -q, and only errors with -q or -qq', async () => {
    for (const [level, quiet] of LEVELS.entries()) {
      const dir = archive();
      const out = await runSwc(['compact', 'archive/a.jsonl', '-t', '2000', ...APPROX, '-o', 'small.jsonl', ...quiet], {
        cwd: dir,
      });
      expect(kinds(out.stderr)).toEqual(level === 0 ? ['file'] : []);
      const bad = await runSwc(['compact', 'archive/bad.json', '-t', '2000', ...APPROX, '-o', 'x.json', ...quiet], {
        cwd: dir,
      });
      expect(kinds(bad.stderr)).toEqual(['error']);
      const check = await runSwc(['compact', 'archive/a.jsonl', '--check', '-t', '2000', ...APPROX, ...quiet], {
        cwd: dir,
      });
      expect([check.stdout, kinds(check.stderr)]).toEqual(['archive/a.jsonl\n', level === 0 ? ['file'] : []]);
    }
  });
});

describe('the quiet levels of swc inspect and swc restore', () => {
  const inspectDir = (): string => {
    const dir = tempDir();
    mkdirSync(path.join(dir, 'tree'));
    for (const name of ['missing-result.json', 'clean.json', 'duplicate-id.json'])
      cpSync(path.join(ROOT, 'fixtures/inspect', name), path.join(dir, 'tree', name));
    return dir;
  };

  it('inspect: the views and the total; -q the errors and the total; -qq the errors', async () => {
    const [full, quiet, quieter] = (await Promise.all(
      LEVELS.map((q) => runSwc(['inspect', 'tree', ...APPROX, ...q], { cwd: inspectDir() })),
    )) as [InProcessRun, InProcessRun, InProcessRun];
    for (const r of [full, quiet, quieter]) expect([r.status, r.stderr]).toEqual([1, '']);
    expect(full.stdout).toContain('inspect: tree/clean.json');
    const errorLine = /^tree\/missing-result\.json:\d+:\d+ {2}#\d+ {2}missing-result {2}/;
    const total = 'total: 3 files, 1 error, 1 warning, ';
    expect(full.stdout.split('\n').filter((l) => l.startsWith('total: '))[0]).toMatch(total);
    const lines = quiet.stdout.split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(errorLine);
    expect(lines.slice(1, 3)).toEqual(['', expect.stringMatching(`^${total}`)]);
    expect(quieter.stdout).toBe(`${lines[0]}\n`);
  });

  it('inspect on one file: the view; -q and -qq the errors alone, as there is no total', async () => {
    const runs = await Promise.all(
      LEVELS.map((q) => runSwc(['inspect', 'tree/missing-result.json', ...APPROX, ...q], { cwd: inspectDir() })),
    );
    expect(runs[0]?.stdout).toContain('inspect: tree/missing-result.json');
    expect(runs[1]?.stdout).toMatch(/^tree\/missing-result\.json:\d+:\d+ [^\n]*\n$/);
    expect(runs[2]).toEqual(runs[1]);
  });

  it('restore: its line, and nothing with -q or -qq', async () => {
    for (const [level, quiet] of LEVELS.entries()) {
      const r = await runSwc(['restore', 'archive/a.jsonl', '-o', 'back.jsonl', ...quiet], { cwd: archive() });
      expect([r.status, kinds(r.stderr)]).toEqual([0, level === 0 ? ['restored'] : []]);
    }
  });
});
