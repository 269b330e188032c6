/**
 * Every output the docs show is what swc prints today, so no page keeps a stale number (issue 57, item 8). In
 * docs/*.md a `console` block right after `<!-- example -->` is the whole output of its `$ swc …` line (only a run's
 * time may differ); after `<!-- excerpt -->` its lines are some of the output's lines, in order, a line holding `…`
 * standing for what was left out. The README's examples run with the built binary in test/e2e/readme.test.ts.
 */
import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { ROOT, tempDir } from '../helpers/cli.js';
import { steady, words } from '../helpers/readme.js';
import { runSwc } from '../helpers/run-in-process.js';

interface DocExample {
  readonly doc: string;
  readonly kind: 'example' | 'excerpt';
  readonly args: string[];
  readonly shown: string[];
}

const DOCS = readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md'));

function examplesIn(doc: string): DocExample[] {
  const text = readFileSync(path.join(ROOT, 'docs', doc), 'utf8');
  return [...text.matchAll(/<!-- (example|excerpt) -->\n```console\n([\s\S]*?)\n```/g)].map((m) => {
    const [command = '', ...shown] = (m[2] as string).split('\n');
    return { doc, kind: m[1] as 'example' | 'excerpt', args: words(command.replace(/^\$ swc /, '')), shown };
  });
}

const EXAMPLES = DOCS.flatMap(examplesIn);

/** Whether `shown` is `real` with some lines left out where a shown line holds `…`, in order. */
function isExcerptOf(shown: readonly string[], real: readonly string[]): { missing: string | null } {
  let at = 0;
  for (const line of shown) {
    if (line.includes('…')) continue;
    while (at < real.length && real[at] !== line) at++;
    if (at === real.length) return { missing: line };
    at++;
  }
  return { missing: null };
}

describe('the examples in docs/', () => {
  it('are there: the plan, the inspection and a replay', () => {
    expect(EXAMPLES.map((e) => `${e.doc} ${e.kind}`)).toEqual(
      expect.arrayContaining(['json.md excerpt', 'replay.md example']),
    );
    expect(EXAMPLES.length).toBeGreaterThanOrEqual(3);
  });

  it.each(EXAMPLES.map((e) => [`${e.doc}: swc ${e.args.join(' ')}`, e] as const))(
    'show what %s prints',
    async (_name, example) => {
      const dir = tempDir();
      symlinkSync(path.join(ROOT, 'fixtures'), path.join(dir, 'fixtures'));
      const r = await runSwc(example.args, { cwd: dir });
      const lines = (text: string): string[] => (text === '' ? [] : text.replace(/\n$/, '').split('\n'));
      const real = [...lines(r.stdout), ...lines(r.stderr)].map(steady);
      if (example.kind === 'example') expect(example.shown.map(steady)).toEqual(real);
      else expect(isExcerptOf(example.shown.map(steady), real)).toEqual({ missing: null });
    },
  );
});
