/**
 * Pruning alone, replayed past the point where it cannot keep the history under the trigger (every call then
 * compacts), costs what the run's new messages cost: what a compaction read of a message (its rendering, whether it
 * may be pruned) is not read again at the next, though the compactor reads the pruned history as a new list. Nothing
 * is timed: the messages whose content is read are counted, and the decisions are those of a cold compaction.
 */
import { describe, expect, it, jest } from '@jest/globals';
import fc from 'fast-check';
import { hookThresholds } from '../../src/core/hook.js';
import { findFormat } from '../../src/formats/registry.js';
import type { FormatAdapter, Normalized } from '../../src/formats/types.js';
import { createCompactor } from '../../src/library/index.js';
import { DEFAULT_PRICES } from '../../src/replay/prices.js';
import { replaySource } from '../../src/replay/run.js';
import { createCounter } from '../../src/tokens/index.js';
import { scaled } from '../helpers/scale.js';

/** A long placeholder: once the old results hold it, they outweigh the calls, as ~1,000-character results' do. */
const PLACEHOLDER = `[Result of {tool_name} dropped. ${'Read it again if it matters. '.repeat(12)}]`;

/** An OpenAI chat run of `calls` short read calls, each answered by a long result. */
function runOf(calls: number): unknown[] {
  const items: unknown[] = [
    { role: 'system', content: 'sys' },
    { role: 'user', content: 'do the thing' },
  ];
  for (let c = 0; c < calls; c++) {
    const id = `c${c}`;
    items.push({
      role: 'assistant',
      content: null,
      tool_calls: [{ id, type: 'function', function: { name: 'read', arguments: `{"path":"f${c}"}` } }],
    });
    items.push({ role: 'tool', tool_call_id: id, content: `line of output ${c} `.repeat(100) });
  }
  items.push({ role: 'assistant', content: 'done' });
  return items;
}

/**
 * Replays `prune` over a run of `calls` calls; counts the messages whose content is read (what rendering a message or
 * testing its results costs: a format's content is parsed from its item when read).
 */
async function replayCounting(calls: number) {
  const openai = findFormat('openai') as FormatAdapter;
  let reads = 0;
  const counted = (normalized: Normalized): Normalized => {
    for (const message of normalized.messages) {
      if (Object.prototype.hasOwnProperty.call(message, 'content') || typeof message.content !== 'function') continue;
      const content = message.content.bind(message);
      Object.defineProperty(message, 'content', {
        value: () => {
          reads++;
          return content();
        },
      });
    }
    const more = normalized.more;
    if (more !== undefined)
      Object.defineProperty(normalized, 'more', { value: (input: never) => counted(more(input)) });
    return normalized;
  };
  const normalize = openai.normalize.bind(openai);
  // The registry's adapter, spied on in place: the replay's history and its compactor both read through it.
  const spy = jest
    .spyOn(openai, 'normalize')
    .mockImplementation((input, template) => counted(normalize(input, template)));
  const { trigger, target } = hookThresholds(4000, 0.7, 0.4);
  try {
    const run = await replaySource(
      { file: 'run.json', adapter: openai, items: runOf(calls), container: null },
      ['prune'],
      {
        contextWindow: 4000,
        compactAt: 0.7,
        compactTo: 0.4,
        trigger,
        target,
        counter: await createCounter('approx'),
        placeholder: PLACEHOLDER,
        prices: DEFAULT_PRICES,
        summarizer: null,
      },
    );
    return { policy: run.policies[0]!, reads };
  } finally {
    spy.mockRestore();
  }
}

describe('replaying pruning that cannot keep the history under the trigger', () => {
  it('compacts at almost every call, and four times the calls read about four times the contents', async () => {
    const short = await replayCounting(80);
    const long = await replayCounting(320);
    // Not vacuous: from some call on, pruning alone leaves the history over the trigger, so every call compacts.
    expect(long.policy.compactions.length).toBeGreaterThan(280);
    expect(long.policy.compactions.at(-1)!.after).toBeGreaterThan(hookThresholds(4000, 0.7, 0.4).trigger);
    // Reading the whole history at each compaction would be about sixteen times as much.
    expect(long.reads / short.reads).toBeLessThan(4.5);
  });
});

describe('a warm compactor that prunes at every call', () => {
  it('keeps and prunes what a cold compactor does at each call, whatever the results and the target', async () => {
    const counter = await createCounter('approx');
    let pruned = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ lines: fc.integer({ min: 0, max: 120 }), error: fc.boolean() }), {
          minLength: 20,
          maxLength: 60,
        }),
        fc.integer({ min: 600, max: 3000 }),
        fc.constantFrom('prune', 'prune,window'),
        async (steps, window, strategy) => {
          const options = {
            format: 'openai' as const,
            contextWindow: window,
            strategy,
            counter,
            minTokens: 20,
            placeholder: PLACEHOLDER,
          };
          const warm = await createCompactor(options);
          let history: unknown[] = [{ role: 'user', content: 'do the thing' }];
          for (const [c, step] of steps.entries()) {
            const id = `c${c}`;
            history.push({
              role: 'assistant',
              content: null,
              tool_calls: [{ id, type: 'function', function: { name: 'read', arguments: `{"n":${c}}` } }],
            });
            history.push({
              role: 'tool',
              tool_call_id: id,
              content: `${step.error ? 'error: ' : ''}${`line ${c} `.repeat(step.lines)}`,
            });
            const done = await warm.compact(history);
            const cold = await (await createCompactor(options)).compact(structuredClone(history));
            expect(done.messages).toEqual(cold.messages);
            expect(done.plan.kept).toEqual(cold.plan.kept);
            expect(done.figures).toEqual(cold.figures);
            if (done.plan.tokensAfter < done.plan.tokensBefore && done.plan.removed.length === 0) pruned++;
            history = [...done.messages];
          }
        },
      ),
      { numRuns: scaled(60) },
    );
    // Not vacuous: most runs prune at many of their calls.
    expect(pruned).toBeGreaterThan(scaled(60) * 5);
  });
});
