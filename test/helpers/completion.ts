/** What the tests of `swc completion` share (test/cli/completion.test.ts, test/e2e/completion.test.ts). */
import { expect } from '@jest/globals';
import type { Shell } from '../../src/cli/options.js';
import { parseStrategies } from '../../src/cli/settings.js';
import { STRATEGIES } from '../../src/pipeline/index.js';
import { tempDir } from './cli.js';
import { runSwc } from './run-in-process.js';

/** The script a shell gets (the run must succeed and print nothing on standard error). */
export async function completionScript(shell: Shell): Promise<string> {
  const r = await runSwc(['completion', shell], { cwd: tempDir() });
  expect([r.status, r.stderr]).toEqual([0, '']);
  return r.stdout;
}

/** replay's policies: `none` (alone) and every strategy but offload. */
export const REPLAY_POLICIES = ['none', ...STRATEGIES.filter((s) => s !== 'offload')];

/** Whether `swc compact --strategy` accepts a chain: the parser itself is the model. */
export function accepts(chain: readonly string[]): boolean {
  try {
    parseStrategies(chain.join(','));
    return true;
  } catch {
    return false;
  }
}

/** Every name alone, then every chain of two or more of them the parser accepts, shortest first. */
export function acceptedChains(names: readonly string[]): string[] {
  const out: string[][] = names.map((n) => [n]);
  for (let k = 2; k <= names.length; k++) {
    const longer = out.filter((c) => c.length === k - 1).flatMap((c) => names.map((n) => [...c, n]));
    out.push(...longer.filter(accepts));
  }
  return out.map((c) => c.join(','));
}
