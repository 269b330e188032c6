/**
 * Working out what each compaction of a replay forgot reads the identifiers of every message it kept; a long run
 * compacted at most calls (pruning alone never gets under the trigger) must not extract them again each time. The
 * extraction is spied on, and the texts it reads are counted: nothing is timed.
 */
import { describe, expect, it, jest } from '@jest/globals';
import type { Message } from '../../src/core/types.js';

const real = await import('../../src/core/identifiers/index.js');
const texts = { read: 0 };
/** How many texts a message's extraction reads (its text, its calls' arguments, its results, its files). */
const textsOf = (message: Message): number => {
  const content = typeof message.content === 'function' ? message.content() : message.content;
  return content.texts.length + content.toolCalls.length + content.results.length + content.files.length;
};
const spied: Record<string, unknown> = {
  identifiersOfMessage: (message: Message, visit: never) => {
    texts.read += textsOf(message);
    real.identifiersOfMessage(message, visit);
  },
};
if ('identifiersOfText' in real) {
  const ofText = (real as Record<string, unknown>).identifiersOfText as (...args: unknown[]) => void;
  spied.identifiersOfText = (...args: unknown[]) => {
    texts.read++;
    ofText(...args);
  };
}
jest.unstable_mockModule('../../src/core/identifiers/index.js', () => ({ ...real, ...spied }));
const { hookThresholds } = await import('../../src/core/hook.js');
const { findFormat } = await import('../../src/formats/registry.js');
const { DEFAULT_PRICES } = await import('../../src/replay/prices.js');
const { replaySource } = await import('../../src/replay/run.js');
const { createCounter } = await import('../../src/tokens/index.js');
type FormatAdapter = import('../../src/formats/types.js').FormatAdapter;

/** An OpenAI chat run of `calls` tool calls whose results all name the task's file, which the last message names. */
function runOf(calls: number): unknown[] {
  const items: unknown[] = [
    { role: 'system', content: 'You are a careful agent.' },
    { role: 'user', content: 'Fix the failing test in /srv/app/main.py.' },
  ];
  for (let c = 0; c < calls; c++) {
    const id = `call_${c}`;
    items.push({
      role: 'assistant',
      content: `Step ${c}: reading /srv/lib/m${c}.py.`,
      tool_calls: [
        { id, type: 'function', function: { name: 'read_file', arguments: `{"path":"/srv/lib/m${c}.py"}` } },
      ],
    });
    items.push({
      role: 'tool',
      tool_call_id: id,
      content: `/srv/app/main.py imports /srv/lib/m${c}.py: ${'x = 1\n'.repeat(30)}`,
    });
  }
  items.push({ role: 'user', content: 'Now run /srv/app/main.py again.' });
  items.push({ role: 'assistant', content: 'Done.' });
  return items;
}

/** The texts read for identifiers while replaying a run of `calls` calls under pruning alone, and its compactions. */
async function pruneWork(calls: number): Promise<{ texts: number; compactions: number }> {
  const counter = await createCounter('approx');
  const { trigger, target } = hookThresholds(2000, 0.7, 0.4);
  const items = runOf(calls);
  texts.read = 0;
  const run = await replaySource(
    { file: 'run.json', adapter: findFormat('openai') as FormatAdapter, items, container: null },
    ['prune'],
    {
      contextWindow: 2000,
      compactAt: 0.7,
      compactTo: 0.4,
      trigger,
      target,
      counter,
      prices: DEFAULT_PRICES,
      minTokens: 20,
      summarizer: null,
    },
  );
  return { texts: texts.read, compactions: run.policies[0]!.compactions.length };
}

describe('what the compactions of a long replay forgot', () => {
  it('is worked out from each kept text once, not at every compaction', async () => {
    const short = await pruneWork(100);
    const long = await pruneWork(400);
    // Pruning alone compacts at most calls, and each works out what it forgot.
    expect(long.compactions).toBeGreaterThan(300);
    expect(short.texts).toBeGreaterThan(0);
    // Quadratic work would be about sixteen times as much.
    expect(long.texts / short.texts).toBeLessThan(5);
  });
});
