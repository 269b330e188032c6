import { describe, expect, it } from '@jest/globals';
import {
  AIMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
  mapChatMessagesToStoredMessages,
} from '@langchain/core/messages';
import { compactMessages, createCompactor } from '../../src/library/index.js';
import { deepFreeze } from '../helpers/fake-counter.js';

// The messages of each SDK as its users hold them (the shapes docs/library.md shows), compacted in memory.

const OLD = 'An earlier exchange about something else entirely. '.repeat(20);

describe('messages as each SDK holds them', () => {
  it('OpenAI chat messages', async () => {
    const messages = deepFreeze([
      { role: 'developer', content: 'You are a travel agent.' },
      { role: 'user', content: OLD },
      { role: 'assistant', content: OLD },
      { role: 'user', content: 'Weather in Paris?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'Sunny, 24°C' },
    ]);
    const { messages: kept, format } = await compactMessages(messages, { target: 120, tokenizer: 'approx' });
    expect(format).toBe('openai');
    expect(kept.slice(2)).toEqual(messages.slice(3));
    expect(kept[0]).toBe(messages[0]);
  });

  it('OpenAI Responses input items, with instructions outside the list', async () => {
    const input = deepFreeze([
      { role: 'user', content: OLD },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: OLD }] },
      { role: 'user', content: 'Weather in Paris?' },
      { type: 'function_call', call_id: 'c1', name: 'weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call_output', call_id: 'c1', output: 'Sunny, 24°C' },
    ]);
    const result = await compactMessages(input, {
      format: 'responses',
      system: 'You are a travel agent.',
      target: 120,
      tokenizer: 'approx',
    });
    expect(result.messages.slice(1)).toEqual(input.slice(2));
  });

  it('Anthropic messages with the system prompt outside', async () => {
    const messages = deepFreeze([
      { role: 'user', content: OLD },
      { role: 'assistant', content: [{ type: 'text', text: OLD }] },
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'weather', input: { city: 'Paris' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'Sunny, 24°C' }] },
    ]);
    const result = await compactMessages(messages, {
      system: 'You are a travel agent.',
      target: 120,
      tokenizer: 'approx',
    });
    expect(result.format).toBe('anthropic');
    expect(result.messages.slice(1)).toEqual(messages.slice(2));
    expect(result.plan.kept[0]).toBe(0); // the system prompt, counted and kept
  });

  it('LangChain.js message instances, and their stored (toDict) form', async () => {
    const messages = [
      new SystemMessage('You are a travel agent.'),
      new HumanMessage(OLD),
      new AIMessage(OLD),
      new HumanMessage('Weather in Paris?'),
      new AIMessage({ content: '', tool_calls: [{ id: 'c1', name: 'weather', args: { city: 'Paris' } }] }),
      new ToolMessage({ content: 'Sunny, 24°C', tool_call_id: 'c1' }),
    ];
    const instances = await compactMessages(messages, {
      target: 120,
      tokenizer: 'approx',
      createNote: (text) => new HumanMessage(text),
    });
    expect(instances.format).toBe('langchain');
    expect(instances.messages.filter((m) => messages.includes(m))).toEqual([messages[0], ...messages.slice(3)]);
    expect(instances.messages[1]).toBeInstanceOf(HumanMessage);
    const stored = mapChatMessagesToStoredMessages(messages);
    const dicts = await compactMessages(stored, { target: 120, tokenizer: 'approx' });
    expect(dicts.messages.filter((m) => stored.includes(m))).toEqual([stored[0], ...stored.slice(3)]);
    expect(dicts.plan.kept).toEqual(instances.plan.kept);
  });

  it('OpenAI Agents SDK input items (callId, function_call_result)', async () => {
    const history = deepFreeze([
      { role: 'user', content: OLD },
      { role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: OLD }] },
      { role: 'user', content: 'Weather in Paris?' },
      { type: 'function_call', callId: 'c1', name: 'weather', arguments: '{"city":"Paris"}', status: 'completed' },
      {
        type: 'function_call_result',
        callId: 'c1',
        name: 'weather',
        status: 'completed',
        output: { type: 'text', text: 'Sunny, 24°C' },
      },
    ]);
    const compactor = await createCompactor({ target: 120, tokenizer: 'approx' });
    const result = await compactor.compact(history);
    expect(result.format).toBe('responses');
    expect(result.messages.slice(1)).toEqual(history.slice(2));
    // The call and its result are one step, the result counted as `[tool:weather] Sunny, 24°C`.
    const steps = result.plan.groups.filter((g) => g.kind === 'step');
    expect(steps).toHaveLength(1);
    expect(steps[0]?.indices).toHaveLength(2);
  });
});
