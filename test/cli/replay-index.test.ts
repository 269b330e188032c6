/**
 * Many runs are quick to skim (issue 57, item 3): the HTML report's index says per run what each policy did, and a
 * checkbox keeps only the runs a policy changed. The page in a real browser: test/e2e/replay-page.test.ts.
 */
import { describe, expect, it } from '@jest/globals';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, tempDir } from '../helpers/cli.js';
import { runSwc } from '../helpers/run-in-process.js';

/** The first four of the 200 recorded tau-bench runs, as one file of four records. */
const FOUR_RUNS = JSON.stringify(
  (
    JSON.parse(
      readFileSync(path.join(ROOT, 'fixtures/real/openai-chat/taubench-gpt-4o-airline.json'), 'utf8'),
    ) as unknown[]
  ).slice(0, 4),
);

describe('the replay report of a file of many runs', () => {
  it('says in its index what each policy did to each run, and which runs no policy changed', async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'tau.json'), FOUR_RUNS);
    const r = await runSwc(
      [
        'replay',
        'tau.json',
        '--context-window',
        '6000',
        '--strategy',
        'none',
        '--strategy',
        'window',
        '--report',
        'r.html',
      ],
      { cwd: dir },
    );
    expect(r.status).toBe(0);
    const html = readFileSync(path.join(dir, 'r.html'), 'utf8');
    const items = [
      ...html.matchAll(
        /<li class="(changed|same)" value="\d+"><a href="#run-(\d+)">[^<]*<\/a> <span class="muted">([^<]*)<\/span><\/li>/g,
      ),
    ].map((m) => ({ run: Number(m[2]), changed: m[1] === 'changed', what: m[3] }));
    const runs = (html.match(/<section class="run"/g) ?? []).length;
    expect(items.map((i) => i.run)).toEqual(Array.from({ length: runs }, (_, k) => k + 1));
    // Record 1: the window compacts once before call 15 and takes 4 user messages; record 2 (5 calls) stays small.
    expect(items[0]).toEqual({
      run: 1,
      changed: true,
      what: '15 calls; window: 1 compaction, 4 user messages removed',
    });
    expect(items[1]).toEqual({
      run: 2,
      changed: false,
      what: '5 calls; no policy compacted, none went over the window',
    });
    const changed = items.filter((i) => i.changed).length;
    expect(changed).toBeGreaterThan(0);
    expect(changed).toBeLessThan(runs);
    expect(html).toContain(
      `<input type="checkbox" id="only-changed" class="filter"><label for="only-changed">Only the runs a policy changed (${changed} of ${runs})</label>`,
    );
    // Each run's section is marked the same way and says the same line under its heading.
    expect((html.match(/<section class="run"[^>]* data-changed="false">/g) ?? []).length).toBe(runs - changed);
    expect(html).toContain('<p class="meta">window: 1 compaction, 4 user messages removed.</p>');
  });

  it('shows in the table only the runs a policy changed with --changed-only, the totals over all of them', async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'tau.json'), FOUR_RUNS);
    const args = ['replay', 'tau.json', '--context-window', '6000', '--strategy', 'none', '--strategy', 'window'];
    const all = await runSwc([...args, '--json'], { cwd: dir });
    const runs = (
      JSON.parse(all.stdout) as {
        runs: Array<{ file: string; policies: Array<{ compactions: unknown[]; overflows: number }> }>;
      }
    ).runs;
    const changed = runs.filter((r) => r.policies.some((p) => p.compactions.length > 0 || p.overflows > 0));
    expect(changed.length).toBeGreaterThan(0);
    expect(changed.length).toBeLessThan(runs.length);
    const r = await runSwc([...args, '--changed-only'], { cwd: dir, env: { COLUMNS: '400' } });
    expect(r.status).toBe(0);
    const headings = r.stdout.split('\n').filter((l) => l.startsWith('tau.json (record'));
    expect(headings.map((h) => h.split(' (openai)')[0])).toEqual(changed.map((c) => c.file));
    expect(r.stdout).toContain(`total over 4 runs (${4 - changed.length} that no policy changed not shown)`);
    // --json keeps every run.
    const json = await runSwc([...args, '--changed-only', '--json'], { cwd: dir });
    expect(json.stdout).toBe(all.stdout);
  });
});
