/**
 * The library's replay() says when a summarize policy's model calls failed, as the command does (exit 3): an empty
 * reply is a failed call there, as it is for a summarize command and for compactMessages.
 */
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { replay } from '../../src/index.js';
import { ROOT } from '../helpers/cli.js';

const RUN = readFileSync(path.join(ROOT, 'fixtures/sample.jsonl'), 'utf8')
  .trimEnd()
  .split('\n')
  .map((line) => JSON.parse(line) as unknown);

describe('replay() with a summarizer that fails', () => {
  it.each([
    ['returns an empty text', async () => ''],
    ['returns white space', async () => ' \n '],
  ])('counts every call that %s as failed, and says why', async (_name, summarize) => {
    const run = await replay(RUN, { contextWindow: 3000, strategies: ['summarize'], summarize, tokenizer: 'approx' });
    const summary = run.policies[0]?.summary;
    expect(summary?.calls).toBeGreaterThan(0);
    expect({ failed: summary?.failed, failure: summary?.failure }).toEqual({
      failed: summary?.calls,
      failure: 'the summarizer returned no summary',
    });
  });

  it('counts none failed when every reply is a summary', async () => {
    const run = await replay(RUN, {
      contextWindow: 3000,
      strategies: ['summarize'],
      summarize: async () => 'A short summary.',
      tokenizer: 'approx',
    });
    expect(run.policies[0]?.summary?.calls).toBeGreaterThan(0);
    expect({ failed: run.policies[0]?.summary?.failed, failure: run.policies[0]?.summary?.failure }).toEqual({
      failed: 0,
      failure: null,
    });
  });
});
