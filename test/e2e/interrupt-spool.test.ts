import { describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { BIN, tempDir } from '../helpers/cli.js';

/**
 * A compressed input past 32 MiB of text is decompressed into a temporary folder; an interrupt must remove it, as it
 * removes temporary files of writes (the folder holds the whole transcript in plain text).
 */

function bigGzip(dir: string): string {
  const lines = ['{"role":"system","content":"Be brief."}'];
  // ~48 MiB of text, varied enough that compacting it takes a while after the spool is made.
  for (let i = 0; lines.length < 120_000; i++)
    lines.push(
      JSON.stringify({
        role: i % 2 ? 'assistant' : 'user',
        content: `message ${i} ${'lorem ipsum dolor '.repeat(22)}${i * 7919}`,
      }),
    );
  const file = path.join(dir, 'big.jsonl.gz');
  writeFileSync(file, gzipSync(`${lines.join('\n')}\n`, { level: 1 }));
  return file;
}

const spools = (dir: string): string[] => readdirSync(dir).filter((n) => n.startsWith('swc-spool-'));

describe('an interrupted run of a big compressed file', () => {
  it.each(['SIGINT', 'SIGTERM'] as const)(
    'leaves no decompressed spool behind after %s',
    async (signal) => {
      const dir = tempDir();
      const tmp = tempDir();
      const input = bigGzip(dir);
      const child = spawn(
        process.execPath,
        [BIN, 'compact', input, '-t', '1000', '-o', path.join(dir, 'out.jsonl.gz')],
        { env: { ...process.env, TMPDIR: tmp }, stdio: 'ignore' },
      );
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        child.on('exit', (code, sig) => resolve({ code, signal: sig })),
      );
      // The interrupt lands while the spool exists: the moment it appears is watched for, not guessed.
      let seen = false;
      let done = false;
      void exited.then(() => (done = true));
      while (!done && !seen) {
        seen = spools(tmp).length > 0;
        if (!seen) await new Promise((r) => setImmediate(r));
      }
      expect(seen).toBe(true);
      child.kill(signal);
      const end = await exited;
      // It was interrupted (or had just finished); either way nothing of the spool is left.
      expect(end.signal === signal || end.code === 0).toBe(true);
      expect(spools(tmp)).toEqual([]);
    },
    120_000,
  );
});
