// The functions this file hands to the browser run there, on its DOM. (src/ is built without these types.)
/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * The HTML report of `swc replay`: the page is a string drawn from the report, so the unit tests read it as one
 * (escaping of untrusted strings, every policy present, every figure equal to the report's), and a real headless
 * Chromium opens it from a file and reads what it shows: table cells, the points of each policy's line, the
 * compaction marks, the levels, the lists; with no console error, no page error and no request but the file itself.
 * Chromium is Debian's (`/usr/bin/chromium`, or `CHROMIUM_PATH`), driven by playwright-core, which downloads no
 * browser; without one the browser tests say so and skip.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { replayPage } from '../../src/cli/view/replay-page.js';
import type {
  ReplayCall,
  ReplayCompaction,
  ReplayPolicy,
  ReplayPrices,
  ReplayRun,
  ReplayRuns,
  ReplayTotal,
} from '../../src/replay/types.js';
import { tempDir } from '../helpers/cli.js';

// ---------------------------------------------------------------------------------------------------------------
// Hand-made reports: a few policies replayed by a small model of the hook, so the figures hang together.

const HOSTILE = '</script><img src=x onerror="document.title=\'pwned\'">';

const PRICES: ReplayPrices = {
  name: 'example prices & <co>',
  currency: 'USD',
  input: 3,
  cacheRead: 0.3,
  cacheWrite: 3.75,
  output: 15,
  minCacheablePrefix: 1024,
  source: 'https://example.com/pricing, read 2026-01-01',
};

/** A policy's replay of a run whose history grows by `growth[i]` after call i, compacting to `target` at `trigger`. */
function replayed(growth: readonly number[], hook: { trigger: number; target: number; keep: number } | null) {
  const calls: ReplayCall[] = [];
  const compactions: ReplayCompaction[] = [];
  let history = 400;
  let previous = 0;
  growth.forEach((g, i) => {
    const compacted = hook !== null && history >= hook.trigger;
    if (compacted) {
      const after = Math.min(hook.target, Math.floor(history * hook.keep));
      compactions.push({ call: i, before: history, after, removed: 3 + (i % 4) });
      history = after;
    }
    const cacheRead = compacted || i === 0 ? 0 : previous;
    calls.push({
      message: 2 * i + 1,
      compacted,
      tokens: history,
      cacheRead,
      cacheWrite: history - cacheRead,
      output: 40 + (i % 7),
      overflow: history > 2000,
    });
    previous = history + 40 + (i % 7);
    history += g;
  });
  return { calls, compactions };
}

function policyOf(
  strategy: string,
  growth: readonly number[],
  hook: { trigger: number; target: number; keep: number } | null,
) {
  const { calls, compactions } = replayed(growth, hook);
  const sum = (pick: (c: ReplayCall) => number): number => calls.reduce((s, c) => s + pick(c), 0);
  const inputTokens = sum((c) => c.tokens);
  const cacheReadTokens = sum((c) => c.cacheRead);
  const cacheWriteTokens = sum((c) => c.cacheWrite);
  const outputTokens = sum((c) => c.output);
  const part = (tokens: number, price: number): number => (tokens * price) / 1_000_000;
  const cost = {
    input: part(inputTokens - cacheReadTokens - cacheWriteTokens, PRICES.input),
    cacheRead: part(cacheReadTokens, PRICES.cacheRead),
    cacheWrite: part(cacheWriteTokens, PRICES.cacheWrite),
    output: part(outputTokens, PRICES.output),
    total: 0,
  };
  cost.total = cost.input + cost.cacheRead + cost.cacheWrite + cost.output;
  const first = compactions[0];
  const policy: ReplayPolicy = {
    strategy,
    calls,
    compactions,
    peakTokens: Math.max(...calls.map((c) => c.tokens)),
    meanTokens: inputTokens / calls.length,
    overflows: calls.filter((c) => c.overflow).length,
    inputTokens,
    cacheReadTokens,
    cacheWriteTokens,
    outputTokens,
    summary: strategy.startsWith('summarize')
      ? { calls: compactions.length, promptTokens: 900 * compactions.length, replyTokens: 120 * compactions.length }
      : { calls: 0, promptTokens: 0, replyTokens: 0 },
    cost,
    lost:
      first === undefined
        ? []
        : [
            {
              identifier: 'src/cli/view/replay-page.ts',
              kind: 'path',
              leftAt: first.call,
              neededAt: 2 * first.call + 5,
            },
            { identifier: HOSTILE, kind: 'url', leftAt: first.call, neededAt: 2 * first.call + 9 },
          ],
    removedUserMessages:
      first === undefined
        ? []
        : [{ message: 2, call: first.call, preview: `Please keep the tests green ${HOSTILE} & don't "push"` }],
  };
  return policy;
}

function runOf(file: string, growth: readonly number[], strategies: readonly string[], recorded = false): ReplayRun {
  const hook = { trigger: 1500, target: 1000 };
  return {
    file,
    format: 'openai',
    tokenizer: 'o200k_base',
    contextWindow: 2000,
    compactAt: 0.75,
    compactTo: 0.5,
    trigger: hook.trigger,
    target: hook.target,
    prices: PRICES,
    recorded: recorded
      ? {
          calls: growth.length,
          inputTokens: 51_234,
          cacheReadTokens: 40_000,
          cacheWriteTokens: 9_000,
          outputTokens: 1_234,
        }
      : null,
    // Each policy keeps its own share of the history at a compaction, so their lines part.
    policies: strategies.map((s, i) => policyOf(s, growth, s === 'none' ? null : { ...hook, keep: 0.75 - 0.06 * i })),
    notes: [
      'The recorded replies are taken as they were: a model may have answered a shorter history otherwise.',
      `A note naming ${HOSTILE}.`,
    ],
  };
}

const GROWTH = Array.from({ length: 48 }, (_, i) => 60 + ((i * 37) % 90));
const RUN: ReplayRun = runOf(`runs/${HOSTILE}.jsonl`, GROWTH, ['none', 'window', 'prune', 'summarize'], true);

function totalsOf(runs: readonly ReplayRun[]): ReplayTotal[] {
  const strategies = runs[0]?.policies.map((p) => p.strategy) ?? [];
  return strategies.map((strategy) => {
    const ps = runs.map((r) => r.policies.find((p) => p.strategy === strategy) as ReplayPolicy);
    const sum = (pick: (p: ReplayPolicy) => number): number => ps.reduce((s, p) => s + pick(p), 0);
    return {
      strategy,
      calls: sum((p) => p.calls.length),
      compactions: sum((p) => p.compactions.length),
      overflows: sum((p) => p.overflows),
      inputTokens: sum((p) => p.inputTokens),
      cacheReadTokens: sum((p) => p.cacheReadTokens),
      cacheWriteTokens: sum((p) => p.cacheWriteTokens),
      outputTokens: sum((p) => p.outputTokens),
      cost: {
        input: sum((p) => p.cost.input),
        cacheRead: sum((p) => p.cost.cacheRead),
        cacheWrite: sum((p) => p.cost.cacheWrite),
        output: sum((p) => p.cost.output),
        total: sum((p) => p.cost.total),
      },
      lost: sum((p) => p.lost.length),
      removedUserMessages: sum((p) => p.removedUserMessages.length),
    };
  });
}

const SEVERAL_RUNS = [
  runOf('runs/a.jsonl', GROWTH.slice(0, 30), ['none', 'window']),
  runOf('runs/one-call.json', [100], ['none', 'window']),
  runOf('runs/c.jsonl', GROWTH, ['none', 'window'], true),
];
const RUNS: ReplayRuns = { runs: SEVERAL_RUNS, totals: totalsOf(SEVERAL_RUNS) };
/** Nine policies: every series colour, and the first one again, dashed. */
const MANY_POLICIES = runOf(
  'runs/many.jsonl',
  GROWTH,
  Array.from({ length: 9 }, (_, i) => `policy-${i}`),
);

// ---------------------------------------------------------------------------------------------------------------
// Reading the page as a string.

/** The one JSON block, parsed. */
function embeddedReport(html: string): unknown {
  const m = /<script type="application\/json" id="replay-data">([\s\S]*?)<\/script>/.exec(html);
  expect(m).not.toBeNull();
  return JSON.parse((m as RegExpExecArray)[1] as string);
}

/** Character references back to characters: the decoder of an HTML reader, for the references the page writes. */
function decodeText(text: string): string {
  return text
    .replace(/&#(\d+);/g, (_, n: string) => String.fromCodePoint(Number(n)))
    .replace(/&#x([0-9a-f]+);/gi, (_, n: string) => String.fromCodePoint(parseInt(n, 16)));
}

/** The cells of one table (by class) of one run's section: each row's strategy and its `data-field` values. */
function tableFigures(html: string, table: string): Array<{ strategy: string; values: Record<string, number> }> {
  const body = new RegExp(`<table class="${table}">[\\s\\S]*?</table>`).exec(html)?.[0] ?? '';
  return [...body.matchAll(/<tr data-strategy="([^"]*)"[^>]*>([\s\S]*?)<\/tr>/g)].map((row) => ({
    strategy: decodeText(row[1] as string),
    values: Object.fromEntries(
      [...(row[2] as string).matchAll(/data-field="(\w+)" data-value="([^"]*)"/g)].map((c) => [c[1], Number(c[2])]),
    ),
  }));
}

