/**
 * An independent model of the sliding-window rules, written from the text of issue 2 (not from
 * src/core/compact.ts), checked against `planCompaction` on random conversations with the approx counter.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import * as o200k from 'gpt-tokenizer/encoding/o200k_base';
import { compact, planCompaction, type CompactOptions } from '../../src/core/compact.js';
import { renderMessage } from '../../src/core/render.js';
import type { Content, Message, Role, TokenCounter } from '../../src/core/types.js';
import { createApproxCounter } from '../../src/tokens/approx.js';
import { createBpeCounter } from '../../src/tokens/bpe.js';
import { deepFreeze } from '../helpers/fake-counter.js';
import { scaled } from '../helpers/scale.js';

// ---------------------------------------------------------------------------------------------------------------
// The model
// ---------------------------------------------------------------------------------------------------------------

/** Rule 10's default template, copied from the issue. */
const ISSUE_DEFAULT_TEMPLATE =
  '[{num_removed} earlier messages were removed from this conversation to free up context and cannot be recovered.]';

interface Decision {
  readonly changed: boolean;
  readonly kept: readonly number[];
  readonly removed: readonly number[];
  readonly noteIndex: number | null;
  readonly noteText: string | null;
}

interface ModelOptions {
  readonly target: number;
  readonly minKeepSteps?: number | undefined;
  readonly note?: string | null | undefined;
}

/**
 * Decides what the strategy keeps, rule by rule, as plainly as the issue states it.
 * @returns the kept and removed input indices, and the note with its output position
 */
