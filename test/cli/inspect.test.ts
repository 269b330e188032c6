/**
 * `swc inspect`: the pairing checks on their own, then the command line (run in process) on temporary copies of the
 * broken fixtures (one per problem kind) and on the real transcripts in fixtures/real.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkPairing, inspectSource } from '../../src/cli/inspect.js';
import { ROOT as REPO } from '../helpers/cli.js';
import { runSwc, type InProcessRun } from '../helpers/run-in-process.js';
import { textContent } from '../../src/core/render.js';
import type { Message } from '../../src/core/types.js';
import { anthropic } from '../../src/formats/anthropic.js';
import { claudeCode } from '../../src/formats/claude-code.js';
import { gemini } from '../../src/formats/gemini.js';
import { haystack } from '../../src/formats/haystack.js';
import { langchain } from '../../src/formats/langchain.js';
import { openai } from '../../src/formats/openai.js';
import { responses } from '../../src/formats/responses.js';
import { sharegpt } from '../../src/formats/sharegpt.js';
import type { ConversationInput, Pairing } from '../../src/formats/types.js';
import { decodeSource } from '../../src/io/source.js';
import { createFakeCounter } from '../helpers/fake-counter.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const fixtures = path.join(root, 'fixtures/inspect');
const data = path.join(root, 'fixtures/real');

const msg = (role: Message['role']): Message => ({ role, content: textContent('x') });

describe('pairing checks', () => {
  // Messages: 0 user, 1 assistant (calls), 2 tool, 3 tool, 4 assistant, 5 tool; items are messages here.
  const roles: Message[] = [msg('user'), msg('assistant'), msg('tool'), msg('tool'), msg('assistant'), msg('tool')];
  const check = (pairing: Pairing) =>
    checkPairing(
      pairing,
      (item) => item,
      roles,
      (item) => item + 10,
    );

  it('accepts calls answered by the tool messages right after them', () => {
    expect(
      check({
        calls: [
          { item: 1, id: 'a', name: 'search' },
          { item: 1, id: 'b', name: 'read' },
        ],
        results: [
          { item: 2, id: 'b', name: '' },
          { item: 3, id: 'a', name: '' },
        ],
      }),
    ).toEqual([]);
  });

  it('flags a call without a result, and a result without a call', () => {
    expect(
      check({
        calls: [{ item: 1, id: 'a', name: 'search' }],
        results: [{ item: 2, id: 'z', name: '' }],
      }),
    ).toEqual([
      { kind: 'orphan-result', rule: 'orphan-result', item: 2, text: 'result for call id "z" answers no call' },
      { kind: 'missing-result', rule: 'missing-result', item: 1, text: 'tool call "a" (search) has no result' },
    ]);
  });

  it('flags a result that is not right after its call, and the call it leaves unanswered', () => {
    expect(
      check({
        calls: [{ item: 1, id: 'a', name: 'search' }],
        results: [{ item: 5, id: 'a', name: '' }],
      }),
    ).toEqual([
      {
        kind: 'orphan-result',
        rule: 'result-not-after-call',
        item: 5,
        text: 'result for call id "a" is not right after its call (line 11)',
      },
      {
        kind: 'missing-result',
        rule: 'result-not-after-call',
        item: 1,
        text: 'tool call "a" (search) has no result right after it',
      },
    ]);
  });

  it('flags a second result for a call that already has one', () => {
    expect(
      check({
        calls: [{ item: 1, id: 'a', name: 'search' }],
        results: [
          { item: 2, id: 'a', name: '' },
          { item: 3, id: 'a', name: '' },
        ],
      }),
    ).toEqual([
      {
        kind: 'orphan-result',
        rule: 'repeated-result',
        item: 3,
        text: 'result for call id "a" repeats a result the call already has',
      },
    ]);
  });

  it('flags a call id used twice', () => {
    expect(
      check({
        calls: [
          { item: 1, id: 'a', name: 'search' },
          { item: 4, id: 'a', name: 'search' },
        ],
        results: [
          { item: 2, id: 'a', name: '' },
          { item: 5, id: 'a', name: '' },
        ],
      }),
    ).toEqual([
      {
        kind: 'duplicate-id',
        rule: 'reused-id',
        item: 4,
        text: 'call id "a" (search) is already used by the call on line 11',
      },
    ]);
  });

  it('pairs calls and results without ids by tool name, in order', () => {
    expect(
      check({
        calls: [
          { item: 1, id: null, name: 'search' },
          { item: 1, id: null, name: 'read' },
        ],
        results: [
          { item: 2, id: null, name: 'read' },
          { item: 3, id: null, name: 'write' },
        ],
      }),
    ).toEqual([
      {
        kind: 'orphan-result',
        rule: 'orphan-result',
        item: 3,
        text: 'result of write (no call id) answers no call right before it',
      },
      {
        kind: 'missing-result',
        rule: 'missing-result',
        item: 1,
        text: 'tool call without an id (search) has no result',
      },
    ]);
  });
});

/** A ConversationInput over parsed items, for calling an adapter's `pairing` directly. */
function inputOf(items: unknown[]): ConversationInput {
  return {
    file: 'x.json',
    items,
    raws: items.map((i) => JSON.stringify(i)),
    container: null,
    fail(item, reason): never {
      throw new Error(`${item}: ${reason}`);
    },
  };
}

describe('adapter pairing', () => {
  it('reads OpenAI tool_call ids, tool_call_id and SWE-agent tool_call_ids, and unknown roles', () => {
    const pairing = openai.pairing?.(
      inputOf([
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'a', content: 'r' },
        { role: 'tool', tool_call_ids: ['b', 'c'], content: 'r' },
        { role: 'narrator', content: 'r' },
        { role: 'constructor', content: 'r' },
        'not a message',
      ]),
    );
    expect(pairing).toEqual({
      calls: [{ item: 0, id: 'a', name: 'f' }],
      results: [
        { item: 1, id: 'a', name: '' },
        { item: 2, id: 'b', name: '' },
        { item: 2, id: 'c', name: '' },
      ],
      unknownRoles: [
        { item: 3, role: 'narrator' },
        { item: 4, role: 'constructor' },
        { item: 5, role: null },
      ],
    });
  });

  it('reads Haystack tool_call ids and the origin of each tool_call_result', () => {
    const call = { tool_name: 'f', arguments: {}, id: 'a' };
    const pairing = haystack.pairing?.(
      inputOf([
        {
          role: 'assistant',
          meta: {},
          content: [{ text: 'hi' }, { tool_call: call }, { tool_call: { ...call, id: null, tool_name: 'g' } }],
        },
        { role: 'tool', meta: {}, content: [{ tool_call_result: { result: 'r', origin: call, error: false } }] },
        { role: 'robot', meta: {}, content: [] },
      ]),
    );
    expect(pairing).toEqual({
      calls: [
        { item: 0, id: 'a', name: 'f' },
        { item: 0, id: null, name: 'g' },
      ],
      results: [{ item: 1, id: 'a', name: 'f' }],
      unknownRoles: [{ item: 2, role: 'robot' }],
    });
  });
});

