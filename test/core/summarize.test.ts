/**
 * Summarization: Haystack's own `SummarizationCompactor` tests ported case by case (the same conversations, the same
 * counter rate, the same assertions), on the pure rounds of src/core/summarize.ts with a fake model.
 *
 * Source: deepset-ai/haystack test/hooks/compaction/test_summarization.py, whose `FakeCounter(chars_per_token=1)` is
 * `len(rendered) // 1`. Cases about Haystack's serialization, its Agent and its async generator API have no
 * counterpart here (noted where they stand).
 */
import { describe, expect, it } from '@jest/globals';
import { renderMessage, textContent } from '../../src/core/render.js';
import {
  nextSummary,
  renderForSummary,
  summarizeRounds,
  summaryRequest,
  SUMMARIZATION,
  type SummaryAnswer,
  type SummarizeOptions,
  type SummaryRequest,
} from '../../src/core/summarize.js';
import type { Content, Message } from '../../src/core/types.js';
import { createApproxCounter } from '../../src/tokens/approx.js';
import { deepFreeze } from '../helpers/fake-counter.js';

const COUNTER = createApproxCounter({ charsPerToken: 1, tokensPerImage: 0, tokensPerFile: 0 });
const count = (messages: readonly Message[]): number =>
  messages.length === 0 ? 0 : COUNTER.measure(messages.map((m) => ({ text: renderText(m), images: 0, files: 0 })));
const renderText = (m: Message): string => renderMessage(m).text;

function content(parts: Partial<Content>): Content {
  return { texts: [], toolCalls: [], results: [], images: 0, files: [], ...parts };
}
const system = (text: string): Message => ({ role: 'system', content: textContent(text) });
const user = (text: string): Message => ({ role: 'user', content: textContent(text) });
const assistant = (text: string): Message => ({ role: 'assistant', content: textContent(text) });
/** helpers.py `tool_call(*ids, name=, arguments=)`. */
const toolCall = (id: string, name = 'search', args = '{}'): Message => ({
  role: 'assistant',
  content: content({ toolCalls: [{ name, arguments: args, id }] }),
});
/** helpers.py `tool_result(result, call_id=, name=)`. */
const toolResult = (text: string, id = 'c1', name = 'search'): Message => ({
  role: 'tool',
  content: content({ results: [{ name, text, error: false, images: 0, files: 0, id }] }),
});
/** The test's `summary(text, summarized_messages)`: a summary with the compactor's marker. */
const summary = (text: string): Message => ({
  role: 'user',
  compaction: SUMMARIZATION,
  content: textContent(`<conversation_summary>\n${text}\n</conversation_summary>`),
});
const repeat = (text: string, n: number): string => text.repeat(n);
/** helpers.py `fresh_conversation_with_two_steps`. */
const freshTwoSteps = (): Message[] => [
  system('rules'),
  user('start'),
  toolCall('c1'),
  toolResult(repeat('first result ', 12), 'c1'),
  toolCall('c2'),
  toolResult(repeat('second result ', 12), 'c2'),
];

const plan = (messages: Message[], target: number, summaryTokens = 1, minKeepSteps = 1): number[] | null =>
  nextSummary(deepFreeze(messages), COUNTER, { target, summaryTokens, minKeepSteps })?.indices.slice() ?? null;

/** The test's `summarizer(*responses)`: answers in order, recording each prompt as `system\nuser`; an Error fails that call. */
function summarizer(...responses: Array<string | Error>): {
  answer: (r: SummaryRequest) => SummaryAnswer;
  prompts: string[];
} {
  const queued = [...responses];
  const prompts: string[] = [];
  return {
    prompts,
    answer(request) {
      prompts.push(`${request.system}\n${request.user}`);
      const next = queued.shift();
      if (next === undefined) throw new Error('called more often than there are responses');
      return next instanceof Error ? { error: next.message } : { text: next };
    },
  };
}
const always = (text: string) => (): SummaryAnswer => ({ text });

