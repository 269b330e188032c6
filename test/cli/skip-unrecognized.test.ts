/**
 * --skip-unrecognized: a file in which no conversation is found (a JSON object without a message list, a single value,
 * a list or lines of which no item is a message of any format, a --conversation-path that leads nowhere in it) is
 * counted as skipped, not failed, in every mode, and the batch is judged on the rest; a broken transcript still fails.
 */
import { describe, expect, it } from '@jest/globals';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { ROOT, tempDir } from '../helpers/cli.js';
import { runSwc } from '../helpers/run-in-process.js';

const APPROX = ['--tokenizer', 'approx', '-j', '1', '-t', '300'];
const SAVED_STATE = path.join(ROOT, 'fixtures/real/haystack/haystack-experimental-saved_state-answer_joiner.json');
const POINTER = '/input_data/serialized_data/gpt-4o/messages';

/** An OpenAI-chat JSONL transcript of `turns` long turns: 8 need compaction at -t 300, 1 does not. */
function transcript(turns: number): string {
  const messages: object[] = [{ role: 'system', content: 'You are terse.' }];
  for (let t = 0; t < turns; t++) {
    messages.push({ role: 'user', content: `question ${t}: ${'what about this '.repeat(30)}` });
    messages.push({ role: 'assistant', content: `answer ${t}: ${'it is so '.repeat(30)}` });
  }
  return `${messages.map((m) => JSON.stringify(m)).join('\n')}\n`;
}

/** Files in which no conversation is found: what --skip-unrecognized skips. */
const UNRECOGNIZED: Record<string, string> = {
  'config.json': '{"name": "demo", "version": "1.0.0"}\n',
  'empty-object.json': '{}\n',
  'list-of-numbers.json': '[1, 2, 3]\n',
  'list-of-records.json': '[{"id": 1, "score": 0.5}]\n',
  'single-value.json': '"just a string"\n',
  'events.jsonl': '{"event": "start"}\n{"event": "stop"}\n',
};

/** Transcripts that are broken: they still fail. */
const BROKEN: Record<string, string> = {
  'bad-json.json': '{"messages": [',
  'bad-line.jsonl': '{"role": "user", "content": "hi"}\n{"role": \n',
  'unknown-role.json': '[{"role": "system", "content": "x"}, {"role": "wizard", "content": "y"}]\n',
  'message-not-object.json': '{"messages": [{"role": "user", "content": "hi"}, 42]}\n',
  // Each a message, of two formats that cannot be one conversation.
  'mixed-formats.json': '[{"role": "user", "content": "hi"}, {"role": "model", "parts": [{"text": "yo"}]}]\n',
  // A file of records whose second record holds no conversation.
  'records.jsonl': `${JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] })}\n{"other": 1}\n`,
  'empty.json': '',
};

/** archive/: a transcript to compact, one that is fine, a Haystack saved state and the files above (some nested). */
function archive(withBroken: boolean): string {
  const dir = tempDir();
  mkdirSync(path.join(dir, 'archive/more'), { recursive: true });
  writeFileSync(path.join(dir, 'archive/big.jsonl'), transcript(8));
  writeFileSync(path.join(dir, 'archive/small.jsonl'), transcript(1));
  cpSync(SAVED_STATE, path.join(dir, 'archive/more/state.json'));
  for (const [name, text] of Object.entries(UNRECOGNIZED)) writeFileSync(path.join(dir, 'archive', name), text);
  if (withBroken)
    for (const [name, text] of Object.entries(BROKEN)) writeFileSync(path.join(dir, 'archive/more', name), text);
  return dir;
}

interface Report {
  summary: { files: number; compacted: number; unchanged: number; failed: number; skipped: number };
  files: Array<{
    path: string;
    status: string;
    error: { message: string; unrecognized?: true } | null;
    plan?: unknown;
  }>;
}

const SKIPPED = [
  'archive/config.json',
  'archive/empty-object.json',
  'archive/events.jsonl',
  'archive/list-of-numbers.json',
  'archive/list-of-records.json',
  'archive/more/state.json',
  'archive/single-value.json',
];

const MODES: Array<[string, string[], number]> = [
  // [mode, its flags, the exit code once the non-transcripts are skipped]
  ['--check', ['--check'], 1],
  ['--dry-run', ['--dry-run'], 0],
  ['--dry-run --stat', ['--dry-run', '--stat'], 0],
  ['--in-place', ['--in-place'], 0],
  ['--out-dir', ['--out-dir', 'out'], 0],
];

