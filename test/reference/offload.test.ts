/**
 * Haystack 3.4's own tests of offloading, in our words, against the reference model (test/reference/offload.ts):
 * `test/hooks/compaction/test_tool_result_offloading.py` and the `_replace_tool_results_until_target` cases of
 * `test_utils.py`. The differential tests then hold swc to this model end to end. Haystack's serialization and async
 * tests have no counterpart: swc's compactor is not serialized and runs in one thread.
 */
import { describe, expect, it } from '@jest/globals';
import { approximateCounter, renderHMessage, type HCounter, type HMessage } from './haystack.js';
import {
  offloadContentBlocks,
  replaceToolResultsUntilTarget,
  toolResultOffloadCompactor,
  type HPart,
  type HStore,
  type Replace,
} from './offload.js';

/** Haystack's `FakeCounter(chars_per_token=1)`: one token a character of the rendered conversation. */
const COUNTER: HCounter = approximateCounter(1);

const task: HMessage = {
  role: 'user',
  texts: ['task'],
  toolCalls: [],
  results: [],
  images: 0,
  files: [],
  meta: {},
};

/** An assistant message calling `search` once per id. */
function toolCall(...ids: string[]): HMessage {
  return {
    ...task,
    role: 'assistant',
    texts: [],
    toolCalls: ids.map((id) => ({ toolName: 'search', id, arguments: {} })),
  };
}

/** A `search` result answering the call `callId`. */
function toolResult(text: string, callId: string, more: { error?: boolean; meta?: HMessage['meta'] } = {}): HMessage {
  return {
    ...task,
    role: 'tool',
    texts: [],
    results: [{ toolName: 'search', id: callId, text, error: more.error ?? false }],
    meta: more.meta ?? {},
  };
}

/** The helpers' `conversation(*results)`: a task, then one step per result (call ids `c0`, `c1`, …). */
function conversation(...results: string[]): HMessage[] {
  return [task, ...results.flatMap((text, k) => [toolCall(`c${k}`), toolResult(text, `c${k}`)])];
}

/** `FileSystemToolResultStore` in memory: keys become file names under `root/`; a repeated key overwrites. */
function memoryStore(binary = true): HStore & { files: Map<string, string | Uint8Array> } {
  const files = new Map<string, string | Uint8Array>();
  return {
    supportsBinaryContent: binary,
    files,
    write(key, content) {
      files.set(`root/${key}`, content);
      return `root/${key}`;
    },
  };
}

const textOf = (m: HMessage | undefined): string => m?.results[0]?.text ?? '';

// A 1x1 PNG padded with 1,000 zero bytes, so its payload outweighs the pointer replacing it.
const PNG = Buffer.concat([
  Buffer.from(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
    'base64',
  ),
  Buffer.alloc(1000),
]);

/** A counter that measures an image or file block by its base64 payload, as a provider's counter does. */
function payloadCounter(partsOf: Map<HMessage, readonly HPart[]>): HCounter {
  return (messages) =>
    messages
      .map((m) => {
        const parts = partsOf.get(m);
        if (parts === undefined) return renderHMessage(m);
        return `[tool:search] ${parts.map((p) => (p.kind === 'text' ? p.text : p.base64)).join('')}`;
      })
      .join('\n').length;
}

