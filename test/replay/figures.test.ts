/**
 * What a replay reports beyond the calls the differential test compares: the prefix cache's reads and writes, the
 * cost, the compactions, the identifiers lost then needed again and the user messages removed, on one small run
 * whose every figure is worked out here with the reference counter.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { commonPrefix, costOf, prefixCache } from '../../src/replay/cache.js';
import { replay } from '../../src/replay/index.js';
import type { ReplayPrices } from '../../src/replay/types.js';
import { writeCase } from '../differential/harness.js';
import type { Conversation } from '../helpers/convert.js';
import { approximateCounter, renderHMessage } from '../reference/haystack.js';

const count = approximateCounter();
const big = (word: string): string => Array.from({ length: 300 }, (_, i) => `${word}${i}`).join(' ');

/** A run of five calls: a task naming a file, its read, a second task, its logs, and a return to the file. */
const RUN: Conversation = [
  { role: 'system', text: 'You are a careful agent.' },
  {
    role: 'user',
    texts: ['Always answer in French. Fix the bug described in /srv/app/config.yaml'],
    images: 0,
    files: [],
  },
  {
    role: 'assistant',
    text: null,
    reasoning: null,
    calls: [{ id: 'c1', name: 'read_file', args: { path: '/srv/app/config.yaml' } }],
  },
  {
    role: 'tool',
    callId: 'c1',
    name: 'read_file',
    text: `contents of /srv/app/config.yaml, see https://example.com/spec: ${big('line')}`,
  },
  { role: 'assistant', text: 'I read it.', reasoning: null, calls: [] },
  { role: 'user', texts: ['Now look at the logs instead.'], images: 0, files: [] },
  { role: 'assistant', text: null, reasoning: null, calls: [{ id: 'c2', name: 'run', args: { cmd: 'tail log' } }] },
  { role: 'tool', callId: 'c2', name: 'run', text: `log: ${big('entry')}` },
  { role: 'assistant', text: 'The logs say little.', reasoning: null, calls: [] },
  { role: 'user', texts: ['Go back to /srv/app/config.yaml and fix it.'], images: 0, files: [] },
  { role: 'assistant', text: 'Fixed.', reasoning: null, calls: [] },
];

const written = writeCase('openai', RUN, false);
const view = written.view.messages;

/** Prices that cache any prefix, so every read shows. */
const CACHE_ALL: ReplayPrices = {
  name: 'test',
  currency: 'USD',
  input: 3,
  cacheRead: 0.3,
  cacheWrite: 3.75,
  output: 15,
  minCacheablePrefix: 0,
  source: 'test',
};

const replayed = (prices: ReplayPrices = CACHE_ALL) =>
  replay(written.items, {
    format: 'openai',
    tokenizer: 'approx',
    contextWindow: 1800,
    strategies: ['none', 'window', 'prune'],
    prices,
  });

