import { afterEach, describe, expect, it } from '@jest/globals';
import {
  appendFileSync,
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  lstatSync,
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
import { writeHooks } from '../../src/io/files.js';
import { ROOT, tempDir } from '../helpers/cli.js';
import { runSwc } from '../helpers/run-in-process.js';

/**
 * Writes never lose a byte and never land where nobody asked. Races are made to happen at a fixed point inside swc
 * (`writeHooks.beforeRename`, called right before each rename), never by sleeping.
 */

const SAMPLE = path.join(ROOT, 'fixtures/sample.jsonl');
const SAMPLE_TEXT = readFileSync(SAMPLE, 'utf8');
/** Compacts the sample (about 1,600 tokens) without question. */
const TARGET = ['-t', '200', '--tokenizer', 'approx'];

afterEach(() => {
  delete writeHooks.beforeRename;
});

/** A temporary tree `in/` holding copies of the sample at the given relative paths. */
function tree(...files: string[]): string {
  const dir = tempDir();
  for (const f of files) {
    mkdirSync(path.dirname(path.join(dir, 'in', f)), { recursive: true });
    cpSync(SAMPLE, path.join(dir, 'in', f));
  }
  return dir;
}

/** Every file name under a directory, temporary files included. */
function namesUnder(dir: string): string[] {
  return (readdirSync(dir, { recursive: true }) as string[]).sort();
}

describe('a file that changes while it is compacted is never replaced', () => {
  it('keeps the lines an agent appends to a live log during --in-place, and fails that file', async () => {
    const dir = tree('live.jsonl');
    const live = path.join(dir, 'in/live.jsonl');
    const appended = `${JSON.stringify({ role: 'user', content: 'appended while swc ran' })}\n`;
    writeHooks.beforeRename = () => appendFileSync(live, appended);
    const r = await runSwc(['compact', 'in/live.jsonl', ...TARGET, '--in-place'], { cwd: dir });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(
      'in/live.jsonl: the file changed while it was being compacted; nothing was written for it',
    );
    expect(readFileSync(live, 'utf8')).toBe(SAMPLE_TEXT + appended);
    expect(namesUnder(path.join(dir, 'in'))).toEqual(['live.jsonl']);
  });

  it('keeps a file rewritten with other content of the same size', async () => {
    const dir = tree('a.jsonl');
    const file = path.join(dir, 'in/a.jsonl');
    const other = SAMPLE_TEXT.replace('"user"', '"USER"');
    writeHooks.beforeRename = () => writeFileSync(file, other);
    const r = await runSwc(['compact', 'in', ...TARGET, '--in-place'], { cwd: dir });
    expect(r.status).toBe(2);
    expect(readFileSync(file, 'utf8')).toBe(other);
  });

  it('keeps a live log that is also the --output', async () => {
    const dir = tree('live.jsonl');
    const live = path.join(dir, 'in/live.jsonl');
    writeHooks.beforeRename = () => appendFileSync(live, '{"role":"user","content":"late"}\n');
    const r = await runSwc(['compact', 'in/live.jsonl', ...TARGET, '-o', 'in/live.jsonl'], { cwd: dir });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('the file changed while it was being compacted');
    expect(readFileSync(live, 'utf8')).toBe(`${SAMPLE_TEXT}{"role":"user","content":"late"}\n`);
  });

  it('still replaces a file that nothing touched, through -o naming the input itself', async () => {
    const dir = tree('a.jsonl');
    const r = await runSwc(['compact', 'in/a.jsonl', ...TARGET, '-o', 'in/a.jsonl'], { cwd: dir });
    expect(r.status).toBe(0);
    expect(readFileSync(path.join(dir, 'in/a.jsonl'), 'utf8').length).toBeLessThan(SAMPLE_TEXT.length);
  });
});

describe('--in-place never writes through a link that appeared after the file was read', () => {
  it('leaves the link and its target alone when the input is swapped for a symlink before the rename', async () => {
    const dir = tree('a.jsonl');
    const input = path.join(dir, 'in/a.jsonl');
    const secret = path.join(dir, 'secret.txt');
    writeFileSync(secret, 'do not overwrite\n');
    writeHooks.beforeRename = () => {
      rmSync(input);
      symlinkSync(secret, input);
    };
    const r = await runSwc(['compact', 'in', ...TARGET, '--in-place'], { cwd: dir });
    expect(r.status).toBe(2);
    expect(readFileSync(secret, 'utf8')).toBe('do not overwrite\n');
    expect(lstatSync(input).isSymbolicLink()).toBe(true);
  });

  it('does not write into a folder that was swapped for a link to elsewhere', async () => {
    const dir = tree('sub/a.jsonl');
    const outside = path.join(dir, 'outside');
    mkdirSync(outside);
    writeHooks.beforeRename = () => {
      renameSync(path.join(dir, 'in/sub'), path.join(dir, 'moved'));
      symlinkSync(outside, path.join(dir, 'in/sub'));
    };
    const r = await runSwc(['compact', 'in/sub/a.jsonl', ...TARGET, '--in-place'], { cwd: dir });
    expect(r.status).toBe(2);
    expect(readdirSync(outside)).toEqual([]);
    expect(readFileSync(path.join(dir, 'moved/a.jsonl'), 'utf8')).toBe(SAMPLE_TEXT);
  });

  it('rewrites the file a link given on the command line points to, and keeps the link', async () => {
    const dir = tree('a.jsonl');
    symlinkSync('a.jsonl', path.join(dir, 'in/link.jsonl'));
    const r = await runSwc(['compact', 'in/link.jsonl', ...TARGET, '--in-place'], { cwd: dir });
    expect(r.status).toBe(0);
    expect(lstatSync(path.join(dir, 'in/link.jsonl')).isSymbolicLink()).toBe(true);
    expect(readFileSync(path.join(dir, 'in/a.jsonl'), 'utf8').length).toBeLessThan(SAMPLE_TEXT.length);
  });
});

describe('--out-dir never overwrites an input and never leaves the out-dir', () => {
  it('refuses to replace a transcript already in an out-dir inside the inputs', async () => {
    const dir = tree('a.jsonl', 'sub/a.jsonl');
    const theirs = path.join(dir, 'in/sub/a.jsonl');
    appendFileSync(theirs, '{"role":"user","content":"mine"}\n');
    const before = readFileSync(theirs, 'utf8');
    const r = await runSwc(['compact', 'in', '--out-dir', 'in/sub', ...TARGET], { cwd: dir });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('swc: in/a.jsonl: in/sub/a.jsonl already exists with other content');
    expect(readFileSync(theirs, 'utf8')).toBe(before);
  });

  it('refuses an out-dir reached through a symlink into the inputs, where the destination is an input', async () => {
    const dir = tree('a.jsonl', 'b/a.jsonl');
    symlinkSync(path.join(dir, 'in/b'), path.join(dir, 'out'));
    const r = await runSwc(['compact', 'in/a.jsonl', 'in/b/a.jsonl', '--base', 'in', '--out-dir', 'out', ...TARGET], {
      cwd: dir,
    });
    expect(r.status).toBe(2);
    expect(readFileSync(path.join(dir, 'in/b/a.jsonl'), 'utf8')).toBe(SAMPLE_TEXT);
  });

  it('refuses a destination that is a hard link to an input, even with --force', async () => {
    const dir = tree('a.jsonl', 'b.jsonl');
    mkdirSync(path.join(dir, 'out'));
    // out/a.jsonl is in/b.jsonl under another name.
    const { linkSync } = await import('node:fs');
    linkSync(path.join(dir, 'in/b.jsonl'), path.join(dir, 'out/a.jsonl'));
    const r = await runSwc(['compact', 'in', '--out-dir', 'out', '--force', ...TARGET], { cwd: dir });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(
      'swc: in/a.jsonl: its out-dir path out/a.jsonl is one of the inputs; refusing to overwrite it',
    );
    expect(readFileSync(path.join(dir, 'in/b.jsonl'), 'utf8')).toBe(SAMPLE_TEXT);
  });

  it('runs again into the same out-dir without --force, and replaces other content only with --force', async () => {
    const dir = tree('a.jsonl');
    expect((await runSwc(['compact', 'in', '--out-dir', 'out', ...TARGET], { cwd: dir })).status).toBe(0);
    const first = readFileSync(path.join(dir, 'out/a.jsonl'), 'utf8');
    expect((await runSwc(['compact', 'in', '--out-dir', 'out', ...TARGET], { cwd: dir })).status).toBe(0);
    expect(
      (await runSwc(['compact', 'in', '--out-dir', 'out', '-t', '100000', '--tokenizer', 'approx'], { cwd: dir }))
        .status,
    ).toBe(2);
    expect(readFileSync(path.join(dir, 'out/a.jsonl'), 'utf8')).toBe(first);
    expect(
      (
        await runSwc(['compact', 'in', '--out-dir', 'out', '-t', '100000', '--tokenizer', 'approx', '--force'], {
          cwd: dir,
        })
      ).status,
    ).toBe(0);
    expect(readFileSync(path.join(dir, 'out/a.jsonl'), 'utf8')).not.toBe(first);
  });

  it('replaces a symlink planted at the destination right before the rename instead of writing through it', async () => {
    const dir = tree('a.jsonl');
    const secret = path.join(dir, 'secret.txt');
    writeFileSync(secret, 'keep\n');
    writeHooks.beforeRename = (target) => symlinkSync(secret, target);
    const r = await runSwc(['compact', 'in', '--out-dir', 'out', ...TARGET], { cwd: dir });
    expect(r.status).toBe(0);
    expect(readFileSync(secret, 'utf8')).toBe('keep\n');
    expect(lstatSync(path.join(dir, 'out/a.jsonl')).isFile()).toBe(true);
  });

  it('writes nothing outside when a checked folder of the out-dir is swapped for a link mid-run', async () => {
    const dir = tree('sub/a.jsonl', 'sub/b.jsonl');
    const outside = path.join(dir, 'outside');
    mkdirSync(outside);
    let swapped = false;
    writeHooks.beforeRename = () => {
      if (swapped) return;
      swapped = true;
      renameSync(path.join(dir, 'out/sub'), path.join(dir, 'old-sub'));
      symlinkSync(outside, path.join(dir, 'out/sub'));
    };
    const r = await runSwc(['compact', 'in', '--out-dir', 'out', '--jobs', '1', ...TARGET], { cwd: dir });
    expect(r.status).toBe(2);
    expect(readdirSync(outside)).toEqual([]);
  });
});

describe('--report never overwrites what the run reads or writes', () => {
  it.each([
    ['an input of a check', ['compact', 'in', '--check', ...TARGET, '--report', 'in/a.jsonl']],
    ['the one input', ['compact', 'in/a.jsonl', ...TARGET, '-o', 'out.jsonl', '--report', 'in/a.jsonl']],
    ['the --output', ['compact', 'in/a.jsonl', ...TARGET, '-o', 'out.jsonl', '--report', 'out.jsonl']],
    ['a file in the out-dir', ['compact', 'in', ...TARGET, '--out-dir', 'out', '--report', 'out/r.json']],
    ['an input reached through a link', ['compact', 'in', '--check', ...TARGET, '--report', 'link.json']],
  ])('refuses a report path that is %s', async (_name, argv) => {
    const dir = tree('a.jsonl');
    symlinkSync(path.join(dir, 'in/a.jsonl'), path.join(dir, 'link.json'));
    const r = await runSwc(argv, { cwd: dir });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(
      /^swc: error: --report .* (is one of the inputs|is also the --output|is inside the --out-dir)/,
    );
    expect(readFileSync(path.join(dir, 'in/a.jsonl'), 'utf8')).toBe(SAMPLE_TEXT);
    expect(existsSync(path.join(dir, 'out.jsonl'))).toBe(false);
  });
});

describe('modes and owners', () => {
  it("gives a new -o file the default mode less the umask, and an --out-dir copy its input's bits, never special bits", async () => {
    const dir = tree('a.jsonl');
    chmodSync(path.join(dir, 'in/a.jsonl'), 0o4755);
    const umask = process.umask(0o022);
    try {
      expect((await runSwc(['compact', 'in/a.jsonl', ...TARGET, '-o', 'new.jsonl'], { cwd: dir })).status).toBe(0);
      expect((await runSwc(['compact', 'in', ...TARGET, '--out-dir', 'out'], { cwd: dir })).status).toBe(0);
    } finally {
      process.umask(umask);
    }
    expect(statSync(path.join(dir, 'new.jsonl')).mode & 0o7777).toBe(0o644);
    // A copy of an input keeps its permission bits (a private transcript's copy stays private), setuid dropped.
    expect(statSync(path.join(dir, 'out/a.jsonl')).mode & 0o7777).toBe(0o755);
    chmodSync(path.join(dir, 'in/a.jsonl'), 0o600);
    expect((await runSwc(['compact', 'in', ...TARGET, '--out-dir', 'private', '-q'], { cwd: dir })).status).toBe(0);
    expect(statSync(path.join(dir, 'private/a.jsonl')).mode & 0o7777).toBe(0o600);
  });

  it('keeps the mode of an existing --output file', async () => {
    const dir = tree('a.jsonl');
    const out = path.join(dir, 'shared.jsonl');
    writeFileSync(out, '');
    chmodSync(out, 0o666);
    expect((await runSwc(['compact', 'in/a.jsonl', ...TARGET, '-o', 'shared.jsonl'], { cwd: dir })).status).toBe(0);
    expect(statSync(out).mode & 0o7777).toBe(0o666);
  });

  it('keeps the mode of a file rewritten in place, without special bits', async () => {
    const dir = tree('a.jsonl');
    chmodSync(path.join(dir, 'in/a.jsonl'), 0o2640);
    expect((await runSwc(['compact', 'in', ...TARGET, '--in-place'], { cwd: dir })).status).toBe(0);
    expect(statSync(path.join(dir, 'in/a.jsonl')).mode & 0o7777).toBe(0o640);
  });

  const asRoot = process.getuid?.() === 0 ? it : it.skip;
  if (process.getuid?.() !== 0)
    console.warn("write-safety: not running as root, so the test that --in-place keeps a file's owner is skipped");
  asRoot('keeps the owner and group of a file rewritten in place (run as root)', async () => {
    const dir = tree('a.jsonl');
    const file = path.join(dir, 'in/a.jsonl');
    chownSync(file, 1000, 1000);
    expect((await runSwc(['compact', 'in', ...TARGET, '--in-place'], { cwd: dir })).status).toBe(0);
    expect([statSync(file).uid, statSync(file).gid]).toEqual([1000, 1000]);
    expect(readFileSync(file, 'utf8').length).toBeLessThan(SAMPLE_TEXT.length);
  });
});
