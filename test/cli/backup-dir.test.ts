import { afterEach, describe, expect, it } from '@jest/globals';
import {
  chmodSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { writeHooks } from '../../src/io/files.js';
import { ROOT, tempDir } from '../helpers/cli.js';
import { runSwc } from '../helpers/run-in-process.js';

/**
 * --backup-dir keeps each original --in-place replaces, byte for byte, under its path relative to the base; a backup
 * already there is never overwritten, and nothing lands outside the folder. A file of several MiB:
 * test/e2e/backup-dir.test.ts.
 */

const SAMPLE = path.join(ROOT, 'fixtures/sample.jsonl');
const SAMPLE_BYTES = readFileSync(SAMPLE);
const TARGET = ['-t', '200', '--tokenizer', 'approx'];
/** A transcript small enough to stay unchanged. */
const SMALL = '[{"role":"user","content":"hi"}]\n';

afterEach(() => {
  delete writeHooks.beforeRename;
  delete writeHooks.beforePlace;
});

/** A tree `in/` with the sample at `a.jsonl`, a gzipped copy at `sub/b.jsonl.gz`, and a small file that stays. */
function tree(): string {
  const dir = tempDir();
  mkdirSync(path.join(dir, 'in/sub'), { recursive: true });
  cpSync(SAMPLE, path.join(dir, 'in/a.jsonl'));
  writeFileSync(path.join(dir, 'in/sub/b.jsonl.gz'), gzipSync(SAMPLE_BYTES));
  writeFileSync(path.join(dir, 'in/small.json'), SMALL);
  return dir;
}

describe('--backup-dir', () => {
  it('keeps each original that changes byte for byte under its path, and none of the unchanged', async () => {
    const dir = tree();
    const gz = readFileSync(path.join(dir, 'in/sub/b.jsonl.gz'));
    const r = await runSwc(['compact', 'in', ...TARGET, '--in-place', '--backup-dir', 'backups'], { cwd: dir });
    expect(r.status).toBe(0);
    expect(readFileSync(path.join(dir, 'backups/a.jsonl')).equals(SAMPLE_BYTES)).toBe(true);
    expect(readFileSync(path.join(dir, 'backups/sub/b.jsonl.gz')).equals(gz)).toBe(true);
    expect(existsSync(path.join(dir, 'backups/small.json'))).toBe(false);
    expect(readFileSync(path.join(dir, 'in/a.jsonl')).length).toBeLessThan(SAMPLE_BYTES.length);
  });

  it('has the backup on disk before the original is replaced', async () => {
    const dir = tree();
    const seen: boolean[] = [];
    writeHooks.beforeRename = (target) => {
      if (target === path.join(dir, 'in/a.jsonl'))
        seen.push(readFileSync(path.join(dir, 'backups/a.jsonl')).equals(SAMPLE_BYTES));
    };
    const r = await runSwc(['compact', 'in/a.jsonl', ...TARGET, '--in-place', '--backup-dir', 'backups'], { cwd: dir });
    expect(r.status).toBe(0);
    expect(seen).toEqual([true]);
  });

  it('never overwrites a backup with other content: that file fails and stays as it was', async () => {
    const dir = tree();
    mkdirSync(path.join(dir, 'backups'));
    writeFileSync(path.join(dir, 'backups/a.jsonl'), 'an older backup\n');
    const r = await runSwc(['compact', 'in', ...TARGET, '--in-place', '--backup-dir', 'backups'], { cwd: dir });
    expect(r.status).toBe(2);
    // The backup is named from the folder as typed, as the input is (never an absolute path the user did not type).
    expect(r.stderr).toContain(
      'swc: in/a.jsonl: a backup is already at backups/a.jsonl with other content; refusing to overwrite it (the original is unchanged',
    );
    expect(readFileSync(path.join(dir, 'backups/a.jsonl'), 'utf8')).toBe('an older backup\n');
    expect(readFileSync(path.join(dir, 'in/a.jsonl')).equals(SAMPLE_BYTES)).toBe(true);
    // The other file is still compacted and backed up.
    expect(existsSync(path.join(dir, 'backups/sub/b.jsonl.gz'))).toBe(true);
  });

  it('takes a backup with the same bytes as done, so a run can be repeated', async () => {
    const dir = tree();
    mkdirSync(path.join(dir, 'backups'));
    cpSync(SAMPLE, path.join(dir, 'backups/a.jsonl'));
    const r = await runSwc(['compact', 'in/a.jsonl', ...TARGET, '--in-place', '--backup-dir', 'backups'], { cwd: dir });
    expect(r.status).toBe(0);
    expect(readFileSync(path.join(dir, 'in/a.jsonl')).length).toBeLessThan(SAMPLE_BYTES.length);
  });

  it('is refused inside an input directory, where a later run without --backup-dir would compact the backups', async () => {
    const dir = tree();
    const inside = await runSwc(['compact', 'in', ...TARGET, '--in-place', '--backup-dir', 'in/.backups'], {
      cwd: dir,
    });
    expect(inside.status).toBe(2);
    expect(inside.stderr).toBe(
      'swc: error: --backup-dir in/.backups is inside the input in, so a later run over it would read (and could compact) the backups: choose a folder beside the inputs\n',
    );
    expect(existsSync(path.join(dir, 'in/.backups'))).toBe(false);
    expect(readFileSync(path.join(dir, 'in/a.jsonl')).equals(SAMPLE_BYTES)).toBe(true);
    // A file named inside the backup folder is refused by name.
    mkdirSync(path.join(dir, 'backups'));
    copyFileSync(path.join(dir, 'in/a.jsonl'), path.join(dir, 'backups/a.jsonl'));
    const named = await runSwc(['compact', 'backups/a.jsonl', ...TARGET, '--in-place', '--backup-dir', 'backups'], {
      cwd: dir,
    });
    expect(named.status).toBe(2);
    expect(named.stderr).toBe(
      'swc: error: backups/a.jsonl is inside the --backup-dir, where this run writes backups; it cannot also be an input\n',
    );
  });

  it('keeps the permission bits of a private original', async () => {
    const dir = tree();
    chmodSync(path.join(dir, 'in/a.jsonl'), 0o600);
    const r = await runSwc(['compact', 'in', ...TARGET, '--in-place', '--backup-dir', 'backups'], { cwd: dir });
    expect(r.status).toBe(0);
    expect(statSync(path.join(dir, 'backups/a.jsonl')).mode & 0o777).toBe(0o600);
    expect(readFileSync(path.join(dir, 'backups/a.jsonl')).equals(SAMPLE_BYTES)).toBe(true);
  });

  it('is a usage error without --in-place, or when it holds the inputs', async () => {
    const dir = tree();
    const alone = await runSwc(['compact', 'in', ...TARGET, '--out-dir', 'out', '--backup-dir', 'backups'], {
      cwd: dir,
    });
    expect(alone.status).toBe(2);
    expect(alone.stderr).toBe(
      'swc: error: --backup-dir keeps the originals that --in-place replaces; it needs --in-place\n',
    );
    const above = await runSwc(['compact', 'in', ...TARGET, '--in-place', '--backup-dir', '.'], { cwd: dir });
    expect(above.status).toBe(2);
    expect(above.stderr).toMatch(
      /^swc: error: --backup-dir \. holds the input in, so its backups would land among the inputs/,
    );
    expect(readFileSync(path.join(dir, 'in/a.jsonl')).equals(SAMPLE_BYTES)).toBe(true);
  });

  it('never writes through a folder link that leads outside it', async () => {
    const dir = tree();
    const outside = path.join(dir, 'outside');
    mkdirSync(outside);
    mkdirSync(path.join(dir, 'backups'));
    symlinkSync(outside, path.join(dir, 'backups/sub'));
    const r = await runSwc(['compact', 'in', ...TARGET, '--in-place', '--backup-dir', 'backups'], { cwd: dir });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(
      'is a symbolic link that leads outside the --backup-dir; refusing to write there (the original is unchanged)',
    );
    expect(readdirSync(outside)).toEqual([]);
    expect(readFileSync(path.join(dir, 'in/sub/b.jsonl.gz')).equals(gzipSync(SAMPLE_BYTES))).toBe(true);
  });

  it('never writes through a folder swapped for a link during the run', async () => {
    const dir = tree();
    const outside = path.join(dir, 'outside');
    mkdirSync(outside);
    const folder = path.join(dir, 'backups/sub');
    writeHooks.beforeRename = (target) => {
      if (path.dirname(target) !== folder) return;
      rmSync(folder, { recursive: true, force: true });
      symlinkSync(outside, folder);
    };
    const r = await runSwc(
      ['compact', 'in/sub/b.jsonl.gz', ...TARGET, '--in-place', '--backup-dir', 'backups', '--base', 'in'],
      { cwd: dir },
    );
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('was moved or replaced by a link');
    expect(readdirSync(outside)).toEqual([]);
    expect(readFileSync(path.join(dir, 'in/sub/b.jsonl.gz')).equals(gzipSync(SAMPLE_BYTES))).toBe(true);
  });

  it('reports, never as success, a folder swapped for a link after the last check (Node has no renameat)', async () => {
    const dir = tree();
    const outside = path.join(dir, 'outside');
    mkdirSync(outside);
    const folder = path.join(dir, 'backups/sub');
    writeHooks.beforePlace = (target) => {
      if (path.dirname(target) !== folder) return;
      // The folder (with the finished temporary file in it) moves outside, and a link to it takes its place.
      rmSync(outside, { recursive: true });
      renameSync(folder, outside);
      symlinkSync(outside, folder);
    };
    const r = await runSwc(
      ['compact', 'in/sub/b.jsonl.gz', ...TARGET, '--in-place', '--backup-dir', 'backups', '--base', 'in'],
      { cwd: dir },
    );
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(
      'was moved or replaced by a link while it was written; the file may have landed elsewhere',
    );
    // The backup went where the link led (that cannot be undone), and so the original was not replaced.
    expect(readFileSync(path.join(dir, 'in/sub/b.jsonl.gz')).equals(gzipSync(SAMPLE_BYTES))).toBe(true);
  });

  it('never writes through a link planted at the backup path while it is written', async () => {
    const dir = tree();
    const secret = path.join(dir, 'secret.txt');
    writeFileSync(secret, 'not yours\n');
    const backup = path.join(dir, 'backups/a.jsonl');
    writeHooks.beforeRename = (target) => {
      if (target === backup) symlinkSync(secret, backup);
    };
    const r = await runSwc(['compact', 'in/a.jsonl', ...TARGET, '--in-place', '--backup-dir', 'backups'], { cwd: dir });
    expect(r.status).toBe(2);
    expect(readFileSync(secret, 'utf8')).toBe('not yours\n');
    expect(readFileSync(path.join(dir, 'in/a.jsonl')).equals(SAMPLE_BYTES)).toBe(true);
    expect(readdirSync(path.join(dir, 'backups'))).toEqual(['a.jsonl']);
  });

  it('never overwrites a backup that appears while it is written', async () => {
    const dir = tree();
    const backup = path.join(dir, 'backups/a.jsonl');
    writeHooks.beforeRename = (target) => {
      if (target === backup) writeFileSync(backup, 'appeared meanwhile\n');
    };
    const r = await runSwc(['compact', 'in/a.jsonl', ...TARGET, '--in-place', '--backup-dir', 'backups'], { cwd: dir });
    expect(r.status).toBe(2);
    expect(readFileSync(backup, 'utf8')).toBe('appeared meanwhile\n');
    expect(readFileSync(path.join(dir, 'in/a.jsonl')).equals(SAMPLE_BYTES)).toBe(true);
    expect(readdirSync(path.join(dir, 'backups'))).toEqual(['a.jsonl']);
  });
});
