/** The README's set-up commands and output examples, for test/docs/readme.test.ts and test/e2e/readme.test.ts. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './cli.js';

export const README = readFileSync(path.join(ROOT, 'README.md'), 'utf8');

export interface Example {
  /** The command as the README shows it, `$ swc …`. */
  readonly command: string;
  readonly args: string[];
  readonly expected: string[];
}

/** Splits a command line as a shell would for plain words and single-quoted ones. */
export function words(line: string): string[] {
  return [...line.matchAll(/'([^']*)'|(\S+)/g)].map((m) => (m[1] ?? m[2]) as string);
}

/** The examples: a `console` block right after `<!-- example -->`, `$ swc ARGS` first, then the output. */
export function examplesOf(markdown: string): Example[] {
  const out: Example[] = [];
  for (const m of markdown.matchAll(/<!-- example -->\n```console\n([\s\S]*?)\n```/g)) {
    const [command = '', ...output] = (m[1] as string).split('\n');
    out.push({ command, args: words(command.replace(/^\$ swc /, '')), expected: output });
  }
  return out;
}

/** A line with its run time made constant: `…; 2.87 s` in a summary varies from run to run. */
export function steady(line: string): string {
  return line.replace(/; \d+(\.\d+)? s$/, '; N s');
}

/** The two commands of the README's set-up, `npm install && node bin/swc.js …` and the test command. */
export function setUpCommands(): [string, string] {
  const blocks = [...README.matchAll(/## Set-up\n[\s\S]*?```sh\n([^\n]+)\n```[\s\S]*?```sh\n([^\n]+)\n```/g)][0];
  const [, first = '', second = ''] = blocks ?? [];
  return [first, second];
}
