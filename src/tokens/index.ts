import type { TokenCounter } from '../core/types.js';
import { createApproxCounter } from './approx.js';
import { createBpeCounter, type Encoding } from './bpe.js';
import { counterName, resolveCounterOptions, type CounterOptions, type CounterWithSettings, type TokenizerName } from './options.js';
import { createRankCounter, RankTable } from './ranks.js';

export { isTokenizerName, TOKENIZERS, type TokenizerName } from './options.js';

/**
 * Creates a counter. A BPE encoding is read from the file the build wrote (src/tokens/ranks.ts, ~20 ms); without
 * it, gpt-tokenizer's module is imported (~0.3 s). `--help`, `--version` and `--tokenizer approx` load neither.
 * @param name the tokenizer
 * @param options the flat costs of images and files for any tokenizer, and characters per token for `approx`;
 *   any left out take Haystack's defaults (4, 85, 1000)
 * @returns the counter, its name saying the settings when they are not the defaults
 * @throws RangeError for an option that is not valid, or `charsPerToken` with a BPE tokenizer
 */
export async function createCounter(name: TokenizerName, options: CounterOptions = {}): Promise<TokenCounter & CounterWithSettings> {
  if (name === 'approx') return createApproxCounter(options);
  // Checked before an encoding is loaded: a bad option costs nothing.
  const settings = resolveCounterOptions(options, name);
  const costs = { tokensPerImage: settings.tokensPerImage, tokensPerFile: settings.tokensPerFile };
  const table = RankTable.load(name);
  const pieces = table === null ? undefined : createRankCounter(table);
  const encoding: Encoding =
    pieces !== undefined
      ? { countTokens: (text) => pieces.count(text).tokens }
      : name === 'cl100k_base'
        ? await import('gpt-tokenizer/encoding/cl100k_base')
        : await import('gpt-tokenizer/encoding/o200k_base');
  // Without a rank table, the encoding's own inside is used when it has the one known (the default).
  return { ...createBpeCounter(counterName(name, settings), encoding, pieces, costs), settings };
}

export { createApproxCounter, createBpeCounter };
export { CHARS_PER_TOKEN, counterName, parseCounterOptions, resolveCounterOptions, TOKENS_PER_FILE, TOKENS_PER_IMAGE } from './options.js';
export type { CounterOptions, CounterSettings, CounterWithSettings, RawCounterOptions, ReadCost } from './options.js';
