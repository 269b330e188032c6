import { Chalk, type ChalkInstance } from 'chalk';
import type { OutStream } from './io.js';

/**
 * Colour for one stream: on when the stream is a terminal or FORCE_COLOR asks for it; off with NO_COLOR,
 * --no-color, FORCE_COLOR=0, or when piped. `flag` is commander's `color` value: only `false` (--no-color) counts,
 * since commander defaults it to true.
 */
export function colorFor(
  stream: OutStream,
  env: Readonly<Record<string, string | undefined>>,
  flag: boolean | undefined,
): ChalkInstance {
  return new Chalk({ level: colorLevel(stream, env, flag) });
}

export function colorLevel(
  stream: OutStream,
  env: Readonly<Record<string, string | undefined>>,
  flag: boolean | undefined,
): 0 | 1 | 2 | 3 {
  if (flag === false) return 0;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return 0;
  const force = env.FORCE_COLOR;
  if (force !== undefined) {
    if (force === '0' || force === 'false') return 0;
    if (force === '2') return 2;
    if (force === '3') return 3;
    return 1;
  }
  if (!stream.isTTY) return 0;
  if (env.TERM === 'dumb') return 0;
  const colorterm = env.COLORTERM ?? '';
  if (colorterm === 'truecolor' || colorterm === '24bit') return 3;
  if ((env.TERM ?? '').includes('256')) return 2;
  return 1;
}
