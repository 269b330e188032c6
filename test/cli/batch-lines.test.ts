/**
 * An `--in-place` batch reports each file as it is written, not once at the end, so an interrupted run leaves a record
 * of what it already rewrote (issue 57, item 7). The check happens at a fixed point inside swc: when the first file's
 * line reaches stderr, the files on disk are looked at.
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { CliIo } from '../../src/cli/io.js';
import { run } from '../../src/cli/program.js';

const dir = mkdtempSync(path.join(tmpdir(), 'swc-batch-lines-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const FILES = 60;
const original = readFileSync(new URL('../../fixtures/sample.jsonl', import.meta.url), 'utf8');
const names = Array.from({ length: FILES }, (_, i) => `t${String(i).padStart(3, '0')}.jsonl`);

describe('an --in-place batch', () => {
  it('prints each file line as that file is written, before the later files are', async () => {
    for (const name of names) writeFileSync(path.join(dir, name), original);
    const lines: string[] = [];
    /** How many files were already rewritten when each line was printed. */
    const rewrittenAt: number[] = [];
    const rewritten = (): number => names.filter((n) => readFileSync(path.join(dir, n), 'utf8') !== original).length;
    const io: CliIo = {
      stdout: { write: () => true },
      stderr: {
        write(chunk) {
          const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
          for (const line of text.split('\n').filter((l) => l.includes('.jsonl: '))) {
            lines.push(line);
            rewrittenAt.push(rewritten());
          }
          return true;
        },
      },
      stdin: Readable.from([]),
      env: { NO_COLOR: '1' },
      cwd: dir,
    };
    const status = await run(['compact', '*.jsonl', '--in-place', '-t', '2000', '--tokenizer', 'approx'], io);
    expect(status).toBe(0);
    // One line a file, in sorted path order, each file rewritten by the time its line is printed...
    expect(lines.map((l) => /^swc: (\S+):/.exec(l)?.[1])).toEqual(names);
    rewrittenAt.forEach((count, k) => expect(count).toBeGreaterThanOrEqual(k + 1));
    // ...and the first printed while most files were still as they were.
    expect(rewrittenAt[0]).toBeLessThan(FILES / 2);
    expect(rewritten()).toBe(FILES);
  });
});
