/**
 * Haystack 3.4's own `ToolResultOffloadCompactor` tests (test/hooks/compaction/test_tool_result_offloading.py) and
 * its `_replace_tool_results_until_target` cases (test_utils.py), replayed against swc's core: the same
 * conversations, the same counter rate (`FakeCounter(chars_per_token=1)`), the same assertions, but for the store's
 * names (swc names an entry by its bytes, docs/strategy.md) and the tests of serialization and async, which swc has
 * no counterpart of.
 */
import { describe, expect, it } from '@jest/globals';
import { planOffloadCompaction, TOOL_RESULT_OFFLOADING, type PartAt } from '../../src/core/offload-compactor.js';
import { contentOf, renderMessage, textContent } from '../../src/core/render.js';
import type { Content, Message, StorablePart } from '../../src/core/types.js';
import { createApproxCounter } from '../../src/tokens/approx.js';

const COUNTER = createApproxCounter({ charsPerToken: 1, tokensPerImage: 0, tokensPerFile: 0 });

function content(parts: Partial<Content>): Content {
  return { texts: [], toolCalls: [], results: [], images: 0, files: [], ...parts };
}
const task: Message = { role: 'user', content: textContent('task') };
const toolCall = (id: string): Message => ({
  role: 'assistant',
  content: content({ toolCalls: [{ name: 'search', arguments: '{}', id }] }),
});
function toolResult(
  text: string,
  id: string,
  more: { error?: boolean; offloaded?: boolean; compaction?: string; parts?: StorablePart[]; images?: number } = {},
): Message {
  return {
    role: 'tool',
    ...(more.offloaded === true ? { offloaded: true } : {}),
    ...(more.compaction !== undefined ? { compaction: more.compaction } : {}),
    content: content({
      results: [
        {
          name: 'search',
          text,
          error: more.error ?? false,
          images: more.images ?? 0,
          files: 0,
          id,
          ...(more.parts !== undefined ? { parts: more.parts } : {}),
        },
      ],
    }),
  };
}
/** helpers.py `conversation(*results)`: the task, then a step per result (ids c0, c1, …). */
const conversation = (...results: string[]): Message[] => [
  task,
  ...results.flatMap((text, k) => [toolCall(`c${k}`), toolResult(text, `c${k}`)]),
];

/** A store in memory, naming an entry as Haystack's key would (`compacted_{tool}_{id}[_{part}]{extension}`). */
function memoryStore(): { files: Map<string, string | Uint8Array>; reference: (at: PartAt) => string } {
  const files = new Map<string, string | Uint8Array>();
  return {
    files,
    reference: (at) => {
      const id = `c${(at.index - 2) / 2}`;
      const name = `root/compacted_${at.tool}_${id}${at.part === null ? '' : `_${at.part}`}${at.extension}`;
      files.set(name, at.content);
      return name;
    },
  };
}
const textAt = (messages: readonly Message[] | undefined, i: number): string =>
  contentOf(messages?.[i] as Message).results[0]?.text ?? '';
const count = (messages: readonly Message[]): number => COUNTER.measure(messages.map(renderMessage));

const PNG = Buffer.concat([
  Buffer.from(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
    'base64',
  ),
  Buffer.alloc(1000),
]);

