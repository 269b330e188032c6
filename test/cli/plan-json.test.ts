/**
 * The JSON plan: its shape on a conversation worked out by hand, and on random conversations, that it removes
 * exactly the messages a real compaction (not exhaustive, as `swc compact` runs it) removes.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { planDocument, type PlanDocument, type PlanSettings } from '../../src/cli/plan-json.js';
import { resolveWindow } from '../../src/cli/settings.js';
import { countOf, outcomeOf } from '../../src/outcome/outcome.js';
import { noteTemplate, planCompaction } from '../../src/core/compact.js';
import { textContent } from '../../src/core/render.js';
import { DEFAULT_NOTE_TEMPLATE, formatNote } from '../../src/core/note.js';
import type { Message, TokenCounter } from '../../src/core/types.js';
import { decodeSource } from '../../src/io/source.js';
import { compactSource, type FileResult } from '../../src/pipeline/index.js';
import { createApproxCounter } from '../../src/tokens/index.js';
import { ROOT } from '../helpers/cli.js';
import { createFakeCounter } from '../helpers/fake-counter.js';
import { scaled } from '../helpers/scale.js';

type Item = Record<string, unknown>;

async function compactText(
  text: string,
  file: string,
  settings: { target: number; minKeepSteps: number; note: string | null | undefined },
  counter: TokenCounter,
  exhaustive: boolean,
): Promise<FileResult> {
  return await compactSource(decodeSource(Buffer.from(text), file), { ...settings, counter, exhaustive });
}

async function documentFor(
  text: string,
  file: string,
  settings: { target: number; minKeepSteps: number; note: string | null | undefined },
  counter: TokenCounter,
): Promise<PlanDocument> {
  const result = await compactText(text, file, settings, counter, true);
  const planSettings: PlanSettings = {
    target: settings.target,
    tokenizer: counter.name,
    minKeepSteps: settings.minKeepSteps,
    note: noteTemplate(settings.note),
    format: 'auto',
  };
  return planDocument(result, planSettings);
}

/** The input indices a plan's groups keep or remove (ranges less what they skip; the note is no input message). */
function indicesOf(doc: PlanDocument, kept: boolean, conversation?: number): number[] {
  const out: number[] = [];
  for (const g of doc.groups) {
    if (g.kind === 'note' || g.kept !== kept) continue;
    if (conversation !== undefined && g.conversation !== conversation) continue;
    for (let i = g.start; i < g.end; i++) if (!(g.skip ?? []).includes(i)) out.push(i);
  }
  return out.sort((a, b) => a - b);
}

// [S0, U1, A2, U3, A4(search), T5, A6, U7 task, A8(search, read_file ×2), T9, T10, T11]; fake counter: 10 a message.
const history = (): Item[] => [
  { role: 'system', content: 'You are a careful agent.' },
  { role: 'user', content: 'first question' },
  { role: 'assistant', content: 'first answer' },
  { role: 'user', content: 'second question' },
  {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'c1', type: 'function', function: { name: 'search', arguments: '{}' } }],
  },
  { role: 'tool', tool_call_id: 'c1', content: 'found it' },
  { role: 'assistant', content: 'second answer' },
  { role: 'user', content: 'the current task' },
  {
    role: 'assistant',
    content: 'Looking.',
    tool_calls: ['search', 'read_file', 'read_file'].map((name, k) => ({
      id: `d${k}`,
      type: 'function',
      function: { name, arguments: '{}' },
    })),
  },
  { role: 'tool', tool_call_id: 'd0', content: 'a' },
  { role: 'tool', tool_call_id: 'd1', content: 'b' },
  { role: 'tool', tool_call_id: 'd2', content: 'c' },
];