function reportValidator(): ValidateFunction {
  const schema = (name: string): Record<string, unknown> =>
    JSON.parse(readFileSync(path.join(ROOT, 'docs/schema', name), 'utf8')) as Record<string, unknown>;
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true });
  ajv.addSchema(schema('plan.schema.json')).addSchema(schema('report.schema.json'));
  return ajv.getSchema('report.schema.json') as ValidateFunction;
}

describe('a batch with files that hold no conversation', () => {
  it.each(MODES)('fails as a whole under %s without --skip-unrecognized', async (_mode, flags) => {
    const dir = archive(false);
    const r = await runSwc(['compact', 'archive', ...flags, ...APPROX], { cwd: dir });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(
      /swc: archive\/more\/state\.json:1:1: no message list found: .*pass --conversation-path \/input_data/,
    );
    expect(r.stderr).toMatch(/, 7 failed/);
  });

  it.each(MODES)('is judged on its transcripts under %s with --skip-unrecognized', async (_mode, flags, code) => {
    const dir = archive(false);
    const r = await runSwc(['compact', 'archive', ...flags, ...APPROX, '--skip-unrecognized', '--report', 'r.json'], {
      cwd: dir,
    });
    expect(r.status).toBe(code);
    // No line per skipped file without --verbose; the total counts them.
    expect(r.stderr).not.toMatch(/skipped archive|no message list|cannot tell/);
    if (flags.includes('--stat'))
      expect(r.stdout).toMatch(/^9 files, 1 would change, 1 unchanged \(1 not shown\), 7 skipped: /m);
    expect(r.stderr).toMatch(/swc: 9 files scanned: 1 (would be )?compacted, 1 unchanged, 7 skipped, 0 failed; /);
    const report = JSON.parse(readFileSync(path.join(dir, 'r.json'), 'utf8')) as Report;
    expect(report.summary).toMatchObject({ files: 9, compacted: 1, unchanged: 1, failed: 0, skipped: 7 });
    expect(report.files.filter((f) => f.status === 'skipped').map((f) => f.path)).toEqual(SKIPPED);
    for (const f of report.files.filter((g) => g.status === 'skipped'))
      expect(f.error).toMatchObject({ unrecognized: true });
    expect(reportValidator()(report)).toBe(true);
    // Nothing is written for a skipped file: --out-dir copies only transcripts, --in-place leaves them as they are.
    if (flags.includes('--out-dir'))
      expect(readdirSync(path.join(dir, 'out'), { recursive: true }).sort()).toEqual(['big.jsonl', 'small.jsonl']);
    expect(readFileSync(path.join(dir, 'archive/config.json'), 'utf8')).toBe(UNRECOGNIZED['config.json']);
  });

  it('still fails on every broken transcript, and says each one', async () => {
    const dir = archive(true);
    const r = await runSwc(['compact', 'archive', '--check', ...APPROX, '--skip-unrecognized', '--json'], { cwd: dir });
    expect(r.status).toBe(2);
    const report = JSON.parse(r.stdout) as Report;
    const failed = report.files.filter((f) => f.status === 'failed').map((f) => path.basename(f.path));
    expect(failed.sort()).toEqual(Object.keys(BROKEN).sort());
    for (const f of report.files.filter((g) => g.status === 'failed')) {
      expect(f.error?.unrecognized).toBeUndefined();
      expect(r.stderr).toContain(`swc: ${f.error?.message}\n`);
    }
    expect(report.files.filter((f) => f.status === 'skipped').map((f) => f.path)).toEqual(SKIPPED);
    expect(r.stderr).toMatch(/16 files scanned: 1 would be compacted, 1 unchanged, 7 skipped, 7 failed; /);
    expect(reportValidator()(report)).toBe(true);
  });

  it('marks the records of such files as unrecognized even without the flag, so a report can tell them apart', async () => {
    const dir = archive(true);
    const r = await runSwc(['compact', 'archive', '--check', ...APPROX, '--json'], { cwd: dir });
    const report = JSON.parse(r.stdout) as Report;
    expect(report.summary.skipped).toBe(0);
    expect(report.files.filter((f) => f.error?.unrecognized === true).map((f) => f.path)).toEqual(SKIPPED);
    expect(reportValidator()(report)).toBe(true);
  });

  it('says each skipped file with --dry-run --verbose, and a named file always', async () => {
    const dir = archive(false);
    const r = await runSwc(
      ['compact', 'archive', '--dry-run', '--stat', '--verbose', ...APPROX, '--skip-unrecognized'],
      { cwd: dir },
    );
    expect(r.status).toBe(0);
    const lines = r.stderr.split('\n').filter((l) => l.startsWith('swc: skipped '));
    expect(lines.map((l) => /^swc: skipped (.*?)(:\d+)*: /.exec(l)?.[1])).toEqual(SKIPPED);
    expect(r.stderr).toContain('swc: skipped archive/more/state.json:1:1: no message list found: ');
    const quiet = await runSwc(
      ['compact', 'archive', '--dry-run', '--verbose', '-qq', ...APPROX, '--skip-unrecognized'],
      { cwd: dir },
    );
    expect(quiet.stderr).toBe('');
    const one = await runSwc(['compact', 'archive/config.json', '--check', ...APPROX, '--skip-unrecognized'], {
      cwd: dir,
    });
    expect(one).toEqual({
      status: 0,
      stdout: '',
      stderr:
        'swc: skipped archive/config.json:1:1: no message list found: expected a top-level list or an object with "messages", "input", "contents", "events", "conversations", "traj", "history" (found keys: name, version)\n',
    });
  });

  it('skips the files a --conversation-path leads nowhere in, and reads those it reaches', async () => {
    const dir = archive(false);
    const r = await runSwc(
      ['compact', 'archive', '--check', ...APPROX, '--conversation-path', POINTER, '--skip-unrecognized', '--json'],
      { cwd: dir },
    );
    const report = JSON.parse(r.stdout) as Report;
    // The saved state's conversation is read (it is too short to lose anything); the transcripts hold nothing at that
    // path, so every other file is skipped, and none failed.
    expect(report.files.find((f) => f.path === 'archive/more/state.json')?.status).toBe('unchanged');
    expect(report.summary).toMatchObject({ files: 9, unchanged: 1, failed: 0, skipped: 8 });
    expect(r.status).toBe(0);
  });

  it('is refused for a run on one file to standard output or -o, which is not a batch', async () => {
    const dir = archive(false);
    const r = await runSwc(['compact', 'archive/big.jsonl', ...APPROX, '--skip-unrecognized', '-o', 'out.jsonl'], {
      cwd: dir,
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(
      'swc: error: --skip-unrecognized only applies to batch runs: add --out-dir, --in-place, --check or --dry-run\n',
    );
    expect(existsSync(path.join(dir, 'out.jsonl'))).toBe(false);
  });
});

describe('the files of fixtures/bad', () => {
  it('are all broken transcripts but the two that hold no message list at all', async () => {
    const dir = tempDir();
    cpSync(path.join(ROOT, 'fixtures/bad'), path.join(dir, 'bad'), { recursive: true });
    const r = await runSwc(['compact', 'bad', '--check', ...APPROX, '--skip-unrecognized', '--json'], { cwd: dir });
    const report = JSON.parse(r.stdout) as Report;
    expect(report.files.filter((f) => f.status === 'skipped').map((f) => f.path)).toEqual([
      'bad/no-message-list.json',
      'bad/single-value.json',
    ]);
    expect(report.summary.failed).toBeGreaterThan(10);
    expect(r.status).toBe(2);
  });
});

describe('swc inspect --skip-unrecognized', () => {
  it('leaves out the files that hold no conversation, counts them in the total, and still fails a broken transcript', async () => {
    const clean = archive(false);
    const without = await runSwc(['inspect', 'archive', '--tokenizer', 'approx'], { cwd: clean });
    expect(without.status).toBe(2);
    const skipping = await runSwc(['inspect', 'archive', '--tokenizer', 'approx', '--skip-unrecognized'], {
      cwd: clean,
    });
    expect(skipping.status).toBe(0);
    expect(skipping.stderr).toBe('');
    for (const file of SKIPPED) expect(skipping.stdout).not.toContain(file);
    expect(skipping.stdout).toMatch(new RegExp(`^total: 2 files, .*, ${SKIPPED.length} skipped$`, 'm'));
    const json = JSON.parse(
      (await runSwc(['inspect', 'archive', '--tokenizer', 'approx', '--skip-unrecognized', '--json'], { cwd: clean }))
        .stdout,
    ) as { files: Array<{ file: string }> };
    expect(json.files.map((f) => f.file).sort()).toEqual(['archive/big.jsonl', 'archive/small.jsonl']);
    const broken = await runSwc(['inspect', 'archive', '--tokenizer', 'approx', '--skip-unrecognized'], {
      cwd: archive(true),
    });
    expect(broken.status).toBe(2);
    // Each broken transcript is still reported: an unreadable one on stderr, a readable one's problems in the text.
    for (const name of Object.keys(BROKEN))
      expect({ name, named: `${broken.stderr}${broken.stdout}`.includes(`archive/more/${name}`) }).toEqual({
        name,
        named: true,
      });
  });
});
