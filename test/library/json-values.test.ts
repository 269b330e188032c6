/**
 * The library reads each message as a file of the messages would give it: plain JSON data is read where it is, and
 * anything JSON writes otherwise (undefined members, NaN, -0, a Date or another class, `toJSON`, binary data, a
 * null-prototype object) is read as its JSON. Whatever such values a conversation holds, `compactMessages` keeps the
 * same messages as `swc compact` keeps of the same messages written as a JSON file, and hands back the objects given.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { compactMessages } from '../../src/library/index.js';
import { isPlainData, shapeOf } from '../../src/library/memory.js';
import { decodeSource } from '../../src/io/source.js';
import { compactSource } from '../../src/pipeline/index.js';
import { binaryAsText } from '../../src/settings/library.js';
import { createApproxCounter } from '../../src/tokens/approx.js';
import { scaled } from '../helpers/scale.js';

type Msg = Record<string, unknown>;

/** A value JSON does not give back as it is, and a plain one, for a message's extra member. */
const oddArb: fc.Arbitrary<unknown> = fc
  .constantFrom(
    () => undefined,
    () => Number.NaN,
    () => -0,
    () => Infinity,
    () => new Date(0),
    () => ({ toJSON: () => 'as json' }),
    () => new Uint8Array([1, 2, 3]),
    () => Object.assign(Object.create(null) as object, { a: 1 }),
    () => () => 1,
    () => 'plain',
    () => [1, 'two', null],
  )
  .map((make) => make());

/** A user turn, a reply, or a call and its result; content may sit in parts. */
function messagesOf(kinds: readonly number[]): Msg[] {
  const out: Msg[] = [{ role: 'system', content: 'rules' }];
  kinds.forEach((kind, k) => {
    const words = `word${k} `.repeat(5 + ((k * 7) % 23));
    if (kind === 0) out.push({ role: 'user', content: `task ${k}: ${words}` });
    else if (kind === 1) out.push({ role: 'assistant', content: [{ type: 'text', text: words }] });
    else
      out.push(
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: `c${k}`, type: 'function', function: { name: 'read', arguments: `{"n": ${k}}` } }],
        },
        { role: 'tool', tool_call_id: `c${k}`, content: words },
      );
  });
  return out;
}

describe('messages holding values JSON writes otherwise', () => {
  it('are read as their JSON: the same messages kept as from a JSON file of them', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 2 }), { minLength: 1, maxLength: 14 }),
        fc.array(fc.tuple(fc.nat(), fc.constantFrom('extra', 'meta', 'content'), oddArb), { maxLength: 6 }),
        fc.integer({ min: 20, max: 200 }),
        async (kinds, odds, target) => {
          const messages = messagesOf(kinds);
          for (const [at, key, value] of odds) {
            const m = messages[at % messages.length] as Msg;
            // Odd content only where a string could not be (a tool result's content stays text).
            if (key === 'content' && m.role === 'tool') continue;
            m[key] = value;
          }
          const file = JSON.stringify(messages, binaryAsText);
          const counter = createApproxCounter();
          let plan: NonNullable<Awaited<ReturnType<typeof compactSource>>['conversations'][number]>['plan'] | undefined;
          try {
            const source = decodeSource(Buffer.from(file, 'utf8'), 'm.json');
            plan = (await compactSource(source, { target, counter, format: 'openai' })).conversations[0]?.plan;
          } catch {
            plan = undefined;
          }
          let lib: Awaited<ReturnType<typeof compactMessages>> | null = null;
          let libError: string | null = null;
          try {
            lib = await compactMessages(messages, { target, tokenizer: 'approx', format: 'openai' });
          } catch (error) {
            libError = (error as Error).message;
          }
          if (plan === undefined) {
            // The file is refused: so are the messages.
            expect(libError).not.toBeNull();
            return;
          }
          expect(libError).toBeNull();
          expect(lib?.plan.removed).toEqual(plan.removed);
          expect(lib?.plan.tokensAfter).toBe(plan.tokensAfter);
          const kept = new Set(plan.kept);
          const given = lib?.messages.filter((m) => messages.includes(m as Msg)) ?? [];
          expect(given).toEqual(messages.filter((_, k) => kept.has(k)));
        },
      ),
      { numRuns: scaled(150) },
    );
  });

  it('are told from plain data alike by a one-call read and by the shape a warm compactor records', () => {
    // compactMessages reads each message once and records no shape; a compactor records one. Both must take the
    // same messages as their own items, whatever odd values sit how deep.
    const odd = oddArb.map((v) => ({ v }));
    const value = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small' },
        fc.jsonValue(),
        odd.map((x) => x.v),
        fc.array(tie('node'), { maxLength: 4 }),
        fc.dictionary(fc.string({ maxLength: 4 }), tie('node'), { maxKeys: 4 }),
      ),
    })).node;
    fc.assert(
      fc.property(value, (v) => {
        expect(isPlainData(v)).toBe(shapeOf(v)?.plain === true);
      }),
      { numRuns: scaled(2000) },
    );
    const deep: unknown[] = [];
    let at = deep;
    for (let k = 0; k < 200_000; k++) at.push((at = []));
    expect(isPlainData(deep)).toBe(false);
    expect(shapeOf(deep)).toBeNull();
  });
});
