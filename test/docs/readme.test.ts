/**
 * The README is a landing page: short, its set-up answers at once (no npx in the clone, which would copy the clone
 * and build it again), and every output block marked `<!-- example -->` is the whole of what the built binary prints
 * (only a run's time may differ: test/e2e/readme.test.ts runs them).
 */
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../helpers/cli.js';
import { examplesOf, README, setUpCommands } from '../helpers/readme.js';

describe('the README', () => {
  it('is at most 12,000 bytes', () => {
    expect(Buffer.byteLength(README)).toBeLessThanOrEqual(12_000);
  });

  it('sets up with two commands, the first running the sample straight from bin/ after the install', () => {
    const [first, second] = setUpCommands();
    expect(first).toMatch(/^npm install && node bin\/swc\.js compact fixtures\/sample\.jsonl /);
    expect(first).not.toMatch(/npx/);
    expect(second).toBe('npm test');
  });

  it('says how to use it from another project and globally, under the package name', () => {
    const name = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { name: string }).name;
    expect(README).toContain(`npm i -D ${name}`);
    expect(README).toContain(`npx ${name} compact`);
    expect(README).toContain(`npm i -g ${name}`);
  });

  it('says the package is not on the registry until its first release, and how to install a packed tarball meanwhile', () => {
    const { name, version } = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string };
    expect(README).toMatch(/\*\*Not on the registry yet\.\*\*/);
    expect(README).toContain('.github/workflows/release.yml');
    expect(README).toContain('npm install && npm pack');
    expect(README).toContain(`npm i -D ./${name}-${version}.tgz`);
  });

  const examples = examplesOf(README);

  it('has an output excerpt for each everyday use: compact, dry run, check', () => {
    expect(examples.filter((e) => !e.command.startsWith('$ swc compact '))).toEqual([]);
    expect(examples.map((e) => e.args.find((a) => a === '--dry-run' || a === '--check') ?? 'compact')).toEqual(['compact', '--dry-run', '--check']);
  });
});
