/**
 * `swc replay` on the command line, run in process: the table, the JSON of one run and of many, the exit codes of
 * --fail-on-overflow and --max-lost, the price models, and the errors it refuses with.
 */
import { describe, expect, it } from '@jest/globals';
import { readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PRICE_MODEL_NAMES } from '../../src/cli/program.js';
import { DEFAULT_PRICES, PRICE_MODELS } from '../../src/replay/prices.js';
import type { ReplayRun, ReplayRuns } from '../../src/replay/types.js';
import { writeCase } from '../differential/harness.js';
import { ROOT, tempDir } from '../helpers/cli.js';
import type { Conversation } from '../helpers/convert.js';
import { runSwc } from '../helpers/run-in-process.js';

const big = (word: string): string => Array.from({ length: 300 }, (_, i) => `${word}${i}`).join(' ');

/** Five calls; a window of 1,800 compacts once and loses `/srv/app/config.yaml`, which the last task names again. */
const RUN: Conversation = [
  { role: 'system', text: 'You are a careful agent.' },
  { role: 'user', texts: ['Fix the bug described in /srv/app/config.yaml'], images: 0, files: [] },
  {
    role: 'assistant',
    text: null,
    reasoning: null,
    calls: [{ id: 'c1', name: 'read_file', args: { path: '/srv/app/config.yaml' } }],
  },
  { role: 'tool', callId: 'c1', name: 'read_file', text: `contents of /srv/app/config.yaml: ${big('line')}` },
  { role: 'assistant', text: 'I read it.', reasoning: null, calls: [] },
  { role: 'user', texts: ['Now look at the logs instead.'], images: 0, files: [] },
  { role: 'assistant', text: null, reasoning: null, calls: [{ id: 'c2', name: 'run', args: { cmd: 'tail log' } }] },
  { role: 'tool', callId: 'c2', name: 'run', text: `log: ${big('entry')}` },
  { role: 'assistant', text: 'The logs say little.', reasoning: null, calls: [] },
  { role: 'user', texts: ['Go back to /srv/app/config.yaml and fix it.'], images: 0, files: [] },
  { role: 'assistant', text: 'Fixed.', reasoning: null, calls: [] },
];

function runDir(): string {
  const dir = tempDir();
  writeFileSync(path.join(dir, 'run.json'), writeCase('openai', RUN, false).text);
  return dir;
}

const replay = (args: readonly string[], cwd = runDir(), env?: Record<string, string>) =>
  runSwc(['replay', ...args, '--tokenizer', 'approx'], { cwd, ...(env === undefined ? {} : { env }) });