describe('the JSON plan', () => {
  it('lists settings, totals and every group in conversation order, the note where it is inserted', async () => {
    const doc = await documentFor(
      JSON.stringify(history()),
      'chat.json',
      { target: 110, minKeepSteps: 1, note: undefined },
      createFakeCounter(),
    );
    expect(doc).toEqual({
      version: 1,
      file: 'chat.json',
      format: 'openai',
      settings: { target: 110, tokenizer: 'fake', minKeepSteps: 1, note: DEFAULT_NOTE_TEMPLATE, format: 'auto' },
      changed: true,
      messagesBefore: 12,
      messagesAfter: 11,
      tokensBefore: 120,
      tokensBeforeExact: true,
      tokensAfter: 110,
      targetMet: true,
      removed: { messages: 2, tokens: 20, turns: 1, steps: 0, orphans: 0 },
      target: 110,
      note: { index: 1, text: formatNote(DEFAULT_NOTE_TEMPLATE, 2), tokens: 10 },
      missReason: null,
      groups: [
        { kind: 'system', start: 0, end: 1, messages: 1, tokens: 10, kept: true },
        {
          kind: 'note',
          start: 1,
          end: 2,
          messages: 1,
          tokens: 10,
          kept: true,
          text: formatNote(DEFAULT_NOTE_TEMPLATE, 2),
        },
        { kind: 'turn', start: 1, end: 3, messages: 2, tokens: 20, kept: false },
        { kind: 'turn', start: 3, end: 7, messages: 4, tokens: 40, kept: true },
        { kind: 'task', start: 7, end: 8, messages: 1, tokens: 10, kept: true },
        { kind: 'step', start: 8, end: 12, messages: 4, tokens: 40, kept: true },
      ],
    });
  });

  it('says why the target is missed: the protected part alone', async () => {
    const doc = await documentFor(
      JSON.stringify(history()),
      'chat.json',
      { target: 15, minKeepSteps: 1, note: null },
      createFakeCounter(),
    );
    expect(doc.targetMet).toBe(false);
    expect(doc.missReason).toEqual({ kind: 'protected', protectedTokens: 20 });
    expect(doc.note).toBeNull();
    expect(doc.groups.some((g) => g.kind === 'note')).toBe(false);
  });

  it('says why the target is missed: min_keep_steps held a step over the budget', async () => {
    const doc = await documentFor(
      JSON.stringify(history()),
      'chat.json',
      { target: 50, minKeepSteps: 1, note: null },
      createFakeCounter(),
    );
    expect(doc.missReason).toEqual({ kind: 'min-keep-steps', steps: 1, stepTokens: 40, budget: 30 });
  });

  it('lists what a turn skips when an earlier note sits inside it, as an orphan of its own', async () => {
    const items = history();
    items.splice(2, 0, { role: 'user', content: formatNote(DEFAULT_NOTE_TEMPLATE, 9) });
    // 13 messages; budget 110 - 20 = 90, the step takes 40, turn [4..7] 40 of the 50 left, turn [1,3] (20) goes.
    const doc = await documentFor(
      JSON.stringify(items),
      'chat.json',
      { target: 110, minKeepSteps: 1, note: undefined },
      createFakeCounter(),
    );
    expect(doc.groups.find((g) => g.kind === 'turn')).toEqual({
      kind: 'turn',
      start: 1,
      end: 4,
      messages: 2,
      tokens: 20,
      kept: false,
      skip: [2],
    });
    expect(doc.groups.find((g) => g.kind === 'orphan')).toEqual({
      kind: 'orphan',
      start: 2,
      end: 3,
      messages: 1,
      tokens: 10,
      kept: false,
    });
  });

  it('counts messages as the note does, each standing for its weight in items', () => {
    const messages: Message[] = [
      { role: 'system', content: textContent('S') },
      { role: 'user', content: textContent('old question'), weight: 2 },
      { role: 'assistant', content: textContent('old answer'), weight: 3 },
      { role: 'user', content: textContent('task') },
    ];
    const plan = planCompaction(messages, createFakeCounter(), { target: 30, exhaustive: true });
    const normalized = { messages, itemsOf: [[0], [1, 2], [3, 4, 5], [6]] };
    const { totals } = outcomeOf(
      { plan, normalized, target: 30, toolTokens: 0 },
      { minKeepSteps: 1, counter: createFakeCounter() },
    );
    expect(plan.noteText).toBe(formatNote(DEFAULT_NOTE_TEMPLATE, 5));
    expect([totals.messagesBefore, totals.messagesAfter, totals.removed.messages]).toEqual([7, 3, 5]);
    expect(countOf(messages, [1, 2])).toBe(5);
  });

  it('counts instructions held outside the list as no message, whatever weight an adapter gave them', () => {
    const messages: Message[] = [
      { role: 'system', content: textContent('held in the request, beside the list') },
      { role: 'user', content: textContent('old question') },
      { role: 'assistant', content: textContent('old answer') },
      { role: 'user', content: textContent('task') },
    ];
    const plan = planCompaction(messages, createFakeCounter(), { target: 30, exhaustive: true });
    const normalized = { messages, itemsOf: [[], [0], [1], [2]] };
    expect(
      outcomeOf({ plan, normalized, target: 30, toolTokens: 0 }, { minKeepSteps: 1, counter: createFakeCounter() })
        .counts,
    ).toEqual({ before: 3, after: 2, removed: 2 });
    expect(countOf(messages, [0, 1], normalized.itemsOf)).toBe(1);
  });

  it('tags groups with their conversation and lists each conversation when a file holds several', async () => {
    const line = JSON.stringify({ messages: history() });
    const doc = await documentFor(
      `${line}\n${line}\n`,
      'runs.jsonl',
      { target: 110, minKeepSteps: 1, note: undefined },
      createFakeCounter(),
    );
    expect(
      doc.conversations?.map((c) => [c.conversation, c.where, c.messagesBefore, c.messagesAfter, c.targetMet]),
    ).toEqual([
      [0, 'line 1 "messages"', 12, 11, true],
      [1, 'line 2 "messages"', 12, 11, true],
    ]);
    expect(doc.groups.length).toBe(12);
    expect(doc.groups.every((g) => g.conversation === (doc.groups.indexOf(g) < 6 ? 0 : 1))).toBe(true);
    expect([doc.messagesBefore, doc.messagesAfter, doc.removed.messages]).toEqual([24, 22, 4]);
    expect(doc.note).toBeUndefined();
  });
});

