import { afterAll } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, cpSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const BIN = path.join(ROOT, 'bin/swc.js');
/** Real third-party transcripts kept in the repository (sources and licences in fixtures/real/PROVENANCE.md). */
export const REAL_DATA = path.join(ROOT, 'fixtures/real');

export interface CliRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** The test process's environment with NO_COLOR set and FORCE_COLOR removed (an empty one still counts as set). */
function plainEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
  delete env.FORCE_COLOR;
  return { ...env, ...extra };
}

/**
 * Runs the built CLI in a child process with NO_COLOR, as a user's shell would. A process costs about a second, so
 * this is for tests of the process itself (start-up, signals, the exit code the entry point sets, real pipes); other
 * tests call the command line in process with `runSwc` from run-in-process.ts.
 */
export function swc(
  args: readonly string[],
  options: { cwd?: string; input?: string | Buffer; env?: Record<string, string> } = {},
): CliRun {
  const result = spawnSync(process.execPath, [BIN, ...args], {
    cwd: options.cwd ?? ROOT,
    input: options.input,
    env: plainEnv(options.env),
    encoding: 'utf8',
    maxBuffer: 512 * 1024 * 1024,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

const made: string[] = [];
// Every test file that makes temporary directories removes them when it is done.
afterAll(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A fresh temporary directory, optionally holding copies of some files; removed after the test file. */
export function tempDir(copies: readonly string[] = []): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'swc-test-'));
  made.push(dir);
  for (const file of copies) cpSync(file, path.join(dir, path.basename(file)));
  return dir;
}
