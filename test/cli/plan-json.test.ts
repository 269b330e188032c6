/**
 * The JSON plan: its shape on a conversation worked out by hand, and on random conversations, that it removes
 * exactly the messages a real compaction (not exhaustive, as `swc compact` runs it) removes.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { countOf, planDocument, planTotals, type PlanDocument, type PlanSettings } from '../../src/cli/plan-json.js';
import { noteTemplate, planCompaction } from '../../src/core/compact.js';
import { textContent } from '../../src/core/render.js';
import { DEFAULT_NOTE_TEMPLATE, formatNote } from '../../src/core/note.js';
import type { Message, TokenCounter } from '../../src/core/types.js';
import { decodeSource } from '../../src/io/source.js';
import { compactSource, type FileResult } from '../../src/pipeline.js';
import { createApproxCounter } from '../../src/tokens/index.js';
import { createFakeCounter } from '../helpers/fake-counter.js';

type Item = Record<string, unknown>;

function compactText(text: string, file: string, settings: { target: number; minKeepSteps: number; note: string | null | undefined }, counter: TokenCounter, exhaustive: boolean): FileResult {
  return compactSource(decodeSource(Buffer.from(text), file), { ...settings, counter, exhaustive });
}

function documentFor(text: string, file: string, settings: { target: number; minKeepSteps: number; note: string | null | undefined }, counter: TokenCounter): PlanDocument {
  const result = compactText(text, file, settings, counter, true);
  const planSettings: PlanSettings = {
    target: settings.target,
    tokenizer: counter.name,
    minKeepSteps: settings.minKeepSteps,
    note: noteTemplate(settings.note),
    format: 'auto',
    counter,
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
  { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'search', arguments: '{}' } }] },
  { role: 'tool', tool_call_id: 'c1', content: 'found it' },
  { role: 'assistant', content: 'second answer' },
  { role: 'user', content: 'the current task' },
  {
    role: 'assistant',
    content: 'Looking.',
    tool_calls: ['search', 'read_file', 'read_file'].map((name, k) => ({ id: `d${k}`, type: 'function', function: { name, arguments: '{}' } })),
  },
  { role: 'tool', tool_call_id: 'd0', content: 'a' },
  { role: 'tool', tool_call_id: 'd1', content: 'b' },
  { role: 'tool', tool_call_id: 'd2', content: 'c' },
];

describe('the JSON plan', () => {
  it('lists settings, totals and every group in conversation order, the note where it is inserted', () => {
    const doc = documentFor(JSON.stringify(history()), 'chat.json', { target: 110, minKeepSteps: 1, note: undefined }, createFakeCounter());
    expect(doc).toEqual({
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
      note: { index: 1, text: formatNote(DEFAULT_NOTE_TEMPLATE, 2) },
      missReason: null,
      groups: [
        { kind: 'system', start: 0, end: 1, messages: 1, tokens: 10, kept: true },
        { kind: 'note', start: 1, end: 2, messages: 1, tokens: 10, kept: true, text: formatNote(DEFAULT_NOTE_TEMPLATE, 2) },
        { kind: 'turn', start: 1, end: 3, messages: 2, tokens: 20, kept: false },
        { kind: 'turn', start: 3, end: 7, messages: 4, tokens: 40, kept: true },
        { kind: 'task', start: 7, end: 8, messages: 1, tokens: 10, kept: true },
        { kind: 'step', start: 8, end: 12, messages: 4, tokens: 40, kept: true },
      ],
    });
  });

  it('says why the target is missed: the protected part alone', () => {
    const doc = documentFor(JSON.stringify(history()), 'chat.json', { target: 15, minKeepSteps: 1, note: null }, createFakeCounter());
    expect(doc.targetMet).toBe(false);
    expect(doc.missReason).toEqual({ kind: 'protected', protectedTokens: 20 });
    expect(doc.note).toBeNull();
    expect(doc.groups.some((g) => g.kind === 'note')).toBe(false);
  });

  it('says why the target is missed: min_keep_steps held a step over the budget', () => {
    const doc = documentFor(JSON.stringify(history()), 'chat.json', { target: 50, minKeepSteps: 1, note: null }, createFakeCounter());
    expect(doc.missReason).toEqual({ kind: 'min-keep-steps', steps: 1, stepTokens: 40, budget: 30 });
  });

  it('lists what a turn skips when an earlier note sits inside it, as an orphan of its own', () => {
    const items = history();
    items.splice(2, 0, { role: 'user', content: formatNote(DEFAULT_NOTE_TEMPLATE, 9) });
    // 13 messages; budget 110 - 20 = 90, the step takes 40, turn [4..7] 40 of the 50 left, turn [1,3] (20) goes.
    const doc = documentFor(JSON.stringify(items), 'chat.json', { target: 110, minKeepSteps: 1, note: undefined }, createFakeCounter());
    expect(doc.groups.find((g) => g.kind === 'turn')).toEqual({ kind: 'turn', start: 1, end: 4, messages: 2, tokens: 20, kept: false, skip: [2] });
    expect(doc.groups.find((g) => g.kind === 'orphan')).toEqual({ kind: 'orphan', start: 2, end: 3, messages: 1, tokens: 10, kept: false });
  });

  it('counts messages as the note does, each standing for its weight in items', () => {
    const messages: Message[] = [
      { role: 'system', content: textContent('S') },
      { role: 'user', content: textContent('old question'), weight: 2 },
      { role: 'assistant', content: textContent('old answer'), weight: 3 },
      { role: 'user', content: textContent('task') },
    ];
    const plan = planCompaction(messages, createFakeCounter(), { target: 30, exhaustive: true });
    const totals = planTotals(plan, 30, 1);
    expect(plan.noteText).toBe(formatNote(DEFAULT_NOTE_TEMPLATE, 5));
    expect([totals.messagesBefore, totals.messagesAfter, totals.removed.messages]).toEqual([7, 3, 5]);
    expect(countOf(messages, [1, 2])).toBe(5);
  });

  it('tags groups with their conversation and lists each conversation when a file holds several', () => {
    const line = JSON.stringify({ messages: history() });
    const doc = documentFor(`${line}\n${line}\n`, 'runs.jsonl', { target: 110, minKeepSteps: 1, note: undefined }, createFakeCounter());
    expect(doc.conversations?.map((c) => [c.conversation, c.where, c.messagesBefore, c.messagesAfter, c.targetMet])).toEqual([
      [0, 'line 1 "messages"', 12, 11, true],
      [1, 'line 2 "messages"', 12, 11, true],
    ]);
    expect(doc.groups.length).toBe(12);
    expect(doc.groups.every((g) => g.conversation === (doc.groups.indexOf(g) < 6 ? 0 : 1))).toBe(true);
    expect([doc.messagesBefore, doc.messagesAfter, doc.removed.messages]).toEqual([24, 22, 4]);
    expect(doc.note).toBeUndefined();
  });
});

/** A random word-ish text, sometimes empty, sometimes long. */
const text = fc.oneof(
  { weight: 1, arbitrary: fc.constant('') },
  { weight: 6, arbitrary: fc.array(fc.constantFrom('alpha', 'beta', 'gamma', '東京', 'ok', '😊', 'result:', '{"a": 1}', '\n'), { minLength: 1, maxLength: 40 }).map((w) => w.join(' ')) },
);

