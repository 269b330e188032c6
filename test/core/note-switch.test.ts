/**
 * A note is only its text in most formats: a run recognises the notes its own `--note` template or the default one
 * wrote. Haystack recognises notes by their marks alone, never by where they stand, so a note another template wrote
 * reads as a user message, and the current task is the latest real user message alone: every earlier user message
 * starts a historical turn, even with no reply between.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { planCompaction } from '../../src/core/compact.js';
import { analyze, taskIndex } from '../../src/core/groups.js';
import { DEFAULT_NOTE_TEMPLATE, noteMarks, noteTemplateProblem } from '../../src/core/note.js';
import { contentOf } from '../../src/core/render.js';
import type { Message, TokenCounter } from '../../src/core/types.js';
import { decodeSource } from '../../src/io/source.js';
import { compactSource, type FileResult } from '../../src/pipeline/index.js';
import { createApproxCounter } from '../../src/tokens/approx.js';
import { ROOT } from '../helpers/cli.js';
import { FORMAT_NAMES, randomConversation, writeAs, type Conversation, type RefMessage } from '../helpers/convert.js';
import { assistant, createFakeCounter, earlierNote, system, tool, user } from '../helpers/fake-counter.js';
import { scaled } from '../helpers/scale.js';

async function compactText(
  name: string,
  text: string,
  target: number,
  note: string | null | undefined,
  counter: TokenCounter = createApproxCounter(),
): Promise<FileResult> {
  return await compactSource(decodeSource(Buffer.from(text, 'utf8'), name), { target, note, counter });
}

/** An OpenAI chat JSONL file of these messages. */
function jsonl(lines: readonly object[]): string {
  return lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
}

const TASK = { role: 'user', content: 'Please book a table for two at a restaurant near the Louvre tonight.' };
const BOOKING = jsonl([
  { role: 'system', content: 'You are a helpful agent.' },
  { role: 'user', content: 'First question: what is the weather in Paris today?' },
  { role: 'assistant', content: 'It is sunny in Paris today, around twenty degrees.' },
  TASK,
  {
    role: 'assistant',
    content: null,
    tool_calls: [
      { id: 'c1', type: 'function', function: { name: 'search', arguments: '{"q": "restaurants near the Louvre"}' } },
    ],
  },
  {
    role: 'tool',
    tool_call_id: 'c1',
    content: "Le Fumoir, Cafe Marly, Le Grand Vefour, Loulou, Ferdi, Juveniles, Willi's Wine Bar",
  },
  {
    role: 'assistant',
    content: null,
    tool_calls: [
      { id: 'c2', type: 'function', function: { name: 'book', arguments: '{"place": "Cafe Marly", "people": 2}' } },
    ],
  },
  { role: 'tool', tool_call_id: 'c2', content: 'Booked: Cafe Marly, 20:00, two people, confirmation 88213' },
  { role: 'assistant', content: 'Done: Cafe Marly at 20:00 for two, confirmation 88213.' },
]);
const TASK_LINE = jsonl([TASK]).trimEnd();

