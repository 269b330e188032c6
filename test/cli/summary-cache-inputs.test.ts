/**
 * The summary cache is never an input, as the out-dir and the backup folder are not: a --cache-dir (or the default
 * cache under $XDG_CACHE_HOME) inside the folders being compacted is left out of the search, so a second run does not
 * read the cache's entries as transcripts, and naming an entry outright is a usage error.
 */
import { describe, expect, it } from '@jest/globals';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { SummaryReply, SummaryRequest } from '../../src/core/summarize.js';
import { tempDir } from '../helpers/cli.js';
import { runSwc } from '../helpers/run-in-process.js';

/** A conversation with old turns a summary can replace. */
function conversation(seed: number): string {
  const messages: object[] = [{ role: 'system', content: 'You are a coding agent.' }];
  for (let t = 0; t < 4; t++) {
    messages.push({ role: 'user', content: `question ${seed}.${t} ${'words '.repeat(60)}` });
    messages.push({ role: 'assistant', content: `answer ${seed}.${t} ${'words '.repeat(60)}` });
  }
  messages.push({ role: 'user', content: 'current task' });
  return `${JSON.stringify({ messages }, null, 2)}\n`;
}

/** A model that answers every call briefly. */
const model = async (_request: SummaryRequest): Promise<SummaryReply> => ({ text: 'short summary' });

const SUMMARIZE = ['--tokenizer', 'approx', '-t', '120', '--strategy', 'summarize', '--summary-tokens', '10'];

/** archive/{a,b}.json, fresh conversations each time, so every run summarizes (and caches) again. */
function refill(dir: string, round: number): void {
  writeFileSync(path.join(dir, 'archive/a.json'), conversation(round * 2));
  writeFileSync(path.join(dir, 'archive/b.json'), conversation(round * 2 + 1));
}

function entries(cache: string): string[] {
  return readdirSync(path.join(cache, 'summaries')).filter((f) => f.endsWith('.json'));
}

describe('a summary cache inside the inputs', () => {
  it('is left out of the search: a second run over the folder reads only the transcripts', async () => {
    const dir = tempDir();
    mkdirSync(path.join(dir, 'archive'));
    const args = ['compact', 'archive', '--in-place', ...SUMMARIZE, '--cache-dir', 'archive/cache'];
    refill(dir, 0);
    const first = await runSwc(args, { cwd: dir, summarizer: model });
    expect(first.status).toBe(0);
    expect(entries(path.join(dir, 'archive/cache')).length).toBeGreaterThan(0);
    refill(dir, 1);
    const second = await runSwc(args, { cwd: dir, summarizer: model });
    expect(second.stderr).not.toMatch(/archive\/cache\/summaries/);
    expect(second.status).toBe(0);
    expect(second.stderr).toMatch(/swc: 2 files scanned: 2 compacted, 0 unchanged, 0 failed/);
    // A look-only run, which never opens the cache, leaves it out too.
    const check = await runSwc(['compact', 'archive', '--check', ...SUMMARIZE, '--cache-dir', 'archive/cache'], {
      cwd: dir,
    });
    expect(check.stderr).toMatch(/swc: 2 files scanned: 0 would be compacted, 2 unchanged, 0 failed/);
    expect(check.status).toBe(0);
  });

  it('is left out when it is the default cache, under $XDG_CACHE_HOME', async () => {
    const dir = tempDir();
    mkdirSync(path.join(dir, 'archive'));
    const env = { XDG_CACHE_HOME: path.join(dir, 'archive', 'xdg') };
    const args = ['compact', 'archive', '--in-place', ...SUMMARIZE];
    refill(dir, 0);
    expect((await runSwc(args, { cwd: dir, env, summarizer: model })).status).toBe(0);
    expect(entries(path.join(dir, 'archive/xdg/swc')).length).toBeGreaterThan(0);
    refill(dir, 1);
    const second = await runSwc(args, { cwd: dir, env, summarizer: model });
    expect(second.stderr).not.toMatch(/xdg\/swc\/summaries/);
    expect(second.status).toBe(0);
  });

  it('refuses an entry of the cache named outright as an input', async () => {
    const dir = tempDir();
    mkdirSync(path.join(dir, 'archive'));
    refill(dir, 0);
    expect(
      (
        await runSwc(['compact', 'archive', '--in-place', ...SUMMARIZE, '--cache-dir', 'archive/cache'], {
          cwd: dir,
          summarizer: model,
        })
      ).status,
    ).toBe(0);
    const [entry] = entries(path.join(dir, 'archive/cache'));
    const named = path.join('archive/cache/summaries', entry as string);
    const r = await runSwc(
      ['compact', 'archive/a.json', named, '--check', ...SUMMARIZE, '--cache-dir', 'archive/cache'],
      { cwd: dir },
    );
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(
      `swc: error: ${named} is inside the --cache-dir, where this run writes the summaries it caches; it cannot also be an input\n`,
    );
  });
});
