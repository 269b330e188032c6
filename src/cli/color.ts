import { Chalk, type ChalkInstance } from 'chalk';
import type { OutStream } from './io.js';
import type { ColorWhen } from './options.js';

/**
 * Colour for one stream (see `colorLevel`).
 * @param when `--color`: `always` and `never` beat the environment, `auto` (or nothing said) follows it
 */
export function colorFor(
  stream: OutStream,
  env: Readonly<Record<string, string | undefined>>,
  when: ColorWhen | undefined,
): ChalkInstance {
  return new Chalk({ level: colorLevel(stream, env, when) });
}

/**
 * The colour level for one stream. An explicit `--color always|never` (or `--no-color`) wins over the environment,
 * as in git and ripgrep; otherwise NO_COLOR turns colour off, FORCE_COLOR turns it on (`0`/`false` off, `2` and `3`
 * more colours), and without either it is on only for a terminal that is not `TERM=dumb`.
 */
export function colorLevel(
  stream: OutStream,
  env: Readonly<Record<string, string | undefined>>,
  when: ColorWhen | undefined,
): 0 | 1 | 2 | 3 {
  if (when === 'never') return 0;
  if (when === 'always') return Math.max(forcedLevel(env.FORCE_COLOR) ?? 0, terminalLevel(env), 1) as 1 | 2 | 3;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return 0;
  const forced = forcedLevel(env.FORCE_COLOR);
  if (forced !== null) return forced;
  if (!stream.isTTY) return 0;
  if (env.TERM === 'dumb') return 0;
  return terminalLevel(env);
}

/** FORCE_COLOR's level, or null when it is not set. */
function forcedLevel(force: string | undefined): 0 | 1 | 2 | 3 | null {
  if (force === undefined) return null;
  if (force === '0' || force === 'false') return 0;
  if (force === '2') return 2;
  if (force === '3') return 3;
  return 1;
}

/** How many colours the terminal says it has: 24-bit from COLORTERM, 256 from TERM, else the basic 16. */
function terminalLevel(env: Readonly<Record<string, string | undefined>>): 1 | 2 | 3 {
  const colorterm = env.COLORTERM ?? '';
  if (colorterm === 'truecolor' || colorterm === '24bit') return 3;
  if ((env.TERM ?? '').includes('256')) return 2;
  return 1;
}
