/**
 * Server-side tools (web search, web fetch, code execution, tool search, MCP) run at the provider, and their results
 * come back inside the assistant's own message (Anthropic) or item (Responses). The model reads those results as it
 * reads any tool result, so they are counted, shown as results of their calls, and kept whole with their calls.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { stepText } from '../../src/cli/view/labels.js';
import { renderMessage } from '../../src/core/render.js';
import type { Message } from '../../src/core/types.js';
import { decodeSource } from '../../src/io/source.js';
import { compactSource } from '../../src/pipeline/index.js';
import { createApproxCounter } from '../../src/tokens/approx.js';
import { REAL_DATA, tempDir } from '../helpers/cli.js';
import { createRng, listOf, writeAs } from '../helpers/convert.js';
import { randomShapes, shapeOf } from '../differential/harness.js';
import { anthropicServerSteps, responsesServerSteps } from '../differential/server-tools.js';
import { runSwc } from '../helpers/run-in-process.js';

const PAUSE_TURN = path.join(REAL_DATA, 'anthropic/pydanticai-pause_turn_web_search.request.json');
const NOTE = (n: number): string =>
  `[${n} earlier messages were removed from this conversation to free up context and cannot be recovered.]`;

interface Block {
  type: string;
  [key: string]: unknown;
}
interface AnthropicMessage {
  role: string;
  content: string | Block[];
}

/** Writes a transcript into a fresh folder and gives its path. */
function write(name: string, value: unknown): string {
  const file = path.join(tempDir(), name);
  writeFileSync(file, JSON.stringify(value, null, 2));
  return file;
}

/**
 * `swc compact` of a transcript given on standard input (so it runs in this thread, not in a worker of the build).
 * @returns the run, and the output parsed when there is one
 */
async function compact(
  value: unknown,
  args: readonly string[],
): Promise<{ status: number; stdout: string; stderr: string; out: unknown }> {
  const run = await runSwc(['compact', '-', '--tokenizer', 'approx', ...args], {
    cwd: tempDir(),
    stdin: JSON.stringify(value, null, 2),
  });
  expect(run.stderr).not.toMatch(/error/i);
  const dry = args.includes('--dry-run');
  return { status: run.status, stdout: run.stdout, stderr: run.stderr, out: dry ? null : JSON.parse(run.stdout) };
}

/** The tokens a compaction left, from its summary line (`… → 1,257 tokens`). */
function tokensAfter(stderr: string): number {
  return Number(/→ ([\d,]+) tokens/.exec(stderr)?.[1]?.replace(/,/g, ''));
}

/** The file's token count as `swc inspect --json` gives it. */
async function inspectTokens(file: string, tokenizer = 'approx'): Promise<number> {
  const run = await runSwc(['inspect', '--json', '--tokenizer', tokenizer, file], { cwd: path.dirname(file) });
  expect(run.stderr).toBe('');
  return (JSON.parse(run.stdout) as { tokens: number }).tokens;
}

/** The characters of every server tool result block's content in Anthropic messages, as JSON. */
function serverResultChars(messages: readonly AnthropicMessage[]): number {
  let chars = 0;
  for (const m of messages) {
    if (typeof m.content === 'string') continue;
    for (const b of m.content) {
      if (b.type !== 'tool_result' && b.type.endsWith('_tool_result')) chars += JSON.stringify(b.content).length;
    }
  }
  return chars;
}

const pauseTurn = JSON.parse(readFileSync(PAUSE_TURN, 'utf8')) as { messages: AnthropicMessage[] };

