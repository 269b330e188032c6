/**
 * A list marked as one that only grows (`growsOnly`, what a warm compactor's normalized conversation is) is analyzed
 * and planned as a fresh copy of it is, at every length it grows to: its turns and task come from the user messages
 * known from earlier calls, the rest of the structure from the messages themselves. A list of 150,000 notes:
 * test/e2e/growing.test.ts.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { planCompaction } from '../../src/core/compact.js';
import { analyze } from '../../src/core/groups.js';
import { growsOnly, knownOf } from '../../src/core/growing.js';
import { lowerBound } from '../../src/core/sorted.js';
import type { Message, Role } from '../../src/core/types.js';
import { createApproxCounter } from '../../src/tokens/approx.js';
import { planOf, structureOf } from '../helpers/plan-data.js';
import { scaled } from '../helpers/scale.js';

const TEMPLATE = 'Older messages went.';

/** A message with the marks adapters set: notes of this run and earlier ones, literal-template texts, weights. */
const messageArb: fc.Arbitrary<Message> = fc
  .record({
    role: fc.constantFrom<Role>('system', 'user', 'user', 'assistant', 'assistant', 'tool', 'tool'),
    mark: fc.constantFrom('none', 'none', 'none', 'none', 'window', 'pruned', 'exact'),
    words: fc.nat({ max: 40 }),
    weight: fc.constantFrom(undefined, undefined, undefined, 0, 2, 5, 0.1, 0.7),
  })
  .map(({ role, mark, words, weight }) => {
    const text = mark === 'exact' ? TEMPLATE : `${role} ${'word '.repeat(words)}`;
    return {
      role,
      ...(mark === 'window' ? { compaction: 'sliding_window' } : {}),
      ...(mark === 'pruned' ? { compaction: 'tool_result_pruning' } : {}),
      ...(mark === 'exact' && role === 'user' ? { exactNote: true } : {}),
      ...(weight === undefined ? {} : { weight }),
      content: { texts: [text], toolCalls: [], results: [], images: 0, files: [] },
    };
  });

describe('a list that only grows', () => {
  it('is analyzed and planned as a copy of it at every length, and its earlier results stay as they were', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(messageArb, { maxLength: 12 }), { minLength: 1, maxLength: 10 }),
        fc.integer({ min: 0, max: 400 }),
        fc.nat({ max: 3 }),
        fc.constantFrom(TEMPLATE, '[{num_removed} went.]', null),
        (batches, target, minKeepSteps, note) => {
          const list: Message[] = [];
          growsOnly(list);
          const earlier: Array<{ plan: ReturnType<typeof planCompaction>; expected: unknown }> = [];
          for (const batch of batches) {
            list.push(...batch);
            const copy = [...list];
            expect(structureOf(list)).toEqual(structureOf(copy));
            const plan = planCompaction(list, createApproxCounter(), { target, minKeepSteps, note });
            earlier.push({ plan, expected: planOf(copy, target, minKeepSteps, note) });
          }
          // Read only now, after the list grew past them.
          for (const { plan, expected } of earlier) expect(JSON.parse(JSON.stringify(plan))).toEqual(expected);
        },
      ),
      { numRuns: scaled(400) },
    );
  });

  it('is forgotten, not trusted, once it is found changed other than by appending', () => {
    const m = (role: Role): Message => ({
      role,
      content: { texts: [role], toolCalls: [], results: [], images: 0, files: [] },
    });
    const list = [m('system'), m('user'), m('assistant')];
    growsOnly(list);
    expect(knownOf(list)?.users).toEqual([1]);
    list.pop();
    list.push(m('user'));
    expect(knownOf(list)).toBeNull();
    expect(analyze(list).task).toBe(2);
  });

  it('finds the first element at least a value in an ascending list', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -50, max: 50 })), fc.integer({ min: -60, max: 60 }), (xs, v) => {
        const sorted = [...xs].sort((a, b) => a - b);
        const k = lowerBound(sorted, v);
        expect(sorted.slice(0, k).every((x) => x < v)).toBe(true);
        expect(sorted.slice(k).every((x) => x >= v)).toBe(true);
      }),
    );
  });
});
