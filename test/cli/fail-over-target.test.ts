/**
 * --fail-over-target: a CI gate that holds files to their budget. A file that no compaction brings under its target
 * fails the run (exit 1) with a line on stderr naming it and why, in a batch, a --check, a dry run and a run of one
 * file; a file that meets its target passes.
 */
import { describe, expect, it } from '@jest/globals';
import { copyFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, tempDir } from '../helpers/cli.js';
import { runSwc } from '../helpers/run-in-process.js';

const APPROX = ['--tokenizer', 'approx'];

/** A folder with a file of three conversations and the sample transcript. */
function folder(): string {
  const dir = tempDir();
  copyFileSync(path.join(ROOT, 'fixtures/multi/records.jsonl'), path.join(dir, 'records.jsonl'));
  copyFileSync(path.join(ROOT, 'fixtures/sample.jsonl'), path.join(dir, 'sample.jsonl'));
  return dir;
}

describe('--fail-over-target', () => {
  it.each([
    ['--check', ['--check']],
    ['--dry-run', ['--dry-run', '-q']],
    ['--out-dir', ['--out-dir', 'out', '-q']],
  ])('fails a batch (%s) naming each file left over its target and why', async (_mode, flags) => {
    const dir = folder();
    const r = await runSwc(['compact', '.', '-t', '20', ...APPROX, ...flags, '--fail-over-target'], { cwd: dir });
    expect(r.status).toBe(1);
    const lines = r.stderr.split('\n').filter((l) => l.includes('over its target'));
    expect(lines).toEqual([
      expect.stringMatching(
        /^swc: records\.jsonl: over its target 20 in 2 of 3 conversations \(first, line 1 "messages": .+\)$/,
      ),
      expect.stringMatching(/^swc: sample\.jsonl: over its target 20: .+/),
    ]);
  });

  it('passes a batch whose files all meet their target, and says nothing of it', async () => {
    const r = await runSwc(['compact', '.', '-t', '100000', ...APPROX, '--check', '--fail-over-target'], {
      cwd: folder(),
    });
    expect(r.status).toBe(0);
    expect(r.stderr).not.toContain('over its target');
  });

  it('fails a run of one file to -o once it is written, and passes one that fits', async () => {
    const dir = folder();
    const over = await runSwc(
      ['compact', 'records.jsonl', '-t', '20', ...APPROX, '-o', 'out.jsonl', '--fail-over-target'],
      { cwd: dir },
    );
    expect(over.status).toBe(1);
    expect(over.stderr).toMatch(/^swc: records\.jsonl: over its target 20 in 2 of 3 conversations/m);
    const fits = await runSwc(
      ['compact', 'records.jsonl', '-t', '60', ...APPROX, '-o', 'out2.jsonl', '--fail-over-target'],
      { cwd: dir },
    );
    expect(fits.status).toBe(0);
    expect(fits.stderr).not.toContain('over its target');
  });

  it('leaves the exit code alone without the flag', async () => {
    const r = await runSwc(['compact', '.', '-t', '20', ...APPROX, '--dry-run', '-q'], { cwd: folder() });
    expect(r.status).toBe(0);
  });
});