describe('server tool results in an Anthropic request (pydantic-ai pause_turn web search)', () => {
  it('counts the ten web search results the model reads, encrypted content included', async () => {
    const tokens = await inspectTokens(PAUSE_TURN);
    // At least every result's content at Haystack's four characters a token; at most the whole file's bytes.
    expect(tokens).toBeGreaterThanOrEqual(Math.floor(serverResultChars(pauseTurn.messages) / 4));
    expect(tokens).toBeLessThanOrEqual(Math.ceil(readFileSync(PAUSE_TURN).length / 4));
  });

  it('counts them with the BPE tokenizer too', async () => {
    // Base64 costs at least one token per 4 characters in o200k_base.
    expect(await inspectTokens(PAUSE_TURN, 'o200k_base')).toBeGreaterThan(serverResultChars(pauseTurn.messages) / 4);
  });

  it('shows the searches as calls answered by their results, the running one unanswered', async () => {
    const run = await runSwc(['inspect', PAUSE_TURN], { cwd: REAL_DATA });
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/step 1 {2}#1 {2}1 msg .*web_search ×11 → 10 results/);
    expect(run.stdout).toContain('no problems found');
  });

  it('shows them in the dry run as well', async () => {
    const run = await compact(pauseTurn, ['--dry-run', '-t', '100']);
    expect(run.stdout).toContain('web_search ×11 → 10 results');
    expect(run.stdout).toMatch(/--- before {2}2 messages {2}[\d,]{5,} tokens/);
  });

  const followUp: AnthropicMessage[] = [
    { role: 'user', content: 'Now give me the three headlines only.' },
    { role: 'assistant', content: [{ type: 'text', text: 'Here they are.' }] },
  ];
  const longer = { ...pauseTurn, messages: [...pauseTurn.messages, ...followUp] };

  it('removes the searching turn whole: calls and results go together', async () => {
    const run = await compact(longer, ['-t', '1000']);
    expect(run.status).toBe(0);
    expect((run.out as typeof longer).messages).toEqual([{ role: 'user', content: NOTE(2) }, ...followUp]);
  });

  it('keeps the searching turn whole when the target leaves room for it, and removes it whole when it is short of it', async () => {
    const tokens = await inspectTokens(write('longer.json', longer));
    const kept = await compact(longer, ['-t', String(tokens)]);
    expect(kept.out).toEqual(longer);
    const short = await compact(longer, ['-t', String(tokens - 50)]);
    expect((short.out as typeof longer).messages).toEqual([{ role: 'user', content: NOTE(2) }, ...followUp]);
  });
});

/** A small task whose first step searches the web and runs code at the provider, the second calls a client tool. */
function serverSteps(): AnthropicMessage[] {
  const pages = 'Result page text. '.repeat(200);
  return [
    { role: 'user', content: 'Find the release date and check it.' },
    {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Searching.' },
        { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'release date' } },
        {
          type: 'web_search_tool_result',
          tool_use_id: 'srvtoolu_1',
          content: [{ type: 'web_search_result', url: 'https://a.example/', title: 'A', encrypted_content: pages }],
        },
        { type: 'server_tool_use', id: 'srvtoolu_2', name: 'code_execution', input: { code: 'print(1)' } },
        {
          type: 'code_execution_tool_result',
          tool_use_id: 'srvtoolu_2',
          content: { type: 'code_execution_tool_result_error', error_code: 'unavailable' },
        },
        { type: 'mcp_tool_use', id: 'mcptoolu_1', name: 'ask', server_name: 'wiki', input: { q: 'x' } },
        {
          type: 'mcp_tool_result',
          tool_use_id: 'mcptoolu_1',
          is_error: false,
          content: [{ type: 'text', text: pages }],
        },
      ],
    },
    {
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'NEWS.md' } }],
    },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: pages }] },
    { role: 'assistant', content: [{ type: 'text', text: 'It was released on 2025-03-01.' }] },
  ];
}

describe('server tool results in Anthropic messages', () => {
  it('names each result after its call and counts code execution errors as error results', async () => {
    const file = write('steps.json', { messages: serverSteps() });
    const run = await runSwc(['inspect', '--tokenizer', 'approx', file], { cwd: path.dirname(file) });
    expect(run.stdout).toMatch(/step 1 .*web_search, code_execution, ask → 3 results/);
    expect(run.stdout).toMatch(/step 2 .*read_file → 1 result/);
    const messages = (
      await compactSource(decodeSource(Buffer.from(JSON.stringify(serverSteps())), 'steps.json'), {
        target: 1e9,
        counter: createApproxCounter(),
      })
    ).conversations[0]?.normalized.messages;
    expect(renderMessage(messages?.[2] as Message).text.split('\n')).toEqual([
      `[tool:web_search] [{"encrypted_content": "${'Result page text. '.repeat(200)}", "title": "A", "type": "web_search_result", "url": "https://a.example/"}]`,
      '[tool:code_execution (error)] {"error_code": "unavailable", "type": "code_execution_tool_result_error"}',
      `[tool:ask] ${'Result page text. '.repeat(200)}`,
    ]);
  });

  it('drops an older step with its server results whole when the window needs room', async () => {
    const messages = serverSteps();
    const run = await compact({ messages }, ['-t', '1300']);
    expect(run.status).toBe(0);
    // The task stays; the searching step (one message) goes; the client step and the answer stay.
    expect((run.out as { messages: unknown[] }).messages).toEqual([
      messages[0],
      { role: 'user', content: NOTE(1) },
      ...messages.slice(2),
    ]);
  });

  it('never prunes a server result: only the client tool result takes the placeholder', async () => {
    // A client step, the searching step, and another client step, the newest, whose result stays.
    const [task, search, call, result, answer] = serverSteps() as [AnthropicMessage, ...AnthropicMessage[]];
    const messages = [task, call, result, search, call, result, answer];
    const run = await compact({ messages }, ['-t', '200', '--strategy', 'prune', '--min-tokens', '10']);
    expect(run.status).toBe(0);
    const out = (run.out as { messages: AnthropicMessage[] }).messages;
    expect((out[2]?.content as Block[])[0]?.content).not.toEqual((result?.content as Block[])[0]?.content);
    expect(out.slice(3)).toEqual(messages.slice(3));
    // What is left counts the two server results and the newest result, 3,600 characters each: no server result
    // was pruned in the figures either.
    expect(tokensAfter(run.stderr)).toBeGreaterThan((3 * 3600) / 4);
  });
});

