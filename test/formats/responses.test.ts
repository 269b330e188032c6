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

const FIXTURE = path.join(ROOT, 'fixtures/responses/agent-session.json');
const JSONL = path.join(ROOT, 'fixtures/responses/items.jsonl');
const STRING_INPUT = path.join(ROOT, 'fixtures/responses/string-input.json');
const NOTE = (n: number): string =>
  `[${n} earlier messages were removed from this conversation to free up context and cannot be recovered.]`;

async function compactText(text: string, name: string, target: number, format = 'auto'): Promise<FileResult> {
  return await compactSource(decodeSource(Buffer.from(text), name), { target, counter: createApproxCounter(), format });
}

async function formatOf(value: unknown, name = 'x.json'): Promise<string> {
  return (await compactText(JSON.stringify(value), name, 1e9)).format;
}

/** How a list of items is grouped: each core message as `role:items`. */
async function grouping(items: unknown[]): Promise<string[]> {
  const n = (await compactText(JSON.stringify({ input: items }), 'g.json', 1e9)).conversations[0]?.normalized;
  return (n?.messages ?? [])
    .map((m, k) => `${m.role}:${(n?.itemsOf[k] ?? []).join(',')}`)
    .concat(n?.pinned?.length ? [`pinned:${n.pinned.join(',')}`] : []);
}

const user = (text: string): unknown => ({ role: 'user', content: text });
const said = (text: string): unknown => ({
  type: 'message',
  role: 'assistant',
  content: [{ type: 'output_text', text }],
});
const call = (id: string): unknown => ({ type: 'function_call', call_id: id, name: 'f', arguments: '{}' });
const output = (id: string): unknown => ({ type: 'function_call_output', call_id: id, output: 'ok' });
const reasoning = { type: 'reasoning', id: 'rs', summary: [] };

describe('detecting Responses input', () => {
  it('claims any list under "input", plain messages included', async () => {
    expect(await formatOf({ model: 'gpt-5', input: [user('hi')] })).toBe('responses');
    expect(await formatOf({ input: 'hi' })).toBe('responses');
  });

  it('claims a bare list or JSONL by an item type only Responses writes', async () => {
    expect(await formatOf([user('x'), call('c'), output('c')])).toBe('responses');
    expect(await formatOf([user('x'), reasoning, said('y')])).toBe('responses');
    expect((await compactText(readFileSync(JSONL, 'utf8'), 'items.jsonl', 1e9)).format).toBe('responses');
  });

  it('leaves a bare list of plain role-and-content messages to OpenAI, which reads it the same way', async () => {
    expect(await formatOf([user('x'), { role: 'assistant', content: 'y' }])).toBe('openai');
  });

  it('does not claim chat messages with tool calls under another key', async () => {
    const chat = [
      user('x'),
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c', content: 'ok' },
    ];
    expect(await formatOf({ model: 'gpt-4o', messages: chat })).toBe('openai');
  });
});

// Read once, before the tests are defined (a describe block cannot await).
const fixtureRead = await compactText(readFileSync(FIXTURE, 'utf8'), 'agent-session.json', 1e9);