describe('adapter pairing of the other formats', () => {
  it('reads Anthropic tool_use and tool_result, server calls with their results in the same message, and blocks on the wrong side', () => {
    const pairing = anthropic.pairing?.(
      inputOf([
        { role: 'user', content: [{ type: 'text', text: 'go' }] },
        {
          role: 'assistant',
          content: [
            { type: 'server_tool_use', id: 's1', name: 'web_search', input: {} },
            { type: 'web_search_tool_result', tool_use_id: 's1', content: [] },
            { type: 'tool_use', id: 'a', name: 'f', input: {} },
            { type: 'tool_result', tool_use_id: 'x', content: 'r' },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'a', content: 'r' },
            { type: 'tool_use', id: 'b', name: 'g', input: {} },
          ],
        },
        { role: 'tool', content: 'r' },
        { role: 'assistant', content: [{ type: 'server_tool_use', id: 's2', name: 'web_search', input: {} }] },
      ]),
    );
    expect(pairing).toEqual({
      calls: [
        { item: 1, id: 's1', name: 'web_search' },
        { item: 1, id: 'a', name: 'f' },
      ],
      results: [
        { item: 1, id: 's1', name: '' },
        { item: 2, id: 'a', name: '' },
      ],
      unknownRoles: [{ item: 3, role: 'tool' }],
      problems: [
        {
          item: 1,
          text: 'tool_result block for "x" in an assistant message (results go in the user message after the call)',
        },
        { item: 2, text: 'tool_use block "b" in a user message (only assistant messages call tools)' },
      ],
    });
  });

  it('reads Responses calls and outputs by call_id, leaving out calls that hold their own result', () => {
    const pairing = responses.pairing?.(
      inputOf([
        'hi',
        { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
        { type: 'custom_tool_call', call_id: 'c2', name: 'patch', input: 'x' },
        { type: 'computer_call', call_id: 'c3', action: { type: 'click' } },
        { type: 'mcp_call', id: 'mcp_1', name: 'ask', arguments: '{}', output: 'r' },
        { type: 'web_search_call', id: 'ws_1', status: 'completed' },
        { type: 'tool_search_call', id: 'ts_1', call_id: null },
        { type: 'tool_search_output', id: 'tso_1', call_id: null },
        { type: 'mcp_approval_request', id: 'ap_1', name: 'ask', arguments: '{}' },
        { type: 'mcp_approval_request', id: 'ap_2', name: 'delete', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c1', output: 'r' },
        { type: 'custom_tool_call_output', call_id: 'c2', output: 'r' },
        { type: 'computer_call_output', call_id: 'c3', output: { type: 'computer_screenshot' } },
        { type: 'mcp_approval_response', approval_request_id: 'ap_1', approve: true },
        { type: 'function_call', name: 'g', arguments: '{}' },
        { type: 'message', role: 'tool', content: 'r' },
        { content: 'no role' },
      ]),
    );
    expect(pairing).toEqual({
      calls: [
        { item: 1, id: 'c1', name: 'f' },
        { item: 2, id: 'c2', name: 'patch' },
        { item: 3, id: 'c3', name: 'computer' },
        { item: 8, id: 'ap_1', name: 'ask' },
      ],
      results: [
        { item: 10, id: 'c1', name: '' },
        { item: 11, id: 'c2', name: '' },
        { item: 12, id: 'c3', name: '' },
        { item: 13, id: 'ap_1', name: '' },
      ],
      unknownRoles: [
        { item: 15, role: 'tool' },
        { item: 16, role: null },
      ],
      problems: [{ item: 14, text: 'function_call has no "call_id"' }],
    });
  });

  it('reads Gemini calls and responses in either spelling, ids optional, in contents and ADK events', () => {
    const pairing = gemini.pairing?.(
      inputOf([
        { author: 'user', content: { role: 'user', parts: [{ text: 'go' }] } },
        {
          author: 'agent',
          content: {
            role: 'model',
            parts: [{ function_call: { name: 'f', args: {} } }, { functionCall: { id: 'c2', name: 'g', args: {} } }],
          },
        },
        { author: 'agent', actions: { state_delta: {} } },
        {
          author: 'agent',
          content: {
            role: 'user',
            parts: [
              { function_response: { name: 'f', response: {} } },
              { functionResponse: { id: 'c2', name: 'g', response: {} } },
            ],
          },
        },
        { author: 'agent', content: { role: 'model', parts: [{ functionResponse: { name: 'f', response: {} } }] } },
        { author: 'agent', content: { role: 'system', parts: [{ text: 'x' }] } },
        'not a content',
      ]),
    );
    // The model content and the responses right after it are one turn (an event without content between them too).
    const turn = 'model contents from item 1';
    expect(pairing).toEqual({
      calls: [
        { item: 1, id: null, name: 'f', turn },
        { item: 1, id: 'c2', name: 'g', turn },
      ],
      results: [
        { item: 3, id: null, name: 'f', turn },
        { item: 3, id: 'c2', name: 'g', turn },
      ],
      unknownRoles: [
        { item: 5, role: 'system' },
        { item: 6, role: null },
      ],
      problems: [
        { item: 4, text: 'function response "f" in a model content (responses go in the content after the call)' },
      ],
      idsOptional: true,
    });
  });

  it('reads LangChain tool_calls, invalid_tool_calls and their fallbacks, tool_call_id, and unknown types', () => {
    const ai = (data: Record<string, unknown>) => ({ type: 'ai', data: { content: '', ...data } });
    const pairing = langchain.pairing?.(
      inputOf([
        ai({
          tool_calls: [{ name: 'f', args: {}, id: 'a' }],
          invalid_tool_calls: [{ name: 'g', args: '{', id: 'b', error: 'bad' }],
        }),
        { type: 'tool', data: { content: 'r', tool_call_id: 'a' } },
        {
          lc: 1,
          type: 'constructor',
          id: ['langchain', 'schema', 'messages', 'AIMessage'],
          kwargs: { content: [{ type: 'tool_use', id: 'c', name: 'h', input: {} }], tool_calls: [] },
        },
        ai({
          additional_kwargs: {
            tool_calls: [{ id: 'd', type: 'function', function: { name: 'k', arguments: '{}' } }],
            function_call: { name: 'old', arguments: '{}' },
          },
        }),
        { type: 'function', data: { content: 'r', name: 'old' } },
        { type: 'robot', data: { content: 'r' } },
        { type: 'chat', data: { content: 'r', role: 'narrator' } },
      ]),
    );
    expect(pairing).toEqual({
      calls: [
        { item: 0, id: 'a', name: 'f' },
        { item: 0, id: 'b', name: 'g' },
        { item: 2, id: 'c', name: 'h' },
        { item: 3, id: 'd', name: 'k' },
        { item: 3, id: null, name: 'old' },
      ],
      results: [
        { item: 1, id: 'a', name: '' },
        { item: 4, id: null, name: 'old' },
      ],
      unknownRoles: [
        { item: 5, role: 'robot' },
        { item: 6, role: 'narrator' },
      ],
    });
  });

  it('reads Claude Code calls and results per line, giving sidechain lines the sub-agent message up their parentUuid chain', () => {
    const line = (
      uuid: string,
      parentUuid: string | null,
      type: string,
      content: unknown,
      extra: Record<string, unknown> = {},
    ) => ({
      parentUuid,
      isSidechain: false,
      type,
      message: type === 'assistant' ? { id: `m-${uuid}`, role: type, content } : { role: type, content },
      uuid,
      ...extra,
    });
    const side = { isSidechain: true };
    const pairing = claudeCode.pairing?.(
      inputOf([
        line('u1', null, 'user', 'go'),
        line('a1', 'u1', 'assistant', [{ type: 'tool_use', id: 'task', name: 'Task', input: {} }]),
        line('s1', null, 'user', 'sub-agent prompt', side),
        line('s2', 's1', 'assistant', [{ type: 'tool_use', id: 'x', name: 'Read', input: {} }], side),
        line('s3', 's2', 'user', [{ type: 'tool_result', tool_use_id: 'x', content: 'r' }], side),
        line('s4', 's1', 'user', [{ type: 'tool_result', tool_use_id: 'y', content: 'r' }], side),
        line('u2', 'a1', 'user', [{ type: 'tool_result', tool_use_id: 'task', content: 'r' }]),
        'not an event',
      ]),
    );
    expect(pairing).toEqual({
      calls: [
        { item: 1, id: 'task', name: 'Task' },
        { item: 3, id: 'x', name: 'Read', turn: 'side message m-s2' },
      ],
      results: [
        { item: 4, id: 'x', name: '', turn: 'side message m-s2' },
        { item: 5, id: 'y', name: '', turn: 'side result at line 5' },
        { item: 6, id: 'task', name: '' },
      ],
      unknownRoles: [{ item: 7, role: null }],
      problems: [],
    });
  });

  it('pairs ShareGPT observations with the calls of the run before them by position, the last observation taking the rest', () => {
    const typed = (role: string, ...parts: [string, string][]) => ({
      role,
      content: parts.map(([type, value]) => ({ type, value })),
    });
    const call = (name: string) => ['tool_call', JSON.stringify({ name, arguments: {} })] as [string, string];
    const pairing = sharegpt.pairing?.(
      inputOf([
        typed('user', ['text', 'go']),
        typed('assistant', ['reasoning', 'r'], call('f'), call('g'), call('h')),
        typed('tool', ['text', 'r1']),
        typed('tool', ['text', 'r2 and r3']),
        typed('assistant', ['text', 'done']),
        typed('tool', ['text', 'r4']),
        typed('narrator', ['text', 'x']),
        typed('user', ['text', 'again']),
        typed('assistant', call('k')),
      ]),
    );
    expect(pairing).toEqual({
      calls: [
        { item: 1, id: null, name: 'f' },
        { item: 1, id: null, name: 'g' },
        { item: 1, id: null, name: 'h' },
      ],
      results: [
        { item: 2, id: null, name: '' },
        { item: 3, id: null, name: '' },
        { item: 3, id: null, name: '' },
        { item: 5, id: null, name: '' },
      ],
      unknownRoles: [{ item: 6, role: 'narrator' }],
    });
  });
});

/** The problems inspect finds in a transcript given as a value (or JSONL text), as `kind: text` lines. */
function problemsIn(value: unknown, file = 'x.json'): string[] {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  const inspection = inspectSource(decodeSource(Buffer.from(text), file), {
    format: 'auto',
    counter: createFakeCounter(),
  });
  return inspection.conversations.flatMap((c) => c.problems.map((p) => `${p.kind}: ${p.text}`));
}

describe('pairing rules per format', () => {
  const serverCall = (id: string) => ({ type: 'server_tool_use', id, name: 'web_search', input: { query: 'q' } });
  const serverResult = (id: string) => ({ type: 'web_search_tool_result', tool_use_id: id, content: [] });

  it('accepts an Anthropic server call still running at the end of the conversation (pause_turn)', () => {
    const messages = [
      { role: 'user', content: 'Search.' },
      {
        role: 'assistant',
        content: [serverCall('s1'), serverResult('s1'), { type: 'text', text: 'More.' }, serverCall('s2')],
      },
    ];
    expect(problemsIn({ model: 'm', messages })).toEqual([]);
  });

  it('flags an Anthropic server call left without a result before the end', () => {
    const messages = [
      { role: 'user', content: 'Search.' },
      { role: 'assistant', content: [serverCall('s1'), { type: 'text', text: 'Paused.' }] },
      { role: 'user', content: 'Go on.' },
      { role: 'assistant', content: [{ type: 'text', text: 'Done.' }] },
    ];
    expect(problemsIn({ model: 'm', messages })).toEqual(['missing-result: tool call "s1" (web_search) has no result']);
  });

  it('accepts Responses calls that hold their own result and a server tool search without call ids', () => {
    const input = [
      { role: 'user', content: 'Go.' },
      { type: 'reasoning', id: 'rs_1', summary: [] },
      { type: 'tool_search_call', id: 'ts_1', call_id: null, status: 'completed' },
      { type: 'tool_search_output', id: 'tso_1', call_id: null, tools: [] },
      { type: 'mcp_call', id: 'mcp_1', name: 'ask', arguments: '{}', output: 'r', server_label: 's' },
      { type: 'custom_tool_call', call_id: 'c1', name: 'patch', input: 'x' },
      { type: 'custom_tool_call_output', call_id: 'c1', output: 'ok' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Done.' }] },
    ];
    expect(problemsIn({ input })).toEqual([]);
  });

  it('flags a Responses output parted from its call by a user message', () => {
    const input = [
      { role: 'user', content: 'Go.' },
      { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
      { role: 'user', content: 'Hurry.' },
      { type: 'function_call_output', call_id: 'c1', output: 'r' },
    ];
    expect(problemsIn({ input })).toEqual([
      'missing-result: tool call "c1" (f) has no result right after it',
      'orphan-result: result for call id "c1" is not right after its call (line 1)',
    ]);
  });

  it('lets a Gemini response without an id answer a call with one, by name', () => {
    const contents = (name: string) => [
      { role: 'user', parts: [{ text: 'Go.' }] },
      { role: 'model', parts: [{ functionCall: { id: 'c1', name: 'f', args: {} } }] },
      { role: 'user', parts: [{ functionResponse: { name, response: { result: 'r' } } }] },
    ];
    expect(problemsIn({ contents: contents('f') })).toEqual([]);
    expect(problemsIn({ contents: contents('g') })).toEqual([
      'missing-result: tool call "c1" (f) has no result',
      'orphan-result: result of g (no call id) answers no call right before it',
    ]);
  });

  it('requires a result for every LangChain invalid tool call too', () => {
    const messages = [
      { type: 'human', data: { content: 'Go.' } },
      {
        type: 'ai',
        data: {
          content: '',
          tool_calls: [{ name: 'f', args: {}, id: 'a' }],
          invalid_tool_calls: [{ name: 'g', args: '{', id: 'b', error: 'bad' }],
        },
      },
      { type: 'tool', data: { content: 'r', tool_call_id: 'a' } },
    ];
    expect(problemsIn(messages)).toEqual(['missing-result: tool call "b" (g) has no result']);
  });

  describe('Claude Code', () => {
    let n = 0;
    const line = (type: string, content: unknown, extra: Record<string, unknown> = {}) => ({
      parentUuid: null as string | null,
      isSidechain: false,
      sessionId: 's',
      type,
      message: { role: type, content },
      uuid: `u${++n}`,
      ...extra,
    });
    const say = (id: string, block: unknown, extra: Record<string, unknown> = {}) => {
      const l = line('assistant', [block], extra);
      (l.message as Record<string, unknown>).id = id;
      return l;
    };
    const use = (id: string, name: string) => ({ type: 'tool_use', id, name, input: {} });
    const result = (id: string) => ({ type: 'tool_result', tool_use_id: id, content: 'r' });
    /** Chains the lines: each main line and each sidechain line follows the one before it on its own chain. */
    const session = (lines: ReturnType<typeof line>[]): string => {
      let main: string | null = null;
      let side: string | null = null;
      for (const l of lines) {
        const onSide = l.isSidechain;
        if (l.parentUuid === null && !(onSide && l.type === 'user' && typeof l.message.content === 'string'))
          l.parentUuid = onSide ? side : main;
        if (onSide) side = l.uuid;
        else main = l.uuid;
      }
      return lines.map((l) => JSON.stringify(l)).join('\n');
    };
    const sc = { isSidechain: true };

    it('accepts split assistant lines, a meta line, and sub-agents whose lines sit between the main results', () => {
      n = 0;
      const text = session([
        line('user', 'Build it.'),
        say('m1', { type: 'text', text: 'Two agents.' }),
        say('m1', use('task_a', 'Task')),
        line('user', 'Hook says hi.', { isMeta: true }),
        say('m1', use('task_b', 'Task')),
        line('user', [result('task_a')]),
        line('user', 'Sub-agent B prompt', sc),
        say('s1', use('read_1', 'Read'), sc),
        say('s1', use('read_2', 'Read'), sc),
        line('user', [result('read_1')], sc),
        line('user', [result('read_2')], sc),
        say('s2', { type: 'text', text: 'B done.' }, sc),
        line('user', [result('task_b')]),
        say('m2', { type: 'text', text: 'Built.' }),
      ]);
      expect(problemsIn(text, 'x.jsonl')).toEqual([]);
    });

    it('pairs sidechain lines only among themselves', () => {
      n = 0;
      const text = session([
        line('user', 'Build it.'),
        say('m1', use('task_a', 'Task')),
        line('user', 'Sub-agent prompt', sc),
        say('s1', use('read_1', 'Read'), sc),
        line('user', [result('task_a')], sc),
        line('user', [result('task_a')]),
        say('m2', { type: 'text', text: 'Built.' }),
      ]);
      expect(problemsIn(text, 'x.jsonl')).toEqual([
        'missing-result: tool call "read_1" (Read) has no result',
        'orphan-result: result for call id "task_a" is not right after its call (line 2)',
      ]);
    });
  });

  it('accepts a ShareGPT conversation ending in a call (the training target) and parallel calls answered by one observation', () => {
    const conversations = [
      { from: 'human', value: 'Go.' },
      { from: 'function_call', value: '[{"name": "f", "arguments": {}}, {"name": "g", "arguments": {}}]' },
      { from: 'observation', value: '["r1", "r2"]' },
      { from: 'gpt', value: 'Done.' },
      { from: 'human', value: 'Again.' },
      { from: 'function_call', value: '{"name": "f", "arguments": {}}' },
    ];
    expect(problemsIn({ conversations })).toEqual([]);
  });

  it('flags a second ShareGPT observation for a single call', () => {
    const conversations = [
      { from: 'human', value: 'Go.' },
      { from: 'function_call', value: '{"name": "f", "arguments": {}}' },
      { from: 'observation', value: 'r1' },
      { from: 'observation', value: 'r2' },
      { from: 'gpt', value: 'Done.' },
    ];
    expect(problemsIn({ conversations })).toEqual([
      'orphan-result: result of unnamed tool (no call id) answers no call right before it',
    ]);
  });
});

describe('inspecting a source', () => {
  it('counts every group and leaves messages of unknown role out of the structure, flagging them', () => {
    const text = JSON.stringify([
      { role: 'system', content: 'S' },
      { role: 'user', content: 'U' },
      { role: 'narrator', content: 'N' },
      { role: 'assistant', content: 'A' },
    ]);
    const inspection = inspectSource(decodeSource(Buffer.from(text), 'x.json'), {
      format: 'auto',
      counter: createFakeCounter(),
    });
    const [c] = inspection.conversations;
    expect(c?.groups.map((g) => [g.kind, g.start, g.end, g.tokens])).toEqual([
      ['system', 0, 1, 10],
      ['task', 1, 2, 10],
      ['step', 2, 3, 10],
    ]);
    expect(c?.tokens).toBe(30);
    expect(c?.problems).toEqual([
      {
        kind: 'unknown-role',
        severity: 'error',
        item: 2,
        message: null,
        line: 1,
        column: 64,
        text: 'unknown role "narrator" (left out of the structure above)',
      },
    ]);
  });
});

/** Runs swc in process like a user in a pipe: no terminal, and colour only when the environment asks for it. */
function swc(
  args: string[],
  env: Record<string, string> = { NO_COLOR: '1' },
  cwd = root,
  input?: string,
): Promise<InProcessRun> {
  // runSwc sets NO_COLOR unless the environment given says otherwise: here NO_COLOR is unset unless `env` sets it.
  const unset = { NO_COLOR: undefined } as unknown as Record<string, string>;
  return runSwc(args, { cwd, env: { ...unset, ...env }, ...(input === undefined ? {} : { stdin: input }) });
}

describe('swc inspect (command line)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'swc-inspect-'));
    for (const f of readdirSync(fixtures)) copyFileSync(path.join(fixtures, f), path.join(dir, f));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('exits 0 and says so when there is no problem', async () => {
    const r = await swc(['inspect', '--tokenizer', 'approx', 'clean.json'], { NO_COLOR: '1' }, dir);
    expect(r.status).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(
      [
        'inspect: clean.json',
        'format openai  tokenizer approx',
        '',
        '8 messages, 83 tokens:  instructions 8  1 turn 41  task 5  1 step 28',
        '  system  #0     1 msg   8 tok  You are a travel agent.',
        '  turn 1  #1-4  4 msgs  41 tok  What is the weather in Oslo?',
        '  task    #5     1 msg   5 tok  And in Bergen?',
        '  step 1  #6-7  2 msgs  28 tok  get_weather → 1 result · Let me check.',
        '',
        'no problems found',
        '',
      ].join('\n'),
    );
  });

  it.each([
    ['missing-result.json', 'missing-result', 37, 6, 'tool call "call_3" (get_forecast) has no result'],
    ['orphan-result.json', 'orphan-result', 41, 7, 'result for call id "call_9" answers no call'],
    ['haystack-missing-result.json', 'missing-result', 22, 2, 'tool call "call_2" (get_weather) has no result'],
  ])('flags %s as an error and exits 1', async (file, kind, line, message, text) => {
    const r = await swc(['inspect', '--tokenizer', 'approx', file], { NO_COLOR: '1' }, dir);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain(`\n1 error:\n  ${file}:${line}:3  #${message}  ${kind}\n    ${text}\n`);
    expect(r.stdout).toMatch(/^! step 1 /m);
  });

  // OpenAI Chat Completions accepts a call id used again in a later message, and an assistant message of empty text.
  it.each([
    [
      'duplicate-id.json',
      'duplicate-id',
      37,
      6,
      'call id "call_1" (get_weather) is already used by the call on line 10',
    ],
    [
      'empty-assistant.json',
      'empty-assistant',
      37,
      6,
      'assistant message has only empty or blank text (no tool call, image or file)',
    ],
  ])('flags %s as a warning and exits 0, printing nothing with --quiet', async (file, kind, line, message, text) => {
    const r = await swc(['inspect', '--tokenizer', 'approx', file], { NO_COLOR: '1' }, dir);
    expect(r.status).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain(
      `\n1 warning (accepted by OpenAI Chat Completions):\n  ${file}:${line}:3  #${message}  ${kind} (warning)\n    ${text}\n`,
    );
    expect(r.stdout).toMatch(/^\? (step|task) \d+ /m);
    expect(r.stdout).not.toMatch(/^! /m);
    expect(await swc(['inspect', '--tokenizer', 'approx', '-q', file], { NO_COLOR: '1' }, dir)).toEqual({
      status: 0,
      stdout: '',
      stderr: '',
    });
  });

  it('flags a message of unknown role and exits 1', async () => {
    const r = await swc(['inspect', '--tokenizer', 'approx', 'unknown-role.json'], { NO_COLOR: '1' }, dir);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain(
      '\n1 error:\n  unknown-role.json:33:3  unknown-role\n    unknown role "narrator" (left out of the structure above)\n',
    );
  });

  it('counts errors and warnings apart, and prints only the errors with --quiet', async () => {
    // The duplicate-id conversation with the last result gone: its reused id is a warning, the call left unanswered an error.
    const messages = JSON.parse(readFileSync(path.join(fixtures, 'duplicate-id.json'), 'utf8')) as unknown[];
    writeFileSync(path.join(dir, 'both.json'), JSON.stringify(messages.slice(0, -1), null, 2));
    const r = await swc(['inspect', '--tokenizer', 'approx', 'both.json'], { NO_COLOR: '1' }, dir);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('\n1 error, 1 warning (warnings: accepted by OpenAI Chat Completions):\n');
    expect(r.stdout).toContain('  duplicate-id (warning)\n');
    expect(r.stdout).toMatch(/^! step 1 /m);
    const quiet = await swc(['inspect', '--tokenizer', 'approx', '-q', 'both.json'], { NO_COLOR: '1' }, dir);
    expect(quiet.status).toBe(1);
    expect(quiet.stdout).toMatch(
      /^both\.json:\d+:3 {2}#6 {2}missing-result {2}tool call "call_1" \(get_weather\) has no result\n$/,
    );
    const doc = JSON.parse(
      (await swc(['inspect', '--tokenizer', 'approx', '--json', 'both.json'], { NO_COLOR: '1' }, dir)).stdout,
    ) as {
      ok: boolean;
      problems: { kind: string; severity: string }[];
    };
    expect(doc.ok).toBe(false);
    expect(doc.problems.map((p) => [p.kind, p.severity])).toEqual([
      ['duplicate-id', 'warning'],
      ['missing-result', 'error'],
    ]);
    const warned = JSON.parse(
      (await swc(['inspect', '--tokenizer', 'approx', '--json', 'duplicate-id.json'], { NO_COLOR: '1' }, dir)).stdout,
    ) as { ok: boolean };
    expect(warned.ok).toBe(true);
  });

  it('gives the same as JSON with --json', async () => {
    const r = await swc(['inspect', '--tokenizer', 'approx', '--json', 'missing-result.json'], { NO_COLOR: '1' }, dir);
    expect(r.status).toBe(1);
    const doc = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(doc).toEqual({
      version: 1,
      file: 'missing-result.json',
      format: 'openai',
      tokenizer: 'approx',
      messages: 8,
      tokens: 98,
      totals: {
        system: { groups: 1, messages: 1, tokens: 8 },
        turns: { groups: 1, messages: 4, tokens: 41 },
        task: { groups: 1, messages: 1, tokens: 5 },
        steps: { groups: 1, messages: 2, tokens: 43 },
        orphans: { groups: 0, messages: 0, tokens: 0 },
      },
      pairingChecked: true,
      ok: false,
      groups: [
        { kind: 'system', start: 0, end: 1, messages: 1, tokens: 8 },
        { kind: 'turn', start: 1, end: 5, messages: 4, tokens: 41 },
        { kind: 'task', start: 5, end: 6, messages: 1, tokens: 5 },
        { kind: 'step', start: 6, end: 8, messages: 2, tokens: 43 },
      ],
      problems: [
        {
          kind: 'missing-result',
          severity: 'error',
          item: 6,
          message: 6,
          line: 37,
          column: 3,
          text: 'tool call "call_3" (get_forecast) has no result',
        },
      ],
    });
  });

  it('exits 2 on unreadable input, with one line on stderr', async () => {
    writeFileSync(path.join(dir, 'broken.json'), '[{"role": "user", "content": "hi"},');
    const r = await swc(['inspect', 'broken.json'], { NO_COLOR: '1' }, dir);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^swc: broken\.json:1:\d+: invalid JSON: .+\n$/);
    expect((await swc(['inspect', 'missing.json'], { NO_COLOR: '1' }, dir)).status).toBe(2);
  });

  it('closes a run over several files with its errors and warnings counted apart', async () => {
    const r = await swc(
      ['inspect', '--tokenizer', 'approx', 'clean.json', 'duplicate-id.json', 'missing-result.json'],
      { NO_COLOR: '1' },
      dir,
    );
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/\n\ntotal: 3 files, 1 error, 1 warning, [\d,]+ tokens\n$/);
    const warned = await swc(
      ['inspect', '--tokenizer', 'approx', 'clean.json', 'duplicate-id.json'],
      { NO_COLOR: '1' },
      dir,
    );
    expect(warned.status).toBe(0);
    expect(warned.stdout).toMatch(/\n\ntotal: 2 files, 0 errors, 1 warning, [\d,]+ tokens\n$/);
    const run = JSON.parse(
      (
        await swc(
          ['inspect', '--tokenizer', 'approx', '--json', 'clean.json', 'duplicate-id.json'],
          { NO_COLOR: '1' },
          dir,
        )
      ).stdout,
    ) as {
      summary: Record<string, number>;
      files: { ok: boolean }[];
    };
    expect(run.summary).toMatchObject({ files: 2, problems: 1, errors: 0, warnings: 1 });
    expect(run.files.map((f) => f.ok)).toEqual([true, true]);
  });

  it('exits with the worst outcome over several inputs', async () => {
    expect(
      (await swc(['inspect', '--tokenizer', 'approx', 'clean.json', 'duplicate-id.json'], { NO_COLOR: '1' }, dir))
        .status,
    ).toBe(0);
    expect(
      (
        await swc(
          ['inspect', '--tokenizer', 'approx', 'duplicate-id.json', 'missing-result.json'],
          { NO_COLOR: '1' },
          dir,
        )
      ).status,
    ).toBe(1);
    expect(
      (
        await swc(
          ['inspect', '--tokenizer', 'approx', 'clean.json', 'broken.json', 'missing-result.json'],
          { NO_COLOR: '1' },
          dir,
        )
      ).status,
    ).toBe(2);
  });

  it('colours only when FORCE_COLOR asks, never with NO_COLOR, --no-color, or when piped', async () => {
    // Errors red, warnings yellow.
    expect(
      (await swc(['inspect', '--tokenizer', 'approx', 'missing-result.json'], { FORCE_COLOR: '1' }, dir)).stdout,
    ).toContain('\u001b[31m');
    const warned = (await swc(['inspect', '--tokenizer', 'approx', 'duplicate-id.json'], { FORCE_COLOR: '1' }, dir))
      .stdout;
    expect(warned).toContain('\u001b[33mduplicate-id (warning)');
    expect(warned).not.toContain('\u001b[31m');
    const args = ['inspect', '--tokenizer', 'approx', 'duplicate-id.json'];
    expect((await swc(args, {}, dir)).stdout).not.toContain('\u001b[');
    expect((await swc(args, { NO_COLOR: '1', FORCE_COLOR: '1' }, dir)).stdout).not.toContain('\u001b[');
    expect((await swc([...args, '--no-color'], { FORCE_COLOR: '1' }, dir)).stdout).not.toContain('\u001b[');
  });

  it('does not change the file it inspects', async () => {
    const file = path.join(dir, 'duplicate-id.json');
    const before = readFileSync(file);
    const mtime = statSync(file).mtimeMs;
    await swc(['inspect', 'duplicate-id.json'], { NO_COLOR: '1' }, dir);
    expect(readFileSync(file).equals(before)).toBe(true);
    expect(statSync(file).mtimeMs).toBe(mtime);
  });

  // One broken fixture per format and problem kind (ShareGPT has no call ids, so no duplicate-id). Every provider
  // rejects a call without its result and a result without its call; none rejects a call id used again in a later
  // message, each use answered by its own result.
  it.each([
    ['anthropic-missing-result.json', '10:5  #2  missing-result', 'tool call "toolu_02" (get_forecast) has no result'],
    ['anthropic-orphan-result.json', '23:5  #3  orphan-result', 'result for call id "toolu_99" answers no call'],
    ['responses-missing-result.json', '15:5  #2  missing-result', 'tool call "call_2" (get_forecast) has no result'],
    ['responses-orphan-result.json', '20:5  #4  orphan-result', 'result for call id "call_9" answers no call'],
    ['gemini-missing-result.json', '17:5  #1  missing-result', 'tool call without an id (get_forecast) has no result'],
    ['gemini-orphan-result.json', '32:5  #3  orphan-result', 'result for call id "call_9" answers no call'],
    ['langchain-missing-result.json', '25:3  #2  missing-result', 'tool call "call_2" (get_forecast) has no result'],
    ['langchain-orphan-result.json', '71:3  #4  orphan-result', 'result for call id "call_9" answers no call'],
    ['claude-code-missing-result.jsonl', '4:1  #1  missing-result', 'tool call "toolu_02" (Read) has no result'],
    ['claude-code-orphan-result.jsonl', '4:1  #3  orphan-result', 'result for call id "toolu_99" answers no call'],
    ['sharegpt-missing-result.json', '7:5  #1  missing-result', 'tool call without an id (get_weather) has no result'],
    [
      'sharegpt-orphan-result.json',
      '19:5  #4  orphan-result',
      'result of unnamed tool (no call id) answers no call right before it',
    ],
    ['ai-sdk-missing-result.json', '5:5  #2  missing-result', 'tool call "call_2" (get_forecast) has no result'],
    ['ai-sdk-orphan-result.json', '11:3  #3  orphan-result', 'result for call id "call_9" answers no call'],
  ])('flags %s as an error and exits 1, in full and with --quiet', async (file, where, text) => {
    const full = await swc(['inspect', '--tokenizer', 'approx', file], { NO_COLOR: '1' }, dir);
    expect(full.status).toBe(1);
    expect(full.stderr).toBe('');
    expect(full.stdout.endsWith(`\n\n1 error:\n  ${file}:${where}\n    ${text}\n`)).toBe(true);
    expect(full.stdout).toMatch(/^! (turn|step) \d+ /m);
    const quiet = await swc(['inspect', '--tokenizer', 'approx', '-q', file], { NO_COLOR: '1' }, dir);
    expect(quiet).toEqual({ status: 1, stdout: `${file}:${where}  ${text}\n`, stderr: '' });
  });

  it.each([
    [
      'anthropic-duplicate-id.json',
      'Anthropic Messages',
      '46:5  #6  duplicate-id',
      'call id "toolu_01" (get_weather) is already used by the call on line 10',
    ],
    [
      'claude-code-duplicate-id.jsonl',
      'Anthropic Messages',
      '6:1  #5  duplicate-id',
      'call id "toolu_01" (Read) is already used by the call on line 2',
    ],
    [
      'responses-duplicate-id.json',
      'OpenAI Responses',
      '34:5  #5  duplicate-id',
      'call id "call_1" (get_weather) is already used by the call on line 9',
    ],
    [
      'gemini-duplicate-id.json',
      'Gemini',
      '62:5  #6  duplicate-id',
      'call id "call_1" (get_weather) is already used by the call on line 18',
    ],
    [
      'langchain-duplicate-id.json',
      'some providers',
      '86:3  #6  duplicate-id',
      'call id "call_1" (get_weather) is already used by the call on line 25',
    ],
    [
      'ai-sdk-duplicate-id.json',
      'some providers',
      '13:3  #4  duplicate-id',
      'call id "call_1" (get_weather) is already used by the call on line 3',
    ],
  ])('flags %s as a warning and exits 0, printing nothing with --quiet', async (file, provider, where, text) => {
    const full = await swc(['inspect', '--tokenizer', 'approx', file], { NO_COLOR: '1' }, dir);
    expect(full.status).toBe(0);
    expect(full.stderr).toBe('');
    expect(
      full.stdout.endsWith(`\n\n1 warning (accepted by ${provider}):\n  ${file}:${where} (warning)\n    ${text}\n`),
    ).toBe(true);
    expect(full.stdout).toMatch(/^\? (turn|step) \d+ /m);
    expect(await swc(['inspect', '--tokenizer', 'approx', '-q', file], { NO_COLOR: '1' }, dir)).toEqual({
      status: 0,
      stdout: '',
      stderr: '',
    });
  });
});

