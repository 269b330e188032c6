/**
 * swc's own reading of the BPE encodings on big inputs: the real transcripts past BIG_FILE, and a run of twenty
 * million letters in a process of its own (the rest of its tests: test/tokens/ranks.test.ts).
 */
import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import * as cl100k from 'gpt-tokenizer/encoding/cl100k_base';
import * as o200k from 'gpt-tokenizer/encoding/o200k_base';
import { createRankCounter, RankTable } from '../../src/tokens/ranks.js';
import { isBig, realTranscripts, ROOT } from '../helpers/cli.js';

const PLAIN = { disallowedSpecial: new Set<string>(), allowedSpecial: new Set<string>() };

describe.each([
  ['o200k_base', o200k],
  ['cl100k_base', cl100k],
] as const)('the %s rank table', (name, gpt) => {
  it('counts every big real transcript exactly as gpt-tokenizer does', () => {
    const pieces = createRankCounter(RankTable.load(name) as RankTable);
    const big = realTranscripts().filter(isBig);
    expect(big.length).toBeGreaterThan(0);
    for (const file of big) {
      const text = readFileSync(file, 'utf8');
      expect({ file, ...pieces.count(text) }).toEqual({ file, tokens: gpt.countTokens(text, PLAIN), exact: true });
    }
  });
});

describe('a run of twenty million letters (one pre-token piece)', () => {
  it("is bounded from below without being merged when a limit is passed, in swc's own counter", () => {
    // Measured in a process of its own, as the command line runs (the built counter): inside Jest's VM context V8
    // ran the piece's first regular-expression match out of stack in a fresh clone, which node itself does not.
    const script = [
      `const { createCounter } = await import(${JSON.stringify(pathToFileURL(path.join(ROOT, 'dist/tokens/index.js')).href)});`,
      "const counter = await createCounter('o200k_base');",
      "process.stdout.write(String(counter.measure([{ text: 'x'.repeat(20_000_000), images: 0, files: 0 }], 100)));",
    ].join('\n');
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    // o200k's longest token is 128 bytes: 20,000,000 letters are at least 156,250 tokens.
    expect({ status: run.status, stderr: run.stderr, tokens: run.stdout }).toEqual({
      status: 0,
      stderr: '',
      tokens: '156250',
    });
  });
});
