import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { planCompaction, type Plan } from '../../src/core/compact.js';
import { InputError, OptionsError } from '../../src/errors.js';
import { decodeSource } from '../../src/io/source.js';
import { compactMessages, createCompactor } from '../../src/library/index.js';
import { compactSource } from '../../src/pipeline/index.js';
import { createApproxCounter } from '../../src/tokens/approx.js';
import {
  FORMAT_NAMES,
  listOf,
  randomConversation,
  referenceMessages,
  writeAs,
  type Conversation,
  type FormatName,
} from '../helpers/convert.js';
import { deepFreeze } from '../helpers/fake-counter.js';
import { scaled, scaledCount } from '../helpers/scale.js';

/** The instructions a request body holds beside its list, whatever its format calls them. */
function instructionsOf(container: Record<string, unknown> | null): unknown {
  if (container === null) return undefined;
  return container.system ?? container.instructions ?? container.systemInstruction ?? container.system_instruction;
}

interface Settings {
  readonly target: number;
  readonly minKeepSteps: number;
  readonly note: string | null | undefined;
}

/** What `swc compact` writes for a file, as parsed items of its list. */
async function cliItems(format: FormatName, text: string, name: string, settings: Settings): Promise<unknown[]> {
  const result = await compactSource(decodeSource(Buffer.from(text), name), {
    ...settings,
    counter: createApproxCounter(),
  });
  const output = result.output;
  if (name.endsWith('.jsonl'))
    return output
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as unknown);
  return listOf(format, JSON.parse(output)).items;
}

const settingsArb = (conversation: Conversation): fc.Arbitrary<Settings> => {
  const whole = planCompaction(referenceMessages(conversation), createApproxCounter(), {
    target: 0,
    exhaustive: true,
  }).tokensBefore;
  return fc.record({
    target: fc.integer({ min: Math.max(1, Math.floor(whole / 5)), max: Math.max(1, Math.ceil(whole * 1.1)) }),
    minKeepSteps: fc.constantFrom(0, 1, 1, 2, 3),
    note: fc.constantFrom<string | null | undefined>(undefined, undefined, null, '', 'Dropped {num_removed} messages.'),
  });
};

