/**
 * The figures every output gives: the exact tokens before and after (an estimate marked ≈ only for big files), the
 * percentage saved, and batch totals that say when they hold estimates.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { changeText, outcomeLine } from '../../src/cli/result-line.js';
import { decodeSource } from '../../src/io/source.js';
import { renderMessage } from '../../src/core/render.js';
import type { Message } from '../../src/core/types.js';
import { estimateBefore } from '../../src/outcome/before.js';
import { compactSource, EXACT_COUNT_UP_TO, type FileResult } from '../../src/pipeline/index.js';
import { createApproxCounter } from '../../src/tokens/approx.js';
import { ROOT, tempDir } from '../helpers/cli.js';
import { haystackCodec, openaiCodec, transcriptFileArb } from '../helpers/conversation-arbitraries.js';
import { runSwc } from '../helpers/run-in-process.js';

const counter = createApproxCounter();
const SAMPLE = path.join(ROOT, 'fixtures/sample.jsonl');

/** A file's size counted whole, with nothing to stop the count early: the independent count. */
async function countWhole(text: string, name: string): Promise<number> {
  const result = await compactSource(decodeSource(Buffer.from(text, 'utf8'), name), {
    target: Number.MAX_SAFE_INTEGER,
    counter,
  });
  for (const c of result.conversations) expect(c.plan.unchanged).toBe('fits');
  return result.conversations.reduce((a, c) => a + c.plan.tokensBefore, 0);
}

/** The numbers of a summary line: `7,632 → 1,952 tokens`. */
function lineFigures(line: string): { before: number; after: number; estimate: boolean } {
  const m = / (≈?)([\d,]+) → ([\d,]+) tokens/.exec(line);
  if (m === null) throw new Error(`no figures in ${line}`);
  const n = (s: string): number => Number(s.replace(/,/g, ''));
  return { estimate: m[1] === '≈', before: n(m[2] as string), after: n(m[3] as string) };
}

describe('the summary line of one file', () => {
  it('gives the exact tokens before and after, equal to counting the input and the output whole', async () => {
    await fc.assert(
      fc.asyncProperty(
        transcriptFileArb([openaiCodec, haystackCodec]),
        fc.double({ min: 0, max: 1, noNaN: true }),
        async (file, share) => {
          const size = await countWhole(file.text, file.name);
          const target = Math.max(1, Math.floor(size * share));
          const result = await compactSource(decodeSource(file.bytes, file.name), { target, counter });
          const line = outcomeLine(result, file.name, { tokenizer: 'approx', target, minKeepSteps: 1 }) as string;
          if (!result.changed) {
            expect(line).toContain(`unchanged, ${size.toLocaleString('en-US')} tokens`);
            return;
          }
          const figures = lineFigures(line);
          expect(figures).toEqual({ estimate: false, before: size, after: await countWhole(result.output, file.name) });
        },
      ),
      { numRuns: 150 },
    );
  });

  it('says how much was saved', async () => {
    const r = await runSwc(['compact', 'sample.jsonl', '-t', '2000', '--tokenizer', 'approx', '-o', 'out.jsonl'], {
      cwd: tempDir([SAMPLE]),
    });
    expect(r.stderr).toBe(
      'swc: sample.jsonl: 6,609 → 1,874 tokens (−72%, approx), removed 56 of 62 messages; target 2,000 met\n',
    );
  });
});

describe('the change in percent', () => {
  it.each([
    [7632, 1952, '−74%'],
    [100, 100, '0%'],
    [1000, 996, '−0.4%'],
    [2275300, 3311, '−99.8%'],
    [100, 0, '−100%'],
    [100, 103, '+3%'],
    [0, 5, null],
  ])('from %d to %d is %s', (before, after, text) => {
    expect(changeText({ tokens: before, exact: true }, after)).toBe(text);
  });

  it('is marked as an estimate when before is one', () => {
    expect(changeText({ tokens: 7632, exact: false }, 1952)).toBe('≈−74%');
  });
});

/** A JSONL transcript of `n` exchanges of about `chars` characters each, over the exact-count limit when large. */
function bigTranscript(n: number, chars: number): string {
  const lines = [JSON.stringify({ role: 'system', content: 'You are terse.' })];
  for (let k = 0; k < n; k++) {
    lines.push(JSON.stringify({ role: 'user', content: `question ${k} ${'x'.repeat(chars)}` }));
    lines.push(JSON.stringify({ role: 'assistant', content: `answer ${k} ${'y '.repeat(chars / 2)}` }));
  }
  return `${lines.join('\n')}\n`;
}

