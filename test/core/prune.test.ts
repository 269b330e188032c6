/**
 * Tool-result pruning: Haystack's own `ToolResultPruningCompactor` tests ported (the same conversations, the same
 * counter rates, the same assertions), and an independent model of the rules, written from issue 17's text, checked
 * against `planPruning` on random conversations with the approximate counter.
 *
 * Source: deepset-ai/haystack test/hooks/compaction/test_tool_result_pruning.py (commit
 * aeeb9dc749cd67bf841341671facabbd44bb029e), whose `FakeCounter(chars_per_token=1)` is `len(rendered) // 1`.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  DEFAULT_PLACEHOLDER,
  fillPlaceholder,
  isPlaceholderText,
  planPruning,
  protectedResults,
  resultSteps,
  TOOL_RESULT_PRUNING,
} from '../../src/core/prune.js';
import { contentOf, textContent } from '../../src/core/render.js';
import type { Content, Message, TokenCounter } from '../../src/core/types.js';
import { createApproxCounter } from '../../src/tokens/approx.js';
import { deepFreeze } from '../helpers/fake-counter.js';
import { scaled } from '../helpers/scale.js';

const COUNTER = createApproxCounter({ charsPerToken: 1, tokensPerImage: 0, tokensPerFile: 0 });

function content(parts: Partial<Content>): Content {
  return { texts: [], toolCalls: [], results: [], images: 0, files: [], ...parts };
}
const user = (text: string): Message => ({ role: 'user', content: textContent(text) });
/** helpers.py `tool_call(*ids, name=)`. */
const toolCall = (ids: number, name = 'search'): Message => ({
  role: 'assistant',
  content: content({ toolCalls: Array.from({ length: ids }, () => ({ name, arguments: '{}' })) }),
});
/** helpers.py `tool_result(result, name=, error=)`. */
function toolResult(
  text: string,
  options: { name?: string; error?: boolean; images?: number; compaction?: string; offloaded?: boolean } = {},
): Message {
  const { name = 'search', error = false, images = 0, compaction, offloaded } = options;
  return {
    role: 'tool',
    compaction,
    offloaded,
    content: content({ results: [{ name, text, error, images, files: 0 }] }),
  };
}
/** test_tool_result_pruning.py `_conversation(*results)`. */
const conversation = (...results: string[]): Message[] => [
  user('task'),
  ...results.flatMap((r) => [toolCall(1), toolResult(r)]),
];
const resultText = (m: Message | undefined): string | undefined =>
  m === undefined ? undefined : contentOf(m).results[0]?.text;
const SEARCH_PLACEHOLDER = fillPlaceholder(DEFAULT_PLACEHOLDER, 'search');

