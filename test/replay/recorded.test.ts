/**
 * The usage a file recorded, shown beside a replay as the run "as recorded": each format's shapes read item by item,
 * random runs written in each shape against sums taken straight from the numbers written, and the built CLI's JSON
 * for a real ADK session and hand-made files.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { recordedUsage } from '../../src/replay/recorded.js';
import type { ReplayRecorded, ReplayRun, ReplayRuns } from '../../src/replay/types.js';
import { REAL_DATA, ROOT, tempDir } from '../helpers/cli.js';
import { runSwc } from '../helpers/run-in-process.js';

/** One call's usage as a test writes it: uncached input, cache reads and writes, reply and reasoning. */
interface Call {
  readonly fresh: number;
  readonly read: number;
  readonly write: number;
  readonly reply: number;
  readonly thoughts: number;
}

const recorded = (
  calls: number,
  inputTokens: number,
  cacheReadTokens: number,
  cacheWriteTokens: number,
  outputTokens: number,
): ReplayRecorded => ({ calls, inputTokens, cacheReadTokens, cacheWriteTokens, outputTokens });

describe('Claude Code sessions', () => {
  const line = (id: string, usage: object, extra: object = {}) => ({
    type: 'assistant',
    ...extra,
    message: { id, role: 'assistant', content: [], usage },
  });
  const usage = (input: number, read: number, write: number, output: number) => ({
    input_tokens: input,
    cache_read_input_tokens: read,
    cache_creation_input_tokens: write,
    output_tokens: output,
  });

  it('adds cache reads and writes to the uncached input, counts a split reply once and leaves sub-agents out', () => {
    const items = [
      { type: 'user', message: { role: 'user', content: 'go' } },
      line('msg_1', usage(3, 0, 1000, 10)),
      line('msg_1', usage(3, 0, 1000, 25)),
      { type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'ok' }] } },
      line('msg_sub', usage(50, 0, 0, 7), { isSidechain: true }),
      line('msg_2', usage(5, 1000, 40, 12)),
    ];
    expect(recordedUsage('claude-code', items)).toEqual(recorded(2, 3 + 1000 + 5 + 1000 + 40, 1000, 1040, 25 + 12));
  });

  it("reads a sub-agent's own file, every line of it a sidechain, as that agent's calls", () => {
    const side = { isSidechain: true };
    const items = [
      { type: 'user', ...side, message: { role: 'user', content: 'find the flag' } },
      line('msg_a', usage(4, 0, 0, 30), side),
      {
        type: 'user',
        ...side,
        message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'x' }] },
      },
      line('msg_b', usage(4, 100, 20, 30), side),
    ];
    expect(recordedUsage('claude-code', items)).toEqual(recorded(2, 4 + 4 + 100 + 20, 100, 20, 60));
  });

  it('replays a real sub-agent file with its recorded usage: four calls of 4 tokens in and 30 out', async () => {
    const r = await runSwc(
      [
        'replay',
        path.join(ROOT, 'fixtures/claude-code/subagents/agent-a9f4657.jsonl'),
        '--context-window',
        '20k',
        '--json',
      ],
      { cwd: tempDir() },
    );
    expect(r.status).toBe(0);
    expect((JSON.parse(r.stdout) as ReplayRun).recorded).toEqual(recorded(4, 16, 0, 0, 120));
  });

  it('records nothing for a session whose lines carry no usage', () => {
    expect(recordedUsage('claude-code', [{ type: 'user', message: { role: 'user', content: 'hi' } }])).toBeNull();
  });
});

describe('Gemini ADK sessions', () => {
  const model = { role: 'model', parts: [{ text: 'ok' }] };

  it("reads each event's usageMetadata, with cached content inside the prompt and thoughts as output", () => {
    const items = [
      { author: 'user', content: { role: 'user', parts: [{ text: 'hi' }] } },
      {
        author: 'agent',
        content: model,
        usageMetadata: {
          promptTokenCount: 1200,
          cachedContentTokenCount: 1024,
          candidatesTokenCount: 30,
          thoughtsTokenCount: 200,
          toolUsePromptTokenCount: 90,
          totalTokenCount: 1520,
        },
      },
      {
        author: 'agent',
        content: model,
        usage_metadata: { prompt_token_count: 1300, candidates_token_count: 5, thoughts_token_count: 1 },
      },
    ];
    expect(recordedUsage('gemini', items, { id: 's' })).toEqual(recorded(2, 2500, 1024, 0, 236));
  });

  it('leaves out streamed partial events, which repeat a call that their final event records', () => {
    const items = [
      { author: 'agent', partial: true, content: model, usageMetadata: { promptTokenCount: 100 } },
      { author: 'agent', content: model, usageMetadata: { promptTokenCount: 100, candidatesTokenCount: 9 } },
    ];
    expect(recordedUsage('gemini', items, null)).toEqual(recorded(1, 100, 0, 0, 9));
  });

  it("reads an early session's event_logs when its events carry no usage", () => {
    const items = [{ author: 'user', content: { role: 'user', parts: [{ text: 'hi' }] } }];
    const container = {
      id: 's',
      event_logs: [
        { event_id: 'a', model_response: { usage_metadata: { prompt_token_count: 32, candidates_token_count: 13 } } },
        { event_id: 'b', model_response: { candidates: [] } },
        { event_id: 'c', model_response: { usage_metadata: { prompt_token_count: 94, candidates_token_count: 32 } } },
      ],
    };
    expect(recordedUsage('gemini', items, container)).toEqual(recorded(2, 126, 0, 0, 45));
  });

  it('records nothing for a contents list, which is a request and holds no response', () => {
    const contents = [{ role: 'user', parts: [{ text: 'hi' }] }, model];
    expect(recordedUsage('gemini', contents, { contents: [], systemInstruction: { parts: [] } })).toBeNull();
  });
});