const PAGES = 'Result page text. '.repeat(200);

/** A Responses task whose one step runs every kind of server tool, then answers. */
function responsesServerStep(): unknown[] {
  return [
    { role: 'user', content: 'Find the leap year rule, check it and draw it.' },
    {
      type: 'web_search_call',
      id: 'ws_1',
      status: 'completed',
      action: { type: 'search', query: 'leap year rule', sources: [{ type: 'url', url: 'https://a.example/' }] },
    },
    {
      type: 'file_search_call',
      id: 'fs_1',
      status: 'completed',
      queries: ['leap'],
      results: [{ file_id: 'file_1', filename: 'rfc.txt', score: 0.9, text: PAGES }],
    },
    {
      type: 'code_interpreter_call',
      id: 'ci_1',
      status: 'completed',
      container_id: 'cntr_1',
      code: 'print(2000 % 400)',
      outputs: [{ type: 'logs', logs: PAGES }],
    },
    {
      type: 'mcp_call',
      id: 'mcp_1',
      name: 'ask_question',
      server_label: 'wiki',
      arguments: '{"q": "leap"}',
      output: PAGES,
      error: null,
    },
    { type: 'mcp_call', id: 'mcp_2', name: 'ask_question', server_label: 'wiki', arguments: '{}', error: 'timeout' },
    { type: 'image_generation_call', id: 'ig_1', status: 'completed', result: 'iVBORw0KGgo'.repeat(500) },
    { type: 'tool_search_call', call_id: null, execution: 'server', arguments: { queries: ['calendar'] } },
    {
      type: 'tool_search_output',
      call_id: null,
      execution: 'server',
      tools: [{ type: 'function', name: 'calendar', description: 'Dates.', parameters: {} }],
    },
    {
      type: 'message',
      role: 'assistant',
      content: [{ type: 'output_text', text: 'Every 4 years, not 100, yes 400.' }],
    },
  ];
}

