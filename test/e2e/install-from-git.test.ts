/**
 * Installing from a clone of the repository, as pre-commit installs the swc-check hook: `npm install` in the clone,
 * `npm pack`, then `npm install -g` of the tarball `npm pack` named on its standard output. The clone is a fresh
 * `git clone` of this repository (no dist/, no node_modules), so nothing built here can help. The install must not
 * need the dev dependencies (an install that leaves them out still works); the pack never writes the clone's
 * package.json, which the tarball holds byte for byte; and that manifest has no `prepare` script, so installing the
 * tarball never builds and npm has no install script to warn about. The last test runs pre-commit itself when it is
 * on PATH.
 */
import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, tempDir } from '../helpers/cli.js';

const MINUTES = 60_000;

/** Runs a command with npm's prefix (where `-g` installs) set to `prefix`, as pre-commit's node environment does. */
function sh(command: string, args: string[], cwd: string, prefix: string, env: Record<string, string> = {}) {
  const r = spawnSync(command, args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', NPM_CONFIG_PREFIX: prefix, npm_config_prefix: prefix, ...env },
    maxBuffer: 64 * 1024 * 1024,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A clone of this repository's HEAD with the work tree's tracked changes in it (no build, no node_modules). */
function freshClone(): string {
  const dir = path.join(tempDir(), 'repo');
  expect(spawnSync('git', ['clone', '--quiet', '--no-hardlinks', ROOT, dir]).status).toBe(0);
  // Tracked files as they are in the work tree, so the test checks the change under test before it is committed.
  const changed = spawnSync('git', ['diff', '--name-only', 'HEAD'], { cwd: ROOT, encoding: 'utf8' })
    .stdout.split('\n')
    .filter(Boolean);
  for (const file of changed)
    if (existsSync(path.join(ROOT, file))) cpSync(path.join(ROOT, file), path.join(dir, file));
  return dir;
}

function hasPreCommit(): boolean {
  return spawnSync('pre-commit', ['--version'], { encoding: 'utf8' }).status === 0;
}

describe('installing from a clone of the repository', () => {
  it(
    'needs no dev dependency: npm install without them, npm pack, npm install -g of the tarball gives a working swc',
    () => {
      const clone = freshClone();
      const prefix = tempDir();
      // What a pre-commit or npm that leaves the dev dependencies out does: the build script runs without tsc.
      const install = sh(
        'npm',
        ['install', '--omit=dev', '--no-save', '--no-progress', '--no-audit', '--no-fund'],
        clone,
        prefix,
      );
      expect(install.stderr).not.toMatch(/not found/);
      expect(install.status).toBe(0);
      const manifestPath = path.join(clone, 'package.json');
      const manifest = readFileSync(manifestPath);
      // Any write, even one undone before the pack ends, moves the change time; a file put back is another inode.
      const before = statSync(manifestPath, { bigint: true });
      const pack = sh('npm', ['pack'], clone, prefix);
      expect(pack.status).toBe(0);
      // pre-commit takes all of standard output as the tarball's name.
      const tarball = pack.stdout.trim();
      expect(tarball).toBe('transcript-compact-0.1.0.tgz');
      // npm pack never touched the clone's package.json, and packed it as it is.
      const after = statSync(manifestPath, { bigint: true });
      expect({ ino: after.ino, ctime: after.ctimeNs, mtime: after.mtimeNs }).toEqual({
        ino: before.ino,
        ctime: before.ctimeNs,
        mtime: before.mtimeNs,
      });
      expect(readFileSync(manifestPath).equals(manifest)).toBe(true);
      const packed = spawnSync('tar', ['-xzOf', path.join(clone, tarball), 'package/package.json'], {
        maxBuffer: 1 << 20,
      });
      expect(packed.status).toBe(0);
      expect(packed.stdout.equals(manifest)).toBe(true);

      const global = sh('npm', ['install', '-g', path.join(clone, tarball), '--no-audit', '--no-fund'], clone, prefix);
      expect(global.status).toBe(0);
      // npm 11 warns about a package with install scripts; the packed one has none.
      expect(global.stderr).not.toMatch(/install-scripts|prepare/);
      const installed = path.join(prefix, 'lib/node_modules/transcript-compact');
      expect(
        (JSON.parse(readFileSync(path.join(installed, 'package.json'), 'utf8')) as { scripts?: Record<string, string> })
          .scripts?.prepare,
      ).toBeUndefined();
      // Installed into a project from the tarball file, as the README says: no build, no warning.
      const project = tempDir();
      writeFileSync(path.join(project, 'package.json'), '{"name":"consumer","version":"1.0.0","private":true}\n');
      const local = sh('npm', ['install', path.join(clone, tarball), '--no-audit', '--no-fund'], project, prefix);
      expect(local.status).toBe(0);
      expect(local.stderr).not.toMatch(/install-scripts|prepare/);
      expect(existsSync(path.join(project, 'node_modules/transcript-compact/dist/bin/main.js'))).toBe(true);
      expect(readdirSync(path.join(installed, 'dist/ranks')).sort()).toEqual(['cl100k_base.bin', 'o200k_base.bin']);

      const run = sh(
        path.join(prefix, 'bin/swc'),
        ['compact', '--check', '--target', '2000', 'fixtures/sample.jsonl'],
        ROOT,
        prefix,
      );
      expect(run.stdout).toBe('fixtures/sample.jsonl\n');
      expect(run.status).toBe(1);
    },
    10 * MINUTES,
  );

  const withPreCommit = hasPreCommit() ? it : it.skip;
  if (!hasPreCommit()) {
    // Said once, so a run without pre-commit does not pass this test silently.
    process.stderr.write(
      'install-from-git.test.ts: pre-commit is not on PATH; the swc-check hook is not run with pre-commit (`apt-get install pre-commit` or `pip install pre-commit`)\n',
    );
  }
  withPreCommit(
    'installs the swc-check hook from the repository with pre-commit and fails a commit over its budget',
    () => {
      const clone = freshClone();
      spawnSync('git', ['-C', clone, 'add', '-A']);
      spawnSync('git', [
        '-C',
        clone,
        '-c',
        'user.name=t',
        '-c',
        'user.email=t@t',
        'commit',
        '--quiet',
        '--allow-empty',
        '-m',
        'work tree',
      ]);
      const rev = spawnSync('git', ['-C', clone, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).stdout.trim();
      const project = tempDir();
      const home = tempDir();
      const git = (...args: string[]) => spawnSync('git', ['-C', project, ...args], { encoding: 'utf8' });
      expect(git('init', '--quiet').status).toBe(0);
      mkdirSync(path.join(project, 'archive'));
      cpSync(path.join(ROOT, 'fixtures/sample.jsonl'), path.join(project, 'archive/sample.jsonl'));
      writeFileSync(path.join(project, 'archive/hello.jsonl'), '{"role": "user", "content": "Hello!"}\n');
      writeFileSync(
        path.join(project, '.pre-commit-config.yaml'),
        `repos:\n  - repo: ${clone}\n    rev: ${rev}\n    hooks:\n      - id: swc-check\n        args: [--target, '2000']\n        files: ^archive/.*\\.jsonl$\n`,
      );
      git('add', '-A');
      // The environment a pre-commit or npm that leaves dev dependencies out gives (npm_config_omit=dev).
      const run = (files: string[]) =>
        sh(
          'pre-commit',
          ['run', 'swc-check', '--color', 'never', '--files', ...files],
          project,
          path.join(home, 'unused'),
          { PRE_COMMIT_HOME: home, npm_config_omit: 'dev' },
        );

      const over = run(['archive/sample.jsonl', 'archive/hello.jsonl']);
      expect(over.stdout).not.toMatch(/tsc: not found|npm error|An unexpected error/);
      expect(over.stdout).toMatch(/Failed/);
      expect(over.stdout).toMatch(/^archive\/sample\.jsonl$/m);
      expect(over.stdout).not.toMatch(/^archive\/hello\.jsonl$/m);
      expect(over.status).toBe(1);
      const within = run(['archive/hello.jsonl']);
      expect(within.stdout).toMatch(/Passed/);
      expect(within.status).toBe(0);

      // The hook's package was installed from the tarball npm pack made, whose package.json has no prepare script.
      const installed = spawnSync('find', [home, '-path', '*/lib/node_modules/transcript-compact/package.json'], {
        encoding: 'utf8',
      })
        .stdout.trim()
        .split('\n');
      expect(installed).toHaveLength(1);
      expect(
        (JSON.parse(readFileSync(installed[0] as string, 'utf8')) as { scripts?: Record<string, string> }).scripts
          ?.prepare,
      ).toBeUndefined();
    },
    10 * MINUTES,
  );
});