describe('LangChain messages', () => {
  const usage = {
    input_tokens: 1500,
    output_tokens: 80,
    total_tokens: 1580,
    input_token_details: { cache_read: 1024, cache_creation: 300 },
    output_token_details: { reasoning: 50 },
  };

  it("reads an AI message's usage_metadata in both serialized forms; input_tokens already holds the cache", () => {
    const dicts = [
      { type: 'human', data: { content: 'hi', type: 'human' } },
      { type: 'ai', data: { content: 'ok', type: 'ai', usage_metadata: usage } },
      { type: 'ai', data: { content: 'again', type: 'ai', usage_metadata: null } },
    ];
    const dumpd = [
      {
        lc: 1,
        type: 'constructor',
        id: ['langchain', 'schema', 'messages', 'HumanMessage'],
        kwargs: { content: 'hi' },
      },
      {
        lc: 1,
        type: 'constructor',
        id: ['langchain', 'schema', 'messages', 'AIMessage'],
        kwargs: { content: 'ok', usage_metadata: { input_tokens: 10, output_tokens: 2, total_tokens: 12 } },
      },
    ];
    expect(recordedUsage('langchain', dicts)).toEqual(recorded(1, 1500, 1024, 300, 80));
    expect(recordedUsage('langchain', dumpd)).toEqual(recorded(1, 10, 0, 0, 2));
  });
});

describe('formats whose files record no usage per call', () => {
  it.each([
    ['openai', [{ role: 'assistant', content: 'ok', usage: { prompt_tokens: 5 } }]],
    ['responses', [{ type: 'message', role: 'assistant', content: [], usage: { input_tokens: 5 } }]],
    ['ai-sdk', [{ role: 'assistant', content: 'ok', usage: { inputTokens: 5 } }]],
    ['anthropic', [{ role: 'assistant', content: 'ok', usage: { input_tokens: 5 } }]],
  ])('records nothing for %s', (format, items) => {
    expect(recordedUsage(format, items, null)).toBeNull();
  });
});

/** Random calls, each written in a format's own shape between items that carry no usage. */
const callArb: fc.Arbitrary<Call> = fc.record({
  fresh: fc.nat(5000),
  read: fc.nat(5000),
  write: fc.nat(5000),
  reply: fc.nat(2000),
  thoughts: fc.nat(2000),
});

/** How each shape writes a call, and what that call is in a replay's terms (computed here, not by src/). */
const SHAPES: Record<
  string,
  { format: string; write: (c: Call, i: number) => unknown; expected: (c: Call) => Omit<ReplayRecorded, 'calls'> }
> = {
  'claude-code': {
    format: 'claude-code',
    write: (c, i) => ({
      type: 'assistant',
      message: {
        id: `msg_${i}`,
        usage: {
          input_tokens: c.fresh,
          cache_read_input_tokens: c.read,
          cache_creation_input_tokens: c.write,
          output_tokens: c.reply,
        },
      },
    }),
    expected: (c) => ({
      inputTokens: c.fresh + c.read + c.write,
      cacheReadTokens: c.read,
      cacheWriteTokens: c.write,
      outputTokens: c.reply,
    }),
  },
  'ADK camelCase': {
    format: 'gemini',
    write: (c) => ({
      author: 'agent',
      content: { role: 'model', parts: [{ text: 'ok' }] },
      usageMetadata: {
        promptTokenCount: c.fresh + c.read,
        cachedContentTokenCount: c.read,
        candidatesTokenCount: c.reply,
        thoughtsTokenCount: c.thoughts,
      },
    }),
    expected: (c) => ({
      inputTokens: c.fresh + c.read,
      cacheReadTokens: c.read,
      cacheWriteTokens: 0,
      outputTokens: c.reply + c.thoughts,
    }),
  },
  'ADK snake_case': {
    format: 'gemini',
    write: (c) => ({
      author: 'agent',
      content: { role: 'model', parts: [{ text: 'ok' }] },
      usage_metadata: {
        prompt_token_count: c.fresh + c.read,
        cached_content_token_count: c.read,
        candidates_token_count: c.reply,
        thoughts_token_count: c.thoughts,
      },
    }),
    expected: (c) => ({
      inputTokens: c.fresh + c.read,
      cacheReadTokens: c.read,
      cacheWriteTokens: 0,
      outputTokens: c.reply + c.thoughts,
    }),
  },
  langchain: {
    format: 'langchain',
    write: (c) => ({
      type: 'ai',
      data: {
        content: 'ok',
        usage_metadata: {
          input_tokens: c.fresh + c.read + c.write,
          output_tokens: c.reply + c.thoughts,
          input_token_details: { cache_read: c.read, cache_creation: c.write },
          output_token_details: { reasoning: c.thoughts },
        },
      },
    }),
    expected: (c) => ({
      inputTokens: c.fresh + c.read + c.write,
      cacheReadTokens: c.read,
      cacheWriteTokens: c.write,
      outputTokens: c.reply + c.thoughts,
    }),
  },
};