describe('swc inspect inputs (command line)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'swc-inspect-inputs-'));
    const place = (from: string, to: string) => {
      mkdirSync(path.dirname(path.join(dir, to)), { recursive: true });
      copyFileSync(path.join(fixtures, from), path.join(dir, to));
    };
    place('clean.json', 'tree/a/clean.json');
    place('missing-result.json', 'tree/a/missing-result.json');
    place('gemini-orphan-result.json', 'tree/b/gemini.json');
    place('claude-code-missing-result.jsonl', 'tree/b/session.jsonl');
    place('duplicate-id.json', 'tree/node_modules/pkg/duplicate-id.json');
    place('records-dialog.jsonl', 'records.jsonl');
    writeFileSync(path.join(dir, 'tree/notes.txt'), 'not a transcript');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const missing =
    'tree/a/missing-result.json:37:3  #6  missing-result  tool call "call_3" (get_forecast) has no result\n';
  const orphan = 'tree/b/gemini.json:32:5  #3  orphan-result  result for call id "call_9" answers no call\n';
  const session = 'tree/b/session.jsonl:4:1  #1  missing-result  tool call "toolu_02" (Read) has no result\n';

  it('searches a directory for .json and .jsonl files, in sorted order, leaving out node_modules', async () => {
    expect(await swc(['inspect', '--tokenizer', 'approx', '-qq', 'tree'], { NO_COLOR: '1' }, dir)).toEqual({
      status: 1,
      stdout: missing + orphan + session,
      stderr: '',
    });
  });

  it('leaves out what --ignore matches', async () => {
    const r = await swc(
      ['inspect', '--tokenizer', 'approx', '-qq', 'tree', '--ignore', 'tree/b/**', '--ignore', '**/clean.json'],
      { NO_COLOR: '1' },
      dir,
    );
    expect(r).toEqual({ status: 1, stdout: missing, stderr: '' });
  });

  it('expands a quoted glob pattern itself', async () => {
    expect(await swc(['inspect', '--tokenizer', 'approx', '-qq', 'tree/**/*.jsonl'], { NO_COLOR: '1' }, dir)).toEqual({
      status: 1,
      stdout: session,
      stderr: '',
    });
  });

  it('prints nothing with --quiet when there is no problem, and one JSON line per troubled file with --json-lines', async () => {
    expect(await swc(['inspect', '--tokenizer', 'approx', '-q', 'tree/a/clean.json'], { NO_COLOR: '1' }, dir)).toEqual({
      status: 0,
      stdout: '',
      stderr: '',
    });
    const r = await swc(['inspect', '--tokenizer', 'approx', '-q', '--json-lines', 'tree/a'], { NO_COLOR: '1' }, dir);
    expect(r.status).toBe(1);
    const docs = r.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { file: string; ok: boolean });
    expect(docs.map((d) => [d.file, d.ok])).toEqual([['tree/a/missing-result.json', false]]);
  });

  it('closes a run over several files with its totals', async () => {
    const r = await swc(['inspect', '--tokenizer', 'approx', 'tree/a'], { NO_COLOR: '1' }, dir);
    expect(r.status).toBe(1);
    const tokens = [...r.stdout.matchAll(/^\d+ messages?, ([\d,]+) tokens:/gm)].reduce(
      (a, m) => a + Number((m[1] as string).replace(/,/g, '')),
      0,
    );
    expect(
      r.stdout.endsWith(`\n\ntotal: 2 files, 1 error, 0 warnings, ${tokens.toLocaleString('en-US')} tokens\n`),
    ).toBe(true);
    // One named file has said all in its own text.
    expect(
      (await swc(['inspect', '--tokenizer', 'approx', 'tree/a/clean.json'], { NO_COLOR: '1' }, dir)).stdout,
    ).not.toMatch(/^total: /m);
  });

  it('gives one JSON document for a run over several files, with every file and the totals', async () => {
    const r = await swc(['inspect', '--tokenizer', 'approx', '--json', 'tree/a'], { NO_COLOR: '1' }, dir);
    expect(r.status).toBe(1);
    const run = JSON.parse(r.stdout) as {
      version: number;
      summary: Record<string, number>;
      files: Array<{ file: string; ok: boolean }>;
    };
    expect(run.version).toBe(1);
    expect(run.files.map((f) => [f.file, f.ok])).toEqual([
      ['tree/a/clean.json', true],
      ['tree/a/missing-result.json', false],
    ]);
    expect(run.summary).toMatchObject({ files: 2, failed: 0, problems: 1, errors: 1, warnings: 0 });
  });

  it('refuses --json with --json-lines', async () => {
    expect(await swc(['inspect', '--json', '--json-lines', 'tree/a'], { NO_COLOR: '1' }, dir)).toEqual({
      status: 2,
      stdout: '',
      stderr:
        'swc: error: --json and --json-lines cannot be used together: one document for the run, or one line per file\n',
    });
  });

  it('shows every file of several inputs in full, a blank line apart, with the worst exit code', async () => {
    const r = await swc(['inspect', '--tokenizer', 'approx', 'tree/a'], { NO_COLOR: '1' }, dir);
    expect(r.status).toBe(1);
    expect(r.stdout.match(/^inspect: .*$/gm)).toEqual([
      'inspect: tree/a/clean.json',
      'inspect: tree/a/missing-result.json',
    ]);
    expect(r.stdout).toContain('no problems found\n\ninspect: tree/a/missing-result.json\n');
  });

  it('reads records whose conversation is under --conversation-key', async () => {
    const without = await swc(['inspect', '--tokenizer', 'approx', 'records.jsonl'], { NO_COLOR: '1' }, dir);
    expect(without.status).toBe(2);
    expect(without.stderr).toContain('--conversation-key "dialog"');
    const r = await swc(
      ['inspect', '--tokenizer', 'approx', '--conversation-key', 'dialog', 'records.jsonl'],
      { NO_COLOR: '1' },
      dir,
    );
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('@@ conversation 2 of 2 (line 2 "dialog") @@\n');
    expect(r.stdout.endsWith('\n\ntotal: 2 conversations, 8 messages, 55 tokens; 1 error in 1 conversation\n')).toBe(
      true,
    );
    const quiet = await swc(
      ['inspect', '--tokenizer', 'approx', '--conversation-key', 'dialog', '-q', 'records.jsonl'],
      { NO_COLOR: '1' },
      dir,
    );
    expect(quiet).toEqual({
      status: 1,
      stdout: 'records.jsonl:2:127  #2  orphan-result  result for call id "call_2" answers no call\n',
      stderr: '',
    });
  });

  it('still reads standard input, alone', async () => {
    const text = readFileSync(path.join(fixtures, 'orphan-result.json'), 'utf8');
    const r = await swc(['inspect', '--tokenizer', 'approx', '-q', '-'], { NO_COLOR: '1' }, dir, text);
    expect(r).toEqual({
      status: 1,
      stdout: '<stdin>:41:3  #7  orphan-result  result for call id "call_9" answers no call\n',
      stderr: '',
    });
    expect(await swc(['inspect', '-', 'tree'], { NO_COLOR: '1' }, dir, text)).toEqual({
      status: 2,
      stdout: '',
      stderr: 'swc: error: - (standard input) cannot be mixed with other inputs\n',
    });
  });

  it('exits 2 with one line when an input matches nothing', async () => {
    expect(await swc(['inspect', 'tree/**/*.yaml'], { NO_COLOR: '1' }, dir)).toEqual({
      status: 2,
      stdout: '',
      stderr: 'swc: error: no files match the pattern "tree/**/*.yaml"\n',
    });
    expect(await swc(['inspect', 'nowhere.json'], { NO_COLOR: '1' }, dir)).toEqual({
      status: 2,
      stdout: '',
      stderr: 'swc: error: "nowhere.json": no such file or directory\n',
    });
  });
});

