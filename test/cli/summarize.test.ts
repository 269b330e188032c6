/**
 * `swc compact --strategy summarize` end to end, in process: random conversations written as OpenAI and Haystack
 * files, through the real CLI with a fake model answering call k with a fixed text, against the independent model of
 * Haystack's SummarizationCompactor in test/reference/summarization.ts: the same prompts (instruction and replaced
 * texts), the same number of calls, the same output. Dry runs and checks never call; failures keep the last good
 * result, or with --strict fail the file.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { parseJson } from '../../src/core/json/value.js';
import { renderArguments } from '../../src/core/json/python.js';
import { DEFAULT_SUMMARY_INSTRUCTION } from '../../src/core/summary-instruction.js';
import type { SummaryReply, SummaryRequest } from '../../src/core/summarize.js';
import { SummaryCallError } from '../../src/errors.js';
import { createCounter } from '../../src/tokens/index.js';
import { keptIndices, randomConversation, writeAs, type Conversation, type FormatName } from '../helpers/convert.js';
import { runSwc } from '../helpers/run-in-process.js';
import { compactMessages, createCompactor, swcPrepareStep } from '../../src/library/index.js';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { ROOT, tempDir } from '../helpers/cli.js';
import { compact as reference, type Count, type Out, type RMessage } from '../reference/summarization.js';
import { scaled } from '../helpers/scale.js';

const counter = await createCounter('approx');
const count: Count = (rendered) => counter.measure(rendered);

/** The conversation in the reference's terms, as both formats' files describe it. */
function toReference(conversation: Conversation): RMessage[] {
  const none = {
    texts: [] as string[],
    calls: [],
    results: [],
    attachments: [] as string[],
    images: 0,
    files: [] as string[],
  };
  return conversation.map((m): RMessage => {
    switch (m.role) {
      case 'system':
        return { ...none, role: 'system', texts: [m.text] };
      case 'user':
        return {
          ...none,
          role: 'user',
          ...(m.note ? { strategy: 'sliding_window' } : {}),
          texts: [...m.texts],
          images: m.images,
          files: [...m.files],
          attachments: [
            ...Array.from({ length: m.images }, () => '<image: image/png>'),
            ...m.files.map((f) => `<file: ${f}, application/pdf>`),
          ],
        };
      case 'assistant':
        return {
          ...none,
          role: 'assistant',
          texts: m.text === null ? [] : [m.text],
          calls: m.calls.map((c) => ({
            id: c.id,
            name: c.name,
            args: renderArguments(parseJson(JSON.stringify(c.args))),
          })),
        };
      case 'tool':
        return { ...none, role: 'tool', results: [{ id: m.callId, name: m.name, text: m.text, error: false }] };
    }
  });
}

/** A reply longer than anything it could replace: the summary does not make the conversation smaller. */
const TOO_LONG = 'a summary far longer than what it replaces '.repeat(400);

/**
 * A fake model: call k answers `summary k`; when `fail` says so, the call fails, or (`long`) answers `TOO_LONG`.
 * Records every request.
 */
function fakeModel(
  fail: (k: number) => boolean = () => false,
  long = false,
): { summarizer: (r: SummaryRequest) => Promise<SummaryReply>; requests: SummaryRequest[] } {
  const requests: SummaryRequest[] = [];
  return {
    requests,
    summarizer: async (request) => {
      const k = requests.length;
      requests.push(request);
      if (fail(k) && long) return { text: TOO_LONG };
      if (fail(k)) throw new SummaryCallError('HTTP 500 from the test model');
      return { text: `summary ${k}` };
    },
  };
}

/** The list of a written file. */
function itemsOf(format: FormatName, text: string): unknown[] {
  const doc = JSON.parse(text) as unknown;
  return format === 'openai' ? (doc as { messages: unknown[] }).messages : (doc as unknown[]);
}

