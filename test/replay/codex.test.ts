/**
 * The usage a Codex session recorded (its `event_msg` `token_count` events), shown beside a replay as the run "as
 * recorded": hand-made events with repeats, compaction markers and bad counts, and a real session through the CLI.
 */
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { InputError } from '../../src/errors.js';
import { recordedUsage } from '../../src/replay/recorded.js';
import { ROOT } from '../helpers/cli.js';
import { runSwc } from '../helpers/run-in-process.js';

/** A token_count event: this call's usage and the session's running total. */
function tokenCount(last: Record<string, unknown> | null, total: Record<string, unknown> | null = last): object {
  return {
    timestamp: '2026-01-01T00:00:00.000Z',
    type: 'event_msg',
    payload: {
      type: 'token_count',
      info: last === null ? null : { total_token_usage: total, last_token_usage: last, model_context_window: 258400 },
      rate_limits: null,
    },
  };
}

const usage = (input: number, cached: number, output: number, reasoning = 0): Record<string, unknown> => ({
  input_tokens: input,
  cached_input_tokens: cached,
  output_tokens: output,
  reasoning_output_tokens: reasoning,
  total_tokens: input + output,
});

describe('Codex sessions: recorded usage', () => {
  it('sums each call once: input with its cached part as reads, output with its reasoning', () => {
    const items = [
      { type: 'session_meta', payload: { id: 's' } },
      tokenCount(null),
      tokenCount(usage(1000, 0, 50, 20), usage(1000, 0, 50, 20)),
      // Codex repeats the event without a new call: the running total is unchanged.
      tokenCount(usage(1000, 0, 50, 20), usage(1000, 0, 50, 20)),
      tokenCount(usage(1200, 900, 30), usage(2200, 900, 80, 20)),
      // After a compaction: no tokens in the last call, the total unchanged or not.
      tokenCount(usage(0, 0, 0), usage(2200, 900, 80, 20)),
      tokenCount(usage(0, 0, 0), usage(0, 0, 0)),
      tokenCount(usage(400, 100, 10), usage(2600, 1000, 90, 20)),
      { type: 'event_msg', payload: { type: 'agent_message', message: 'hi' } },
    ];
    expect(recordedUsage('codex', items)).toEqual({
      calls: 3,
      inputTokens: 2600,
      cacheReadTokens: 1000,
      cacheWriteTokens: 0,
      outputTokens: 90,
    });
  });

  it('reads only the calls after the last compacted line, as the replay does', () => {
    const items = [
      { type: 'session_meta', payload: { id: 's' } },
      tokenCount(usage(1000, 0, 50), usage(1000, 0, 50)),
      { type: 'compacted', payload: { message: '', replacement_history: [] } },
      tokenCount(usage(0, 0, 0), usage(1000, 0, 50)),
      tokenCount(usage(300, 200, 7), usage(1300, 200, 57)),
    ];
    expect(recordedUsage('codex', items)).toEqual({
      calls: 1,
      inputTokens: 300,
      cacheReadTokens: 200,
      cacheWriteTokens: 0,
      outputTokens: 7,
    });
  });

  it('records nothing for a session without token counts', () => {
    expect(recordedUsage('codex', [{ type: 'session_meta', payload: {} }, tokenCount(null)])).toBeNull();
  });

  it('refuses a count that is not a whole number of tokens, naming the line and the field', () => {
    const items = [
      { type: 'session_meta', payload: {} },
      tokenCount(usage(10, 0, 1)),
      tokenCount({ input_tokens: 0.5 }),
    ];
    expect(() => recordedUsage('codex', items, null, 'rollout.jsonl')).toThrow(InputError);
    expect(() => recordedUsage('codex', items, null, 'rollout.jsonl')).toThrow(
      'line 3: payload.info.last_token_usage.input_tokens is 0.5, not a whole number of tokens (0 to 2^53 - 1)',
    );
  });

  it('shows a real session as recorded beside the replayed policies', async () => {
    const file = path.join(ROOT, 'test/fixtures/codex/codemie-excerpt.jsonl');
    // The excerpt's nine calls, read straight from its lines: each token_count with usage (it repeats none).
    const totals = readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l.includes('"token_count"'))
      .map((l) => (JSON.parse(l) as { payload: { info: { last_token_usage: Record<string, number> } | null } }).payload)
      .filter((p) => p.info !== null)
      .map((p) => (p.info as { last_token_usage: Record<string, number> }).last_token_usage);
    const sum = (key: string): number => totals.reduce((n, u) => n + (u[key] as number), 0);
    const run = await runSwc(['replay', file, '--context-window', '60000', '--json'], { cwd: ROOT });
    expect(run.status).toBe(0);
    const report = JSON.parse(run.stdout) as { format: string; recorded: unknown };
    expect(report.format).toBe('codex');
    expect(report.recorded).toEqual({
      calls: totals.length,
      inputTokens: sum('input_tokens'),
      cacheReadTokens: sum('cached_input_tokens'),
      cacheWriteTokens: 0,
      outputTokens: sum('output_tokens'),
    });
    expect(totals).toHaveLength(9);
  });
});
