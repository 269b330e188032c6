/**
 * Haystack's own tests, ported: the same conversations built in swc's message model, compacted by swc's core with
 * the approximate counter set as Haystack's tests set theirs, asserting what Haystack's tests assert.
 *
 * Sources (deepset-ai/haystack):
 * - test/hooks/compaction/test_sliding_window.py (commit 2d48802e6a56f06d9e979933939930a207b02336), whose
 *   `FakeCounter()` is `len(rendered) // 4` with no flat costs;
 * - test/hooks/compaction/helpers.py (`fresh_conversation_with_two_steps`, `tool_call`, `tool_result`);
 * - test/hooks/compaction/test_tool_result_pruning.py (commit aeeb9dc749cd67bf841341671facabbd44bb029e), whose
 *   `FakeCounter(chars_per_token=1)` and `ApproximateTokenCounter(tokens_per_image=500)` give the counts its
 *   decisions rest on (the pruning decisions themselves are ported in test/core/prune.test.ts);
 * - test/token_counters/test_approximate_counter.py and test/token_counters/test_utils.py.
 */
import { describe, expect, it } from '@jest/globals';
import { compact, planCompaction } from '../../src/core/compact.js';
import { isEarlierNote } from '../../src/core/groups.js';
import { DEFAULT_NOTE_TEMPLATE } from '../../src/core/note.js';
import { renderMessage, textContent } from '../../src/core/render.js';
import { SLIDING_WINDOW, type Content, type Message, type Rendered, type TokenCounter } from '../../src/core/types.js';
import { createApproxCounter } from '../../src/tokens/approx.js';

/** Haystack's `FakeCounter(chars_per_token=n)`: `len(rendered) // n`, nothing for images or files. */
function fakeCounter(charsPerToken: number): TokenCounter {
  return createApproxCounter({ charsPerToken, tokensPerImage: 0, tokensPerFile: 0 });
}

/** test_sliding_window.py: `COUNTER = FakeCounter()`. */
const COUNTER = fakeCounter(4);
/** A target of one token forces the window down to min_keep_steps, whatever the rate. */
const SMALLEST = 1;

function content(parts: Partial<Content>): Content {
  return { texts: [], toolCalls: [], results: [], images: 0, files: [], ...parts };
}

const system = (text: string, compaction?: string): Message => ({
  role: 'system',
  compaction,
  content: textContent(text),
});
const user = (text: string, compaction?: string): Message => ({ role: 'user', compaction, content: textContent(text) });
const assistant = (text: string): Message => ({ role: 'assistant', content: textContent(text) });

/** helpers.py `tool_call(*ids)`: one call per id, arguments `{}` (rendered as `json.dumps({}, sort_keys=True)`). */
function toolCall(...ids: string[]): Message {
  return { role: 'assistant', content: content({ toolCalls: ids.map(() => ({ name: 'search', arguments: '{}' })) }) };
}

/** helpers.py `tool_result(result)`: one result of the `search` tool (ids are not rendered). */
function toolResult(
  result: string,
  options: { name?: string; error?: boolean; images?: number; files?: number; compaction?: string } = {},
): Message {
  const { name = 'search', error = false, images = 0, files = 0, compaction } = options;
  return { role: 'tool', compaction, content: content({ results: [{ name, text: result, error, images, files }] }) };
}

/** helpers.py `fresh_conversation_with_two_steps()`. */
function freshConversationWithTwoSteps(): Message[] {
  return [
    system('rules'),
    user('start'),
    toolCall('c1'),
    toolResult('first result '.repeat(12)),
    toolCall('c2'),
    toolResult('second result '.repeat(12)),
  ];
}

/** Asserts a compacted list holds exactly these messages (the same objects), `'note'` standing for the new note. */
function expectMessages(compacted: readonly Message[] | null, expected: ReadonlyArray<Message | 'note'>): void {
  expect(compacted).not.toBeNull();
  const list = compacted as readonly Message[];
  expect(list).toHaveLength(expected.length);
  expected.forEach((m, i) => {
    if (m === 'note') expect(list[i]?.compaction).toBe(SLIDING_WINDOW);
    else expect(list[i]).toBe(m);
  });
}

/** The text of a note message. */
function textOf(message: Message | undefined): string | undefined {
  const c = message?.content;
  return c === undefined ? undefined : (typeof c === 'function' ? c() : c).texts.join('\n');
}

