/**
 * swc's sliding window against Haystack's `SlidingWindowCompactor`, end to end: random conversations written as files
 * of every format, compacted by `swc compact` (in process) and by `compactMessages`, read back, and compared with the
 * independent model of test/reference/haystack.ts: what is kept, where the note goes, its text, and the figures.
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { compactMessages } from '../../src/library/index.js';
import { writeAiSdk } from '../helpers/ai-sdk.js';
import type { FormatName } from '../helpers/convert.js';
import { runSwc } from '../helpers/run-in-process.js';
import {
  applyWindow,
  approximateCounter,
  DEFAULT_OMISSION_NOTE,
  slidingWindow,
  type HMessage,
  type WindowResult,
} from '../reference/haystack.js';
import {
  ALL_FORMATS,
  isLiteralNoteCorner,
  withLiteralNote,
  itemsOfOutput,
  noteTextOf,
  randomShapes,
  readBack,
  scratch,
  shapeOf,
  viewOf,
  writeCase,
  type WrittenCase,
} from './harness.js';
import { scaled, scaledTimeout } from '../helpers/scale.js';

const count = approximateCounter();
const CUSTOM = 'Dropped {num_removed} older messages.';
// Haystack's parametrised custom notes (test_omission_note_can_be_customized): a placeholder, text used as written,
// braces of its own.
const HAYSTACK_NOTES = {
  placeholder: 'Dropped {num_removed} messages.',
  literal: 'Some history is missing.',
  braces: 'Gone: {other} x{num_removed}',
} as const;
const tmp = scratch();
afterAll(() => tmp.remove());

type NoteChoice = 'default' | 'none' | 'custom' | keyof typeof HAYSTACK_NOTES;
const templateOf = (note: NoteChoice): string | null =>
  note === 'default'
    ? DEFAULT_OMISSION_NOTE
    : note === 'custom'
      ? CUSTOM
      : note === 'none'
        ? null
        : HAYSTACK_NOTES[note];
const noteArgs = (note: NoteChoice): string[] => {
  const template = templateOf(note);
  return note === 'default' ? [] : template === null ? ['--no-note'] : ['--note', template];
};
/** Where a case puts an earlier run's note of its template (the literal one is found by its text only there). */
type Earlier = 'none' | 'after-instructions' | 'after-task';

interface Case {
  readonly seed: number;
  readonly format: FormatName;
  readonly jsonl: boolean;
  readonly note: NoteChoice;
  readonly minKeepSteps: number;
  readonly perMille: number;
  readonly earlier: Earlier;
}

const caseArb = (formats: readonly FormatName[]): fc.Arbitrary<Case> =>
  fc.record({
    seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
    format: fc.constantFrom(...formats),
    jsonl: fc.boolean(),
    note: fc.constantFrom<NoteChoice>(
      'default',
      'default',
      'none',
      'custom',
      'placeholder',
      'literal',
      'literal',
      'braces',
    ),
    minKeepSteps: fc.constantFrom(0, 1, 1, 2, 3),
    perMille: fc.oneof(fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 300, max: 1000 })),
    earlier: fc.constantFrom<Earlier>('none', 'after-instructions', 'after-task'),
  });

/** The case's conversation: random shapes, with an earlier run's note of its template where one can stand. */
function conversationOf(k: Case, format: FormatName): ReturnType<typeof randomShapes> {
  const conversation = randomShapes(k.seed, shapeOf(format));
  const template = templateOf(k.note);
  if (k.earlier === 'none' || template === null) return conversation;
  return withLiteralNote(
    conversation,
    template.split('{num_removed}').join(String((k.seed % 40) + 1)),
    k.earlier === 'after-task',
  );
}

function withNote(messages: readonly HMessage[], result: WindowResult, text: string | null): HMessage[] {
  return applyWindow(messages, { ...result, noteText: text });
}

