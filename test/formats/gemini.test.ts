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

const FIXTURE = path.join(ROOT, 'fixtures/gemini/agent-session.json');
const SNAKE = path.join(ROOT, 'fixtures/gemini/snake-case.json');
const ADK = path.join(ROOT, 'fixtures/gemini/adk-session.json');
const NOTE = (n: number): string =>
  `[${n} earlier messages were removed from this conversation to free up context and cannot be recovered.]`;

async function compactText(text: string, name: string, target: number, format = 'auto'): Promise<FileResult> {
  return await compactSource(decodeSource(Buffer.from(text), name), { target, counter: createApproxCounter(), format });
}

function rendered(result: FileResult): string[] {
  return (result.conversations[0]?.normalized.messages ?? []).map((m) => `${m.role}: ${renderMessage(m).text}`);
}

describe('detecting Gemini contents', () => {
  it('claims contents by their parts, in a request body, a bare list or JSONL', async () => {
    const contents = [
      { role: 'user', parts: [{ text: 'hi' }] },
      { role: 'model', parts: [{ text: 'yo' }] },
    ];
    expect((await compactText(JSON.stringify({ contents }), 'b.json', 1e9)).format).toBe('gemini');
    expect((await compactText(JSON.stringify(contents), 'l.json', 1e9)).format).toBe('gemini');
    expect((await compactText(contents.map((c) => JSON.stringify(c)).join('\n') + '\n', 'l.jsonl', 1e9)).format).toBe(
      'gemini',
    );
  });

  it('claims an ADK session by its events holding contents', async () => {
    expect((await compactText(readFileSync(ADK, 'utf8'), 'adk-session.json', 1e9)).format).toBe('gemini');
  });

  it('refuses events that hold no contents, and suggests --format', async () => {
    await expect(compactText(JSON.stringify({ events: [{ kind: 'click' }] }), 'log.json', 5)).rejects.toThrow(
      'log.json: cannot tell the transcript format of "events" (first item has keys "kind"); pass --format (',
    );
  });
});

describe('reading Gemini contents', () => {
  it('renders every kind of part as the core renders it', async () => {
    expect(rendered(await compactText(readFileSync(FIXTURE, 'utf8'), 'agent-session.json', 1e9))).toEqual([
      // One system message per text part of the system instruction.
      'system: [system] You are a Swiss rail assistant.',
      "system: [system] Answer in the user's language.",
      'user: [user] How many trains leave Bern for Geneva before 9:00 on weekdays?',
      // A thought is not rendered; a call's args are sorted, escaped, 1.0 kept.
      'assistant: [assistant] Let me check the timetable.\n[assistant -> tool_call] timetable({"before": "09:00", "days": ["mon", "fri"], "from": "Bern", "max": 1.0, "to": "Gen\\u00e8ve"})',
      'tool: [tool:timetable] 06:04, 06:34, 07:04, 07:34, 08:04, 08:34',
      'assistant: [assistant] Six trains: every half hour from 06:04 to 08:34.',
      // Inline data by MIME type; a file's name is the last segment of its URI.
      'user: [user] Here is a photo of the departure board and my ticket. Which platform?\n[user] <image>\n[user] <file: ticket-7731>',
      // Code execution renders as a call; its result is not rendered.
      'assistant: [assistant] Platforms 7 or 8, as the board shows.\n[assistant -> tool_call] code_execution({"code": "print(sorted({7, 8}))", "language": "PYTHON"})',
      'user: [user] Book the 07:34 for me and my bike, and check the weather in Geneva.',
      'assistant: [assistant -> tool_call] book({"bike": true, "train": "07:34"})\n[assistant -> tool_call] weather({"city": "Gen\\u00e8ve"})',
      // An `error` response is marked; a one-string response reads as that string.
      'tool: [tool:book (error)] bike spaces sold out\n[tool:weather] light rain, 11 °C',
      'assistant: [assistant -> tool_call] book({"bike": false, "train": "07:34"})',
      // Any other response reads as its JSON.
      'tool: [tool:book] {"booking": "SBB-4471", "seat": "12A"}',
      'assistant: [assistant] Bike spaces were sold out, so I booked you without the bike: SBB-4471, seat 12A. Expect light rain.',
    ]);
  });

  it('reads the snake_case spelling of the Python SDK, its config system instruction and image parts of a response', async () => {
    expect(rendered(await compactText(readFileSync(SNAKE, 'utf8'), 'snake-case.json', 1e9))).toEqual([
      'system: [system] Be terse.',
      'user: [user] List the files in /tmp.',
      'assistant: [assistant -> tool_call] list_dir({"path": "/tmp"})',
      'tool: [tool:list_dir] a.txt\nb.png',
      'assistant: [assistant] Two files: a.txt and b.png.',
      'user: [user] Show me b.png.',
      'assistant: [assistant -> tool_call] read_image({"path": "/tmp/b.png"})',
      'tool: [tool:read_image] attached<image>',
      'assistant: [assistant] It is a 1×1 pixel image.',
    ]);
  });

  it('names a result after the call its id answers, else after its own name', async () => {
    const contents = [
      { role: 'user', parts: [{ text: 'go' }] },
      { role: 'model', parts: [{ functionCall: { id: 'a', name: 'search', args: {} } }] },
      {
        role: 'user',
        parts: [
          { functionResponse: { id: 'a', name: 'renamed', response: { output: 'x' } } },
          { functionResponse: { name: 'other', response: {} } },
        ],
      },
    ];
    expect(rendered(await compactText(JSON.stringify({ contents }), 'n.json', 1e9)).at(-1)).toBe(
      'tool: [tool:search] x\n[tool:other] {}',
    );
  });

  it('reads ADK events by their contents; an event without content goes with the message before it', async () => {
    const result = await compactText(readFileSync(ADK, 'utf8'), 'adk-session.json', 1e9);
    expect(rendered(result)).toEqual([
      'user: [user] Weather in Oslo?',
      'assistant: [assistant -> tool_call] get_weather({"city": "Oslo"})',
      'tool: [tool:get_weather] -3 °C, snow',
      'assistant: [assistant] It is -3 °C and snowing in Oslo.',
      'user: [user] And in Bergen?',
      'assistant: [assistant] Bergen: 4 °C and rain, as usual.',
    ]);
    expect(result.conversations[0]?.normalized.itemsOf).toEqual([[0], [1], [2], [3, 4], [5], [6]]);
  });

  it('fails on a role Gemini does not have, naming the content and its line', async () => {
    await expect(
      compactText('{"contents": [\n {"role": "assistant", "parts": [{"text": "x"}]}]}', 'bad.json', 5),
    ).rejects.toThrow('bad.json:2:2: message 1: unknown role "assistant" (Gemini contents are "user" or "model")');
    // A role that names a property of every JavaScript object is just an unknown role.
    await expect(
      compactText('{"contents": [{"role": "toString", "parts": [{"text": "x"}]}]}', 'bad.json', 5),
    ).rejects.toThrow('message 1: unknown role "toString"');
  });
});