/** helpers.py `count_markers`: messages a compaction made. */
function countMarkers(messages: readonly Message[]): number {
  return messages.filter((m) => m.compaction !== undefined).length;
}

describe('test_sliding_window.py TestIsCompactionNote', () => {
  it.each([
    ['note-this-strategy-left', user('Earlier messages were removed.', SLIDING_WINDOW), true],
    [
      'tool-result-another-strategy-pruned',
      toolResult('[Tool result removed to free up context.]', { compaction: 'tool_result_pruning' }),
      false,
    ],
    ['note-another-strategy-left', user('A summary of what came before.', 'summarization'), false],
  ] as const)('test_only_matches_sliding_window_omission_message[%s]', (_id, message, expected) => {
    expect(isEarlierNote(message)).toBe(expected);
  });

  // `marker-that-is-not-a-dict` is the Haystack adapter's to read: it gives such a marker the strategy `unknown`.
  it('test_only_matches_sliding_window_omission_message[marker-that-is-not-a-dict]', () => {
    expect(isEarlierNote(user('odd', 'unknown'))).toBe(false);
  });

  // [system-message]: Haystack's note is a user message, so a system message carrying the sliding-window marker (as
  // Haystack's first SlidingWindowCompactor wrote its notes) is not one: it stays in its turn and is kept with it.
  // swc's isEarlierNote looks at the marker only, so it folds the message away: this case fails until it looks at
  // the role too.
  it('test_only_matches_sliding_window_omission_message[system-message], as a decision', () => {
    const messages = [
      system('rules'),
      user('ancient question '.repeat(200)),
      assistant('ancient answer'),
      user('old question'),
      system('Earlier messages were removed.', SLIDING_WINDOW),
      assistant('old answer'),
      user('current task'),
      assistant('current step'),
    ];
    // Protected "[system] rules\n[user] current task" 34 // 4 = 8; step 24 // 4 = 6; turn [3, 4, 5] 82 // 4 = 20.
    const compacted = compact(messages, COUNTER, { target: 34 });
    expectMessages(compacted, [messages[0] as Message, 'note', ...messages.slice(3)]);
  });
});

