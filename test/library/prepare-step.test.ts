import { describe, expect, it } from '@jest/globals';
import { UsageError } from '../../src/errors.js';
import { swcPrepareStep } from '../../src/library.js';
import { deepFreeze } from '../helpers/fake-counter.js';

// The AI SDK's types, as far as `prepareStep` goes (the SDK is not a dependency; these mirror `ai` 5's
// `PrepareStepFunction` and `ModelMessage` so the returned function is checked against the shape it must fit).
type ModelMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | Array<{ type: 'text'; text: string }> }
  | { role: 'assistant'; content: string | Array<{ type: 'text'; text: string } | { type: 'tool-call'; toolCallId: string; toolName: string; input: unknown }> }
  | { role: 'tool'; content: Array<{ type: 'tool-result'; toolCallId: string; toolName: string; output: { type: 'text'; value: string } }> };
type PrepareStepResult = { model?: unknown; toolChoice?: unknown; activeTools?: string[]; system?: string; messages?: Array<ModelMessage> } | undefined;
type PrepareStepFunction = (options: { steps: unknown[]; stepNumber: number; model: unknown; messages: Array<ModelMessage>; experimental_context: unknown }) => PromiseLike<PrepareStepResult> | PrepareStepResult;

function step(n: number): ModelMessage[] {
  return [
    { role: 'assistant', content: [{ type: 'tool-call', toolCallId: `c${n}`, toolName: 'search', input: { page: n } }] },
    { role: 'tool', content: [{ type: 'tool-result', toolCallId: `c${n}`, toolName: 'search', output: { type: 'text', value: `page ${n}: ${'words '.repeat(40)}` } }] },
  ];
}

describe('swcPrepareStep', () => {
  it('fits the AI SDK’s prepareStep and compacts only once the conversation is past the threshold', async () => {
    const prepareStep: PrepareStepFunction = swcPrepareStep({ contextWindow: 1000, compactAt: 0.5, compactTo: 0.25, tokenizer: 'approx' });
    const messages: ModelMessage[] = [{ role: 'user', content: 'Read every page and summarise.' }];
    const results: PrepareStepResult[] = [];
    for (let n = 0; n < 12; n++) {
      const frozen = deepFreeze([...messages]);
      const result = await prepareStep({ steps: [], stepNumber: n, model: null, messages: frozen, experimental_context: undefined });
      results.push(result);
      if (result?.messages !== undefined) {
        expect(result.messages[0]).toBe(frozen[0]); // the task, the very object
        expect(result.messages.length).toBeLessThan(frozen.length);
      }
      messages.push(...step(n));
    }
    // Each step adds about 65 tokens: the first steps stay under 500 and come back as nothing.
    expect(results.slice(0, 5).every((r) => r === undefined)).toBe(true);
    expect(results.slice(8).every((r) => r?.messages !== undefined)).toBe(true);
  });

  it('refuses bad options when it is made, not at the first step', () => {
    expect(() => swcPrepareStep({ target: 100, contextWindow: 1000 })).toThrow(UsageError);
  });
});