describe('ToolResultPruningCompactor, as Haystack tests it', () => {
  it('stops pruning after reaching the target (test_stops_pruning_after_reaching_target)', () => {
    const messages = deepFreeze(conversation('a'.repeat(400), 'b'.repeat(400), 'c'.repeat(400)));
    const plan = planPruning(messages, COUNTER, { target: 1041, minKeepSteps: 1, minTokens: 0 });
    expect(plan.changed).toBe(true);
    expect(resultText(plan.messages[2])).toBe(SEARCH_PLACEHOLDER);
    expect(plan.messages.slice(4)).toEqual(messages.slice(4));
    expect(plan.pruned.map((p) => p.index)).toEqual([2]);
    expect(plan.tokensAfter).toBe(1041);
    expect([2, 4, 6].map((i) => resultText(messages[i]))).toEqual(['a'.repeat(400), 'b'.repeat(400), 'c'.repeat(400)]);
  });

  it('prunes several results in one call (test_prunes_multiple_results_in_one_call)', () => {
    const messages = conversation('a'.repeat(400), 'b'.repeat(400), 'newest');
    const plan = planPruning(messages, COUNTER, { target: 1, minKeepSteps: 1, minTokens: 0 });
    expect(plan.pruned.map((p) => p.index)).toEqual([2, 4]);
    expect(resultText(plan.messages[2])).toBe(SEARCH_PLACEHOLDER);
    expect(resultText(plan.messages[4])).toBe(SEARCH_PLACEHOLDER);
    expect(plan.messages.slice(5)).toEqual(messages.slice(5));
  });

  it('keeps the results of the newest min_keep_steps steps, parallel results as one step (test_keeps_min_keep_steps)', () => {
    const messages = [
      user('task'),
      toolCall(1),
      toolResult('old'.repeat(200)),
      toolCall(3),
      toolResult('first'.repeat(200)),
      toolResult('second'.repeat(200)),
      toolResult('third'.repeat(200)),
      toolCall(1),
      toolResult('newest'.repeat(200)),
    ];
    const plan = planPruning(messages, COUNTER, { target: 1, minKeepSteps: 2, minTokens: 0 });
    expect(plan.pruned.map((p) => p.index)).toEqual([2]);
    expect(plan.messages.slice(3)).toEqual(messages.slice(3));
  });

  it('changes nothing when the conversation already fits (test_returns_none_when_the_conversation_already_fits)', () => {
    const messages = conversation('a'.repeat(400), 'b'.repeat(400));
    const whole = COUNTER.measure(messages.map((m) => ({ text: renderForTest(m), images: 0, files: 0 })));
    const plan = planPruning(messages, COUNTER, { target: whole, minTokens: 0 });
    expect(plan.changed).toBe(false);
    expect(plan.messages).toBe(messages);
  });

  it('changes nothing when every step is protected (test_returns_none_when_all_steps_are_protected)', () => {
    expect(planPruning(conversation('only result'), COUNTER, { target: 1, minTokens: 0 }).changed).toBe(false);
  });

  it('changes nothing when the placeholder would not save tokens (test_returns_none_when_the_placeholder_would_not_save_tokens)', () => {
    const plan = planPruning(conversation('short', 'newest'), COUNTER, {
      target: 1,
      minTokens: 0,
      placeholder: 'a placeholder much longer than the result',
    });
    expect(plan.changed).toBe(false);
  });

  it('prunes an image result that passes min_tokens by its image cost (test_compact_with_image_result)', () => {
    const messages = [
      user('task'),
      toolCall(1, 'image_generator'),
      toolResult('<image>', { name: 'image_generator', images: 1 }),
      toolCall(1),
      toolResult('newest'),
    ];
    const plan = planPruning(messages, createApproxCounter({ tokensPerImage: 500 }), {
      target: 1,
      minKeepSteps: 1,
      minTokens: 100,
    });
    expect(plan.pruned.map((p) => p.index)).toEqual([2]);
    expect(resultText(plan.messages[2])).toBe(fillPlaceholder(DEFAULT_PLACEHOLDER, 'image_generator'));
    expect(contentOf(plan.messages[2] as Message).results[0]?.images).toBe(0);
  });

  it('skips results at or below min_tokens (test_skips_results_below_min_tokens)', () => {
    expect(planPruning(conversation('small', 'newest'), COUNTER, { target: 1, minTokens: 200 }).changed).toBe(false);
  });

  it('skips results another compaction made (test_skips_previously_compacted_results)', () => {
    const messages = [
      user('task'),
      toolCall(1),
      toolResult('x'.repeat(400), { compaction: 'other' }),
      toolCall(1),
      toolResult('x'.repeat(400)),
    ];
    expect(planPruning(messages, COUNTER, { target: 1, minTokens: 0 }).changed).toBe(false);
  });

  it('skips an offloaded result (test_skips_offloaded_result)', () => {
    const messages = [
      user('task'),
      toolCall(1),
      toolResult('x'.repeat(400), { offloaded: true }),
      toolCall(1),
      toolResult('newest'),
    ];
    expect(planPruning(messages, COUNTER, { target: 1, minTokens: 0 }).changed).toBe(false);
  });

  it('keeps the error flag and records the original tokens (test_pruned_result_preserves_properties_and_records_metadata)', () => {
    const messages = [
      user('task'),
      toolCall(1, 'failing_tool'),
      toolResult('error details '.repeat(100), { name: 'failing_tool', error: true }),
      toolCall(1),
      toolResult('newest'),
    ];
    const plan = planPruning(messages, COUNTER, { target: 1, minTokens: 0 });
    const pruned = contentOf(plan.messages[2] as Message).results[0];
    expect(pruned).toEqual({
      name: 'failing_tool',
      text: fillPlaceholder(DEFAULT_PLACEHOLDER, 'failing_tool'),
      error: true,
      images: 0,
      files: 0,
    });
    expect(plan.messages[2]?.compaction).toBe(TOOL_RESULT_PRUNING);
    expect(plan.pruned[0]?.tokensBefore).toBe('[tool:failing_tool (error)] '.length + 1400);
  });

  it('fills {tool_name} literally and keeps other braces (test_custom_placeholder)', () => {
    const messages = [
      user('task'),
      toolCall(1, 'database_query'),
      toolResult('abcdefghij'.repeat(40), { name: 'database_query' }),
      toolCall(1),
      toolResult('newest'),
    ];
    const plan = planPruning(messages, COUNTER, {
      target: 1,
      minTokens: 0,
      placeholder: 'Run {tool_name} again with {"query": "..."}.',
    });
    expect(resultText(plan.messages[2])).toBe('Run database_query again with {"query": "..."}.');
  });

  it.each([
    [{ minKeepSteps: 0 }, 'min_keep_steps must be at least 1'],
    [{ minTokens: -1 }, 'min_tokens must be a whole number of at least 0'],
    [{ placeholder: '' }, 'the placeholder must not be empty'],
  ])('refuses invalid settings %j (test_rejects_invalid_settings)', (options, message) => {
    expect(() => planPruning(conversation('a'), COUNTER, { target: 1, ...options })).toThrow(message);
  });
});

