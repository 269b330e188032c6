import type { Rendered, TokenCounter } from '../core/types.js';
import { TOKENS_PER_FILE, TOKENS_PER_IMAGE } from './approx.js';

/** The part of a gpt-tokenizer encoding this counter uses. */
export interface Encoding {
  countTokens(text: string, options?: { disallowedSpecial?: Set<string>; allowedSpecial?: Set<string> }): number;
}

/** Input text is never read as special tokens: `<|endoftext|>` in a transcript is just text. */
const PLAIN = { disallowedSpecial: new Set<string>(), allowedSpecial: new Set<string>() };

const LETTER_OR_NUMBER = /[\p{L}\p{N}]/u;

/**
 * A counter over a BPE encoding that counts each message once. Every rendered message starts with `[`, and the
 * encodings' pre-tokenizers always split before that `[` when a newline precedes it, so the tokens of a joined group
 * are the sum of `count(text + "\n")` for each message but the last, plus `count(last)`.
 * @param name the encoding's name
 * @param encoding a gpt-tokenizer encoding module
 */
export function createBpeCounter(name: string, encoding: Encoding): TokenCounter {
  const linked = new WeakMap<Rendered, number>();
  const plain = new WeakMap<Rendered, number>();
  const count = (text: string): number => encoding.countTokens(text, PLAIN);
  const linkedOf = (r: Rendered): number => {
    let n = linked.get(r);
    if (n === undefined) {
      n = count(r.text + '\n');
      linked.set(r, n);
    }
    return n;
  };
  const plainOf = (r: Rendered): number => {
    let n = plain.get(r);
    if (n === undefined) {
      n = linkedOf(r) - newlineCost(r.text, count);
      plain.set(r, n);
    }
    return n;
  };
  return {
    name,
    measure(messages, limit) {
      const last = messages.length - 1;
      let total = 0;
      for (let i = last; i >= 0; i--) {
        const r = messages[i] as Rendered;
        total += (i === last ? plainOf(r) : linkedOf(r)) + r.images * TOKENS_PER_IMAGE + r.files * TOKENS_PER_FILE;
        if (limit !== undefined && total > limit) return total;
      }
      return total;
    },
  };
}

/**
 * How many tokens a trailing newline adds to `text`, found by re-counting only a short tail that starts at a
 * pre-token boundary (after a letter or digit before a space, or after a newline before a letter or digit).
 */
export function newlineCost(text: string, count: (t: string) => number): number {
  const lastChar = lastCodePoint(text);
  // After a letter or digit the newline is always a pre-token of its own.
  if (lastChar !== '' && LETTER_OR_NUMBER.test(lastChar)) return count('\n');
  const floor = Math.max(1, text.length - 512);
  for (let p = text.length - 1; p >= floor; p--) {
    const prev = text.charCodeAt(p - 1);
    const here = text.charCodeAt(p);
    const boundary =
      (here === 0x20 && isLetterOrNumberBefore(text, p)) || (prev === 0x0a && isLetterOrNumberFrom(text, p));
    if (boundary) {
      const tail = text.slice(p);
      return count(tail + '\n') - count(tail);
    }
  }
  return count(text + '\n') - count(text);
}


/** Whether the code point that ends just before `p` is a letter or number. */
function isLetterOrNumberBefore(text: string, p: number): boolean {
  let start = p - 1;
  const c = text.charCodeAt(start);
  if (c >= 0xdc00 && c <= 0xdfff && start > 0) start--;
  return isLetterOrNumberFrom(text, start);
}

/** Whether the code point that starts at `p` is a letter or number. */
function isLetterOrNumberFrom(text: string, p: number): boolean {
  const cp = text.codePointAt(p);
  return cp !== undefined && LETTER_OR_NUMBER.test(String.fromCodePoint(cp));
}

function lastCodePoint(text: string): string {
  if (text.length === 0) return '';
  let i = text.length - 1;
  const c = text.charCodeAt(i);
  if (c >= 0xdc00 && c <= 0xdfff && i > 0) i--;
  return String.fromCodePoint(text.codePointAt(i) as number);
}