describe('server tool items in Responses input', () => {
  it('shows each self-contained call answered by what its item holds', async () => {
    const file = write('responses.json', { input: responsesServerStep() });
    const run = await runSwc(['inspect', '--tokenizer', 'approx', file], { cwd: path.dirname(file) });
    expect(run.stdout).toMatch(/step 1 {2}#1-9 {2}9 msgs .* web_search, file_search, code_interpreter, a…/);
    expect(run.stdout).toContain('no problems found');
    // The whole preview, wider than the 80 columns a pipe gets.
    const n = (
      await compactSource(decodeSource(Buffer.from(readFileSync(file)), 'responses.json'), {
        target: 1e9,
        counter: createApproxCounter(),
      })
    ).conversations[0]?.normalized;
    expect(stepText(n?.messages ?? [], [1, 2])).toBe(
      'web_search, file_search, code_interpreter, ask_question ×2, image_generation, tool_search → 7 results · Every 4 years, not 100, yes 400.',
    );
  });

  it('renders the results as the model reads them: texts, JSON, errors, and a generated image as an image', async () => {
    const messages = (
      await compactSource(
        decodeSource(Buffer.from(JSON.stringify({ input: responsesServerStep() })), 'responses.json'),
        { target: 1e9, counter: createApproxCounter() },
      )
    ).conversations[0]?.normalized.messages;
    expect(messages?.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
    // The search's sources are its result, not its arguments.
    expect(renderMessage(messages?.[1] as Message).text).toContain(
      '[assistant -> tool_call] web_search({"query": "leap year rule", "type": "search"})',
    );
    const results = renderMessage(messages?.[2] as Message);
    expect(results.text.split('\n')).toEqual([
      '[tool:web_search] [{"type": "url", "url": "https://a.example/"}]',
      `[tool:file_search] [{"file_id": "file_1", "filename": "rfc.txt", "score": 0.9, "text": "${PAGES}"}]`,
      `[tool:code_interpreter] ${PAGES}`,
      `[tool:ask_question] ${PAGES}`,
      '[tool:ask_question (error)] timeout',
      '[tool:image_generation] <image>',
      '[tool:tool_search] [{"description": "Dates.", "name": "calendar", "parameters": {}, "type": "function"}]',
    ]);
    expect(results.images).toBe(1);
    expect(messages?.[2]?.fixed).toBe(true);
  });

  it('counts them and removes the step whole with its results', async () => {
    const input = [...responsesServerStep(), { role: 'user', content: 'Thanks. Now the short version.' }];
    const file = write('responses.json', { input });
    expect(await inspectTokens(file)).toBeGreaterThan((3 * PAGES.length) / 4);
    const run = await compact({ input }, ['-t', '100']);
    expect(run.status).toBe(0);
    expect((run.out as { input: unknown[] }).input).toEqual([{ role: 'user', content: NOTE(10) }, input[10]]);
  });

  it('never prunes a server result', async () => {
    const [task, ...step] = responsesServerStep();
    const call = (id: string): unknown[] => [
      { type: 'function_call', call_id: id, name: 'read', arguments: '{}' },
      { type: 'function_call_output', call_id: id, output: PAGES },
    ];
    const input = [task, ...call('call_1'), ...step, { role: 'user', content: 'And again.' }, ...call('call_2')];
    const run = await compact({ input }, ['-t', '100', '--strategy', 'prune', '--min-tokens', '10']);
    expect(run.status).toBe(0);
    const out = (run.out as { input: Record<string, unknown>[] }).input;
    // The first call's output (in history) is pruned; the server results beside it are not, in the file or the figures.
    expect(out[2]?.output).not.toBe(PAGES);
    expect(out.slice(3)).toEqual(input.slice(3));
    expect(tokensAfter(run.stderr)).toBeGreaterThan((3 * PAGES.length) / 4);
  });
});

/** A Claude Code session whose first step searches the web at the provider, its result on a line of its own. */
function claudeCodeSession(): Record<string, unknown>[] {
  const session = { sessionId: 's-1', cwd: '/work/demo', version: '2.1.29', userType: 'external', isSidechain: false };
  let parent: string | null = null;
  let n = 0;
  const line = (type: 'user' | 'assistant', message: Record<string, unknown>): Record<string, unknown> => {
    const uuid = `00000000-0000-4000-8000-00000000000${++n}`;
    const out = { parentUuid: parent, ...session, type, message, uuid, timestamp: `2026-03-02T09:00:0${n}.000Z` };
    parent = uuid;
    return out;
  };
  const said = (id: string, content: unknown[]): Record<string, unknown> => ({
    id,
    type: 'message',
    role: 'assistant',
    model: 'claude-opus-4-5',
    content,
  });
  return [
    line('user', { role: 'user', content: 'Find the release date.' }),
    line(
      'assistant',
      said('msg_A', [
        { type: 'text', text: 'Searching.' },
        { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'release date' } },
      ]),
    ),
    line(
      'assistant',
      said('msg_A', [
        {
          type: 'web_search_tool_result',
          tool_use_id: 'srvtoolu_1',
          content: [{ type: 'web_search_result', url: 'https://a.example/', title: 'A', encrypted_content: PAGES }],
        },
      ]),
    ),
    line('assistant', said('msg_B', [{ type: 'tool_use', id: 'toolu_1', name: 'Read', input: { file_path: 'NEWS' } }])),
    line('user', { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: PAGES }] }),
    line('assistant', said('msg_C', [{ type: 'text', text: 'Released on 2025-03-01.' }])),
  ];
}