describe("swc compact decides as Haystack's SlidingWindowCompactor", () => {
  it(
    'on random conversations in every format, through the command line',
    async () => {
      const property = fc.asyncProperty(caseArb(ALL_FORMATS), async (k) => {
        const c = writeCase(k.format, conversationOf(k, k.format), k.jsonl);
        // The one corner where swc keeps more on purpose has its own test (test/core/note-switch.test.ts).
        fc.pre(!isLiteralNoteCorner(c.view.messages, templateOf(k.note)));
        const whole = count(c.view.messages);
        const target = Math.max(1, Math.floor((whole * k.perMille) / 1000));
        const template = templateOf(k.note);
        const ref = slidingWindow(c.view.messages, target, count, { minKeepSteps: k.minKeepSteps, note: template });
        const file = tmp.write(`${k.seed}-${c.name}`, c.text);
        const out = `${file}.out`;
        const r = await runSwc(
          [
            'compact',
            file,
            '--tokenizer',
            'approx',
            '-t',
            String(target),
            '-k',
            String(k.minKeepSteps),
            ...noteArgs(k.note),
            '-o',
            out,
            '--json',
          ],
          { cwd: tmp.dir },
        );
        const label = { ...k, target };
        expect({ ...label, status: r.status, stderr: r.status === 0 ? '' : r.stderr }).toEqual({
          ...label,
          status: 0,
          stderr: '',
        });
        const report = JSON.parse(r.stdout) as {
          changed: boolean;
          tokensBefore: number;
          tokensAfter: number;
          note: { text: string } | null;
        };
        const output = tmp.read(out);
        if (ref === null) {
          expect({ ...label, changed: report.changed, same: output === c.text }).toEqual({
            ...label,
            changed: false,
            same: true,
          });
          return;
        }
        const noteText = template === null ? null : noteTextOf(c, ref.removed, template);
        const expectedSequence: (number | 'NOTE')[] = [...ref.kept];
        if (noteText !== null && ref.noteIndex !== null) expectedSequence.splice(ref.noteIndex, 0, 'NOTE');
        const { sequence } = readBack(c, itemsOfOutput(k.format, output, k.jsonl), true, expectedSequence);
        expect({ ...label, sequence }).toEqual({ ...label, sequence: expectedSequence });
        expect({ ...label, note: report.note?.text ?? null }).toEqual({ ...label, note: noteText });
        const after = count(withNote(c.view.messages, ref, noteText));
        expect({ ...label, before: report.tokensBefore, after: report.tokensAfter }).toEqual({
          ...label,
          before: whole,
          after,
        });
      });
      await fc.assert(property, { numRuns: scaled(700) });
      // A run of Anthropic assistant calls whose results answer only the last, matched by id, found at full strength: replayed at every scale.
      await fc.assert(property, { seed: 486283563, path: '363:3:3:10:4:5', endOnFailure: true });
      // The same in Gemini, whose functionCall/functionResponse ids the join must read: replayed at every scale.
      await fc.assert(property, { seed: 25465738, path: '679:32:31:38:32', endOnFailure: true });
    },
    scaledTimeout(60_000),
  );
});

describe("compactMessages decides as Haystack's SlidingWindowCompactor", () => {
  it(
    'on random conversations as OpenAI chat and AI SDK message arrays',
    async () => {
      const property = fc.asyncProperty(caseArb(['openai', 'ai-sdk' as FormatName]), async (k) => {
        const conversation = conversationOf(k, 'openai');
        const written = k.format === 'openai' ? writeCase('openai', conversation, true) : aiSdkCase(conversation);
        const items = written.items;
        fc.pre(!isLiteralNoteCorner(written.view.messages, templateOf(k.note)));
        const whole = count(written.view.messages);
        const target = Math.max(1, Math.floor((whole * k.perMille) / 1000));
        const template = templateOf(k.note);
        const ref = slidingWindow(written.view.messages, target, count, {
          minKeepSteps: k.minKeepSteps,
          note: template,
        });
        const result = await compactMessages(items, {
          format: k.format === 'openai' ? 'openai' : 'ai-sdk',
          tokenizer: 'approx',
          target,
          minKeepSteps: k.minKeepSteps,
          note: template,
        });
        const label = { ...k, target };
        if (ref === null) {
          expect({ ...label, changed: result.changed }).toEqual({ ...label, changed: false });
          return;
        }
        const noteText = template === null ? null : noteTextOf(written, ref.removed, template);
        const expectedSequence: (number | 'NOTE')[] = [...ref.kept];
        if (noteText !== null && ref.noteIndex !== null) expectedSequence.splice(ref.noteIndex, 0, 'NOTE');
        const sequence: (number | 'NOTE')[] = [];
        for (const m of result.messages) {
          const at = items.indexOf(m);
          if (at === -1) sequence.push('NOTE');
          else if (sequence[sequence.length - 1] !== written.view.viewOfItem[at])
            sequence.push(written.view.viewOfItem[at] as number);
        }
        expect({ ...label, sequence }).toEqual({ ...label, sequence: expectedSequence });
        expect({ ...label, note: result.plan.noteText }).toEqual({ ...label, note: noteText });
        expect({ ...label, after: result.plan.tokensAfter }).toEqual({
          ...label,
          after: count(withNote(written.view.messages, ref, noteText)),
        });
      });
      await fc.assert(property, { numRuns: scaled(300) });
      // The same in AI SDK messages, whose calls and results pair by toolCallId, found at full strength: replayed at every scale.
      await fc.assert(property, { seed: 839337168, path: '268:32:33:33', endOnFailure: true });
    },
    scaledTimeout(60_000),
  );
});

