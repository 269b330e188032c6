/**
 * swc's tool-result pruning and its chains against Haystack's `ToolResultPruningCompactor` followed by its
 * `SlidingWindowCompactor` (hook order), end to end: random conversations written as files of every format, through
 * `swc compact --strategy prune` and `--strategy prune,window` (in process) and `compactMessages`, compared with the
 * independent model of test/reference/haystack.ts.
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { compactMessages } from '../../src/library/index.js';
import type { FormatName } from '../helpers/convert.js';
import { runSwc } from '../helpers/run-in-process.js';
import {
  applyWindow,
  approximateCounter,
  DEFAULT_OMISSION_NOTE,
  DEFAULT_PLACEHOLDER,
  slidingWindow,
  toolResultPruning,
  type HMessage,
} from '../reference/haystack.js';
import {
  ALL_FORMATS,
  itemsOfOutput,
  noteTextOf,
  randomShapes,
  readBack,
  scratch,
  shapeForResults,
  writeCase,
} from './harness.js';
import { scaled, scaledCount, scaledTimeout } from '../helpers/scale.js';

const count = approximateCounter();
const CUSTOM_PLACEHOLDER = '[gone: {tool_name}; run it again]';
const tmp = scratch();
afterAll(() => tmp.remove());

interface Case {
  readonly seed: number;
  readonly format: FormatName;
  readonly jsonl: boolean;
  readonly chain: 'prune' | 'prune,window';
  readonly minKeepSteps: number;
  readonly minTokens: number;
  readonly custom: boolean;
  readonly perMille: number;
}

const caseArb = (formats: readonly FormatName[]): fc.Arbitrary<Case> =>
  fc.record({
    seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
    format: fc.constantFrom(...formats),
    jsonl: fc.boolean(),
    chain: fc.constantFrom<Case['chain']>('prune', 'prune,window'),
    minKeepSteps: fc.constantFrom(1, 1, 2, 3),
    minTokens: fc.constantFrom(0, 10, 40, 200),
    custom: fc.boolean(),
    perMille: fc.oneof(fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 500, max: 1000 })),
  });

/** What the reference does: pruning, then (in the chain) the window on what pruning left. */
function reference(k: Case, view: readonly HMessage[], target: number) {
  const placeholder = k.custom ? CUSTOM_PLACEHOLDER : DEFAULT_PLACEHOLDER;
  const pruned = toolResultPruning(view, target, count, {
    minKeepSteps: k.minKeepSteps,
    minTokens: k.minTokens,
    placeholder,
  });
  const afterPrune = pruned?.messages ?? [...view];
  const window =
    k.chain === 'prune,window'
      ? slidingWindow(afterPrune, target, count, { minKeepSteps: k.minKeepSteps, note: DEFAULT_OMISSION_NOTE })
      : null;
  return { placeholder, pruned: pruned?.pruned ?? [], afterPrune, window };
}