describe('server tool results in Claude Code sessions', () => {
  const lines = claudeCodeSession();
  const jsonl = lines.map((l) => JSON.stringify(l)).join('\n') + '\n';

  it('counts a web search result on an assistant line and shows it as the result of its call', async () => {
    const file = path.join(tempDir(), 'session.jsonl');
    writeFileSync(file, jsonl);
    expect(await inspectTokens(file)).toBeGreaterThan((2 * PAGES.length) / 4);
    const run = await runSwc(['inspect', '--tokenizer', 'approx', file], { cwd: path.dirname(file) });
    expect(run.stdout).toMatch(/step 1 {2}#1-2 {2}2 msgs .* web_search → 1 result · Searching\./);
    expect(run.stdout).toContain('no problems found');
  });

  it('removes the searching step whole, its result line with it, and chains the rest', async () => {
    const run = await runSwc(['compact', '-', '--tokenizer', 'approx', '-t', '1000'], { cwd: tempDir(), stdin: jsonl });
    expect(run.status).toBe(0);
    const out = run.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(out.map((l) => l.uuid)).not.toContain(lines[1]?.uuid);
    expect(out.map((l) => l.uuid)).not.toContain(lines[2]?.uuid);
    expect(out.filter((l) => lines.some((k) => k.uuid === l.uuid)).map((l) => l.uuid)).toEqual(
      [lines[0], lines[3], lines[4], lines[5]].map((l) => l?.uuid),
    );
  });
});

/** One step of a random Anthropic conversation: a call with its result, run by the client or by the provider. */
interface RandomStep {
  readonly user: string | null;
  readonly text: string | null;
  readonly name: string;
  readonly query: string;
  readonly result: string;
  readonly server: boolean;
}

const word = fc.constantFrom('alpha', 'bravo', 'Zürich', '東京', '😀', 'order-123', 'quote"d', 'line\nbreak', '42');
const words = (max: number): fc.Arbitrary<string> =>
  fc.array(word, { minLength: 1, maxLength: max }).map((w) => w.join(' '));
const randomStep: fc.Arbitrary<RandomStep> = fc.record({
  user: fc.option(words(12), { freq: 3 }),
  text: fc.option(words(8)),
  name: fc.constantFrom('search', 'ask', 'read_file'),
  query: words(4),
  result: words(120),
  server: fc.boolean(),
});

/**
 * The conversation as Anthropic messages: a server step as one assistant message holding its MCP call and result,
 * and (`asClient`) every step as a client call and a user message with its `tool_result`. Each message comes with
 * the step it belongs to (-1 for the task), so the two files can be compared step for step.
 */
function anthropicOf(
  task: string,
  steps: readonly RandomStep[],
  asClient: boolean,
): { messages: unknown[]; stepOf: number[] } {
  const messages: unknown[] = [{ role: 'user', content: task }];
  const stepOf = [-1];
  steps.forEach((s, k) => {
    const push = (m: unknown): void => {
      messages.push(m);
      stepOf.push(k);
    };
    if (s.user !== null) push({ role: 'user', content: s.user });
    const text = s.text === null ? [] : [{ type: 'text', text: s.text }];
    const id = `toolu_${k}`;
    if (s.server && !asClient) {
      push({
        role: 'assistant',
        content: [
          ...text,
          { type: 'mcp_tool_use', id, name: s.name, server_name: 'wiki', input: { q: s.query } },
          { type: 'mcp_tool_result', tool_use_id: id, is_error: false, content: [{ type: 'text', text: s.result }] },
        ],
      });
      return;
    }
    push({ role: 'assistant', content: [...text, { type: 'tool_use', id, name: s.name, input: { q: s.query } }] });
    push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: s.result }] });
  });
  return { messages, stepOf };
}

