/**
 * `swc replay` against Haystack's `CompactionHook`, end to end: random long runs written as files of every format (and
 * as library arrays), replayed by the command line (`--json`) and by `replay()`, and compared call by call with the
 * reference replay of test/reference/hook.ts driving the reference compactors: the same calls, the same compacted
 * flags, the same tokens sent.
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { replay } from '../../src/replay/index.js';
import type { ReplayRun } from '../../src/replay/types.js';
import { writeAiSdk } from '../helpers/ai-sdk.js';
import type { Conversation, FormatName } from '../helpers/convert.js';
import { runSwc } from '../helpers/run-in-process.js';
import {
  applyWindow,
  approximateCounter,
  slidingWindow,
  DEFAULT_OMISSION_NOTE,
  DEFAULT_PLACEHOLDER,
  type HMessage,
} from '../reference/haystack.js';
import { pruningCompactor, replayReference, type HCompactor } from '../reference/hook.js';
import {
  ALL_FORMATS,
  randomShapes,
  runs,
  scratch,
  shapeForResults,
  viewOf,
  writeCase,
  type WrittenCase,
} from '../differential/harness.js';
import { responsesReread } from './responses-reread.js';

const count = approximateCounter();
const tmp = scratch();
afterAll(() => tmp.remove());

/** The policies every case replays, as `--strategy` takes them. */
const POLICIES = ['none', 'window', 'prune', 'prune,window'] as const;

/** Thresholds as typed and as Haystack holds them (doubles): 0.55 and 0.29 have no exact binary form. */
const SHARES = [
  ['0.7', '0.4'],
  ['0.55', '0.29'],
  ['0.9', '0.5'],
  ['1', '0.3'],
] as const;

interface Case {
  readonly seed: number;
  readonly parts: number;
  readonly format: FormatName;
  readonly jsonl: boolean;
  readonly minKeepSteps: number;
  readonly minTokens: number;
  readonly share: number;
  /** The window as a share (per mille) of the whole run's tokens. */
  readonly perMille: number;
}

const caseArb = (formats: readonly FormatName[]): fc.Arbitrary<Case> =>
  fc.record({
    seed: fc.integer({ min: 1, max: 2 ** 30 }),
    parts: fc.integer({ min: 1, max: 5 }),
    format: fc.constantFrom(...formats),
    jsonl: fc.boolean(),
    minKeepSteps: fc.constantFrom(1, 1, 2, 3),
    minTokens: fc.constantFrom(0, 20, 200),
    share: fc.integer({ min: 0, max: SHARES.length - 1 }),
    perMille: fc.integer({ min: 150, max: 1300 }),
  });

/**
 * A long run: several random conversations one after another (instructions only at the start), so the history
 * grows through many calls, tasks and steps.
 */
function longRun(k: Case, format: FormatName): Conversation {
  const shape = shapeForResults(format);
  const out = [...randomShapes(k.seed, shape)];
  for (let p = 1; p < k.parts; p++) {
    // Each part opens with a new task, so two parts never join into one message (a Responses run of items).
    out.push({
      role: 'user',
      texts: [`next task ${p}: flight refund order-${k.seed % 1000}-${p}`],
      images: 0,
      files: [],
    });
    out.push(...randomShapes(k.seed + p * 7919, shape).filter((m) => shape.midSystem || m.role !== 'system'));
  }
  return out;
}

/** The reference's compactors of a policy, each its own hook, in order. */
function compactorsOf(policy: string, k: Case, weights: WeakMap<HMessage, number>): HCompactor[] {
  if (policy === 'none') return [];
  return policy.split(',').map((s) => {
    if (s === 'prune')
      return pruningCompactor({
        minKeepSteps: k.minKeepSteps,
        minTokens: k.minTokens,
        placeholder: DEFAULT_PLACEHOLDER,
      });
    return (messages, target, counter) => {
      const result = slidingWindow(messages, target, counter, {
        minKeepSteps: k.minKeepSteps,
        note: DEFAULT_OMISSION_NOTE,
      });
      if (result === null) return null;
      // The note counts what it replaced in the file's own items (docs/strategy.md), as test/differential does.
      const items = result.removed.reduce((n, i) => n + (weights.get(messages[i] as HMessage) ?? 1), 0);
      const noteText =
        result.noteText === null ? null : DEFAULT_OMISSION_NOTE.split('{num_removed}').join(String(items));
      return applyWindow(messages, { ...result, noteText });
    };
  });
}

