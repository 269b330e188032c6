/**
 * Server-side tools (web search, web fetch, code execution, tool search, MCP) run at the provider, and their results
 * come back inside the assistant's own message (Anthropic) or item (Responses). The model reads those results as it
 * reads any tool result, so they are counted, shown as results of their calls, and kept whole with their calls.
 */
import { describe, expect, it } from '@jest/globals';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { renderMessage } from '../../src/core/render.js';
import type { Message } from '../../src/core/types.js';
import { decodeSource } from '../../src/io/source.js';
import { compactSource } from '../../src/pipeline/index.js';
import { createApproxCounter } from '../../src/tokens/approx.js';
import { REAL_DATA, tempDir } from '../helpers/cli.js';
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
): Promise<{ status: number; stdout: string; out: unknown }> {
  const run = await runSwc(['compact', '-', '--tokenizer', 'approx', ...args], {
    cwd: tempDir(),
    stdin: JSON.stringify(value, null, 2),
  });
  expect(run.stderr).not.toMatch(/error/i);
  const dry = args.includes('--dry-run');
  return { status: run.status, stdout: run.stdout, out: dry ? null : JSON.parse(run.stdout) };
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
    const messages = compactSource(decodeSource(Buffer.from(JSON.stringify(serverSteps())), 'steps.json'), {
      target: 1e9,
      counter: createApproxCounter(),
    }).conversations[0]?.normalized.messages;
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
    // The client step first, then the searching step and the answer, so neither result is in the newest step.
    const [task, search, call, result, answer] = serverSteps() as [AnthropicMessage, ...AnthropicMessage[]];
    const messages = [task, call, result, search, answer, { role: 'user', content: 'And the version?' }];
    const run = await compact({ messages }, ['-t', '200', '--strategy', 'prune', '--min-tokens', '10']);
    expect(run.status).toBe(0);
    const out = (run.out as { messages: AnthropicMessage[] }).messages;
    expect(out[3]).toEqual(search);
    expect((out[2]?.content as Block[])[0]?.content).not.toEqual((result?.content as Block[])[0]?.content);
    // The dry run's before figure counts the server results: two of 3,600 characters, and the error.
    const dry = await compact({ messages }, ['--dry-run', '-t', '200', '--strategy', 'prune', '--min-tokens', '10']);
    const before = /--- before {2}\d+ messages {2}([\d,]+) tokens/.exec(dry.stdout)?.[1];
    expect(Number(before?.replace(/,/g, ''))).toBeGreaterThan((3 * 3600) / 4);
  });
});
