/**
 * The pairing rules on their own: calls and results as an adapter reports them, messages as the normalized
 * conversation has them, and where items start given by the caller.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { textContent } from '../../src/core/render.js';
import type { Message } from '../../src/core/types.js';
import type { Pairing } from '../../src/formats/types.js';
import { checkPairing } from '../../src/lint/pairing.js';
import { scaled } from '../helpers/scale.js';

const msg = (role: Message['role']): Message => ({ role, content: textContent('x') });

// Messages: 0 user, 1 assistant (calls), 2 tool, 3 tool, 4 assistant, 5 tool; item k is message k, on line k + 1.
const messages: Message[] = [msg('user'), msg('assistant'), msg('tool'), msg('tool'), msg('assistant'), msg('tool')];
const check = (pairing: Pairing, messageOf: (item: number) => number | null = (item) => item) =>
  checkPairing(pairing, messageOf, messages, (item) => item + 1);

describe('checkPairing', () => {
  it('accepts results in any order in the tool messages right after the calling message', () => {
    const pairing: Pairing = {
      calls: [
        { item: 1, id: 'a', name: 'search' },
        { item: 1, id: 'b', name: 'read' },
      ],
      results: [
        { item: 3, id: 'a', name: '' },
        { item: 2, id: 'b', name: '' },
      ],
    };
    expect(check(pairing)).toEqual([]);
  });

  it('accepts a result in the calling message itself (server tools)', () => {
    expect(
      check({ calls: [{ item: 1, id: 'a', name: 'web_search' }], results: [{ item: 1, id: 'a', name: '' }] }),
    ).toEqual([]);
  });

  it('never lets a result answer a call that comes after it', () => {
    const pairing: Pairing = {
      calls: [{ item: 3, id: 'a', name: 'search', turn: 't' }],
      results: [{ item: 2, id: 'a', name: '', turn: 't' }],
    };
    expect(check(pairing)).toEqual([
      {
        kind: 'orphan-result',
        rule: 'result-not-after-call',
        item: 2,
        text: 'result for call id "a" is not right after its call (line 4)',
      },
      {
        kind: 'missing-result',
        rule: 'result-not-after-call',
        item: 3,
        text: 'tool call "a" (search) has no result right after it',
      },
    ]);
  });

  it('lets a result without an id answer a call with one only where the adapter says ids are optional', () => {
    const pairing: Pairing = {
      calls: [{ item: 1, id: 'a', name: 'search' }],
      results: [{ item: 2, id: null, name: 'search' }],
    };
    expect(check({ ...pairing, idsOptional: true })).toEqual([]);
    expect(check(pairing)).toEqual([
      {
        kind: 'orphan-result',
        rule: 'orphan-result',
        item: 2,
        text: 'result of search (no call id) answers no call right before it',
      },
      { kind: 'missing-result', rule: 'missing-result', item: 1, text: 'tool call "a" (search) has no result' },
    ]);
  });

  it('pairs by the adapter’s own turn when it names one, wherever the messages are', () => {
    const pairing: Pairing = {
      calls: [{ item: 1, id: 'a', name: 'task', turn: 'side-1' }],
      results: [{ item: 5, id: 'a', name: '', turn: 'side-1' }],
    };
    expect(check(pairing)).toEqual([]);
    expect(check({ ...pairing, results: [{ item: 2, id: 'a', name: '', turn: 'side-2' }] })).toEqual([
      {
        kind: 'orphan-result',
        rule: 'result-not-after-call',
        item: 2,
        text: 'result for call id "a" is not right after its call (line 2)',
      },
      {
        kind: 'missing-result',
        rule: 'result-not-after-call',
        item: 1,
        text: 'tool call "a" (task) has no result right after it',
      },
    ]);
  });

  it('names a call or result without a tool name "unnamed tool"', () => {
    expect(check({ calls: [{ item: 1, id: null, name: '' }], results: [] })).toEqual([
      {
        kind: 'missing-result',
        rule: 'missing-result',
        item: 1,
        text: 'tool call without an id (unnamed tool) has no result',
      },
    ]);
    expect(check({ calls: [], results: [{ item: 2, id: null, name: '' }] })).toEqual([
      {
        kind: 'orphan-result',
        rule: 'orphan-result',
        item: 2,
        text: 'result of unnamed tool (no call id) answers no call right before it',
      },
    ]);
  });

  it('answers nothing from an item that belongs to no message', () => {
    expect(
      check({ calls: [{ item: 1, id: 'a', name: 'search' }], results: [{ item: 2, id: 'a', name: '' }] }, (item) =>
        item === 2 ? null : item,
      ),
    ).toEqual([
      {
        kind: 'orphan-result',
        rule: 'result-not-after-call',
        item: 2,
        text: 'result for call id "a" is not right after its call (line 2)',
      },
      {
        kind: 'missing-result',
        rule: 'result-not-after-call',
        item: 1,
        text: 'tool call "a" (search) has no result right after it',
      },
    ]);
  });

  it('reports duplicate ids first, then results that answer nothing, then calls left without a result', () => {
    const pairing: Pairing = {
      calls: [
        { item: 1, id: 'a', name: 'search' },
        { item: 1, id: 'c', name: 'read' },
        { item: 4, id: 'a', name: 'search' },
      ],
      results: [
        { item: 2, id: 'a', name: '' },
        { item: 3, id: 'z', name: '' },
      ],
    };
    expect(check(pairing).map((f) => [f.kind, f.item])).toEqual([
      ['duplicate-id', 4],
      ['orphan-result', 3],
      ['missing-result', 1],
      ['missing-result', 4],
    ]);
  });

  it('tells an id used again in a later message from one two calls of a message share', () => {
    const pairing: Pairing = {
      calls: [
        { item: 1, id: 'a', name: 'search' },
        { item: 4, id: 'a', name: 'search' },
        { item: 4, id: 'a', name: 'read' },
      ],
      results: [
        { item: 2, id: 'a', name: '' },
        { item: 5, id: 'a', name: '' },
        { item: 5, id: 'a', name: '' },
      ],
    };
    expect(check(pairing)).toEqual([
      {
        kind: 'duplicate-id',
        rule: 'reused-id',
        item: 4,
        text: 'call id "a" (search) is already used by the call on line 2',
      },
      {
        kind: 'duplicate-id',
        rule: 'shared-id',
        item: 4,
        text: 'call id "a" (read) is already used by the call on line 2',
      },
    ]);
    // The adapter's turn is the unit where it names one: calls of one message in two turns share nothing.
    expect(
      check({
        calls: [
          { item: 1, id: 'a', name: 'f', turn: 't1' },
          { item: 1, id: 'a', name: 'f', turn: 't2' },
        ],
        results: [],
      }).map((f) => f.rule),
    ).toEqual(['reused-id', 'missing-result', 'missing-result']);
  });

  it('calls the result of a reused id missing, not elsewhere, when every result of that id answered its own call', () => {
    const pairing: Pairing = {
      calls: [
        { item: 1, id: 'a', name: 'search' },
        { item: 4, id: 'a', name: 'search' },
      ],
      results: [{ item: 2, id: 'a', name: '' }],
    };
    expect(check(pairing).filter((f) => f.kind === 'missing-result')).toEqual([
      { kind: 'missing-result', rule: 'missing-result', item: 4, text: 'tool call "a" (search) has no result' },
    ]);
  });

  it('does not change the pairing it is given', () => {
    const pairing: Pairing = Object.freeze({
      calls: Object.freeze([Object.freeze({ item: 1, id: 'a', name: 'search' })]),
      results: Object.freeze([Object.freeze({ item: 2, id: 'a', name: '' })]),
    });
    expect(check(pairing)).toEqual([]);
    expect(check(pairing)).toEqual([]);
  });
});

/** The rules as first written, one scan of every call per result: what the indexed check must agree with. */
function referencePairing(
  pairing: Pairing,
  messageOf: (item: number) => number | null,
  roles: readonly Message[],
  lineOf: (item: number) => number,
) {
  const findings: { kind: string; rule: string; item: number; text: string }[] = [];
  const headOf = (m: number | null): number | null => {
    if (m === null) return null;
    let k = m;
    while (k >= 0 && roles[k]?.role === 'tool') k--;
    return k >= 0 ? k : null;
  };
  const nameOf = (name: string) => (name === '' ? 'unnamed tool' : name);
  const calls = pairing.calls.map((c) => ({ ...c, home: messageOf(c.item), answered: false }));
  calls.forEach((call, k) => {
    if (call.id === null) return;
    const before = calls.slice(0, k).filter((c) => c.id === call.id);
    const first = before[0];
    if (first === undefined) return;
    // One unit: the same adapter turn when either call names one, else the same message.
    const shared = before.some((c) =>
      c.turn !== undefined || call.turn !== undefined ? c.turn === call.turn : c.home !== null && c.home === call.home,
    );
    const text = `call id ${JSON.stringify(call.id)} (${nameOf(call.name)}) is already used by the call on line ${lineOf(first.item)}`;
    findings.push({ kind: 'duplicate-id', rule: shared ? 'shared-id' : 'reused-id', item: call.item, text });
  });
  const unmatched: (typeof pairing.results)[number][] = [];
  for (const result of pairing.results) {
    const head = headOf(messageOf(result.item));
    const match = calls.find(
      (c) =>
        !c.answered &&
        (c.turn !== undefined || result.turn !== undefined
          ? c.turn === result.turn
          : c.home !== null && c.home === head) &&
        c.item <= result.item &&
        (result.id !== null
          ? c.id === result.id
          : (c.id === null || pairing.idsOptional === true) && (result.name === '' || c.name === result.name)),
    );
    if (match !== undefined) {
      match.answered = true;
      continue;
    }
    if (result.id === null) {
      findings.push({
        kind: 'orphan-result',
        rule: 'orphan-result',
        item: result.item,
        text: `result of ${nameOf(result.name)} (no call id) answers no call right before it`,
      });
      continue;
    }
    const elsewhere = calls.filter((c) => c.id === result.id);
    const id = JSON.stringify(result.id);
    unmatched.push(result);
    let text: string;
    let rule: string;
    if (elsewhere.length === 0) [rule, text] = ['orphan-result', `result for call id ${id} answers no call`];
    else if (elsewhere.every((c) => c.answered))
      [rule, text] = ['repeated-result', `result for call id ${id} repeats a result the call already has`];
    else
      [rule, text] = [
        'result-not-after-call',
        `result for call id ${id} is not right after its call (line ${lineOf((elsewhere[0] as (typeof calls)[number]).item)})`,
      ];
    findings.push({ kind: 'orphan-result', rule, item: result.item, text });
  }
  for (const call of calls) {
    if (call.answered) continue;
    const id = call.id === null ? 'without an id' : JSON.stringify(call.id);
    const later = call.id !== null && unmatched.some((r) => r.id === call.id);
    findings.push({
      kind: 'missing-result',
      rule: later ? 'result-not-after-call' : 'missing-result',
      item: call.item,
      text: `tool call ${id} (${nameOf(call.name)}) has no result${later ? ' right after it' : ''}`,
    });
  }
  return findings;
}

