import { afterAll } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, cpSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PROPERTY_SCALE } from './scale.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const BIN = path.join(ROOT, 'bin/swc.js');
/** Real third-party transcripts kept in the repository (sources and licences in fixtures/real/PROVENANCE.md). */
export const REAL_DATA = path.join(ROOT, 'fixtures/real');

/** Past this size a transcript is big: the tests that read every real transcript read the big ones in test/e2e/. */
export const BIG_FILE = 512 * 1024;

/**
 * Past this size a transcript is big below full strength (SWC_PROPERTY_SCALE under 1, the development loop): the unit
 * tests read the transcripts between this and BIG_FILE only in `npm run test:e2e`, which runs them at full strength.
 */
export const LOOP_BIG_FILE = 192 * 1024;

/**
 * Whether a file is big at this strength: past BIG_FILE at full strength, past LOOP_BIG_FILE below it. A unit test
 * reads the files that are not, its twin in test/e2e/ the files that are, so at any strength the two read them all.
 */
export function isBig(file: string): boolean {
  return statSync(file).size > (PROPERTY_SCALE >= 1 ? BIG_FILE : LOOP_BIG_FILE);
}

/** The paths of the real transcripts (`.json` and `.jsonl` under fixtures/real), sorted. */
export function realTranscripts(dir = REAL_DATA): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .flatMap((entry) => {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) return realTranscripts(full);
      return /\.jsonl?$/.test(entry.name) ? [full] : [];
    });
}

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