describe('files too big to count exactly at little cost', () => {
  const text = bigTranscript(1100, 2000);

  it('is big enough to be over the limit', () => {
    expect(text.length).toBeGreaterThan(EXACT_COUNT_UP_TO);
  });

  it('shows an estimate marked ≈ that is close to the exact count, and --exact counts exactly', async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'big.jsonl'), text);
    const exact = await countWhole(text, 'big.jsonl');
    const plain = await runSwc(['compact', 'big.jsonl', '-t', '2000', '--tokenizer', 'approx', '-o', 'out.jsonl'], {
      cwd: dir,
    });
    const estimated = lineFigures(plain.stderr);
    expect(estimated.estimate).toBe(true);
    expect(plain.stderr).toMatch(/ \(≈−\d+(\.\d)?%, approx\)/);
    expect(Math.abs(estimated.before - exact) / exact).toBeLessThan(0.05);
    const forced = await runSwc(
      ['compact', 'big.jsonl', '-t', '2000', '--tokenizer', 'approx', '-o', 'out.jsonl', '--exact'],
      { cwd: dir },
    );
    expect(lineFigures(forced.stderr)).toEqual({ estimate: false, before: exact, after: estimated.after });
  });

  it('says in the batch total that it includes estimates', async () => {
    const dir = tempDir([SAMPLE]);
    writeFileSync(path.join(dir, 'big.jsonl'), text);
    const r = await runSwc(['compact', '.', '--check', '-t', '2000', '--tokenizer', 'approx'], { cwd: dir });
    expect(r.stderr).toMatch(/; tokens ≈[\d,]+ → [\d,]+ \(≈−\d+(\.\d)?%, approx; before includes estimates\); /);
  });

  it('never estimates below the count the decision made, nor below what is kept', async () => {
    const result: FileResult = await compactSource(decodeSource(Buffer.from(text, 'utf8'), 'big.jsonl'), {
      target: 2000,
      counter,
    });
    const [c] = result.conversations;
    expect(c?.plan.tokensBeforeExact).toBe(false);
    expect(c?.outcome.before.exact).toBe(false);
    const estimate = estimateBefore(c!, counter);
    expect(estimate).toBe(c?.outcome.before.tokens);
    // The kept messages counted exactly, and the rest at the tokens per character of the lines (each with its line
    // ending) of every k-th removed message, about 64,000 characters of them, as the docs say.
    const messages = c!.normalized.messages;
    const lineLength = (m: number): number => (c!.slot.raws[m] as string).length + 1;
    const sum = (indices: readonly number[]): number => indices.reduce((a, m) => a + lineLength(m), 0);
    const count = (indices: readonly number[]): number =>
      counter.measure(indices.map((m) => renderMessage(messages[m] as Message)));
    const removed = [...c!.plan.removed];
    const restLength = sum(removed);
    const stride = Math.max(1, Math.round(restLength / 64_000));
    const sample = removed.filter((_, k) => k % stride === 0);
    expect(sample.length).toBeGreaterThan(1);
    expect(sample.length).toBeLessThan(removed.length);
    const rate = count(sample) / sum(sample);
    expect(estimate).toBe(Math.max(c!.plan.tokensBefore, count(c!.plan.kept) + Math.round(restLength * rate)));
    expect(estimate).toBeGreaterThanOrEqual(c!.plan.tokensBefore);
    expect(estimate).toBeGreaterThanOrEqual(c!.plan.tokensAfter - (c!.outcome.totals.noteTokens ?? 0));
  });
});

describe('the estimate of the tokens before', () => {
  it('is the exact count, less at most the joins, when every removed message is in its sample', async () => {
    await fc.assert(
      fc.asyncProperty(
        transcriptFileArb([openaiCodec, haystackCodec]),
        fc.double({ min: 0, max: 1, noNaN: true }),
        async (file, share) => {
          const size = await countWhole(file.text, file.name);
          const target = Math.max(1, Math.floor(size * share));
          const result = await compactSource(decodeSource(file.bytes, file.name), { target, counter });
          for (const c of result.conversations) {
            // Well under the sample's 64,000 characters: the removed messages are all counted, at their own rate.
            expect(file.text.length).toBeLessThan(64_000);
            const exact = c.outcome.before;
            expect(exact.exact).toBe(true);
            // Counted in two parts, kept and removed, the whole loses a join between them and a rounding or two.
            const estimate = estimateBefore(c, counter);
            expect(exact.tokens - estimate).toBeGreaterThanOrEqual(0);
            expect(exact.tokens - estimate).toBeLessThanOrEqual(2);
          }
        },
      ),
      { numRuns: 100 },
    );
  });
});

