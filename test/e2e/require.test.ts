/**
 * What docs/library.md says about `require`: the package is ESM, and `require('transcript-compact')` loads it where
 * Node has require(esm) (20.19 and later), with no warning; where it has not, it throws ERR_REQUIRE_ESM. Checked on
 * the running Node with the packed tarball, unpacked into a fresh project as npm would place it.
 */
import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, tempDir } from '../helpers/cli.js';

const HAS_TAR = spawnSync('tar', ['--version']).status === 0;
/** The environment child processes run with: the test runner's NODE_OPTIONS (its VM modules) left out. */
const ENV: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: '' };
/** Whether the running Node has require(esm), asked of a plain Node process (jest's own process is not one). */
const SUPPORTS_REQUIRE_ESM =
  spawnSync(process.execPath, ['-p', 'process.features.require_module === true'], {
    encoding: 'utf8',
    env: ENV,
  }).stdout.trim() === 'true';

/** A project with the packed package in its node_modules; the library imports no other package. */
function projectWithPackage(): string {
  const dir = tempDir();
  const packed = spawnSync('npm', ['pack', '--ignore-scripts', '--pack-destination', dir], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  expect(packed.status).toBe(0);
  const tarball = readdirSync(dir).find((f) => f.endsWith('.tgz')) as string;
  expect(spawnSync('tar', ['-xzf', tarball], { cwd: dir }).status).toBe(0);
  const project = path.join(dir, 'project');
  mkdirSync(path.join(project, 'node_modules'), { recursive: true });
  renameSync(path.join(dir, 'package'), path.join(project, 'node_modules/transcript-compact'));
  writeFileSync(path.join(project, 'package.json'), '{"name":"project","version":"1.0.0"}\n');
  writeFileSync(
    path.join(project, 'index.cjs'),
    [
      "const { compactMessages } = require('transcript-compact');",
      "compactMessages([{ role: 'user', content: 'hi' }], { target: 100 }).then((r) => console.log(typeof compactMessages, r.changed));",
      '',
    ].join('\n'),
  );
  return project;
}

describe('require() of the package', () => {
  (HAS_TAR ? it : it.skip)(
    SUPPORTS_REQUIRE_ESM
      ? `loads it on Node ${process.version}, which has require(esm), without a warning`
      : `throws ERR_REQUIRE_ESM on Node ${process.version}, which has no require(esm)`,
    () => {
      const project = projectWithPackage();
      const r = spawnSync(process.execPath, ['index.cjs'], { cwd: project, encoding: 'utf8', env: ENV });
      if (SUPPORTS_REQUIRE_ESM) {
        expect({ status: r.status, stdout: r.stdout, stderr: r.stderr }).toEqual({
          status: 0,
          stdout: 'function false\n',
          stderr: '',
        });
      } else {
        expect(r.status).not.toBe(0);
        expect(r.stderr).toContain('ERR_REQUIRE_ESM');
      }
    },
    60_000,
  );

  it('is described so in docs/library.md', () => {
    const text = readFileSync(path.join(ROOT, 'docs/library.md'), 'utf8').replace(/\s+/g, ' ');
    expect(text).toContain("From CommonJS, `require('transcript-compact')` works on Node 20.19 and later");
    expect(text).toContain('on older Node 20 releases it throws `ERR_REQUIRE_ESM`');
  });

  if (!HAS_TAR) it('needs tar to unpack the tarball (skipped: no tar here)', () => undefined);
});
