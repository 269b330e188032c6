/**
 * `swc replay`'s table fits the terminal (docs/cli.md, "swc replay", Width): no line wider than the columns stdout
 * reports (80 when it is not a terminal, or `COLUMNS`), the headers shortened and columns left out in the documented
 * order as the terminal narrows, the whole table where it fits. Real files through the command line at 60, 80, 120
 * and 200 columns, then random reports at random widths through the renderer.
 */
import { describe, expect, it } from '@jest/globals';
import { Chalk } from 'chalk';
import fc from 'fast-check';
import { Readable } from 'node:stream';
import stringWidth from 'string-width';
import { run } from '../../src/cli/program.js';
import { renderReplay } from '../../src/cli/view/replay-table.js';
import type { ReplayPolicy, ReplayRun, ReplayRuns } from '../../src/replay/types.js';
import { ROOT } from '../helpers/cli.js';
import { scaled } from '../helpers/scale.js';

const plain = new Chalk({ level: 0 });

const FILES = [
  'fixtures/real/claude-code/claude-reliability-python-to-rust-port.jsonl',
  'fixtures/real/haystack/DERIVED-taubench-airline-task109.haystack.json',
];
const ARGS = ['--context-window', '20000', '--strategy', 'none', '--strategy', 'window', '--strategy', 'prune,window'];

