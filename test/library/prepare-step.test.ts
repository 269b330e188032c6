import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { OptionsError } from '../../src/errors.js';
import { compactMessages, swcPrepareStep } from '../../src/library/index.js';
import { deepFreeze } from '../helpers/fake-counter.js';
import { scaled } from '../helpers/scale.js';

// The AI SDK's types, as far as `prepareStep` goes (the SDK is not a dependency; these mirror `ai` 5's
// `PrepareStepFunction` and `ModelMessage` so the returned function is checked against the shape it must fit).
type ModelMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | Array<{ type: 'text'; text: string }> }
  | {
      role: 'assistant';
      content:
        | string
        | Array<
            { type: 'text'; text: string } | { type: 'tool-call'; toolCallId: string; toolName: string; input: unknown }
          >;
    }
  | {
      role: 'tool';
      content: Array<{
        type: 'tool-result';
        toolCallId: string;
        toolName: string;
        output: { type: 'text'; value: string };
      }>;
    };
type PrepareStepResult =
  | { model?: unknown; toolChoice?: unknown; activeTools?: string[]; system?: string; messages?: Array<ModelMessage> }
  | undefined;
type PrepareStepFunction = (options: {
  steps: unknown[];
  stepNumber: number;
  model: unknown;
  messages: Array<ModelMessage>;
  experimental_context: unknown;
}) => PromiseLike<PrepareStepResult> | PrepareStepResult;

function step(n: number): ModelMessage[] {
  return [
    {
      role: 'assistant',
      content: [{ type: 'tool-call', toolCallId: `c${n}`, toolName: 'search', input: { page: n } }],
    },
    {
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: `c${n}`,
          toolName: 'search',
          output: { type: 'text', value: `page ${n}: ${'words '.repeat(40)}` },
        },
      ],
    },
  ];
}