/** A summary item's text and `summarized_messages` (Haystack), or null when the item is not a summary. */
function summaryOf(format: FormatName, item: unknown): { summary: string; summarized?: number } | null {
  const o = item as Record<string, unknown>;
  if (format === 'openai')
    return o.role === 'user' && typeof o.content === 'string' && o.content.startsWith('<conversation_summary>')
      ? { summary: o.content }
      : null;
  const meta = o.meta as { context_compaction?: { strategy?: string; summarized_messages?: number } } | undefined;
  if (meta?.context_compaction?.strategy !== 'summarization') return null;
  return {
    summary: (o.content as { text: string }[])[0]?.text ?? '',
    summarized: meta.context_compaction.summarized_messages as number,
  };
}

async function compactFile(
  format: FormatName,
  conversation: Conversation,
  args: string[],
  model: ReturnType<typeof fakeModel>,
): Promise<{ status: number; stderr: string; input: unknown[]; output: unknown[] | null }> {
  const dir = tempDir();
  const written = writeAs(format, conversation);
  writeFileSync(path.join(dir, written.name), written.text);
  const run = await runSwc(
    [
      'compact',
      written.name,
      '--tokenizer',
      'approx',
      '--strategy',
      'summarize',
      '--no-cache',
      '-o',
      'out.json',
      ...args,
    ],
    { cwd: dir, summarizer: model.summarizer },
  );
  const out = path.join(dir, 'out.json');
  return {
    status: run.status,
    stderr: run.stderr,
    input: itemsOf(format, written.text),
    output: existsSync(out) ? itemsOf(format, readFileSync(out, 'utf8')) : null,
  };
}

describe('summarize against the reference model of Haystack', () => {
  it.each<FormatName>(['openai', 'haystack'])(
    'decides, prompts and writes as Haystack does (%s files, random conversations)',
    async (format) => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1, max: 1_000_000 }),
          fc.double({ min: 0.05, max: 1.1, noNaN: true }),
          fc.integer({ min: 1, max: 80 }),
          fc.integer({ min: 0, max: 2 }),
          fc.integer({ min: -1, max: 3 }),
          async (seed, fraction, summaryTokens, minKeepSteps, failAt) => {
            const conversation = randomConversation(seed);
            const ref = toReference(conversation);
            const size = counter.measure(ref.map((m) => renderForCount(m)));
            const target = Math.max(1, Math.floor(size * fraction));
            const settings = { target, minKeepSteps, summaryTokens, instruction: DEFAULT_SUMMARY_INSTRUCTION };
            // A failing round either fails its call or answers a summary that does not shrink the conversation.
            const long = seed % 2 === 0;
            const expected = reference(ref, settings, count, (k) =>
              k === failAt ? (long ? TOO_LONG : null) : `summary ${k}`,
            );
            const model = fakeModel((k) => k === failAt, long);
            const run = await compactFile(
              format,
              conversation,
              [
                '-t',
                String(target),
                '--summary-tokens',
                String(summaryTokens),
                '--min-keep-steps',
                String(minKeepSteps),
              ],
              model,
            );
            // A call that threw (not a reply the decision refused) makes the run exit 3.
            expect(run.status).toBe(failAt >= 0 && !long && model.requests.length > failAt ? 3 : 0);
            // The same calls, with the same instruction and the same replaced texts.
            expect(model.requests).toEqual(expected.prompts);
            const output = run.output as unknown[];
            const got: Out[] = keptIndices(run.input, output).map((at, k) => {
              if (at !== null) return { input: at };
              const s = summaryOf(format, output[k]);
              expect(s).not.toBeNull();
              return s as Out;
            });
            const want = (expected.out ?? run.input.map((_, input) => ({ input }))).map((o) =>
              'summary' in o && format === 'openai' ? { summary: o.summary } : o,
            );
            expect(got).toEqual(want);
            if (format !== 'openai') return;
            // The library decides the same, given the same messages as an array.
            const libraryModel = fakeModel((k) => k === failAt, long);
            const library = await compactMessages(run.input, {
              format: 'openai',
              target,
              minKeepSteps,
              summaryTokens,
              tokenizer: 'approx',
              summarize: async (request) => (await libraryModel.summarizer(request)).text,
            });
            expect(libraryModel.requests).toEqual(expected.prompts);
            const fromLibrary: Out[] = keptIndices(run.input, library.messages).map((at, k) =>
              at !== null ? { input: at } : (summaryOf('openai', library.messages[k]) as Out),
            );
            expect(fromLibrary).toEqual(want);
          },
        ),
        { numRuns: scaled(40) },
      );
    },
  );
});

