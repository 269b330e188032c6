/** Bad inputs refused by `swc compact` (test/bad-input.test.ts, test/e2e/bad-input.test.ts). */
import { afterAll, expect } from '@jest/globals';
import { cpSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, tempDir } from './cli.js';
import { runSwc } from './run-in-process.js';

export const BAD = path.join(ROOT, 'fixtures/bad');

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A fresh temporary directory holding a copy of a fixture (or of generated content). */
export function workDir(name: string, content?: string | Buffer): string {
  const dir = tempDir();
  dirs.push(dir);
  if (content === undefined) cpSync(path.join(BAD, name), path.join(dir, name));
  else writeFileSync(path.join(dir, name), content);
  return dir;
}

/**
 * Runs `swc compact NAME ARGS -o out.json` in a directory holding only NAME and asserts the refusal: exit 2, stdout
 * empty, exactly `message` on stderr, no out.json (nor a temporary file), NAME unchanged.
 */
export async function expectRefused(
  name: string,
  args: readonly string[],
  message: string,
  content?: string | Buffer,
): Promise<void> {
  const dir = workDir(name, content);
  const before = readFileSync(path.join(dir, name));
  const run = await runSwc(['compact', name, ...args, '-o', 'out.json'], { cwd: dir });
  expect(run).toEqual({ status: 2, stdout: '', stderr: `${message}\n` });
  expect(readdirSync(dir)).toEqual([name]);
  // Buffer.equals, not toEqual: the generated inputs are up to 200 MB.
  expect(readFileSync(path.join(dir, name)).equals(before)).toBe(true);
}