describe('checkPairing against the rules as first written', () => {
  const side = <T>(values: readonly T[]) => fc.constantFrom(...values);
  const entry = fc.record(
    {
      item: fc.nat({ max: 7 }),
      id: side([null, 'a', 'b', 'c']),
      name: side(['', 'f', 'g']),
      turn: side([undefined, 't1', 't2']),
    },
    { requiredKeys: ['item', 'id', 'name'] },
  );
  const case_ = fc.record({
    roles: fc.array(side(['user', 'assistant', 'tool', 'system'] as const), { minLength: 1, maxLength: 8 }),
    homes: fc.array(fc.option(fc.nat({ max: 7 })), { minLength: 8, maxLength: 8 }),
    calls: fc.array(entry, { maxLength: 8 }),
    results: fc.array(entry, { maxLength: 8 }),
    idsOptional: fc.boolean(),
  });

  it('finds the same problems in the same order', () => {
    fc.assert(
      fc.property(case_, ({ roles, homes, calls, results, idsOptional }) => {
        const messagesOf = roles.map((role) => msg(role));
        const messageOf = (item: number): number | null => {
          const home = homes[item] ?? null;
          return home === null || home >= messagesOf.length ? null : home;
        };
        const withoutTurn = (e: (typeof calls)[number]) =>
          e.turn === undefined ? { item: e.item, id: e.id, name: e.name } : e;
        const pairing: Pairing = {
          calls: calls.map(withoutTurn),
          results: results.map(withoutTurn),
          ...(idsOptional ? { idsOptional } : {}),
        };
        const lineOf = (item: number) => item + 1;
        expect(checkPairing(pairing, messageOf, messagesOf, lineOf)).toEqual(
          referencePairing(pairing, messageOf, messagesOf, lineOf),
        );
      }),
      { numRuns: scaled(3000) },
    );
  });
});
