/** The README's set-up and its output examples, run with the built binary (the rest: test/docs/readme.test.ts). */
import { describe, expect, it } from '@jest/globals';
import { symlinkSync } from 'node:fs';
import path from 'node:path';
import { ROOT, swc, tempDir } from '../helpers/cli.js';
import { examplesOf, README, setUpCommands, steady, words } from '../helpers/readme.js';

describe('the README', () => {
  it('sets up with two commands, the first running the sample straight from bin/ after the install', () => {
    const [first] = setUpCommands();
    const r = swc(words(first.slice('npm install && node bin/swc.js '.length)));
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('target 2,000 met');
  });

  const examples = examplesOf(README);

  it.each(examples.map((e) => [e.args.join(' '), e] as const))(
    'shows the whole real output of swc %s',
    (_name, example) => {
      // Run where the README's relative paths lead, without writing into the clone.
      const dir = tempDir();
      symlinkSync(path.join(ROOT, 'fixtures'), path.join(dir, 'fixtures'));
      const r = swc(example.args, { cwd: dir });
      expect(r.status).not.toBeNull();
      // Standard output, then standard error, line for line; only a run's time may differ.
      const lines = (text: string): string[] => (text === '' ? [] : text.replace(/\n$/, '').split('\n'));
      expect(example.expected.map(steady)).toEqual([...lines(r.stdout), ...lines(r.stderr)].map(steady));
    },
  );
});