function modelDecision(messages: readonly Message[], counter: TokenCounter, options: ModelOptions): Decision {
  const at = (i: number): Message => messages[i] as Message;
  const madeByCompaction = (m: Message): boolean => m.compaction !== undefined;
  const isSlidingWindowNote = (m: Message): boolean => m.compaction === 'sliding_window';
  const isRealUser = (m: Message): boolean => m.role === 'user' && !madeByCompaction(m);
  const size = (indices: readonly number[]): number =>
    indices.length === 0 ? 0 : counter.measure(indices.map((i) => renderMessage(at(i))));
  const everything = messages.map((_, i) => i);
  const noChange: Decision = { changed: false, kept: everything, removed: [], noteIndex: null, noteText: null };

  // Rule 1: the unbroken run of system messages at the very start, not made by compaction.
  const instructions: number[] = [];
  for (const i of everything) {
    if (at(i).role !== 'system' || madeByCompaction(at(i))) break;
    instructions.push(i);
  }

  // Rule 2: the latest real user message; none means no task and no history.
  let task: number | null = null;
  for (const i of everything) if (isRealUser(at(i))) task = i;

  // Rule 3: history between the instructions and the task, in turns opened by real user messages.
  const turns: number[][] = [];
  if (task !== null) {
    for (let i = instructions.length; i < task; i++) {
      const m = at(i);
      if (isRealUser(m)) turns.push([i]);
      else if (turns.length > 0 && !isSlidingWindowNote(m)) (turns[turns.length - 1] as number[]).push(i);
    }
  }

  // Rule 4: after the task (or the instructions), an assistant message and the tool messages right after it.
  const steps: number[][] = [];
  let open: number[] | null = null;
  for (let i = task === null ? instructions.length : task + 1; i < messages.length; i++) {
    const role = at(i).role;
    if (role === 'assistant') {
      open = [i];
      steps.push(open);
    } else if (role === 'tool' && open !== null) {
      open.push(i);
    } else {
      open = null;
    }
  }
  // Rule 4, swc's deviation (docs/strategy.md, "Steps"): in consecutive assistant messages followed by tool messages,
  // the last one's step begins at the first of them with a call one of those tool messages answers.
  const contentAt = (i: number): Content => {
    const c = at(i).content;
    return typeof c === 'function' ? c() : c;
  };
  for (let k = steps.length - 1; k > 0; k--) {
    const last = steps[k] as number[];
    if (last.length < 2) continue;
    const answers = last.slice(1).flatMap((i) => contentAt(i).results);
    let first = k;
    while (
      first > 0 &&
      (steps[first - 1] as number[]).length === 1 &&
      steps[first - 1]?.[0] === (steps[first]?.[0] as number) - 1
    )
      first--;
    const joinAt = steps
      .slice(first, k)
      .findIndex(([i]) =>
        contentAt(i as number).toolCalls.some((c) =>
          answers.some((r) => (r.id === undefined ? r.name === '' || r.name === c.name : r.id === c.id)),
        ),
      );
    if (joinAt < 0) continue;
    const joined = steps.slice(first + joinAt, k + 1).flat();
    steps.splice(first + joinAt, k + 1 - (first + joinAt), joined);
    k = first + joinAt;
  }

  // Rule 6.
  if (size(everything) <= options.target) return noChange;

  // Rule 7.
  const protectedPart = task === null ? instructions : [...instructions, task];
  const budget = options.target - size(protectedPart);
  const keep = new Set<number>(protectedPart);
  const allSteps = steps.flat();
  const allStepsSize = size(allSteps);
  let stepsRemoved = false;
  if (allStepsSize <= budget) {
    allSteps.forEach((i) => keep.add(i));
    let left = budget - allStepsSize;
    for (const turn of [...turns].reverse()) {
      const s = size(turn);
      if (s > left) break;
      left -= s;
      turn.forEach((i) => keep.add(i));
    }
  } else {
    let left = budget;
    let fitting = 0;
    for (const step of [...steps].reverse()) {
      const s = size(step);
      if (s > left) break;
      left -= s;
      fitting++;
    }
    const count = Math.max(fitting, Math.min(options.minKeepSteps ?? 1, steps.length));
    steps.slice(steps.length - count).forEach((step) => step.forEach((i) => keep.add(i)));
    stepsRemoved = count < steps.length;
  }

  // Rules 8 and 9.
  const kept = everything.filter((i) => keep.has(i));
  const removed = everything.filter((i) => !keep.has(i));
  if (removed.length === 0) return noChange;
  const template = options.note === undefined ? ISSUE_DEFAULT_TEMPLATE : options.note === '' ? null : options.note;
  if (template !== null && removed.every((i) => isSlidingWindowNote(at(i)))) return noChange;
  if (template === null) return { changed: true, kept, removed, noteIndex: null, noteText: null };

  // Rule 10: a literal replace (a replacer function never reads `$` patterns), placed after the task or the instructions.
  const noteText = template.replaceAll('{num_removed}', () => String(removed.length));
  const after = stepsRemoved && task !== null ? task : instructions.length - 1;
  const noteIndex = kept.filter((i) => i <= after).length;
  return { changed: true, kept, removed, noteIndex, noteText };
}

// ---------------------------------------------------------------------------------------------------------------
// Random conversations
// ---------------------------------------------------------------------------------------------------------------

const UNITS = [
  'a',
  'e',
  'Z',
  'q',
  'word',
  ' ',
  ' ',
  '  ',
  '\n',
  '\r\n',
  '\t',
  '.',
  ',',
  '/',
  '{',
  '}',
  '[',
  ']',
  '"',
  '\\',
  '$&',
  '0',
  '7',
  '42',
  '字',
  '語',
  'ア',
  '한',
  '😀',
  '👍🏽',
  '🇫🇷',
  'é',
  'e\u0301',
  '\u00a0',
  '<|endoftext|>',
  '{num_removed}',
];

const text: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: fc.constantFrom(...UNITS), maxLength: 40 }) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom('x', '字', '😀', 'ab '), fc.integer({ min: 1, max: 400 }))
      .map(([unit, n]) => unit.repeat(n)),
  },
);