describe("swc compact --strategy prune decides as Haystack's ToolResultPruningCompactor (then its window)", () => {
  it(
    'on random conversations in every format, through the command line',
    async () => {
      let pruning = 0;
      await fc.assert(
        fc.asyncProperty(caseArb(ALL_FORMATS), async (k) => {
          const c = writeCase(k.format, randomShapes(k.seed, shapeForResults(k.format)), k.jsonl);
          const whole = count(c.view.messages);
          const target = Math.max(1, Math.floor((whole * k.perMille) / 1000));
          const ref = reference(k, c.view.messages, target);
          const file = tmp.write(`${k.seed}-${c.name}`, c.text);
          const out = `${file}.out`;
          const args = [
            'compact',
            file,
            '--tokenizer',
            'approx',
            '-t',
            String(target),
            '-k',
            String(k.minKeepSteps),
            '--strategy',
            k.chain,
            '--min-tokens',
            String(k.minTokens),
            ...(k.custom ? ['--placeholder', CUSTOM_PLACEHOLDER] : []),
            '-o',
            out,
            '--json',
          ];
          const r = await runSwc(args, { cwd: tmp.dir });
          const label = { ...k, target };
          expect({ ...label, status: r.status, stderr: r.status === 0 ? '' : r.stderr }).toEqual({
            ...label,
            status: 0,
            stderr: '',
          });
          const report = JSON.parse(r.stdout) as { changed: boolean; tokensBefore: number; tokensAfter: number };
          const output = tmp.read(out);
          // Both ways: --json counts every message; a plain run decides lazily and must write the same bytes.
          const lazyOut = `${file}.lazy`;
          const lazy = await runSwc([...args.slice(0, args.indexOf('-o')), '-o', lazyOut, '-q'], { cwd: tmp.dir });
          expect({ ...label, status: lazy.status, same: lazy.status === 0 && tmp.read(lazyOut) === output }).toEqual({
            ...label,
            status: 0,
            same: true,
          });
          if (ref.pruned.length === 0 && ref.window === null) {
            expect({ ...label, changed: report.changed, same: output === c.text }).toEqual({
              ...label,
              changed: false,
              same: true,
            });
            return;
          }
          if (ref.pruned.length > 0) pruning++;
          let expectedSequence: (number | 'NOTE')[] = c.view.messages.map((_, v) => v);
          let final: HMessage[] = ref.afterPrune;
          if (ref.window !== null) {
            const text = noteTextOf(c, ref.window.removed);
            expectedSequence = [...ref.window.kept];
            if (ref.window.noteIndex !== null) expectedSequence.splice(ref.window.noteIndex, 0, 'NOTE');
            final = applyWindow(ref.afterPrune, { ...ref.window, noteText: text });
          }
          const read = readBack(c, itemsOfOutput(k.format, output, k.jsonl), ref.window !== null, expectedSequence);
          const keptPruned = ref.window === null ? ref.pruned : ref.pruned.filter((v) => ref.window?.kept.includes(v));
          expect({ ...label, pruned: read.rewritten }).toEqual({ ...label, pruned: keptPruned });
          expect({ ...label, sequence: read.sequence }).toEqual({ ...label, sequence: expectedSequence });
          expect({ ...label, before: report.tokensBefore, after: report.tokensAfter }).toEqual({
            ...label,
            before: whole,
            after: count(final),
          });
        }),
        { numRuns: scaled(500) },
      );
      // The cases really prune (a generator that stopped making long results would pass vacuously).
      expect(pruning).toBeGreaterThan(scaledCount(50, 500));
    },
    scaledTimeout(60_000),
  );
});

describe("compactMessages with strategy prune decides as Haystack's ToolResultPruningCompactor (then its window)", () => {
  it(
    'on random conversations as OpenAI chat arrays',
    async () => {
      await fc.assert(
        fc.asyncProperty(caseArb(['openai']), async (k) => {
          const c = writeCase('openai', randomShapes(k.seed, shapeForResults('openai')), true);
          const whole = count(c.view.messages);
          const target = Math.max(1, Math.floor((whole * k.perMille) / 1000));
          const ref = reference(k, c.view.messages, target);
          const result = await compactMessages(c.items, {
            format: 'openai',
            tokenizer: 'approx',
            target,
            minKeepSteps: k.minKeepSteps,
            strategy: k.chain,
            minTokens: k.minTokens,
            ...(k.custom ? { placeholder: CUSTOM_PLACEHOLDER } : {}),
          });
          const label = { ...k, target };
          const changed = ref.pruned.length > 0 || ref.window !== null;
          expect({ ...label, changed: result.changed }).toEqual({ ...label, changed });
          if (!changed) return;
          const read = readBack(c, result.messages, ref.window !== null);
          const keptPruned = ref.window === null ? ref.pruned : ref.pruned.filter((v) => ref.window?.kept.includes(v));
          expect({ ...label, pruned: read.rewritten }).toEqual({ ...label, pruned: keptPruned });
          let final: HMessage[] = ref.afterPrune;
          if (ref.window !== null)
            final = applyWindow(ref.afterPrune, { ...ref.window, noteText: noteTextOf(c, ref.window.removed) });
          expect({ ...label, after: result.plan.tokensAfter }).toEqual({ ...label, after: count(final) });
        }),
        { numRuns: scaled(200) },
      );
    },
    scaledTimeout(60_000),
  );
});