describe('reading Responses items', () => {
  const result = fixtureRead;
  const normalized = result.conversations[0]?.normalized;

  it('renders every kind of item as the core renders it', () => {
    expect(normalized?.messages.map((m) => `${m.role}: ${renderMessage(m).text}`)).toEqual([
      'system: [system] You are a coding agent working in the repository at /work/app. Prefer small, tested changes.',
      'system: [system] Run the tests before you say a change is done.',
      'user: [user] Why does the date parser reject 2024-02-29?',
      // Reasoning is not rendered; the arguments string is parsed, keys sorted, 1.0 kept.
      'assistant: [assistant] Reading the parser and its tests.\n[assistant -> tool_call] read_file({"path": "src/date.ts"})\n[assistant -> tool_call] read_file({"lines": [1, 40], "path": "test/date.test.ts", "ratio": 1.0})',
      'tool: [tool:read_file] export function isLeap(y) { return y % 4 === 0 && y % 100 !== 0; }',
      "tool: [tool:read_file] it('accepts 2024-02-29', ...)",
      'assistant: [assistant] isLeap forgets the 400-year rule; 2024 is fine, so the bug is elsewhere: the month table.',
      'user: [user] Is that rule documented anywhere official? Here is a screenshot and the spec.\n[user] <image>\n[user] <file: rfc3339.pdf>',
      // Self-contained server calls render as calls and what they hold as their results; the MCP tool list is not rendered.
      'assistant: [assistant] Yes: RFC 3339 appendix C gives the rule.\n[assistant -> tool_call] web_search({"query": "gregorian leap year 400 rule", "type": "search"})\n[assistant -> tool_call] search_docs({"q": "leap year"})',
      'tool: [tool:search_docs] Leap years: divisible by 4, except centuries not divisible by 400.',
      'user: [user] Fix isLeap and the month table, then run the tests.',
      // A custom tool's free-form input is not JSON: it stays as written.
      'assistant: [assistant -> tool_call] apply_patch(--- a/src/date.ts\n+++ b/src/date.ts\n@@\n-  return y % 4 === 0 && y % 100 !== 0;\n+  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;)',
      'tool: [tool:apply_patch] applied 1 hunk',
      'assistant: [assistant -> tool_call] computer({"type": "screenshot"})',
      'tool: [tool:computer] <image>',
      'assistant: [assistant -> tool_call] run_tests({"filter": "date"})',
      'tool: [tool:run_tests] 12 passed, 0 failed',
      'assistant: [assistant] Fixed: isLeap now applies the 400-year rule and all 12 date tests pass.',
    ]);
  });

  it('groups the items of one assistant turn into one message that weighs as many items', () => {
    expect(normalized?.itemsOf).toEqual([
      [],
      [0],
      [1],
      [2, 3, 4, 5],
      [6],
      [7],
      [8],
      [9],
      [10, 11, 12, 13],
      [],
      [14],
      [15, 16],
      [17],
      [18],
      [19],
      [20, 21],
      [22],
      [23],
    ]);
    expect(normalized?.messages.map((m) => m.weight ?? 1)).toEqual([
      0, 1, 1, 4, 1, 1, 1, 1, 4, 0, 1, 2, 1, 1, 1, 2, 1, 1,
    ]);
  });

  it('keeps a message and the calls after it together, as one chat message holds its text and calls', async () => {
    expect(await grouping([user('x'), said('a'), call('1'), call('2'), output('1'), output('2')])).toEqual([
      'user:0',
      'assistant:1,2,3',
      'tool:4',
      'tool:5',
    ]);
  });

  it('starts a new message at a second message item, as two chat messages are two steps', async () => {
    expect(await grouping([user('x'), said('a'), said('b')])).toEqual(['user:0', 'assistant:1', 'assistant:2']);
  });

  it('keeps a reasoning item with the call after it, not with the message before it', async () => {
    expect(await grouping([user('x'), reasoning, said('a'), reasoning, call('1'), output('1')])).toEqual([
      'user:0',
      'assistant:1,2',
      'assistant:3,4',
      'tool:5',
    ]);
  });

  it('never parts a call from its output, even when a message follows the call', async () => {
    expect(await grouping([user('x'), call('1'), said('a'), reasoning, output('1')])).toEqual([
      'user:0',
      'assistant:1,2,3',
      'tool:4',
    ]);
  });

  it('pulls a call made before the outputs of earlier calls are all in into the same message', async () => {
    expect(
      await grouping([user('x'), call('1'), call('2'), output('1'), call('3'), output('2'), output('3'), said('done')]),
    ).toEqual(['user:0', 'assistant:1,2,4', 'tool:3', 'tool:5', 'tool:6', 'assistant:7']);
    // A call that is never answered holds nothing back.
    expect(await grouping([user('x'), call('1'), call('2'), output('1'), said('done')])).toEqual([
      'user:0',
      'assistant:1,2',
      'tool:3',
      'assistant:4',
    ]);
  });

  it('keeps a server-side output without call_id with the call it follows', async () => {
    const search = { type: 'tool_search_call', call_id: null, execution: 'server', arguments: { q: 'w' } };
    const found = { type: 'tool_search_output', call_id: null, execution: 'server', tools: [] };
    // What the search found follows the message as its result, standing for no item of its own.
    expect(await grouping([user('x'), search, found, call('1'), output('1')])).toEqual([
      'user:0',
      'assistant:1,2,3',
      'tool:',
      'tool:4',
    ]);
  });

  it('keeps the results of a server call made while earlier outputs were due in the step of its message', async () => {
    const mcp = { type: 'mcp_call', id: 'm', name: 'ask', server_label: 's', arguments: '{}', output: 'found' };
    expect(await grouping([user('x'), call('1'), call('2'), output('1'), mcp, output('2')])).toEqual([
      'user:0',
      'assistant:1,2,4',
      'tool:3',
      'tool:',
      'tool:5',
    ]);
  });

  it('puts unknown items with the step they sit in: with the next step after an output, with the last one at the end', async () => {
    const odd = { type: 'future_item' };
    expect(await grouping([user('x'), call('1'), output('1'), odd, call('2'), output('2'), odd])).toEqual([
      'user:0',
      'assistant:1',
      'tool:2',
      'assistant:3,4',
      'tool:5,6',
    ]);
    // Before any message an unknown item belongs to nothing that could be removed: it is always kept.
    expect(await grouping([odd, user('x')])).toEqual(['user:1', 'pinned:0']);
  });

  it('names an output after the call it answers', async () => {
    const r = await compactText(
      JSON.stringify({
        input: [
          user('x'),
          { type: 'local_shell_call', call_id: 'L', action: { type: 'exec', command: ['ls'] } },
          { type: 'local_shell_call_output', call_id: 'L', output: 'a.txt' },
        ],
      }),
      'l.json',
      1e9,
    );
    expect(r.conversations[0]?.normalized.messages.map((m) => renderMessage(m).text)).toEqual([
      '[user] x',
      '[assistant -> tool_call] local_shell({"command": ["ls"], "type": "exec"})',
      '[tool:local_shell] a.txt',
    ]);
  });

  it('reads a string input as the task, which nothing can remove', async () => {
    const r = await compactText(readFileSync(STRING_INPUT, 'utf8'), 'string-input.json', 1);
    expect(r.conversations[0]?.normalized.messages.map((m) => renderMessage(m).text)).toEqual([
      '[system] Answer in one sentence.',
      '[user] What is the capital of Portugal?',
    ]);
    expect(r.changed).toBe(false);
    expect(r.output).toBe(readFileSync(STRING_INPUT, 'utf8'));
  });

  it('fails on an item with neither a type nor a role, naming it', async () => {
    await expect(
      compactText('{"input": [{"role": "user", "content": "x"},\n {"content": "y"}]}', 'bad.json', 5, 'responses'),
    ).rejects.toThrow('bad.json:2:2: message 2: item has neither a "type" nor a "role"');
    await expect(
      compactText('{"input": [{"role": "tool", "content": "x"}]}', 'bad.json', 5, 'responses'),
    ).rejects.toThrow('bad.json:1:12: message 1: unknown role "tool" (expected user, system, developer or assistant)');
    await expect(
      compactText('{"input": [{"role": "constructor", "content": "x"}]}', 'bad.json', 5, 'responses'),
    ).rejects.toThrow('message 1: unknown role "constructor"');
    // Auto-detection does not guess at such a list.
    await expect(compactText('{"input": [{"role": "tool", "content": "x"}]}', 'bad.json', 5)).rejects.toThrow(
      'bad.json: cannot tell the transcript format of "input" (first item has keys "role", "content"); pass --format (',
    );
  });
});

