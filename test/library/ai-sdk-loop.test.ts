/**
 * swcPrepareStep inside a real Vercel AI SDK 5 loop: `generateText` with the SDK's own `MockLanguageModelV2`, a tool
 * whose results are large, 80 model calls and a 20,000-token window. What the model is sent is read from the mock's
 * `prompt` (the SDK's conversion of what prepareStep returned), so every assertion is about the real request.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { generateText, jsonSchema, stepCountIs, tool, type ModelMessage, type PrepareStepFunction } from 'ai';
import { MockLanguageModelV2 } from 'ai/test';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { createCompactor, swcPrepareStep } from '../../src/library/index.js';

const WINDOW = 20_000;
const COMPACT_AT = 0.7;
const COMPACT_TO = 0.4;
const CALLS = 80;
const SYSTEM = 'You are a research agent. Read every page you are asked to read, then answer.';

/** Deterministic filler: words of 2 to 6 letters from a fixed linear congruential sequence. */
function words(count: number, seed: number): string {
  let s = seed;
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    s = (s * 1103515245 + 12345) % 2147483648;
    out.push(s.toString(36).slice(0, 2 + (s % 5)));
  }
  return out.join(' ');
}

/** A page: 250 to 550 words (700 to 1,600 tokens), different on each call. */
function page(n: number): string {
  return `Page ${n}.\n${words(250 + ((n * 37) % 300), n + 1)}`;
}

interface Sent {
  /** The messages of the prompt the model got (its system message first), as JSON, one string each. */
  readonly prompt: string[];
  /** The history the SDK handed prepareStep, and what the step was sent instead (the history when nothing came back). */
  readonly history: ModelMessage[];
  readonly sent: ModelMessage[];
}

/** Runs the loop and returns, per call, what the model was sent. */
async function runLoop(): Promise<Sent[]> {
  const prompts: string[][] = [];
  const steps: Array<{ history: ModelMessage[]; sent: ModelMessage[] }> = [];
  const usage = { inputTokens: 10, outputTokens: 10, totalTokens: 20 };
  const model = new MockLanguageModelV2({
    doGenerate: async (options) => {
      const n = prompts.length;
      prompts.push(options.prompt.map((m) => JSON.stringify(m)));
      if (n === CALLS - 1)
        return { content: [{ type: 'text', text: 'Every page read.' }], finishReason: 'stop', usage, warnings: [] };
      return {
        content: [{ type: 'tool-call', toolCallId: `call-${n}`, toolName: 'read', input: JSON.stringify({ page: n }) }],
        finishReason: 'tool-calls',
        usage,
        warnings: [],
      };
    },
  });
  const prepare = swcPrepareStep({
    contextWindow: WINDOW,
    compactAt: COMPACT_AT,
    compactTo: COMPACT_TO,
    system: SYSTEM,
  });
  const result = await generateText({
    model,
    system: SYSTEM,
    prompt: 'Read pages 0 to 78 and tell me what they have in common.',
    tools: {
      read: tool({
        description: 'Reads a page',
        inputSchema: jsonSchema<{ page: number }>({
          type: 'object',
          properties: { page: { type: 'number' } },
          required: ['page'],
        }),
        execute: async ({ page: n }) => page(n),
      }),
    },
    stopWhen: stepCountIs(CALLS),
    prepareStep: async ({ messages }) => {
      const history = [...messages];
      const out = await prepare({ messages });
      steps.push({ history, sent: out?.messages ?? history });
      return out;
    },
  });
  expect(result.text).toBe('Every page read.');
  return prompts.map((prompt, k) => ({ prompt, ...(steps[k] as { history: ModelMessage[]; sent: ModelMessage[] }) }));
}

/** Whether a prompt starts with every message of the one before, byte for byte. */
function extendsPrompt(prompt: readonly string[], before: readonly string[]): boolean {
  return prompt.length >= before.length && before.every((m, k) => prompt[k] === m);
}

/** The calls whose prompt does not start with the previous call's prompt: where the provider's prompt cache misses. */
function prefixChanges(calls: readonly Sent[]): number[] {
  const out: number[] = [];
  for (let k = 1; k < calls.length; k++)
    if (!extendsPrompt((calls[k] as Sent).prompt, (calls[k - 1] as Sent).prompt)) out.push(k);
  return out;
}

