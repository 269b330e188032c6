/**
 * The reference `CompactionHook` of test/reference/hook.ts against the cases Haystack 3.4 tests its hook with
 * (`test/hooks/compaction/test_hooks.py`: the trigger, the overhead taken off the target, `context_tokens` after a
 * compaction), and the cases of PR #12594 (issue #12580): with no assistant message the reported figure is the whole
 * conversation, and after a compaction that leaves no assistant message the whole compacted conversation is
 * accounted for, so a second hook right after sees its true size. Haystack's `FakeCounter` (the rendered conversation's
 * characters over 4) is the reference's approximate counter with no images or files.
 */
import { describe, expect, it } from '@jest/globals';
import { approximateCounter, type HMessage, type HRole, type HToolCall } from '../reference/haystack.js';
import {
  accountedContextTokens,
  estimatedContextTokens,
  hookTargetTokens,
  runHook,
  type HCompactor,
  type HookSettings,
} from '../reference/hook.js';

const count = approximateCounter();
const SETTINGS: HookSettings = { contextWindow: 1000, compactAt: 0.7, compactTo: 0.4 };

const message = (role: HRole, text: string | null, extra: Partial<HMessage> = {}): HMessage => ({
  role,
  texts: text === null ? [] : [text],
  toolCalls: [],
  results: [],
  images: 0,
  files: [],
  meta: {},
  ...extra,
});

const toolCall = (id: string): HMessage =>
  message('assistant', null, { toolCalls: [{ toolName: 'search', id, arguments: {} } satisfies HToolCall] });

const toolResult = (text: string, id: string): HMessage =>
  message('tool', null, { results: [{ toolName: 'search', id, text, error: false }] });

/** `fresh_conversation_with_two_steps`: rules, a task, two steps whose results are worth dropping. */
const twoSteps = (): HMessage[] => [
  message('system', 'rules'),
  message('user', 'start'),
  toolCall('c1'),
  toolResult('first result '.repeat(12), 'c1'),
  toolCall('c2'),
  toolResult('second result '.repeat(12), 'c2'),
];

/** A compactor that returns a preset result and records the targets it was handed. */
function recording(result: HMessage[] | null): HCompactor & { readonly targets: number[] } {
  const targets: number[] = [];
  const compactor = (_messages: readonly HMessage[], target: number): HMessage[] | null => {
    targets.push(target);
    return result;
  };
  return Object.assign(compactor, { targets });
}

describe('the reference CompactionHook estimates the context as Haystack 3.4 does', () => {
  it('counts the whole conversation when the generator reports no usage', () => {
    const messages = twoSteps();
    expect(estimatedContextTokens(messages, 0, count)).toBe(count(messages));
  });

  it('anchors on the reported figure and counts only the messages after the newest assistant message', () => {
    const messages = twoSteps();
    // The second result's rendered line is 182 characters, 45 tokens.
    expect(count(messages.slice(5))).toBe(45);
    expect(estimatedContextTokens(messages, 800, count)).toBe(845);
  });

  it('takes the reported figure alone for a conversation that ends on the assistant reply', () => {
    const messages = [...twoSteps().slice(0, 5)];
    expect(estimatedContextTokens(messages, 800, count)).toBe(800);
  });

  it('takes the reported figure alone when no assistant message is left (#12580)', () => {
    const messages = [message('system', 'rules'), message('user', 'x'.repeat(4000)), message('user', 'more')];
    // Before #12594 the whole conversation was counted on top of the figure that already accounts for it.
    expect(count(messages)).toBeGreaterThan(1000);
    expect(estimatedContextTokens(messages, 500, count)).toBe(500);
  });

  it.each([
    ['compacts over the trigger', 800, true],
    ['compacts at the trigger', 700, true],
    ['leaves it under the trigger', 300, false],
  ])('%s (%d reported)', (_name, reported, compacts) => {
    const compactor = recording(null);
    runHook({ messages: twoSteps(), contextTokens: reported }, compactor, count, SETTINGS);
    expect(compactor.targets.length).toBe(compacts ? 1 : 0);
  });

  it('compacts without reported usage by counting locally', () => {
    const big = [1, 2, 3].map(() => message('user', 'x'.repeat(4000)));
    const compactor = recording(null);
    runHook({ messages: big, contextTokens: 0 }, compactor, count, SETTINGS);
    expect(compactor.targets.length).toBe(1);
  });

  it('hands down the raw target when the reported figure is what the messages count', () => {
    const messages = [
      ...Array.from({ length: 9 }, () => message('user', 'x'.repeat(400))),
      message('assistant', 'y'.repeat(400)),
    ];
    expect(hookTargetTokens(messages, count(messages), count, SETTINGS)).toEqual({ target: 400, overhead: 0 });
  });

  it('takes the provider overhead off the target, down to 0', () => {
    const messages = twoSteps();
    // 845 estimated, 113 counted: 732 of overhead, more than the 400 the hook aims at.
    expect(count(messages)).toBe(113);
    expect(hookTargetTokens(messages, 800, count, SETTINGS)).toEqual({ target: 0, overhead: 732 });
  });
});

describe('the reference CompactionHook records context_tokens after a compaction as Haystack 3.4 does', () => {
  it('accounts for the compacted conversation through its newest assistant message, plus the overhead', () => {
    const messages = twoSteps();
    const compacted = [messages[0]!, messages[1]!, messages[4]!, messages[5]!];
    const after = runHook({ messages, contextTokens: 800 }, recording(compacted), count, SETTINGS);
    expect(after.compacted).toBe(true);
    expect(after.messages).toEqual(compacted);
    expect(after.contextTokens).toBe(count(compacted.slice(0, 3)) + 732);
    expect(after.contextTokens).toBeLessThan(800 + 45);
  });

  it('accounts for the whole compacted conversation when no assistant message is left (#12580)', () => {
    const messages = twoSteps();
    const compacted = [message('system', 'rules'), message('user', 'summary of the work so far')];
    const after = runHook({ messages, contextTokens: 800 }, recording(compacted), count, SETTINGS);
    // Before #12594 an empty prefix was counted: 0 + 732.
    expect(accountedContextTokens(compacted, 732, count)).toBe(count(compacted) + 732);
    expect(after.contextTokens).toBe(count(compacted) + 732);
  });

  it('lets a second hook right after see the compacted conversation once, not twice (#12580)', () => {
    const compacted = [message('system', 'rules'), message('user', 'summary of the work so far')];
    const first = runHook({ messages: twoSteps(), contextTokens: 800 }, recording(compacted), count, SETTINGS);
    const second = recording(null);
    runHook(first, second, count, SETTINGS);
    // It sees count(compacted) + 732, over the trigger, so it runs with the same overhead and the same target.
    expect(estimatedContextTokens(first.messages, first.contextTokens, count)).toBe(count(compacted) + 732);
    expect(second.targets).toEqual([0]);
  });

  it('keeps the no-usage figure 0 after a compaction', () => {
    const compacted = [message('assistant', 'kept')];
    const after = runHook(
      { messages: [message('user', 'x'.repeat(4000))], contextTokens: 0 },
      recording(compacted),
      count,
      SETTINGS,
    );
    expect(after).toEqual({ messages: compacted, contextTokens: 0, compacted: true });
  });

  it('leaves the conversation and the figure alone when the compactor declines', () => {
    const messages = twoSteps();
    const after = runHook({ messages, contextTokens: 800 }, recording(null), count, SETTINGS);
    expect(after).toEqual({ messages, contextTokens: 800, compacted: false });
  });
});