describe('the JSON plan in item positions', () => {
  it('gives a Claude Code log its line positions: a split message spans its lines, the note where it is written', async () => {
    // Lines: 0 U, 1-3 one assistant message split in three, 4-5 results, 6 A, 7 U (task), 8-9 A split, 10 result, 11 A.
    // Fake counter: 9 messages of 10 tokens; target 50 keeps the task (10) and both steps (30), the note takes 10.
    const text = readFileSync(path.join(ROOT, 'fixtures/claude-code/split-assistant.jsonl'), 'utf8');
    const doc = await documentFor(
      text,
      'split.jsonl',
      { target: 50, minKeepSteps: 1, note: '[{num_removed} gone]' },
      createFakeCounter(),
    );
    expect(doc.groups).toEqual([
      { kind: 'note', start: 0, end: 1, messages: 1, tokens: 10, kept: true, text: '[7 gone]' },
      { kind: 'turn', start: 0, end: 7, messages: 7, tokens: 50, kept: false },
      { kind: 'task', start: 7, end: 8, messages: 1, tokens: 10, kept: true },
      { kind: 'step', start: 8, end: 11, messages: 3, tokens: 20, kept: true },
      { kind: 'step', start: 11, end: 12, messages: 1, tokens: 10, kept: true },
    ]);
    expect([doc.messagesBefore, doc.messagesAfter, doc.removed.messages]).toEqual([12, 6, 7]);
    expect(doc.note).toEqual({ index: 0, text: '[7 gone]', tokens: 10 });
    const written = (
      await compactText(
        text,
        'split.jsonl',
        { target: 50, minKeepSteps: 1, note: '[{num_removed} gone]' },
        createFakeCounter(),
        false,
      )
    ).output
      .trimEnd()
      .split('\n');
    expect(written).toHaveLength(doc.messagesAfter);
    expect((JSON.parse(written[0] as string) as { message: { content: string } }).message.content).toBe('[7 gone]');
  });

  it('shows instructions held outside the list (Anthropic system) as a system group at 0-0 with no message', async () => {
    const body = {
      model: 'm',
      system: 'Be brief.',
      messages: [
        { role: 'user', content: 'old question' },
        { role: 'assistant', content: 'old answer' },
        { role: 'user', content: 'the task' },
      ],
    };
    // Protected: system and task, 20; budget 30 - 20 = 10 cannot hold the old turn (20).
    const doc = await documentFor(
      JSON.stringify(body),
      'request.json',
      { target: 30, minKeepSteps: 1, note: null },
      createFakeCounter(),
    );
    expect(doc.format).toBe('anthropic');
    expect(doc.groups).toEqual([
      { kind: 'system', start: 0, end: 0, messages: 0, tokens: 10, kept: true, outside: true },
      { kind: 'turn', start: 0, end: 2, messages: 2, tokens: 20, kept: false },
      { kind: 'task', start: 2, end: 3, messages: 1, tokens: 10, kept: true },
    ]);
    expect([doc.messagesBefore, doc.messagesAfter, doc.removed.messages]).toEqual([3, 1, 2]);
  });

  it('records the window settings and says when the tool schemas alone take the whole target', async () => {
    const body = {
      messages: [
        { role: 'user', content: 'old question' },
        { role: 'assistant', content: 'old answer' },
        { role: 'user', content: 'the task' },
      ],
      tools: [{ type: 'function', function: { name: 'pick', parameters: {} } }],
    };
    // Fake counter: the schemas add one rendered text, 10 tokens; window 40 × 0.2 = 8 leaves the conversation nothing.
    const window = resolveWindow({ contextWindow: '40', compactAt: '0.7', compactTo: '0.2' });
    expect(window).toMatchObject({ trigger: 28, target: 8 });
    const counter = createFakeCounter();
    const result = await compactSource(decodeSource(Buffer.from(JSON.stringify(body)), 'request.json'), {
      target: 8,
      window: { trigger: 28, target: 8 },
      counter,
      exhaustive: true,
    });
    const doc = planDocument(result, {
      target: 8,
      tokenizer: 'fake',
      minKeepSteps: 1,
      note: null,
      format: 'auto',
      window,
    });
    expect(doc.settings).toEqual({
      target: null,
      tokenizer: 'fake',
      minKeepSteps: 1,
      note: null,
      format: 'auto',
      contextWindow: 40,
      compactAt: 0.7,
      compactTo: 0.2,
    });
    expect([doc.target, doc.toolTokens, doc.targetMet]).toEqual([0, 10, false]);
    expect(doc.missReason).toEqual({ kind: 'tools', toolTokens: 10, target: 8 });
  });
});

