import { describe, expect, it } from '@jest/globals';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { isEarlierNoteText } from '../../src/core/note.js';
import { renderMessage } from '../../src/core/render.js';
import { decodeSource } from '../../src/io/source.js';
import { compactSource, type FileResult } from '../../src/pipeline/index.js';
import { createApproxCounter } from '../../src/tokens/approx.js';
import { ROOT, REAL_DATA, tempDir } from '../helpers/cli.js';
import { runSwc } from '../helpers/run-in-process.js';
import { compactionProblems } from '../helpers/convert.js';

const FIXTURE = path.join(ROOT, 'fixtures/anthropic/agent-session.json');
const JSONL = path.join(ROOT, 'fixtures/anthropic/messages.jsonl');
const NOTE = (n: number): string =>
  `[${n} earlier messages were removed from this conversation to free up context and cannot be recovered.]`;

async function compactText(text: string, name: string, target: number, format = 'auto'): Promise<FileResult> {
  return await compactSource(decodeSource(Buffer.from(text), name), { target, counter: createApproxCounter(), format });
}

async function formatOf(value: unknown, name = 'x.json'): Promise<string> {
  return (await compactText(JSON.stringify(value), name, 1e9)).format;
}

const toolUse = { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'f', input: {} }] };
const toolResult = { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'ok' }] };