/** Runs swc in process with stdout a terminal of `columns` (or, with null, not a terminal). */
async function replayAt(
  columns: number | null,
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<string> {
  const chunks: string[] = [];
  const io = {
    stdout: {
      write: (chunk: string | Uint8Array): boolean => {
        chunks.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
        return true;
      },
      isTTY: columns !== null,
      ...(columns === null ? {} : { columns }),
    },
    stderr: { write: (): boolean => true },
    stdin: Readable.from([]),
    env: { NO_COLOR: '1', ...env },
    cwd: ROOT,
  };
  const status = await run(['replay', ...args, '--tokenizer', 'approx'], io);
  expect(status).toBe(0);
  return chunks.join('');
}

const linesOf = (text: string): string[] => text.replace(/\n$/, '').split('\n');

/** The header lines of the tables (one per run, then the totals'), each as its column names. */
const headersOf = (text: string): string[][] =>
  linesOf(text)
    .filter((l) => l.startsWith('policy '))
    .map((l) => l.split(/ {2,}/));

const WHOLE_RUN = [
  'policy',
  'calls',
  'compactions',
  'peak',
  'mean',
  'overflows',
  'input',
  'cache read',
  'cache write',
  'cost',
  'lost',
  'users removed',
  'context over the run',
];
const WHOLE_TOTAL = WHOLE_RUN.filter((h) => !['peak', 'mean', 'context over the run'].includes(h));

describe('swc replay fits its table to the terminal', () => {
  it.each([
    [
      60,
      [
        ['policy', 'compacts', 'peak', 'overflow', 'cost', 'lost'],
        ['policy', 'compacts', 'peak', 'overflow', 'cost', 'lost'],
        ['policy', 'compacts', 'overflow', 'cost', 'lost', 'users'],
      ],
    ],
    [
      80,
      [
        ['policy', 'compacts', 'peak', 'overflow', 'cost', 'lost', 'users', 'context'],
        ['policy', 'compacts', 'peak', 'overflow', 'input', 'cost', 'lost', 'users', 'context'],
        ['policy', 'compacts', 'overflow', 'input', 'cached', 'cost', 'lost', 'users'],
      ],
    ],
    [
      120,
      [
        [
          'policy',
          'calls',
          'compacts',
          'peak',
          'mean',
          'overflow',
          'input',
          'cached',
          'written',
          'cost',
          'lost',
          'users',
          'context',
        ],
        [
          'policy',
          'calls',
          'compacts',
          'peak',
          'mean',
          'overflow',
          'input',
          'cached',
          'written',
          'cost',
          'lost',
          'users',
          'context',
        ],
        WHOLE_TOTAL,
      ],
    ],
    [200, [WHOLE_RUN, WHOLE_RUN, WHOLE_TOTAL]],
  ])('at %d columns: no line wider, and these columns', async (columns, headers) => {
    const text = await replayAt(columns, [...FILES, ...ARGS]);
    const widest = Math.max(...linesOf(text).map((l) => stringWidth(l)));
    expect(widest).toBeLessThanOrEqual(columns);
    expect(headersOf(text)).toEqual(headers);
    // Every policy of every table is still there.
    expect(linesOf(text).filter((l) => /^(none|window|prune,window) /.test(l))).toHaveLength(9);
  });

  it('lays out for 80 columns when stdout is not a terminal, whatever it says its width is', async () => {
    const text = await replayAt(null, [...FILES, ...ARGS]);
    expect(text).toBe(await replayAt(80, [...FILES, ...ARGS]));
  });

  it('takes COLUMNS when stdout is not a terminal, and the terminal over COLUMNS when it is one', async () => {
    expect(await replayAt(null, [...FILES, ...ARGS], { COLUMNS: '200' })).toBe(
      await replayAt(200, [...FILES, ...ARGS]),
    );
    expect(await replayAt(60, [...FILES, ...ARGS], { COLUMNS: '200' })).toBe(await replayAt(60, [...FILES, ...ARGS]));
    expect(await replayAt(null, [...FILES, ...ARGS], { COLUMNS: 'wide' })).toBe(
      await replayAt(80, [...FILES, ...ARGS]),
    );
  });

  it('writes the same JSON at any width', async () => {
    const json = await replayAt(60, [...FILES, ...ARGS, '--json']);
    expect(await replayAt(200, [...FILES, ...ARGS, '--json'])).toBe(json);
    expect(await replayAt(null, [...FILES, ...ARGS, '--json'])).toBe(json);
  });

  it('keeps the end of a file name wider than the terminal', async () => {
    const text = await replayAt(60, [FILES[0] as string, ...ARGS]);
    const [first, second] = linesOf(text);
    expect(first).toBe('…al/claude-code/claude-reliability-python-to-rust-port.jsonl');
    expect(stringWidth(first as string)).toBe(60);
    expect(second).toMatch(/^ {2}\(claude-code\): 39 LLM calls, window 20,000/);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Random reports at random widths

/** The columns a narrow table leaves out, in order (docs/cli.md), by their full and short headers. */
const DROPS: readonly (readonly [string, string])[] = [
  ['calls', 'calls'],
  ['cache write', 'written'],
  ['cache read', 'cached'],
  ['mean', 'mean'],
  ['input', 'input'],
  ['users removed', 'users'],
  ['context over the run', 'context'],
  ['lost', 'lost'],
  ['cost', 'cost'],
  ['overflows', 'overflow'],
  ['peak', 'peak'],
  ['compactions', 'compacts'],
];

const countArb = fc.oneof(fc.nat(99), fc.nat(99_999), fc.nat(2 ** 40));

const policyArb = (calls: number): fc.Arbitrary<ReplayPolicy> =>
  fc
    .record({
      strategy: fc.constantFrom('none', 'window', 'prune', 'prune,window', 'summarize', 'prune,summarize,window'),
      tokens: fc.array(countArb, { minLength: calls, maxLength: calls }),
      compactions: fc.nat(30),
      peak: countArb,
      mean: countArb,
      overflows: fc.nat(50),
      input: countArb,
      cacheRead: countArb,
      cacheWrite: countArb,
      cost: fc.double({ min: 0, max: 1e6, noNaN: true }),
      lost: fc.array(fc.stringMatching(/^[a-z/._]{1,40}$/), { maxLength: 8 }),
      users: fc.nat(12),
    })
    .map(
      (p) =>
        ({
          strategy: p.strategy,
          calls: p.tokens.map((tokens, k) => ({
            message: k,
            compacted: false,
            tokens,
            cacheRead: 0,
            cacheWrite: 0,
            output: 0,
            overflow: false,
          })),
          compactions: Array.from({ length: p.compactions }, (_, k) => ({ call: k, before: 2, after: 1, removed: 1 })),
          peakTokens: p.peak,
          meanTokens: p.mean,
          overflows: p.overflows,
          inputTokens: p.input,
          cacheReadTokens: p.cacheRead,
          cacheWriteTokens: p.cacheWrite,
          outputTokens: 0,
          summary: { calls: 0, promptTokens: 0, replyTokens: 0 },
          cost: { input: 0, cacheRead: 0, cacheWrite: 0, output: 0, total: p.cost },
          lost: p.lost.map((identifier, k) => ({ identifier, kind: 'path', leftAt: k, neededAt: k + 1 })),
          removedUserMessages: Array.from({ length: p.users }, (_, k) => ({ message: k, call: k, preview: 'x' })),
        }) satisfies ReplayPolicy,
    );

const runArb: fc.Arbitrary<ReplayRun> = fc.integer({ min: 1, max: 60 }).chain((calls) =>
  fc
    .record({
      file: fc.stringMatching(/^[a-z0-9/._-]{1,120}$/),
      window: fc.integer({ min: 1, max: 2_000_000 }),
      policies: fc.array(policyArb(calls), { minLength: 1, maxLength: 5 }),
      recorded: fc.option(fc.record({ calls: fc.nat(9999), input: countArb }), { nil: null }),
    })
    .map(
      (r) =>
        ({
          file: r.file,
          format: 'openai',
          tokenizer: 'approx',
          contextWindow: r.window,
          compactAt: 0.7,
          compactTo: 0.4,
          trigger: Math.ceil(r.window * 0.7),
          target: Math.trunc(r.window * 0.4),
          prices: {
            name: 'anthropic-sonnet',
            currency: 'USD',
            input: 3,
            cacheRead: 0.3,
            cacheWrite: 3.75,
            output: 15,
            minCacheablePrefix: 1024,
            source: 'test',
          },
          recorded:
            r.recorded === null
              ? null
              : {
                  calls: r.recorded.calls,
                  inputTokens: r.recorded.input,
                  cacheReadTokens: 0,
                  cacheWriteTokens: 0,
                  outputTokens: 0,
                },
          policies: r.policies,
          notes: ['Replies are taken as recorded: a model given a shorter history may have answered otherwise.'],
        }) satisfies ReplayRun,
    ),
);

/** The table header lines of a rendering. */
const tableHeaders = (text: string): string[] => linesOf(text).filter((l) => l.startsWith('policy'));

describe('the replay table at any width', () => {
  it('never writes a line wider than the width, and leaves columns out in the documented order', () => {
    fc.assert(
      fc.property(runArb, fc.integer({ min: 8, max: 260 }), (report, width) => {
        const text = renderReplay(report, plain, width);
        const lines = linesOf(text);
        expect({ width, over: lines.filter((l) => stringWidth(l) > width) }).toEqual({ width, over: [] });
        const whole = renderReplay(report, plain);
        const wholeHeader = tableHeaders(whole)[0] as string;
        const header = tableHeaders(text)[0] as string;
        // The whole table wherever it fits (its header and rows), and everything as it is where every line does.
        const at = linesOf(whole).indexOf(wholeHeader);
        const wholeTable = linesOf(whole).slice(at, at + 1 + report.policies.length);
        const fits = Math.max(...wholeTable.map((l) => stringWidth(l))) <= width;
        expect({ width, whole: header === wholeHeader }).toEqual({ width, whole: fits });
        if (Math.max(...linesOf(whole).map((l) => stringWidth(l))) <= width) expect(text).toBe(whole);
        if (header === wholeHeader) return;
        // Shortened: the columns left out are the first of the drop order, the policy always kept.
        const shown = header.split(/ {2,}/);
        expect(shown[0]).toBe('policy');
        const out = DROPS.filter(([, short]) => !shown.includes(short)).map(([, short]) => short);
        expect(out).toEqual(DROPS.slice(0, out.length).map(([, short]) => short));
        // Every policy keeps its row, in order.
        const rows = lines.slice(lines.indexOf(header) + 1, lines.indexOf(header) + 1 + report.policies.length);
        expect(rows.map((r) => r.split(' ')[0])).toEqual(
          report.policies.map((p) => (stringWidth(p.strategy) > width ? expect.any(String) : p.strategy)),
        );
      }),
      { numRuns: scaled(300) },
    );
  });

  it('keeps the figures of the columns it shows', () => {
    const several: fc.Arbitrary<ReplayRuns> = fc.array(runArb, { minLength: 2, maxLength: 3 }).map((runs) => ({
      runs,
      totals: [],
    }));
    fc.assert(
      fc.property(runArb, fc.integer({ min: 40, max: 260 }), (report, width) => {
        const lines = linesOf(renderReplay(report, plain, width));
        const at = lines.findIndex((l) => l.startsWith('policy'));
        const names = (lines[at] as string).split(/ {2,}/);
        report.policies.forEach((p, k) => {
          const cells = (lines[at + 1 + k] as string).split(/ {2,}/).map((c) => c.trim());
          const value = (name: string): string | undefined => cells[names.indexOf(name)];
          const n = (x: number): string => x.toLocaleString('en-US');
          if (names.includes('peak')) expect(value('peak')).toBe(n(p.peakTokens));
          if (names.includes('compacts')) expect(value('compacts')).toBe(n(p.compactions.length));
          if (names.includes('compactions')) expect(value('compactions')).toBe(n(p.compactions.length));
          if (names.includes('lost')) expect(value('lost')).toBe(n(p.lost.length));
          if (names.includes('input')) expect(value('input')).toBe(n(p.inputTokens));
        });
      }),
      { numRuns: scaled(200) },
    );
    // Several runs: the totals' table fits too.
    fc.assert(
      fc.property(several, fc.integer({ min: 8, max: 260 }), (report, width) => {
        const widest = Math.max(...linesOf(renderReplay(report, plain, width)).map((l) => stringWidth(l)));
        expect(widest).toBeLessThanOrEqual(width);
      }),
      { numRuns: scaled(100) },
    );
  });
});
