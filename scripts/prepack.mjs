/**
 * `prepack` (run by `npm pack` and `npm publish`): installs the build's dev dependencies if they are missing
 * (pre-commit and other installs may leave them out), then builds dist/. It writes nothing else: the tarball's
 * package.json is the repository's, byte for byte, so no pack, interrupted or not, ever edits the checked-out file.
 * That manifest has no `prepare` script (scripts/prepare.mjs runs as `postprepare`), so installing the tarball never
 * builds and npm has no install script to warn about.
 *
 * Everything npm prints goes to stderr: tools read the tarball's name from `npm pack`'s standard output.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, hasBuildTools } from './prepare.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Runs npm with its output on stderr; @returns the exit status. */
function npm(args) {
  const bin = process.env.npm_execpath;
  const r = bin
    ? spawnSync(process.execPath, [bin, ...args], { stdio: ['ignore', 2, 2], cwd: ROOT })
    : spawnSync('npm', args, { stdio: ['ignore', 2, 2], cwd: ROOT, shell: process.platform === 'win32' });
  return r.status ?? 1;
}

/** @returns the exit status: the dev dependencies' install's when it fails, else the build's. */
function prepack() {
  if (!hasBuildTools()) {
    // --ignore-scripts: the clone's own install scripts (the build) would run here too; the build follows anyway.
    const status = npm(['install', '--include=dev', '--no-save', '--ignore-scripts', '--no-audit', '--no-fund']);
    if (status !== 0) return status;
  }
  return build();
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) process.exitCode = prepack();
