/**
 * A list that only grows (`growsOnly`) and is longer than a call takes arguments is analyzed and planned as a copy of
 * it: 150,000 notes, several seconds, so not in the development loop (the rest: test/core/growing.test.ts).
 */
import { describe, expect, it } from '@jest/globals';
import { growsOnly } from '../../src/core/growing.js';
import type { Message, Role } from '../../src/core/types.js';
import { planOf, structureOf } from '../helpers/plan-data.js';

const TEMPLATE = 'Older messages went.';

describe('a list that only grows', () => {
  it('takes a run of notes longer than a call takes arguments, as a copy of it', () => {
    const m = (role: Role, exactNote = false): Message => ({
      role,
      ...(exactNote ? { exactNote } : {}),
      content: { texts: [exactNote ? TEMPLATE : role], toolCalls: [], results: [], images: 0, files: [] },
    });
    const list = [m('system'), ...Array.from({ length: 150_000 }, () => m('user', true)), m('user'), m('assistant')];
    growsOnly(list);
    const copy = [...list];
    expect(structureOf(list)).toEqual(structureOf(copy));
    expect(planOf(list, 50, 1, TEMPLATE)).toEqual(planOf(copy, 50, 1, TEMPLATE));
  });
});
