/**
 * `prepack` and `postpack`: what `npm pack` and `npm publish` put in the tarball is a built package whose
 * package.json has no `prepare` script, so installing it never builds and npm 11 has no install script to warn about.
 *
 *   node scripts/pack-manifest.mjs prepack    installs the build's dev dependencies if they are missing (pre-commit
 *                                              and other installs may leave them out), builds dist/, then writes
 *                                              package.json without `prepare` (the original is kept aside)
 *   node scripts/pack-manifest.mjs postpack   puts the original package.json back
 *
 * Everything npm prints goes to stderr: tools read the tarball's name from `npm pack`'s standard output.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, hasBuildTools } from './prepare.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const MANIFEST = path.join(ROOT, 'package.json');
const KEPT = path.join(ROOT, 'node_modules', '.transcript-compact-package.json');

/**
 * The manifest as published: the same text without `scripts.prepare` (and without `scripts` when nothing is left).
 * @param text package.json as it is in the repository
 * @returns the published package.json, formatted as npm formats it
 */
export function publishedManifest(text) {
  const manifest = JSON.parse(text);
  if (manifest.scripts) {
    delete manifest.scripts.prepare;
    if (Object.keys(manifest.scripts).length === 0) delete manifest.scripts;
  }
  return `${JSON.stringify(manifest, null, 2)}\n`;
}

/** Runs npm with its output on stderr; @returns the exit status. */
function npm(args) {
  const bin = process.env.npm_execpath;
  const r = bin
    ? spawnSync(process.execPath, [bin, ...args], { stdio: ['ignore', 2, 2], cwd: ROOT })
    : spawnSync('npm', args, { stdio: ['ignore', 2, 2], cwd: ROOT, shell: process.platform === 'win32' });
  return r.status ?? 1;
}

function prepack() {
  if (!hasBuildTools()) {
    const status = npm(['install', '--include=dev', '--no-save', '--ignore-scripts', '--no-audit', '--no-fund']);
    if (status !== 0) return status;
  }
  const status = build();
  if (status !== 0) return status;
  const text = readFileSync(MANIFEST, 'utf8');
  mkdirSync(path.dirname(KEPT), { recursive: true });
  writeFileSync(KEPT, text);
  writeFileSync(MANIFEST, publishedManifest(text));
  return 0;
}

function postpack() {
  if (existsSync(KEPT)) renameSync(KEPT, MANIFEST);
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const step = process.argv[2];
  if (step === 'prepack') process.exitCode = prepack();
  else if (step === 'postpack') process.exitCode = postpack();
  else {
    process.stderr.write('usage: node scripts/pack-manifest.mjs prepack|postpack\n');
    process.exitCode = 2;
  }
}
