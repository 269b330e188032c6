/**
 * The HTML report of `swc replay`: the page is a string drawn from the report, so these tests read it as one
 * (escaping of untrusted strings, every policy present, every figure equal to the report's). test/e2e/replay-page.test.ts
 * opens it in a real headless Chromium.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { replayPage } from '../../src/cli/view/replay-page.js';
import type { ReplayPolicy, ReplayRun } from '../../src/replay/types.js';
import {
  runOf,
  RUN,
  RUNS,
  embeddedReport,
  decodeText,
  tableFigures,
  expectedFigures,
} from '../helpers/replay-reports.js';
import { scaled } from '../helpers/scale.js';

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
      { numRuns: scaled(200) },
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
