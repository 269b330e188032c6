/**
 * A replay costs what its run's new messages cost: the work it does (items the format reads, messages the counter is
 * asked to count) grows with the run's length, not with its square, for `none` and for a compacting policy. Nothing is
 * timed: the work is counted. And counting a grown history from its new messages gives the very figures counting it
 * whole gives.
 */
import { describe, expect, it, jest } from '@jest/globals';
import fc from 'fast-check';
import { hookThresholds } from '../../src/core/hook.js';
import type { Rendered, TokenCounter } from '../../src/core/types.js';
import { findFormat } from '../../src/formats/registry.js';
import type { FormatAdapter, Normalized } from '../../src/formats/types.js';
import { DEFAULT_PRICES } from '../../src/replay/prices.js';
import { replaySource, type ReplaySettings } from '../../src/replay/run.js';
import { prefixSumsOf } from '../../src/tokens/approx.js';
import { createCounter } from '../../src/tokens/index.js';

/** An OpenAI chat run of `calls` LLM calls: a task, then tool steps, a new task every tenth call. */
function runOf(calls: number, lines = 20): unknown[] {
  const items: unknown[] = [
    { role: 'system', content: 'You are a careful agent.' },
    { role: 'user', content: 'Fix the failing test in src/app.py.' },
  ];
  for (let c = 0; c < calls; c++) {
    const id = `call_${c}`;
    items.push({
      role: 'assistant',
      content: `Step ${c}: reading the next file.`,
      tool_calls: [{ id, type: 'function', function: { name: 'read_file', arguments: `{"path":"src/m${c}.py"}` } }],
    });
    items.push({ role: 'tool', tool_call_id: id, content: `contents of src/m${c}.py: ${'x = 1\n'.repeat(lines)}` });
    if (c % 10 === 9) items.push({ role: 'user', content: `Now look at module ${c}.` });
  }
  return items;
}

/** Work done: items the format read, messages the counter was asked to count. */
interface Work {
  items: number;
  messages: number;
}

/** A counter of `rate` tokens a message and `overhead` a group (its counts add up message by message), counting work. */
function countingCounter(work: Work, rate = 10, overhead = 3): TokenCounter {
  return {
    name: 'counting',
    measure(messages: readonly Rendered[]) {
      work.messages += messages.length;
      return messages.length === 0 ? 0 : messages.length * rate + overhead;
    },
  };
}

/** The same run as `runOf`, as Anthropic messages: tool calls as `tool_use` blocks, results as `tool_result` ones. */
function anthropicRunOf(calls: number, lines = 20): unknown[] {
  const items: unknown[] = [{ role: 'user', content: 'Fix the failing test in src/app.py.' }];
  for (let c = 0; c < calls; c++) {
    const id = `toolu_${c}`;
    items.push({
      role: 'assistant',
      content: [
        { type: 'text', text: `Step ${c}: reading the next file.` },
        { type: 'tool_use', id, name: 'read_file', input: { path: `src/m${c}.py` } },
      ],
    });
    const result = {
      type: 'tool_result',
      tool_use_id: id,
      content: `contents of src/m${c}.py: ${'x = 1\n'.repeat(lines)}`,
    };
    items.push({
      role: 'user',
      content: c % 10 === 9 ? [result, { type: 'text', text: `Now look at module ${c}.` }] : [result],
    });
  }
  return items;
}

/** The same run as `runOf`, as Gemini contents: calls as `functionCall` parts, results as `functionResponse` ones. */
function geminiRunOf(calls: number, lines = 20): unknown[] {
  const items: unknown[] = [{ role: 'user', parts: [{ text: 'Fix the failing test in src/app.py.' }] }];
  for (let c = 0; c < calls; c++) {
    const id = `call_${c}`;
    items.push({
      role: 'model',
      parts: [
        { text: `Step ${c}: reading the next file.` },
        { functionCall: { id, name: 'read_file', args: { path: `src/m${c}.py` } } },
      ],
    });
    const result = {
      functionResponse: {
        id,
        name: 'read_file',
        response: { output: `contents of src/m${c}.py: ${'x = 1\n'.repeat(lines)}` },
      },
    };
    items.push({ role: 'user', parts: c % 10 === 9 ? [result, { text: `Now look at module ${c}.` }] : [result] });
  }
  return items;
}