describe('server tool results against the same results run by the client (property)', () => {
  const NOTE_TEXT = '[Earlier messages were removed.]';
  const run = (messages: unknown[], target: number): ReturnType<typeof compactSource> =>
    compactSource(decodeSource(Buffer.from(JSON.stringify({ messages })), 'c.json'), {
      target,
      counter: createApproxCounter(),
      format: 'anthropic',
      note: NOTE_TEXT,
    });
  /** Which messages of the input the output keeps, by position (the note is none of them). */
  const keptOf = (input: readonly unknown[], output: string): number[] => {
    const keys = input.map((m) => JSON.stringify(m));
    let from = 0;
    const kept: number[] = [];
    for (const m of (JSON.parse(output) as { messages: unknown[] }).messages) {
      const at = keys.indexOf(JSON.stringify(m), from);
      if (at < 0) continue;
      kept.push(at);
      from = at + 1;
    }
    return kept;
  };

  it('counts a server result as the same result from a client tool, and keeps or removes the same steps', async () => {
    await fc.assert(
      fc.asyncProperty(
        words(20),
        fc.array(randomStep, { minLength: 1, maxLength: 7 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        async (task, steps, share) => {
          const server = anthropicOf(task, steps, false);
          const client = anthropicOf(task, steps, true);
          const whole = (await run(client.messages, 1e9)).conversations[0]?.plan.tokensBefore as number;
          expect((await run(server.messages, 1e9)).conversations[0]?.plan.tokensBefore).toBe(whole);
          const target = Math.floor(whole * share);
          const fromServer = await run(server.messages, target);
          const fromClient = await run(client.messages, target);
          // The same steps (and task) stay; a server step is its one message, a client step its two.
          const stepsKept = (r: typeof fromServer, stepOf: readonly number[], input: readonly unknown[]): number[] => [
            ...new Set(keptOf(input, r.output).map((i) => stepOf[i] as number)),
          ];
          expect(stepsKept(fromServer, server.stepOf, server.messages)).toEqual(
            stepsKept(fromClient, client.stepOf, client.messages),
          );
          expect(fromServer.conversations[0]?.plan.tokensAfter).toBe(fromClient.conversations[0]?.plan.tokensAfter);
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe("the differential tests' random conversations with steps run at the provider", () => {
  const NOTE_TEXT = '[Earlier messages were removed.]';
  const KEY = { anthropic: 'messages', responses: 'input' } as const;
  const rewrite = { anthropic: anthropicServerSteps, responses: responsesServerSteps } as const;

  /** The case's document with its list replaced. */
  const documentOf = (format: 'anthropic' | 'responses', text: string, items: unknown[]): string => {
    const doc = JSON.parse(text) as Record<string, unknown>;
    return JSON.stringify({ ...doc, [KEY[format]]: items });
  };
  const compactDoc = (format: string, text: string, target: number): ReturnType<typeof compactSource> =>
    compactSource(decodeSource(Buffer.from(text), 'c.json'), {
      target,
      counter: createApproxCounter(),
      format,
      note: NOTE_TEXT,
    });
  /** The conversation's messages whose items the output keeps (the note and instructions are none of them). */
  const keptMessages = (
    format: 'anthropic' | 'responses',
    items: unknown[],
    itemOf: (number | null)[],
    output: string,
  ): number[] => {
    const keys = items.map((m) => JSON.stringify(m));
    const kept = new Set<number>();
    let from = 0;
    for (const m of (JSON.parse(output) as Record<string, unknown[]>)[KEY[format]] ?? []) {
      const at = keys.indexOf(JSON.stringify(m), from);
      if (at < 0) continue;
      kept.add(at);
      from = at + 1;
    }
    return itemOf.flatMap((item, k) => (item !== null && kept.has(item) ? [k] : []));
  };

  it.each(['anthropic', 'responses'] as const)(
    'counts and keeps a %s conversation the same whether its steps run at the provider or the client',
    async (format) => {
      let rewritten = 0;
      for (let seed = 1; seed <= 120; seed++) {
        const conversation = randomShapes(seed, shapeOf(format));
        const written = writeAs(format, conversation);
        const items = listOf(format, JSON.parse(written.text)).items;
        const rng = createRng(seed);
        const server = rewrite[format]({ items, itemOf: [...written.itemOf] }, () => rng.chance(0.7));
        if (server.items.length === items.length) continue;
        rewritten++;
        const serverText = documentOf(format, written.text, server.items);
        const whole = (await compactDoc(format, written.text, 1e9)).conversations[0]?.plan.tokensBefore as number;
        expect({
          seed,
          tokens: (await compactDoc(format, serverText, 1e9)).conversations[0]?.plan.tokensBefore,
        }).toEqual({
          seed,
          tokens: whole,
        });
        const target = Math.floor(whole * rng.next());
        const fromClient = await compactDoc(format, written.text, target);
        const fromServer = await compactDoc(format, serverText, target);
        expect({ seed, kept: keptMessages(format, server.items, server.itemOf, fromServer.output) }).toEqual({
          seed,
          kept: keptMessages(format, items, [...written.itemOf], fromClient.output),
        });
      }
      expect(rewritten).toBeGreaterThan(40);
    },
  );
});