/** A random word-ish text, sometimes empty, sometimes long. */
const text = fc.oneof(
  { weight: 1, arbitrary: fc.constant('') },
  {
    weight: 6,
    arbitrary: fc
      .array(fc.constantFrom('alpha', 'beta', 'gamma', '東京', 'ok', '😊', 'result:', '{"a": 1}', '\n'), {
        minLength: 1,
        maxLength: 40,
      })
      .map((w) => w.join(' ')),
  },
);

/** A step: an assistant message with 0-3 calls and a result for each, or just text. */
const stepArb = fc.record({
  say: text,
  calls: fc.array(fc.constantFrom('search', 'read_file', 'write'), { maxLength: 3 }),
  results: text,
});

const conversationArb = fc.record({
  systems: fc.integer({ min: 0, max: 2 }),
  leadingOrphan: fc.boolean(),
  turns: fc.array(fc.record({ ask: text, steps: fc.array(stepArb, { maxLength: 3 }), earlierNote: fc.boolean() }), {
    maxLength: 4,
  }),
  task: fc.option(text, { nil: null }),
  steps: fc.array(stepArb, { maxLength: 4 }),
  strayAfterTask: fc.boolean(),
});

type Spec = typeof conversationArb extends fc.Arbitrary<infer T> ? T : never;

/** Writes a random conversation spec as OpenAI messages. */
function messagesOf(spec: Spec): Item[] {
  let id = 0;
  const out: Item[] = [];
  const step = (s: { say: string; calls: string[]; results: string }): void => {
    const calls = s.calls.map((name) => ({
      id: `call_${++id}`,
      type: 'function',
      function: { name, arguments: `{"q": "${s.say.length}"}` },
    }));
    out.push(
      calls.length > 0
        ? { role: 'assistant', content: s.say === '' ? null : s.say, tool_calls: calls }
        : { role: 'assistant', content: s.say },
    );
    for (const c of calls) out.push({ role: 'tool', tool_call_id: c.id, content: s.results });
  };
  for (let k = 0; k < spec.systems; k++) out.push({ role: 'system', content: `rules ${k}` });
  if (spec.leadingOrphan) out.push({ role: 'assistant', content: 'hello before anyone asked' });
  for (const turn of spec.turns) {
    out.push({ role: 'user', content: turn.ask === '' ? 'question' : turn.ask });
    if (turn.earlierNote) out.push({ role: 'user', content: formatNote(DEFAULT_NOTE_TEMPLATE, 3) });
    turn.steps.forEach(step);
  }
  if (spec.task !== null) out.push({ role: 'user', content: spec.task === '' ? 'task' : spec.task });
  spec.steps.forEach(step);
  if (spec.strayAfterTask) out.push({ role: 'system', content: 'a late instruction' });
  if (out.length === 0) out.push({ role: 'user', content: 'only' });
  return out;
}

