/**
 * Steps where consecutive assistant messages make calls that the results after the last of them answer
 * (docs/strategy.md, "Steps"): such a run is one step from its first answered message on, so no strategy keeps a call
 * without its result or a result without its call. A list that only grows (a warm compactor's) finds the same steps
 * as a copy of it, at every length.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { analyze, stepSpans } from '../../src/core/groups.js';
import { growsOnly } from '../../src/core/growing.js';
import type { Message, ToolCall, ToolResult } from '../../src/core/types.js';
import { scaled } from '../helpers/scale.js';

const NAMES = ['read', 'grep', 'run'] as const;

/** How a generated conversation links results to calls: by id, by tool name only, or by an unnamed result. */
type Linking = 'ids' | 'names' | 'unnamed';

const assistant = (calls: readonly ToolCall[], text = ''): Message => ({
  role: 'assistant',
  content: { texts: text === '' ? [] : [text], toolCalls: calls, results: [], images: 0, files: [] },
});
const tool = (results: readonly ToolResult[]): Message => ({
  role: 'tool',
  content: { texts: [], toolCalls: [], results, images: 0, files: [] },
});
const user = (text: string): Message => ({
  role: 'user',
  content: { texts: [text], toolCalls: [], results: [], images: 0, files: [] },
});

/** One event of a conversation: a user message, a text reply, or a run of assistant messages with calls. */
type Event =
  | { kind: 'user' }
  | { kind: 'text' }
  | {
      kind: 'run';
      /** Per assistant message of the run: its calls' tools, and which of them the results after the run answer. */
      messages: ReadonlyArray<ReadonlyArray<{ name: (typeof NAMES)[number]; answered: boolean }>>;
      /** How the results are split into tool messages: a result per message, or all in one. */
      together: boolean;
      shuffled: boolean;
    };

const eventArb: fc.Arbitrary<Event> = fc.oneof(
  { arbitrary: fc.constant({ kind: 'user' as const }), weight: 2 },
  { arbitrary: fc.constant({ kind: 'text' as const }), weight: 1 },
  {
    arbitrary: fc.record({
      kind: fc.constant('run' as const),
      messages: fc.array(
        fc.array(fc.record({ name: fc.constantFrom(...NAMES), answered: fc.boolean() }), { maxLength: 2 }),
        { minLength: 1, maxLength: 4 },
      ),
      together: fc.boolean(),
      shuffled: fc.boolean(),
    }),
    weight: 4,
  },
);

/** The conversation of some events, its results linked to calls as `linking` says. */
function conversationOf(events: readonly Event[], linking: Linking): Message[] {
  const out: Message[] = [user('task')];
  let ids = 0;
  for (const e of events) {
    if (e.kind === 'user') out.push(user('more'));
    else if (e.kind === 'text') out.push(assistant([], 'thinking'));
    else {
      const results: ToolResult[] = [];
      for (const calls of e.messages) {
        const made = calls.map((c) => ({ ...c, id: `c${ids++}` }));
        out.push(
          assistant(made.map((c) => ({ name: c.name, arguments: '{}', ...(linking === 'ids' ? { id: c.id } : {}) }))),
        );
        for (const c of made)
          if (c.answered)
            results.push({
              name: linking === 'unnamed' ? '' : c.name,
              text: 'out',
              error: false,
              images: 0,
              files: 0,
              ...(linking === 'ids' ? { id: c.id } : {}),
            });
      }
      if (e.shuffled) results.reverse();
      if (results.length === 0) continue;
      if (e.together) out.push(tool(results));
      else for (const r of results) out.push(tool([r]));
    }
  }
  return out;
}

const readCalls = (m: Message): readonly ToolCall[] =>
  (typeof m.content === 'function' ? m.content() : m.content).toolCalls;
const readResults = (m: Message): readonly ToolResult[] =>
  (typeof m.content === 'function' ? m.content() : m.content).results;

/**
 * The steps as the rule says them, worked out another way: Haystack's steps, then each run of lone assistant messages
 * right before a step with results joined to it from its first message with a call one of those results answers.
 */
