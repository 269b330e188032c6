/**
 * A format that continues a normalization (`Normalized.more`) reads a grown list as reading it whole does: the same
 * messages (roles, marks, weights, content), the same items for each, the same pinned items, whatever the lengths it
 * was read at on the way. A replay and a warm compactor read a growing history so.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { renderMessage } from '../../src/core/render.js';
import { findFormat } from '../../src/formats/registry.js';
import type { ConversationInput, FormatAdapter, Normalized } from '../../src/formats/types.js';

/** The input of a list's first `n` items, read from the very array that grows (as the contract asks). */
function inputOf(items: unknown[], container: Record<string, unknown> | null): ConversationInput {
  return {
    file: 'run.json',
    items,
    raws: new Proxy([], {
      get: (_t, k) => (k === 'length' ? items.length : JSON.stringify(items[Number(k)])),
    }) as never,
    container,
    fail(item, reason): never {
      throw new Error(`message ${item + 1}: ${reason}`);
    },
  };
}

/** What a normalization says of each message, and the items of each and pinned. */
function viewOf(normalized: Normalized): unknown {
  return {
    messages: normalized.messages.map((m) => ({
      role: m.role,
      compaction: m.compaction,
      weight: m.weight,
      fixed: m.fixed,
      exactNote: m.exactNote,
      rendered: renderMessage(m),
    })),
    itemsOf: normalized.itemsOf,
    pinned: normalized.pinned ?? [],
  };
}

/** Reads `all` whole, and grown in the steps given, each step continuing the one before. */
function bothWays(
  format: string,
  all: readonly unknown[],
  cuts: readonly number[],
  container: Record<string, unknown> | null,
) {
  const adapter = findFormat(format) as FormatAdapter;
  const whole = adapter.normalize(inputOf([...all], container), null);
  const growing: unknown[] = [];
  let normalized = null as Normalized | null;
  for (const cut of [...cuts, all.length]) {
    while (growing.length < cut) growing.push(all[growing.length]);
    const input = inputOf(growing, container);
    normalized = normalized?.more === undefined ? adapter.normalize(input, null) : normalized.more(input);
  }
  return { whole: viewOf(whole), grown: viewOf(normalized as Normalized) };
}

const geminiItem = fc.oneof(
  fc.constant({ role: 'user', parts: [{ text: 'Fix /srv/app.py please.' }] }),
  fc.constant({
    role: 'model',
    parts: [{ functionCall: { id: 'c1', name: 'read_file', args: { path: '/srv/app.py' } } }],
  }),
  fc.constant({
    role: 'user',
    parts: [{ functionResponse: { id: 'c1', name: 'read_file', response: { ok: 'x = 1' } } }],
  }),
  fc.constant({ role: 'model', parts: [{ text: 'Done.' }] }),
);
const adkEvent = fc.oneof(
  fc.constant({ author: 'user', content: { role: 'user', parts: [{ text: 'Now the tests.' }] } }),
  fc.constant({ author: 'agent', content: { role: 'model', parts: [{ text: 'Looking.' }] } }),
  fc.constant({ author: 'agent', actions: { stateDelta: { step: 1 } } }),
);
const anthropicItem = fc.oneof(
  fc.constant({ role: 'user', content: 'Fix /srv/app.py please.' }),
  fc.constant({
    role: 'assistant',
    content: [{ type: 'tool_use', id: 't1', name: 'read_file', input: { path: 'a' } }],
  }),
  fc.constant({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'x = 1' }] }),
  fc.constant({ role: 'assistant', content: [{ type: 'text', text: 'Done.' }] }),
);

const haystackItem = fc.oneof(
  fc.constant({ role: 'user', content: [{ text: 'Fix /srv/app.py please.' }] }),
  fc.constant({
    role: 'assistant',
    content: [{ tool_call: { id: 'c1', tool_name: 'read_file', arguments: { path: '/srv/app.py' } } }],
  }),
  fc.constant({
    role: 'tool',
    content: [
      {
        tool_call_result: {
          result: 'x = 1',
          origin: { id: 'c1', tool_name: 'read_file', arguments: { path: '/srv/app.py' } },
          error: false,
        },
      },
    ],
  }),
  fc.constant({ role: 'assistant', content: [{ text: 'Done.' }] }),
);

describe('a continued normalization', () => {
  it.each([
    ['gemini', fc.array(geminiItem, { minLength: 1, maxLength: 12 }), { systemInstruction: 'Be careful.' }],
    ['gemini', fc.array(adkEvent, { minLength: 1, maxLength: 12 }), null],
    ['anthropic', fc.array(anthropicItem, { minLength: 1, maxLength: 12 }), { system: 'Be careful.' }],
    ['haystack', fc.array(haystackItem, { minLength: 1, maxLength: 12 }), null],
  ] as const)('in %s reads what reading it whole reads, grown at any lengths', (format, list, container) => {
    fc.assert(
      fc.property(list, fc.array(fc.nat(12), { maxLength: 4 }), (items, cuts) => {
        const steps = [...new Set(cuts.map((c) => Math.min(c, items.length)))]
          .filter((c) => c > 0)
          .sort((a, b) => a - b);
        const { whole, grown } = bothWays(format, items, steps, container);
        expect(grown).toEqual(whole);
      }),
    );
  });
});