async function compact(
  messages: Message[],
  target: number,
  answer: (r: SummaryRequest, k: number) => SummaryAnswer,
  options: Partial<SummarizeOptions> = {},
): Promise<Message[] | null> {
  const result = await summarizeRounds(
    deepFreeze(messages),
    COUNTER,
    { target, instruction: 'Summarize.', summaryTokens: 1024, ...options },
    answer,
  );
  return result.changed ? [...result.messages] : null;
}
const texts = (messages: readonly Message[]): string[] => messages.map(renderText);
const summariesOf = (messages: readonly Message[]): string[] =>
  messages.filter((m) => m.compaction !== undefined).map(renderText);

describe('next summary selection (TestNextSummarySelection)', () => {
  it('selects only the one historical turn that makes room', () => {
    const messages = [
      system('rules'),
      user(repeat('oldest question ', 30)),
      assistant(repeat('oldest answer ', 30)),
      user('recent question'),
      assistant('recent answer'),
      user('current task'),
      assistant('current step'),
    ];
    const target = count([messages[0] as Message, ...messages.slice(3)]) + 100;
    expect(plan(messages, target, 100)).toEqual([1, 2]);
  });

  it('selects historical turns before current-task steps', () => {
    const messages = [
      system('rules'),
      user(repeat('old question ', 40)),
      assistant(repeat('old answer ', 40)),
      user('current task'),
      toolCall('first'),
      toolResult(repeat('first result ', 12), 'first'),
      toolCall('newest'),
      toolResult(repeat('newest result ', 12), 'newest'),
    ];
    expect(plan(messages, 1)).toEqual([1, 2]);
  });

  it('includes a summary inside a historical turn with the turn', () => {
    const messages = [
      system('rules'),
      user('past task'),
      summary('early steps'),
      assistant('late step'),
      user('current task'),
    ];
    expect(plan(messages, 1)).toEqual([1, 2, 3]);
  });

  it('combines at least two historical summaries', () => {
    const messages = [
      system('rules'),
      summary(repeat('first history ', 20)),
      summary(repeat('second history ', 20)),
      summary(repeat('third history ', 20)),
      user('current task'),
    ];
    const target = count([messages[0] as Message, ...messages.slice(2)]) + 1;
    expect(plan(messages, target)).toEqual([1, 2]);
  });

  it('selects current steps before current-task summaries', () => {
    const messages = [
      system('rules'),
      user('current task'),
      summary(repeat('first step summary ', 20)),
      summary(repeat('second step summary ', 20)),
      toolCall('first'),
      toolResult(repeat('first result ', 12), 'first'),
      toolCall('newest'),
      toolResult(repeat('newest result ', 12), 'newest'),
    ];
    expect(plan(messages, 1)).toEqual([4, 5]);
  });

  it('combines only the two current-task summaries the target needs', () => {
    const messages = [
      system('rules'),
      user('current task'),
      summary(repeat('first step summary ', 20)),
      summary(repeat('second step summary ', 20)),
      summary(repeat('third step summary ', 20)),
      toolCall('new'),
      toolResult('new result', 'new'),
    ];
    const target = count([...messages.slice(0, 2), ...messages.slice(4)]) + 1;
    expect(plan(messages, target, 1, 1)).toEqual([2, 3]);
  });

  it.each([
    [0, [2, 3, 4, 5]],
    [1, [2, 3]],
    [2, null],
    [20, null],
  ])('min_keep_steps %i limits the eligible current steps', (minKeepSteps, expected) => {
    expect(plan(freshTwoSteps(), 1, 1, minKeepSteps)).toEqual(expected);
  });

  it('returns null at the compaction floor', () => {
    const messages = [
      system('rules'),
      summary(repeat('all history ', 20)),
      user('current task'),
      summary(repeat('all earlier steps ', 20)),
      toolCall('new'),
      toolResult(repeat('new result ', 20), 'new'),
    ];
    expect(plan(messages, 1, 1, 1)).toBeNull();
  });
});

