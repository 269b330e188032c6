import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createCompactor } from '../../src/library.js';
import { ROOT } from '../helpers/cli.js';

/** Real τ-bench airline trajectories (OpenAI chat), each a task with tool calls and JSON results. */
const RECORDS = JSON.parse(readFileSync(path.join(ROOT, 'fixtures/real/openai-chat/taubench-gpt-4o-airline.json'), 'utf8')) as Array<{ traj: Array<{ role: string }> }>;

/** One long conversation of several trajectories: the first one's instructions, then every task after another. */
function conversation(records: number): object[] {
  const picked = RECORDS.slice(0, records);
  return [picked[0]?.traj[0] as object, ...picked.flatMap((r) => r.traj.filter((m) => m.role !== 'system'))];
}

/** The estimate is held within this share of the true count (measured: within 2.1% on these conversations). */
const TOLERANCE = 0.05;

describe('plan.tokensBefore of a conversation the decision stopped counting early', () => {
  it.each([
    ['about 10,000 tokens', 2, 1_000],
    ['about 80,000 tokens, whose removed part is estimated from a sample', 30, 2_000],
  ])('is an estimate of the whole within 5%% of the true count, flagged as one (%s)', async (_, records, target) => {
    const messages = conversation(records);
    const exact = (await createCompactor({ target: 10_000_000 })).compact(messages).plan;
    expect(exact.tokensBeforeExact).toBe(true);
    const { plan } = (await createCompactor({ target })).compact(messages);
    expect(plan.changed).toBe(true);
    expect(plan.tokensBeforeExact).toBe(false);
    // The part counted before stopping would be just over the target.
    expect(exact.tokensBefore).toBeGreaterThan(target * 5);
    expect(Math.abs(plan.tokensBefore - exact.tokensBefore)).toBeLessThanOrEqual(exact.tokensBefore * TOLERANCE);
    expect(plan.tokensBefore).toBeGreaterThan(plan.tokensAfter);
  });

  it('stays the exact count where the decision counted everything', async () => {
    const messages = conversation(1);
    const whole = (await createCompactor({ target: 10_000_000 })).compact(messages).plan.tokensBefore;
    expect((await createCompactor({ target: whole })).compact(messages).plan).toMatchObject({ tokensBefore: whole, tokensBeforeExact: true, changed: false });
  });

  it('is estimated with window thresholds, and exact or estimated in a chain', async () => {
    const messages = conversation(2);
    const exact = (await createCompactor({ target: 10_000_000 })).compact(messages).plan.tokensBefore;
    const windowed = (await createCompactor({ contextWindow: 4_000 })).compact(messages).plan;
    expect(windowed.tokensBeforeExact).toBe(false);
    expect(Math.abs(windowed.tokensBefore - exact)).toBeLessThanOrEqual(exact * TOLERANCE);
    for (const strategy of ['prune,window', 'window,prune']) {
      const { plan } = (await createCompactor({ target: 1_000, strategy })).compact(messages);
      expect(Math.abs(plan.tokensBefore - exact)).toBeLessThanOrEqual(exact * TOLERANCE);
    }
  });
});
