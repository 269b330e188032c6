/**
 * At most N summary calls in flight across a whole run: one limiter is made per run and every summarizer of the run
 * is wrapped by it, so files compacted at once share the model's concurrency (--concurrency) instead of each taking
 * their own. Calls wait in the order they were made.
 */
import { UsageError } from '../../errors.js';
import type { Summarizer } from './types.js';

/** Wraps summarizers so they share the limiter's slots. */
export interface Limiter {
  (summarizer: Summarizer): Summarizer;
  /** Calls running now. */
  readonly active: number;
  /** Calls waiting for a slot. */
  readonly waiting: number;
}

/**
 * A limiter with `n` slots.
 * @param n the most calls in flight at once, a whole number from 1
 * @throws UsageError for anything else
 */
export function createLimiter(n: number): Limiter {
  if (!(Number.isInteger(n) && n >= 1))
    throw new UsageError(`the concurrency must be a whole number from 1, not ${String(n)}`);
  let active = 0;
  const queue: Array<() => void> = [];

  /** Takes a slot, waiting for one when all are taken. */
  const acquire = (): Promise<void> => {
    if (active < n) {
      active += 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => queue.push(resolve));
  };
  /** Hands the slot to the next call waiting, or frees it. */
  const release = (): void => {
    const next = queue.shift();
    if (next !== undefined) next();
    else active -= 1;
  };

  const wrap =
    (summarizer: Summarizer): Summarizer =>
    async (request) => {
      await acquire();
      try {
        return await summarizer(request);
      } finally {
        release();
      }
    };
  return Object.defineProperties(wrap, {
    active: { get: () => active },
    waiting: { get: () => queue.length },
  }) as Limiter;
}
