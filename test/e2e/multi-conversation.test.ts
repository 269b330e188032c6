/** The 200 tau-bench runs of a 4 MB real file, compacted through the CLI (the rest: test/formats/multi-conversation.test.ts). */
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, REAL_DATA, tempDir } from '../helpers/cli.js';
import { pairingProblems } from '../helpers/invariants.js';
import { expectOnlyListsChanged } from '../helpers/multi-conversation.js';
import { runSwc } from '../helpers/run-in-process.js';

type Item = Record<string, unknown>;

describe('files that hold many conversations: real trajectories through the CLI', () => {
  it("compacts the 200 tau-bench runs one by one, keeping each run's other fields, instructions, task and pairing", async () => {
    const source = path.join(REAL_DATA, 'openai-chat/taubench-gpt-4o-airline.json');
    const input = readFileSync(source, 'utf8');
    const runs = JSON.parse(input) as Array<{ traj: Item[] } & Item>;
    expect(runs).toHaveLength(200);
    const tmp = tempDir();
    for (const target of ['3000', '8000']) {
      const outFile = path.join(tmp, `${target}.json`);
      const run = await runSwc(['compact', source, '-t', target, '-o', outFile], { cwd: ROOT });
      expect(run.status).toBe(0);
      const output = readFileSync(outFile, 'utf8');
      const changed = expectOnlyListsChanged(input, output, 'taubench.json');
      expect(changed).toBeGreaterThan(0);
      expect(changed).toBeLessThan(200);
      const out = JSON.parse(output) as Array<{ traj: Item[] } & Item>;
      out.forEach((record, k) => {
        const { traj, ...rest } = record;
        const { traj: original, ...restIn } = runs[k]!;
        expect(rest).toEqual(restIn);
        expect(traj[0]).toEqual(original[0]);
        expect(traj).toContainEqual([...original].reverse().find((m) => m.role === 'user'));
        expect(pairingProblems(original, traj)).toEqual([]);
      });
      expect((await runSwc(['compact', outFile, '-t', target], { cwd: ROOT })).stdout).toBe(output);
    }
  });
});
