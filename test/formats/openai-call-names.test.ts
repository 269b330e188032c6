/**
 * A tool result is named after the latest call with its id read before it. The normalization holds only the latest
 * calls; an id not among them is looked for again in every earlier item. Random chats with reused and unknown ids are
 * normalized holding one, two or three ids, whole or continued block by block, and compared with a model that holds
 * every call (written here from the rule, not from the adapter).
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { contentOf } from '../../src/core/render.js';
import { CallNames, normalizeChat, openai } from '../../src/formats/openai.js';
import type { ConversationInput, Normalized } from '../../src/formats/types.js';
import { scaled } from '../helpers/scale.js';

type Item = Record<string, unknown>;

function inputOf(items: readonly unknown[]): ConversationInput {
  return {
    file: 'chat.jsonl',
    items,
    raws: items.map((i) => JSON.stringify(i)),
    container: null,
    fail: (): never => {
      throw new Error('refused');
    },
  };
}

/** The model: every call held, the latest with an id wins; a result takes the first of its ids that is known. */
function modelNames(items: readonly Item[]): Array<string[] | null> {
  const calls = new Map<string, string>();
  return items.map((item) => {
    for (const call of (item.tool_calls as Item[] | undefined) ?? []) {
      const fn = call.function as Item;
      calls.set(call.id as string, fn.name as string);
    }
    if (item.role !== 'tool') return null;
    const ids = typeof item.tool_call_id === 'string' ? [item.tool_call_id] : (item.tool_call_ids as string[]);
    const known = ids.find((id) => calls.has(id));
    return [known === undefined ? '' : (calls.get(known) as string)];
  });
}

function namesOf(normalized: Normalized): Array<string[] | null> {
  return normalized.messages.map((m) => (m.role === 'tool' ? contentOf(m).results.map((r) => r.name) : null));
}

const idArb = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h');
const itemArb: fc.Arbitrary<Item> = fc.oneof(
  fc.string({ maxLength: 5 }).map((text) => ({ role: 'user', content: text })),
  fc
    .array(fc.record({ id: idArb, name: fc.constantFrom('search', 'fetch', 'run', 'ünï') }), {
      minLength: 1,
      maxLength: 3,
    })
    .map((calls) => ({
      role: 'assistant',
      content: null,
      tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: '{}' } })),
    })),
  idArb.map((id) => ({ role: 'tool', tool_call_id: id, content: 'result' })),
  fc.array(idArb, { minLength: 1, maxLength: 3 }).map((ids) => ({ role: 'tool', tool_call_ids: ids, content: 'r' })),
);

describe('naming each result after its call', () => {
  it('names every result as a model holding every call does, however few calls are held', () => {
    fc.assert(
      fc.property(
        fc.array(itemArb, { maxLength: 60 }),
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 9 }),
        (items, generation, block) => {
          const expected = modelNames(items);
          expect(namesOf(normalizeChat(inputOf(items), null, new CallNames(generation)))).toEqual(expected);
          expect(namesOf(openai.normalize(inputOf(items), null))).toEqual(expected);
          // Continued block by block, as a warm compactor and a file's stream continue it.
          const grown: unknown[] = [];
          let normalized: Normalized | null = null;
          for (let from = 0; from < items.length || normalized === null; from += block) {
            grown.push(...items.slice(from, from + block));
            normalized =
              normalized === null
                ? normalizeChat(inputOf(grown), null, new CallNames(generation))
                : (normalized.more as NonNullable<Normalized['more']>)(inputOf(grown));
          }
          expect(namesOf(normalized)).toEqual(expected);
        },
      ),
      { numRuns: scaled(400) },
    );
  });

  it('finds a call let go long before, as the file is read again', () => {
    const items: Item[] = [
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'first', type: 'function', function: { name: 'oldest', arguments: '{}' } }],
      },
    ];
    for (let k = 0; k < 10; k++) {
      items.push({
        role: 'assistant',
        content: null,
        tool_calls: [{ id: `c${k}`, type: 'function', function: { name: 'newer', arguments: '{}' } }],
      });
    }
    items.push({ role: 'tool', tool_call_id: 'first', content: 'late' });
    items.push({ role: 'tool', tool_call_id: 'c9', content: 'recent' });
    items.push({ role: 'tool', tool_call_id: 'nowhere', content: 'orphan' });
    const names = namesOf(normalizeChat(inputOf(items), null, new CallNames(2))).slice(-3);
    expect(names).toEqual([['oldest'], ['newer'], ['']]);
  });
});
