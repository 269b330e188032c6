/**
 * The concurrency limit: at most N calls in flight across every summarizer it wraps, as the server sees them, and
 * every call still made, in the order it was asked.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { UsageError } from '../../../src/errors.js';
import { withCache } from '../../../src/io/model/cache.js';
import { createEndpointSummarizer } from '../../../src/io/model/endpoint.js';
import { createLimiter } from '../../../src/io/model/limit.js';
import type { SummaryReply, Summarizer } from '../../../src/io/model/types.js';
import { tempDir } from '../../helpers/cli.js';
import { startOpenAiServer, type OpenAiServer } from '../../helpers/openai-server.js';
import { scaled } from '../../helpers/scale.js';

let server: OpenAiServer;
beforeAll(async () => {
  server = await startOpenAiServer();
});
afterAll(async () => {
  await server.close();
});

/** A promise the test settles when it chooses. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = (): void => undefined;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** Lets pending I/O and promise callbacks run until `done` holds (bounded, so a bug fails instead of hanging). */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 10_000 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 1));
  expect(done()).toBe(true);
}

describe('the concurrency limit', () => {
  it('lets at most N requests reach the server at once, across summarizers sharing the limiter', async () => {
    server.reset();
    const gate = deferred();
    const calls = 20;
    server.script(...Array.from({ length: calls }, () => ({ kind: 'wait', until: gate.promise }) as const));
    const limit = createLimiter(3);
    const a = limit(createEndpointSummarizer({ baseUrl: server.url, model: 'a' }));
    const b = limit(createEndpointSummarizer({ baseUrl: server.url, model: 'b' }));
    const replies = Array.from({ length: calls }, (_, i) => (i % 2 === 0 ? a : b)({ system: 's', user: `u${i}` }));
    await until(() => server.inFlight === 3);
    expect(server.requests).toHaveLength(3);
    expect(limit.active).toBe(3);
    expect(limit.waiting).toBe(calls - 3);
    gate.resolve();
    const done = await Promise.all(replies);
    expect(done).toHaveLength(calls);
    expect(server.requests).toHaveLength(calls);
    expect(server.maxInFlight).toBe(3);
    expect(limit.active).toBe(0);
  });

  it('runs calls in the order they were asked, never more than N at once, whatever order they finish in', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 0, max: 15 }),
        fc.infiniteStream(fc.nat()),
        async (n, count, picks) => {
          const limit = createLimiter(n);
          const started: number[] = [];
          const running: Array<{ index: number; finish: () => void }> = [];
          let peak = 0;
          const summarize = limit(async ({ user }) => {
            const index = Number(user);
            started.push(index);
            const gate = deferred();
            running.push({ index, finish: gate.resolve });
            peak = Math.max(peak, running.length);
            await gate.promise;
            return { text: user };
          });
          const calls: Array<Promise<SummaryReply>> = [];
          for (let i = 0; i < count; i++) calls.push(summarize({ system: '', user: String(i) }));
          const pick = picks[Symbol.iterator]();
          for (let finished = 0; finished < count; finished++) {
            await until(() => running.length === Math.min(n, count - finished));
            const [one] = running.splice((pick.next().value as number) % running.length, 1);
            one?.finish();
          }
          const texts = (await Promise.all(calls)).map((r) => r.text);
          expect(texts).toEqual(Array.from({ length: count }, (_, i) => String(i)));
          expect(started).toEqual(Array.from({ length: count }, (_, i) => i));
          expect(peak).toBe(Math.min(n, count));
        },
      ),
      { numRuns: scaled(40) },
    );
  });

  it('frees the slot of a call that failed', async () => {
    const limit = createLimiter(1);
    const failing: Summarizer = async () => {
      throw new Error('no');
    };
    await expect(limit(failing)({ system: '', user: '' })).rejects.toThrow('no');
    expect((await limit(async () => ({ text: 'next' }))({ system: '', user: '' })).text).toBe('next');
    expect(limit.active).toBe(0);
  });

  it('does not hold a slot for a cache hit when the cache wraps the limited summarizer', async () => {
    const dir = tempDir();
    const limit = createLimiter(1);
    let calls = 0;
    const cached = withCache(
      limit(async () => {
        calls += 1;
        return { text: 'x' };
      }),
      { dir, model: 'm' },
    );
    await cached({ system: '', user: 'p' });
    const gate = deferred();
    const busy = limit(async () => {
      await gate.promise;
      return { text: 'busy' };
    })({ system: '', user: '' });
    // The one slot is taken; a hit still answers.
    expect((await cached({ system: '', user: 'p' })).cached).toBe(true);
    gate.resolve();
    await busy;
    expect(calls).toBe(1);
  });

  it.each([0, -1, 1.5, Number.NaN])('refuses a limit of %p', (n) => {
    expect(() => createLimiter(n)).toThrow(UsageError);
  });
});