describe('detecting Anthropic messages', () => {
  it('claims a request body by its system key even when every message is plain text', async () => {
    expect(await formatOf({ model: 'claude', system: 'Be brief.', messages: [{ role: 'user', content: 'hi' }] })).toBe(
      'anthropic',
    );
  });

  it('claims a bare list by a block type only Anthropic writes', async () => {
    expect(await formatOf([{ role: 'user', content: 'weather?' }, toolUse, toolResult])).toBe('anthropic');
    expect(
      await formatOf([{ role: 'user', content: [{ type: 'image', source: { type: 'url', url: 'https://x/y.png' } }] }]),
    ).toBe('anthropic');
    expect(
      await formatOf([{ role: 'user', content: [{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral' } }] }]),
    ).toBe('anthropic');
  });

  it('claims JSONL of messages by their blocks', async () => {
    expect((await compactText(readFileSync(JSONL, 'utf8'), 'm.jsonl', 1e9)).format).toBe('anthropic');
  });

  it('leaves plain user and assistant text to OpenAI, which reads it the same way', async () => {
    expect(
      await formatOf({
        model: 'm',
        max_tokens: 10,
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: [{ type: 'text', text: 'yo' }] },
        ],
      }),
    ).toBe('openai');
  });

  it('leaves OpenAI tool calls to OpenAI even inside a body with a system key', async () => {
    const chat = [
      { role: 'user', content: 'x' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c', content: 'ok' },
    ];
    expect(await formatOf({ system: 'odd', messages: chat })).toBe('openai');
  });

  it('refuses a list mixing Anthropic messages with Gemini contents, and suggests --format', async () => {
    const mixed = [{ role: 'user', content: 'x' }, toolUse, { role: 'user', parts: [{ text: 'y' }] }];
    await expect(formatOf(mixed, 'mixed.json')).rejects.toThrow(
      /mixed\.json: cannot tell the transcript format of the top-level list \(first item has keys "role", "content"\); pass --format \(/,
    );
  });
});

// Read once, before the tests are defined (a describe block cannot await).
const fixtureRead = await compactText(readFileSync(FIXTURE, 'utf8'), 'agent-session.json', 1e9);

describe('reading Anthropic messages', () => {
  const result = fixtureRead;
  const normalized = result.conversations[0]?.normalized;

  it('renders every kind of block as the core renders it', () => {
    expect(normalized?.messages.map((m) => `${m.role}: ${renderMessage(m).text}`)).toEqual([
      'system: [system] You are a travel agent for Example Air. Use the tools to look things up; never guess.',
      'system: [system] Today is 2025-03-14.',
      'user: [user] Which airports serve Zürich? I prefer the one closest to the city centre.',
      // Thinking is not rendered; the server tool call is, and its result follows as the model reads it (as JSON).
      'assistant: [assistant] Let me check.\nZürich Airport (ZRH) is 13 km from the centre, 12 minutes by train.\n[assistant -> tool_call] web_search({"query": "Z\\u00fcrich airports distance city centre"})',
      'tool: [tool:web_search] [{"encrypted_content": "EqgfCioIARgBIiQ3", "page_age": "2025-01-02", "title": "Zurich Airport", "type": "web_search_result", "url": "https://example.com/zrh"}]',
      'user: [user] Here is my booking confirmation and a photo of my passport page; is the name right?\n[user] <image>\n[user] <file: confirmation.pdf>',
      'assistant: [assistant] Yes: both say ANNA MÜLLER.',
      'user: [user] Find me a flight from Zürich to Lisbon on 2025-04-02 and book the cheapest for 2 people.',
      // Keys sorted, 1.0 still a float, a 20-digit integer exact.
      'assistant: [assistant] Searching both days around your date.\n[assistant -> tool_call] find_flights({"date": "2025-04-02", "flex": 1.0, "from": "ZRH", "to": "LIS"})\n[assistant -> tool_call] find_flights({"date": "2025-04-03", "from": "ZRH", "limit": 12345678901234567890, "to": "LIS"})',
      // Parallel results in one message, named after the calls they answer, text blocks joined with nothing between.
      'tool: [tool:find_flights] EA 410 ZRH 07:05 → LIS 09:10, CHF 189\nEA 412 ZRH 17:40 → LIS 19:45, CHF 142\n[tool:find_flights] No flights on 2025-04-03.',
      'assistant: [assistant -> tool_call] book({"flight": "EA 412", "seats": 2})',
      'tool: [tool:book (error)] Payment declined<image>',
      // Redacted thinking and an unknown block are not rendered.
      'assistant: [assistant] The booking failed: the payment was declined. Shall I try another card?',
    ]);
  });

  it('links instructions and server tool results to no item and every message to its own item', () => {
    expect(normalized?.itemsOf).toEqual([[], [], [0], [1], [], [2], [3], [4], [5], [6], [7], [8], [9]]);
    expect(normalized?.messages.map((m) => m.weight)).toEqual([
      0,
      0,
      undefined,
      undefined,
      0,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });

  it('counts images and files at their flat costs', () => {
    const rendered = normalized?.messages.map((m) => renderMessage(m)) ?? [];
    expect(rendered.map((r) => [r.images, r.files])).toEqual([
      [0, 0],
      [0, 0],
      [0, 0],
      [0, 0],
      [0, 0],
      [1, 1],
      [0, 0],
      [0, 0],
      [0, 0],
      [0, 0],
      [0, 0],
      [1, 0],
      [0, 0],
    ]);
  });

  it('takes a system string as one instruction', async () => {
    const r = await compactText(
      JSON.stringify({ system: 'Line one.\nLine two.', messages: [{ role: 'user', content: 'hi' }] }),
      's.json',
      1e9,
    );
    expect(r.conversations[0]?.normalized.messages.map((m) => renderMessage(m).text)).toEqual([
      '[system] Line one.\nLine two.',
      '[user] hi',
    ]);
  });

  it('treats a user message with a tool result as part of the step, never as the task', async () => {
    const r = await compactText(JSON.stringify([{ role: 'user', content: 'go' }, toolUse, toolResult]), 'l.json', 1e9);
    expect(r.conversations[0]?.normalized.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
  });

  it('fails on a role Anthropic does not have, naming the message and its line', async () => {
    const text = '{"messages": [\n  {"role": "user", "content": "x"},\n  {"role": "tool", "content": "y"}\n]}';
    await expect(compactText(text, 'bad.json', 5, 'anthropic')).rejects.toThrow(
      'bad.json:3:3: message 2: unknown role "tool" (Anthropic messages are "user" or "assistant"; instructions go in "system")',
    );
  });

  it('reads a system prompt logged inside the list as a system message, so tool results still pair with their calls', async () => {
    const r = await compactText(
      JSON.stringify([{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'go' }, toolUse, toolResult]),
      'l.json',
      1e9,
    );
    expect(r.format).toBe('anthropic');
    expect(r.conversations[0]?.normalized.messages.map((m) => renderMessage(m).text)).toEqual([
      '[system] Be brief.',
      '[user] go',
      '[assistant -> tool_call] f({})',
      '[tool:f] ok',
    ]);
  });

  it('fails on content that is neither a string nor blocks', async () => {
    await expect(compactText('[{"role": "user", "content": 7}]', 'bad.json', 5, 'anthropic')).rejects.toThrow(
      'bad.json:1:2: message 1: "content" must be a string or a list of content blocks, found a number',
    );
  });
});

describe('writing Anthropic messages back', () => {
  const input = readFileSync(FIXTURE, 'utf8');
  const doc = JSON.parse(input) as { messages: unknown[] };

  it('copies kept messages exactly and leaves everything around the list as it was', async () => {
    const result = await compactText(input, 'agent-session.json', 300);
    const out = JSON.parse(result.output) as Record<string, unknown>;
    // Both history turns go; the note stands first in the list (the instructions are outside it).
    expect(out.messages).toEqual([{ role: 'user', content: NOTE(4) }, ...doc.messages.slice(4)]);
    const { messages: _in, ...around } = doc;
    const { messages: _out, ...aroundOut } = out;
    expect(aroundOut).toEqual(around);
    expect(Object.keys(out)).toEqual(Object.keys(doc));
    // Kept items are the input's own text, indentation included.
    const start = input.indexOf(
      '    {\n      "role": "user",\n      "content": [\n        {\n          "type": "text",\n          "text": "Find me',
    );
    expect(result.output).toContain(input.slice(start, input.lastIndexOf('  ]')));
    expect(result.output).toContain(
      `  "messages": [\n    {\n      "role": "user",\n      "content": "${NOTE(4)}"\n    },\n    {\n      "role": "user",`,
    );
  });

  it('puts the note after the task when steps go', async () => {
    const out = JSON.parse((await compactText(input, 'agent-session.json', 200)).output) as { messages: unknown[] };
    expect(out.messages).toEqual([doc.messages[4], { role: 'user', content: NOTE(6) }, ...doc.messages.slice(7)]);
  });

  it('keeps JSONL lines byte for byte and writes the note in their style', async () => {
    const text = readFileSync(JSONL, 'utf8');
    const lines = text.trimEnd().split('\n');
    const result = await compactText(text, 'messages.jsonl', 40);
    expect(result.output).toBe([lines[4], `{"role": "user", "content": "${NOTE(6)}"}`, lines[7]].join('\n') + '\n');
  });

  it('recognises its own note on the next run and changes nothing more', async () => {
    const first = (await compactText(input, 'agent-session.json', 200)).output;
    const second = await compactText(first, 'agent-session.json', 200);
    expect(second.changed).toBe(false);
    expect(second.conversations[0]?.normalized.messages[3]?.compaction).toBe('sliding_window');
    // A smaller target folds the old note into a new one that counts this run's removals only.
    const third = JSON.parse((await compactText(first, 'agent-session.json', 120)).output) as { messages: unknown[] };
    expect(third.messages).toEqual([doc.messages[4], { role: 'user', content: NOTE(3) }, doc.messages[9]]);
  });
});

describe('swc compact on real Anthropic request bodies', () => {
  const dir = path.join(REAL_DATA, 'anthropic');
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort();

  it.each(files)(
    '%s compacts at several targets with pairs, instructions and task intact, and a second run changes nothing',
    async (name) => {
      const file = path.join(dir, name);
      const input = readFileSync(file, 'utf8');
      const work = tempDir();
      for (const target of [30, 100, 250, 600, 5000]) {
        const out = path.join(work, `out-${target}.json`);
        const run = await runSwc(['compact', file, '-t', String(target), '--tokenizer', 'approx', '-o', out], {
          cwd: ROOT,
        });
        expect({ target, status: run.status, stderr: run.stderr }).toEqual({
          target,
          status: 0,
          stderr: expect.stringMatching(/^swc: .*\n$/),
        });
        const output = readFileSync(out, 'utf8');
        expect({
          target,
          problems: compactionProblems('anthropic', input, output, (t) => isEarlierNoteText(t, null)),
        }).toEqual({ target, problems: [] });
        expect((await compactText(output, name, 1e9)).format).toBe('anthropic');
        const again = await runSwc(['compact', out, '-t', String(target), '--tokenizer', 'approx'], { cwd: ROOT });
        expect({ target, status: again.status, same: again.stdout === output }).toEqual({
          target,
          status: 0,
          same: true,
        });
      }
      // The default tokenizer decides too.
      expect((await runSwc(['compact', file, '-t', '200'], { cwd: ROOT })).status).toBe(0);
    },
  );
});