describe('compaction (TestCompaction)', () => {
  it('does not mutate the input', async () => {
    // deepFreeze inside `compact` makes any write throw.
    expect(await compact(freshTwoSteps(), 1, always('summary'), { summaryTokens: 1 })).not.toBeNull();
  });

  it('returns null when the conversation fits, without a call', async () => {
    const { answer, prompts } = summarizer();
    expect(await compact([system('rules'), user('task')], 10_000, answer)).toBeNull();
    expect(prompts).toEqual([]);
  });

  /** The test's `compact_after_each_addition`: grow and compact as an agent loop does, keeping each state. */
  async function afterEachAddition(
    initial: Message[],
    additions: Message[][],
    target: number,
    options: Partial<SummarizeOptions>,
  ): Promise<Message[][]> {
    let messages = initial;
    const snapshots: Message[][] = [];
    for (const addition of additions) {
      messages = [...messages, ...addition];
      messages = (await compact(messages, target, always('summary'), options)) ?? messages;
      snapshots.push(messages);
    }
    return snapshots;
  }

  it('lets historical summaries accumulate while raw turns remain', async () => {
    const additions = [0, 1, 2, 3].map((i) => [
      user(repeat(`question ${i} `, 30)),
      assistant(repeat(`answer ${i} `, 30)),
    ]);
    const snapshots = await afterEachAddition([system('rules')], additions, 1_100, { summaryTokens: 10 });
    const expected = renderText(summary('summary'));
    expect(snapshots.map(summariesOf)).toEqual([[], [expected], [expected, expected], [expected, expected, expected]]);
  });

  it('lets current-task summaries accumulate while raw steps remain', async () => {
    const additions = [0, 1, 2, 3].map((i) => [toolCall(`c${i}`), toolResult(repeat(`result ${i} `, 30), `c${i}`)]);
    const snapshots = await afterEachAddition([system('rules'), user('current task')], additions, 650, {
      summaryTokens: 10,
      minKeepSteps: 1,
    });
    const expected = renderText(summary('summary'));
    expect(snapshots.map(summariesOf)).toEqual([[], [expected], [expected, expected], [expected, expected, expected]]);
  });

  it('compacts a completed mixed turn without touching the new task', async () => {
    const messages = [
      system('rules'),
      summary('older history'),
      user('previous task'),
      summary('early previous-task work'),
      toolCall('previous'),
      toolResult('previous result', 'previous'),
      assistant('previous final answer'),
      user('current task'),
      toolCall('current'),
      toolResult('current result', 'current'),
    ];
    const { answer, prompts } = summarizer('completed previous task', 'combined history');
    const result = await summarizeRounds(
      deepFreeze(messages),
      COUNTER,
      { target: 1, summaryTokens: 5, instruction: 'Summarize this conversation.' },
      answer,
    );
    expect(result.changed).toBe(true);
    expect(prompts[0]).toBe(`Summarize this conversation.
<conversation_to_summarize>
[user] previous task
[conversation_summary]
early previous-task work
[assistant -> tool_call id=previous] search({})
[tool:search id=previous] previous result
[assistant] previous final answer
</conversation_to_summarize>`);
    expect(prompts[1]).toBe(`Summarize this conversation.
<conversation_to_summarize>
[conversation_summary]
older history
[conversation_summary]
completed previous task
</conversation_to_summarize>`);
    expect(texts(result.messages)).toEqual(
      texts([messages[0] as Message, summary('combined history'), ...messages.slice(7)]),
    );
    // The second round's summary stands for everything the first replaced and the older history (Haystack records 2).
    expect(result.rounds.map((r) => r.summarized)).toEqual([5, 2]);
    expect(result.rounds[1]?.replaced).toEqual([1, 2, 3, 4, 5, 6]);
    expect(result.origin).toEqual([{ input: 0 }, { summary: 1 }, { input: 7 }, { input: 8 }, { input: 9 }]);
  });
});

