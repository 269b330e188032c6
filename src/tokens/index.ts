import type { TokenCounter } from '../core/types.js';
import { createApproxCounter } from './approx.js';
import { createBpeCounter, type Encoding } from './bpe.js';
import { createRankCounter, RankTable } from './ranks.js';

export const TOKENIZERS = ['o200k_base', 'cl100k_base', 'approx'] as const;
export type TokenizerName = (typeof TOKENIZERS)[number];

/** Whether a name is a tokenizer swc knows. */
export function isTokenizerName(name: string): name is TokenizerName {
  return (TOKENIZERS as readonly string[]).includes(name);
}

/**
 * Creates a counter. A BPE encoding is read from the file the build wrote (src/tokens/ranks.ts, ~20 ms); without
 * it, gpt-tokenizer's module is imported (~0.3 s). `--help`, `--version` and `--tokenizer approx` load neither.
 */
export async function createCounter(name: TokenizerName): Promise<TokenCounter> {
  if (name === 'approx') return createApproxCounter();
  const table = RankTable.load(name);
  if (table !== null) {
    const pieces = createRankCounter(table);
    return createBpeCounter(name, { countTokens: (text) => pieces.count(text).tokens }, pieces);
  }
  const encoding: Encoding =
    name === 'cl100k_base' ? await import('gpt-tokenizer/encoding/cl100k_base') : await import('gpt-tokenizer/encoding/o200k_base');
  return createBpeCounter(name, encoding);
}

export { createApproxCounter, createBpeCounter };