describe('a change of note template between runs', () => {
  it('reads a note another template wrote as a user message: the latest is the task, the one before it history', async () => {
    const first = (await compactText('booking.jsonl', BOOKING, 110, 'custom note: {num_removed} gone')).output;
    const lines = first.trimEnd().split('\n');
    // The first run cut steps, so its note follows the task.
    const noteLine = lines.indexOf('{"role":"user","content":"custom note: 4 gone"}');
    expect(noteLine).toBe(lines.indexOf(TASK_LINE) + 1);
    const plan = (await compactText('booking.jsonl', first, 70, undefined)).conversations[0]?.plan;
    expect(
      plan?.groups.filter((g) => g.indices.length > 0 && g.kind !== 'step').map((g) => [g.kind, g.indices]),
    ).toEqual([
      ['system', [0]],
      ['turn', [noteLine - 1]],
      ['task', [noteLine]],
    ]);
    // With the same template the note is recognised, and the task stays the task.
    const same = (await compactText('booking.jsonl', first, 70, 'custom note: {num_removed} gone')).conversations[0]
      ?.plan;
    expect(same?.groups.find((g) => g.kind === 'task')?.indices).toEqual([noteLine - 1]);
  });

  it('keeps the task when a default note written after it is read with a custom template, and folds it into the next one', async () => {
    const first = (await compactText('booking.jsonl', BOOKING, 110, undefined)).output;
    const second = (await compactText('booking.jsonl', first, 70, 'Cut {num_removed}.')).output.trimEnd().split('\n');
    // The default template is always recognised: its note is replaced, not kept.
    expect(second.slice(1)).toEqual([
      TASK_LINE,
      '{"role":"user","content":"Cut 3."}',
      '{"role":"assistant","content":"Done: Cafe Marly at 20:00 for two, confirmation 88213."}',
    ]);
  });

  it('keeps the original task byte for byte through runs with one random template, random targets and formats', async () => {
    const template = fc.oneof(
      fc.constant<string | undefined>(undefined),
      fc.constant(DEFAULT_NOTE_TEMPLATE),
      // Every template a run accepts: the rest are refused (see the tests of noteTemplateProblem).
      fc
        .string({
          unit: fc.constantFrom('{num_removed}', 'gone', ' ', '[', ']', '.', '7', '\n', 'é', '$&'),
          minLength: 1,
          maxLength: 8,
        })
        .filter((t) => noteTemplateProblem(t) === null),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 100_000 }),
        fc.constantFrom(...FORMAT_NAMES),
        fc.boolean(),
        template,
        fc.array(fc.integer({ min: 0, max: 1000 }), { minLength: 2, maxLength: 3 }),
        async (seed, format, jsonlFraming, note, perMilles) => {
          const conversation = withMarkedTask(randomConversation(seed), seed);
          const task = lastTaskIndex(conversation);
          const written = writeAs(format, conversation, {
            jsonl: jsonlFraming && !conversation.some((m) => m.role === 'system'),
          });
          const item = written.itemOf[task] as number;
          const original = await compactText(written.name, written.text, Number.MAX_SAFE_INTEGER, undefined);
          const taskRaw = original.conversations[0]?.slot.raws[item] as string;
          const whole = original.conversations[0]?.plan.tokensBefore as number;
          let text = written.text;
          for (const perMille of perMilles) {
            text = (await compactText(written.name, text, Math.floor((whole * perMille) / 1000), note)).output;
            expect({ seed, format, note, perMilles, kept: text.includes(taskRaw) }).toEqual({
              seed,
              format,
              note,
              perMilles,
              kept: true,
            });
          }
        },
      ),
      { numRuns: scaled(300) },
    );
  });
});

const FIXTURES = [
  'sample.jsonl',
  'anthropic/agent-session.json',
  'anthropic/messages.jsonl',
  'claude-code/interruption-meta.jsonl',
  'claude-code/sidechain.jsonl',
  'claude-code/split-assistant.jsonl',
  'claude-code/summary.jsonl',
  'gemini/adk-session.json',
  'gemini/agent-session.json',
  'langchain/dumpd.json',
  'langchain/messages-to-dict.json',
  'multi/sharegpt.json',
  'multi/sharegpt-typed.jsonl',
  ...readdirSync(path.join(ROOT, 'fixtures/responses')).map((f) => `responses/${f}`),
];

/** Each conversation's task as its texts, from a compaction's plan. */
function taskTexts(result: FileResult): string[][] {
  return result.conversations.map((c) => {
    const task = c.plan.groups.find((g) => g.kind === 'task');
    return task === undefined ? [] : task.indices.flatMap((i) => contentOf(c.normalized.messages[i] as Message).texts);
  });
}

describe('a custom note template in every format', () => {
  it.each(FIXTURES)('keeps the task of %s through two runs with the same custom note, at any targets', async (file) => {
    const text = readFileSync(path.join(ROOT, 'fixtures', file), 'utf8');
    const original = await compactText(file, text, Number.MAX_SAFE_INTEGER, undefined);
    const tasks = taskTexts(original);
    const whole = Math.max(...original.conversations.map((c) => c.plan.tokensBefore));
    for (const first of [50, 200, 400, 600, 800, 950]) {
      const once = (
        await compactText(file, text, Math.floor((whole * first) / 1000), 'custom note: {num_removed} gone')
      ).output;
      for (const second of [0, 100, 300, 500, 700, 900]) {
        const twice = (
          await compactText(file, once, Math.floor((whole * second) / 1000), 'custom note: {num_removed} gone')
        ).output;
        const after = (await compactText(file, twice, Number.MAX_SAFE_INTEGER, undefined)).conversations.map((c) =>
          c.normalized.messages.flatMap((m) => contentOf(m).texts),
        );
        tasks.forEach((texts, k) => {
          for (const t of texts)
            expect({ file, first, second, conversation: k, kept: after[k]?.includes(t) }).toEqual({
              file,
              first,
              second,
              conversation: k,
              kept: true,
            });
        });
      }
    }
  });
});

