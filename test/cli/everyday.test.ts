import { describe, expect, it } from '@jest/globals';
import { cpSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseTokens } from '../../src/cli/options.js';
import { ROOT, tempDir } from '../helpers/cli.js';
import { runSwc } from '../helpers/run-in-process.js';

/** The rough edges a new user hits first: token counts as people write them, files as people name them, wording. */

const SAMPLE = path.join(ROOT, 'fixtures/sample.jsonl');

describe('token counts as people write them', () => {
  it.each([
    ['8k', 8000],
    ['128k', 128_000],
    ['1.5k', 1500],
    ['1m', 1_000_000],
    ['2.5M', 2_500_000],
    ['8K', 8000],
    ['8000', 8000],
    ['8_000', 8000],
    ['8,000', 8000],
  ])('reads %s as %i', (raw, value) => {
    expect(parseTokens('--target', raw, 1)).toBe(value);
  });

  it.each([
    ['8kb', '--target must be a whole number, got "8kb"'],
    ['k', '--target must be a whole number, got "k"'],
    ['1e999', '--target must be a whole number, got "1e999"'],
    ['1.2345k', '--target must be a whole number of tokens, got "1.2345k"'],
    ['99999999999m', '--target is too large: "99999999999m"'],
    ['0k', '--target must be at least 1, got 0'],
  ])('refuses %s with one line', (raw, message) => {
    expect(() => parseTokens('--target', raw, 1)).toThrow(message);
  });

  it('gives the same result for --target 1.5k as for --target 1500', async () => {
    const dir = tempDir([SAMPLE]);
    const a = await runSwc(['compact', 'sample.jsonl', '-t', '1.5k', '--tokenizer', 'approx'], { cwd: dir });
    const b = await runSwc(['compact', 'sample.jsonl', '-t', '1500', '--tokenizer', 'approx'], { cwd: dir });
    expect(a.status).toBe(0);
    expect(a).toEqual(b);
  });

  it('takes 8k for --context-window too', async () => {
    const r = await runSwc(
      ['compact', 'sample.jsonl', '--context-window', '8k', '--tokenizer', 'approx', '--dry-run'],
      { cwd: tempDir([SAMPLE]) },
    );
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('context window 8,000');
  });
});

describe('files as people name them', () => {
  it('finds .ndjson files and extensions in upper case in a directory', async () => {
    const dir = tempDir();
    mkdirSync(path.join(dir, 'in'));
    for (const name of ['a.ndjson', 'B.JSONL', 'd.txt']) cpSync(SAMPLE, path.join(dir, 'in', name));
    cpSync(
      path.join(ROOT, 'fixtures/real/openai-chat/taubench-airline-task109-messages.json'),
      path.join(dir, 'in/c.Json'),
    );
    const r = await runSwc(['compact', 'in', '--check', '-t', '200', '--tokenizer', 'approx'], { cwd: dir });
    expect(r.stdout.split('\n').filter(Boolean).sort()).toEqual(['in/B.JSONL', 'in/a.ndjson', 'in/c.Json']);
  });

  it('points at --in-place when the out-dir is the input directory', async () => {
    const dir = tempDir([SAMPLE]);
    const r = await runSwc(['compact', '.', '--out-dir', '.', '-t', '200', '--tokenizer', 'approx'], { cwd: dir });
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(
      'swc: error: --out-dir . is the input directory . itself, so every result would replace its input: use --in-place to rewrite the files there\n',
    );
    expect(readFileSync(path.join(dir, 'sample.jsonl'), 'utf8')).toBe(readFileSync(SAMPLE, 'utf8'));
  });
});

describe('what a check says', () => {
  it('says what would happen to one named file, exits 1 and writes nothing', async () => {
    const dir = tempDir([SAMPLE]);
    const r = await runSwc(['compact', 'sample.jsonl', '--check', '-t', '200', '--tokenizer', 'approx'], { cwd: dir });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('sample.jsonl\n');
    expect(r.stderr).toMatch(/^swc: sample\.jsonl: .* tokens \(−\d+%, approx\), would remove \d+ of 62 messages; /);
    expect(readFileSync(path.join(dir, 'sample.jsonl'), 'utf8')).toBe(readFileSync(SAMPLE, 'utf8'));
  });
});

describe('one wording for a missing file', () => {
  it.each([
    ['compact to stdout', ['compact', 'nope.jsonl', '-t', '100']],
    ['compact -o', ['compact', 'nope.jsonl', '-t', '100', '-o', 'out.jsonl']],
    ['compact --check', ['compact', 'nope.jsonl', '-t', '100', '--check']],
    ['compact --in-place among other files', ['compact', 'nope.jsonl', 'sample.jsonl', '-t', '100', '--in-place']],
    ['inspect', ['inspect', 'nope.jsonl']],
  ])('is the same one line with exit 2: %s', async (_name, argv) => {
    const r = await runSwc([...argv, '--tokenizer', 'approx'], { cwd: tempDir([SAMPLE]) });
    expect(r).toEqual({ status: 2, stdout: '', stderr: 'swc: error: "nope.jsonl": no such file or directory\n' });
  });
});

describe('token counts swc does not read', () => {
  it.each(['8kb', 'k', '1e999'])(
    'refuses --target %s on the command line with one usage line and exit 2',
    async (raw) => {
      const r = await runSwc(['compact', 'sample.jsonl', '-t', raw, '--tokenizer', 'approx'], {
        cwd: tempDir([SAMPLE]),
      });
      expect(r).toEqual({
        status: 2,
        stdout: '',
        stderr: `swc: error: --target must be a whole number, got "${raw}"\n`,
      });
    },
  );
});
