/**
 * Strategies and chains decide with the laziness the window has: counting only what a decision needs, and never
 * deciding otherwise. Every random conversation, in every format, is compacted twice, lazily and with
 * `exhaustive` (every message counted exactly, by every strategy), and everything an output shows must be the same.
 */
import { describe, expect, it } from '@jest/globals';
import {
  compactSource,
  EXACT_COUNT_UP_TO,
  type FileOptions,
  type FileResult,
  type StrategyName,
} from '../../src/pipeline/index.js';
import { sourceFromBytes } from '../../src/io/lines.js';
import { createApproxCounter, createCounter } from '../../src/tokens/index.js';
import { tailNewlineCost } from '../../src/tokens/bpe.js';
import type { Rendered, TokenCounter } from '../../src/core/types.js';
import type { SummaryAnswer, SummaryRequest } from '../../src/core/summarize.js';
import { lazyList } from '../../src/core/lazy-list.js';
import { createRng, FORMAT_NAMES, randomConversation, writeAs, type Conversation } from '../helpers/convert.js';
import { scaled } from '../helpers/scale.js';

const o200k = await createCounter('o200k_base');
const CHAINS: readonly (readonly StrategyName[])[] = [
  ['prune'],
  ['offload'],
  ['prune', 'window'],
  ['offload', 'window'],
  ['prune', 'offload', 'window'],
  ['window', 'prune'],
  ['summarize'],
  ['prune', 'summarize', 'window'],
  ['offload', 'summarize'],
];

/**
 * Replies of a stand-in model, from the request alone (so both ways get the same ones): some short, some longer
 * than what they replace (a round the decision refuses), some empty.
 */
function summaryAnswer(request: SummaryRequest): SummaryAnswer {
  const n = request.user.length;
  if (n % 11 === 0) return { text: '   ' };
  if (n % 7 === 0) return { text: `Long summary: ${request.user}${request.user}` };
  return { text: `The agent read ${n % 97} files and fixed the build.` };
}

/** A conversation whose tool results are long enough to be pruned (some far over the threshold, some under). */
function withLongResults(seed: number): Conversation {
  const rng = createRng(seed * 7 + 1);
  return randomConversation(seed).map((m) =>
    m.role === 'tool' && rng.chance(0.7)
      ? { ...m, text: Array.from({ length: rng.int(1, 12) }, () => m.text).join(rng.pick([' ', '\n', '}, ', '. '])) }
      : m,
  );
}

/** Everything an output shows of a result: bytes, store files, and each conversation's decision and figures. */
function shown(result: FileResult): unknown {
  return {
    output: result.output,
    changed: result.changed,
    stored: result.stored,
    conversations: result.conversations.map((c) => ({
      kept: c.plan.kept,
      removed: c.plan.removed,
      note: c.plan.noteText,
      changed: c.plan.changed,
      tokensAfter: c.plan.tokensAfter,
      targetMet: c.plan.targetMet,
      target: c.target,
      pruned: c.pruned,
      offloaded: c.offloaded,
      summarized:
        c.summarized === undefined
          ? null
          : {
              failure: c.summarized.failure?.reason ?? null,
              rounds: c.summarized.rounds.map((r) => [r.tier, r.replaced, r.text, r.tokensAfter]),
            },
      before: c.outcome.before,
      miss: c.outcome.totals.miss,
      leftBelowTrigger: c.leftBelowTrigger,
    })),
  };
}

async function compactBothWays(
  text: string,
  file: string,
  options: Omit<FileOptions, 'exhaustive'>,
): Promise<{ lazy: unknown; exhaustive: unknown }> {
  // A file a format cannot write fails both ways alike.
  const run = async (exhaustive: boolean): Promise<unknown> => {
    try {
      return shown(await compactSource(sourceFromBytes(Buffer.from(text), file), { ...options, exhaustive }));
    } catch (error) {
      return { error: (error as Error).message };
    }
  };
  return { lazy: await run(false), exhaustive: await run(true) };
}