/** The same run as `runOf`, as Haystack chat messages: calls as `tool_call` parts, results as `tool_call_result`. */
function haystackRunOf(calls: number, lines = 20): unknown[] {
  const items: unknown[] = [{ role: 'user', content: [{ text: 'Fix the failing test in src/app.py.' }] }];
  for (let c = 0; c < calls; c++) {
    const origin = { id: `call_${c}`, tool_name: 'read_file', arguments: { path: `src/m${c}.py` } };
    items.push({ role: 'assistant', content: [{ text: `Step ${c}: reading the next file.` }, { tool_call: origin }] });
    const result = `contents of src/m${c}.py: ${'x = 1\n'.repeat(lines)}`;
    items.push({ role: 'tool', content: [{ tool_call_result: { result, origin, error: false } }] });
    if (c % 10 === 9) items.push({ role: 'user', content: [{ text: `Now look at module ${c}.` }] });
  }
  return items;
}

/** A format's adapter (OpenAI chat unless named), counting the items each normalization (whole, or continued) reads. */
function countingAdapter(work: Work, format = 'openai'): FormatAdapter {
  const openai = findFormat(format) as FormatAdapter;
  const counted = (normalized: Normalized, read: number): Normalized => {
    const more = normalized.more;
    return Object.defineProperties(
      {},
      {
        messages: { get: () => normalized.messages },
        itemsOf: { get: () => normalized.itemsOf },
        more: {
          value:
            more === undefined
              ? undefined
              : (input: { items: readonly unknown[] }) => {
                  work.items += input.items.length - read;
                  return counted(more(input as never), input.items.length);
                },
        },
      },
    ) as Normalized;
  };
  return {
    ...openai,
    normalize(input, template) {
      work.items += input.items.length;
      return counted(openai.normalize(input, template), input.items.length);
    },
  };
}

/** The work of replaying a run of `calls` calls under a policy, with a window of `window` tokens. */
async function workOf(calls: number, strategy: string, window: number, format = 'openai'): Promise<Work> {
  const work: Work = { items: 0, messages: 0 };
  const { trigger, target } = hookThresholds(window, 0.7, 0.4);
  const settings: ReplaySettings = {
    contextWindow: window,
    compactAt: 0.7,
    compactTo: 0.4,
    trigger,
    target,
    counter: countingCounter(work),
    sumsMessages: true,
    prices: DEFAULT_PRICES,
    summarizer: null,
  };
  const runs: Record<string, (calls: number) => unknown[]> = {
    anthropic: anthropicRunOf,
    gemini: geminiRunOf,
    haystack: haystackRunOf,
  };
  const items = (runs[format] ?? runOf)(calls);
  const source = { file: 'run.json', adapter: countingAdapter(work, format), items, container: null };
  const run = await replaySource(source, [strategy], settings);
  expect(run.policies[0]!.calls).toHaveLength(calls);
  if (strategy !== 'none') expect(run.policies[0]!.compactions.length).toBeGreaterThan(calls / 20);
  return work;
}

describe('a replay is linear in the length of the run', () => {
  it.each([
    ['none', 1_000_000, 'openai'],
    ['window', 400, 'openai'],
    ['none', 1_000_000, 'anthropic'],
    ['window', 400, 'anthropic'],
    ['none', 1_000_000, 'gemini'],
    ['window', 400, 'gemini'],
    ['none', 1_000_000, 'haystack'],
    ['window', 400, 'haystack'],
  ])(
    'under %s with a window of %d, in %s: four times the calls read and count about four times as much',
    async (strategy, window, format) => {
      const short = await workOf(100, strategy, window, format);
      const long = await workOf(400, strategy, window, format);
      // Quadratic work would be sixteen times as much.
      expect(long.items / short.items).toBeLessThan(4.5);
      expect(long.messages / short.messages).toBeLessThan(4.5);
    },
  );
});

describe('counting a grown history from its new messages', () => {
  it('gives the figures counting it whole gives, with the BPE counter, for every policy', async () => {
    const counter = await createCounter('o200k_base');
    const items = runOf(60, 100);
    const replayWith = async (sumsMessages: boolean) => {
      const { trigger, target } = hookThresholds(8000, 0.7, 0.4);
      return replaySource(
        { file: 'run.json', adapter: findFormat('openai') as FormatAdapter, items, container: null },
        ['none', 'window', 'prune', 'prune,window'],
        {
          contextWindow: 8000,
          compactAt: 0.7,
          compactTo: 0.4,
          trigger,
          target,
          counter,
          sumsMessages,
          prices: { ...DEFAULT_PRICES, minCacheablePrefix: 100 },
          summarizer: null,
        },
      );
    };
    const grown = await replayWith(true);
    expect(grown.policies.map((p) => [p.strategy, p.compactions.length > 0])).toEqual([
      ['none', false],
      ['window', true],
      ['prune', true],
      ['prune,window', true],
    ]);
    expect(grown).toEqual(await replayWith(false));
  });
});