describe('swc inspect on the real transcripts in fixtures/real', () => {
  const real = (rel: string): string => path.join(data, rel);

  // Every format's pairing is checked, and nothing there is an error: these runs were accepted. tau-bench and
  // SWE-agent reuse some call ids across steps (every result still follows its own call), which OpenAI accepts: a
  // warning in the OpenAI files and in the Haystack and LangChain files made from them.
  it.each([
    ['anthropic/pydanticai-multiple_parallel_tool_calls.request.json', 0, {}],
    ['anthropic/pydanticai-pause_turn_web_search.request.json', 0, {}],
    ['anthropic/pydanticai-tool_search_handoff_anthropic_openai_anthropic.request.json', 0, {}],
    ['claude-code/ccviewer-5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl', 0, {}],
    ['claude-code/ccviewer-fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl', 0, {}],
    ['claude-code/claude-reliability-coverage-test-fix.jsonl', 0, {}],
    ['claude-code/claude-reliability-python-to-rust-port.jsonl', 0, {}],
    ['gemini/adk-context_update_test.session.json', 0, {}],
    ['gemini/adk-flow_complex_spark.session.json', 0, {}],
    ['gemini/pydanticai-anthropic_to_google_history_replay.request.json', 0, {}],
    ['gemini/pydanticai-google_instructions_only_with_tool_calls.request.json', 0, {}],
    ['haystack/DERIVED-taubench-airline-task109.haystack.json', 0, { 'duplicate-id warning': 4 }],
    ['langchain/DERIVED-taubench-airline-task109.dumpd.json', 0, { 'duplicate-id warning': 4 }],
    ['langchain/DERIVED-taubench-airline-task109.messages_to_dict.json', 0, { 'duplicate-id warning': 4 }],
    ['openai-chat/pydanticai-deepseek_deferred_capability_with_thinking.request.json', 0, {}],
    ['openai-chat/pydanticai-multiple_agent_tool_calls.request.json', 0, {}],
    ['openai-chat/sweagent-marshmallow-1867-function_calling_replace.traj.json', 0, { 'duplicate-id warning': 5 }],
    ['openai-chat/taubench-airline-task109-messages.json', 0, { 'duplicate-id warning': 4 }],
    ['openai-chat/taubench-gpt-4o-airline.json', 0, { 'duplicate-id warning': 73 }],
    ['openai-responses/pydanticai-cross_provider_replay_anthropic_to_responses.request.json', 0, {}],
    ['openai-responses/pydanticai-native_tool_search_deferred_capability.request.json', 0, {}],
    ['openai-responses/pydanticai-responses_mcp_server_tool.request.json', 0, {}],
    ['openai-responses/pydanticai-responses_model_retry.request.json', 0, {}],
    ['sharegpt/llamafactory-glaive_toolcall_en_demo.json', 0, {}],
    ['sharegpt/llamafactory-reason_tool_use_demo_50.jsonl', 0, {}],
  ])('inspects %s: exit %i, problems %j, pairing checked', async (rel, status, kinds) => {
    const r = await swc(['inspect', '--tokenizer', 'approx', '--json', real(rel)]);
    expect(r.status).toBe(status);
    const doc = JSON.parse(r.stdout) as {
      problems: { kind: string; severity: string }[];
      groups: { tokens: number }[];
      pairingChecked?: boolean;
      conversations?: { pairingChecked: boolean }[];
    };
    const counted: Record<string, number> = {};
    for (const p of doc.problems) counted[`${p.kind} ${p.severity}`] = (counted[`${p.kind} ${p.severity}`] ?? 0) + 1;
    expect(counted).toEqual(kinds);
    expect(doc.groups.every((g) => Number.isInteger(g.tokens))).toBe(true);
    expect(
      doc.conversations === undefined ? doc.pairingChecked : doc.conversations.every((c) => c.pairingChecked),
    ).toBe(true);
  });

  it('reads every file there without an unexpected error', async () => {
    const files = readdirSync(data, { recursive: true, withFileTypes: true })
      .filter((d) => d.isFile() && /\.jsonl?$/.test(d.name))
      .map((d) => path.join(d.parentPath, d.name))
      .sort();
    expect(files.length).toBeGreaterThan(10);
    for (const file of files) {
      const r = await swc(['inspect', '--tokenizer', 'approx', file]);
      expect([0, 1, 2]).toContain(r.status);
      expect(r.stderr).not.toContain('unexpected error');
      if (r.status === 2) expect(r.stderr).toMatch(/^swc: .+\n$/);
    }
  });
});

describe('inspect and the dry run', () => {
  it("number the groups of a split Claude Code session the same way, in the file's own lines", async () => {
    const file = path.join(REPO, 'fixtures/claude-code/split-assistant.jsonl');
    type G = { kind: string; start: number; end: number; messages: number };
    const pick = (groups: G[]): G[] =>
      groups.filter((g) => g.kind !== 'note').map(({ kind, start, end, messages }) => ({ kind, start, end, messages }));
    const inspected = JSON.parse(
      (await runSwc(['inspect', file, '--json', '--tokenizer', 'approx'], { cwd: REPO })).stdout,
    ) as { groups: G[] };
    const planned = JSON.parse(
      (await runSwc(['compact', file, '-t', '1000000', '--dry-run', '--json', '--tokenizer', 'approx'], { cwd: REPO }))
        .stdout,
    ) as { groups: G[] };
    expect(pick(inspected.groups)).toEqual(pick(planned.groups));
    // Split assistant lines make at least one group span more lines than it has messages in core terms.
    expect(inspected.groups.some((g) => g.end - g.start > 1)).toBe(true);
  });
});