const fewImages = fc.oneof(
  { weight: 8, arbitrary: fc.constant(0) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 2 }) },
);
const fewFiles = fc.oneof(
  { weight: 8, arbitrary: fc.constant<(string | null)[]>([]) },
  {
    weight: 1,
    arbitrary: fc.array(fc.option(fc.constantFrom('report.pdf', '', 'データ.csv'), { nil: null }), {
      minLength: 1,
      maxLength: 2,
    }),
  },
);

const textsContent: fc.Arbitrary<Content> = fc
  .record({
    texts: fc.oneof(
      { weight: 6, arbitrary: fc.array(text, { minLength: 1, maxLength: 1 }) },
      { weight: 1, arbitrary: fc.array(text, { maxLength: 3 }) },
    ),
    images: fewImages,
    files: fewFiles,
  })
  .map(({ texts, images, files }) => ({ texts, toolCalls: [], results: [], images, files }));

const toolCall = fc.record({
  name: fc.constantFrom('search', 'read_file', 'run_shell', 'ツール'),
  arguments: fc.oneof(fc.constantFrom('{}', '{"q": "x"}', '{"path": "/tmp/\\u00e9", "n": 1.0}'), text),
});

const assistantContent: fc.Arbitrary<Content> = fc
  .record({
    texts: fc.array(text, { maxLength: 1 }),
    toolCalls: fc.oneof(
      { weight: 3, arbitrary: fc.array(toolCall, { minLength: 1, maxLength: 3 }) },
      { weight: 2, arbitrary: fc.constant([]) },
    ),
    images: fewImages,
  })
  .map(({ texts, toolCalls, images }) => ({ texts, toolCalls, results: [], images, files: [] }));

const toolContent: fc.Arbitrary<Content> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc
      .array(
        fc.record({
          name: fc.constantFrom('search', 'read_file', 'run_shell'),
          text,
          error: fc.boolean(),
          images: fewImages,
          files: fc.oneof({ weight: 8, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.constant(1) }),
        }),
        { minLength: 1, maxLength: 3 },
      )
      .map((results) => ({ texts: [], toolCalls: [], results, images: 0, files: [] })),
  },
  // A tool message without results renders like any other message.
  { weight: 1, arbitrary: textsContent },
);

const CONTENT: Record<Role, fc.Arbitrary<Content>> = {
  system: textsContent,
  user: textsContent,
  assistant: assistantContent,
  tool: toolContent,
};

/** A message of a role; sometimes its content is lazy, as adapters make it. */
function message(role: Role, compaction?: string): fc.Arbitrary<Message> {
  return fc.tuple(CONTENT[role], fc.boolean()).map(([content, lazy]) => {
    const m: Message = { role, content: lazy ? () => content : content };
    return compaction === undefined ? m : { ...m, compaction };
  });
}

const earlierNoteMessage: fc.Arbitrary<Message> = fc
  .tuple(fc.nat(120), fc.constantFrom(ISSUE_DEFAULT_TEMPLATE, 'Cut {num_removed}.', 'free text'))
  .map(([n, template]) => ({
    role: 'user',
    compaction: 'sliding_window',
    content: {
      texts: [template.replaceAll('{num_removed}', String(n))],
      toolCalls: [],
      results: [],
      images: 0,
      files: [],
    },
  }));

const otherStrategyMessage: fc.Arbitrary<Message> = fc
  .tuple(
    fc.constantFrom<Role>('system', 'user', 'assistant', 'tool', 'tool'),
    fc.constantFrom('pruning', 'tool_result_clearing'),
  )
  .chain(([role, strategy]) => message(role, strategy));

const stepBlock = fc
  .tuple(
    fc.oneof({ weight: 9, arbitrary: message('assistant') }, { weight: 1, arbitrary: message('assistant', 'pruning') }),
    fc.array(
      fc.oneof({ weight: 6, arbitrary: message('tool') }, { weight: 1, arbitrary: message('tool', 'pruning') }),
      { maxLength: 3 },
    ),
  )
  .map(([call, results]) => [call, ...results]);