describe('what a compaction lost that a later message needs', () => {
  /** Tool results each naming one file; the last task names two of them again, one of which the first task names. */
  function runNaming(): unknown[] {
    const items: unknown[] = [
      { role: 'system', content: 'You are a careful agent.' },
      { role: 'user', content: 'Read the modules, starting with /srv/lib/m2.py.' },
    ];
    for (let c = 0; c < 12; c++) {
      const id = `call_${c}`;
      items.push({
        role: 'assistant',
        content: null,
        tool_calls: [{ id, type: 'function', function: { name: 'read_file', arguments: '{}' } }],
      });
      items.push({ role: 'tool', tool_call_id: id, content: `/srv/lib/m${c}.py holds ${'x = 1\n'.repeat(100)}` });
    }
    items.push({ role: 'user', content: 'Fix /srv/lib/m0.py and /srv/lib/m2.py.' });
    items.push({ role: 'assistant', content: 'Done.' });
    return items;
  }

  it.each(['prune', 'window'])('is listed under %s, and what a kept message still names is not', async (strategy) => {
    const counter = await createCounter('approx');
    const { trigger, target } = hookThresholds(1500, 0.7, 0.4);
    const run = await replaySource(
      { file: 'run.json', adapter: findFormat('openai') as FormatAdapter, items: runNaming(), container: null },
      [strategy],
      {
        contextWindow: 1500,
        compactAt: 0.7,
        compactTo: 0.4,
        trigger,
        target,
        counter,
        prices: DEFAULT_PRICES,
        minTokens: 50,
        summarizer: null,
      },
    );
    const lost = run.policies[0]!.lost;
    expect(run.policies[0]!.compactions.length).toBeGreaterThan(0);
    expect(lost.map((l) => [l.identifier, l.neededAt])).toEqual([['/srv/lib/m0.py', 26]]);
  });
});

describe('an approx count of a grown history', () => {
  /** The replay of a run of `calls` calls with an approx counter (or a wrapper of it), and what it was asked to count. */
  async function approxReplay(calls: number, strategies: string[], wrapped = false) {
    const approx = await createCounter('approx');
    let messages = 0;
    const measure = approx.measure.bind(approx);
    // Spied on in place: the counter stays the one the replay recognises as approx.
    jest.spyOn(approx, 'measure').mockImplementation((list, limit) => {
      messages += list.length;
      return measure(list, limit);
    });
    const counter: TokenCounter = wrapped
      ? { name: approx.name, measure: (list, limit) => approx.measure(list, limit) }
      : approx;
    const { trigger, target } = hookThresholds(4000, 0.7, 0.4);
    const run = await replaySource(
      { file: 'run.json', adapter: findFormat('openai') as FormatAdapter, items: runOf(calls), container: null },
      strategies,
      {
        contextWindow: 4000,
        compactAt: 0.7,
        compactTo: 0.4,
        trigger,
        target,
        counter,
        prices: { ...DEFAULT_PRICES, minCacheablePrefix: 100 },
        minTokens: 20,
        summarizer: null,
      },
    );
    return { run, messages };
  }

  it('is worked out from running sums: four times the calls count about four times as many messages', async () => {
    const short = await approxReplay(100, ['none']);
    const long = await approxReplay(400, ['none']);
    expect(long.messages / short.messages).toBeLessThan(4.5);
  });

  it('gives the figures counting it whole gives, for every policy', async () => {
    const strategies = ['none', 'window', 'prune', 'prune,window'];
    const summed = await approxReplay(80, strategies);
    expect(summed.run.policies.every((p) => p.strategy === 'none' || p.compactions.length > 0)).toBe(true);
    expect(summed.run).toEqual((await approxReplay(80, strategies, true)).run);
  });
});

describe("an approx counter's prefix sums", () => {
  it("give every list's count as measuring it does, for any texts, images, files and rate", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ text: fc.string({ unit: 'grapheme' }), images: fc.nat(3), files: fc.nat(2) }), {
          maxLength: 12,
        }),
        fc.constantFrom(1, 3, 3.5, 4, 7.25),
        async (list, charsPerToken) => {
          const counter = await createCounter('approx', { charsPerToken });
          const sums = prefixSumsOf(counter)!;
          const chars = list.reduce((n, r) => n + sums.lengthOf(r), 0);
          const flat = list.reduce((n, r) => n + sums.flatOf(r), 0);
          expect(sums.countOf(chars, flat, list.length)).toBe(counter.measure(list));
        },
      ),
    );
  });
});
