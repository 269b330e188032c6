/**
 * The summary cache keeps only replies a run could use: a summary the decision refused (not smaller than what it
 * replaces) is dropped from the cache, so the next run asks the model again instead of failing the same way forever.
 */
import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { compactArgs, summarizeFlags } from '../helpers/argv.js';
import { runSwc } from '../helpers/run-in-process.js';

const MESSAGES = [
  { role: 'system', content: 'You are a coding agent.' },
  { role: 'user', content: `old question ${'words '.repeat(60)}` },
  { role: 'assistant', content: `old answer ${'words '.repeat(60)}` },
  { role: 'user', content: 'current task' },
];

describe('the summary cache', () => {
  it('drops a reply that did not make the conversation smaller, and a later run asks again and succeeds', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'swc-summary-cache-'));
    writeFileSync(path.join(dir, 'a.json'), JSON.stringify({ messages: MESSAGES }, null, 2));
    // The model answers at length while BAD is set, then briefly.
    writeFileSync(
      path.join(dir, 'model.sh'),
      `cat >/dev/null\nif [ -n "$BAD" ]; then printf '%s' "$(printf 'long %.0s' $(seq 1 400))"; else printf 'short summary'; fi\n`,
    );
    const args = compactArgs(
      'a.json',
      40,
      ...summarizeFlags(),
      '-o',
      'out.json',
      '--summarize-command',
      `sh '${path.join(dir, 'model.sh')}'`,
      '--cache-dir',
      'cache',
    );
    const bad = await runSwc(args, { cwd: dir, env: { BAD: '1' } });
    expect(bad.status).toBe(0);
    expect(bad.stderr).toMatch(/did not (make the conversation smaller|reduce)/);
    expect(readdirSync(path.join(dir, 'cache', 'summaries')).filter((f) => f.endsWith('.json'))).toEqual([]);
    const good = await runSwc(args, { cwd: dir });
    expect(good.status).toBe(0);
    expect(good.stderr).toMatch(/1 model call, /);
    expect(good.stderr).not.toMatch(/warning/);
    rmSync(dir, { recursive: true, force: true });
  });
});

describe('--strict on a file of several conversations', () => {
  it('names the record that failed and still reports the calls made', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'swc-summary-strict-'));
    const record = (poison: boolean): string =>
      JSON.stringify({
        messages: [
          ...MESSAGES.slice(0, 2).map((m) =>
            poison && m.role === 'user' ? { ...m, content: `${m.content} POISON` } : m,
          ),
          ...MESSAGES.slice(2),
        ],
      });
    writeFileSync(path.join(dir, 'w.jsonl'), `${record(false)}\n${record(true)}\n`);
    writeFileSync(
      path.join(dir, 'model.sh'),
      `p=$(cat); case "$p" in *POISON*) exit 1;; esac; printf 'short summary'\n`,
    );
    for (const out of [['-o', 'out.jsonl'], ['--in-place']]) {
      const r = await runSwc(
        [
          'compact',
          'w.jsonl',
          ...out,
          '-t',
          '40',
          '--tokenizer',
          'approx',
          '--strategy',
          'summarize',
          '--summary-tokens',
          '10',
          '--summarize-command',
          `sh '${path.join(dir, 'model.sh')}'`,
          '--no-cache',
          '--strict',
        ],
        { cwd: dir },
      );
      expect({ out, status: r.status }).toEqual({ out, status: 2 });
      expect(r.stderr).toMatch(/w\.jsonl: record 2: summarize round 1 failed: .*--strict: nothing written/);
      expect(r.stderr).toMatch(/summarize: 2 model calls \(1 failed\)/);
    }
    rmSync(dir, { recursive: true, force: true });
  });
});