/** The tokens of messages as swc counts them, with the system prompt (exact: the budget is never reached). */
async function tokenMeter(): Promise<(messages: readonly ModelMessage[]) => Promise<number>> {
  const compactor = await createCompactor({ format: 'ai-sdk', target: 100_000_000, system: SYSTEM });
  return async (messages) => (await compactor.compact(messages)).plan.tokensBefore;
}

/** What the model reads of a prompt, counted by gpt-tokenizer's o200k_base (independently of swc): texts, inputs, outputs. */
function promptTokens(prompt: readonly string[]): number {
  let n = 0;
  for (const json of prompt) {
    const m = JSON.parse(json) as {
      content: string | Array<{ type: string; text?: string; input?: unknown; output?: { value: unknown } }>;
    };
    if (typeof m.content === 'string') n += countTokens(m.content);
    else
      for (const part of m.content)
        n += countTokens(
          part.text ??
            (part.input !== undefined ? JSON.stringify(part.input) : JSON.stringify(part.output?.value ?? '')),
        );
  }
  return n;
}

describe('swcPrepareStep in an AI SDK 5 generateText loop (80 calls, 20,000-token window, large tool results)', () => {
  let calls: Sent[] = [];
  beforeAll(async () => {
    calls = await runLoop();
  });

  it('keeps its cut: the prompt changes its prefix only when it compacts, at 70% of the window, down to 40%', async () => {
    expect(calls).toHaveLength(CALLS);
    const measure = await tokenMeter();
    const trigger = WINDOW * COMPACT_AT;
    const target = WINDOW * COMPACT_TO;
    const changes = prefixChanges(calls);
    const compactions: number[] = [];
    for (let k = 1; k < calls.length; k++) {
      const before = calls[k - 1] as Sent;
      const now = calls[k] as Sent;
      // What would be sent without a new cut: the last step's messages and what the SDK appended since.
      const appended = now.history.slice(before.history.length);
      expect(now.history.slice(0, before.history.length).map((m) => JSON.stringify(m))).toEqual(
        before.history.map((m) => JSON.stringify(m)),
      );
      const uncut = await measure([...before.sent, ...appended]);
      if (uncut >= trigger) {
        // The view reached the threshold: cut once more, down to the target.
        compactions.push(k);
        expect(await measure(now.sent)).toBeLessThanOrEqual(target);
      } else {
        // Below it: the same messages as last time with the new ones appended, sent as the same bytes.
        expect(now.sent.map((m) => JSON.stringify(m))).toEqual(
          [...before.sent, ...appended].map((m) => JSON.stringify(m)),
        );
        expect(now.prompt.length).toBe(before.prompt.length + appended.length);
      }
    }
    expect(changes).toEqual(compactions);
    // About 1,200 tokens a step, 6,000 between 40% and 70%: a cut every fifth to sixth step.
    expect(compactions.length).toBe(12);
  });

  it('is what the SDK takes as prepareStep (its own PrepareStepFunction type)', () => {
    const prepareStep: PrepareStepFunction<{ read: ReturnType<typeof tool> }> = swcPrepareStep({
      contextWindow: WINDOW,
      system: SYSTEM,
    });
    expect(typeof prepareStep).toBe('function');
  });

  it('sends every tool result with its call, and every prompt under the window', () => {
    for (const { prompt } of calls) {
      expect(promptTokens(prompt)).toBeLessThan(WINDOW * COMPACT_AT);
      const messages = prompt.map((json) => JSON.parse(json) as { role: string; content: unknown });
      expect(messages[0]).toEqual({ role: 'system', content: SYSTEM });
      messages.forEach((m, k) => {
        const parts = Array.isArray(m.content) ? (m.content as Array<{ type: string; toolCallId?: string }>) : [];
        const ids = parts.filter((p) => p.type === 'tool-call').map((p) => p.toolCallId);
        const next = messages[k + 1];
        const answers = (role: string | undefined, content: unknown): unknown[] =>
          role === 'tool' ? (content as Array<{ toolCallId: string }>).map((p) => p.toolCallId) : [];
        if (ids.length > 0) expect(answers(next?.role, next?.content)).toEqual(ids);
        if (m.role === 'tool') {
          const before = messages[k - 1]?.content as Array<{ type: string; toolCallId?: string }>;
          expect(before.filter((p) => p.type === 'tool-call').map((p) => p.toolCallId)).toEqual(
            answers(m.role, m.content),
          );
        }
      });
      // One note at most: an earlier one is folded into the next.
      expect(
        messages.filter((m) => JSON.stringify(m.content).includes('earlier messages were removed')).length,
      ).toBeLessThanOrEqual(1);
    }
  });
});
