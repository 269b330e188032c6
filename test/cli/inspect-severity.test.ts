/**
 * Errors and warnings: the same problem judged by the provider each format is sent to (src/lint/rules.ts,
 * docs/inspect-rules.md), on conversations given as values and read by the real inspect road.
 */
import { describe, expect, it } from '@jest/globals';
import { inspectSource } from '../../src/cli/inspect.js';
import { decodeSource } from '../../src/io/source.js';
import { createFakeCounter } from '../helpers/fake-counter.js';

/** The problems inspect finds in a transcript given as a value, as `kind severity` lines. */
function severitiesIn(value: unknown, file = 'x.json'): string[] {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  const inspection = inspectSource(decodeSource(Buffer.from(text), file), {
    format: 'auto',
    counter: createFakeCounter(),
  });
  return inspection.conversations.flatMap((c) => c.problems.map((p) => `${p.kind} ${p.severity}`));
}

describe('errors and warnings by the provider of the format', () => {
  // One conversation that reuses a call id in a later step, as tau-bench's GPT-4o runs do, in three formats.
  const chat = [
    { role: 'user', content: 'Book it.' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'think', arguments: '{}' } }],
    },
    { role: 'tool', tool_call_id: 'c1', content: 'ok' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'book', arguments: '{}' } }],
    },
    { role: 'tool', tool_call_id: 'c1', content: 'booked' },
    { role: 'assistant', content: 'Done.' },
  ];
  const use = (id: string, name: string) => ({ type: 'tool_use', id, name, input: {} });
  const result = (id: string) => ({ type: 'tool_result', tool_use_id: id, content: 'ok' });
  const anthropicRequest = {
    model: 'claude',
    messages: [
      { role: 'user', content: 'Book it.' },
      { role: 'assistant', content: [use('c1', 'think')] },
      { role: 'user', content: [result('c1')] },
      { role: 'assistant', content: [use('c1', 'book')] },
      { role: 'user', content: [result('c1')] },
      { role: 'assistant', content: [{ type: 'text', text: 'Done.' }] },
    ],
  };
  const langchain = [
    { type: 'human', data: { content: 'Book it.' } },
    { type: 'ai', data: { content: '', tool_calls: [{ name: 'think', args: {}, id: 'c1' }] } },
    { type: 'tool', data: { content: 'ok', tool_call_id: 'c1' } },
    { type: 'ai', data: { content: '', tool_calls: [{ name: 'book', args: {}, id: 'c1' }] } },
    { type: 'tool', data: { content: 'booked', tool_call_id: 'c1' } },
    { type: 'ai', data: { content: 'Done.' } },
  ];

  it('makes a call id used again in a later step, each use answered, a warning: no provider rejects it', () => {
    expect(severitiesIn(chat)).toEqual(['duplicate-id warning']);
    expect(severitiesIn(anthropicRequest)).toEqual(['duplicate-id warning']);
    expect(severitiesIn(langchain)).toEqual(['duplicate-id warning']);
  });

  it('makes two calls of one message that share an id an error in OpenAI chat', () => {
    const call = (name: string) => ({ id: 'c1', type: 'function', function: { name, arguments: '{}' } });
    const shared = [
      { role: 'user', content: 'Go.' },
      { role: 'assistant', content: null, tool_calls: [call('f'), call('g')] },
      { role: 'tool', tool_call_id: 'c1', content: 'r1' },
      { role: 'tool', tool_call_id: 'c1', content: 'r2' },
    ];
    expect(severitiesIn(shared)).toEqual(['duplicate-id error']);
  });

  it('tells an OpenAI assistant message without content (rejected) from one of empty text (accepted)', () => {
    const messages = (content: unknown) => [
      { role: 'user', content: 'Hi.' },
      { role: 'assistant', content },
      { role: 'user', content: 'Again.' },
    ];
    expect(severitiesIn(messages(null))).toEqual(['empty-assistant error']);
    expect(severitiesIn(messages(''))).toEqual(['empty-assistant warning']);
  });

  it('lets an Anthropic conversation end in an empty assistant message (a prefill), and nothing before it', () => {
    // `system` tells auto-detection the request is Anthropic's (plain text blocks pass for OpenAI chat parts).
    const request = (messages: unknown[]) => ({ model: 'claude', system: 'Be brief.', messages });
    const empty = { role: 'assistant', content: [{ type: 'text', text: ' ' }] };
    expect(severitiesIn(request([{ role: 'user', content: 'Hi.' }, empty]))).toEqual(['empty-assistant warning']);
    expect(
      severitiesIn(request([{ role: 'user', content: 'Hi.' }, empty, { role: 'user', content: 'Again.' }])),
    ).toEqual(['empty-assistant error']);
  });

  it('rejects a Gemini content without parts, but not an empty text part', () => {
    const contents = (parts: unknown[]) => ({
      contents: [
        { role: 'user', parts: [{ text: 'Hi.' }] },
        { role: 'model', parts },
        { role: 'user', parts: [{ text: 'Again.' }] },
      ],
    });
    expect(severitiesIn(contents([]))).toEqual(['empty-assistant error']);
    expect(severitiesIn(contents([{ text: '' }]))).toEqual(['empty-assistant warning']);
  });

  it('keeps a Responses output parted from its call a warning, and its missing output an error', () => {
    const input = (between: unknown[]) => [
      { role: 'user', content: 'Go.' },
      { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
      ...between,
      { type: 'function_call_output', call_id: 'c1', output: 'r' },
    ];
    expect(severitiesIn({ input: input([{ role: 'user', content: 'Hurry.' }]) })).toEqual([
      'missing-result warning',
      'orphan-result warning',
    ]);
    expect(severitiesIn({ input: input([]).slice(0, 2) })).toEqual(['missing-result error']);
  });
});