/** A step of a Claude Code log: one assistant message split over a line per block, its results, extra lines. */
const ccStepArb = fc.record({
  say: fc.boolean(),
  calls: fc.integer({ min: 0, max: 3 }),
  // A last text block of the same message written after the results, as split messages can be.
  lateText: fc.boolean(),
  // A `system` line (a hook's output) that travels with the message before it and counts as no message.
  systemLine: fc.boolean(),
});

const claudeCodeArb = fc.record({
  summary: fc.boolean(),
  turns: fc.array(
    fc.record({
      ask: text,
      meta: fc.boolean(),
      earlierNote: fc.boolean(),
      steps: fc.array(ccStepArb, { maxLength: 3 }),
    }),
    { maxLength: 4 },
  ),
  task: text,
  steps: fc.array(ccStepArb, { maxLength: 4 }),
});

type CcSpec = typeof claudeCodeArb extends fc.Arbitrary<infer T> ? T : never;

/** Writes a random Claude Code spec as session lines, each with a uuid chained to the one before. */
function claudeCodeLines(spec: CcSpec): Item[] {
  const out: Item[] = [];
  let serial = 0;
  let parent: string | null = null;
  const line = (fields: Item): void => {
    const uuid = `u-${++serial}`;
    out.push({ parentUuid: parent, isSidechain: false, sessionId: 's-1', ...fields, uuid });
    parent = uuid;
  };
  const user = (content: unknown, extra: Item = {}): void =>
    line({ type: 'user', message: { role: 'user', content }, ...extra });
  const assistant = (id: string, block: Item): void =>
    line({ type: 'assistant', message: { id, type: 'message', role: 'assistant', content: [block] } });
  const step = (s: CcSpec['steps'][number]): void => {
    const id = `msg_${++serial}`;
    const calls = Array.from({ length: s.calls }, (_, k) => `toolu_${serial}_${k}`);
    if (s.say || calls.length === 0) assistant(id, { type: 'text', text: `saying ${serial}` });
    for (const call of calls)
      assistant(id, { type: 'tool_use', id: call, name: 'Bash', input: { command: `ls ${serial}` } });
    if (s.systemLine) line({ type: 'system', content: 'hook ran', level: 'info' });
    for (const call of calls) user([{ type: 'tool_result', tool_use_id: call, content: `result ${serial}` }]);
    if (s.lateText && calls.length > 0) assistant(id, { type: 'text', text: `done ${serial}` });
  };
  if (spec.summary) out.push({ type: 'summary', summary: 'An earlier session', leafUuid: 'u-0' });
  for (const turn of spec.turns) {
    user(turn.ask === '' ? 'question' : turn.ask);
    if (turn.meta)
      user('<local-command-caveat>Caveat: generated by local commands.</local-command-caveat>', { isMeta: true });
    // An earlier run's note inside the turn: its own orphan, which the turn's span skips.
    if (turn.earlierNote) user(formatNote(DEFAULT_NOTE_TEMPLATE, 4));
    turn.steps.forEach(step);
  }
  user(spec.task === '' ? 'task' : spec.task);
  spec.steps.forEach(step);
  return out;
}

