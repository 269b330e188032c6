/** Bad input as big as it gets: a single line of 200 MB (the rest of the bad inputs: test/bad-input.test.ts). */
import { describe, expect, it } from '@jest/globals';
import { expectRefused, workDir } from '../helpers/bad-input.js';
import { runSwc } from '../helpers/run-in-process.js';

const APPROX = ['--tokenizer', 'approx'];

describe('a single line of 200 MB', () => {
  const size = 200 * 1024 * 1024;
  const system = '{"role":"system","content":"Be terse."}';
  const task = '{"role":"user","content":"Summarize."}';

  it('is compacted away with the old turn it belongs to', async () => {
    const big = `{"role":"assistant","content":"${'x'.repeat(size)}"}`;
    const dir = workDir('big.jsonl', `${system}\n{"role":"user","content":"Old."}\n${big}\n${task}\n`);
    const run = await runSwc(['compact', 'big.jsonl', '-t', '1000', ...APPROX], { cwd: dir });
    expect(run.status).toBe(0);
    const note =
      '{"role":"user","content":"[2 earlier messages were removed from this conversation to free up context and cannot be recovered.]"}';
    expect(run.stdout).toBe(`${system}\n${note}\n${task}\n`);
  }, 300000);

  it('is refused at the exact column where it breaks', async () => {
    const broken = `{"role":"assistant","content":"${'x'.repeat(size)}",}`;
    const text = `${system}\n${broken}\n${task}\n`;
    await expectRefused(
      'big.jsonl',
      ['-t', '1000', ...APPROX],
      `swc: big.jsonl:2:${broken.length}: line 2 is not valid JSON: expected a key string`,
      text,
    );
  }, 300000);
});