describe('the summary prompt (TestSummaryPrompt)', () => {
  it('builds a complete prompt with tool call ids and attachment placeholders', () => {
    const messages: Message[] = [
      summary('earlier work'),
      {
        role: 'user',
        content: content({
          texts: ['review these attachments'],
          files: ['q3.pdf'],
          attachments: ['<file: q3.pdf, application/pdf>'],
        }),
      },
      toolCall('c1', 'browse', '{"url": "https://example.com"}'),
      {
        role: 'tool',
        content: content({
          results: [
            {
              name: 'browse',
              text: 'captured <image>',
              described: 'captured <image: image/png, file_path=/tmp/shot.png>',
              error: false,
              images: 1,
              files: 0,
              id: 'c1',
            },
          ],
        }),
      },
    ];
    expect(summaryRequest(messages, [0, 1, 2, 3], 'Only list file paths.')).toEqual({
      system: 'Only list file paths.',
      user: `<conversation_to_summarize>
[conversation_summary]
earlier work
[user] review these attachments
[user] <file: q3.pdf, application/pdf>
[assistant -> tool_call id=c1] browse({"url": "https://example.com"})
[tool:browse id=c1] captured <image: image/png, file_path=/tmp/shot.png>
</conversation_to_summarize>`,
    });
  });

  it('describes attachments a format gave no details of as of unknown type', () => {
    expect(renderForSummary({ role: 'user', content: content({ images: 1, files: [null, 'a.pdf'] }) })).toBe(
      '[user] <image: unknown type>\n[user] <file: unnamed, unknown type>\n[user] <file: a.pdf, unknown type>',
    );
  });
});

describe('failure handling (TestFailureHandling)', () => {
  it('keeps partial progress when a summary fails', async () => {
    const messages = [
      system('rules'),
      user(repeat('old question ', 30)),
      assistant(repeat('old answer ', 30)),
      user('current task'),
      assistant(repeat('old step ', 30)),
      assistant('new step'),
    ];
    const { answer, prompts } = summarizer('history', new Error('provider unavailable'));
    const result = await summarizeRounds(
      deepFreeze(messages),
      COUNTER,
      { target: 1, summaryTokens: 1, instruction: 'x' },
      answer,
    );
    expect(result.changed).toBe(true);
    expect(prompts).toHaveLength(2);
    expect(summariesOf(result.messages)).toEqual([renderText(summary('history'))]);
    expect(texts(result.messages.slice(-2))).toEqual(texts(messages.slice(-2)));
    expect(result.failure).toMatchObject({ round: 1, kind: 'call', reason: 'provider unavailable' });
  });

  it('refuses a summary that does not shrink the conversation', async () => {
    const messages = [system('rules'), user('old'), assistant('answer'), user('current')];
    const result = await summarizeRounds(
      deepFreeze(messages),
      COUNTER,
      { target: 1, summaryTokens: 1, instruction: 'x' },
      always(repeat('much longer summary ', 100)),
    );
    expect(result.changed).toBe(false);
    expect(result.failure?.kind).toBe('not-smaller');
    expect(result.failure?.reason).toMatch(/did not make the conversation smaller/);
  });

  it.each([[''], ['   \n\t']])('refuses a reply with no usable text (%j)', async (reply) => {
    const result = await summarizeRounds(
      deepFreeze(freshTwoSteps()),
      COUNTER,
      { target: 1, instruction: 'x' },
      always(reply),
    );
    expect(result.failure?.kind).toBe('empty');
    expect(result.changed).toBe(false);
  });
});