describe('ToolResultOffloadCompactor (the reference, by Haystack 3.4 test_tool_result_offloading.py)', () => {
  it('offloads an older result: the pointer, the stored text, the key and the compaction mark', () => {
    const messages = conversation('a'.repeat(400), 'newest');
    const store = memoryStore();
    const out = toolResultOffloadCompactor(messages, 1, COUNTER, {
      store: () => store,
      minTokens: 0,
      previewChars: 5,
    });
    expect(out).not.toBeNull();
    const record = out?.offloaded.get(2);
    expect(record).toEqual({
      references: ['root/compacted_search_c0.txt'],
      originalTokens: COUNTER([messages[2] as HMessage]),
    });
    expect(textOf(out?.messages[2])).toBe(
      "Tool result offloaded to text (400 characters) at 'root/compacted_search_c0.txt'. Preview: aaaaa...",
    );
    expect(store.files.get('root/compacted_search_c0.txt')).toBe('a'.repeat(400));
    expect(out?.messages[2]?.meta).toEqual({ compaction: 'tool_result_offloading', offloaded: true });
    // The newest step's result stays.
    expect(textOf(out?.messages[4])).toBe('newest');
  });

  it('offloads an image result as its bytes, named by its MIME type', () => {
    const image = toolResult('<image>', 'old');
    const messages = [task, toolCall('old'), image, ...conversation('newest').slice(1)];
    const parts = new Map<HMessage, readonly HPart[]>([
      [image, [{ kind: 'image', base64: PNG.toString('base64'), mimeType: 'image/png' }]],
    ]);
    const store = memoryStore();
    const out = toolResultOffloadCompactor(messages, 1, payloadCounter(parts), {
      store: () => store,
      minTokens: 0,
      partsOf: (m) => parts.get(m) ?? [{ kind: 'text', text: textOf(m) }],
    });
    expect(out?.offloaded.get(2)?.references).toEqual(['root/compacted_search_old.png']);
    expect([...store.files.keys()]).toEqual(['root/compacted_search_old.png']);
    expect(Buffer.from(store.files.get('root/compacted_search_old.png') as Uint8Array).equals(PNG)).toBe(true);
    expect(textOf(out?.messages[2])).toBe(
      `Tool result offloaded to image/png (${PNG.length} bytes) at 'root/compacted_search_old.png'`,
    );
  });

  it('skips small results, errors, results already offloaded or compacted, and the newest step', () => {
    const messages: HMessage[] = [
      task,
      toolCall('small'),
      toolResult('small', 'small'),
      toolCall('error'),
      toolResult('error'.repeat(100), 'error', { error: true }),
      toolCall('offloaded'),
      toolResult('offloaded'.repeat(100), 'offloaded', { meta: { offloaded: true } }),
      toolCall('compacted'),
      toolResult('compacted'.repeat(100), 'compacted', { meta: { compaction: 'other' } }),
      toolCall('newest'),
      toolResult('newest', 'newest'),
    ];
    const store = memoryStore();
    expect(toolResultOffloadCompactor(messages, 1, COUNTER, { store: () => store, minTokens: 100 })).toBeNull();
    expect(store.files.size).toBe(0);
  });

  it.each([
    [{ minKeepSteps: 0 }, /`min_keep_steps` must be at least 1/],
    [{ minTokens: -1 }, /`min_tokens` must be at least 0/],
    [{ previewChars: -1 }, /`preview_chars` must be at least 0/],
  ])('refuses the setting %j', (settings, message) => {
    expect(() =>
      toolResultOffloadCompactor(conversation('a'), 1, COUNTER, { store: () => memoryStore(), ...settings }),
    ).toThrow(message);
  });

  it('leaves an image with a text-only store, and an empty result, in context', () => {
    const image = toolResult('<image>', 'old');
    const messages = [
      task,
      toolCall('old'),
      image,
      toolCall('empty'),
      toolResult('', 'empty'),
      toolCall('n'),
      toolResult('n', 'n'),
    ];
    const store = memoryStore(false);
    const out = toolResultOffloadCompactor(messages, 1, COUNTER, {
      store: () => store,
      minTokens: 0,
      partsOf: (m) =>
        m === image
          ? [{ kind: 'image', base64: PNG.toString('base64'), mimeType: 'image/png' }]
          : [{ kind: 'text', text: textOf(m) }],
    });
    expect(out).toBeNull();
    expect(store.files.size).toBe(0);
  });

  it('gives a result of several parts one entry each and a numbered pointer; a file keeps its own extension', () => {
    const store = memoryStore();
    const { references, pointer } = offloadContentBlocks(
      [
        { kind: 'text', text: 'hello world' },
        {
          kind: 'file',
          base64: Buffer.from('%PDF').toString('base64'),
          mimeType: 'application/pdf',
          filename: 'q3.report',
        },
        { kind: 'image', base64: Buffer.from('xx').toString('base64'), mimeType: null },
      ],
      store,
      'compacted_search_c1',
      5,
    );
    expect(references).toEqual([
      'root/compacted_search_c1_0.txt',
      'root/compacted_search_c1_1.report',
      'root/compacted_search_c1_2.bin',
    ]);
    expect(pointer).toBe(
      [
        'Tool result offloaded to 3 files:',
        "1. text (11 characters) at 'root/compacted_search_c1_0.txt'. Preview: hello...",
        "2. application/pdf named 'q3.report' (4 bytes) at 'root/compacted_search_c1_1.report'",
        "3. image (2 bytes) at 'root/compacted_search_c1_2.bin'",
      ].join('\n'),
    );
  });
});

/** `_shorten`: a result replaced by `replaced {index}`, saving what the counter says. */
const shorten: Replace = (message, index) => {
  const shortened = {
    ...message,
    results: [{ ...(message.results[0] as HMessage['results'][number]), text: `replaced ${index}` }],
  };
  return [shortened, COUNTER([message]) - COUNTER([shortened])];
};

const replacedPositions = (messages: readonly HMessage[]): number[] =>
  messages.flatMap((m, index) => (textOf(m) === `replaced ${index}` ? [index] : []));

describe('_replace_tool_results_until_target (the reference, by Haystack 3.4 test_utils.py)', () => {
  it('stops once the running total reaches the target, leaving the input list as it was', () => {
    const messages = conversation('a'.repeat(400), 'b'.repeat(400), 'newest');
    const out = replaceToolResultsUntilTarget(messages, {
      targetTokens: COUNTER(messages) - 1,
      count: COUNTER,
      minKeepSteps: 1,
      replace: shorten,
    });
    expect(replacedPositions(out ?? [])).toEqual([2]);
    expect(replacedPositions(messages)).toEqual([]);
  });

  it.each([
    [1, [2, 4, 5]],
    [2, [2]],
  ])('keeps the newest %i tool-calling steps, a parallel step together', (minKeepSteps, expected) => {
    const messages = [
      ...conversation('old'.repeat(200)),
      toolCall('parallel-1', 'parallel-2'),
      toolResult('first'.repeat(200), 'parallel-1'),
      toolResult('second'.repeat(200), 'parallel-2'),
      toolCall('newest'),
      toolResult('newest'.repeat(200), 'newest'),
    ];
    const out = replaceToolResultsUntilTarget(messages, {
      targetTokens: 1,
      count: COUNTER,
      minKeepSteps,
      replace: shorten,
    });
    expect(replacedPositions(out ?? [])).toEqual(expected);
  });

  it.each([
    ['the conversation already fits', conversation('a'.repeat(400), 'newest'), 10_000, shorten],
    ['every step is protected', conversation('only result'), 1, shorten],
    ['nothing is replaceable', conversation('a'.repeat(400), 'newest'), 1, (() => null) as Replace],
  ])('returns null when %s', (_, messages, targetTokens, replace) => {
    expect(
      replaceToolResultsUntilTarget(messages, { targetTokens, count: COUNTER, minKeepSteps: 1, replace }),
    ).toBeNull();
  });
});
