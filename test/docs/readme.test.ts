/**
 * The README is a landing page: short, its set-up answers at once (no npx in the clone, which would copy the clone
 * and build it again), and every output block marked `<!-- example -->` is the whole of what the built binary prints
 * (only a run's time may differ).
 */
import { describe, expect, it } from '@jest/globals';
import { readFileSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { ROOT, swc, tempDir } from '../helpers/cli.js';

const README = readFileSync(path.join(ROOT, 'README.md'), 'utf8');

interface Example {
  /** The command as the README shows it, `$ swc …`. */
  readonly command: string;
  readonly args: string[];
  readonly expected: string[];
}

/** Splits a command line as a shell would for plain words and single-quoted ones. */
function words(line: string): string[] {
  return [...line.matchAll(/'([^']*)'|(\S+)/g)].map((m) => (m[1] ?? m[2]) as string);
}

/** The examples: a `console` block right after `<!-- example -->`, `$ swc ARGS` first, then the output. */
function examplesOf(markdown: string): Example[] {
  const out: Example[] = [];
  for (const m of markdown.matchAll(/<!-- example -->\n```console\n([\s\S]*?)\n```/g)) {
    const [command = '', ...output] = (m[1] as string).split('\n');
    out.push({ command, args: words(command.replace(/^\$ swc /, '')), expected: output });
  }
  return out;
}

/** A line with its run time made constant: `…; 2.87 s` in a summary varies from run to run. */
function steady(line: string): string {
  return line.replace(/; \d+(\.\d+)? s$/, '; N s');
}

describe('the README', () => {
  it('is at most 12,000 bytes', () => {
    expect(Buffer.byteLength(README)).toBeLessThanOrEqual(12_000);
  });

  it('sets up with two commands, the first running the sample straight from bin/ after the install', () => {
    const blocks = [...README.matchAll(/## Set-up\n[\s\S]*?```sh\n([^\n]+)\n```[\s\S]*?```sh\n([^\n]+)\n```/g)][0];
    expect(blocks).toBeDefined();
    const [, first = '', second = ''] = blocks as RegExpMatchArray;
    expect(first).toMatch(/^npm install && node bin\/swc\.js compact fixtures\/sample\.jsonl /);
    expect(first).not.toMatch(/npx/);
    expect(second).toBe('npm test');
    const r = swc(words(first.slice('npm install && node bin/swc.js '.length)));
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('target 2,000 met');
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

  it.each(examples.map((e) => [e.args.join(' '), e] as const))('shows the whole real output of swc %s', (_name, example) => {
    // Run where the README's relative paths lead, without writing into the clone.
    const dir = tempDir();
    symlinkSync(path.join(ROOT, 'fixtures'), path.join(dir, 'fixtures'));
    const r = swc(example.args, { cwd: dir });
    expect(r.status).not.toBeNull();
    // Standard output, then standard error, line for line; only a run's time may differ.
    const lines = (text: string): string[] => (text === '' ? [] : text.replace(/\n$/, '').split('\n'));
    expect(example.expected.map(steady)).toEqual([...lines(r.stdout), ...lines(r.stderr)].map(steady));
  });
});
