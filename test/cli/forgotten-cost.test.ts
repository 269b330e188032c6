/**
 * A plain `swc compact` never works out what a compaction forgets; a dry run, --stat and --json do. Standard input is
 * compacted in this thread, so a spy on the inventory sees every call.
 */
import { describe, expect, it, jest } from '@jest/globals';

const real = await import('../../src/outcome/forgotten.js');
const inventoryOf = jest.fn(real.inventoryOf);
jest.unstable_mockModule('../../src/outcome/forgotten.js', () => ({ ...real, inventoryOf }));
const { runSwc } = await import('../helpers/run-in-process.js');

const CHAT = [
  { role: 'user', content: 'Fix src/auth/login.ts' },
  { role: 'assistant', content: 'It throws TypeError at src/auth/login.ts:42' },
  { role: 'user', content: 'Now the README.md' },
]
  .map((m) => JSON.stringify(m))
  .join('\n');

describe('the inventory of what a compaction forgets', () => {
  it.each([
    [[], 0],
    [['--check'], 0],
    [['-q'], 0],
    [['--dry-run'], 1],
    [['--dry-run', '--stat'], 1],
    [['--dry-run', '--json'], 1],
    [['--json'], 1],
  ])('is worked out %j: %d times', async (flags, calls) => {
    inventoryOf.mockClear();
    const r = await runSwc(['compact', '-', '-t', '10', '--tokenizer', 'approx', ...flags], {
      cwd: process.cwd(),
      stdin: CHAT,
    });
    expect(r.stderr).not.toMatch(/^swc: .*error/m);
    expect(inventoryOf).toHaveBeenCalledTimes(calls);
  });
});
