import { describe, expect, it } from '@jest/globals';
import os from 'node:os';
import path from 'node:path';
import { ROOT, tempDir } from '../helpers/cli.js';
import { runSwc } from '../helpers/run-in-process.js';

/** The approximate counter takes Haystack's parameters on the command line, and plans and reports record them. */

const SAMPLE = path.join(ROOT, 'fixtures/sample.jsonl');

describe('--chars-per-token, --tokens-per-image, --tokens-per-file', () => {
  it('count with the rate given: fewer characters per token, more tokens', async () => {
    const dir = tempDir([SAMPLE]);
    const plan = async (...extra: string[]): Promise<{ tokensBefore: number; settings: Record<string, unknown> }> =>
      JSON.parse(
        (
          await runSwc(
            ['compact', 'sample.jsonl', '-t', '100000', '--tokenizer', 'approx', '--dry-run', '--json', ...extra],
            { cwd: dir },
          )
        ).stdout,
      );
    const four = await plan();
    const two = await plan('--chars-per-token', '2');
    expect(four.settings.counter).toBeUndefined();
    expect(two.settings.counter).toEqual({ charsPerToken: 2, tokensPerImage: 85, tokensPerFile: 1000 });
    // int(n / 2) is twice int(n / 4), or one more, for each group counted.
    expect(two.tokensBefore).toBeGreaterThanOrEqual(2 * four.tokensBefore);
    expect(two.tokensBefore).toBeLessThan(2 * four.tokensBefore + 200);
  });

  it('names the settings in the dry-run header when they are not the defaults', async () => {
    const r = await runSwc(
      [
        'compact',
        'sample.jsonl',
        '-t',
        '300',
        '--tokenizer',
        'approx',
        '--chars-per-token',
        '3.5',
        '--tokens-per-image',
        '0',
        '--dry-run',
      ],
      { cwd: tempDir([SAMPLE]) },
    );
    expect(r.stdout.split('\n')[1]).toBe('format openai  tokenizer approx (3.5 chars/token, 0/image, 1000/file)');
  });

  it('records the image and file costs of a BPE tokenizer in the batch report', async () => {
    const dir = tempDir([SAMPLE]);
    const r = await runSwc(['compact', '.', '--check', '-t', '300', '--tokens-per-file', '2k', '--json'], { cwd: dir });
    expect(JSON.parse(r.stdout).settings.counter).toEqual({
      charsPerToken: null,
      tokensPerImage: 85,
      tokensPerFile: 2000,
    });
  });

  it.each([
    [['--tokenizer', 'approx', '--chars-per-token', '0'], '--chars-per-token must be a positive number, got "0"'],
    [['--tokenizer', 'approx', '--chars-per-token', '-1'], '--chars-per-token must be a positive number, got "-1"'],
    [['--tokenizer', 'approx', '--chars-per-token', 'abc'], '--chars-per-token must be a positive number, got "abc"'],
    [
      ['--tokenizer', 'approx', '--chars-per-token', 'Infinity'],
      '--chars-per-token must be a positive number, got "Infinity"',
    ],
    [['--tokenizer', 'approx', '--chars-per-token', 'NaN'], '--chars-per-token must be a positive number, got "NaN"'],
    [['--tokenizer', 'approx', '--tokens-per-image', '-5'], '--tokens-per-image must be at least 0, got -5'],
    [['--tokenizer', 'approx', '--tokens-per-image', '1.5'], '--tokens-per-image must be a whole number, got "1.5"'],
    [['--chars-per-token', '3'], '--chars-per-token only applies to --tokenizer approx (not o200k_base)'],
  ])('refuses %j with one line and exit 2', async (flags, message) => {
    const r = await runSwc(['compact', 'sample.jsonl', '-t', '300', ...flags], { cwd: tempDir([SAMPLE]) });
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(`swc: error: ${message}\n`);
    expect(r.stdout).toBe('');
  });

  describe('swc inspect takes them too', () => {
    const CONVERSATION = JSON.stringify([
      { role: 'system', content: 'abcdefg' },
      { role: 'user', content: 'hello there' },
    ]);
    const inspect = async (
      ...flags: string[]
    ): Promise<{ tokenizer: string; groups: { kind: string; tokens: number }[] }> => {
      const r = await runSwc(['inspect', '-', '--json', '--tokenizer', 'approx', ...flags], {
        cwd: os.tmpdir(),
        stdin: CONVERSATION,
      });
      expect(r.stderr).toBe('');
      return JSON.parse(r.stdout);
    };

    it('counts each group with the rate given and names the settings', async () => {
      const four = await inspect();
      const slow = await inspect('--chars-per-token', '0.5');
      expect(four.tokenizer).toBe('approx');
      expect(slow.tokenizer).toBe('approx (0.5 chars/token, 85/image, 1000/file)');
      // Each group's rendered text has n characters: int(n / 4) with the default, int(n / 0.5) = 2n here.
      for (const [k, g] of slow.groups.entries()) {
        const n = g.tokens / 2;
        expect(Number.isInteger(n)).toBe(true);
        expect(four.groups[k]?.tokens).toBe(Math.trunc(n / 4));
      }
    });

    it.each([
      [['--tokenizer', 'approx', '--chars-per-token', '0'], '--chars-per-token must be a positive number, got "0"'],
      [['--tokens-per-file', '1.5'], '--tokens-per-file must be a whole number, got "1.5"'],
      [['--chars-per-token', '3'], '--chars-per-token only applies to --tokenizer approx (not o200k_base)'],
    ])('refuses %j with one line and exit 2', async (flags, message) => {
      const r = await runSwc(['inspect', '-', ...flags], { cwd: os.tmpdir(), stdin: CONVERSATION });
      expect(r.status).toBe(2);
      expect(r.stderr).toBe(`swc: error: ${message}\n`);
      expect(r.stdout).toBe('');
    });
  });
});