describe('swcPrepareStep', () => {
  it('fits the AI SDK’s prepareStep and compacts only once the conversation is past the threshold', async () => {
    const prepareStep: PrepareStepFunction = swcPrepareStep({
      contextWindow: 1000,
      compactAt: 0.5,
      compactTo: 0.25,
      tokenizer: 'approx',
    });
    const messages: ModelMessage[] = [{ role: 'user', content: 'Read every page and summarise.' }];
    const results: PrepareStepResult[] = [];
    for (let n = 0; n < 12; n++) {
      const frozen = deepFreeze([...messages]);
      const result = await prepareStep({
        steps: [],
        stepNumber: n,
        model: null,
        messages: frozen,
        experimental_context: undefined,
      });
      results.push(result);
      if (result?.messages !== undefined) {
        expect(result.messages[0]).toBe(frozen[0]); // the task, the very object
        expect(result.messages.length).toBeLessThan(frozen.length);
      }
      messages.push(...step(n));
    }
    // Each step adds about 65 tokens: the first steps stay under 500 and come back as nothing.
    expect(results.slice(0, 5).every((r) => r === undefined)).toBe(true);
    expect(results.slice(8).every((r) => r?.messages !== undefined)).toBe(true);
  });

  it('keeps its cut: later steps get the same messages with only the new ones appended, until the threshold again', async () => {
    const prepareStep = swcPrepareStep({ contextWindow: 1000, compactAt: 0.5, compactTo: 0.25, tokenizer: 'approx' });
    const history: ModelMessage[] = [{ role: 'user', content: 'Read every page and summarise.' }];
    let last: ModelMessage[] | null = null;
    let cuts = 0;
    for (let n = 0; n < 40; n++) {
      const sent = (await prepareStep({ messages: [...history] }))?.messages ?? null;
      if (last !== null) {
        expect(sent).not.toBeNull();
        const appended = history.slice(-2);
        const kept = (sent as ModelMessage[]).slice(0, last.length);
        if (kept.every((m, k) => m === last?.[k]))
          expect((sent as ModelMessage[]).slice(last.length)).toEqual(appended);
        else cuts++;
      } else if (sent !== null) cuts++;
      if (sent !== null) last = sent;
      history.push(...step(n));
    }
    // About 65 tokens a step and 250 between 25% and 50% (less the task and the note): a cut every third or fourth step.
    expect(cuts).toBeGreaterThanOrEqual(8);
    expect(cuts).toBeLessThanOrEqual(12);
  });

  it('starts over for a history that does not extend the last one, and recognises one rebuilt as equal objects', async () => {
    const options = { contextWindow: 1000, compactAt: 0.5, compactTo: 0.25, tokenizer: 'approx' } as const;
    const conversation = (tag: string, steps: number): ModelMessage[] => [
      { role: 'user', content: `Read every page (${tag}).` },
      ...Array.from({ length: steps }, (_, n) => step(n)).flat(),
    ];
    const fresh = async (messages: ModelMessage[]): Promise<unknown> =>
      (await swcPrepareStep(options)({ messages }))?.messages;
    const prepareStep = swcPrepareStep(options);
    const a = conversation('a', 12);
    const cut = (await prepareStep({ messages: a }))?.messages as ModelMessage[];
    expect(cut.length).toBeLessThan(a.length);
    // The same history again, rebuilt as copies (as a history loaded from storage is): the same view, grown.
    const rebuilt = [...structuredClone(a), ...step(12)];
    expect((await prepareStep({ messages: rebuilt }))?.messages).toEqual([...cut, ...rebuilt.slice(a.length)]);
    // A new conversation, and one whose earlier message was edited: compacted from scratch, as a fresh prepareStep would.
    const b = conversation('b', 12);
    expect((await prepareStep({ messages: b }))?.messages).toEqual(await fresh(b));
    const edited = [...a.slice(0, 5), { role: 'user' as const, content: 'Actually, stop.' }, ...a.slice(6)];
    expect((await prepareStep({ messages: edited }))?.messages).toEqual(await fresh(edited));
    // A shorter history (a retry from an earlier step) is not an extension either.
    expect((await prepareStep({ messages: a.slice(0, 11) }))?.messages).toEqual(await fresh(a.slice(0, 11)));
  });

  it('keeps one cut per conversation when conversations take turns through one prepareStep', async () => {
    const prepareStep = swcPrepareStep({ contextWindow: 1000, compactAt: 0.5, compactTo: 0.25, tokenizer: 'approx' });
    const histories: ModelMessage[][] = [
      [{ role: 'user', content: 'Task one.' }],
      [{ role: 'user', content: 'Task two.' }],
    ];
    const last: Array<ModelMessage[] | null> = [null, null];
    let changes = 0;
    for (let n = 0; n < 30; n++) {
      for (const c of [0, 1]) {
        const sent = (await prepareStep({ messages: [...(histories[c] as ModelMessage[])] }))?.messages ?? null;
        const before = last[c] ?? null;
        if (before !== null && sent !== null && !before.every((m, k) => sent[k] === m)) changes++;
        last[c] = sent;
        (histories[c] as ModelMessage[]).push(...step(n));
      }
    }
    // Each conversation cuts every fourth step or so; interleaving adds no cut.
    expect(changes).toBeLessThanOrEqual(2 * 7);
  });

  it('sends what a plain model of its kept views sends, over any steps of a few conversations, some at once', async () => {
    const options = { target: 300, tokenizer: 'approx', system: 'Be brief.' } as const;
    type Op = { conversation: number; grow: number; rebuilt: boolean; together: 'no' | 'after' | 'beside' };
    const opArb: fc.Arbitrary<Op> = fc.record({
      conversation: fc.nat({ max: 2 }),
      grow: fc.nat({ max: 3 }),
      rebuilt: fc.boolean(),
      together: fc.constantFrom('no' as const, 'after' as const, 'beside' as const),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 14 }), async (ops) => {
        const prepare = swcPrepareStep(options);
        // The model: every view's history copied whole, a history's view found by JSON, compacted by a cold call.
        let views: Array<{ history: string[]; sent: ModelMessage[] }> = [];
        const json = (m: ModelMessage): string => JSON.stringify(m);
        const extendsIt = (h: readonly ModelMessage[], e: readonly string[]): boolean =>
          h.length >= e.length && e.every((x, k) => json(h[k] as ModelMessage) === x);
        const modelView = (h: readonly ModelMessage[]): ModelMessage[] | null => {
          const v = views.find((x) => extendsIt(h, x.history));
          return v === undefined ? null : [...v.sent, ...h.slice(v.history.length)];
        };
        const modelKeep = (h: readonly ModelMessage[], sent: readonly ModelMessage[]): void => {
          views = [{ history: h.map(json), sent: [...sent] }, ...views.filter((x) => !extendsIt(h, x.history))].slice(
            0,
            8,
          );
        };
        const histories: ModelMessage[][] = [[], [], []];
        let n = 0;
        for (let i = 0; i < ops.length; i++) {
          const op = ops[i] as Op;
          const grown = (h: ModelMessage[]): ModelMessage[] => {
            const next = [...h];
            if (next.length === 0) next.push({ role: 'user', content: `task ${op.conversation}` });
            for (let g = 0; g < op.grow; g++) next.push(...step(n++));
            return op.rebuilt ? (JSON.parse(JSON.stringify(next)) as ModelMessage[]) : next;
          };
          const before = histories[op.conversation] as ModelMessage[];
          const first = grown(before);
          // Two requests of one conversation at once, the second after the first or beside it (from the same
          // history, other steps): both find the views as they were before either is kept.
          const second = op.together === 'after' ? grown(first) : op.together === 'beside' ? grown(before) : null;
          const batch = second === null ? [first] : [first, second];
          histories[op.conversation] = second ?? first;
          const expected: Array<ModelMessage[] | undefined> = [];
          const seen = batch.map((h) => modelView(h));
          for (const [k, h] of batch.entries()) {
            const view = seen[k] ?? null;
            const result = await compactMessages(view ?? h, { ...options, format: 'ai-sdk' });
            const sent = result.changed ? result.messages : view;
            if (sent !== null) modelKeep(h, sent);
            expected.push(sent === null ? undefined : JSON.parse(JSON.stringify(sent)));
          }
          const got = await Promise.all(batch.map((h) => prepare({ messages: h, stepNumber: i })));
          expect(got.map((r) => (r === undefined ? undefined : JSON.parse(JSON.stringify(r.messages))))).toEqual(
            expected,
          );
        }
      }),
      { numRuns: scaled(60) },
    );
  });

  it('refuses bad options when it is made, not at the first step', () => {
    expect(() => swcPrepareStep({ target: 100, contextWindow: 1000 })).toThrow(OptionsError);
  });
});