describe('writing Gemini contents back', () => {
  const input = readFileSync(FIXTURE, 'utf8');
  const doc = JSON.parse(input) as { contents: unknown[] };

  it('copies kept contents exactly (thought signatures included) and leaves the body around them as it was', async () => {
    const result = await compactText(input, 'agent-session.json', 150);
    const out = JSON.parse(result.output) as Record<string, unknown>;
    expect(out.contents).toEqual([{ role: 'user', parts: [{ text: NOTE(6) }] }, ...doc.contents.slice(6)]);
    const { contents: _a, ...around } = doc;
    const { contents: _b, ...aroundOut } = out;
    expect(aroundOut).toEqual(around);
    expect(result.output).toContain(
      input.slice(
        input.indexOf(
          '    {\n      "role": "model",\n      "parts": [\n        {\n          "functionCall": {\n            "id": "fc-2"',
        ),
        input.indexOf('\n  ],\n  "systemInstruction"'),
      ),
    );
  });

  it('puts the note after the task when steps go', async () => {
    const out = JSON.parse((await compactText(input, 'agent-session.json', 100)).output) as { contents: unknown[] };
    expect(out.contents).toEqual([
      doc.contents[6],
      { role: 'user', parts: [{ text: NOTE(8) }] },
      ...doc.contents.slice(9),
    ]);
  });

  it('writes the note into an ADK session as an event by the user, and removes a contentless event with its neighbour', async () => {
    const adk = JSON.parse(readFileSync(ADK, 'utf8')) as { events: unknown[] };
    const out = JSON.parse((await compactText(readFileSync(ADK, 'utf8'), 'adk-session.json', 30)).output) as {
      events: unknown[];
    };
    expect(out.events).toEqual([
      { author: 'user', content: { role: 'user', parts: [{ text: NOTE(5) }] } },
      ...adk.events.slice(5),
    ]);
  });

  it('recognises its own note on the next run and changes nothing more', async () => {
    const first = (await compactText(input, 'agent-session.json', 100)).output;
    const second = await compactText(first, 'agent-session.json', 100);
    expect(second.changed).toBe(false);
    expect(second.conversations[0]?.normalized.messages[3]?.compaction).toBe('sliding_window');
    const third = JSON.parse((await compactText(first, 'agent-session.json', 60)).output) as { contents: unknown[] };
    expect(third.contents).toEqual([doc.contents[6], { role: 'user', parts: [{ text: NOTE(3) }] }, doc.contents[11]]);
  });
});

describe('swc compact on real Gemini request bodies and ADK sessions', () => {
  const dir = path.join(REAL_DATA, 'gemini');
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort();

  it.each(files)(
    '%s compacts at several targets with pairs, instructions and task intact, and a second run changes nothing',
    async (name) => {
      const file = path.join(dir, name);
      const input = readFileSync(file, 'utf8');
      const work = tempDir();
      for (const target of [20, 60, 120, 300, 5000]) {
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
          problems: compactionProblems('gemini', input, output, (t) => isEarlierNoteText(t, null)),
        }).toEqual({ target, problems: [] });
        expect((await compactText(output, name, 1e9)).format).toBe('gemini');
        const again = await runSwc(['compact', out, '-t', String(target), '--tokenizer', 'approx'], { cwd: ROOT });
        expect({ target, status: again.status, same: again.stdout === output }).toEqual({
          target,
          status: 0,
          same: true,
        });
      }
      expect((await runSwc(['compact', file, '-t', '100'], { cwd: ROOT })).status).toBe(0);
    },
  );
});
