import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { planCompaction } from '../../src/core/compact.js';
import { renderMessage } from '../../src/core/render.js';
import { decodeSource } from '../../src/io/source.js';
import { compactMessages } from '../../src/library/index.js';
import { compactSource, type FileResult } from '../../src/pipeline/index.js';
import { createApproxCounter } from '../../src/tokens/approx.js';
import { writeAiSdk, type AiSdkStyle } from '../helpers/ai-sdk.js';
import { ROOT, tempDir } from '../helpers/cli.js';
import { randomConversation, referenceMessages, writeAs, FORMAT_NAMES, listOf } from '../helpers/convert.js';
import { deepFreeze } from '../helpers/fake-counter.js';
import { runSwc } from '../helpers/run-in-process.js';
import { scaled, scaledCount } from '../helpers/scale.js';

const FIXTURE = path.join(ROOT, 'fixtures/ai-sdk/ui-messages.json');

async function compactText(text: string, name: string, target: number, format = 'auto'): Promise<FileResult> {
  return await compactSource(decodeSource(Buffer.from(text), name), { target, counter: createApproxCounter(), format });
}

async function formatOf(value: unknown): Promise<string> {
  return (await compactText(JSON.stringify(value), 'x.json', 1e9)).format;
}

/** The rendered texts of a list read as AI SDK messages. */
async function rendered(items: unknown[], system?: string): Promise<string[]> {
  const result = await compactSource(
    decodeSource(Buffer.from(JSON.stringify(system === undefined ? items : { system, messages: items })), 'x.json'),
    {
      target: 1e9,
      counter: createApproxCounter(),
      format: 'ai-sdk',
    },
  );
  return (result.conversations[0]?.normalized.messages ?? []).map((m) => renderMessage(m).text);
}

describe('reading AI SDK messages', () => {
  it('renders ModelMessage parts as Haystack does: calls, typed outputs, errors; reasoning left out', async () => {
    const items = [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Weather?' },
          { type: 'image', image: 'iVBOR', mediaType: 'image/png' },
          { type: 'file', data: 'JVBER', mediaType: 'application/pdf', filename: 'a.pdf' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'secret thoughts' },
          { type: 'text', text: 'Looking.' },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'weather', input: { city: 'Paris', n: 1.5 } },
          { type: 'tool-call', toolCallId: 'c2', toolName: 'lookup', args: '{"id": 7}' },
        ],
      },
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'c1', toolName: 'weather', output: { type: 'json', value: { temp: 20 } } },
          {
            type: 'tool-result',
            toolCallId: 'c2',
            toolName: 'lookup',
            output: { type: 'error-text', value: 'not found' },
          },
        ],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'c3',
            toolName: 'shot',
            output: {
              type: 'content',
              value: [
                { type: 'text', text: 'see ' },
                { type: 'media', data: 'x', mediaType: 'image/png' },
              ],
            },
          },
        ],
      },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c2', result: { ok: false }, isError: true }] },
    ];
    expect(await rendered(items, 'Be brief.')).toEqual([
      '[system] Be brief.',
      '[user] Weather?\n[user] <image>\n[user] <file: a.pdf>',
      '[assistant] Looking.\n[assistant -> tool_call] weather({"city": "Paris", "n": 1.5})\n[assistant -> tool_call] lookup({"id": 7})',
      '[tool:weather] {"temp": 20}\n[tool:lookup (error)] not found',
      '[tool:shot] see <image>',
      '[tool:lookup (error)] {"ok": false}',
    ]);
  });

  it('reads a UI assistant message with its calls and their results as one step: the message, then its results', async () => {
    const items = [
      {
        id: 'u1',
        role: 'user',
        parts: [
          { type: 'text', text: 'Weather?' },
          { type: 'file', mediaType: 'image/jpeg', url: 'https://x/y.jpg' },
        ],
      },
      {
        id: 'a1',
        role: 'assistant',
        parts: [
          { type: 'step-start' },
          { type: 'reasoning', text: 'hmm', state: 'done' },
          {
            type: 'tool-weather',
            toolCallId: 'c1',
            state: 'output-available',
            input: { city: 'Paris' },
            output: { temp: 20 },
          },
          {
            type: 'dynamic-tool',
            toolName: 'mcp_search',
            toolCallId: 'c2',
            state: 'output-error',
            input: {},
            errorText: 'timeout',
          },
          {
            type: 'tool-book',
            toolCallId: 'c3',
            state: 'output-denied',
            input: {},
            approval: { id: 'p', approved: false, reason: 'no' },
          },
          { type: 'step-start' },
          { type: 'source-url', sourceId: 's', url: 'https://x' },
          { type: 'text', text: 'It is 20 degrees.' },
        ],
      },
    ];
    expect(await rendered(items)).toEqual([
      '[user] Weather?\n[user] <image>',
      '[assistant] It is 20 degrees.\n[assistant -> tool_call] weather({"city": "Paris"})\n[assistant -> tool_call] mcp_search({})\n[assistant -> tool_call] book({})',
      '[tool:weather] {"temp": 20}\n[tool:mcp_search (error)] timeout\n[tool:book (error)] no',
    ]);
    const result = await compactText(JSON.stringify(items), 'x.json', 1e9);
    expect(result.format).toBe('ai-sdk');
    expect(result.conversations[0]?.normalized.itemsOf).toEqual([[0], [1], []]);
  });

  it('refuses a message that does not fit, naming it', async () => {
    const items = [
      { id: 'a', role: 'user', parts: [{ type: 'text', text: 'hi' }] },
      { id: 'b', role: 'tool', parts: [] },
    ];
    await expect(compactText(JSON.stringify(items), 'x.json', 10, 'ai-sdk')).rejects.toThrow(
      'message 2: unknown role "tool"',
    );
  });
});

