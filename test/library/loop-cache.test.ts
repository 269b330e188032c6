import { describe, expect, it } from '@jest/globals';
import { createCompactor } from '../../src/library/index.js';
import { createBpeCounter } from '../../src/tokens/bpe.js';

/** A BPE counter over an encoding that records every text it is asked to count (about 4 characters per token). */
function spyCounter(): { counter: ReturnType<typeof createBpeCounter>; texts: string[] } {
  const texts: string[] = [];
  const encoding = {
    countTokens(text: string): number {
      texts.push(text);
      return Math.ceil(text.length / 4);
    },
  };
  return { counter: createBpeCounter('spy', encoding, null), texts };
}

/** An agent's conversation: a task, then steps of a call and its result, each text ending in its own marker. */
function conversation(steps: number, tag: string): object[] {
  const out: object[] = [{ role: 'user', content: `Find the weather ${tag}user` }];
  for (let s = 0; s < steps; s++) {
    out.push({
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: `c${tag}${s}`, type: 'function', function: { name: 'search', arguments: `{"q": "${tag}call${s}"}` } },
      ],
    });
    out.push({
      role: 'tool',
      tool_call_id: `c${tag}${s}`,
      content: `result text ${'word '.repeat(20)}${tag}result${s}`,
    });
  }
  return out;
}

describe('a compactor in an agent loop', () => {
  it('does not count a message again when the same object comes back in a grown conversation', async () => {
    const { counter, texts } = spyCounter();
    const compactor = await createCompactor({ format: 'openai', target: 100_000, counter });
    const first = conversation(10, 'old');
    expect((await compactor.compact(first)).changed).toBe(false);
    expect(texts.some((t) => t.includes('old'))).toBe(true);
    texts.length = 0;
    const step = [
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'cn', type: 'function', function: { name: 'search', arguments: '{"q": "newcall"}' } }],
      },
      { role: 'tool', tool_call_id: 'cn', content: 'fresh result newresult' },
    ];
    await compactor.compact([...first, ...step]);
    expect(texts.length).toBeGreaterThan(0);
    expect(texts.filter((t) => t.includes('old'))).toEqual([]);
  });

  it('still counts everything again in a new compactor (the memory is per compactor)', async () => {
    const { counter, texts } = spyCounter();
    const messages = conversation(3, 'old');
    await (await createCompactor({ format: 'openai', target: 100_000, counter })).compact(messages);
    const once = texts.length;
    texts.length = 0;
    await (await createCompactor({ format: 'openai', target: 100_000, counter })).compact(messages);
    // The counter itself remembers counts per rendered object, and a new compactor renders afresh.
    expect(texts.length).toBe(once);
  });

  it('compacts a growing conversation step after step as a fresh compaction of each would', async () => {
    const compactor = await createCompactor({ format: 'openai', target: 400, tokenizer: 'approx' });
    const all = conversation(30, 'x');
    for (let n = 3; n <= all.length; n += 2) {
      const messages = all.slice(0, n);
      const fresh = await createCompactor({ format: 'openai', target: 400, tokenizer: 'approx' });
      expect((await compactor.compact(messages)).plan).toEqual((await fresh.compact(messages)).plan);
    }
  });
});
