/**
 * `postprepare` (run by `npm install` and `npm ci` in a clone, and by npm in the clone of a git dependency): builds
 * dist/ when the build's tools are installed, and otherwise leaves the build to `npm pack` (scripts/prepack.mjs)
 * instead of failing. An install that leaves the dev dependencies out (`--omit=dev`, `NODE_ENV=production`,
 * pre-commit installing the hook) then still succeeds; the packed package never needs a build.
 *
 * Why `postprepare` and not `prepare`: the tarball ships package.json as it is here, and npm counts a `prepare` in
 * a package installed from a file, a folder or git as an install script (npm 11 warns about it, npm 12 blocks it;
 * installed from a folder it even runs, and fails: this file is not shipped). npm runs `postprepare` only in the
 * project `npm install` runs in (a clone, or the clone npm makes of a git dependency, which has to build), never for a
 * package installed into it, so the same manifest builds a clone and leaves every install of the package alone.
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
  else
    process.stderr.write(
      `transcript-compact: the build's dev dependencies (${BUILD_TOOLS.join(', ')}) are not installed; dist/ is built when the package is packed\n`,
    );
}