describe('swc replay', () => {
  it('prints one row per policy with a chart of the context over the run, and what was lost', async () => {
    const r = await replay(['run.json', '--context-window', '1800', '--strategy', 'none', '--strategy', 'window']);
    expect(r.status).toBe(0);
    const lines = r.stdout.split('\n');
    // Not a terminal: 80 columns, the heading wrapped, the calls (in the heading) left out.
    expect(lines[0]).toBe('run.json (openai): 5 LLM calls, window 1,800, compacts from 1,260 to 720 tokens');
    expect(lines[1]).toBe('  (approx), priced as anthropic-sonnet');
    expect(lines[2]).toMatch(/^policy +compacts +peak +mean +overflow +input +cost +lost +users +context$/);
    expect(lines[3]).toMatch(/^none +0 .*[▁▂▃▄▅▆▇█]{5}$/);
    expect(lines[4]).toMatch(/^window +1 /);
    expect(lines.slice(5, 7)).toEqual([
      'lost, then needed with window: /srv/app/config.yaml (left before call 4, needed',
      '  at message 10)',
    ]);
    expect(r.stdout).toContain('note: Replies are taken as recorded');
    expect(r.stdout).not.toContain('\u001b[');
  });

  it('colours only when asked or in a terminal (NO_COLOR is honoured)', async () => {
    const args = ['run.json', '--context-window', '1800', '--strategy', 'window'];
    expect((await replay([...args, '--color', 'always'])).stdout).toContain('\u001b[');
    expect((await replay(args, runDir(), { NO_COLOR: '', FORCE_COLOR: '1' })).stdout).toContain('\u001b[');
    expect((await replay([...args, '--no-color'], runDir(), { NO_COLOR: '', FORCE_COLOR: '1' })).stdout).not.toContain(
      '\u001b[',
    );
  });

  it('names the policy window when no --strategy is given, and writes one run as its document', async () => {
    const r = await replay(['run.json', '--context-window', '1800', '--json']);
    const run = JSON.parse(r.stdout) as ReplayRun;
    expect(run.policies.map((p) => p.strategy)).toEqual(['window']);
    expect(run.policies[0]!.calls.map((c) => [c.message, c.compacted])).toEqual([
      [2, false],
      [4, false],
      [6, false],
      [8, true],
      [10, false],
    ]);
    expect(run.prices.name).toBe('anthropic-sonnet');
  });

  it('writes every run and the totals of many runs', async () => {
    const dir = runDir();
    writeFileSync(path.join(dir, 'again.json'), writeCase('openai', RUN, false).text);
    const r = await replay(
      ['.', '--context-window', '1800', '--json', '--strategy', 'none', '--strategy', 'window'],
      dir,
    );
    const runs = JSON.parse(r.stdout) as ReplayRuns;
    expect(runs.runs.map((x) => path.basename(x.file))).toEqual(['again.json', 'run.json']);
    expect(runs.totals.map((t) => [t.strategy, t.calls, t.compactions, t.lost])).toEqual([
      ['none', 10, 0, 0],
      ['window', 10, 2, 2],
    ]);
    const table = await replay(['.', '--context-window', '1800', '--strategy', 'none', '--strategy', 'window'], dir);
    expect(table.stdout).toMatch(
      /total over 2 runs\npolicy +calls +compacts +overflow +input +cached +written +cost +lost +users\n/,
    );
    const whole = await replay(['.', '--context-window', '1800', '--strategy', 'none'], dir, { COLUMNS: '250' });
    expect(whole.stdout).toMatch(/total over 2 runs\npolicy +calls +compactions +overflows/);
  });

  it('exits 1 when a compacting policy loses more than --max-lost identifiers that were needed again', async () => {
    const args = ['run.json', '--context-window', '1800', '--strategy', 'none', '--strategy', 'window'];
    expect((await replay([...args, '--max-lost', '0'])).status).toBe(1);
    expect((await replay([...args, '--max-lost', '1'])).status).toBe(0);
    expect((await replay([...args])).status).toBe(0);
  });

  it('exits 1 with --fail-on-overflow when a compacting policy sends more than the window, never for none', async () => {
    // A window of 700: the newest step alone, which the window keeps (-k 1), is larger.
    const args = ['run.json', '--context-window', '700'];
    const window = await replay([...args, '--strategy', 'window', '--json']);
    expect((JSON.parse(window.stdout) as ReplayRun).policies[0]!.overflows).toBeGreaterThan(0);
    expect(window.status).toBe(0);
    expect((await replay([...args, '--strategy', 'window', '--fail-on-overflow'])).status).toBe(1);
    expect((await replay([...args, '--strategy', 'none', '--fail-on-overflow'])).status).toBe(0);
  });

  it('says on stderr which run and which policy failed a gate, and why, never for none', async () => {
    const lost = await replay([
      'run.json',
      '--context-window',
      '1800',
      '--strategy',
      'none',
      '--strategy',
      'window',
      '--json',
      '--max-lost',
      '0',
    ]);
    const doc = JSON.parse(lost.stdout) as ReplayRun;
    const window = doc.policies.find((p) => p.strategy === 'window')!;
    expect(window.lost.length).toBeGreaterThan(0);
    const named = window.lost
      .slice(0, 3)
      .map((l) => l.identifier)
      .join(', ');
    expect(lost.status).toBe(1);
    expect(lost.stderr).toBe(
      `swc: run.json: policy window lost ${window.lost.length} identifier${window.lost.length === 1 ? '' : 's'} needed again, over --max-lost 0 (${named}${window.lost.length > 3 ? `, and ${window.lost.length - 3} more` : ''})\n`,
    );
    const over = await replay([
      'run.json',
      '--context-window',
      '700',
      '--strategy',
      'none',
      '--strategy',
      'window',
      '--json',
      '--fail-on-overflow',
    ]);
    const overflows = (JSON.parse(over.stdout) as ReplayRun).policies.find((p) => p.strategy === 'window')!.overflows;
    expect(over.status).toBe(1);
    expect(over.stderr).toBe(
      `swc: run.json: policy window sent more than the 700-token window in ${overflows} call${overflows === 1 ? '' : 's'} (--fail-on-overflow)\n`,
    );
    // A passing gate says nothing.
    expect(
      (await replay(['run.json', '--context-window', '1800', '--strategy', 'window', '--max-lost', '99'])).stderr,
    ).toBe('');
  });

  it('prices with a built-in model by name, or a file of your own', async () => {
    const dir = runDir();
    const own = { name: 'mine', input: 1, cacheRead: 0.1, cacheWrite: 1, output: 2, minCacheablePrefix: 0 };
    writeFileSync(path.join(dir, 'prices.json'), JSON.stringify(own));
    const openai = JSON.parse(
      (await replay(['run.json', '--context-window', '1800', '--json', '--prices', 'openai-gpt-4.1'], dir)).stdout,
    ) as ReplayRun;
    expect(openai.prices).toMatchObject({ name: 'openai-gpt-4.1', input: 2, cacheRead: 0.5, minCacheablePrefix: 1024 });
    expect(openai.prices.source).toMatch(/^https:\/\/platform\.openai\.com\/.*read 2026-12-03$/);
    const mine = JSON.parse(
      (await replay(['run.json', '--context-window', '1800', '--json', '--prices', 'prices.json'], dir)).stdout,
    ) as ReplayRun;
    expect(mine.prices).toEqual({ ...own, currency: 'USD', source: 'prices.json' });
    expect(mine.policies[0]!.cacheReadTokens).toBeGreaterThan(0);
  });

  it.each([
    [['run.json'], '--context-window <tokens> is required'],
    [['run.json', '--context-window', '1800', '--strategy', 'offload'], 'a replay never writes files'],
    [['run.json', '--context-window', '1800', '--strategy', 'window', '--strategy', 'window'], 'given twice'],
    [['run.json', '--context-window', '1800', '--strategy', 'windw'], 'windw'],
    [['run.json', '--context-window', '1800', '--compact-at', '0.3', '--compact-to', '0.4'], '--compact-to'],
    [['run.json', '--context-window', '1800', '--min-tokens', '5'], '--min-tokens'],
    [['run.json', '--context-window', '1800', '--prices', 'nowhere.json'], 'neither a built-in price model'],
    [['run.json', '--context-window', '1800', '--max-lost', 'x'], '--max-lost must be a whole number'],
    [['run.json', '--context-window', '1800', '--note', 'x', '--no-note'], 'cannot be used together'],
  ])('refuses %j with one line', async (args, message) => {
    const r = await replay(args);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(message);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
  });

  it('names every built-in price model in its help, the default first', async () => {
    expect([...PRICE_MODEL_NAMES]).toEqual(PRICE_MODELS.map((p) => p.name));
    expect(PRICE_MODELS[0]).toBe(DEFAULT_PRICES);
    const help = (await runSwc(['replay', '--help'], { cwd: runDir() })).stdout;
    expect(help.replace(/\s+/g, ' ')).toContain(
      `the price model: ${PRICE_MODEL_NAMES.join(', ')} (default: anthropic-sonnet)`,
    );
  });

  it('refuses a price file that is not a price model, naming the key', async () => {
    const dir = runDir();
    writeFileSync(
      path.join(dir, 'prices.json'),
      JSON.stringify({ input: 1, cacheRead: 0, cacheWrite: 0, output: -1, minCacheablePrefix: 0 }),
    );
    const r = await replay(['run.json', '--context-window', '1800', '--prices', 'prices.json'], dir);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('"output" must be a price per million tokens');
  });

  it('exits 2 for a file it cannot read, and still replays the others', async () => {
    const dir = runDir();
    writeFileSync(path.join(dir, 'broken.json'), '{"messages": [');
    const r = await replay(['.', '--context-window', '1800', '--json'], dir);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/broken\.json:1:\d+: /);
    expect((JSON.parse(r.stdout) as ReplayRuns).runs.map((x) => path.basename(x.file))).toEqual(['run.json']);
  });

  it("prints docs/replay.md's worked example as the page shows it", async () => {
    const page = readFileSync(path.join(ROOT, 'docs/replay.md'), 'utf8');
    const block = /<!-- example -->\n```console\n\$ swc (.*)\n([\s\S]*?)\n```/.exec(page);
    expect(block).not.toBeNull();
    const [, command, output] = block as unknown as [string, string, string];
    const r = await runSwc(command.split(' '), { cwd: ROOT });
    expect(r.status).toBe(0);
    expect(r.stdout.trimEnd()).toBe(output);
  });
});

