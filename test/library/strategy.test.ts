// The library's `strategy` option against `swc compact --strategy` on the same messages written as a JSON file.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { planCompaction } from '../../src/core/compact.js';
import { DEFAULT_PLACEHOLDER } from '../../src/core/prune.js';
import { OptionsError } from '../../src/errors.js';
import { compactMessages, createCompactor, swcPrepareStep } from '../../src/library/index.js';
import { createApproxCounter } from '../../src/tokens/approx.js';
import {
  FORMAT_NAMES,
  listOf,
  randomConversation,
  referenceMessages,
  writeAs,
  type FormatName,
} from '../helpers/convert.js';
import { deepFreeze } from '../helpers/fake-counter.js';
import { runSwc } from '../helpers/run-in-process.js';
import { tempDir } from '../helpers/cli.js';
import { scaled, scaledCount } from '../helpers/scale.js';

const CWD = tempDir();

/** The instructions a request body holds beside its list, whatever its format calls them. */
function instructionsOf(container: Record<string, unknown> | null): unknown {
  if (container === null) return undefined;
  return container.system ?? container.instructions ?? container.systemInstruction ?? container.system_instruction;
}

interface Settings {
  readonly target: number;
  /** Instead of `target`: `--context-window` (the default shares), as a multiple of the target. */
  readonly windowed: boolean;
  readonly minKeepSteps: number;
  readonly minTokens: number;
  readonly placeholder: string | undefined;
  readonly note: string | null | undefined;
  readonly chain: 'prune,window' | 'prune' | 'window,prune';
}

/** What `swc compact --strategy CHAIN` writes for the text, as parsed items of its list. */
async function cliItems(format: FormatName, text: string, s: Settings): Promise<unknown[]> {
  const args = ['compact', '-', '--tokenizer', 'approx', '--format', format, '--strategy', s.chain];
  args.push(
    ...(s.windowed ? ['--context-window', String(s.target * 2)] : ['--target', String(s.target)]),
    '--min-keep-steps',
    String(s.minKeepSteps),
    '--min-tokens',
    String(s.minTokens),
  );
  if (s.placeholder !== undefined) args.push('--placeholder', s.placeholder);
  if (s.note === null) args.push('--no-note');
  else if (s.note !== undefined) args.push('--note', s.note);
  const run = await runSwc(args, { cwd: CWD, stdin: text });
  expect(run.status).toBe(0);
  return listOf(format, JSON.parse(run.stdout)).items;
}

const settingsArb = (seed: number): fc.Arbitrary<Settings> => {
  const whole = planCompaction(referenceMessages(randomConversation(seed)), createApproxCounter(), {
    target: 0,
    exhaustive: true,
  }).tokensBefore;
  return fc.record({
    // At least 2: a context window of twice the target must leave compactTo (0.4) of it a token or more, or both
    // sides refuse the options.
    target: fc.integer({ min: Math.max(2, Math.floor(whole / 5)), max: Math.max(2, Math.ceil(whole * 1.1)) }),
    windowed: fc.boolean(),
    minKeepSteps: fc.constantFrom(1, 1, 2, 3),
    minTokens: fc.constantFrom(0, 5, 20, 200),
    placeholder: fc.constantFrom<string | undefined>(
      undefined,
      undefined,
      'gone ({tool_name})',
      '[{"tool": "{tool_name}"}]',
    ),
    note: fc.constantFrom<string | null | undefined>(undefined, undefined, null, 'Dropped {num_removed} messages.'),
    chain: fc.constantFrom<Settings['chain']>('prune,window', 'prune,window', 'prune', 'window,prune'),
  });
};