describe('detecting AI SDK messages', () => {
  it('claims ModelMessage lists by their parts and UI messages by their typed parts', async () => {
    expect(
      await formatOf([
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c', toolName: 'f', input: {} }] },
      ]),
    ).toBe('ai-sdk');
    expect(await formatOf([{ role: 'user', content: [{ type: 'image', image: 'https://x/y.png' }] }])).toBe('ai-sdk');
    expect(await formatOf([{ id: '1', role: 'user', parts: [{ type: 'text', text: 'hi' }] }])).toBe('ai-sdk');
  });

  it('leaves plain chat messages to OpenAI (which reads them the same) and Gemini contents to Gemini', async () => {
    expect(await formatOf([{ role: 'user', content: 'hi' }])).toBe('openai');
    expect(await formatOf([{ role: 'user', parts: [{ text: 'hi' }] }])).toBe('gemini');
    expect(
      await formatOf([{ role: 'user', content: [{ type: 'image', source: { type: 'url', url: 'https://x' } }] }]),
    ).toBe('anthropic');
    expect(await formatOf([{ role: 'user', content: [{ type: 'file', file: { file_id: 'f' } }] }])).toBe('openai');
  });

  it('takes no conversation of another format from the parity writers', async () => {
    for (const seed of [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]) {
      for (const format of FORMAT_NAMES) {
        const written = writeAs(format, randomConversation(seed));
        expect({ seed, format: (await compactText(written.text, written.name, 1e9)).format }).not.toEqual({
          seed,
          format: 'ai-sdk',
        });
      }
    }
  });
});