function expectedFigures(policy: ReplayPolicy): Record<string, number> {
  return {
    calls: policy.calls.length,
    compactions: policy.compactions.length,
    peakTokens: policy.peakTokens,
    meanTokens: policy.meanTokens,
    overflows: policy.overflows,
    inputTokens: policy.inputTokens,
    cacheReadTokens: policy.cacheReadTokens,
    cacheWriteTokens: policy.cacheWriteTokens,
    outputTokens: policy.outputTokens,
    cost: policy.cost.total,
  };
}

describe('the replay page as a string', () => {
  const html = replayPage(RUN);

  it('escapes a </script> and an <img onerror> in identifiers, previews, file names and notes', () => {
    expect(html.includes('<img')).toBe(false);
    expect(html.includes('onerror="')).toBe(false);
    expect(html.match(/<\/script>/g)).toHaveLength(1);
    expect(html.match(/<script/g)).toHaveLength(1);
    const escaped = '&#60;/script&#62;&#60;img src=x onerror=&#34;document.title=&#39;pwned&#39;&#34;&#62;';
    // In the title, the file's heading, the lost list, the removed message and the note.
    expect(html.split(escaped).length - 1).toBeGreaterThanOrEqual(5);
  });

  it('embeds the report as JSON that no string in it can close, and that parses back to the report', () => {
    expect(embeddedReport(html)).toEqual(RUN);
    expect(embeddedReport(replayPage(RUNS))).toEqual(RUNS);
  });

  it('embeds and shows any strings exactly, whatever characters they hold', () => {
    const text = fc.string({
      unit: fc.constantFrom('<', '>', '&', '"', "'", '/', 'script', '!--', 'a', ' ', 'é', '😀'),
    });
    fc.assert(
      fc.property(text, text, text, (identifier, preview, strategy) => {
        const base = RUN.policies[1] as ReplayPolicy;
        const policy: ReplayPolicy = {
          ...base,
          strategy,
          lost: [{ identifier, kind: 'path', leftAt: 1, neededAt: 7 }],
          removedUserMessages: [{ message: 2, call: 1, preview }],
        };
        const report: ReplayRun = { ...RUN, file: identifier, policies: [policy] };
        const page = replayPage(report);
        expect(embeddedReport(page)).toEqual(report);
        expect(page.match(/<\/script>/gi)).toHaveLength(1);
        const cell = (field: string): string =>
          new RegExp(`data-field="${field}">([^<]*)</td>`).exec(page)?.[1] ?? '<not found>';
        for (const [field, value] of [
          ['identifier', identifier],
          ['preview', preview],
        ] as const) {
          expect(cell(field)).not.toMatch(/[<>"']|&(?!#\d+;)/);
          expect(decodeText(cell(field))).toBe(value);
        }
        expect(tableFigures(page, 'figures').map((r) => r.strategy)).toEqual([strategy, 'recorded']);
      }),
      { numRuns: 200 },
    );
  });

  it('has every policy in order in the figures, the cost table, the plot and the legend', () => {
    const names = RUN.policies.map((p) => p.strategy);
    expect(tableFigures(html, 'figures').map((r) => r.strategy)).toEqual([...names, 'recorded']);
    expect(tableFigures(html, 'cost').map((r) => r.strategy)).toEqual(names);
    expect([...html.matchAll(/<polyline [^>]*data-strategy="([^"]*)"/g)].map((m) => m[1])).toEqual(names);
    expect([...html.matchAll(/<li data-strategy="([^"]*)"/g)].map((m) => m[1])).toEqual(names);
    expect(tableFigures(html, 'summary').map((r) => r.strategy)).toEqual(['summarize']);
  });

  it("shows each policy's figures, the cost's parts and the recorded usage as the report gives them", () => {
    const rows = tableFigures(html, 'figures');
    RUN.policies.forEach((p, i) => expect(rows[i]?.values).toEqual(expectedFigures(p)));
    const recorded = RUN.recorded as NonNullable<ReplayRun['recorded']>;
    expect(rows.at(-1)?.values).toEqual({
      calls: recorded.calls,
      inputTokens: recorded.inputTokens,
      cacheReadTokens: recorded.cacheReadTokens,
      cacheWriteTokens: recorded.cacheWriteTokens,
      outputTokens: recorded.outputTokens,
    });
    const costs = tableFigures(html, 'cost');
    RUN.policies.forEach((p, i) => expect(costs[i]?.values).toEqual(p.cost));
    expect(html.includes('Cost at <b>example prices &#38; &#60;co&#62;</b>')).toBe(true);
    expect(html.includes('Source: https://example.com/pricing, read 2026-01-01.')).toBe(true);
  });

  it('draws as many points as calls for each policy and one mark per compaction, at its call', () => {
    for (const p of RUN.policies) {
      const name = p.strategy;
      const points = new RegExp(`<polyline [^>]*data-strategy="${name}" data-points="(\\d+)" points="([^"]*)"`).exec(
        html,
      );
      expect(Number(points?.[1])).toBe(p.calls.length);
      expect(points?.[2]?.split(' ')).toHaveLength(p.calls.length);
      const marks = [
        ...html.matchAll(new RegExp(`<g class="mark [^"]*" data-strategy="${name}" data-call="(\\d+)"`, 'g')),
      ];
      expect(marks.map((m) => Number(m[1]))).toEqual(p.compactions.map((c) => c.call));
    }
    expect(RUN.policies.find((p) => p.strategy === 'window')?.compactions.length).toBeGreaterThan(2);
  });

  it('draws a run without a call (no assistant message) as empty lines, and a long one with every point', () => {
    const empty = replayPage({
      ...RUN,
      recorded: null,
      policies: RUN.policies.map((p) => ({ ...p, calls: [], compactions: [] })),
    });
    expect([...empty.matchAll(/data-points="(\d+)" points=""/g)]).toHaveLength(RUN.policies.length);
    expect(empty.includes('<g class="mark')).toBe(false);
    const long = runOf(
      'runs/long.jsonl',
      Array.from({ length: 5000 }, (_, i) => 50 + (i % 40)),
      ['none', 'window'],
    );
    const page = replayPage(long);
    const counts = [...page.matchAll(/data-points="(\d+)" points="([^"]*)"/g)].map((m) => [
      Number(m[1]),
      m[2]?.split(' ').length,
    ]);
    expect(counts).toEqual([
      [5000, 5000],
      [5000, 5000],
    ]);
    expect(page.match(/<g class="mark /g)).toHaveLength(long.policies[1]?.compactions.length ?? -1);
  });

  it('is self-contained: no external script, style, font, image or link', () => {
    for (const page of [html, replayPage(RUNS)]) {
      // The data is escaped, so every tag is the page's own: none may load anything.
      // Attribute values are escaped too, so they are blanked out: what is left is names.
      const tags = [...page.matchAll(/<[a-z][^>]*>/gi)].map((m) => m[0].replace(/"[^"]*"/g, '""'));
      const names = new Set(tags.map((t) => (/^<([a-z]+)/i.exec(t)?.[1] ?? '').toLowerCase()));
      expect(
        [...names].filter((n) => ['link', 'iframe', 'object', 'embed', 'img', 'image', 'use'].includes(n)),
      ).toEqual([]);
      expect(tags.filter((t) => /\s(src|srcset|xlink:href|action)=/i.test(t))).toEqual([]);
      const links = [...page.matchAll(/<a href="([^"]*)"/g)].map((m) => m[1]);
      expect(links.filter((h) => !/^#run-\d+$/.test(h ?? ''))).toEqual([]);
      expect(tags.filter((t) => /\shref=/.test(t)).length).toBe(links.length);
      expect(/@import|url\(/.test(/<style>([\s\S]*?)<\/style>/.exec(page)?.[1] ?? '')).toBe(false);
      expect(page.includes(`content="default-src 'none'; style-src 'unsafe-inline'"`)).toBe(true);
    }
  });

  it('shows the totals first, then each run in order, with its own figures', () => {
    const page = replayPage(RUNS);
    const totalsAt = page.indexOf('<section class="totals"');
    const runsAt = RUNS.runs.map((_, i) => page.indexOf(`<section class="run" id="run-${i + 1}"`));
    expect(totalsAt).toBeGreaterThan(-1);
    expect(runsAt.every((at, i) => at > (i === 0 ? totalsAt : (runsAt[i - 1] as number)))).toBe(true);
    const totals = tableFigures(page, 'totals');
    expect(totals.map((t) => t.strategy)).toEqual(RUNS.totals.map((t) => t.strategy));
    RUNS.totals.forEach((t, i) =>
      expect(totals[i]?.values).toEqual({
        calls: t.calls,
        compactions: t.compactions,
        overflows: t.overflows,
        inputTokens: t.inputTokens,
        cacheReadTokens: t.cacheReadTokens,
        cacheWriteTokens: t.cacheWriteTokens,
        outputTokens: t.outputTokens,
        cost: t.cost.total,
        lost: t.lost,
        removedUserMessages: t.removedUserMessages,
      }),
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------
// In a real browser.

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Why the browser tests cannot run here, or null when they can. */
function missingBrowser(): string | null {
  if (!existsSync(CHROMIUM)) return `no browser at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`;
  const r = spawnSync(CHROMIUM, ['--version'], { encoding: 'utf8' });
  return r.status === 0 ? null : `${CHROMIUM} --version failed: ${(r.stderr || String(r.error)).trim()}`;
}
const MISSING = missingBrowser();
if (MISSING !== null) {
  // Said once, so a run without a browser does not pass these tests silently.
  process.stderr.write(`replay-page.test.ts: the page is not checked in a browser: ${MISSING}\n`);
}
const withBrowser = MISSING === null ? describe : describe.skip;

/** What the page shows of one run, read from the DOM. */
interface ShownRun {
  file: string;
  figures: Array<{ strategy: string; cells: Array<{ field: string; value: number; text: string }> }>;
  lines: Array<{ strategy: string; points: Array<{ x: number; y: number }>; width: number; height: number }>;
  marks: Array<{ strategy: string; call: number; cx: number; cy: number }>;
  levels: Array<{ level: string; tokens: number; y: number }>;
  lost: string[][];
  removed: string[][];
  notes: string[];
}

/** Reads every run section of the open page. */
async function readShown(page: Page): Promise<ShownRun[]> {
  return page.$$eval('section.run', (sections) =>
    sections.map((section) => {
      const text = (e: Element | null): string => e?.textContent ?? '';
      const area = section.querySelector('.area') as HTMLElement;
      const box = area.getBoundingClientRect();
      const rows = (table: string): string[][] =>
        [...section.querySelectorAll(`table.${table} tbody tr`)].map((tr) => [...tr.children].map(text));
      return {
        file: section.getAttribute('data-file') ?? '',
        figures: [...section.querySelectorAll('table.figures tbody tr')].map((tr) => ({
          strategy: text(tr.querySelector('th')),
          cells: [...tr.querySelectorAll('td[data-field]')].map((td) => ({
            field: td.getAttribute('data-field') ?? '',
            value: Number(td.getAttribute('data-value')),
            text: text(td),
          })),
        })),
        lines: [...section.querySelectorAll('polyline')].map((l) => {
          const line = l as SVGPolylineElement;
          const points = [];
          for (let i = 0; i < line.points.numberOfItems; i++) {
            const p = line.points.getItem(i);
            points.push({ x: (p.x / 1000) * box.width, y: (p.y / 1000) * box.height });
          }
          return { strategy: line.getAttribute('data-strategy') ?? '', points, width: box.width, height: box.height };
        }),
        marks: [...section.querySelectorAll('g.mark')].map((g) => {
          const circle = g.querySelector('circle') as SVGCircleElement;
          return {
            strategy: g.getAttribute('data-strategy') ?? '',
            call: Number(g.getAttribute('data-call')),
            cx: circle.cx.baseVal.value,
            cy: circle.cy.baseVal.value,
          };
        }),
        levels: [...section.querySelectorAll('line.level')].map((l) => ({
          level: l.getAttribute('data-level') ?? '',
          tokens: Number(l.getAttribute('data-tokens')),
          y: ((l as SVGLineElement).y1.baseVal.value / 1000) * box.height,
        })),
        lost: rows('lost'),
        removed: rows('removed'),
        notes: [...section.querySelectorAll('ul.notes li')].map(text),
      };
    }),
  );
}

/** The number a figure's cell shows: `1,234` or `0.1234 USD`. */
function shownNumber(text: string): number {
  return Number(text.replace(/,/g, '').replace(/\s*USD$/, ''));
}

function expectRunShown(shown: ShownRun, run: ReplayRun): void {
  expect(shown.file).toBe(run.file);
  expect(shown.figures.map((f) => f.strategy)).toEqual([
    ...run.policies.map((p) => p.strategy),
    ...(run.recorded === null ? [] : ['as recorded']),
  ]);
  run.policies.forEach((p, i) => {
    const cells = shown.figures[i]?.cells ?? [];
    const expected = expectedFigures(p);
    expect(Object.fromEntries(cells.map((c) => [c.field, c.value]))).toEqual(expected);
    for (const c of cells) {
      if (c.field === 'cost') expect(shownNumber(c.text)).toBeCloseTo(p.cost.total, 4);
      else expect(shownNumber(c.text)).toBe(Math.round(expected[c.field] as number));
    }
  });
  const top = shown.lines[0]?.height ?? 0;
  run.policies.forEach((p, i) => {
    const line = shown.lines[i];
    expect(line?.strategy).toBe(p.strategy);
    expect(line?.points).toHaveLength(p.calls.length);
    const marks = shown.marks.filter((m) => m.strategy === p.strategy);
    expect(marks.map((m) => m.call)).toEqual(p.compactions.map((c) => c.call));
    // Each mark sits on its policy's line, at the point of the call it compacted before.
    for (const m of marks) {
      const point = line?.points[m.call] as { x: number; y: number };
      expect(Math.abs(m.cx - point.x)).toBeLessThan(1);
      expect(Math.abs(m.cy - point.y)).toBeLessThan(1);
    }
  });
  const level = (name: string) => shown.levels.find((l) => l.level === name);
  expect(level('window')?.tokens).toBe(run.contextWindow);
  expect(level('trigger')?.tokens).toBe(run.trigger);
  // The window and the trigger are drawn at their heights: their distances from the bottom are in their ratio.
  const fromBottom = (name: string): number => top - (level(name)?.y ?? 0);
  expect(fromBottom('trigger') / fromBottom('window')).toBeCloseTo(run.trigger / run.contextWindow, 2);
  expect(shown.lost).toEqual(
    run.policies.flatMap((p) =>
      p.lost.map((l) => [p.strategy, l.identifier, l.kind, `call ${l.leftAt + 1}`, `#${l.neededAt}`]),
    ),
  );
  expect(shown.removed).toEqual(
    run.policies.flatMap((p) =>
      p.removedUserMessages.map((m) => [p.strategy, `#${m.message}`, `call ${m.call + 1}`, m.preview]),
    ),
  );
  expect(shown.notes).toEqual(run.notes);
}

withBrowser('the replay page in a real browser', () => {
  let browser: Browser;
  const problems: string[] = [];
  const requests: string[] = [];

  beforeAll(async () => {
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true });
  });
  afterAll(async () => {
    await browser?.close();
  });

  /** Opens a page written to a file, watching for console errors, page errors and requests. */
  async function open(html: string, options: { width?: number; dark?: boolean } = {}): Promise<Page> {
    const file = path.join(tempDir(), 'report.html');
    writeFileSync(file, html);
    const page = await browser.newPage({
      viewport: { width: options.width ?? 1200, height: 900 },
      colorScheme: options.dark === true ? 'dark' : 'light',
    });
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('request', (r) => requests.push(r.url()));
    requests.length = 0;
    problems.length = 0;
    await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
    expect(requests).toEqual([pathToFileURL(file).href]);
    return page;
  }

  it('shows one run: its figures, lines, marks, levels, losses, removed messages and notes, without an error', async () => {
    const page = await open(replayPage(RUN));
    const shown = await readShown(page);
    expect(shown).toHaveLength(1);
    expectRunShown(shown[0] as ShownRun, RUN);
    expect(await page.title()).toBe(`swc replay: ${RUN.file}`);
    expect(await page.locator('img').count()).toBe(0);
    const data = await page.$eval('#replay-data', (e) => JSON.parse(e.textContent ?? 'null') as unknown);
    expect(data).toEqual(RUN);
    const screenshot = process.env.SWC_REPLAY_SCREENSHOT;
    if (screenshot !== undefined) await page.screenshot({ path: screenshot, fullPage: true });
    expect(problems).toEqual([]);
    await page.close();
  });

  it('shows several runs: the totals first, then each run as it would alone, without an error', async () => {
    const page = await open(replayPage(RUNS));
    const totals = await page.$$eval('table.totals tbody tr', (rows) =>
      rows.map((tr) =>
        Object.fromEntries(
          [...tr.querySelectorAll('td[data-field]')].map((td) => [td.getAttribute('data-field'), td.textContent]),
        ),
      ),
    );
    expect(totals.map((t) => shownNumber(t.calls ?? ''))).toEqual(RUNS.totals.map((t) => t.calls));
    expect(totals.map((t) => shownNumber(t.lost ?? ''))).toEqual(RUNS.totals.map((t) => t.lost));
    totals.forEach((t, i) => expect(shownNumber(t.cost ?? '')).toBeCloseTo(RUNS.totals[i]?.cost.total ?? NaN, 4));
    const shown = await readShown(page);
    expect(shown).toHaveLength(RUNS.runs.length);
    RUNS.runs.forEach((run, i) => expectRunShown(shown[i] as ShownRun, run));
    const order = await page.$$eval('main > section', (s) => s.map((e) => e.className));
    expect(order).toEqual(['totals', 'run', 'run', 'run']);
    const screenshot = process.env.SWC_REPLAY_SCREENSHOT;
    if (screenshot !== undefined)
      await page.screenshot({ path: screenshot.replace(/\.png$/, '-runs.png'), fullPage: true });
    expect(problems).toEqual([]);
    await page.close();
  });

  it('fits 400 px without the page scrolling sideways, in light and dark, with readable text and lines', async () => {
    const seen: string[] = [];
    for (const dark of [false, true]) {
      const page = await open(replayPage(MANY_POLICIES), { width: 400, dark });
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(400);
      const colours = await page.evaluate(() => {
        const style = (e: Element | null) => getComputedStyle(e as Element);
        return {
          background: style(document.body).backgroundColor,
          text: style(document.body).color,
          muted: style(document.querySelector('.muted')).color,
          lines: [...document.querySelectorAll('polyline')].map((l) => style(l).stroke),
          levels: [...document.querySelectorAll('line.level')].map((l) => style(l).stroke),
        };
      });
      seen.push(colours.background);
      const screenshot = process.env.SWC_REPLAY_SCREENSHOT;
      if (screenshot !== undefined)
        await page.screenshot({
          path: screenshot.replace(/\.png$/, `-400-${dark ? 'dark' : 'light'}.png`),
        });
      expect(contrast(colours.text, colours.background)).toBeGreaterThanOrEqual(7);
      expect(contrast(colours.muted, colours.background)).toBeGreaterThanOrEqual(4.5);
      for (const c of [...colours.lines, ...colours.levels])
        expect(contrast(c, colours.background)).toBeGreaterThanOrEqual(3);
      expect(problems).toEqual([]);
      await page.close();
    }
    expect(seen[0]).not.toBe(seen[1]);
  });

  it('shows hostile strings as text in any run, never as markup', async () => {
    const text = fc.string({
      unit: fc.constantFrom('<', '>', '&', '"', "'", '/', 'script', 'img onerror=x', 'a', ' '),
    });
    await fc.assert(
      fc.asyncProperty(text, text, async (identifier, note) => {
        const report: ReplayRun = {
          ...RUN,
          notes: [note],
          policies: [
            { ...(RUN.policies[1] as ReplayPolicy), lost: [{ identifier, kind: 'url', leftAt: 0, neededAt: 3 }] },
          ],
        };
        const page = await open(replayPage(report));
        const shown = (await readShown(page))[0] as ShownRun;
        expect(shown.lost.map((row) => row[1])).toEqual([identifier]);
        expect(shown.notes).toEqual([note]);
        expect(await page.locator('img, script:not(#replay-data)').count()).toBe(0);
        expect(problems).toEqual([]);
        await page.close();
      }),
      { numRuns: 5 },
    );
  });
});

/** WCAG's contrast ratio of two computed `rgb(...)` colours. */
function contrast(a: string, b: string): number {
  const luminance = (colour: string): number => {
    const [r, g, bl] = (colour.match(/[\d.]+/g) ?? []).slice(0, 3).map((v) => {
      const c = Number(v) / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * (r ?? 0) + 0.7152 * (g ?? 0) + 0.0722 * (bl ?? 0);
  };
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return ((hi ?? 0) + 0.05) / ((lo ?? 0) + 0.05);
}