/** Something in no step or turn: a stray system message, an orphan result, an earlier note, another strategy's message. */
const strayBlock = fc
  .oneof(message('system'), message('tool'), earlierNoteMessage, otherStrategyMessage, message('assistant'))
  .map((m) => [m]);

const turnBlock = fc
  .tuple(
    message('user'),
    fc.array(fc.oneof({ weight: 4, arbitrary: stepBlock }, { weight: 1, arbitrary: strayBlock }), { maxLength: 3 }),
  )
  .map(([question, rest]) => [question, ...rest.flat()]);

const structuredConversation: fc.Arbitrary<Message[]> = fc
  .tuple(
    fc.array(message('system'), { maxLength: 2 }),
    fc.array(
      fc.oneof(
        { weight: 5, arbitrary: turnBlock },
        { weight: 1, arbitrary: strayBlock },
        { weight: 1, arbitrary: stepBlock },
      ),
      { maxLength: 5 },
    ),
    fc.option(message('user'), { nil: null, freq: 8 }),
    fc.array(fc.oneof({ weight: 5, arbitrary: stepBlock }, { weight: 1, arbitrary: strayBlock }), { maxLength: 5 }),
  )
  .map(([instructions, history, task, steps]) => [
    ...instructions,
    ...history.flat(),
    ...(task === null ? [] : [task]),
    ...steps.flat(),
  ]);

const anyMessage: fc.Arbitrary<Message> = fc.oneof(
  message('system'),
  message('user'),
  message('assistant'),
  message('tool'),
  earlierNoteMessage,
  otherStrategyMessage,
);

const conversation: fc.Arbitrary<Message[]> = fc.oneof(
  { weight: 5, arbitrary: structuredConversation },
  { weight: 1, arbitrary: fc.array(anyMessage, { maxLength: 12 }) },
);

const noteOption = fc.constantFrom<string | null | undefined>(
  undefined,
  undefined,
  null,
  '',
  'Cut {num_removed}.',
  '{num_removed}',
  '[{num_removed}] $& $1 {x} {num_removed}}',
  'No placeholder here.',
);

const settings = fc.record({
  /** The target as thousandths of the conversation's size, so targets land where decisions change. */
  perMille: fc.oneof(
    { weight: 1, arbitrary: fc.integer({ min: -50, max: 0 }) },
    { weight: 12, arbitrary: fc.integer({ min: 0, max: 1100 }) },
  ),
  minKeepSteps: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
  note: noteOption,
});

function sizeOf(messages: readonly Message[], counter: TokenCounter): number {
  return messages.length === 0 ? 0 : counter.measure(messages.map((m) => renderMessage(m)));
}

function optionsFor(
  messages: readonly Message[],
  counter: TokenCounter,
  s: { perMille: number; minKeepSteps?: number | undefined; note?: string | null | undefined },
): CompactOptions {
  return {
    target: Math.floor((sizeOf(messages, counter) * s.perMille) / 1000),
    minKeepSteps: s.minKeepSteps,
    note: s.note,
  };
}