describe('swc replay --report', () => {
  const args = ['run.json', '--context-window', '1800', '--strategy', 'none', '--strategy', 'window'];
  /** The report a page embeds (see replay-page.ts: one JSON block, `<` written as \u003c). */
  const embedded = (page: string): unknown => {
    const m = /<script type="application\/json" id="replay-data">([\s\S]*?)<\/script>/.exec(page);
    if (m === null) throw new Error('no replay-data block in the page');
    return JSON.parse(m[1] as string) as unknown;
  };

  it('writes the page of the replay that --json prints, beside the table', async () => {
    const dir = runDir();
    const json = await replay([...args, '--json'], dir);
    const r = await replay([...args, '--report', 'out.html'], dir);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^policy +compacts/m);
    const page = readFileSync(path.join(dir, 'out.html'), 'utf8');
    expect(page.startsWith('<!doctype html>') || page.startsWith('<!DOCTYPE html>')).toBe(true);
    expect(embedded(page)).toEqual(JSON.parse(json.stdout));
  });

  it('writes the page to standard output for -, instead of the table', async () => {
    const r = await replay([...args, '--report', '-']);
    expect(r.status).toBe(0);
    expect(r.stdout).not.toMatch(/^policy /m);
    expect((embedded(r.stdout) as ReplayRun).policies.map((p) => p.strategy)).toEqual(['none', 'window']);
  });

  it('refuses a report that is a run to replay, and leaves it as it was', async () => {
    const dir = runDir();
    const before = readFileSync(path.join(dir, 'run.json'), 'utf8');
    const r = await replay([...args, '--report', 'run.json'], dir);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--report run.json is also a run to replay');
    expect(readFileSync(path.join(dir, 'run.json'), 'utf8')).toBe(before);
    // Through a link to it, too: the report's path is resolved before anything is read.
    symlinkSync(path.join(dir, 'run.json'), path.join(dir, 'link.html'));
    const linked = await replay([...args, '--report', 'link.html'], dir);
    expect(linked.status).toBe(2);
    expect(linked.stderr).toContain('--report link.html is also a run to replay');
    expect(readFileSync(path.join(dir, 'run.json'), 'utf8')).toBe(before);
  });

  it('refuses a page on standard output beside --json', async () => {
    const r = await replay([...args, '--json', '--report', '-']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('would both go to standard output');
  });
});