describe('test_sliding_window.py TestSlidingWindowCompactor', () => {
  it('test_replaces_all_historical_turns', () => {
    const messages = [
      system('rules'),
      user('old question '.repeat(100)),
      assistant('old answer'),
      user('current task'),
    ];
    const compacted = compact(messages, COUNTER, { target: SMALLEST, minKeepSteps: 0, note: null });
    expectMessages(compacted, [messages[0] as Message, messages[3] as Message]);
  });

  it.each([4, 1])('test_replaces_oldest_agent_step (%p characters per token)', (rate) => {
    const messages = freshConversationWithTwoSteps();
    const plan = planCompaction(messages, fakeCounter(rate), { target: SMALLEST });
    const compacted = compact(messages, fakeCounter(rate), { target: SMALLEST });
    expectMessages(compacted, [...messages.slice(0, 2), 'note', ...messages.slice(4)]);
    // The note's meta: removed_messages 2, kept_messages 4; its text the default note; a user message.
    expect([plan.removedCount, plan.keptCount]).toEqual([2, 4]);
    expect(textOf(compacted?.[2])).toBe(DEFAULT_NOTE_TEMPLATE.replace('{num_removed}', '2'));
    expect(compacted?.[2]?.role).toBe('user');
  });

  it('test_replaces_oldest_historical_turn', () => {
    const messages = [
      system('rules'),
      user('old question'),
      assistant('old answer '.repeat(100)),
      user('recent question'),
      assistant('recent answer'),
      user('current task'),
      assistant('current answer'),
    ];
    // Enough for the instructions, the recent turn, and the task with its step, but not the padded oldest turn.
    const compacted = compact(messages, COUNTER, { target: 30 });
    expectMessages(compacted, [messages[0] as Message, 'note', ...messages.slice(3)]);
  });

  it('test_drops_all_historical_turns_and_oldest_agent_step', () => {
    const systemMessage = system('rules');
    const historicalTurn = [
      user('old question'),
      toolCall('old-call'),
      toolResult('old result'),
      assistant('old final answer'),
    ];
    const currentTask = [
      user('current task'),
      toolCall('current-call-1'),
      toolResult('large intermediate result '.repeat(100)),
      toolCall('current-call-2'),
      toolResult('latest result'),
    ];
    const messages = [systemMessage, ...historicalTurn, ...currentTask];
    const compacted = compact(messages, COUNTER, { target: 52, note: null });
    expectMessages(compacted, [systemMessage, currentTask[0] as Message, ...currentTask.slice(-2)]);
  });

  it('test_replaces_earlier_note_and_oldest_historical_turn', () => {
    const messages = [
      system('rules'),
      user('Earlier messages were removed.', SLIDING_WINDOW),
      user('old question '.repeat(200)),
      assistant('old answer'),
      user('recent question'),
      assistant('recent answer'),
      user('current task'),
      assistant('current step'),
    ];
    const plan = planCompaction(messages, COUNTER, { target: 30 });
    const compacted = compact(messages, COUNTER, { target: 30 });
    expectMessages(compacted, [messages[0] as Message, 'note', ...messages.slice(4)]);
    expect(countMarkers(compacted ?? [])).toBe(1);
    // The earlier note is counted among the removed, alongside the two messages of the oldest turn.
    expect(plan.removedCount).toBe(3);
  });

  it.each([4, 1])('test_replaces_earlier_note_and_oldest_agent_step (%p characters per token)', (rate) => {
    const messages = [
      system('rules'),
      user('current task'),
      user('Earlier messages were removed.', SLIDING_WINDOW),
      toolCall('c1'),
      toolResult('first result'),
      toolCall('c2'),
      toolResult('second result'),
    ];
    const plan = planCompaction(messages, fakeCounter(rate), { target: SMALLEST });
    const compacted = compact(messages, fakeCounter(rate), { target: SMALLEST });
    expectMessages(compacted, [...messages.slice(0, 2), 'note', ...messages.slice(5)]);
    expect(countMarkers(compacted ?? [])).toBe(1);
    expect(plan.removedCount).toBe(3);
  });

  it('test_keeps_a_pruned_tool_result_inside_a_kept_turn', () => {
    const messages = [
      system('rules'),
      user('ancient question '.repeat(200)),
      assistant('ancient answer'),
      user('old question'),
      toolCall('old'),
      toolResult('[Tool result removed to free up context.]', { compaction: 'tool_result_pruning' }),
      user('current task'),
      assistant('current step'),
    ];
    const compacted = compact(messages, COUNTER, { target: 45, note: null });
    expectMessages(compacted, [messages[0] as Message, ...messages.slice(3)]);
  });

  it.each([4, 1])('test_omission_note_can_be_turned_off (%p characters per token)', (rate) => {
    const messages = freshConversationWithTwoSteps();
    const compacted = compact(messages, fakeCounter(rate), { target: SMALLEST, note: null });
    expectMessages(compacted, [...messages.slice(0, 2), ...messages.slice(4)]);
  });

  it.each([
    ['placeholder-substituted', 'Dropped {num_removed} messages.', 'Dropped 2 messages.'],
    ['no-placeholder-used-as-written', 'Some history is missing.', 'Some history is missing.'],
    ['other-braces-left-alone', 'Gone: {other} x{num_removed}', 'Gone: {other} x2'],
  ])('test_omission_note_can_be_customized[%s]', (_id, note, expected) => {
    const compacted = compact(freshConversationWithTwoSteps(), COUNTER, { target: SMALLEST, note });
    expect(textOf(compacted?.[2])).toBe(expected);
  });

  it('test_returns_none_when_only_an_earlier_note_would_be_removed', () => {
    const messages = [
      system('rules'),
      user(DEFAULT_NOTE_TEMPLATE.replace('{num_removed}', '12'), SLIDING_WINDOW),
      user('current task'),
      assistant('current step'),
    ];
    // Enough for everything but the earlier note, leaving that note as the only thing compaction could remove.
    expect(compact(messages, COUNTER, { target: 16 })).toBeNull();
  });

  it.each([
    ['conversation-already-fits', freshConversationWithTwoSteps(), 100_000],
    ['only-system', [system('a'), system('b')], SMALLEST],
    ['only-system-and-task', [system('rules'), user('hi')], SMALLEST],
  ] as const)('test_returns_none_when_there_is_nothing_to_remove[%s]', (_id, messages, target) => {
    expect(compact(messages, COUNTER, { target })).toBeNull();
  });

  it.each([4, 1])('test_keeps_a_parallel_tool_call_together_with_all_results (%p characters per token)', (rate) => {
    const messages = [
      system('rules'),
      user('task'),
      toolCall('old'),
      toolResult('old result '.repeat(40)),
      toolCall('a', 'b', 'c'),
      toolResult('first'),
      toolResult('second'),
      toolResult('third'),
    ];
    const compacted = compact(messages, fakeCounter(rate), { target: SMALLEST });
    expect(compacted?.slice(-4)).toEqual(messages.slice(-4));
    compacted?.slice(-4).forEach((m, i) => expect(m).toBe(messages[messages.length - 4 + i]));
  });

  it.each([
    [0, 0],
    [1, 1],
    [2, 2],
    [20, 2],
  ])('test_min_keep_steps_wins_over_an_unaffordable_target[%p-%p]', (minKeepSteps, expected) => {
    const messages = freshConversationWithTwoSteps();
    for (const rate of [4, 1]) {
      const result = compact(messages, fakeCounter(rate), { target: SMALLEST, minKeepSteps, note: null }) ?? messages;
      expect(result.filter((m) => m.role === 'assistant')).toHaveLength(expected);
    }
  });

  it('test_rejects_negative_min_keep_steps', () => {
    expect(() => compact(freshConversationWithTwoSteps(), COUNTER, { target: SMALLEST, minKeepSteps: -1 })).toThrow(
      /min_keep_steps must be .*at least 0/,
    );
  });

  it.each([4, 1])('test_keeping_no_steps_still_preserves_the_current_task (%p characters per token)', (rate) => {
    const messages = freshConversationWithTwoSteps();
    const compacted = compact(messages, fakeCounter(rate), { target: SMALLEST, minKeepSteps: 0, note: null });
    expectMessages(compacted, messages.slice(0, 2));
  });
});