/** What the reference replay says of each policy, in the view's terms. */
function expected(c: WrittenCase, k: Case, window: number) {
  const view = c.view.messages;
  const [at, to] = SHARES[k.share] as readonly [string, string];
  const weights = new WeakMap<HMessage, number>();
  view.forEach((m, v) => weights.set(m, Math.max(1, (c.view.items[v] as readonly number[]).length)));
  const policies = POLICIES.map((policy) => ({
    policy,
    calls: replayReference(
      view,
      compactorsOf(policy, k, weights),
      count,
      { contextWindow: window, compactAt: Number(at), compactTo: Number(to) },
      c.format === 'responses' ? responsesReread(c, weights) : undefined,
    ).map((c) => ({ message: c.message, compacted: c.compacted, tokens: c.tokens })),
  }));
  return policies;
}

/** A replay's calls, their messages moved into the view's terms. */
function actual(report: ReplayRun, viewOfItem: readonly number[]) {
  return report.policies.map((p) => ({
    policy: p.strategy,
    calls: p.calls.map((c) => ({
      message: viewOfItem[c.message] as number,
      compacted: c.compacted,
      tokens: c.tokens,
    })),
  }));
}

/** The window of a case: a share of the whole run, so that some runs compact often and some never. */
function windowOf(view: readonly HMessage[], k: Case): number {
  return Math.max(20, Math.floor((count(view) * k.perMille) / 1000));
}

describe("swc replay runs as Haystack's CompactionHook before every call", () => {
  it(
    'on random long runs in every format, through the command line',
    async () => {
      const property = fc.asyncProperty(caseArb(ALL_FORMATS), async (k) => {
        const c = writeCase(k.format, longRun(k, k.format), k.jsonl);
        // The one corner where swc keeps more on purpose has its own test (test/core/note-switch.test.ts).
        const window = windowOf(c.view.messages, k);
        const want = expected(c, k, window);
        const [at, to] = SHARES[k.share] as readonly [string, string];
        const file = tmp.write(`${k.seed}-${c.name}`, c.text);
        const r = await runSwc(
          [
            'replay',
            file,
            '--json',
            '--tokenizer',
            'approx',
            '--context-window',
            String(window),
            '--compact-at',
            at,
            '--compact-to',
            to,
            '-k',
            String(k.minKeepSteps),
            '--min-tokens',
            String(k.minTokens),
            ...POLICIES.flatMap((p) => ['--strategy', p]),
          ],
          { cwd: tmp.dir },
        );
        const label = { ...k, window };
        expect({ ...label, status: r.status, stderr: r.stderr }).toEqual({ ...label, status: 0, stderr: '' });
        const report = JSON.parse(r.stdout) as ReplayRun;
        expect({ ...label, policies: actual(report, c.view.viewOfItem) }).toEqual({
          ...label,
          policies: want,
        });
      });
      await fc.assert(property, { numRuns: runs(80) });
      // A Responses run whose earlier note, removed by one compaction, stood between a call with no text and the next
      // reply (they read back as one message), found at full strength: replayed at every scale.
      await fc.assert(property, { seed: -612699007, path: '73:6:6:6:6', endOnFailure: true });
    },
    runs(120_000),
  );

  it(
    'on random long runs as OpenAI chat and AI SDK message arrays, through replay()',
    async () => {
      await fc.assert(
        fc.asyncProperty(caseArb(['openai', 'ai-sdk' as FormatName]), async (k) => {
          const conversation = longRun(k, 'openai');
          const written: WrittenCase =
            k.format === 'openai' ? writeCase('openai', conversation, true) : aiSdkCase(conversation);
          const window = windowOf(written.view.messages, k);
          const want = expected(written, k, window);
          const [at, to] = SHARES[k.share] as readonly [string, string];
          const report = await replay(written.items, {
            format: k.format === 'openai' ? 'openai' : 'ai-sdk',
            tokenizer: 'approx',
            contextWindow: window,
            compactAt: Number(at),
            compactTo: Number(to),
            minKeepSteps: k.minKeepSteps,
            minTokens: k.minTokens,
            strategies: POLICIES,
          });
          const label = { ...k, window };
          expect({ ...label, policies: actual(report, written.view.viewOfItem) }).toEqual({
            ...label,
            policies: want,
          });
        }),
        { numRuns: runs(80) },
      );
    },
    runs(120_000),
  );
});

function aiSdkCase(conversation: Conversation): WrittenCase {
  const written = writeAiSdk(conversation, 'model');
  return {
    format: 'openai',
    name: 'ai-sdk.json',
    text: '',
    items: written.items,
    view: viewOf(conversation, written.itemOf, written.items.length),
  };
}
