import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { doneText } from '../../src/cli/result-line.js';
import { NO_USAGE, usageLine } from '../../src/summarize-run.js';
import type { SummaryUsage } from '../../src/pipeline/index.js';
import { tempDir } from '../helpers/cli.js';
import { runSwc } from '../helpers/run-in-process.js';

/**
 * Counts in the words swc prints name only what happened: `offloaded 5 tool results`, not `removed 0 of 24 messages,
 * offloaded 5`; `in 8 steps`, not `in 0 turns and 8 steps`; and a sentence that still reads when every count is zero.
 */

/** A zero printed as a count: `0 of`, `0 turns`, `(0 from`, `naming 0`. */
const ZERO_COUNT = /(^|[\s(])0 [a-z]/;

describe('what a file line says was done', () => {
  it('names exactly the counts above zero, and keeps all messages when none is', () => {
    fc.assert(
      fc.property(
        fc.nat(50),
        fc.nat(50),
        fc.nat(5),
        fc.nat(5),
        fc.boolean(),
        (removed, extra, pruned, offloaded, lookOnly) => {
          const total = removed + extra + 1;
          const text = doneText({ removed, total, pruned, offloaded }, lookOnly);
          expect(text).not.toMatch(ZERO_COUNT);
          expect(text.includes(`${removed} of ${total} messages`)).toBe(removed > 0);
          expect(text.includes(`prune${lookOnly ? '' : 'd'} ${pruned} tool result`)).toBe(pruned > 0);
          expect(text.includes(`offload${lookOnly ? '' : 'ed'} ${offloaded} tool result`)).toBe(offloaded > 0);
          expect(text.startsWith(lookOnly ? 'would ' : '')).toBe(true);
          if (removed + pruned + offloaded === 0)
            expect(text).toBe(
              `${lookOnly ? 'would keep' : 'kept'} ${total === 1 ? 'the one message' : `all ${total} messages`}`,
            );
        },
      ),
    );
  });

  it('reads as before when messages go and results are pruned too', () => {
    expect(doneText({ removed: 54, total: 62, pruned: 1, offloaded: 0 }, false)).toBe(
      'removed 54 of 62 messages, pruned 1 tool result',
    );
    expect(doneText({ removed: 0, total: 24, pruned: 0, offloaded: 5 }, false)).toBe('offloaded 5 tool results');
  });
});

describe("what summarize's model calls cost", () => {
  it('leaves out the counts that are zero', () => {
    fc.assert(
      fc.property(
        fc.record({ calls: fc.nat(20), cached: fc.nat(20), failed: fc.nat(20), input: fc.nat(9), output: fc.nat(9) }),
        fc.nat(3),
        (counts, simulated) => {
          const usage: SummaryUsage = {
            ...NO_USAGE,
            ...counts,
            cached: Math.min(counts.cached, counts.calls),
            failed: Math.min(counts.failed, counts.calls),
            simulated,
            promptTokens: simulated * 100,
          };
          for (const line of [usageLine(usage, false, 1024), usageLine(usage, true, 1024)])
            expect(line).not.toMatch(ZERO_COUNT);
          expect(usageLine(usage, false, 1024).includes('from the cache')).toBe(usage.cached > 0);
        },
      ),
    );
    expect(usageLine(NO_USAGE, false, 1024)).toBe('summarize: no model call was needed');
    expect(usageLine(NO_USAGE, true, 1024)).toBe('summarize: would make no model call (nothing was sent)');
    expect(usageLine({ ...NO_USAGE, calls: 3, cached: 3 }, false, 1024)).toBe(
      'summarize: 3 model calls (3 from the cache)',
    );
  });
});

describe('what a dry run says', () => {
  /** Plain chat with no identifier anywhere: turns alone, or steps alone. */
  function chat(dir: string): void {
    const messages: object[] = [{ role: 'system', content: 'You are helpful.' }];
    for (let i = 0; i < 8; i++)
      messages.push(
        { role: 'user', content: 'please tell me a story about cats and dogs '.repeat(20) },
        { role: 'assistant', content: 'once upon a time there was a cat '.repeat(20) },
      );
    writeFileSync(path.join(dir, 'chat.json'), JSON.stringify(messages));
    const steps: object[] = [{ role: 'user', content: 'do the task' }];
    for (let i = 0; i < 6; i++)
      steps.push(
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'look', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: `c${i}`, content: 'nothing much here '.repeat(30) },
      );
    writeFileSync(path.join(dir, 'steps.json'), JSON.stringify(steps));
  }

  it('names the turns or steps that go, never zero of the other', async () => {
    const dir = tempDir();
    chat(dir);
    const turns = await runSwc(['compact', 'chat.json', '-t', '400', '--tokenizer', 'approx', '--dry-run'], {
      cwd: dir,
    });
    expect(turns.stdout).toMatch(/\nremoved 14 messages \([\d,]+ tokens\) in 7 turns\n/);
    const steps = await runSwc(['compact', 'steps.json', '-t', '300', '--tokenizer', 'approx', '--dry-run'], {
      cwd: dir,
    });
    expect(steps.stdout).toMatch(/\nremoved \d+ messages \([\d,]+ tokens\) in \d+ steps\n/);
    for (const r of [turns, steps]) expect(r.stdout).not.toMatch(ZERO_COUNT);
  });

  it('says a pruning that removes no message as what it pruned alone', async () => {
    const dir = tempDir();
    chat(dir);
    const r = await runSwc(
      [
        'compact',
        'steps.json',
        '-t',
        '500',
        '--tokenizer',
        'approx',
        '--strategy',
        'prune',
        '--min-tokens',
        '10',
        '--dry-run',
      ],
      { cwd: dir },
    );
    expect(r.stdout).toMatch(/\npruned \d+ tool results \([\d,]+ tokens saved\)\n/);
    expect(r.stderr + r.stdout).not.toMatch(ZERO_COUNT);
  });

  it('leaves out what a summary round names when the messages it replaces name no identifier', async () => {
    const dir = tempDir();
    chat(dir);
    const r = await runSwc(
      [
        'compact',
        'chat.json',
        '-t',
        '400',
        '--tokenizer',
        'approx',
        '--strategy',
        'summarize',
        '--summarize-command',
        'cat',
        '--dry-run',
      ],
      { cwd: dir },
    );
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/\nround 1 \(historical turns\): a summary would replace items 1–14, a call of /);
    expect(r.stdout).not.toContain('naming');
    expect(r.stdout + r.stderr).not.toMatch(ZERO_COUNT);
  });
});
