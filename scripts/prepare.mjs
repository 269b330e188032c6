/**
 * `prepare` (run by `npm install` and `npm ci` in a clone): builds dist/ when the build's tools are installed, and
 * otherwise leaves the build to `npm pack` (scripts/pack-manifest.mjs) instead of failing. An install that leaves the
 * dev dependencies out (`--omit=dev`, `NODE_ENV=production`, pre-commit installing the hook) then still succeeds;
 * the packed package never needs a build.
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const require = createRequire(import.meta.url);

/**
 * The dev dependencies `npm run build` needs: the compiler, the rank files scripts/build-ranks.mjs reads, and the
 * bundler of the command line (scripts/bundle-cli.mjs).
 */
export const BUILD_TOOLS = ['typescript', 'gpt-tokenizer', 'esbuild'];

/** @returns whether every build tool resolves from this folder. */
export function hasBuildTools() {
  return BUILD_TOOLS.every((name) => {
    try {
      require.resolve(`${name}/package.json`);
      return true;
    } catch {
      return false;
    }
  });
}

/** Runs `npm run build` with npm's own binary when npm started this script; @returns its exit status. */
export function build() {
  const npm = process.env.npm_execpath;
  const r = npm
    ? spawnSync(process.execPath, [npm, 'run', 'build'], { stdio: 'inherit' })
    : spawnSync('npm', ['run', 'build'], { stdio: 'inherit', shell: process.platform === 'win32' });
  return r.status ?? 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (hasBuildTools()) process.exitCode = build();
  else process.stderr.write(`transcript-compact: the build's dev dependencies (${BUILD_TOOLS.join(', ')}) are not installed; dist/ is built when the package is packed\n`);
}