describe('writing Responses items back', () => {
  const input = readFileSync(FIXTURE, 'utf8');
  const doc = JSON.parse(input) as { input: unknown[] };

  it('copies kept items exactly, the note after the task in the style of the latest user message', async () => {
    const result = await compactText(input, 'agent-session.json', 200);
    const out = JSON.parse(result.output) as Record<string, unknown>;
    expect(out.input).toEqual([
      doc.input[0],
      doc.input[14],
      { role: 'user', content: NOTE(18) },
      ...doc.input.slice(20),
    ]);
    const { input: _a, ...around } = doc;
    const { input: _b, ...aroundOut } = out;
    expect(aroundOut).toEqual(around);
    const last = input.slice(
      input.indexOf('    {\n      "type": "future_item"'),
      input.indexOf('\n  ],\n  "reasoning"'),
    );
    expect(result.output).toContain(last);
  });

  it('types the note when the latest user message is typed, its content one string that any reader recognises', async () => {
    const typed = (text: string): unknown => ({
      type: 'message',
      role: 'user',
      content: [{ type: 'input_text', text }],
    });
    const items = [typed('first '.repeat(40)), said('answer '.repeat(40)), typed('the task')];
    const out = JSON.parse((await compactText(JSON.stringify({ input: items }), 't.json', 20)).output) as {
      input: unknown[];
    };
    expect(out.input).toEqual([{ type: 'message', role: 'user', content: NOTE(2) }, items[2]]);
  });

  it('writes the note as a plain message when the user messages are plain, and JSONL lines byte for byte', async () => {
    const text = readFileSync(JSONL, 'utf8');
    const lines = text.trimEnd().split('\n');
    expect((await compactText(text, 'items.jsonl', 30)).output).toBe(
      [lines[4], `{"role":"user","content":"${NOTE(6)}"}`, lines[7]].join('\n') + '\n',
    );
  });

  it('recognises its own note on the next run and changes nothing more', async () => {
    const first = (await compactText(input, 'agent-session.json', 200)).output;
    const second = await compactText(first, 'agent-session.json', 200);
    expect(second.changed).toBe(false);
    expect(second.output).toBe(first);
    expect(second.conversations[0]?.normalized.messages.filter((m) => m.compaction === 'sliding_window')).toHaveLength(
      1,
    );
  });
});

describe('swc compact on real Responses request bodies', () => {
  const dir = path.join(REAL_DATA, 'openai-responses');
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort();

  it.each(files)(
    '%s compacts at several targets with pairs, instructions and task intact, and a second run changes nothing',
    async (name) => {
      const file = path.join(dir, name);
      const input = readFileSync(file, 'utf8');
      const work = tempDir();
      for (const target of [20, 60, 120, 250, 5000]) {
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
          problems: compactionProblems('responses', input, output, (t) => isEarlierNoteText(t, null)),
        }).toEqual({ target, problems: [] });
        expect((await compactText(output, name, 1e9)).format).toBe('responses');
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
