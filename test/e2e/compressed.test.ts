/**
 * A decompression bomb on the command line: 80 MiB of spaces gzipped, which swc stops inflating at its limit. Every
 * other damaged compressed file: test/cli/compressed.test.ts.
 */
import { describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { tempDir } from '../helpers/cli.js';
import { runSwc } from '../helpers/run-in-process.js';

const TARGET = ['-t', '200', '--tokenizer', 'approx'];

describe('a damaged compressed file', () => {
  it('is refused with one line, exit 2, nothing written, when a decompression bomb', async () => {
    const bytes = gzipSync(Buffer.alloc(80 << 20, 0x20));
    const dir = tempDir();
    writeFileSync(path.join(dir, 'a.jsonl.gz'), bytes);
    const r = await runSwc(['compact', 'a.jsonl.gz', ...TARGET, '-o', 'out.jsonl.gz'], { cwd: dir });
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('refused as a possible decompression bomb');
    expect(existsSync(path.join(dir, 'out.jsonl.gz'))).toBe(false);
    const inPlace = await runSwc(['compact', 'a.jsonl.gz', ...TARGET, '--in-place'], { cwd: dir });
    expect(inPlace.status).toBe(2);
    expect(readFileSync(path.join(dir, 'a.jsonl.gz')).equals(bytes)).toBe(true);
    expect(readdirSync(dir)).toEqual(['a.jsonl.gz']);
  });
});