describe('test_tool_result_pruning.py: the counts its decisions rest on', () => {
  /** test_tool_result_pruning.py `_conversation(*results)`. */
  function conversation(...results: string[]): Message[] {
    return [user('task'), ...results.flatMap((result, k) => [toolCall(`c${k}`), toolResult(result)])];
  }
  const measure = (counter: TokenCounter, messages: readonly Message[]): number =>
    counter.measure(messages.map(renderMessage));
  /** tool_result_pruning.py `_DEFAULT_PLACEHOLDER` for the `search` tool. */
  const PLACEHOLDER = '[Tool result removed to free up context. Call `search` again if you need it.]';
  const ONE_PER_CHARACTER = fakeCounter(1);

  it('test_stops_pruning_after_reaching_target: the conversation with its oldest result pruned is 1041 tokens', () => {
    const messages = conversation('a'.repeat(400), 'b'.repeat(400), 'c'.repeat(400));
    const onePruned = [...messages];
    onePruned[2] = toolResult(PLACEHOLDER);
    expect(measure(ONE_PER_CHARACTER, onePruned)).toBe(1041);
    expect(measure(ONE_PER_CHARACTER, messages)).toBe(1364);
  });

  it('test_compact_with_image_result: an image result passes min_tokens 100 only with its image cost of 500', () => {
    const imageResult = [toolResult('<image>', { name: 'image_generator', images: 1 })];
    // "[tool:image_generator] <image>" is 30 characters: 7 tokens at 4 per token, plus 500 for the image.
    expect(measure(createApproxCounter({ tokensPerImage: 500 }), imageResult)).toBe(507);
    expect(measure(createApproxCounter({ tokensPerImage: 0 }), imageResult)).toBe(7);
  });

  it('test_pruned_result_preserves_properties_and_records_metadata: original_tokens of the error result', () => {
    const failed = toolResult('error details '.repeat(100), { name: 'failing_tool', error: true });
    expect(measure(ONE_PER_CHARACTER, [failed])).toBe('[tool:failing_tool (error)] '.length + 1400);
  });

  it('test_skips_results_below_min_tokens: the result "small" is not above min_tokens 200', () => {
    expect(measure(ONE_PER_CHARACTER, [toolResult('small')])).toBe(19);
  });
});