describe('the JSON plan against a real compaction', () => {
  const approx = createApproxCounter();

  it('removes exactly the messages a real compaction removes, on random conversations and settings', async () => {
    await fc.assert(
      fc.asyncProperty(
        conversationArb,
        fc.double({ min: 0.05, max: 1.2, noNaN: true }),
        fc.integer({ min: 0, max: 3 }),
        fc.constantFrom<string | null | undefined>(undefined, null, '[{num_removed} gone]'),
        async (spec, fraction, minKeepSteps, note) => {
          const items = messagesOf(spec);
          const input = JSON.stringify(items, null, 2);
          const whole =
            (await compactText(input, 'chat.json', { target: 1_000_000, minKeepSteps, note }, approx, true))
              .conversations[0]?.plan.tokensBefore ?? 0;
          const settings = { target: Math.max(1, Math.round(whole * fraction)), minKeepSteps, note };
          const doc = await documentFor(input, 'chat.json', settings, approx);
          const real = await compactText(input, 'chat.json', settings, approx, false);
          const plan = real.conversations[0]?.plan;
          if (plan === undefined) throw new Error('no conversation');

          expect(indicesOf(doc, false)).toEqual(plan.removed);
          expect(indicesOf(doc, true)).toEqual(plan.kept);
          expect(doc.removed.messages).toBe(plan.removedCount);
          expect(doc.tokensAfter).toBe(plan.tokensAfter);
          expect(doc.targetMet).toBe(plan.targetMet);
          expect(doc.changed).toBe(real.changed);

          // What the real compaction wrote: the kept items, and the note at the index the plan gives.
          const written = JSON.parse(real.output) as Item[];
          expect(written.length).toBe(doc.messagesAfter);
          const noteGroup = doc.groups.find((g) => g.kind === 'note');
          if (noteGroup !== undefined) {
            expect(written[noteGroup.start]).toEqual({ role: 'user', content: noteGroup.text });
            written.splice(noteGroup.start, 1);
          }
          expect(written).toEqual(indicesOf(doc, true).map((i) => items[i]));
        },
      ),
      { numRuns: scaled(300), seed: 20240603 },
    );
  });

  it('removes exactly the lines a real compaction removes from random Claude Code logs, in line positions', async () => {
    await fc.assert(
      fc.asyncProperty(
        claudeCodeArb,
        fc.double({ min: 0.05, max: 1.2, noNaN: true }),
        fc.integer({ min: 0, max: 2 }),
        fc.constantFrom<string | null | undefined>(undefined, null),
        async (spec, fraction, minKeepSteps, note) => {
          const lines = claudeCodeLines(spec);
          const input = `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`;
          const whole =
            (await compactText(input, 'log.jsonl', { target: 1_000_000, minKeepSteps, note }, approx, true))
              .conversations[0]?.plan.tokensBefore ?? 0;
          const settings = { target: Math.max(1, Math.round(whole * fraction)), minKeepSteps, note };
          const doc = await documentFor(input, 'log.jsonl', settings, approx);
          const real = await compactText(input, 'log.jsonl', settings, approx, false);
          expect(doc.format).toBe('claude-code');
          expect(doc.changed).toBe(real.changed);

          // Lines are matched by uuid: kept lines may be relinked (parentUuid), the note has a fresh uuid.
          const written = real.output
            .trimEnd()
            .split('\n')
            .map((l) => JSON.parse(l) as Item);
          const inputUuids = lines.map((l) => l.uuid as string | undefined);
          const keptLines = new Set(written.map((l) => inputUuids.indexOf(l.uuid as string)).filter((k) => k >= 0));
          const pinned = lines.flatMap((l, k) => (l.type === 'summary' ? [k] : []));
          const all = lines.map((_, k) => k);
          expect([...indicesOf(doc, true), ...pinned].sort((a, b) => a - b)).toEqual(
            all.filter((k) => keptLines.has(k) || pinned.includes(k)),
          );
          expect(indicesOf(doc, false)).toEqual(all.filter((k) => !keptLines.has(k) && !pinned.includes(k)));

          // Messages count the user and assistant lines, as the note's {num_removed} does.
          const counted = (k: number): boolean => lines[k]?.type === 'user' || lines[k]?.type === 'assistant';
          expect(doc.messagesBefore).toBe(all.filter(counted).length);
          expect(doc.removed.messages).toBe(indicesOf(doc, false).filter(counted).length);
          expect(doc.messagesAfter).toBe(written.filter((l) => l.type === 'user' || l.type === 'assistant').length);
          const noteGroup = doc.groups.find((g) => g.kind === 'note');
          const fresh = written.findIndex((l) => !inputUuids.includes(l.uuid as string) && l.type !== 'summary');
          expect(noteGroup?.start ?? -1).toBe(fresh);
        },
      ),
      { numRuns: scaled(150), seed: 20240611 },
    );
  });

  it('counts every group exactly when the file fits, so its tokens add up per message', async () => {
    const items = history();
    const doc = await documentFor(
      JSON.stringify(items),
      'chat.json',
      { target: 100_000, minKeepSteps: 1, note: undefined },
      createFakeCounter(),
    );
    expect(doc.changed).toBe(false);
    expect(doc.groups.every((g) => g.kept && g.tokens === g.messages * 10)).toBe(true);
  });
});
