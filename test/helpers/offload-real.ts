/** Offloading the real transcripts and restoring them (test/cli/offload.test.ts, test/e2e/offload.test.ts). */
import { expect } from '@jest/globals';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parsePointer } from '../../src/core/offload.js';
import { REAL_DATA, tempDir } from './cli.js';
import { runSwc } from './run-in-process.js';

/** The hash a store name holds: the first 16 hex digits of the SHA-256 of the file's bytes. */
const storeHash = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 16);

/** The real transcripts, relative to fixtures/real, sorted. */
export const REAL_FILES = readdirSync(REAL_DATA, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .flatMap((d) => readdirSync(path.join(REAL_DATA, d.name)).map((f) => path.join(d.name, f)))
  .filter((f) => !f.includes('saved_state'))
  .sort();

/**
 * Offloads a real transcript and checks that every result went to the store before the transcript, and that swc
 * restore gives the original bytes back.
 * @param file - the transcript, relative to fixtures/real
 */
export async function expectOffloadRoundTrip(
  file: string,
  rule: readonly string[] = ['--offload-over', '50'],
): Promise<void> {
  const dir = tempDir();
  const name = path.basename(file);
  writeFileSync(path.join(dir, name), readFileSync(path.join(REAL_DATA, file)));
  const off = await runSwc(
    [
      'compact',
      name,
      '-t',
      '1000',
      '--tokenizer',
      'approx',
      '--strategy',
      'offload',
      '--offload-dir',
      'store',
      ...rule,
      '-o',
      'out',
    ],
    { cwd: dir },
  );
  expect(off.stderr).not.toMatch(/^swc: error|cannot/m);
  expect(off.status).toBe(0);
  const out = readFileSync(path.join(dir, 'out'), 'utf8');
  const references = [...out.matchAll(/Tool result offloaded to (?:[^"\\]|\\.)*/g)].map(
    (m) => parsePointer(JSON.parse(`"${m[0]}"`) as string)?.reference ?? '',
  );
  for (const reference of references) {
    // Relative to the transcript's folder, inside the store, named by a hash of the bytes it holds.
    expect(path.isAbsolute(reference)).toBe(false);
    const file = path.resolve(dir, reference);
    expect(file.startsWith(path.join(dir, 'store', name) + path.sep)).toBe(true);
    expect(path.basename(file)).toContain(`-${storeHash(readFileSync(file, 'utf8'))}.txt`);
  }
  const original = readFileSync(path.join(dir, name), 'utf8').replace(/^\ufeff/, '');
  // The pointers lead to the store; naming it gives the same (when anything was offloaded, so there is one).
  const back = await runSwc(['restore', 'out'], { cwd: dir });
  expect(back.status).toBe(0);
  expect(back.stdout).toBe(original);
  if (references.length > 0)
    expect((await runSwc(['restore', 'out', '--offload-dir', 'store'], { cwd: dir })).stdout).toBe(original);
}
