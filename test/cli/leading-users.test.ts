/**
 * Agents often open with user messages before the prompt (Codex and Claude Code inject context that way), and users
 * send two messages in a row. Haystack's current task is the latest real user message alone; every earlier user
 * message starts a historical turn, even with no reply between. These are the reported cases, through the command.
 */
import { describe, expect, it } from '@jest/globals';
import { ROOT } from '../helpers/cli.js';
import { runSwc } from '../helpers/run-in-process.js';

/** An OpenAI chat JSONL file of these messages. */
function jsonl(lines: readonly object[]): string {
  return lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
}

const OLD = { role: 'user', content: 'old question about the weather in Paris today' };
const TASK = { role: 'user', content: 'the task: book a table for two near the Louvre' };
const TWO_REPLIES = [
  OLD,
  TASK,
  { role: 'assistant', content: 'Searching restaurants now, one moment please.' },
  { role: 'assistant', content: 'Booked Cafe Marly at eight for two people.' },
];

/** Instructions, two long context messages, then the prompt and one reply (Haystack compacts before the call). */
const INJECTED = [
  { role: 'system', content: 'You are a coding agent.' },
  { role: 'user', content: `Context: ${'the repository layout and its conventions. '.repeat(80)}` },
  { role: 'user', content: `More context: ${'environment details and the tools on the path. '.repeat(40)}` },
  { role: 'user', content: 'Now the actual task: fix the failing test in parser.ts.' },
  { role: 'assistant', content: 'I fixed it.' },
];
const HOOK = ['--tokenizer', 'approx', '--context-window', '1500', '--compact-at', '0.7', '--compact-to', '0.29'];

describe('user messages before the first reply', () => {
  it('leave the task alone with no instructions: the earlier user message is history', async () => {
    const r = await runSwc(['compact', '-', '--tokenizer', 'approx', '-t', '25', '-k', '0', '--no-note'], {
      cwd: ROOT,
      stdin: jsonl(TWO_REPLIES),
    });
    expect({ status: r.status, stdout: r.stdout }).toEqual({ status: 0, stdout: jsonl([TASK]) });
  });

  it('are removed as history when the context window calls for compaction: instructions, note, task', async () => {
    const r = await runSwc(['compact', '-', ...HOOK], { cwd: ROOT, stdin: jsonl(INJECTED) });
    expect(r.status).toBe(0);
    const out = r.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { content: string });
    expect(out.map((m) => m.content)).toEqual([
      INJECTED[0]?.content,
      '[2 earlier messages were removed from this conversation to free up context and cannot be recovered.]',
      INJECTED[3]?.content,
      INJECTED[4]?.content,
    ]);
  });

  it('are compacted away by swc replay before the first call, as the hook does', async () => {
    const r = await runSwc(['replay', '-', ...HOOK, '--strategy', 'window', '--json'], {
      cwd: ROOT,
      stdin: jsonl(INJECTED),
    });
    expect(r.status).toBe(0);
    const report = JSON.parse(r.stdout) as {
      policies: Array<{ strategy: string; compactions: Array<{ call: number; removed: number }> }>;
    };
    const window = report.policies.find((p) => p.strategy === 'window');
    expect(window?.compactions.map((c) => ({ call: c.call, removed: c.removed }))).toEqual([{ call: 0, removed: 2 }]);
  });

  it('keep the task of the dry run alone, the earlier user messages as turns', async () => {
    const r = await runSwc(['compact', '-', ...HOOK, '--dry-run', '--json'], { cwd: ROOT, stdin: jsonl(INJECTED) });
    expect(r.status).toBe(0);
    const plan = JSON.parse(r.stdout) as { groups: Array<{ kind: string; start: number; end: number; kept: boolean }> };
    const groups = plan.groups.filter((g) => g.kind !== 'note');
    expect(groups.map((g) => [g.kind, g.start, g.end, g.kept])).toEqual([
      ['system', 0, 1, true],
      ['turn', 1, 2, false],
      ['turn', 2, 3, false],
      ['task', 3, 4, true],
      ['step', 4, 5, true],
    ]);
  });
});