describe('compactMessages with strategy', () => {
  it('gives exactly what swc compact --strategy gives for the same JSON file, OpenAI and Haystack', async () => {
    let pruned = 0;
    let removed = 0;
    await fc.assert(
      fc.asyncProperty(
        fc
          .integer({ min: 1, max: 1_000_000 })
          .chain((seed) =>
            fc.tuple(fc.constant(seed), settingsArb(seed), fc.constantFrom<FormatName>('openai', 'haystack')),
          ),
        async ([seed, settings, format]) => {
          const written = writeAs(format, randomConversation(seed));
          const input = deepFreeze(listOf(format, JSON.parse(written.text)).items);
          const before = JSON.stringify(input);
          const { chain, windowed, target, ...options } = settings;
          const budget = windowed ? { contextWindow: target * 2 } : { target };
          const result = await compactMessages(input, {
            ...options,
            ...budget,
            strategy: chain,
            tokenizer: 'approx',
            format,
          });
          const expected = await cliItems(format, written.text, settings);
          expect(JSON.stringify(result.messages)).toBe(JSON.stringify(expected));
          expect(result.changed).toBe(JSON.stringify(expected) !== before);
          expect(JSON.stringify(input)).toBe(before);
          if (!result.changed) {
            expect(result.messages).toEqual(input);
            result.messages.forEach((m, k) => expect(m).toBe(input[k]));
            return;
          }
          // Kept messages in order: the very objects passed in, unless pruned (a new object that reads differently).
          const plan = result.plan;
          const out = result.messages.filter((_, k) => plan.noteText === null || k !== plan.noteIndex);
          expect(out.length).toBe(plan.kept.length);
          out.forEach((m, k) => {
            const original = input[plan.kept[k] as number];
            if (m === original) return;
            pruned++;
            expect(JSON.stringify(m)).not.toBe(JSON.stringify(original));
            expect(Object.isFrozen(m)).toBe(false);
          });
          if (plan.removedCount > 0) removed++;
        },
      ),
      { numRuns: scaled(150) },
    );
    expect(pruned).toBeGreaterThan(scaledCount(20, 150));
    expect(removed).toBeGreaterThan(scaledCount(20, 150));
  });

  it('gives what swc compact --strategy gives in the other formats too, instructions held beside the list', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc
          .integer({ min: 1, max: 1_000_000 })
          .chain((seed) =>
            fc.tuple(fc.constant(seed), settingsArb(seed), fc.constantFrom<FormatName>(...FORMAT_NAMES)),
          ),
        async ([seed, settings, format]) => {
          const written = writeAs(format, randomConversation(seed));
          const { items, container } = listOf(format, JSON.parse(written.text));
          const input = deepFreeze(items);
          const before = JSON.stringify(input);
          const { chain, windowed, target, ...options } = settings;
          const budget = windowed ? { contextWindow: target * 2 } : { target };
          const result = await compactMessages(input, {
            ...options,
            ...budget,
            strategy: chain,
            tokenizer: 'approx',
            format,
            system: instructionsOf(container),
          });
          expect(JSON.stringify(result.messages)).toBe(JSON.stringify(await cliItems(format, written.text, settings)));
          expect(JSON.stringify(input)).toBe(before);
        },
      ),
      { numRuns: scaled(100) },
    );
  });

  it('takes a name, a list or a comma-separated chain alike', async () => {
    const input = deepFreeze(listOf('openai', JSON.parse(writeAs('openai', randomConversation(7)).text)).items);
    const a = await compactMessages(input, {
      target: 60,
      tokenizer: 'approx',
      // Spaces after the comma are read as --strategy reads them, though the type names chains without them.
      strategy: 'prune, window' as never,
      minTokens: 0,
    });
    const b = await compactMessages(input, {
      target: 60,
      tokenizer: 'approx',
      strategy: ['prune', 'window'],
      minTokens: 0,
    });
    expect(a.changed).toBe(true);
    expect(JSON.stringify(b.messages)).toBe(JSON.stringify(a.messages));
    const window = await compactMessages(input, { target: 60, tokenizer: 'approx', strategy: 'window' });
    const plain = await compactMessages(input, { target: 60, tokenizer: 'approx' });
    expect(JSON.stringify(window.messages)).toBe(JSON.stringify(plain.messages));
  });

  it('writes the placeholder into a pruned OpenAI tool message, a new object; the input stays as it was', async () => {
    const big = 'word '.repeat(400);
    const call = (id: string) => ({
      role: 'assistant',
      content: null,
      tool_calls: [{ id, type: 'function', function: { name: 'search', arguments: '{}' } }],
    });
    const input = deepFreeze([
      { role: 'user', content: 'Find it.' },
      call('a'),
      { role: 'tool', tool_call_id: 'a', content: big },
      call('b'),
      { role: 'tool', tool_call_id: 'b', content: big },
    ]);
    const compactor = await createCompactor({ target: 600, tokenizer: 'approx', strategy: 'prune' });
    const { messages, changed } = await compactor.compact(input);
    expect(changed).toBe(true);
    expect(messages).toHaveLength(5);
    expect(messages[2]).toEqual({
      role: 'tool',
      tool_call_id: 'a',
      content: DEFAULT_PLACEHOLDER.replace('{tool_name}', 'search'),
    });
    [0, 1, 3, 4].forEach((k) => expect(messages[k]).toBe(input[k]));
    expect(input[2]).toEqual({ role: 'tool', tool_call_id: 'a', content: big });
  });

  it('prunes AI SDK tool results in a prepareStep, each output kind written in its own shape, as swc compact does', async () => {
    const big = 'word '.repeat(400);
    const call = (id: string) => ({
      role: 'assistant',
      content: [{ type: 'tool-call', toolCallId: id, toolName: 'search', input: { q: id } }],
    });
    const result = (id: string, fields: Record<string, unknown>) => ({
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId: id, toolName: 'search', ...fields }],
    });
    const messages = deepFreeze([
      { role: 'user', content: 'Find it.' },
      call('a'),
      result('a', { output: { type: 'text', value: big } }),
      call('b'),
      result('b', { output: { type: 'json', value: { hits: [big] } } }),
      call('c'),
      result('c', { output: { type: 'error-text', value: big } }),
      call('d'),
      result('d', { output: { type: 'content', value: [{ type: 'text', text: big }] } }),
      call('e'),
      result('e', { result: big }),
      call('f'),
      result('f', { output: { type: 'text', value: big } }),
    ]);
    const step = await swcPrepareStep({ target: 400, tokenizer: 'approx', strategy: 'prune' })({ messages });
    const out = step?.messages ?? [];
    const placeholder = DEFAULT_PLACEHOLDER.replace('{tool_name}', 'search');
    const part = (k: number): unknown => (out[k] as { content: unknown[] }).content[0];
    expect(part(2)).toEqual({
      type: 'tool-result',
      toolCallId: 'a',
      toolName: 'search',
      output: { type: 'text', value: placeholder },
    });
    expect(part(4)).toEqual({
      type: 'tool-result',
      toolCallId: 'b',
      toolName: 'search',
      output: { type: 'json', value: placeholder },
    });
    expect(part(6)).toEqual({
      type: 'tool-result',
      toolCallId: 'c',
      toolName: 'search',
      output: { type: 'error-text', value: placeholder },
    });
    expect(part(8)).toEqual({
      type: 'tool-result',
      toolCallId: 'd',
      toolName: 'search',
      output: { type: 'text', value: placeholder },
    });
    expect(part(10)).toEqual({ type: 'tool-result', toolCallId: 'e', toolName: 'search', result: placeholder });
    // The newest step's results stay, as every message not pruned: the very objects passed in.
    [0, 1, 3, 5, 7, 9, 11, 12].forEach((k) => expect(out[k]).toBe(messages[k]));
    const cli = await runSwc(['compact', '-', '--tokenizer', 'approx', '--target', '400', '--strategy', 'prune'], {
      cwd: CWD,
      stdin: JSON.stringify(messages, null, 2),
    });
    expect(cli.status).toBe(0);
    expect(JSON.parse(cli.stdout)).toEqual(out);
    // What was written reads back as pruned: a second run prunes nothing more.
    const again = await compactMessages(out, { target: 400, tokenizer: 'approx', strategy: 'prune', format: 'ai-sdk' });
    expect(again.changed).toBe(false);
  });

  it('refuses what the command line refuses, and offloading, which writes files', async () => {
    const refuse = async (options: Record<string, unknown>, message: RegExp): Promise<void> => {
      await expect(compactMessages([], { target: 100, ...options })).rejects.toThrow(OptionsError);
      await expect(compactMessages([], { target: 100, ...options })).rejects.toThrow(message);
      expect(() => swcPrepareStep({ target: 100, ...options })).toThrow(message);
    };
    await refuse({ strategy: 'prune', minKeepSteps: 0 }, /minKeepSteps must be at least 1 with strategy prune/);
    await refuse({ strategy: 'offload' }, /strategy offload writes each result to a file/);
    await refuse({ strategy: ['prune', 'offload'] }, /strategy offload/);
    await refuse({ strategy: 'prune,prune' }, /names "prune" twice/);
    await refuse({ strategy: 'trim' }, /unknown strategy "trim"/);
    await refuse({ strategy: 'prune,' }, /strategy has an empty name in "prune,"/);
    await refuse({ strategy: [] }, /names no strategy/);
    await refuse({ minTokens: 10 }, /minTokens only applies with strategy prune/);
    await refuse({ strategy: 'prune', minTokens: -1 }, /minTokens must be a whole number/);
    await refuse({ placeholder: 'x' }, /placeholder only applies with strategy prune/);
    await refuse({ strategy: 'prune', placeholder: '' }, /placeholder must not be empty/);
    // The window alone still takes minKeepSteps 0.
    await expect(compactMessages([], { target: 100, minKeepSteps: 0, strategy: 'window' })).resolves.toMatchObject({
      changed: false,
    });
  });
});