/**
 * A counter that tells how many texts its measures read (measureApart, which reads only their ends, aside): every
 * read, or (`distinct`) each text once however often its count is looked up again.
 */
function counting(counter: TokenCounter, distinct = false): { counter: TokenCounter; texts: () => number } {
  let reads = 0;
  const seen = new Set<string>();
  return {
    counter: {
      name: counter.name,
      // Counts the texts a measure reads (a count that stops at its limit reads the newest few).
      measure: (messages: readonly Rendered[], limit?: number) =>
        counter.measure(
          lazyList(messages.length, (k) => {
            reads++;
            seen.add((messages[k] as Rendered).text);
            return messages[k] as Rendered;
          }),
          limit,
        ),
      ...(counter.measureApart === undefined ? {} : { measureApart: counter.measureApart.bind(counter) }),
    },
    texts: () => (distinct ? seen.size : reads),
  };
}

describe('strategies decide lazily exactly as when everything is counted', () => {
  const counters: Array<[string, TokenCounter]> = [
    ['o200k', o200k],
    ['approx', createApproxCounter()],
  ];
  for (const [name, counter] of counters) {
    it(`gives the same outputs, plans, summaries and figures for prune, offload, summarize and their chains (${name})`, async () => {
      let lazyPlans = 0;
      for (let seed = 1; seed <= scaled(45); seed++) {
        const conversation = withLongResults(seed);
        const rng = createRng(seed);
        for (const format of FORMAT_NAMES) {
          const written = writeAs(format, conversation, { jsonl: format === 'openai' && rng.chance(0.5) });
          const strategies = CHAINS[seed % CHAINS.length] as readonly StrategyName[];
          const thresholds = rng.chance(0.3);
          const target = rng.int(5, 400);
          const options: Omit<FileOptions, 'exhaustive'> = {
            target,
            counter,
            strategies,
            minTokens: rng.pick([0, 5, 20, 200]),
            minKeepSteps: rng.pick([1, 1, 2]),
            offload: { dir: '/tmp/swc-store', over: rng.pick([10, 60, 200]) },
            summarize: { instruction: 'Summarize.', summaryTokens: rng.pick([5, 40, 200]), answer: summaryAnswer },
            ...(thresholds ? { window: { trigger: target + rng.int(0, 300), target } } : {}),
          };
          let both: { lazy: unknown; exhaustive: unknown };
          try {
            both = await compactBothWays(written.text, written.name, options);
          } catch (error) {
            throw new Error(`seed ${seed}, ${format}, ${strategies.join(',')}: ${(error as Error).message}`, {
              cause: error,
            });
          }
          try {
            expect(both.lazy).toEqual(both.exhaustive);
          } catch (error) {
            throw new Error(
              `seed ${seed}, ${format}, ${strategies.join(',')}, ${JSON.stringify({ ...options, counter: undefined })}\n${(error as Error).message}`,
              { cause: error },
            );
          }
          lazyPlans++;
        }
      }
      expect(lazyPlans).toBe(scaled(45) * FORMAT_NAMES.length);
    });
  }

  it('prunes every candidate without counting them where the whole less every candidate exceeds the target', async () => {
    // Many long results, a target far below what the rest of the conversation costs.
    const conversation: Conversation = [
      { role: 'system', text: 'You are an agent.' },
      ...Array.from({ length: 40 }, (_, k): Conversation => [
        {
          role: 'user',
          texts: [`Question ${k}: ${'why does the build fail on the second run '.repeat(3)}`],
          images: 0,
          files: [],
        },
        { role: 'assistant', text: null, reasoning: null, calls: [{ id: `c${k}`, name: 'run', args: { step: k } }] },
        {
          role: 'tool',
          callId: `c${k}`,
          name: 'run',
          text: `output ${k}: ${'error: the cache was stale; retrying with a clean build directory. '.repeat(40)}`,
        },
        { role: 'assistant', text: 'Fixed.', reasoning: null, calls: [] },
      ]).flat(),
    ];
    const written = writeAs('openai', conversation, { jsonl: true });
    const source = (): ReturnType<typeof sourceFromBytes> => sourceFromBytes(Buffer.from(written.text), written.name);
    const lazy = counting(o200k);
    const exhaustive = counting(o200k);
    const options = { target: 1000, strategies: ['prune', 'window'] as StrategyName[], minTokens: 50 };
    const a = await compactSource(source(), { ...options, counter: lazy.counter });
    const b = await compactSource(source(), { ...options, counter: exhaustive.counter, exhaustive: true });
    // The decision (before an output asks for the exact figure before) counts a few messages, not every one.
    const decided = { lazy: lazy.texts(), exhaustive: exhaustive.texts() };
    expect(decided.lazy).toBeLessThan(decided.exhaustive / 5);
    expect(shown(a)).toEqual(shown(b));
    expect(written.text.length).toBeLessThan(EXACT_COUNT_UP_TO);
    expect(a.conversations[0]?.pruned.length).toBeGreaterThan(0);
  });

  it('summarizes a long conversation counting only what its rounds decide by', async () => {
    const conversation: Conversation = [
      { role: 'system', text: 'You are an agent.' },
      ...Array.from({ length: 60 }, (_, k): Conversation => [
        {
          role: 'user',
          texts: [`Question ${k}: ${'why does the build fail on the second run '.repeat(3)}`],
          images: 0,
          files: [],
        },
        {
          role: 'assistant',
          text: `Answer ${k}: ${'the cache was stale; a clean build fixes it. '.repeat(8)}`,
          reasoning: null,
          calls: [],
        },
      ]).flat(),
    ];
    const written = writeAs('openai', conversation, { jsonl: true });
    const source = (): ReturnType<typeof sourceFromBytes> => sourceFromBytes(Buffer.from(written.text), written.name);
    // How many of the conversation's messages a run counts (each once, however often its count is looked up).
    const lazy = counting(o200k, true);
    const exhaustive = counting(o200k, true);
    const options = {
      target: 600,
      strategies: ['summarize', 'window'] as StrategyName[],
      summarize: {
        instruction: 'Summarize.',
        summaryTokens: 60,
        answer: () => ({ text: 'The agent found a stale cache.' }),
      },
    };
    const a = await compactSource(source(), { ...options, counter: lazy.counter });
    const b = await compactSource(source(), { ...options, counter: exhaustive.counter, exhaustive: true });
    expect(a.conversations[0]?.summarized?.rounds.length).toBeGreaterThan(0);
    expect(a.output).toBe(b.output);
    // The decision counts the newest messages (what a round leaves, until it passes the target), not all 121.
    expect(exhaustive.texts()).toBeGreaterThan(121);
    expect(lazy.texts()).toBeLessThan(30);
  });
});

describe('the newline cost read from the tail after the last letter or digit', () => {
  it('equals counting the text with and without the newline', () => {
    const rng = createRng(99);
    const pieces = [
      'abc',
      ' ',
      '  ',
      '\n',
      '}',
      '"}',
      '.',
      '...',
      ']',
      ')',
      '\t',
      '1',
      '42',
      'é',
      'e\u0301',
      '😀',
      '--',
      '/',
      '\r',
      "'s",
      '中文',
      ' }',
      '\n  ',
    ];
    const count = (t: string): number => o200k.measure([{ text: t, images: 0, files: 0 }]);
    for (let k = 0; k < 3000; k++) {
      const text = Array.from({ length: rng.int(0, 12) }, () => rng.pick(pieces)).join('');
      expect({ text, cost: tailNewlineCost(text, count) }).toEqual({ text, cost: count(`${text}\n`) - count(text) });
    }
  });
});
