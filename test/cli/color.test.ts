import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { colorLevel } from '../../src/cli/color.js';
import { colorWhen, COLOR_WHEN, type ColorWhen } from '../../src/cli/options.js';
import { ROOT, tempDir } from '../helpers/cli.js';
import { runSwc } from '../helpers/run-in-process.js';

/** `--color always|never|auto` beside `--no-color`: an explicit flag beats NO_COLOR and FORCE_COLOR, as in git. */

const SAMPLE = path.join(ROOT, 'fixtures/sample.jsonl');
const ESC = '\u001b[';

/** The rule as docs/cli.md states it, written apart from the implementation. */
function expectedOn(when: ColorWhen, env: Record<string, string | undefined>, tty: boolean): boolean {
  if (when !== 'auto') return when === 'always';
  if ((env.NO_COLOR ?? '') !== '') return false;
  if (env.FORCE_COLOR !== undefined) return env.FORCE_COLOR !== '0' && env.FORCE_COLOR !== 'false';
  return tty && env.TERM !== 'dumb';
}

describe('the colour level', () => {
  it('follows an explicit --color, and the environment only for auto', () => {
    const maybe = (values: string[]) => fc.option(fc.constantFrom(...values), { nil: undefined });
    fc.assert(
      fc.property(
        fc.constantFrom(...COLOR_WHEN),
        maybe(['', '1']),
        maybe(['', '0', 'false', '1', '2', '3', 'true']),
        maybe(['dumb', 'xterm', 'xterm-256color']),
        fc.boolean(),
        (when, NO_COLOR, FORCE_COLOR, TERM, tty) => {
          const env = { NO_COLOR, FORCE_COLOR, TERM };
          expect(colorLevel({ write: () => true, isTTY: tty }, env, when) > 0).toBe(expectedOn(when, env, tty));
        },
      ),
    );
  });

  it('gives --color always the colours FORCE_COLOR or the terminal name', () => {
    const piped = { write: () => true, isTTY: false };
    expect(colorLevel(piped, { FORCE_COLOR: '3' }, 'always')).toBe(3);
    expect(colorLevel(piped, { TERM: 'xterm-256color', NO_COLOR: '1' }, 'always')).toBe(2);
    expect(colorLevel(piped, { FORCE_COLOR: '0' }, 'always')).toBe(1);
  });

  it('reads commander values: the --color value, false after --no-color, auto when neither was given', () => {
    expect(colorWhen(undefined)).toBe('auto');
    expect(colorWhen(false)).toBe('never');
    expect(colorWhen('always')).toBe('always');
    expect(colorWhen('never')).toBe('never');
    expect(colorWhen('auto')).toBe('auto');
  });
});

describe('--color on the command line', () => {
  const dryRun = ['compact', 'sample.jsonl', '-t', '2000', '--tokenizer', 'approx', '--dry-run'];

  it('colours a piped dry run with --color always, even under NO_COLOR', async () => {
    const r = await runSwc([...dryRun, '--color=always'], { cwd: tempDir([SAMPLE]), env: { NO_COLOR: '1' } });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain(ESC);
  });

  it('never colours with --color never, even under FORCE_COLOR', async () => {
    const r = await runSwc([...dryRun, '--color', 'never'], {
      cwd: tempDir([SAMPLE]),
      env: { FORCE_COLOR: '1', NO_COLOR: '' },
    });
    expect(r.status).toBe(0);
    expect(r.stdout).not.toContain(ESC);
  });

  it('follows the environment with --color auto', async () => {
    const forced = await runSwc([...dryRun, '--color=auto'], {
      cwd: tempDir([SAMPLE]),
      env: { FORCE_COLOR: '1', NO_COLOR: '' },
    });
    expect(forced.stdout).toContain(ESC);
    const piped = await runSwc([...dryRun, '--color=auto'], { cwd: tempDir([SAMPLE]), env: { NO_COLOR: '' } });
    expect(piped.stdout).not.toContain(ESC);
  });

  it('lets the last of --color and --no-color win', async () => {
    const env = { FORCE_COLOR: '1', NO_COLOR: '' };
    const off = await runSwc([...dryRun, '--color=always', '--no-color'], { cwd: tempDir([SAMPLE]), env });
    expect(off.stdout).not.toContain(ESC);
    const on = await runSwc([...dryRun, '--no-color', '--color=always'], {
      cwd: tempDir([SAMPLE]),
      env: { NO_COLOR: '1' },
    });
    expect(on.stdout).toContain(ESC);
  });

  it('colours swc inspect and the closing total of a batch the same way', async () => {
    const dir = tempDir([SAMPLE]);
    writeFileSync(path.join(dir, 'broken.json'), '{');
    const inspect = await runSwc(['inspect', 'sample.jsonl', '--tokenizer', 'approx', '--color=always'], { cwd: dir });
    expect(inspect.stdout).toContain(ESC);
    const batch = ['compact', '.', '--check', '-t', '2000', '--tokenizer', 'approx'];
    const coloured = await runSwc([...batch, '--color=always'], { cwd: dir });
    expect(coloured.status).toBe(2);
    expect(coloured.stderr).toMatch(/scanned: .*\u001b\[31m1 failed/);
    expect((await runSwc(batch, { cwd: dir })).stderr).not.toContain(ESC);
  });

  it('refuses a value other than always, never and auto with one line', async () => {
    const r = await runSwc([...dryRun, '--color=sometimes'], { cwd: tempDir([SAMPLE]) });
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(
      `swc: error: option '--color <when>' argument 'sometimes' is invalid. Allowed choices are always, never, auto.\n`,
    );
  });
});