describe('compacting AI SDK messages', () => {
  const styles: AiSdkStyle[] = ['model', 'model-v4', 'ui'];

  it('keeps what an independent model of the conversation keeps, in the library and on the command line alike', async () => {
    let changed = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.constantFrom(...styles),
        fc.double({ min: 0.2, max: 1.1, noNaN: true }),
        fc.constantFrom(0, 1, 2),
        fc.func(fc.boolean()),
        async (seed, style, share, minKeepSteps, dynamic) => {
          const conversation = randomConversation(seed);
          const reference = referenceMessages(conversation);
          const whole = planCompaction(reference, createApproxCounter(), { target: 0, exhaustive: true }).tokensBefore;
          const target = Math.max(1, Math.floor(whole * share));
          const expected = planCompaction(reference, createApproxCounter(), { target, minKeepSteps, note: null });
          const written = writeAiSdk(conversation, style, (n) => dynamic(n));
          const input = deepFreeze(written.items);
          const result = await compactMessages(input, { target, minKeepSteps, note: null, tokenizer: 'approx' });
          const keptItems = new Set(result.messages.map((m) => input.indexOf(m as Record<string, unknown>)));
          const kept = conversation.map((_, i) => expected.kept.includes(i));
          expect({ seed, style, kept: written.itemOf.map((item) => keptItems.has(item)) }).toEqual({
            seed,
            style,
            kept,
          });
          expect(keptItems.has(-1)).toBe(false);
          if (result.changed) changed++;
          // The same list as a file: `swc compact` writes the same messages.
          const cli = await compactSource(decodeSource(Buffer.from(JSON.stringify(written.items)), 'x.json'), {
            target,
            minKeepSteps,
            note: null,
            counter: createApproxCounter(),
          });
          expect(cli.output === JSON.stringify(written.items) ? written.items : JSON.parse(cli.output)).toEqual(
            JSON.parse(JSON.stringify(result.messages)),
          );
        },
      ),
      { numRuns: scaled(250) },
    );
    expect(changed).toBeGreaterThan(scaledCount(50, 250));
  });

  it('writes a UI note as a UI message, and a ModelMessage note as a plain user message', async () => {
    const ui = [
      { id: 'u0', role: 'user', parts: [{ type: 'text', text: 'old '.repeat(100) }] },
      { id: 'a0', role: 'assistant', parts: [{ type: 'text', text: 'old answer '.repeat(50) }] },
      { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'task' }] },
    ];
    const compacted = await compactMessages(ui, { target: 20, tokenizer: 'approx' });
    expect(compacted.messages[1]).toBe(ui[2]);
    expect(compacted.messages[0]).toEqual({
      id: 'swc-compaction-note',
      role: 'user',
      parts: [{ type: 'text', text: expect.stringContaining('2 earlier messages') }],
    });
    // Compacting again recognises the note.
    const again = await compactMessages(compacted.messages, { target: 20, tokenizer: 'approx' });
    expect(again.changed).toBe(false);
    const model = [
      { role: 'user', content: 'old '.repeat(100) },
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'hmm' },
          { type: 'text', text: 'old answer '.repeat(50) },
        ],
      },
      { role: 'user', content: 'task' },
    ];
    const plain = await compactMessages(model, { target: 20, tokenizer: 'approx' });
    expect(plain.format).toBe('ai-sdk');
    expect(plain.messages).toEqual([
      { role: 'user', content: expect.stringContaining('2 earlier messages') },
      model[2],
    ]);
  });

  it('compacts the fixture with swc compact --format ai-sdk, keeping the UI step whole', async () => {
    const dir = tempDir();
    const run = await runSwc(['compact', FIXTURE, '--format', 'ai-sdk', '--target', '120', '--tokenizer', 'approx'], {
      cwd: dir,
    });
    expect(run.status).toBe(0);
    const out = JSON.parse(run.stdout) as { id: string }[];
    const input = JSON.parse(readFileSync(FIXTURE, 'utf8')) as { id: string }[];
    expect(out.map((m) => m.id)).toEqual(['swc-compaction-note', 'u2', 'a2']);
    expect(out[2]).toEqual(input.find((m) => m.id === 'a2'));
    expect(listOf('openai', out).items).toHaveLength(3);
  });
});
