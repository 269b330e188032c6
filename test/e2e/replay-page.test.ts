// The functions this file hands to the browser run there, on its DOM. (src/ is built without these types.)
/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * The HTML report of `swc replay` in a real headless Chromium (the page as a string: test/cli/replay-page.test.ts):
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
import type { ReplayPolicy, ReplayRun } from '../../src/replay/types.js';
import { tempDir } from '../helpers/cli.js';
import { RUN, RUNS, MANY_POLICIES, expectedFigures } from '../helpers/replay-reports.js';
import { scaled } from '../helpers/scale.js';

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
    // Checked, the filter hides the runs no policy changed, in the index and below, with CSS alone.
    const visible = async (): Promise<[number, number]> => [
      await page.locator('ol.runs li:visible').count(),
      await page.locator('section.run:visible').count(),
    ];
    expect(await visible()).toEqual([RUNS.runs.length, RUNS.runs.length]);
    await page.locator('#only-changed').check();
    const changed = RUNS.runs.filter((r) =>
      r.policies.some((p) => p.compactions.length > 0 || p.overflows > 0 || p.summary.calls > 0),
    ).length;
    expect(await visible()).toEqual([changed, changed]);
    await page.locator('#only-changed').uncheck();
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
      { numRuns: scaled(5) },
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