/** The figures of a JSON plan that the identity reads. */
interface PlanFigures {
  readonly tokensBefore: number;
  readonly tokensBeforeExact: boolean;
  readonly tokensAfter: number;
  readonly changed: boolean;
  readonly removed: { readonly messages: number; readonly tokens: number | null };
  readonly saved?: { readonly pruned: number; readonly offloaded: number };
  readonly summaryTokens?: number;
  readonly note: { readonly text: string; readonly tokens: number | null } | null;
  readonly summaries?: readonly { readonly kept: boolean }[];
  readonly groups: readonly { kind: string; start: number; end: number; tokens: number | null; kept: boolean }[];
}

/**
 * The note's tokens in a plan: its own figure, and those of its note group where it has one (a summarizing chain's
 * note has none).
 */
function noteTokensOf(plan: PlanFigures): number {
  const group = plan.groups.filter((g) => g.kind === 'note').reduce((a, g) => a + (g.tokens ?? 0), 0);
  if (plan.groups.some((g) => g.kind === 'note')) expect(plan.note?.tokens).toBe(group);
  return plan.note?.tokens ?? 0;
}

/**
 * Whether a plan's figures add up: before = after + what pruning and offloading saved + what went − the note − the
 * summaries (a plan with summarize always says what its summaries cost, and they cost something when one is kept).
 */
function expectAddsUp(plan: PlanFigures): void {
  const saved = (plan.saved?.pruned ?? 0) + (plan.saved?.offloaded ?? 0);
  const summaries = plan.summaries === undefined ? 0 : (plan.summaryTokens ?? NaN);
  if (plan.summaries?.some((s) => s.kept) === true) expect(summaries).toBeGreaterThan(0);
  expect(plan.tokensBefore).toBe(
    plan.tokensAfter + saved + (plan.removed.tokens ?? NaN) - noteTokensOf(plan) - summaries,
  );
}

/** The groups that go, as a plan lists them (the messages they hold, their tokens). */
function removedGroups(plan: PlanFigures): { start: number; end: number; tokens: number | null }[] {
  return plan.groups
    .filter((g) => !g.kept && g.kind !== 'note')
    .map((g) => ({ start: g.start, end: g.end, tokens: g.tokens }));
}

/** The figures a dry run's text gives: `removed 54 messages (5,700 tokens)`, and the bar's savings (`+` for a loss). */
function textFigures(text: string): { removed: number | null; pruned: number; offloaded: number; summaries: number } {
  const n = (s: string | undefined): number =>
    (s?.startsWith('+') === true ? -1 : 1) * Number((s ?? '0').replace(/[,−+]/g, ''));
  const removed = /removed [\d,]+ messages? \(([\d,]+) tokens\)/.exec(text);
  return {
    removed: removed === null ? null : n(removed[1]),
    pruned: n(/~ pruned results ([−+][\d,]+)/.exec(text)?.[1]),
    offloaded: n(/~ offloaded results ([−+][\d,]+)/.exec(text)?.[1]),
    summaries: n(/▚ summaries ([\d,]+)/.exec(text)?.[1]),
  };
}

/** What a `--stat` line says pruning and offloading saved: `pruned 1,982`, `offloaded +12` (a growth). */
function statSaved(line: string): { pruned: number; offloaded: number } {
  const n = (verb: string): number => {
    const m = new RegExp(`\\b${verb} (\\+?)([\\d,]+)`).exec(line);
    return m === null ? 0 : (m[1] === '+' ? -1 : 1) * Number((m[2] as string).replace(/,/g, ''));
  };
  return { pruned: n('pruned'), offloaded: n('offloaded') };
}

