/**
 * swc's offloading and its chain with the window against Haystack's `ToolResultOffloadHook` (`OffloadOverChars`,
 * applied to a whole transcript as swc documents it) followed by its `SlidingWindowCompactor`, end to end: random
 * conversations written as files of every format, through `swc compact --strategy offload` and `offload,window` (in
 * process), compared with test/reference/haystack.ts: which results go to the store, the pointer left for each, what
 * the window keeps after, and the figures; then `swc restore` gives the input back byte for byte.
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import type { FormatName } from '../helpers/convert.js';
import { runSwc } from '../helpers/run-in-process.js';
import { applyWindow, approximateCounter, DEFAULT_OMISSION_NOTE, offloadCandidates, offloadPointer, resultStepOf, slidingWindow, type HMessage } from '../reference/haystack.js';
import { ALL_FORMATS, isNoteSwitchCorner, itemsOfOutput, noteTextOf, randomShapes, runs, scratch, shapeForResults, writeCase } from './harness.js';

const count = approximateCounter();
const tmp = scratch();
afterAll(() => tmp.remove());

interface Case {
  readonly seed: number;
  readonly format: FormatName;
  readonly jsonl: boolean;
  readonly chain: 'offload' | 'offload,window';
  readonly minKeepSteps: number;
  readonly over: number;
  readonly perMille: number;
}

const caseArb = fc.record({
  seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
  format: fc.constantFrom(...ALL_FORMATS),
  jsonl: fc.boolean(),
  chain: fc.constantFrom<Case['chain']>('offload', 'offload,window'),
  minKeepSteps: fc.constantFrom(1, 1, 2, 3),
  over: fc.constantFrom(50, 200, 600, 2000),
  perMille: fc.oneof(fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 400, max: 1000 })),
});

/**
 * The store reference swc writes for a result (docs/cli.md, "The offload store"): the store folder, the input's path
 * as named, then `{step}_{tool}_{call id}-{first 16 hex of the text's sha256}.txt`, relative to the output's folder.
 */
function referenceOf(store: string, input: string, step: number, tool: string, id: string, text: string): string {
  const hash = createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 16);
  return `${store}/${input}/${step}_${tool}_${id}-${hash}.txt`;
}

/** Every string in a parsed item that is a pointer. */
function pointersIn(value: unknown): string[] {
  if (typeof value === 'string') return value.startsWith('Tool result offloaded to ') ? [value] : [];
  if (Array.isArray(value)) return value.flatMap(pointersIn);
  if (typeof value === 'object' && value !== null) return Object.values(value).flatMap(pointersIn);
  return [];
}

describe("swc compact --strategy offload decides as Haystack's ToolResultOffloadHook (then its window)", () => {
  it('on random conversations in every format, through the command line, and restores byte for byte', async () => {
    let n = 0;
    const seen = { offloaded: 0, windowed: 0, restored: 0 };
    await fc.assert(
      fc.asyncProperty(caseArb, async (k) => {
        const c = writeCase(k.format, randomShapes(k.seed, shapeForResults(k.format)), k.jsonl);
        fc.pre(!isNoteSwitchCorner(c.view.messages));
        const whole = count(c.view.messages);
        const target = Math.max(1, Math.floor((whole * k.perMille) / 1000));
        const name = `o${n++}-${c.name}`;
        const store = `store-${n}`;
        tmp.write(name, c.text);

        // The reference: Haystack's offloading of every candidate, each result replaced by its pointer.
        const candidates = offloadCandidates(c.view.messages, { minKeepSteps: k.minKeepSteps, over: k.over });
        const stepOf = resultStepOf(c.view.messages);
        const view: HMessage[] = c.view.messages.map((m, v) => {
          if (!candidates.includes(v)) return m;
          const r = m.results[0] as HMessage['results'][number];
          const pointer = offloadPointer(referenceOf(store, name, stepOf.get(v) ?? 0, r.toolName, r.id ?? '', r.text), r.text);
          return { ...m, results: [{ ...r, text: pointer }], meta: { ...m.meta, offloaded: true } };
        });
        const window = k.chain === 'offload,window' ? slidingWindow(view, target, count, { minKeepSteps: k.minKeepSteps, note: DEFAULT_OMISSION_NOTE }) : null;

        const r = await runSwc(['compact', name, '--tokenizer', 'approx', '-t', String(target), '-k', String(k.minKeepSteps), '--strategy', k.chain, '--offload-dir', store, '--offload-over', String(k.over), '-o', `${name}.out`, '--json'], { cwd: tmp.dir });
        const label = { ...k, target };
        expect({ ...label, status: r.status, stderr: r.status === 0 ? '' : r.stderr }).toEqual({ ...label, status: 0, stderr: '' });
        const report = JSON.parse(r.stdout) as { changed: boolean; tokensBefore: number; tokensAfter: number };
        const output = tmp.read(`${tmp.dir}/${name}.out`);
        if (candidates.length === 0 && window === null) {
          expect({ ...label, changed: report.changed, same: output === c.text }).toEqual({ ...label, changed: false, same: true });
          return;
        }
        if (candidates.length > 0) seen.offloaded++;
        if (window !== null) seen.windowed++;
        const kept = window === null ? c.view.messages.map((_, v) => v) : window.kept;
        // Each kept offloaded result holds exactly the reference's pointer; nothing else does.
        const outItems = itemsOfOutput(k.format, output, k.jsonl);
        const expectedPointers = candidates.filter((v) => kept.includes(v)).map((v) => (view[v] as HMessage).results[0]?.text);
        expect({ ...label, pointers: outItems.flatMap(pointersIn) }).toEqual({ ...label, pointers: expectedPointers });
        const final = window === null ? view : applyWindow(view, { ...window, noteText: noteTextOf(c, window.removed) });
        expect({ ...label, before: report.tokensBefore, after: report.tokensAfter }).toEqual({ ...label, before: whole, after: count(final) });
        if (window === null) {
          // Nothing removed: restore gives the input back byte for byte, finding the store from the pointers.
          const back = await runSwc(['restore', `${name}.out`, '-o', `${name}.back`], { cwd: tmp.dir });
          expect({ ...label, status: back.status, stderr: back.stderr, same: back.status === 0 && tmp.read(`${tmp.dir}/${name}.back`) === c.text }).toEqual({ ...label, status: 0, stderr: back.stderr, same: true });
          seen.restored++;
        }
      }),
      { numRuns: runs(300) },
    );
    // The cases really offload, cut and restore (a generator that stopped making long results would pass vacuously).
    expect(Math.min(seen.offloaded, seen.windowed, seen.restored)).toBeGreaterThan(20);
  }, runs(90_000));
});
