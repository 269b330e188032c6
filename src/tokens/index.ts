import type { TokenCounter } from '../core/types.js';
import { createApproxCounter } from './approx.js';
import { createBpeCounter, type Encoding } from './bpe.js';
import {
  counterName,
  resolveCounterOptions,
  type CounterOptions,
  type CounterWithSettings,
  type TokenizerName,
} from './options.js';
import { createRankCounter, RankTable } from './ranks.js';

export { isTokenizerName, TOKENIZERS, type TokenizerName } from './options.js';

/**
 * Creates a counter. A BPE encoding is read from the file the build wrote from OpenAI's published ranks
 * (scripts/build-ranks.mjs, src/tokens/ranks.ts; ~20 ms). `--help`, `--version` and `--tokenizer approx` read none.
 * @param name the tokenizer
 * @param options the flat costs of images and files for any tokenizer, and characters per token for `approx`;
 *   any left out take Haystack's defaults (4, 85, 1000)
 * @returns the counter, its name saying the settings when they are not the defaults
 * @throws RangeError for an option that is not valid, or `charsPerToken` with a BPE tokenizer; Error when the build's
 *   rank file is missing (a broken install: counting another way would give other numbers silently)
 */
export async function createCounter(
  name: TokenizerName,
  options: CounterOptions = {},
): Promise<TokenCounter & CounterWithSettings> {
  if (name === 'approx') return createApproxCounter(options);
  // Checked before an encoding is loaded: a bad option costs nothing.
  const settings = resolveCounterOptions(options, name);
  const costs = { tokensPerImage: settings.tokensPerImage, tokensPerFile: settings.tokensPerFile };
  const table = RankTable.load(name);
  if (table === null) {
    throw new Error(
      `the ${name} rank file (dist/ranks/${name}.bin) is missing or damaged: reinstall swc, or run npm run build in its checkout`,
    );
  }
  const pieces = createRankCounter(table);
  const encoding: Encoding = { countTokens: (text) => pieces.count(text).tokens };
  return { ...createBpeCounter(counterName(name, settings), encoding, pieces, costs), settings };
}

export { createApproxCounter, createBpeCounter };
export {
  CHARS_PER_TOKEN,
  counterName,
  parseCounterOptions,
  resolveCounterOptions,
  TOKENS_PER_FILE,
  TOKENS_PER_IMAGE,
} from './options.js';
export type { CounterOptions, CounterSettings, CounterWithSettings, RawCounterOptions, ReadCost } from './options.js';