describe('compactMessages', () => {
  it('keeps exactly what swc compact keeps of the same messages written as a JSON file, in every format', async () => {
    let changed = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 1_000_000 }).chain((seed) => {
          const conversation = randomConversation(seed);
          return fc.tuple(
            fc.constant(seed),
            settingsArb(conversation),
            fc.constantFrom<FormatName>(...FORMAT_NAMES),
            fc.boolean(),
          );
        }),
        async ([seed, settings, format, named]) => {
          const conversation = randomConversation(seed);
          const written = writeAs(format, conversation);
          const { items, container } = listOf(format, JSON.parse(written.text));
          const input = deepFreeze(items);
          const before = JSON.stringify(input);
          const result = await compactMessages(input, {
            ...settings,
            tokenizer: 'approx',
            format: named ? format : 'auto',
            system: instructionsOf(container),
          });
          const expected = await cliItems(format, written.text, written.name, settings);
          expect(JSON.stringify(result.messages)).toBe(JSON.stringify(expected));
          expect(result.changed).toBe(JSON.stringify(expected) !== before);
          if (result.changed) changed++;
          // Kept messages are the objects passed in, in input order; the rest is at most one new note.
          let from = 0;
          const fresh = result.messages.filter((m) => {
            const at = input.indexOf(m, from);
            if (at === -1) return true;
            from = at + 1;
            return false;
          });
          expect(fresh.length).toBeLessThanOrEqual(1);
          expect(result.messages).not.toBe(input);
          expect(JSON.stringify(input)).toBe(before);
        },
      ),
      { numRuns: scaled(300) },
    );
    expect(changed).toBeGreaterThan(scaledCount(50, 300));
  });

  it('returns a new array holding the very objects passed in, and the note in the format’s own shape', async () => {
    const messages = deepFreeze([
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'Old question. '.repeat(50) },
      { role: 'assistant', content: 'Old answer. '.repeat(50) },
      { role: 'user', content: 'What now?' },
    ]);
    const result = await compactMessages(messages, { format: 'openai', target: 40, tokenizer: 'approx' });
    expect(result.changed).toBe(true);
    expect(result.format).toBe('openai');
    expect(result.messages).toHaveLength(3);
    expect(result.messages[0]).toBe(messages[0]);
    expect(result.messages[1]).toEqual({
      role: 'user',
      content: '[2 earlier messages were removed from this conversation to free up context and cannot be recovered.]',
    });
    expect(result.messages[2]).toBe(messages[3]);
    expect(result.plan.removed).toEqual([1, 2]);
  });

  it('decides the same with a counter that reverses the list it is given in place as with one that copies it first', async () => {
    const total = (list: readonly { text: string }[]): number =>
      list.reduce((a, r) => a + Math.ceil(r.text.length / 4) + 1, 0);
    const inPlace = {
      name: 'in-place',
      measure: (list: readonly { text: string }[]) => total((list as { text: string }[]).reverse()),
    };
    const copying = { name: 'copying', measure: (list: readonly { text: string }[]) => total([...list].reverse()) };
    let changed = 0;
    for (let seed = 1; seed <= scaled(20); seed++) {
      const { items } = listOf('openai', JSON.parse(writeAs('openai', randomConversation(seed)).text));
      const a = await compactMessages(items, {
        format: 'openai',
        target: 60,
        strategy: 'prune,window',
        minTokens: 0,
        counter: inPlace,
      });
      const b = await compactMessages(items, {
        format: 'openai',
        target: 60,
        strategy: 'prune,window',
        minTokens: 0,
        counter: copying,
      });
      expect(a.messages).toEqual(b.messages);
      expect(a.plan.tokensAfter).toBe(b.plan.tokensAfter);
      changed += a.changed ? 1 : 0;
    }
    expect(changed).toBeGreaterThan(scaledCount(10, 20));
  });

  it('hands back a copy of the array when nothing changes', async () => {
    const messages = deepFreeze([{ role: 'user', content: 'hi' }]);
    const result = await compactMessages(messages, { target: 1000, tokenizer: 'approx' });
    expect(result.changed).toBe(false);
    expect(result.messages).toEqual(messages);
    expect(result.messages).not.toBe(messages);
    expect(result.messages[0]).toBe(messages[0]);
  });

  it('measures instructions held outside the list and never returns them', async () => {
    const messages = deepFreeze([
      { role: 'user', content: 'Old question. '.repeat(50) },
      { role: 'assistant', content: 'Old answer. '.repeat(50) },
      { role: 'user', content: 'What now?' },
    ]);
    const system = 'Be brief. '.repeat(30);
    const result = await compactMessages(messages, { target: 100, tokenizer: 'approx', system });
    expect(result.format).toBe('anthropic');
    expect(result.plan.kept[0]).toBe(0); // the instructions, message 0 of the decision
    expect(result.messages.map((m) => m.role)).toEqual(['user', 'user']);
    expect(result.messages[1]).toBe(messages[2]);
    expect(result.plan.tokensAfter).toBeGreaterThan(75);
  });

  it('builds the note with createNote when given', async () => {
    class Human {
      constructor(readonly content: string) {}
    }
    const messages = [
      { type: 'human', data: { content: 'Old question. '.repeat(50) } },
      { type: 'ai', data: { content: 'Old answer. '.repeat(50) } },
      { type: 'human', data: { content: 'What now?' } },
    ];
    const result = await compactMessages<unknown>(messages, {
      target: 30,
      tokenizer: 'approx',
      createNote: (text) => new Human(text),
    });
    expect(result.format).toBe('langchain');
    expect(result.messages[1]).toBe(messages[2]);
    expect(result.messages[0]).toBeInstanceOf(Human);
  });

  it('compacts with context-window thresholds only once the conversation reaches the trigger', async () => {
    const messages = deepFreeze([
      { role: 'user', content: 'x'.repeat(400) },
      { role: 'assistant', content: 'y'.repeat(400) },
      { role: 'user', content: 'task' },
    ]);
    // approx: about 203 tokens. A 300-token window triggers at 210, a 280-token one at 196.
    expect((await compactMessages(messages, { contextWindow: 300, tokenizer: 'approx' })).changed).toBe(false);
    const small = await compactMessages(messages, { contextWindow: 280, tokenizer: 'approx' });
    expect(small.changed).toBe(true);
    expect(small.messages).toHaveLength(2);
  });

  it('refuses a message that does not fit the format with one InputError naming its index', async () => {
    const compactor = await createCompactor({ format: 'openai', target: 10, tokenizer: 'approx' });
    const bad = [{ role: 'user', content: 'a' }, 42, { role: 'user', content: 'b' }];
    await expect(compactor.compact(bad)).rejects.toThrow(InputError);
    await expect(compactor.compact(bad)).rejects.toThrow('messages[1]: expected a message object, found a number');
    await expect(compactor.compact([{ role: 'wizard', content: 'a' }])).rejects.toThrow(
      /^messages\[0\]: unknown role "wizard"/,
    );
  });

  it('refuses a cyclic message and a value that is not JSON, naming its index', async () => {
    const compactor = await createCompactor({ target: 10, tokenizer: 'approx' });
    const cyclic: Record<string, unknown> = { role: 'user', content: 'a' };
    cyclic.self = cyclic;
    await expect(compactor.compact([{ role: 'user', content: 'x' }, cyclic])).rejects.toThrow(
      /^messages\[1\]: a message that refers to itself/,
    );
    await expect(compactor.compact([{ role: 'user', content: 1n }])).rejects.toThrow(
      /^messages\[0\]: cannot be written as JSON/,
    );
    await expect(compactor.compact([undefined])).rejects.toThrow(/^messages\[0\]: expected a message, found undefined/);
    // A hole in a sparse array, and a length past the last element, are refused the same way (not a TypeError).
    const sparse: unknown[] = [{ role: 'user', content: 'x' }];
    sparse[2] = { role: 'user', content: 'y' };
    await expect(compactor.compact(sparse)).rejects.toThrow(InputError);
    await expect(compactor.compact(sparse)).rejects.toThrow(/^messages\[1\]: expected a message, found undefined/);
    const long: unknown[] = [{ role: 'user', content: 'x' }];
    long.length = 2;
    await expect(compactor.compact(long)).rejects.toThrow(/^messages\[1\]: expected a message, found undefined/);
    await expect(compactor.compact('hello' as unknown as unknown[])).rejects.toThrow(/expected an array of messages/);
  });

  it('refuses contradictory or out-of-range options with an OptionsError', async () => {
    await expect(createCompactor({})).rejects.toThrow(OptionsError);
    await expect(createCompactor({ target: 10, contextWindow: 100 })).rejects.toThrow(
      'target and contextWindow both set the budget',
    );
    await expect(createCompactor({ contextWindow: 100, compactAt: 0.3, compactTo: 0.5 })).rejects.toThrow(
      'compactTo (0.5) must be below compactAt (0.3)',
    );
    await expect(createCompactor({ target: 0 })).rejects.toThrow('target must be a whole number of at least 1');
    await expect(createCompactor({ target: 10, format: 'openai', system: 'x' })).rejects.toThrow(
      'keeps its instructions in the message list',
    );
    await expect(createCompactor({ target: 10, format: 'nope' as 'openai' })).rejects.toThrow('unknown format "nope"');
  });

  it('types: a typed array comes back with its own element type', async () => {
    interface ChatMessage {
      role: 'system' | 'user' | 'assistant';
      content: string;
    }
    const messages: ChatMessage[] = [{ role: 'user', content: 'hi' }];
    const result = await compactMessages(messages, { target: 100, tokenizer: 'approx' });
    const first: ChatMessage | undefined = result.messages[0];
    expect(first?.role).toBe('user');
  });
});