/** The index of a generated conversation's task: its latest user message that is not a note. */
function lastTaskIndex(conversation: Conversation): number {
  for (let i = conversation.length - 1; i >= 0; i--) {
    const m = conversation[i] as RefMessage;
    if (m.role === 'user' && m.note !== true) return i;
  }
  return -1;
}

/** The conversation with its task's text made unique, so finding it in an output finds nothing else. */
function withMarkedTask(conversation: Conversation, seed: number): Conversation {
  const task = lastTaskIndex(conversation);
  return conversation.map((m, i): RefMessage =>
    i === task && m.role === 'user' ? { ...m, texts: [`TASK ${seed}: the real request`, ...m.texts] } : m,
  );
}

describe('the current task', () => {
  it('is the latest real user message alone; every earlier user message starts a turn, with or without instructions', () => {
    const cases: Array<[Message[], number, number[][]]> = [
      [[system(), user('a'), assistant('b'), user('task')], 3, [[1, 3]]],
      [[system(), user('a'), user('task')], 2, [[1, 2]]],
      [[user('old question'), user('the task'), assistant('x'), assistant('y')], 1, [[0, 1]]],
      [
        [user('a'), user('b 2'), user('task')],
        2,
        [
          [0, 1],
          [1, 2],
        ],
      ],
      [[system(), user('task'), user('custom note: 4 gone')], 2, [[1, 2]]],
      [[system(), earlierNote(3), user('a'), user('task')], 3, [[2, 3]]],
      [[system(), user('a'), tool('r'), user('task')], 3, [[1, 3]]],
    ];
    for (const [messages, task, turns] of cases) {
      const structure = analyze(messages);
      expect({ messages, task: structure.task, turns: structure.turns }).toEqual({ messages, task, turns });
      expect(taskIndex(messages)).toBe(task);
    }
  });

  it('keeps a user message after the task as the task, and the one before as a turn the window may drop', () => {
    // fake counter: 10 per message; whole 70 > 35; protected 30 leaves 5, so the turn and both steps go.
    const messages = [
      system(),
      user('task'),
      user('custom note: 4 gone'),
      assistant(null, 'x'),
      tool('x'),
      assistant(null, 'y'),
      tool('y'),
    ];
    const plan = planCompaction(messages, createFakeCounter(), { target: 35, minKeepSteps: 0 });
    expect({ kept: plan.kept, removed: plan.removed, noteIndex: plan.noteIndex }).toEqual({
      kept: [0, 2],
      removed: [1, 3, 4, 5, 6],
      noteIndex: 2,
    });
    expect(plan.groups.map((g) => [g.kind, g.indices])).toEqual([
      ['system', [0]],
      ['turn', [1]],
      ['task', [2]],
      ['note', []],
      ['step', [3, 4]],
      ['step', [5, 6]],
    ]);
  });

  it('decide as Haystack when a request is written as two user messages after some history: the first is history', async () => {
    const two = jsonl([
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'old question' },
      { role: 'assistant', content: 'old answer' },
      { role: 'user', content: 'Book the table for 2.' },
      { role: 'user', content: 'For 2, tonight at 8.' },
      { role: 'assistant', content: 'Booked.' },
    ]);
    const result = await compactText('two.jsonl', two, 1, null);
    expect(result.output).not.toContain('Book the table');
    expect(result.output).not.toContain('old question');
    expect(result.output).toContain('"content":"For 2, tonight at 8."');
    expect(result.conversations[0]?.plan.removedCount).toBe(3);
  });

  it('meet the target of the reported case as Haystack does (the task follows another user message)', async () => {
    const text = jsonl([
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'old question one two three four five six seven' },
      { role: 'assistant', content: 'old answer one two three four five six seven' },
      { role: 'user', content: 'previous user message one two three four five six seven eight nine ten' },
      { role: 'user', content: 'the task one two three four five six seven eight nine ten eleven twelve' },
      { role: 'assistant', content: 'step one two three' },
    ]);
    const result = await compactSource(decodeSource(Buffer.from(text, 'utf8'), 't.jsonl'), {
      target: 30,
      minKeepSteps: 0,
      note: null,
      counter: createApproxCounter(),
    });
    const plan = result.conversations[0]?.plan;
    expect({ kept: plan?.kept, targetMet: plan?.targetMet }).toEqual({ kept: [0, 4, 5], targetMet: true });
  });

  it('leave the first of two user messages right after the instructions to history, as Haystack does', async () => {
    const two = jsonl([
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'Book the table.' },
      { role: 'user', content: 'For 2, tonight.' },
      { role: 'assistant', content: 'Booked.' },
    ]);
    const result = await compactText('two.jsonl', two, 1, null);
    expect(result.output).not.toContain('"content":"Book the table."');
    expect(result.output).toContain('"content":"For 2, tonight."');
  });

  it('leave an earlier user message to history when the latest has fields a note never has', async () => {
    const text = jsonl([
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'old question' },
      { role: 'user', content: 'Now this.', name: 'someone' },
    ]);
    const result = await compactText('named.jsonl', text, 1, null);
    expect(result.output).not.toContain('old question');
    expect(result.output).toContain('"content":"Now this."');
  });
});