function modelSteps(messages: readonly Message[], start: number): Array<[number, number]> {
  const haystack: Array<[number, number]> = [];
  for (let i = start; i < messages.length; i++) {
    if (messages[i]?.role !== 'assistant') continue;
    let e = i + 1;
    while (messages[e]?.role === 'tool') e++;
    haystack.push([i, e]);
    i = e - 1;
  }
  const out: Array<[number, number]> = [];
  for (let k = 0; k < haystack.length; k++) {
    const [s, e] = haystack[k] as [number, number];
    let m = k;
    while (
      m + 1 < haystack.length &&
      haystack[m]?.[1] === (haystack[m]?.[0] as number) + 1 &&
      haystack[m + 1]?.[0] === haystack[m]?.[1]
    )
      m++;
    const [ls, le] = haystack[m] as [number, number];
    const results = messages.slice(ls + 1, le).flatMap(readResults);
    const answers = (c: ToolCall): boolean =>
      results.some((r) => (r.id === undefined ? r.name === '' || r.name === c.name : r.id === c.id));
    if (m > k && readCalls(messages[s] as Message).some(answers)) {
      out.push([s, le]);
      k = m;
    } else out.push([s, e]);
  }
  return out;
}

const linkingArb = fc.constantFrom<Linking>('ids', 'names', 'unnamed');

describe('steps of runs of assistant messages with calls', () => {
  it('are Haystack steps, a run joined from its first message a result after it answers', () => {
    fc.assert(
      fc.property(fc.array(eventArb, { maxLength: 12 }), linkingArb, (events, linking) => {
        const messages = conversationOf(events, linking);
        expect(stepSpans(messages, 0)).toEqual(modelSteps(messages, 0));
      }),
      { numRuns: scaled(500) },
    );
  });

  it('keep every call answered after its run in the step of its result', () => {
    fc.assert(
      fc.property(fc.array(eventArb, { maxLength: 12 }), (events) => {
        const messages = conversationOf(events, 'ids');
        const stepOf = new Map<number, number>();
        stepSpans(messages, 0).forEach(([s, e], k) => {
          for (let i = s; i < e; i++) stepOf.set(i, k);
        });
        const callAt = new Map<string, number>();
        messages.forEach((m, i) => {
          for (const c of readCalls(m)) callAt.set(c.id as string, i);
          for (const r of readResults(m)) expect(stepOf.get(callAt.get(r.id as string) as number)).toBe(stepOf.get(i));
        });
      }),
      { numRuns: scaled(300) },
    );
  });

  it('are found the same in a list that only grows as in a copy of it, at every length', () => {
    fc.assert(
      fc.property(
        fc.array(eventArb, { maxLength: 12 }),
        linkingArb,
        fc.array(fc.nat({ max: 6 }), { minLength: 1, maxLength: 8 }),
        (events, linking, cuts) => {
          const all = conversationOf(events, linking);
          const list: Message[] = [];
          growsOnly(list);
          let at = 0;
          for (const cut of [...cuts, all.length]) {
            const next = Math.min(all.length, at + cut);
            list.push(...all.slice(at, next));
            at = next;
            const copy = [...list];
            expect(Array.from(analyze(list).steps, (s) => [...s])).toEqual(
              Array.from(analyze(copy).steps, (s) => [...s]),
            );
          }
        },
      ),
      { numRuns: scaled(400) },
    );
  });

  it('leave an assistant message whose calls are never answered a step of its own', () => {
    const call = (id: string, name = 'read'): ToolCall => ({ name, arguments: '{}', id });
    const result = (id: string, name = 'read'): ToolResult => ({
      name,
      id,
      text: 'x',
      error: false,
      images: 0,
      files: 0,
    });
    const messages = [user('q'), assistant([call('a')]), assistant([call('b')]), tool([result('b')])];
    expect(stepSpans(messages, 1)).toEqual([
      [1, 2],
      [2, 4],
    ]);
    const answered = [user('q'), assistant([call('a')]), assistant([call('b')]), tool([result('a'), result('b')])];
    expect(stepSpans(answered, 1)).toEqual([[1, 4]]);
  });
});