/** The counting render of a reference message, for sizing targets. */
function renderForCount(m: RMessage): { text: string; images: number; files: number } {
  if (m.results.length > 0)
    return { text: m.results.map((r) => `[tool:${r.name}] ${r.text}`).join('\n'), images: 0, files: 0 };
  const lines: string[] = [];
  if (m.texts.length > 0) lines.push(`[${m.role}] ${m.texts.join('\n')}`);
  for (const c of m.calls) lines.push(`[${m.role} -> tool_call] ${c.name}(${c.args})`);
  for (let i = 0; i < m.images; i++) lines.push(`[${m.role}] <image>`);
  for (const f of m.files) lines.push(`[${m.role}] <file: ${f}>`);
  return { text: lines.join('\n') || `[${m.role}] <no content>`, images: m.images, files: m.files.length };
}

/** A conversation sure to need two rounds: long history, then long steps. */
const LONG: Conversation = [
  { role: 'system', text: 'rules' },
  { role: 'user', texts: ['old question '.repeat(40)], images: 0, files: [] },
  { role: 'assistant', text: 'old answer '.repeat(40), reasoning: null, calls: [] },
  { role: 'user', texts: ['current task'], images: 0, files: [] },
  { role: 'assistant', text: null, reasoning: null, calls: [{ id: 'c1', name: 'search', args: {} }] },
  { role: 'tool', callId: 'c1', name: 'search', text: 'first result '.repeat(40) },
  { role: 'assistant', text: null, reasoning: null, calls: [{ id: 'c2', name: 'search', args: {} }] },
  { role: 'tool', callId: 'c2', name: 'search', text: 'second result '.repeat(40) },
];

/** The system prompt and twelve turns whose summary a window at a tight target drops (with no note, nothing inserted stays). */
const TWELVE_TURNS = [
  { role: 'system', content: 'You are an agent.' },
  ...Array.from({ length: 12 }, (_, k) => [
    { role: 'user', content: `Question ${k}: why does it fail ${'x '.repeat(20)}` },
    { role: 'assistant', content: `Answer ${k}: ${'the cache was stale. '.repeat(6)}` },
  ]).flat(),
];

