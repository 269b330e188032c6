/**
 * What a compaction forgets: the inventory (removed and pruned text against what stays, offloaded results
 * recoverable), summaries' retention and the --min-retention check, and a property of the library's `forgotten`
 * against an independent model that knows by construction which words are identifiers.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { textContent } from '../../src/core/render.js';
import type { Message } from '../../src/core/types.js';
import { compactMessages } from '../../src/library/index.js';
import {
  inventoryOf,
  parseRetention,
  retentionFailure,
  retentionOf,
  type InventoryInput,
} from '../../src/outcome/forgotten.js';

const user = (text: string): Message => ({ role: 'user', content: textContent(text) });
const result = (text: string): Message => ({
  role: 'tool',
  content: {
    texts: [],
    toolCalls: [],
    results: [{ name: 'search', text, error: false, images: 0, files: 0 }],
    images: 0,
    files: [],
  },
});

function input(original: Message[], over: Partial<InventoryInput>): InventoryInput {
  return {
    original,
    decided: original,
    kept: [],
    removed: [],
    replaced: [],
    offloaded: [],
    added: [],
    positionOf: (m) => m,
    ...over,
  };
}

describe('inventoryOf', () => {
  it('lists what only removed messages name, once, at the first message naming it', () => {
    const messages = [user('edit src/a.ts and src/b.ts'), user('src/a.ts threw TypeError'), user('keep src/b.ts')];
    const inventory = inventoryOf(input(messages, { removed: [0, 1], kept: [2] }));
    expect(inventory.forgotten).toEqual([
      { kind: 'path', value: 'src/a.ts', message: 0 },
      { kind: 'error', value: 'TypeError', message: 1 },
    ]);
    expect(inventory.recoverable).toEqual([]);
  });

  it('counts what the note or a summary names as kept', () => {
    const messages = [user('edit src/a.ts'), user('task')];
    expect(
      inventoryOf(input(messages, { removed: [0], kept: [1], added: ['summary: src/a.ts was edited'] })).forgotten,
    ).toEqual([]);
  });

  it('takes a pruned result’s original text as leaving, and its placeholder as what stays', () => {
    const original = [user('task'), result('ENOENT: /etc/app.yml')];
    const decided = [original[0] as Message, result('[pruned]')];
    expect(
      inventoryOf(input(original, { decided, kept: [0, 1], replaced: [1] })).forgotten.map((id) => id.value),
    ).toEqual(['ENOENT', '/etc/app.yml']);
  });

  it('lists what offloaded results name as recoverable, before any removed message naming it too', () => {
    const original = [user('ENOENT again'), user('task'), result('ENOENT: /etc/app.yml')];
    const decided = [
      original[0] as Message,
      original[1] as Message,
      result("Tool result offloaded to '/s/1.txt' (20 characters). Preview: ENO"),
    ];
    const inventory = inventoryOf(input(original, { decided, kept: [1, 2], removed: [0], offloaded: [2] }));
    expect(inventory.recoverable.map((id) => [id.value, id.message])).toEqual([
      ['ENOENT', 2],
      ['/etc/app.yml', 2],
    ]);
    expect(inventory.forgotten).toEqual([]);
  });

  it('takes a path a kept longer path holds as kept: its file name and its folders', () => {
    const messages = [
      user('see fields.py and src/marshmallow, then lib/other.py'),
      user('open /testbed/src/marshmallow/fields.py'),
    ];
    expect(inventoryOf(input(messages, { removed: [0], kept: [1] })).forgotten.map((id) => id.value)).toEqual([
      'lib/other.py',
    ]);
  });

  it('reports the position the caller gives a message (its item in the file)', () => {
    const messages = [user('src/a.ts'), user('task')];
    expect(
      inventoryOf(input(messages, { removed: [0], kept: [1], positionOf: (m) => m + 10 })).forgotten[0]?.message,
    ).toBe(10);
  });
});

describe('retention of a summary', () => {
  const replaced = [
    user('fixed src/auth/login.ts line 42, commit 3f63cd0'),
    user('TypeError in src/auth/login.ts and https://a.example/x'),
  ];

  it('is the share of the replaced messages’ identifiers the summary still names', () => {
    const r = retentionOf(replaced, 'We fixed src/auth/login.ts (TypeError).');
    expect([r.kept, r.total]).toEqual([2, 4]);
    expect(r.fraction).toBe(0.5);
    expect(r.lost.map((id) => id.value)).toEqual(['3f63cd0', 'https://a.example/x']);
  });

  it('is 1 when the replaced messages name nothing', () => {
    expect(retentionOf([user('hello there')], 'greetings').fraction).toBe(1);
  });

  it('drifting from "auth.py line 42" to "authentication" keeps nothing', () => {
    expect(retentionOf([user('the bug is in auth.py:42')], 'the bug is in authentication').fraction).toBe(0);
  });

  it('--min-retention fails a summary keeping less than the share asked, and passes one at it', () => {
    const r = retentionOf(replaced, 'We fixed src/auth/login.ts (TypeError).');
    expect(retentionFailure(r, 0.5)).toBeNull();
    expect(retentionFailure(r, 0.75)).toBe('the summary keeps 2 of 4 identifiers (50%), under --min-retention 0.75');
  });

  it.each([
    ['0.8', 0.8],
    ['80%', 0.8],
    ['0', 0],
    ['1', 1],
  ])('reads --min-retention %s as %d', (text, value) => {
    expect(parseRetention(text)).toBeCloseTo(value);
  });

  it.each(['', '1.5', '-0.1', 'half', '120%'])('refuses --min-retention %j', (text) => {
    expect(() => parseRetention(text)).toThrow(RangeError);
  });
});

/** Words the model knows: identifiers with their kind and value, and filler that is none. */
const POOL = [
  { word: 'src/a.ts', kind: 'path', value: 'src/a.ts' },
  { word: 'lib/b.py:12', kind: 'path', value: 'lib/b.py' },
  { word: '/etc/hosts', kind: 'path', value: '/etc/hosts' },
  { word: 'C:\\work\\x.txt', kind: 'path', value: 'C:\\work\\x.txt' },
  { word: 'https://a.example/x', kind: 'url', value: 'https://a.example/x' },
  { word: 'http://b.example', kind: 'url', value: 'http://b.example' },
  { word: '3f63cd0', kind: 'hash', value: '3f63cd0' },
  { word: '5c0375b4-57a5-4f26-b12d-d022ee4e51b7', kind: 'uuid', value: '5c0375b4-57a5-4f26-b12d-d022ee4e51b7' },
  { word: 'TypeError', kind: 'error', value: 'TypeError' },
  { word: 'ENOENT', kind: 'error', value: 'ENOENT' },
  { word: '`planChain`', kind: 'symbol', value: 'planChain' },
] as const;
const FILLER = ['the', 'fix', 'crash', 'now', 'and', 'then'];