describe('the figures of a chain', () => {
  // Standard input is compacted in this thread (files go to worker threads, which run the built code).
  const dryRun = async (dir: string, ...args: string[]): Promise<string> => {
    const r = await runSwc(['compact', '-', '-t', '2000', '--dry-run', ...args], {
      cwd: dir,
      stdin: readFileSync(SAMPLE),
    });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    return r.stdout;
  };

  it('count what prune,window removes as the window alone counts the same messages, in the input', async () => {
    const dir = tempDir([SAMPLE]);
    const window = JSON.parse(await dryRun(dir, '--json')) as PlanFigures;
    const chain = JSON.parse(await dryRun(dir, '--json', '--strategy', 'prune,window')) as PlanFigures;
    expect(chain.removed.messages).toBe(window.removed.messages);
    expect(removedGroups(chain)).toEqual(removedGroups(window));
    expect(chain.removed.tokens).toBe(window.removed.tokens);
    expectAddsUp(window);
    expectAddsUp(chain);
    const text = textFigures(await dryRun(dir, '--strategy', 'prune,window'));
    expect(text.removed).toBe(window.removed.tokens);
    expect(textFigures(await dryRun(dir)).removed).toBe(window.removed.tokens);
  });

  it("count what summarize removes in the input, and the summaries' tokens as a figure of their own", async () => {
    const dir = tempDir([SAMPLE]);
    const args = ['--tokenizer', 'approx', '--strategy', 'summarize'];
    const run = async (...more: string[]): Promise<string> => {
      const r = await runSwc(['compact', '-', '-t', '3000', '--dry-run', ...args, ...more], {
        cwd: dir,
        stdin: readFileSync(SAMPLE),
      });
      expect(r.status).toBe(0);
      return r.stdout;
    };
    const plan = JSON.parse(await run('--json')) as PlanFigures;
    expect(plan.summaries?.filter((x) => x.kept).length).toBe(2);
    expect(plan.summaryTokens).toBeGreaterThan(2 * 1000);
    expectAddsUp(plan);
    // The 58 messages cost what their groups cost as read, less a token per group the whole's joins round away.
    const groups = removedGroups(plan);
    const groupSum = groups.reduce((a, g) => a + (g.tokens ?? NaN), 0);
    expect(Math.abs((plan.removed.tokens ?? NaN) - groupSum)).toBeLessThanOrEqual(groups.length);
    expect(textFigures(await run())).toEqual({
      removed: plan.removed.tokens,
      pruned: 0,
      offloaded: 0,
      summaries: plan.summaryTokens,
    });
  });

  it('say in --stat what pruning saved, in 80 columns where a line fits without it', async () => {
    const dir = tempDir();
    const names = ['s.jsonl', 'a-name-of-twenty.jsonl', `${'a-long-name-'.repeat(4)}.jsonl`];
    for (const name of names) writeFileSync(path.join(dir, name), readFileSync(SAMPLE));
    const args = ['-t', '3000', '--tokenizer', 'approx', '--strategy', 'prune', '--min-tokens', '50', '--dry-run'];
    for (const files of [[names[0] as string], names.slice(0, 2), names]) {
      const stat = await runSwc(['compact', ...files, ...args, '--stat'], { cwd: dir });
      expect(stat.status).toBe(0);
      const plan = JSON.parse((await runSwc(['compact', names[0] as string, ...args, '--json'], { cwd: dir })).stdout);
      const lines = stat.stdout.trimEnd().split('\n');
      const total = lines.pop() as string;
      const entries = lines.join('\n').split(/\n(?! )/);
      expect(entries).toHaveLength(files.length);
      for (const entry of entries) {
        // Pruning alone removes no message: the tokens it saved are the whole change.
        expect(entry).toContain(' 0 messages ');
        expect(statSaved(entry)).toEqual({ pruned: (plan as PlanFigures).saved?.pruned, offloaded: 0 });
        expect(statSaved(entry).pruned).toBeGreaterThan(0);
        const { before, after } = lineFigures(entry);
        expect(before).toBe(after + statSaved(entry).pruned);
        const first = entry.split('\n')[0] as string;
        // A line over 80 columns holds the figure, and would be over 80 without it too.
        if (first.length > 80) expect(first.replace(/pruned [\d,]+ {2}/, '').length).toBeGreaterThan(80);
      }
      expect(statSaved(total).pruned).toBe(files.length * statSaved(entries[0] as string).pruned);
    }
  });

  it('add up in the text and the JSON plan of random conversations and chains', async () => {
    await fc.assert(
      fc.asyncProperty(
        // Standard input of one line reads as a JSON document, not as JSONL.
        transcriptFileArb([openaiCodec, haystackCodec]).filter((f) => f.framing === 'json' || f.items.length > 1),
        fc.double({ min: 0.05, max: 0.9, noNaN: true }),
        fc.constantFrom(
          'prune,window',
          'offload,window',
          'window',
          'window,prune',
          'summarize',
          'summarize,window',
          'prune,summarize',
          'prune',
          'offload',
        ),
        async (file, share, strategy) => {
          const dir = tempDir();
          const target = String(Math.max(1, Math.floor((await countWhole(file.text, file.name)) * share)));
          const settings = {
            window: [],
            'prune,window': ['--min-tokens', '0', '--placeholder', '-'],
            'window,prune': ['--min-tokens', '0', '--placeholder', '-'],
            'offload,window': ['--offload-dir', path.join(dir, 'store'), '--offload-over', '1'],
            prune: ['--min-tokens', '0', '--placeholder', '-'],
            offload: ['--offload-dir', path.join(dir, 'store'), '--offload-over', '1'],
            // A dry run simulates the summaries (a stand-in, no model), each this long.
            summarize: ['--summary-tokens', '10'],
            'summarize,window': ['--summary-tokens', '10'],
            'prune,summarize': ['--summary-tokens', '10', '--min-tokens', '0', '--placeholder', '-'],
          }[strategy] as string[];
          const base = ['compact', '-', '-t', target, '--tokenizer', 'approx', '--dry-run'];
          const chainArgs = [...base, '--strategy', strategy, ...settings];
          const plan = async (args: string[]): Promise<PlanFigures> => {
            const r = await runSwc([...args, '--json'], { cwd: dir, stdin: file.bytes });
            // Summarize's dry run says what it would send and which round would fail, and nothing else.
            expect(r.stderr.replace(/^(summarize: would make |swc: warning: .* would fail ).*\n/gm, '')).toBe('');
            return JSON.parse(r.stdout) as PlanFigures;
          };
          const chain = await plan(chainArgs);
          const window = await plan(base);
          expectAddsUp(chain);
          expectAddsUp(window);
          if (
            JSON.stringify(removedGroups(chain).map((g) => [g.start, g.end])) ===
            JSON.stringify(removedGroups(window).map((g) => [g.start, g.end]))
          ) {
            expect(removedGroups(chain)).toEqual(removedGroups(window));
            // Summaries are measured alone, as the note is: counted with the kept messages, their joins (and those of a
            // note whose text differs from the window's) can round a token either way, at most one per message made.
            const notes = chain.note !== null || window.note !== null ? 1 : 0;
            const made = (chain.summaries ?? []).filter((x) => x.kept).length + notes;
            const sameMade = (chain.summaryTokens ?? 0) === 0 && chain.note?.text === window.note?.text;
            if (sameMade) expect(chain.removed.tokens).toBe(window.removed.tokens);
            else
              expect(Math.abs((chain.removed.tokens ?? NaN) - (window.removed.tokens ?? NaN))).toBeLessThanOrEqual(
                made,
              );
          }
          // --stat gives the plan's tokens before and after (--verbose: a line for an unchanged file too).
          const stat = (await runSwc([...chainArgs, '--stat', '--verbose'], { cwd: dir, stdin: file.bytes })).stdout;
          // The file's line, and below it what pruning and offloading saved when the line has no room for it.
          const lines = stat.trimEnd().split('\n');
          const totalLine = lines.pop() as string;
          const fileLine = lines.join('\n');
          expect(lines.length).toBeLessThanOrEqual(2);
          expect(lineFigures(fileLine)).toEqual({
            estimate: false,
            before: chain.tokensBefore,
            after: chain.tokensAfter,
          });
          // It says what pruning and offloading saved, on the file's line and the total, as the plan does; and where
          // nothing else went, those add up to the change.
          for (const line of chain.changed ? [fileLine, totalLine] : [fileLine])
            expect(statSaved(line)).toEqual(chain.saved ?? { pruned: 0, offloaded: 0 });
          if (chain.removed.messages === 0 && chain.note === null && (chain.summaryTokens ?? 0) === 0) {
            const saved = statSaved(fileLine);
            const figures = lineFigures(fileLine);
            expect(figures.before).toBe(figures.after + saved.pruned + saved.offloaded);
          }
          const dryRunText = (await runSwc(chainArgs, { cwd: dir, stdin: file.bytes })).stdout;
          const text = textFigures(dryRunText);
          expect(text).toEqual({
            removed: chain.removed.messages > 0 ? chain.removed.tokens : null,
            pruned: chain.saved?.pruned ?? 0,
            offloaded: chain.saved?.offloaded ?? 0,
            summaries: chain.summaryTokens ?? 0,
          });
          // The closing line says the same savings as the bar.
          for (const [verb, saved] of [
            ['pruned', chain.saved?.pruned],
            ['offloaded', chain.saved?.offloaded],
          ] as const) {
            const phrase = new RegExp(`${verb} [\\d,]+ tool results?[^(;]*\\(([\\d,]+) tokens (saved|added)\\)`).exec(
              dryRunText.replace(/\n {2}/g, ' '),
            );
            // Said when the output keeps a result it replaced, as the plan lists it.
            expect(phrase !== null).toBe(chain.groups.some((g) => g.kind === verb));
            if (phrase === null) continue;
            const n = Number((phrase[1] as string).replace(/,/g, ''));
            expect(phrase[2] === 'saved' ? n : -n).toBe(saved);
          }
        },
      ),
      { numRuns: 60 },
    );
  }, 180_000);
});