describe("Haystack 3.4's ToolResultOffloadCompactor tests, replayed against swc's core", () => {
  it('offloads older results: the pointer, the stored text and the compaction mark', () => {
    const messages = conversation('a'.repeat(400), 'newest');
    const store = memoryStore();
    const plan = planOffloadCompaction(messages, COUNTER, {
      target: 1,
      minTokens: 0,
      previewChars: 5,
      reference: store.reference,
    });
    expect(plan).not.toBeNull();
    expect(textAt(plan?.messages, 2)).toBe(
      "Tool result offloaded to text (400 characters) at 'root/compacted_search_c0.txt'. Preview: aaaaa...",
    );
    expect(store.files.get('root/compacted_search_c0.txt')).toBe('a'.repeat(400));
    expect(plan?.messages[2]?.compaction).toBe(TOOL_RESULT_OFFLOADING);
    expect(plan?.offloads[0]?.tokensBefore).toBe(count([messages[2] as Message]));
  });

  it('offloads binary results as their bytes', () => {
    // The image measured by its payload, as Haystack's PayloadCounter does: the text holds it here.
    const base64 = PNG.toString('base64');
    const image = toolResult(base64, 'c0', {
      parts: [{ kind: 'image', base64, mimeType: 'image/png', filename: null }],
    });
    const messages = [task, toolCall('c0'), image, toolCall('c1'), toolResult('newest', 'c1')];
    const store = memoryStore();
    const plan = planOffloadCompaction(messages, COUNTER, { target: 1, minTokens: 0, reference: store.reference });
    expect([...store.files.keys()]).toEqual(['root/compacted_search_c0.png']);
    expect(Buffer.from(store.files.get('root/compacted_search_c0.png') as Uint8Array).equals(PNG)).toBe(true);
    expect(textAt(plan?.messages, 2)).toBe(
      `Tool result offloaded to image/png (${PNG.length} bytes) at 'root/compacted_search_c0.png'`,
    );
  });

  it('skips ineligible results: small, errors, already offloaded or compacted, the newest', () => {
    const messages: Message[] = [
      task,
      toolCall('small'),
      toolResult('small', 'small'),
      toolCall('error'),
      toolResult('error'.repeat(100), 'error', { error: true }),
      toolCall('offloaded'),
      toolResult('offloaded'.repeat(100), 'offloaded', { offloaded: true }),
      toolCall('compacted'),
      toolResult('compacted'.repeat(100), 'compacted', { compaction: 'other' }),
      toolCall('newest'),
      toolResult('newest', 'newest'),
    ];
    const store = memoryStore();
    expect(
      planOffloadCompaction(messages, COUNTER, { target: 1, minTokens: 100, reference: store.reference }),
    ).toBeNull();
    expect(store.files.size).toBe(0);
  });

  it.each([
    [{ minKeepSteps: 0 }, /min_keep_steps must be at least 1/],
    [{ minTokens: -1 }, /min_tokens must be a whole number of at least 0/],
    [{ previewChars: -1 }, /preview_chars must be a whole number of at least 0/],
  ])('rejects the invalid setting %j', (settings, message) => {
    expect(() =>
      planOffloadCompaction(conversation('a'), COUNTER, { target: 1, reference: memoryStore().reference, ...settings }),
    ).toThrow(message);
  });
});

describe("Haystack 3.4's _replace_tool_results_until_target cases, replayed through the compactor", () => {
  it('stops after reaching the target, leaving the input list as it was', () => {
    const messages = conversation('a'.repeat(400), 'b'.repeat(400), 'newest');
    const plan = planOffloadCompaction(messages, COUNTER, {
      target: count(messages) - 1,
      minTokens: 0,
      reference: memoryStore().reference,
    });
    expect(plan?.offloads.map((o) => o.index)).toEqual([2]);
    expect(textAt(messages, 2)).toBe('a'.repeat(400));
  });

  it.each([
    [1, [2, 4, 5]],
    [2, [2]],
  ])('keeps the newest %i tool-calling steps, a parallel step together', (minKeepSteps, expected) => {
    const messages: Message[] = [
      ...conversation('old'.repeat(200)),
      {
        role: 'assistant',
        content: content({
          toolCalls: [
            { name: 'search', arguments: '{}', id: 'p1' },
            { name: 'search', arguments: '{}', id: 'p2' },
          ],
        }),
      },
      toolResult('first'.repeat(200), 'p1'),
      toolResult('second'.repeat(200), 'p2'),
      toolCall('newest'),
      toolResult('newest'.repeat(200), 'newest'),
    ];
    const plan = planOffloadCompaction(messages, COUNTER, {
      target: 1,
      minTokens: 0,
      minKeepSteps,
      reference: (at) => `root/${at.index}.txt`,
    });
    expect(plan?.offloads.map((o) => o.index)).toEqual(expected);
  });

  it.each([
    ['the conversation already fits', conversation('a'.repeat(400), 'newest'), 10_000],
    ['every step is protected', conversation('only result'), 1],
  ])('returns null when %s', (_, messages, target) => {
    expect(
      planOffloadCompaction(messages, COUNTER, { target, minTokens: 0, reference: memoryStore().reference }),
    ).toBeNull();
  });
});
