import { afterEach, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, lstatSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { processFile, type JobSettings } from '../../src/cli/worker.js';
import { compactorFor } from '../../src/cli/worker.js';
import { writeHooks } from '../../src/io/files.js';
import { ROOT, tempDir } from '../helpers/cli.js';
import { runSwc } from '../helpers/run-in-process.js';

/** Where writes go: standard streams are written into, report paths are resolved once, only regular files are replaced. */

const SAMPLE = path.join(ROOT, 'fixtures/sample.jsonl');
const SAMPLE_TEXT = readFileSync(SAMPLE, 'utf8');
const TARGET = ['-t', '200', '--tokenizer', 'approx'];

afterEach(() => {
  delete writeHooks.beforeRename;
});

describe('standard streams named as paths', () => {
  it('writes -o /dev/stdout into standard output and leaves /dev alone', async () => {
    const before = lstatSync('/dev/stdout').isSymbolicLink();
    const r = await runSwc(['compact', 'sample.jsonl', ...TARGET, '-o', '/dev/stdout'], { cwd: tempDir([SAMPLE]) });
    expect(r.status).toBe(0);
    expect(r.stdout.split('\n').length).toBeGreaterThan(3);
    expect(lstatSync('/dev/stdout').isSymbolicLink()).toBe(before);
  });

  it('writes --report /dev/stderr and --report - into the streams swc holds', async () => {
    const dir = tempDir([SAMPLE]);
    const err = await runSwc(['compact', '.', '--check', ...TARGET, '--report', '/dev/stderr'], { cwd: dir });
    expect(err.stderr).toContain('"version": 1');
    const out = await runSwc(['compact', '.', '--check', ...TARGET, '--report', '-'], { cwd: dir });
    expect(out.stdout).toContain('"version": 1');
    expect(existsSync(path.join(dir, '-'))).toBe(false);
  });

  it('refuses a report on standard output when the transcript goes there too', async () => {
    const r = await runSwc(['compact', 'sample.jsonl', ...TARGET, '--report', '-'], { cwd: tempDir([SAMPLE]) });
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(
      'swc: error: --report - would put the report into the transcript on standard output: use --json, or -o for the transcript\n',
    );
  });
});

describe('the report path is resolved once', () => {
  it('replaces a link planted at the report path during the run instead of writing through it', async () => {
    const dir = tempDir();
    mkdirSync(path.join(dir, 'in'));
    cpSync(SAMPLE, path.join(dir, 'in/a.jsonl'));
    const victim = path.join(dir, 'victim.txt');
    writeFileSync(victim, 'keep\n');
    let planted = false;
    writeHooks.beforeRename = () => {
      if (planted) return;
      planted = true;
      symlinkSync(victim, path.join(dir, 'r.json'));
    };
    const r = await runSwc(['compact', 'in', '--in-place', ...TARGET, '--report', 'r.json'], { cwd: dir });
    expect(r.status).toBe(0);
    expect(readFileSync(victim, 'utf8')).toBe('keep\n');
    expect(lstatSync(path.join(dir, 'r.json')).isFile()).toBe(true);
  });

  it('takes a transcript shaped like a report for a transcript: refused as the report path', async () => {
    const dir = tempDir();
    mkdirSync(path.join(dir, 'in'));
    const messages = SAMPLE_TEXT.trim()
      .split('\n')
      .map((l) => JSON.parse(l) as unknown);
    const session = JSON.stringify({ version: 2, settings: {}, summary: {}, files: [], messages });
    writeFileSync(path.join(dir, 'in/session.json'), session);
    cpSync(SAMPLE, path.join(dir, 'in/b.jsonl'));
    const r = await runSwc(['compact', 'in', '--check', ...TARGET, '--report', 'in/session.json'], { cwd: dir });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('is one of the inputs');
    expect(readFileSync(path.join(dir, 'in/session.json'), 'utf8')).toBe(session);
  });
});

describe('only regular files are replaced or read from a search', () => {
  it('refuses a FIFO at an out-dir destination even with --force, without hanging', async () => {
    const dir = tempDir();
    mkdirSync(path.join(dir, 'in'));
    mkdirSync(path.join(dir, 'out'));
    cpSync(SAMPLE, path.join(dir, 'in/a.jsonl'));
    expect(spawnSync('mkfifo', [path.join(dir, 'out/a.jsonl')]).status).toBe(0);
    const r = await runSwc(['compact', 'in', '--out-dir', 'out', '--force', ...TARGET], { cwd: dir });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('is not a regular file; refusing to write into it');
  });

  it('does not open a found file that became a FIFO, so the read cannot block', async () => {
    const dir = tempDir();
    const fifo = path.join(dir, 'a.jsonl');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const settings: JobSettings = {
      tokenizer: 'approx',
      counter: {},
      target: 200,
      window: null,
      minKeepSteps: 1,
      note: undefined,
      format: 'auto',
      conversationKey: undefined,
      exhaustive: false,
      diff: null,
      plan: false,
      bytes: 'none',
      everyLine: false,
    };
    const result = await processFile(
      { index: 0, file: fifo, real: fifo, display: 'a.jsonl', found: true },
      settings,
      await compactorFor(settings),
    );
    expect(result.record.status).toBe('failed');
    expect(result.line).toBe('swc: a.jsonl: is no longer a regular file; nothing was read from it');
  });

  it('says a found file deleted before it was read cannot be read: no such file, not that it changed kind', async () => {
    const dir = tempDir();
    const gone = path.join(dir, 'a.jsonl');
    const settings: JobSettings = {
      tokenizer: 'approx',
      counter: {},
      target: 200,
      window: null,
      minKeepSteps: 1,
      note: undefined,
      format: 'auto',
      conversationKey: undefined,
      exhaustive: false,
      diff: null,
      plan: false,
      bytes: 'none',
      everyLine: false,
    };
    const result = await processFile(
      { index: 0, file: gone, real: gone, display: 'a.jsonl', found: true },
      settings,
      await compactorFor(settings),
    );
    expect(result.record.status).toBe('failed');
    expect(result.line).toBe('swc: a.jsonl: cannot read: no such file');
  });

  it('refuses an input named inside the out-dir instead of dropping it', async () => {
    const dir = tempDir();
    mkdirSync(path.join(dir, 'in/out'), { recursive: true });
    cpSync(SAMPLE, path.join(dir, 'in/out/a.jsonl'));
    const r = await runSwc(['compact', 'in/out/a.jsonl', '--out-dir', 'in/out', ...TARGET, '--dry-run'], { cwd: dir });
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(
      'swc: error: in/out/a.jsonl is inside the --out-dir, where this run writes its results; it cannot also be an input\n',
    );
  });
});
