/**
 * When a summarize policy spends summary calls without compacting, the replay says why (issue 57, item 3: a real run
 * showed 11 summary calls and 0 compactions with no word of explanation).
 */
import { describe, expect, it } from '@jest/globals';
import path from 'node:path';
import type { Summarizer } from '../../src/core/summarize.js';
import type { ReplayRun } from '../../src/replay/types.js';
import { ROOT, tempDir } from '../helpers/cli.js';
import { runSwc } from '../helpers/run-in-process.js';

const SWEAGENT = path.join(
  ROOT,
  'fixtures/real/openai-chat/sweagent-marshmallow-1867-function_calling_replace.traj.json',
);
const ARGS = ['replay', SWEAGENT, '--context-window', '6k', '--strategy', 'summarize', '--tokenizer', 'approx'];

/** A summarizer whose every summary is longer than anything it could replace. */
const VERBOSE: Summarizer = async () => ({ text: 'a summary that says too much. '.repeat(2_000) });

describe('a summarize policy that spends calls without compacting', () => {
  it('says in the run notes how many calls, before which LLM calls, and why', async () => {
    const r = await runSwc([...ARGS, '--json'], { cwd: tempDir(), summarizer: VERBOSE });
    expect(r.status).toBe(0);
    const run = JSON.parse(r.stdout) as ReplayRun;
    const policy = run.policies[0];
    expect(policy?.compactions).toEqual([]);
    const calls = policy?.summary.calls ?? 0;
    expect(calls).toBeGreaterThan(0);
    // Every call over the trigger tried, once a call, and kept the history.
    const tried = (policy?.calls ?? []).flatMap((c, k) => (c.tokens >= run.trigger ? [k + 1] : []));
    expect(tried.length).toBeGreaterThan(0);
    const idle = run.notes.filter((n) => n.startsWith('summarize: '));
    expect(idle).toHaveLength(1);
    expect(idle[0]).toMatch(
      new RegExp(
        `^summarize: ${calls} summary calls? compacted nothing \\(before LLM calls? ${tried.length <= 6 ? tried.join(', ') : `${tried.slice(0, 5).join(', ')} … ${tried[tried.length - 1]}`}\\): its summary was no smaller than the messages it replaced; the hook then keeps the history as it was\\.$`,
      ),
    );
    // The text view prints the same note.
    const text = await runSwc(ARGS, { cwd: tempDir(), summarizer: VERBOSE, env: { COLUMNS: '400' } });
    expect(text.stdout.replace(/\n {2}/g, ' ')).toContain(`note: ${idle[0] as string}`);
  });

  it('adds no such note when every summary compacts', async () => {
    const r = await runSwc([...ARGS, '--json'], { cwd: tempDir() });
    const run = JSON.parse(r.stdout) as ReplayRun;
    expect(run.policies[0]?.compactions.length).toBeGreaterThan(0);
    expect(run.notes.filter((n) => n.startsWith('summarize: '))).toEqual([]);
  });
});