describe('the prefix cache of a replay', () => {
  it('reads what the previous call sent and its reply, and writes the rest', async () => {
    const none = (await replayed()).policies[0]!;
    expect(none.calls.map((c) => c.message)).toEqual([2, 4, 6, 8, 10]);
    none.calls.forEach((c, k) => {
      expect(c.tokens).toBe(count(view.slice(0, c.message)));
      const read = k === 0 ? 0 : count(view.slice(0, none.calls[k - 1]!.message + 1));
      expect({ k, read: c.cacheRead, write: c.cacheWrite }).toEqual({ k, read, write: c.tokens - read });
      expect(c.output).toBe(count([view[c.message]!]));
    });
  });

  it('after a compaction reads only the prefix the compaction kept (the instructions)', async () => {
    const window = (await replayed()).policies[1]!;
    const call = window.calls[3]!;
    expect(call.compacted).toBe(true);
    expect(call.cacheRead).toBe(count([view[0]!]));
    expect(call.cacheWrite).toBe(call.tokens - call.cacheRead);
  });

  it('reads nothing below the minimum cacheable prefix, and writes nothing for a request below it', async () => {
    const none = (await replayed({ ...CACHE_ALL, minCacheablePrefix: 1000 })).policies[0]!;
    const [, , third, fourth, fifth] = none.calls;
    expect(none.calls.slice(0, 3).map((c) => [c.tokens < 1000, c.cacheRead, c.cacheWrite])).toEqual([
      [true, 0, 0],
      [true, 0, 0],
      [true, 0, 0],
    ]);
    // The fourth request passes 1,000 tokens, but what the third sent and its reply are under 1,000: nothing is read.
    expect(count(view.slice(0, third!.message + 1))).toBeLessThan(1000);
    expect([fourth!.tokens > 1000, fourth!.cacheRead, fourth!.cacheWrite]).toEqual([true, 0, fourth!.tokens]);
    const read = count(view.slice(0, fourth!.message + 1));
    expect(read).toBeGreaterThan(1000);
    expect([fifth!.cacheRead, fifth!.cacheWrite]).toEqual([read, fifth!.tokens - read]);
  });

  it('sums the calls and prices them per million tokens, summaries priced as uncached input and output', async () => {
    const none = (await replayed()).policies[0]!;
    const sum = (f: (c: (typeof none.calls)[number]) => number): number => none.calls.reduce((n, c) => n + f(c), 0);
    expect(none.inputTokens).toBe(sum((c) => c.tokens));
    expect(none.cacheReadTokens).toBe(sum((c) => c.cacheRead));
    expect(none.outputTokens).toBe(sum((c) => c.output));
    const uncached = none.inputTokens - none.cacheReadTokens - none.cacheWriteTokens;
    expect(none.cost.total).toBeCloseTo(
      (uncached * 3 + none.cacheReadTokens * 0.3 + none.cacheWriteTokens * 3.75 + none.outputTokens * 15) / 1e6,
      12,
    );
    const cost = costOf({ input: 1e6, cacheRead: 2e5, cacheWrite: 3e5, output: 1e5 }, CACHE_ALL);
    expect({ ...cost, total: Math.round(cost.total * 1e9) / 1e9 }).toEqual({
      input: 1.5,
      cacheRead: 0.06,
      cacheWrite: 1.125,
      output: 1.5,
      total: 4.185,
    });
  });

  it('equals a model of longest shared prefixes on random requests', () => {
    const texts = fc.array(fc.constantFrom('a', 'bb', 'ccc', 'dddd'), { maxLength: 8 });
    fc.assert(
      fc.property(texts, fc.option(texts, { nil: null }), fc.integer({ min: 0, max: 12 }), (sent, previous, min) => {
        const size = (list: readonly string[]): number => list.join('').length;
        let same = 0;
        // The model: the longest n whose first n texts are equal in both, found by trying every n.
        if (previous !== null)
          for (let n = 0; n <= Math.min(sent.length, previous.length); n++)
            if (JSON.stringify(sent.slice(0, n)) === JSON.stringify(previous.slice(0, n))) same = n;
        const read = size(sent.slice(0, same)) >= min ? size(sent.slice(0, same)) : 0;
        const write = size(sent) >= min ? size(sent) - read : 0;
        expect(
          prefixCache(sent, previous, (n) => size(sent.slice(0, n)), size(sent), { minCacheablePrefix: min }),
        ).toEqual({
          read,
          write,
        });
        if (previous !== null) expect(commonPrefix(sent, previous)).toBe(same);
      }),
    );
  });
});

describe('what a policy loses', () => {
  it('records each compaction with the history before and after it', async () => {
    const run = await replayed();
    const [none, window] = [run.policies[0]!, run.policies[1]!];
    expect(window.compactions).toEqual([
      { call: 3, before: none.calls[3]!.tokens, after: window.calls[3]!.tokens, removed: 4 },
    ]);
    expect(none.compactions).toEqual([]);
  });

  it('lists an identifier a compaction removed that a later message names again, with where it left and came back', async () => {
    const window = (await replayed()).policies[1]!;
    expect(window.lost).toEqual([{ identifier: '/srv/app/config.yaml', kind: 'path', leftAt: 3, neededAt: 9 }]);
    // The URL left with the same compaction, but nothing names it again.
    expect(JSON.stringify(renderHMessage(view[3]!))).toContain('https://example.com/spec');
  });

  it('lists nothing for pruning that leaves the identifier in a kept message', async () => {
    const prune = (await replayed()).policies[2]!;
    expect(prune.compactions).toHaveLength(1);
    expect(prune.lost).toEqual([]);
    expect(prune.removedUserMessages).toEqual([]);
  });

  it('lists the user messages a compaction removed, never its notes', async () => {
    const window = (await replayed()).policies[1]!;
    expect(window.removedUserMessages).toEqual([
      {
        message: 1,
        call: 3,
        preview: '[user] Always answer in French. Fix the bug described in /srv/app/config.yaml',
      },
    ]);
    // A second, tighter replay removes the first note again: it is not listed.
    const tight = await replay(written.items, {
      format: 'openai',
      tokenizer: 'approx',
      contextWindow: 800,
      strategies: ['window'],
      prices: CACHE_ALL,
    });
    const listed = tight.policies[0]!.removedUserMessages.map((r) => r.preview);
    expect(listed.every((p) => !p.includes('earlier messages were removed'))).toBe(true);
    expect(tight.policies[0]!.compactions.length).toBeGreaterThan(1);
  });
});