describe('pruning in swc terms', () => {
  it('recognises an earlier placeholder by its text, with any tool name, and leaves it alone', () => {
    expect(isPlaceholderText(fillPlaceholder(DEFAULT_PLACEHOLDER, 'any tool'), 'Custom {tool_name}.')).toBe(true);
    expect(isPlaceholderText('Custom x.', 'Custom {tool_name}.')).toBe(true);
    expect(isPlaceholderText('Custom x', 'Custom {tool_name}.')).toBe(false);
    expect(isPlaceholderText('{a}{b}', '{a}{tool_name}{b}')).toBe(true);
    const messages = [
      user('task'),
      toolCall(1),
      toolResult(fillPlaceholder(DEFAULT_PLACEHOLDER, 'fetch').repeat(1)),
      toolCall(1),
      toolResult('newest'),
    ];
    expect(planPruning(messages, COUNTER, { target: 1, minTokens: 0 }).changed).toBe(false);
  });

  it('replaces every result of a message answering parallel calls, measuring it as one message', () => {
    const parallel: Message = {
      role: 'tool',
      content: content({
        results: [
          { name: 'a', text: 'x'.repeat(300), error: false, images: 0, files: 0 },
          { name: 'b', text: 'y'.repeat(300), error: true, images: 0, files: 0 },
        ],
      }),
    };
    const messages = [user('task'), toolCall(2), parallel, toolCall(1), toolResult('newest')];
    const plan = planPruning(messages, COUNTER, { target: 1, minTokens: 0 });
    expect(plan.pruned).toEqual([
      {
        index: 2,
        texts: [fillPlaceholder(DEFAULT_PLACEHOLDER, 'a'), fillPlaceholder(DEFAULT_PLACEHOLDER, 'b')],
        tools: ['a', 'b'],
        tokensBefore: '[tool:a] '.length + 300 + 1 + '[tool:b (error)] '.length + 300,
        tokensAfter:
          `[tool:a] ${fillPlaceholder(DEFAULT_PLACEHOLDER, 'a')}\n[tool:b (error)] ${fillPlaceholder(DEFAULT_PLACEHOLDER, 'b')}`
            .length,
      },
    ]);
  });

  it('never counts a result after the target is reached', () => {
    const seen: string[] = [];
    const counter: TokenCounter = {
      name: 'spy',
      measure(list) {
        if (list.length === 1) seen.push(list[0]?.text ?? '');
        return COUNTER.measure(list);
      },
    };
    planPruning(conversation('a'.repeat(400), 'b'.repeat(400), 'c'.repeat(400), 'newest'), counter, {
      target: 1100,
      minTokens: 0,
    });
    expect(seen.some((t) => t.includes('bbbb'))).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// An independent model, from the issue's text
// ---------------------------------------------------------------------------------------------------------------

/** The render the issue's counter sees, written again for the shapes generated here. */
function renderForTest(m: Message): string {
  const c = contentOf(m);
  if (c.results.length > 0)
    return c.results.map((r) => `[tool:${r.name}${r.error ? ' (error)' : ''}] ${r.text}`).join('\n');
  const lines: string[] = [];
  if (c.texts.length > 0) lines.push(`[${m.role}] ${c.texts.join('\n')}`);
  for (const call of c.toolCalls) lines.push(`[${m.role} -> tool_call] ${call.name}(${call.arguments})`);
  return lines.length > 0 ? lines.join('\n') : `[${m.role}] <no content>`;
}

/** floor(code points / 4) of the texts joined with newlines: the approximate counter's rule. */
function modelCount(texts: readonly string[]): number {
  return texts.length === 0 ? 0 : Math.floor([...texts.join('\n')].length / 4);
}

interface ModelSettings {
  target: number;
  minKeepSteps: number;
  minTokens: number;
  placeholder: string;
}

/** The issue's rules, one by one: returns the indices pruned. */
function modelPrune(messages: readonly Message[], s: ModelSettings): number[] {
  const texts = messages.map(renderForTest);
  let total = modelCount(texts);
  if (total <= s.target) return [];
  // Steps from the start: an assistant message and the tool results right after it; only steps with results count.
  const steps: number[][] = [];
  for (let i = 0; i < messages.length; i++) {
    if (messages[i]?.role !== 'assistant') continue;
    const results: number[] = [];
    while (messages[i + 1]?.role === 'tool') results.push(++i);
    if (results.length > 0) steps.push(results);
  }
  const untouchable = new Set(steps.slice(-s.minKeepSteps).flat());
  const placeholderOf = (name: string): string => s.placeholder.replaceAll('{tool_name}', () => name);
  const looksPruned = (text: string): boolean =>
    [s.placeholder, DEFAULT_PLACEHOLDER].some((t) => {
      const [head, ...rest] = t.split('{tool_name}');
      if (rest.length === 0) return text === t;
      // Built as a regular expression here (the implementation never does): every literal piece escaped.
      const escape = (x: string): string => x.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      return new RegExp(`^${escape(head ?? '')}${rest.map((p) => `[\\s\\S]*${escape(p)}`).join('')}$`).test(text);
    });
  const pruned: number[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i] as Message;
    if (m.role !== 'tool' || untouchable.has(i) || m.compaction !== undefined || m.offloaded === true) continue;
    const results = contentOf(m).results;
    if (results.some((r) => looksPruned(r.text))) continue;
    const before = modelCount([renderForTest(m)]);
    if (before <= s.minTokens) continue;
    const after = modelCount([
      results.map((r) => `[tool:${r.name}${r.error ? ' (error)' : ''}] ${placeholderOf(r.name)}`).join('\n'),
    ]);
    if (before - after <= 0) continue;
    pruned.push(i);
    total -= before - after;
    if (total <= s.target) break;
  }
  return pruned;
}

const nameArb = fc.constantFrom('search', 'fetch', 'run_sql', 'ünï', '');
const textArb = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.string({ minLength: 100, maxLength: 1500 }),
  fc.constantFrom(fillPlaceholder(DEFAULT_PLACEHOLDER, 'old')),
);
const resultArb = fc
  .record({ name: nameArb, text: textArb, error: fc.boolean() })
  .map((r) => ({ ...r, images: 0, files: 0 }));
const messageArb: fc.Arbitrary<Message> = fc.oneof(
  fc.string({ maxLength: 200 }).map(user),
  fc
    .record({
      calls: fc.array(nameArb, { maxLength: 3 }),
      text: fc.option(fc.string({ maxLength: 50 }), { nil: undefined }),
    })
    .map(({ calls, text }): Message => ({
      role: 'assistant',
      content: content({
        texts: text === undefined ? [] : [text],
        toolCalls: calls.map((name) => ({ name, arguments: '{}' })),
      }),
    })),
  fc
    .record({
      results: fc.array(resultArb, { minLength: 1, maxLength: 3 }),
      compaction: fc.constantFrom(undefined, undefined, undefined, 'other'),
      offloaded: fc.constantFrom(undefined, undefined, true),
    })
    .map(({ results, compaction, offloaded }): Message => ({
      role: 'tool',
      compaction,
      offloaded,
      content: content({ results }),
    })),
);

describe('planPruning against an independent model of the rules', () => {
  it('prunes exactly the results the model prunes, with their placeholders, and nothing else changes', () => {
    fc.assert(
      fc.property(
        fc.array(messageArb, { maxLength: 25 }),
        fc.integer({ min: 0, max: 3000 }),
        fc.integer({ min: 1, max: 3 }),
        fc.constantFrom(0, 20, 200),
        fc.constantFrom(DEFAULT_PLACEHOLDER, 'gone: {tool_name} {x}', 'short', '{tool_name}{tool_name}'),
        fc.boolean(),
        (messages, target, minKeepSteps, minTokens, placeholder, exhaustive) => {
          deepFreeze(messages);
          const counter = createApproxCounter();
          // Both ways: counting every message, and deciding without counting where the decision is not close.
          const plan = planPruning(messages, counter, { target, minKeepSteps, minTokens, placeholder, exhaustive });
          const expected = modelPrune(messages, { target, minKeepSteps, minTokens, placeholder });
          expect(plan.pruned.map((p) => p.index)).toEqual(expected);
          expect(plan.changed).toBe(expected.length > 0);
          plan.messages.forEach((m, i) => {
            if (!expected.includes(i)) {
              // The message itself, or (a candidate decided when read) one that reads the same.
              if (m !== messages[i])
                expect({ role: m.role, compaction: m.compaction, content: contentOf(m) }).toEqual({
                  role: messages[i]?.role,
                  compaction: messages[i]?.compaction,
                  content: contentOf(messages[i] as Message),
                });
              return;
            }
            const before = contentOf(messages[i] as Message).results;
            expect(contentOf(m).results).toEqual(
              before.map((r) => ({
                name: r.name,
                error: r.error,
                text: placeholder.split('{tool_name}').join(r.name),
                images: 0,
                files: 0,
              })),
            );
          });
          expect(plan.tokensAfter).toBe(modelCount(plan.messages.map(renderForTest)));
          // Pruning again with the same settings finds nothing more to prune only where the target was met.
          if (plan.changed && plan.targetMet) {
            const again = planPruning(plan.messages, counter, { target, minKeepSteps, minTokens, placeholder });
            expect(again.changed).toBe(false);
          }
        },
      ),
      { numRuns: scaled(300) },
    );
  });
});

describe('the newest steps read from the end', () => {
  it('protects the results that the steps listed from the start name', () => {
    // Roles alone decide where steps are: tools after a user or at the start belong to no step.
    const roleArb = fc.constantFrom<Message['role']>('system', 'user', 'assistant', 'tool', 'tool', 'tool');
    fc.assert(
      fc.property(fc.array(roleArb, { maxLength: 40 }), fc.integer({ min: 1, max: 6 }), (roles, minKeepSteps) => {
        const messages = roles.map((role): Message => ({ role, content: textContent('x') }));
        const fromStart = protectedResults(messages, minKeepSteps, resultSteps(messages));
        expect([...protectedResults(messages, minKeepSteps)].sort((a, b) => a - b)).toEqual(
          [...fromStart].sort((a, b) => a - b),
        );
      }),
      { numRuns: scaled(500) },
    );
  });
});