describe('summarize on the command line', () => {
  it('never calls the model in a dry run or a check, and previews the calls and prompt tokens', async () => {
    for (const flag of ['--dry-run', '--check']) {
      const model = fakeModel();
      const dir = tempDir();
      const written = writeAs('openai', LONG);
      writeFileSync(path.join(dir, written.name), written.text);
      const run = await runSwc(
        [
          'compact',
          written.name,
          '-t',
          '60',
          '--tokenizer',
          'approx',
          '--strategy',
          'summarize',
          '--summary-tokens',
          '10',
          flag,
        ],
        { cwd: dir, summarizer: model.summarizer },
      );
      expect(model.requests).toEqual([]);
      expect(run.stderr).toMatch(
        /summarize: would make 2 model calls sending [\d,]+ prompt tokens \(each summary assumed 10 tokens; nothing was sent\)/,
      );
    }
  });

  it('lists each round of a dry run in the JSON plan, with the items it would replace and its prompt tokens, as the schema says', async () => {
    const model = fakeModel();
    const dir = tempDir();
    writeFileSync(path.join(dir, 'a.json'), writeAs('openai', LONG).text);
    const run = await runSwc(
      [
        'compact',
        'a.json',
        '-t',
        '60',
        '--tokenizer',
        'approx',
        '--strategy',
        'summarize',
        '--summary-tokens',
        '10',
        '--dry-run',
        '--json',
      ],
      { cwd: dir, summarizer: model.summarizer },
    );
    expect(model.requests).toEqual([]);
    const plan = JSON.parse(run.stdout) as {
      summaries: {
        round: number;
        tier: string;
        items: number[];
        summarizedMessages: number;
        promptTokens: number;
        kept: boolean;
      }[];
    };
    expect(
      plan.summaries.map(({ round, tier, items, summarizedMessages, kept }) => ({
        round,
        tier,
        items,
        summarizedMessages,
        kept,
      })),
    ).toEqual([
      { round: 0, tier: 'historical_turns', items: [1, 2], summarizedMessages: 2, kept: true },
      { round: 1, tier: 'current_task_steps', items: [4, 5], summarizedMessages: 2, kept: true },
    ]);
    expect(plan.summaries.every((s) => s.promptTokens > 0)).toBe(true);
    const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true });
    ajv.addSchema(JSON.parse(readFileSync(path.join(ROOT, 'docs/schema/plan.schema.json'), 'utf8')) as object);
    const validate = ajv.getSchema('plan.schema.json') as ValidateFunction;
    expect(validate(plan) ? [] : validate.errors).toEqual([]);
  });

  it('keeps the last successful round when a later call fails, with a one-line warning, and exits 3', async () => {
    const model = fakeModel((k) => k === 1);
    const run = await compactFile('haystack', LONG, ['-t', '60', '--summary-tokens', '10'], model);
    expect(run.status).toBe(3);
    expect(model.requests).toHaveLength(2);
    expect(run.stderr).toMatch(
      /warning: .*summarize round 2 failed: HTTP 500 from the test model; kept the result of 1 round\n/,
    );
    const summaries = (run.output as unknown[]).map((i) => summaryOf('haystack', i)).filter((s) => s !== null);
    expect(summaries).toEqual([
      { summary: '<conversation_summary>\nsummary 0\n</conversation_summary>', summarized: 2 },
    ]);
    expect(run.stderr).toMatch(/summarize: 2 model calls \(1 failed\)/);
  });

  it('with --strict fails the file and writes nothing when a round fails', async () => {
    const model = fakeModel((k) => k === 1);
    const run = await compactFile('openai', LONG, ['-t', '60', '--summary-tokens', '10', '--strict'], model);
    expect(run.status).toBe(2);
    expect(run.output).toBeNull();
    expect(run.stderr).toMatch(/summarize round 2 failed: HTTP 500 from the test model \(--strict: nothing written\)/);
  });

  it('stops at a reply that does not shrink the conversation', async () => {
    const model = {
      requests: [] as SummaryRequest[],
      summarizer: async (r: SummaryRequest): Promise<SummaryReply> => (
        model.requests.push(r),
        { text: 'far too long '.repeat(500) }
      ),
    };
    const run = await compactFile('openai', LONG, ['-t', '60', '--summary-tokens', '10'], model);
    expect(run.status).toBe(0);
    expect(model.requests).toHaveLength(1);
    expect(run.stderr).toMatch(/the summary did not make the conversation smaller/);
    expect(run.output).toEqual(run.input);
  });

  it("recognises an earlier run's summary in an OpenAI file by its wrapper and folds it into the next prompt", async () => {
    const model = fakeModel();
    const first = await compactFile('openai', LONG, ['-t', '60', '--summary-tokens', '10'], model);
    expect(first.status).toBe(0);
    const dir = tempDir();
    const grown = [
      ...(first.output as unknown[]),
      { role: 'user', content: 'next task' },
      { role: 'assistant', content: 'done '.repeat(60) },
    ];
    writeFileSync(path.join(dir, 'again.json'), JSON.stringify({ messages: grown }));
    const second = fakeModel();
    const run = await runSwc(
      [
        'compact',
        'again.json',
        '-t',
        '40',
        '--tokenizer',
        'approx',
        '--strategy',
        'summarize',
        '--summary-tokens',
        '5',
        '--no-cache',
        '-o',
        'out.json',
      ],
      { cwd: dir, summarizer: second.summarizer },
    );
    expect(run.status).toBe(0);
    // The earlier task summary is now inside a historical turn, and goes with it, folded as Haystack folds it.
    expect(second.requests[0]?.user).toMatch(
      /^<conversation_to_summarize>\n\[user\] current task\n\[conversation_summary\]\nsummary 1\n\[assistant -> tool_call id=c2\]/,
    );
  });

  it('runs --summarize-command through the shell: the prompt on stdin, the instruction in SWC_SUMMARY_INSTRUCTION', async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'a.json'), writeAs('openai', LONG).text);
    writeFileSync(path.join(dir, 'rules.md'), 'Keep paths.');
    // The summary names the instruction and the first line of the prompt it was given.
    const command = 'printf "%s / %s" "$SWC_SUMMARY_INSTRUCTION" "$(head -n 1)"';
    const run = await runSwc(
      [
        'compact',
        'a.json',
        '-o',
        'out.json',
        '-t',
        '60',
        '--tokenizer',
        'approx',
        '--strategy',
        'summarize',
        '--summary-tokens',
        '10',
        '--summary-instruction',
        'rules.md',
        '--summarize-command',
        command,
        '--no-cache',
      ],
      { cwd: dir },
    );
    expect(run.status).toBe(0);
    const out = JSON.parse(readFileSync(path.join(dir, 'out.json'), 'utf8')) as {
      messages: { content: string | null }[];
    };
    expect(out.messages[1]?.content).toBe(
      '<conversation_summary>\nKeep paths. / <conversation_to_summarize>\n</conversation_summary>',
    );
  });

  it('exits 3 when a call fails, whatever the model source, and still writes the last good result', async () => {
    const dir = tempDir();
    const text = writeAs('openai', LONG).text;
    writeFileSync(path.join(dir, 'a.json'), text);
    const base = [
      'compact',
      'a.json',
      '-o',
      'out.json',
      '-t',
      '60',
      '--tokenizer',
      'approx',
      '--strategy',
      'summarize',
      '--summary-tokens',
      '10',
      '--no-cache',
    ];
    const command = await runSwc([...base, '--summarize-command', 'exit 3'], { cwd: dir });
    expect({ status: command.status, written: readFileSync(path.join(dir, 'out.json'), 'utf8') === text }).toEqual({
      status: 3,
      written: true,
    });
    expect(command.stderr).toMatch(/summarize: 1 model call \(1 failed\)/);
    // An endpoint where nothing listens: a port just closed.
    const { createServer } = await import('node:net');
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const dead = await runSwc([...base, '--base-url', `http://127.0.0.1:${port}/v1`, '--model', 'm'], {
      cwd: dir,
      env: { OPENAI_API_KEY: 'k' },
    });
    expect({ status: dead.status, failed: /1 failed/.test(dead.stderr) }).toEqual({ status: 3, failed: true });
    // A batch says it too; a dry run calls nothing, so nothing can fail.
    writeFileSync(path.join(dir, 'b.json'), text);
    const batch = await runSwc(
      [
        'compact',
        'a.json',
        'b.json',
        '--out-dir',
        'out',
        '-t',
        '60',
        '--tokenizer',
        'approx',
        '--strategy',
        'summarize',
        '--summary-tokens',
        '10',
        '--no-cache',
        '--summarize-command',
        'exit 3',
      ],
      { cwd: dir },
    );
    expect(batch.status).toBe(3);
    const dry = await runSwc(
      [...base.filter((a) => a !== '-o' && a !== 'out.json'), '--dry-run', '--summarize-command', 'exit 3'],
      { cwd: dir },
    );
    expect(dry.status).toBe(0);
  });

  it('counts the summaries among the messages after: the plan, the report and the file agree', async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'a.jsonl'), readFileSync(path.join(ROOT, 'fixtures/sample.jsonl')));
    for (const [strategy, target] of [
      ['summarize', '2000'],
      ['summarize,window', '1200'],
      ['prune,summarize', '1200'],
      ['summarize,window', '2000'],
    ] as const) {
      const run = await runSwc(
        [
          'compact',
          'a.jsonl',
          '-o',
          'out.jsonl',
          '-t',
          target,
          '--strategy',
          strategy,
          '--summarize-command',
          'echo "A short summary."',
          '--no-cache',
          '--json',
        ],
        { cwd: dir },
      );
      expect({ strategy, status: run.status }).toEqual({ strategy, status: 0 });
      const lines = readFileSync(path.join(dir, 'out.jsonl'), 'utf8').trimEnd().split('\n').length;
      const plan = JSON.parse(run.stdout) as { messagesAfter: number; note: { index: number; text: string } | null };
      // A batch's report: its record of each file says the same.
      writeFileSync(path.join(dir, 'b.jsonl'), '{"role": "user", "content": "hi"}\n');
      const batch = await runSwc(
        [
          'compact',
          'a.jsonl',
          'b.jsonl',
          '--out-dir',
          'o',
          '--force',
          '-t',
          target,
          '--strategy',
          strategy,
          '--summarize-command',
          'echo "A short summary."',
          '--report',
          'r.json',
        ],
        { cwd: dir },
      );
      expect({ strategy, status: batch.status }).toEqual({ strategy, status: 0 });
      const report = JSON.parse(readFileSync(path.join(dir, 'r.json'), 'utf8')) as {
        files: { messagesAfter: number }[];
      };
      expect({ strategy, target, plan: plan.messagesAfter, report: report.files[0]?.messagesAfter }).toEqual({
        strategy,
        target,
        plan: lines,
        report: lines,
      });
      if (plan.note !== null)
        expect(
          JSON.parse(readFileSync(path.join(dir, 'out.jsonl'), 'utf8').split('\n')[plan.note.index] as string),
        ).toEqual({ role: 'user', content: plan.note.text });
    }
  });

  it('writes the input messages the window kept when it drops the summary too, and counts them', async () => {
    // With no note, a window after summarize that keeps neither the summary nor a note keeps only input messages,
    // chosen on the summarized list: they must be mapped back to the input's (they once were written by the
    // summarized list's positions, the oldest turns instead of the newest).
    const dir = tempDir();
    const lines = TWELVE_TURNS.map((m) => JSON.stringify(m));
    writeFileSync(path.join(dir, 'a.jsonl'), `${lines.join('\n')}\n`);
    const run = await runSwc(
      [
        'compact',
        'a.jsonl',
        '-o',
        'out.jsonl',
        '-t',
        '20',
        '--tokenizer',
        'approx',
        '--strategy',
        'summarize,window',
        '--no-note',
        '--summarize-command',
        'echo "The agent found a stale cache."',
        '--no-cache',
        '--json',
      ],
      { cwd: dir },
    );
    expect(run.status).toBe(0);
    expect(readFileSync(path.join(dir, 'out.jsonl'), 'utf8')).toBe(`${[lines[0], lines[23], lines[24]].join('\n')}\n`);
    const plan = JSON.parse(run.stdout) as {
      messagesBefore: number;
      messagesAfter: number;
      removed: { messages: number; turns: number };
      groups: { start: number; end: number; kept: boolean }[];
    };
    expect([plan.messagesBefore, plan.messagesAfter, plan.removed.messages, plan.removed.turns]).toEqual([
      25, 3, 22, 11,
    ]);
    expect(plan.groups.filter((g) => g.kept).map((g) => [g.start, g.end])).toEqual([
      [0, 1],
      [23, 24],
      [24, 25],
    ]);
  });

  it('refuses summarize without a model source, and summarize flags without summarize', async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'a.json'), writeAs('openai', LONG).text);
    const none = await runSwc(['compact', 'a.json', '-t', '60', '--strategy', 'summarize'], {
      cwd: dir,
      env: { OPENAI_BASE_URL: '' },
    });
    expect(none.status).toBe(2);
    expect(none.stderr).toMatch(/--strategy summarize needs a model: --base-url <url> --model <name>/);
    // A model named without an endpoint: what is missing is the endpoint, said as such.
    const noEndpoint = await runSwc(['compact', 'a.json', '-t', '60', '--strategy', 'summarize', '--model', 'm1'], {
      cwd: dir,
      env: { OPENAI_BASE_URL: '' },
    });
    expect(noEndpoint.status).toBe(2);
    expect(noEndpoint.stderr).toBe(
      'swc: error: --model m1 needs an endpoint: --base-url <url> (or OPENAI_BASE_URL), the OpenAI-compatible server that serves it\n',
    );
    const stray = await runSwc(['compact', 'a.json', '-t', '60', '--summary-tokens', '5'], { cwd: dir });
    expect(stray.status).toBe(2);
    expect(stray.stderr).toMatch(/--summary-tokens only applies with --strategy summarize/);
  });
});