describe('retention (--min-retention)', () => {
  const named = (): Message[] => [
    system('rules'),
    user(
      `Why does src/auth/login.ts throw TypeError? See https://example.com/bug and commit 3f63cd0. ${repeat('old question ', 30)}`,
    ),
    assistant(repeat('old answer ', 30)),
    user('current task'),
  ];

  it("records how many of the replaced messages' identifiers each summary keeps", async () => {
    const result = await summarizeRounds(
      deepFreeze(named()),
      COUNTER,
      { target: 1, summaryTokens: 1, instruction: 'x' },
      always('The TypeError is in src/auth/login.ts.'),
    );
    expect(result.rounds).toHaveLength(1);
    expect(result.rounds[0]?.identifiers).toBe(4);
    expect(result.rounds[0]?.retention).toMatchObject({
      total: 4,
      kept: 2,
      fraction: 0.5,
      lost: [
        { kind: 'url', value: 'https://example.com/bug' },
        { kind: 'hash', value: '3f63cd0' },
      ],
    });
  });

  it('passes a summary that keeps the share asked, and fails one that keeps less, as a failed call', async () => {
    const reply = always('The TypeError is in src/auth/login.ts.');
    expect(
      (
        await summarizeRounds(
          deepFreeze(named()),
          COUNTER,
          { target: 1, summaryTokens: 1, instruction: 'x', minRetention: 0.5 },
          reply,
        )
      ).changed,
    ).toBe(true);
    const failed = await summarizeRounds(
      deepFreeze(named()),
      COUNTER,
      { target: 1, summaryTokens: 1, instruction: 'x', minRetention: 0.6 },
      reply,
    );
    expect(failed.changed).toBe(false);
    expect(failed.stopped).toBe('failed');
    expect(failed.failure).toMatchObject({
      round: 0,
      kind: 'retention',
      reason:
        'the summary keeps 2 of 4 identifiers (50%), under --min-retention 0.6; lost https://example.com/bug, 3f63cd0',
    });
  });

  it('keeps the rounds before the one that kept too little', async () => {
    const messages = [...named(), assistant(`ran git show 3f63cd0 ${repeat('old step ', 30)}`), assistant('new step')];
    let k = 0;
    const answer = (): SummaryAnswer => ({
      text: k++ === 0 ? 'TypeError in src/auth/login.ts, https://example.com/bug, 3f63cd0' : 'a step',
    });
    const result = await summarizeRounds(
      deepFreeze(messages),
      COUNTER,
      { target: 1, summaryTokens: 1, instruction: 'x', minRetention: 1 },
      answer,
    );
    expect(result.rounds.map((r) => r.retention?.fraction)).toEqual([1]);
    expect(result.failure).toMatchObject({ round: 1, kind: 'retention' });
    expect(summariesOf(result.messages)).toHaveLength(1);
  });

  it('never holds a simulated reply to it, nor measures its retention', async () => {
    const result = await summarizeRounds(
      deepFreeze(named()),
      COUNTER,
      { target: 1, summaryTokens: 1, instruction: 'x', minRetention: 1 },
      () => ({ text: 'summary', simulated: true }),
    );
    expect(result.failure).toBeNull();
    expect(result.rounds[0]).toMatchObject({ identifiers: 4, retention: null });
  });
});

describe('summary text', () => {
  it('strips the reply as Python does and wraps it', async () => {
    const result = await summarizeRounds(
      deepFreeze(freshTwoSteps()),
      COUNTER,
      { target: 1, summaryTokens: 1, instruction: 'x' },
      always('\n  the gist \u3000\n'),
    );
    expect(result.rounds[0]?.text).toBe('<conversation_summary>\nthe gist\n</conversation_summary>');
  });
});

// TestConfiguration (invalid settings) is checked where settings are read: the CLI's usage errors and the
// library's option checks. TestSummarizationCompactorInAgent and TestSummarizationCompactorAsync exercise
// Haystack's Agent and async generator API, which the pipeline's rounds stand for (test/cli/summarize.test.ts).