/** Items of each format that carry no usage: the turns between the calls. */
const FILLER: Record<string, unknown> = {
  'claude-code': { type: 'user', message: { role: 'user', content: 'next' } },
  gemini: { author: 'user', content: { role: 'user', parts: [{ text: 'next' }] } },
  langchain: { type: 'human', data: { content: 'next' } },
};

describe('random runs in every shape', () => {
  it.each(Object.keys(SHAPES))('sums each call of %s as the provider reports it', (name) => {
    const shape = SHAPES[name] as (typeof SHAPES)[string];
    fc.assert(
      fc.property(fc.array(fc.tuple(callArb, fc.boolean()), { maxLength: 30 }), (run) => {
        const items = run.flatMap(([call, filler], i) => [
          ...(filler ? [FILLER[shape.format]] : []),
          shape.write(call, i),
        ]);
        const figures = run.map(([call]) => shape.expected(call));
        const sum = (key: keyof Omit<ReplayRecorded, 'calls'>): number => figures.reduce((t, f) => t + f[key], 0);
        const expected =
          run.length === 0
            ? null
            : recorded(
                run.length,
                sum('inputTokens'),
                sum('cacheReadTokens'),
                sum('cacheWriteTokens'),
                sum('outputTokens'),
              );
        expect(recordedUsage(shape.format, items, null)).toEqual(expected);
      }),
      { numRuns: 100 },
    );
  });
});

describe('swc replay --json shows the run as recorded', () => {
  const ADK = path.join(REAL_DATA, 'gemini/adk-context_update_test.session.json');
  const present = existsSync(ADK);
  if (!present) console.warn(`recorded: ${ADK} is missing, so the end-to-end test of a real ADK session is skipped`);

  (present ? it : it.skip)(
    'for a real ADK session, a hand-made LangChain file, and null for a Responses body',
    async () => {
      const dir = tempDir();
      const langchain = path.join(dir, 'langchain.json');
      writeFileSync(
        langchain,
        JSON.stringify([
          { type: 'human', data: { content: 'Read /srv/a.txt', type: 'human' } },
          {
            type: 'ai',
            data: {
              content: 'Done.',
              type: 'ai',
              usage_metadata: {
                input_tokens: 2100,
                output_tokens: 40,
                total_tokens: 2140,
                input_token_details: { cache_read: 2048 },
              },
            },
          },
        ]),
      );
      const responses = path.join(dir, 'responses.json');
      writeFileSync(
        responses,
        JSON.stringify({
          model: 'gpt-5',
          input: [
            { role: 'user', content: 'Convert 100 EUR to CHF.' },
            { type: 'function_call', call_id: 'c1', name: 'convert', arguments: '{}' },
            { type: 'function_call_output', call_id: 'c1', output: '94.10 CHF' },
            { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: '94.10 CHF.' }] },
          ],
        }),
      );
      const r = await runSwc(
        ['replay', ADK, langchain, responses, '--context-window', '8k', '--tokenizer', 'approx', '--json'],
        { cwd: dir },
      );
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      const runs = (JSON.parse(r.stdout) as ReplayRuns).runs as ReplayRun[];
      const byName = new Map(runs.map((run) => [path.basename(run.file), run]));
      const seen = (name: string) => [byName.get(name)?.format, byName.get(name)?.recorded];
      // The session's event_logs: prompts of 32, 94 and 129 tokens, replies of 13, 32 and 14.
      expect(seen('adk-context_update_test.session.json')).toEqual(['gemini', recorded(3, 255, 0, 0, 59)]);
      expect(byName.get('adk-context_update_test.session.json')?.policies[0]?.calls).toHaveLength(3);
      expect(seen('langchain.json')).toEqual(['langchain', recorded(1, 2100, 2048, 0, 40)]);
      expect(seen('responses.json')).toEqual(['responses', null]);
    },
  );
});