/** A step: an assistant message with 0-3 calls and a result for each, or just text. */
const stepArb = fc.record({ say: text, calls: fc.array(fc.constantFrom('search', 'read_file', 'write'), { maxLength: 3 }), results: text });

const conversationArb = fc.record({
  systems: fc.integer({ min: 0, max: 2 }),
  leadingOrphan: fc.boolean(),
  turns: fc.array(fc.record({ ask: text, steps: fc.array(stepArb, { maxLength: 3 }), earlierNote: fc.boolean() }), { maxLength: 4 }),
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
    const calls = s.calls.map((name) => ({ id: `call_${++id}`, type: 'function', function: { name, arguments: `{"q": "${s.say.length}"}` } }));
    out.push(calls.length > 0 ? { role: 'assistant', content: s.say === '' ? null : s.say, tool_calls: calls } : { role: 'assistant', content: s.say });
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

describe('the JSON plan against a real compaction', () => {
  const approx = createApproxCounter();

  it('removes exactly the messages a real compaction removes, on random conversations and settings', () => {
    fc.assert(
      fc.property(
        conversationArb,
        fc.double({ min: 0.05, max: 1.2, noNaN: true }),
        fc.integer({ min: 0, max: 3 }),
        fc.constantFrom<string | null | undefined>(undefined, null, '[{num_removed} gone]'),
        (spec, fraction, minKeepSteps, note) => {
          const items = messagesOf(spec);
          const input = JSON.stringify(items, null, 2);
          const whole = compactText(input, 'chat.json', { target: 1_000_000, minKeepSteps, note }, approx, true).conversations[0]?.plan.tokensBefore ?? 0;
          const settings = { target: Math.max(1, Math.round(whole * fraction)), minKeepSteps, note };
          const doc = documentFor(input, 'chat.json', settings, approx);
          const real = compactText(input, 'chat.json', settings, approx, false);
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
      { numRuns: 300, seed: 20240603 },
    );
  });

  it('counts every group exactly when the file fits, so its tokens add up per message', () => {
    const items = history();
    const doc = documentFor(JSON.stringify(items), 'chat.json', { target: 100_000, minKeepSteps: 1, note: undefined }, createFakeCounter());
    expect(doc.changed).toBe(false);
    expect(doc.groups.every((g) => g.kept && g.tokens === g.messages * 10)).toBe(true);
  });
});