describe('note templates', () => {
  it('are refused only without text of their own; custom text without {num_removed} is used as written', () => {
    for (const t of [
      '{num_removed}',
      ' {num_removed} ',
      '{num_removed}{num_removed}',
      '7{num_removed}',
      '\n{num_removed}\t',
      '42',
      '  ',
    ]) {
      expect({ t, problem: noteTemplateProblem(t) === null }).toEqual({ t, problem: false });
    }
    for (const t of [
      DEFAULT_NOTE_TEMPLATE,
      'Cut {num_removed}.',
      '[{num_removed}]',
      'é{num_removed}',
      'Context trimmed.',
      'Some history is missing.',
      'Gone: {other} x{num_removed}',
    ]) {
      expect({ t, problem: noteTemplateProblem(t) }).toEqual({ t, problem: null });
    }
  });

  it('with {num_removed} give notes that a later run with the same template recognises, whatever the count', () => {
    const valid = fc
      .string({
        unit: fc.constantFrom('{num_removed}', 'gone', ' ', '[', ']', '.', '7', '\n', 'é', '$&'),
        minLength: 1,
        maxLength: 8,
      })
      .filter((t) => t.includes('{num_removed}') && noteTemplateProblem(t) === null);
    fc.assert(
      fc.property(valid, fc.integer({ min: 1, max: 10_000 }), (template, removed) => {
        const text = template.split('{num_removed}').join(String(removed));
        expect({ template, removed, marks: noteMarks(text, template) }).toEqual({
          template,
          removed,
          marks: { compaction: 'sliding_window' },
        });
      }),
    );
  });

  it("never take a user's bare number for a note: a template of nothing but the count is refused by the CLI and the library", async () => {
    const { runSwc } = await import('../helpers/run-in-process.js');
    const { compactMessages } = await import('../../src/library/index.js');
    const { OptionsError } = await import('../../src/errors.js');
    const chat = [
      { role: 'user', content: 'Which one?' },
      { role: 'assistant', content: 'Pick 1, 2 or 3?' },
      { role: 'user', content: '3' },
    ];
    const r = await runSwc(['compact', '-', '--target', '1', '--note', '{num_removed}'], {
      cwd: ROOT,
      stdin: jsonl(chat),
    });
    expect({ status: r.status, stdout: r.stdout }).toEqual({ status: 2, stdout: '' });
    expect(r.stderr).toMatch(/--note needs text besides \{num_removed\}/);
    await expect(compactMessages(chat, { target: 1, note: '{num_removed}' })).rejects.toThrow(OptionsError);
    await expect(compactMessages(chat, { target: 1, note: 42 as unknown as string })).rejects.toThrow(
      /note must be a string/,
    );
  });
});