describe('summarize in the library', () => {
  const messages = JSON.parse(writeAs('openai', LONG).text).messages as unknown[];
  const options = { format: 'openai' as const, target: 60, tokenizer: 'approx' as const, summaryTokens: 10 };

  it("summarizes with a compactor's compact, awaiting the model, saying what each round replaced", async () => {
    const compactor = await createCompactor({ ...options, summarize: async () => 'gist' });
    const result = await compactor.compact(messages);
    expect(result.changed).toBe(true);
    expect(result.summarized?.rounds.map((r) => r.replaced)).toEqual([
      [1, 2],
      [4, 5],
    ]);
    expect(result.summarized?.summaries.map((s) => s.text)).toEqual([
      '<conversation_summary>\ngist\n</conversation_summary>',
      '<conversation_summary>\ngist\n</conversation_summary>',
    ]);
    expect(result.messages[0]).toBe(messages[0]);
  });

  it('returns the newest messages the window kept when it drops the summary too', async () => {
    const result = await compactMessages(TWELVE_TURNS, {
      format: 'openai',
      target: 20,
      tokenizer: 'approx',
      strategy: ['summarize', 'window'],
      note: null,
      summarize: async () => 'The agent found a stale cache.',
    });
    expect(result.summarized?.rounds).toHaveLength(1);
    expect(result.messages).toEqual([TWELVE_TURNS[0], TWELVE_TURNS[23], TWELVE_TURNS[24]]);
    expect(result.messages[1]).toBe(TWELVE_TURNS[23]);
  });

  it('with strict throws at a failed call; without it keeps the last good round', async () => {
    let calls = 0;
    const flaky = async (): Promise<string> => {
      calls++;
      if (calls === 2) throw new Error('rate limited');
      return 'gist';
    };
    await expect(compactMessages(messages, { ...options, summarize: flaky, strict: true })).rejects.toThrow(
      /summarize round 2 failed: rate limited/,
    );
    calls = 0;
    const kept = await compactMessages(messages, { ...options, summarize: flaky });
    expect(kept.summarized?.rounds).toHaveLength(1);
    expect(kept.summarized?.failure?.reason).toBe('rate limited');
  });

  it('takes a callback that returns no string for a failed call, naming what it returned', async () => {
    for (const reply of [undefined, 42, { text: 'gist', usage: {} }]) {
      const bad = async (): Promise<string> => reply as unknown as string;
      const kept = await compactMessages(messages, { ...options, summarize: bad });
      expect(kept.summarized?.failure?.reason).toMatch(
        /^the summarize callback returned (undefined|42|an object), not the summary's text as a string/,
      );
      expect(kept.changed).toBe(false);
      await expect(compactMessages(messages, { ...options, summarize: bad, strict: true })).rejects.toThrow(
        /summarize round 1 failed: the summarize callback returned/,
      );
    }
    const object = await compactMessages(messages, {
      ...options,
      summarize: async () => ({ text: 'gist' }) as unknown as string,
    });
    expect(object.summarized?.failure?.reason).toMatch(/\(return its \.text\)$/);
  });

  it('compacts the messages as they were when the call began, whatever the caller pushes while a summary is awaited', async () => {
    const history = [...messages];
    const late = { role: 'user', content: 'added while the model was thinking' };
    const result = await compactMessages(history, {
      ...options,
      summarize: async () => {
        history.push(late);
        return 'gist';
      },
    });
    expect(result.changed).toBe(true);
    expect(result.messages).not.toContain(late);
    expect(result.messages[result.messages.length - 1]).toBe(messages[messages.length - 1]);
  });

  it('summarizes in swcPrepareStep', async () => {
    const prepare = swcPrepareStep({ ...options, summarize: async () => 'gist' });
    const step = await prepare({ messages });
    expect(
      step?.messages.filter(
        (m) =>
          typeof (m as { content?: unknown }).content === 'string' &&
          (m as { content: string }).content.startsWith('<conversation_summary>'),
      ),
    ).toHaveLength(2);
  });

  it('refuses summarize options without the strategy, and the strategy without a summarize function', async () => {
    await expect(compactMessages(messages, { ...options, strategy: 'window', summaryTokens: 5 })).rejects.toThrow(
      /summaryTokens only applies with strategy summarize/,
    );
    await expect(compactMessages(messages, { ...options, strategy: 'summarize' })).rejects.toThrow(
      /strategy summarize needs the summarize option/,
    );
  });
});