describe('test_approximate_counter.py TestApproximateTokenCounter', () => {
  const rendered = (...messages: Message[]): Rendered[] => messages.map(renderMessage);
  const withParts = (images: number, files: (string | null)[]): Message => ({
    role: 'user',
    content: content({ images, files }),
  });

  it('test_counts_an_empty_conversation_as_zero', () => {
    expect(createApproxCounter().measure([])).toBe(0);
  });

  it('test_counts_at_the_configured_ratio', () => {
    // "[user] " and 400 characters: 407 // 4 and 407 // 2.
    const messages = rendered(user('x'.repeat(400)));
    expect(createApproxCounter().measure(messages)).toBe(101);
    expect(createApproxCounter({ charsPerToken: 2 }).measure(messages)).toBe(203);
  });

  it('test_counts_grow_with_content', () => {
    const counter = createApproxCounter();
    expect(counter.measure(rendered(user('hi')))).toBeLessThan(counter.measure(rendered(user('hi '.repeat(500)))));
  });

  it.each([
    // "[user] <image>" 14 // 4 = 3; "[user] <file: report.pdf>" 25 // 4 = 6; both joined: 55 // 4 = 13.
    ['image', withParts(1, []), 85, 3 + 85],
    ['file', withParts(0, ['report.pdf']), 1000, 6 + 1000],
    ['several', withParts(2, ['report.pdf']), 85 * 2 + 1000, 13 + 85 * 2 + 1000],
  ] as const)('test_non_text_content_is_charged_at_a_flat_rate[%s]', (_id, message, flat, exact) => {
    const count = createApproxCounter().measure(rendered(message));
    expect(count).toBeGreaterThan(flat);
    expect(count).toBe(exact);
  });

  it('test_an_image_inside_a_tool_result_is_counted', () => {
    // "[tool:shot] shot:<image>" is 24 characters: 6 tokens, plus 85 for the image inside the result.
    const nested = toolResult('shot:<image>', { name: 'shot', images: 1 });
    expect(createApproxCounter().measure(rendered(nested))).toBe(6 + 85);
  });

  it('test_the_flat_rates_are_configurable', () => {
    const messages = rendered(withParts(1, []));
    const cheap = createApproxCounter({ tokensPerImage: 10 }).measure(messages);
    const dear = createApproxCounter({ tokensPerImage: 500 }).measure(messages);
    expect(dear - cheap).toBe(490);
  });

  it('test_rejects_a_non_positive_ratio', () => {
    expect(() => createApproxCounter({ charsPerToken: 0 })).toThrow(
      'charsPerToken must be a positive finite number, got 0',
    );
  });

  it('test_serde_round_trip: the settings are kept as given', () => {
    expect(createApproxCounter({ charsPerToken: 3.5, tokensPerImage: 200, tokensPerFile: 3000 }).settings).toEqual({
      charsPerToken: 3.5,
      tokensPerImage: 200,
      tokensPerFile: 3000,
    });
  });
});

describe('test_utils.py (token counters): the text that is counted', () => {
  it('TestRenderMessage test_renders_every_kind_of_message, and counts it one token per character', () => {
    const messages: Message[] = [
      system('rules'),
      user('what is haystack?'),
      {
        role: 'assistant',
        content: content({ texts: ['let me look'], toolCalls: [{ name: 'search', arguments: '{"a": 1, "b": 2}' }] }),
      },
      toolResult('found it'),
      toolResult('boom', { error: true }),
      { role: 'user', content: content({ texts: ['look:'], images: 1, files: ['report.pdf'] }) },
      { role: 'assistant', content: content({}) },
    ];
    const expected =
      '[system] rules\n' +
      '[user] what is haystack?\n' +
      '[assistant] let me look\n' +
      '[assistant -> tool_call] search({"a": 1, "b": 2})\n' +
      '[tool:search] found it\n' +
      '[tool:search (error)] boom\n' +
      '[user] look:\n' +
      '[user] <image>\n' +
      '[user] <file: report.pdf>\n' +
      '[assistant] <no content>';
    const list = messages.map(renderMessage);
    expect(list.map((r) => r.text).join('\n')).toBe(expected);
    expect(fakeCounter(1).measure(list)).toBe(expected.length);
  });

  it('TestRenderedConversation test_joins_messages_with_newlines', () => {
    // "[user] a\n[assistant] b" is 22 characters.
    expect(fakeCounter(1).measure([user('a'), assistant('b')].map(renderMessage))).toBe(22);
  });
});