/** The model's identifiers of a text: the pool words in it (texts are pool and filler words joined by spaces). */
function modelIds(text: string): string[] {
  return text.split(' ').flatMap((w) => POOL.filter((p) => p.word === w).map((p) => `${p.kind}:${p.value}`));
}

const textArb = fc
  .array(fc.oneof(fc.constantFrom(...POOL.map((p) => p.word)), fc.constantFrom(...FILLER)), {
    minLength: 1,
    maxLength: 5,
  })
  .map((w) => w.join(' '));

type Chat = Record<string, unknown>;

/** An OpenAI chat: instructions, turns (a question and an answer), the task, then steps (a call and its result). */
const chatArb = fc
  .record({
    turns: fc.array(fc.tuple(textArb, textArb), { maxLength: 4 }),
    task: textArb,
    steps: fc.array(fc.tuple(textArb, textArb), { maxLength: 4 }),
    target: fc.integer({ min: 20, max: 400 }),
    prune: fc.boolean(),
  })
  .map(({ turns, task, steps, target, prune }) => {
    const messages: Chat[] = [{ role: 'system', content: 'You are an agent.' }];
    for (const [q, a] of turns) messages.push({ role: 'user', content: q }, { role: 'assistant', content: a });
    messages.push({ role: 'user', content: task });
    steps.forEach(([args, out], k) => {
      messages.push({
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: `c${k}`, type: 'function', function: { name: 'search', arguments: JSON.stringify({ q: args }) } },
        ],
      });
      // Long enough for pruning to save something on it.
      messages.push({ role: 'tool', tool_call_id: `c${k}`, content: `${out}${' then'.repeat(30)}` });
    });
    return { messages, target, prune };
  });

/** The texts of a chat message as the model reads them: its content, and its calls' `q`. */
function textsOf(m: Chat): string[] {
  const out: string[] = [];
  if (typeof m.content === 'string') out.push(m.content);
  for (const c of (m.tool_calls as { function: { arguments: string } }[] | undefined) ?? [])
    out.push((JSON.parse(c.function.arguments) as { q: string }).q);
  return out;
}

describe("the library's forgotten, against a model", () => {
  it('names exactly what left (removed or pruned) and nothing the output still names', async () => {
    let pruned = 0;
    await fc.assert(
      fc.asyncProperty(chatArb, async ({ messages, target, prune }) => {
        const note = (text: string): Chat => ({ role: 'user', content: text, note: true });
        const out = await compactMessages(messages, {
          target,
          tokenizer: 'approx',
          format: 'openai',
          createNote: note,
          ...(prune ? { strategy: 'prune,window', minTokens: 5 } : {}),
        });
        const kept = new Set<unknown>(out.messages);
        // What left: removed messages, and the originals of those the output holds as new objects (pruned).
        const outputIds = new Set(out.messages.flatMap((m) => textsOf(m as Chat).flatMap(modelIds)));
        const removedIds = new Set(messages.filter((m) => !kept.has(m)).flatMap((m) => textsOf(m).flatMap(modelIds)));
        const expected = new Map<string, number>();
        messages.forEach((m, k) => {
          if (kept.has(m)) return;
          for (const id of textsOf(m).flatMap(modelIds))
            if (!outputIds.has(id) && !expected.has(id)) expected.set(id, k);
        });
        if (out.messages.some((m) => !messages.includes(m as Chat) && (m as Chat).note !== true)) pruned++;
        const got = new Map(out.forgotten.map((id) => [`${id.kind}:${id.value}`, id.message]));
        expect(got).toEqual(expected);
        for (const id of got.keys()) {
          expect(outputIds.has(id)).toBe(false);
          expect(removedIds.has(id)).toBe(true);
        }
      }),
      { numRuns: 150 },
    );
    // The runs did prune results that stay, not only remove whole messages.
    expect(pruned).toBeGreaterThan(0);
  });
});
