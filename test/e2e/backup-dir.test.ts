/**
 * --backup-dir on a file of several MiB: the copy is streamed in pieces and compared piece by piece (the rest:
 * test/cli/backup-dir.test.ts).
 */
import { describe, expect, it } from '@jest/globals';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { tempDir } from '../helpers/cli.js';
import { runSwc } from '../helpers/run-in-process.js';

const TARGET = ['-t', '200', '--tokenizer', 'approx'];

/** A folder with an empty `in/`. */
function tree(): string {
  const dir = tempDir();
  mkdirSync(path.join(dir, 'in'));
  return dir;
}

describe('--backup-dir', () => {
  it('copies a file of several MiB exactly (it is streamed in pieces)', async () => {
    const dir = tree();
    const lines = [JSON.stringify({ role: 'system', content: 'You are an agent.' })];
    for (let i = 0; i < 40; i++) {
      lines.push(JSON.stringify({ role: 'user', content: `question ${i} ${'é'.repeat(50_000)}` }));
      lines.push(JSON.stringify({ role: 'assistant', content: `answer ${i} ${'x'.repeat(30_000 + i)}` }));
    }
    const big = Buffer.from(`${lines.join('\n')}\n`);
    expect(big.length).toBeGreaterThan(3 << 20);
    writeFileSync(path.join(dir, 'in/big.jsonl'), big);
    const r = await runSwc(['compact', 'in/big.jsonl', ...TARGET, '--in-place', '--backup-dir', 'backups'], {
      cwd: dir,
    });
    expect(r.status).toBe(0);
    expect(readFileSync(path.join(dir, 'backups/big.jsonl')).equals(big)).toBe(true);
    // Run again on the original: the backup there has the same bytes, compared piece by piece.
    writeFileSync(path.join(dir, 'in/big.jsonl'), big);
    expect(
      (await runSwc(['compact', 'in/big.jsonl', ...TARGET, '--in-place', '--backup-dir', 'backups'], { cwd: dir }))
        .status,
    ).toBe(0);
    // One byte different at the end: refused.
    const other = Buffer.from(big);
    other[other.length - 3] = 0x79;
    writeFileSync(path.join(dir, 'in/big.jsonl'), other);
    const refused = await runSwc(['compact', 'in/big.jsonl', ...TARGET, '--in-place', '--backup-dir', 'backups'], {
      cwd: dir,
    });
    expect(refused.status).toBe(2);
    expect(readFileSync(path.join(dir, 'backups/big.jsonl')).equals(big)).toBe(true);
  });
});