function decisionOf(messages: readonly Message[], counter: TokenCounter, options: CompactOptions): Decision {
  const plan = planCompaction(messages, counter, options);
  return {
    changed: plan.changed,
    kept: plan.kept,
    removed: plan.removed,
    noteIndex: plan.noteIndex,
    noteText: plan.noteText,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------------------------

describe('planCompaction against an independent model of the rules', () => {
  it('decides exactly as the model on random conversations with the approx counter', () => {
    fc.assert(
      fc.property(conversation, settings, (messages, s) => {
        deepFreeze(messages);
        const counter = createApproxCounter();
        const options = optionsFor(messages, counter, s);
        const expected = modelDecision(messages, createApproxCounter(), options);
        expect(decisionOf(messages, counter, options)).toEqual(expected);
        expect(decisionOf(messages, createApproxCounter(), { ...options, exhaustive: true })).toEqual(expected);
      }),
      { numRuns: scaled(4000) },
    );
  });

  it('decides exactly as the model with the o200k_base counter', () => {
    const counter = createBpeCounter('o200k_base', o200k);
    fc.assert(
      fc.property(conversation, settings, (messages, s) => {
        const options = optionsFor(messages, counter, s);
        expect(decisionOf(messages, counter, options)).toEqual(modelDecision(messages, counter, options));
      }),
      { numRuns: scaled(300) },
    );
  });

  it('reports the size of the output it describes', () => {
    fc.assert(
      fc.property(conversation, settings, (messages, s) => {
        const counter = createApproxCounter();
        const options = optionsFor(messages, counter, s);
        const plan = planCompaction(messages, counter, { ...options, exhaustive: true });
        const out = compact(messages, counter, options) ?? messages;
        expect(plan.tokensBefore).toBe(sizeOf(messages, counter));
        expect(plan.tokensAfter).toBe(sizeOf(out, counter));
        expect(plan.targetMet).toBe(plan.tokensAfter <= options.target);
      }),
      { numRuns: scaled(1000) },
    );
  });
});

describe('properties that follow from the rules', () => {
  it('changes nothing on a second compaction with the same settings', () => {
    fc.assert(
      fc.property(conversation, settings, (messages, s) => {
        const counter = createApproxCounter();
        const options = optionsFor(messages, counter, s);
        const once = compact(messages, counter, options);
        if (once === null) return;
        expect(compact(once, counter, options)).toBeNull();
      }),
      { numRuns: scaled(2000) },
    );
  });

  it('never leaves more than one note after compacting', () => {
    fc.assert(
      fc.property(conversation, settings, (messages, s) => {
        const counter = createApproxCounter();
        const out = compact(messages, counter, optionsFor(messages, counter, s));
        if (out === null) return;
        expect(out.filter((m) => m.compaction === 'sliding_window').length).toBeLessThanOrEqual(1);
      }),
      { numRuns: scaled(1000) },
    );
  });

  it('always keeps the leading instructions and the task', () => {
    fc.assert(
      fc.property(conversation, settings, (messages, s) => {
        const counter = createApproxCounter();
        const plan = planCompaction(messages, counter, optionsFor(messages, counter, s));
        const kept = new Set(plan.kept);
        for (
          let i = 0;
          i < messages.length && messages[i]?.role === 'system' && messages[i]?.compaction === undefined;
          i++
        ) {
          expect(kept.has(i)).toBe(true);
        }
        const task = messages.map((m) => m.role === 'user' && m.compaction === undefined).lastIndexOf(true);
        if (task >= 0) expect(kept.has(task)).toBe(true);
      }),
      { numRuns: scaled(1000) },
    );
  });

  // Turns and steps are kept newest first and the first that does not fit stops the walk, so a larger budget
  // only lengthens the kept suffix (or switches from "some steps" to "all steps and some turns"): what a smaller
  // target keeps, a larger one keeps too. This would not hold for a walk that skipped a turn too big and went on.
  it('keeps everything a smaller target keeps when the target grows, and never fewer output messages', () => {
    fc.assert(
      fc.property(conversation, settings, fc.integer({ min: 0, max: 1100 }), (messages, s, otherPerMille) => {
        const counter = createApproxCounter();
        const a = optionsFor(messages, counter, s);
        const b = optionsFor(messages, counter, { ...s, perMille: otherPerMille });
        const [small, large] = a.target <= b.target ? [a, b] : [b, a];
        const smallPlan = planCompaction(messages, counter, small);
        const largePlan = planCompaction(messages, counter, large);
        const largeKept = new Set(largePlan.kept);
        for (const i of smallPlan.kept) expect(largeKept.has(i)).toBe(true);
        const outputLength = (p: typeof smallPlan): number => p.kept.length + (p.noteText === null ? 0 : 1);
        expect(outputLength(largePlan)).toBeGreaterThanOrEqual(outputLength(smallPlan));
      }),
      { numRuns: scaled(1500) },
    );
  });
});
