/**
 * The command line's bundle (`npm run build`, after the compiler): dist/cli/main.js and dist/cli/worker.js, with the
 * modules they import from dist/, as a few files under dist/bin/ that bin/swc.js loads. A run loads one file for
 * each part of the road it takes instead of one for each module: resolving and compiling 64 small modules was a
 * third of what a run on a one-line file costs beyond Node's own start. Modules loaded at their point of use stay
 * apart (each dynamic import is a chunk of its own), and packages stay in node_modules.
 *
 * dist/bin/modules.json says which modules of dist/ each file holds (test/e2e/startup.test.ts reads it); it is not
 * packed.
 */
import { build } from 'esbuild';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT = path.join(ROOT, 'dist', 'bin');

// Chunks are named by their content: those of an earlier build would stay beside the new ones.
rmSync(OUT, { recursive: true, force: true });

const result = await build({
  absWorkingDir: ROOT,
  entryPoints: { main: 'dist/cli/main.js', worker: 'dist/cli/worker.js' },
  outdir: OUT,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  chunkNames: 'chunk-[hash]',
  metafile: true,
  logLevel: 'warning',
});

/** For each file written, the modules of dist/ it holds, as paths under dist/ ("cli/main.js"). */
const modules = {};
for (const [file, output] of Object.entries(result.metafile.outputs)) {
  modules[path.relative(OUT, path.join(ROOT, file))] = Object.keys(output.inputs)
    .map((input) => path.relative(path.join(ROOT, 'dist'), path.join(ROOT, input)))
    .sort();
}
writeFileSync(path.join(OUT, 'modules.json'), `${JSON.stringify(modules, null, 2)}\n`);