describe('a custom note template, then summarize with it', () => {
  it('never summarizes the task away: the task is kept as the window keeps it', async () => {
    const { runSwc } = await import('../helpers/run-in-process.js');
    const { mkdtempSync, writeFileSync, readFileSync: read, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(path.join(tmpdir(), 'swc-note-summary-'));
    const big = (c: string, n: number): string => `${c} lorem ipsum dolor\n`.repeat(n);
    const task = { role: 'user', content: `THE REAL TASK: migrate the database. Details: ${big('requirement', 15)}` };
    const messages: object[] = [{ role: 'system', content: 'sys' }, task];
    for (let k = 0; k < 4; k++) {
      messages.push({
        role: 'assistant',
        content: null,
        tool_calls: [{ id: `c${k}`, type: 'function', function: { name: 'f', arguments: '{}' } }],
      });
      messages.push({ role: 'tool', tool_call_id: `c${k}`, content: big(`r${k}`, 20) });
    }
    messages.push({ role: 'assistant', content: 'done' });
    writeFileSync(path.join(dir, 't.json'), JSON.stringify(messages));
    writeFileSync(path.join(dir, 'model.sh'), 'cat >/dev/null; printf "short summary"\n');
    const first = await runSwc(
      ['compact', 't.json', '-t', '450', '--note', 'Dropped {num_removed} msgs', '-o', 'once.json'],
      { cwd: dir },
    );
    expect(first.status).toBe(0);
    expect(read(path.join(dir, 'once.json'), 'utf8')).toContain('Dropped 4 msgs');
    for (const strategy of ['summarize', 'summarize,window']) {
      const r = await runSwc(
        [
          'compact',
          'once.json',
          '-t',
          '300',
          '--strategy',
          strategy,
          '--summarize-command',
          `sh '${path.join(dir, 'model.sh')}'`,
          '--summary-tokens',
          '20',
          '--no-cache',
          '--note',
          'Dropped {num_removed} msgs',
          '-o',
          'twice.json',
        ],
        { cwd: dir },
      );
      expect({ strategy, status: r.status }).toEqual({ strategy, status: 0 });
      const out = JSON.parse(read(path.join(dir, 'twice.json'), 'utf8')) as { content: unknown }[];
      expect({
        strategy,
        kept: out.some((m) => m.content === task.content),
        summarized: out.some((m) => String(m.content).includes('short summary')),
      }).toEqual({ strategy, kept: true, summarized: true });
    }
    rmSync(dir, { recursive: true, force: true });
  });
});

describe('a note used as written (a template without {num_removed})', () => {
  const LITERAL = 'Earlier context was trimmed.';
  const literalLine = jsonl([{ role: 'user', content: LITERAL }]).trimEnd();

  it('is accepted by the command line and the library and written as given', async () => {
    const { runSwc } = await import('../helpers/run-in-process.js');
    const { compactMessages } = await import('../../src/library/index.js');
    const r = await runSwc(['compact', '-', '--tokenizer', 'approx', '--target', '110', '--note', LITERAL], {
      cwd: ROOT,
      stdin: BOOKING,
    });
    expect({ status: r.status, stderr: r.stderr.includes('--note') }).toEqual({ status: 0, stderr: false });
    expect(r.stdout.trimEnd().split('\n')).toContain(literalLine);
    const lines = BOOKING.trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as object);
    const result = await compactMessages(lines, { target: 110, tokenizer: 'approx', note: LITERAL });
    expect(result.plan.noteText).toBe(LITERAL);
    expect(result.messages).toContainEqual({ role: 'user', content: LITERAL });
  });

  it('is folded by a later run with the same template, wherever the window wrote it', async () => {
    // After the task (the first run cut steps), then after the instructions (history cut).
    const first = (await compactText('booking.jsonl', BOOKING, 110, LITERAL)).output;
    const lines = first.trimEnd().split('\n');
    expect(lines.indexOf(literalLine)).toBe(lines.indexOf(TASK_LINE) + 1);
    const more =
      first +
      jsonl([
        { role: 'user', content: 'And a taxi at 19:30, please.' },
        { role: 'assistant', content: 'Taxi booked for 19:30.' },
      ]);
    const second = await compactText('booking.jsonl', more, 40, LITERAL);
    const out = second.output.trimEnd().split('\n');
    expect(out.filter((l) => l === literalLine)).toHaveLength(1);
    expect(out.indexOf(literalLine)).toBe(1);
    // The earlier note is removed with the turn it stood in, and not counted as a message of its own twice.
    expect(second.conversations[0]?.plan.removed.length).toBeGreaterThan(0);
    const third = await compactText(
      'booking.jsonl',
      second.output + jsonl([{ role: 'user', content: 'Thanks!' }]),
      30,
      LITERAL,
    );
    expect(
      third.output
        .trimEnd()
        .split('\n')
        .filter((l) => l === literalLine).length,
    ).toBeLessThanOrEqual(1);
  });

  it('is folded after a task that followed another user message, so a second run with the same template changes nothing', async () => {
    // The first of two user messages with no reply between is history: it goes with the steps, and the note follows
    // the task right at the start.
    const call = (id: string) => ({
      role: 'assistant',
      content: null,
      tool_calls: [{ id, type: 'function', function: { name: 'search', arguments: '{}' } }],
    });
    const text = jsonl([
      { role: 'user', content: '#1 alpha' },
      { role: 'user', content: '#2 alpha' },
      call('c1'),
      { role: 'tool', tool_call_id: 'c1', content: '#4 result of search' },
      call('c2'),
      { role: 'tool', tool_call_id: 'c2', content: '#6 result of search' },
    ]);
    const once = await compactSource(decodeSource(Buffer.from(text, 'utf8'), 't.jsonl'), {
      target: 1,
      minKeepSteps: 0,
      note: LITERAL,
      counter: createApproxCounter(),
    });
    expect(once.output.trimEnd().split('\n').slice(-1)).toEqual([literalLine]);
    const twice = await compactSource(decodeSource(Buffer.from(once.output, 'utf8'), 't.jsonl'), {
      target: 1,
      minKeepSteps: 0,
      note: LITERAL,
      counter: createApproxCounter(),
    });
    expect(once.output).not.toContain('#1 alpha');
    expect(twice.conversations[0]?.normalized.messages.map((m) => m.exactNote === true)).toEqual([false, true]);
    expect({ changed: twice.changed, output: twice.output }).toEqual({ changed: false, output: once.output });
  });

  it('is never the current task: a user who writes that text as the only request keeps it', async () => {
    const text = jsonl([
      { role: 'system', content: 'sys' },
      { role: 'user', content: LITERAL },
      { role: 'assistant', content: 'A long answer about what was trimmed and why it was trimmed, at length.' },
      { role: 'assistant', content: 'Another long answer about the trimmed context, and then some more of it.' },
    ]);
    const r = await compactText('t.jsonl', text, 20, LITERAL);
    expect(r.output.trimEnd().split('\n')).toContain(literalLine);
    expect(r.conversations[0]?.normalized.messages[1]?.exactNote).toBe(true);
    expect(r.conversations[0]?.plan.kept).toContain(1);
  });

  it('is a user message where no note can stand: deep in the history it is a turn like any other', async () => {
    const text = jsonl([
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'first question' },
      { role: 'assistant', content: 'first answer' },
      { role: 'user', content: LITERAL },
      { role: 'assistant', content: 'second answer' },
      { role: 'user', content: 'the task' },
    ]);
    const plan = (await compactText('t.jsonl', text, Number.MAX_SAFE_INTEGER, LITERAL, createApproxCounter()))
      .conversations[0]?.plan;
    expect(plan?.groups.filter((g) => g.kind === 'turn').map((g) => g.indices)).toEqual([
      [1, 2],
      [3, 4],
    ]);
  });

  it('is only its exact text, shaped as the format writes a note', async () => {
    const lines = [
      { role: 'system', content: 'sys' },
      { role: 'user', content: LITERAL, name: 'someone' },
      { role: 'user', content: `${LITERAL} ` },
      { role: 'user', content: LITERAL },
      { role: 'user', content: 'task' },
    ];
    const messages =
      (await compactText('m.jsonl', jsonl(lines), Number.MAX_SAFE_INTEGER, LITERAL)).conversations[0]?.normalized
        .messages ?? [];
    expect(messages.map((m) => m.exactNote === true)).toEqual([false, false, false, true, false]);
  });
});
