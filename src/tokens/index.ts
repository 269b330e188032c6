import type { TokenCounter } from '../core/types.js';
import { createApproxCounter } from './approx.js';
import { createBpeCounter, type Encoding } from './bpe.js';

export const TOKENIZERS = ['o200k_base', 'cl100k_base', 'approx'] as const;
export type TokenizerName = (typeof TOKENIZERS)[number];

/** Whether a name is a tokenizer swc knows. */
export function isTokenizerName(name: string): name is TokenizerName {
  return (TOKENIZERS as readonly string[]).includes(name);
}

/**
 * Creates a counter. BPE encodings are imported only here, on demand: loading one costs ~0.2 s,
 * which `--help`, `--version` and `--tokenizer approx` never pay.
 */
export async function createCounter(name: TokenizerName): Promise<TokenCounter> {
  if (name === 'approx') return createApproxCounter();
  const encoding: Encoding =
    name === 'cl100k_base' ? await import('gpt-tokenizer/encoding/cl100k_base') : await import('gpt-tokenizer/encoding/o200k_base');
  return createBpeCounter(name, encoding);
}

export { createApproxCounter, createBpeCounter };