describe('compactMessages on messages of no known format', () => {
  it('says it cannot tell the format and names the option to pass', async () => {
    await expect(compactMessages([{ foo: 1 }], { target: 10, tokenizer: 'approx' })).rejects.toThrow(
      /^messages: cannot tell the transcript format of the messages \(first item has keys "foo"\); pass the format option \(/,
    );
  });
});

describe('compactMessages on OpenAI chat arrays', () => {
  it('keeps what an independent model of the conversation keeps, and hands back the objects passed in', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.double({ min: 0.2, max: 1.1, noNaN: true }),
        fc.constantFrom(0, 1, 2),
        async (seed, share, minKeepSteps) => {
          const conversation = randomConversation(seed);
          const reference = referenceMessages(conversation);
          const whole = planCompaction(reference, createApproxCounter(), { target: 0, exhaustive: true }).tokensBefore;
          const target = Math.max(1, Math.floor(whole * share));
          const expected = planCompaction(reference, createApproxCounter(), { target, minKeepSteps });
          const written = writeAs('openai', conversation);
          const input = deepFreeze(listOf('openai', JSON.parse(written.text)).items);
          const result = await compactMessages(input, { target, minKeepSteps, tokenizer: 'approx' });
          const keptItems = new Set(result.messages.map((m) => input.indexOf(m)));
          expect({ seed, kept: written.itemOf.map((item) => item !== null && keptItems.has(item)) }).toEqual({
            seed,
            kept: conversation.map((_, i) => expected.kept.includes(i)),
          });
          expect(result.changed).toBe(expected.changed);
          expect(result.plan.noteText).toBe(expected.noteText);
        },
      ),
      { numRuns: scaled(200) },
    );
  });
});