describe("a batch run decides as Haystack's SlidingWindowCompactor for every file", () => {
  it(
    'on directories of random conversations in every format, through worker threads',
    async () => {
      let batch = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.array(caseArb(ALL_FORMATS), { minLength: 10, maxLength: 25 }),
          fc.integer({ min: 50, max: 3000 }),
          fc.constantFrom<NoteChoice>('default', 'none', 'custom', 'literal', 'braces'),
          fc.constantFrom(0, 1, 2),
          async (cases, target, note, minKeepSteps) => {
            const dir = `batch-${batch++}`;
            const written = cases.map((k, n) => {
              const c = writeCase(k.format, conversationOf({ ...k, note }, k.format), k.jsonl);
              return { k, c, file: tmp.write(`${dir}-in-${n}-${c.name}`, c.text), name: `${dir}-in-${n}-${c.name}` };
            });
            const inputs = written.filter((w) => !isLiteralNoteCorner(w.c.view.messages, templateOf(note)));
            fc.pre(inputs.length > 0);
            const r = await runSwc(
              [
                'compact',
                ...inputs.map((w) => w.name),
                '--out-dir',
                `${dir}-out`,
                '--jobs',
                '2',
                '--tokenizer',
                'approx',
                '-t',
                String(target),
                '-k',
                String(minKeepSteps),
                ...noteArgs(note),
                '-qq',
              ],
              { cwd: tmp.dir },
            );
            expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
            const template = templateOf(note);
            for (const w of inputs) {
              const ref = slidingWindow(w.c.view.messages, target, count, { minKeepSteps, note: template });
              const output = tmp.read(`${tmp.dir}/${dir}-out/${w.name}`);
              const label = { file: w.name, ...w.k, target, note, minKeepSteps };
              if (ref === null) {
                expect({ ...label, same: output === w.c.text }).toEqual({ ...label, same: true });
                continue;
              }
              const noteText = template === null ? null : noteTextOf(w.c, ref.removed, template);
              const expectedSequence: (number | 'NOTE')[] = [...ref.kept];
              if (noteText !== null && ref.noteIndex !== null) expectedSequence.splice(ref.noteIndex, 0, 'NOTE');
              expect({
                ...label,
                sequence: readBack(w.c, itemsOfOutput(w.k.format, output, w.k.jsonl), true, expectedSequence).sequence,
              }).toEqual({ ...label, sequence: expectedSequence });
            }
          },
        ),
        { numRuns: scaled(4) },
      );
    },
    scaledTimeout(120_000),
  );
});

function aiSdkCase(conversation: ReturnType<typeof randomShapes>): WrittenCase {
  const written = writeAiSdk(conversation, 'model');
  return {
    format: 'openai',
    name: 'ai-sdk.json',
    text: '',
    items: written.items,
    view: viewOf(conversation, written.itemOf, written.items.length),
  };
}
