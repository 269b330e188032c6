/**
 * The npm package as users install it: its own name, both commands, an ESM entry with its types and
 * `./package.json` in `exports`, a licence, the token tables, and nothing that points at files it does not ship
 * (source maps without sources) or that only the clone needs (tests, fixtures, sources).
 */
import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../helpers/cli.js';

interface Manifest {
  name: string;
  version: string;
  license: string;
  bin: Record<string, string>;
  exports: Record<string, unknown>;
  files: string[];
}
const PKG = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as Manifest;

/** What `npm pack` would put in the tarball (without running the build: the suite's build is already there). */
function packed(): { files: string[]; size: number } {
  const r = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8' });
  expect(r.status).toBe(0);
  const [entry] = JSON.parse(r.stdout) as Array<{ files: Array<{ path: string }>; size: number }>;
  return { files: (entry?.files ?? []).map((f) => f.path).sort(), size: entry?.size ?? 0 };
}

describe('the package', () => {
  it("ships the repository's package.json as it is, with no script npm runs when the package is installed", () => {
    const scripts = (
      JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
    ).scripts;
    // What npm counts as install scripts of a package installed from a file, a folder or git (prepare included).
    expect(
      Object.keys(scripts).filter((name) =>
        ['preinstall', 'install', 'postinstall', 'prepare', 'prepublish'].includes(name),
      ),
    ).toEqual([]);
    // A clone still builds on npm install (postprepare), and a pack builds first (prepack), rewriting nothing.
    expect(scripts.postprepare).toBe('node scripts/prepare.mjs');
    expect(scripts.prepack).toBe('node scripts/prepack.mjs');
    expect(Object.keys(scripts).filter((name) => name.endsWith('pack') || name.endsWith('publish'))).toEqual([
      'prepack',
    ]);
    // By construction: neither script loads the file system module, so neither writes or moves a file (the build
    // they start writes dist/ only).
    for (const script of ['scripts/prepack.mjs', 'scripts/prepare.mjs']) {
      const code = readFileSync(path.join(ROOT, script), 'utf8');
      expect({
        script,
        fs: code.match(/['"](node:)?fs(\/promises)?['"]|writeFile|appendFile|renameSync|copyFile/g),
      }).toEqual({ script, fs: null });
    }
  });

  it("has a registry name of its own, not the registry's unrelated swc", () => {
    expect(PKG.name).toBe('transcript-compact');
    expect(PKG.license).toBe('MIT');
  });

  it('installs the swc command and one named like the package, both the built CLI', () => {
    expect(Object.keys(PKG.bin).sort()).toEqual(['swc', 'transcript-compact']);
    for (const file of Object.values(PKG.bin)) {
      const text = readFileSync(path.join(ROOT, file), 'utf8');
      expect(text).toBe("#!/usr/bin/env node\nimport '../dist/bin/main.js';\n");
      accessSync(path.join(ROOT, file), constants.X_OK);
    }
    for (const name of Object.keys(PKG.bin)) {
      const r = spawnSync(process.execPath, [path.join(ROOT, PKG.bin[name] as string), '--version'], {
        encoding: 'utf8',
      });
      expect(r.stdout).toBe(`${PKG.version}\n`);
    }
  });

  it('exports the ESM entry with its types, and package.json', () => {
    expect(PKG.exports).toEqual({
      '.': { types: './dist/index.d.ts', import: './dist/index.js', default: './dist/index.js' },
      './package.json': './package.json',
    });
    expect(existsSync(path.join(ROOT, 'dist/index.d.ts'))).toBe(true);
  });

  it('is imported by its name, compact among its exports', () => {
    const script = `const m = await import('${PKG.name}'); const p = await import('${PKG.name}/package.json', { with: { type: 'json' } }); console.log(typeof m.compact, typeof m.compactSource, p.default.name);`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(`function function ${PKG.name}\n`);
  });

  it('carries an MIT LICENSE held by the swc authors', () => {
    const licence = readFileSync(path.join(ROOT, 'LICENSE'), 'utf8');
    expect(licence).toMatch(/^MIT License\n\nCopyright \(c\) \d{4} the swc authors\n/);
  });

  it('builds without source maps, whose sources it would not ship', () => {
    const build = JSON.parse(readFileSync(path.join(ROOT, 'tsconfig.build.json'), 'utf8')) as {
      compilerOptions: Record<string, unknown>;
    };
    expect(build.compilerOptions.sourceMap).toBe(false);
    expect(build.compilerOptions.declarationMap).toBe(false);
  });

  it('packs the commands, the build, the token tables and the licence, and nothing of the clone', () => {
    const { files, size } = packed();
    expect(files).toEqual(
      expect.arrayContaining([
        'LICENSE',
        'README.md',
        'package.json',
        'bin/swc.js',
        'bin/transcript-compact.js',
        'dist/index.js',
        'dist/index.d.ts',
        'dist/bin/main.js',
        'dist/bin/worker.js',
        'dist/ranks/o200k_base.bin',
        'dist/ranks/cl100k_base.bin',
      ]),
    );
    expect(
      files.filter(
        (f) =>
          f.endsWith('.map') ||
          f.startsWith('dist/cli/') ||
          f === 'dist/bin/modules.json' ||
          /^(src|test|fixtures|scripts|docs|\.github)\//.test(f) ||
          (f.endsWith('.ts') && !f.endsWith('.d.ts')),
      ),
    ).toEqual([]);
    // The README's development notes give the size: about 3.5 MB, most of it the two token tables.
    expect(size).toBeLessThan(4_000_000);
  }, 60_000);
});