describe('compactMessages at the edges', () => {
  it('hands back an empty list as it is, with or without instructions beside it', async () => {
    expect((await compactMessages([], { target: 10, tokenizer: 'approx' })).messages).toEqual([]);
    const withSystem = await compactMessages([], { target: 10, tokenizer: 'approx', system: 'Be brief.' });
    expect(withSystem.changed).toBe(false);
    expect(withSystem.messages).toEqual([]);
  });

  it('refuses instructions beside OpenAI chat messages, which keep theirs in the list', async () => {
    const messages = [
      { role: 'user', content: 'hi' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c', content: 'ok' },
    ];
    await expect(compactMessages(messages, { target: 10, tokenizer: 'approx', system: 'Be brief.' })).rejects.toThrow(
      'system: the openai format keeps its instructions in the message list',
    );
  });
});

describe('compactMessages with tool schemas', () => {
  it('takes their tokens off both thresholds, as the command line does for a request body', async () => {
    const tools = [
      {
        type: 'function',
        function: {
          name: 'search',
          description: 'Search the web. '.repeat(20),
          parameters: { type: 'object', properties: { q: { type: 'string' } } },
        },
      },
    ];
    const messages = [
      { role: 'user', content: 'x'.repeat(400) },
      { role: 'assistant', content: 'y'.repeat(400) },
      { role: 'user', content: 'task' },
    ];
    const text = JSON.stringify({ tools, messages });
    const cli = await compactSource(decodeSource(Buffer.from(text), 'x.json'), {
      target: 0,
      window: { trigger: 280, target: 200 },
      counter: createApproxCounter(),
    });
    const library = await compactMessages(messages, {
      contextWindow: 400,
      compactAt: 0.7,
      compactTo: 0.5,
      tools,
      tokenizer: 'approx',
    });
    expect(cli.conversations[0]?.toolTokens).toBeGreaterThan(50);
    expect(library.changed).toBe(cli.changed);
    // The same decision; where it stopped counting, the library counts the whole as the command line's outcome does.
    const cliPlan = cli.conversations[0]?.plan as Plan;
    expect({ ...library.plan, tokensBefore: 0, tokensBeforeExact: true }).toEqual({
      ...cliPlan,
      tokensBefore: 0,
      tokensBeforeExact: true,
    });
    expect({ tokens: library.plan.tokensBefore, exact: library.plan.tokensBeforeExact }).toEqual({
      tokens: cli.conversations[0]?.outcome.before.tokens,
      exact: true,
    });
    expect(library.changed).toBe(true);
    // Without them the conversation stays under the trigger.
    expect(
      (await compactMessages(messages, { contextWindow: 400, compactAt: 0.7, compactTo: 0.5, tokenizer: 'approx' }))
        .changed,
    ).toBe(false);
  });

  it('refuses schemas that are not JSON', async () => {
    const tools: Record<string, unknown> = {};
    tools.self = tools;
    await expect(createCompactor({ target: 10, tools })).rejects.toThrow(/^tools must be the JSON tool schemas/);
  });
});
