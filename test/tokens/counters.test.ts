/**
 * The token counters: the approximate counter's exact arithmetic, and the BPE counter's per-message sums
 * against gpt-tokenizer counting the whole joined text at once.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import * as cl100k from 'gpt-tokenizer/encoding/cl100k_base';
import * as o200k from 'gpt-tokenizer/encoding/o200k_base';
import type { Rendered, TokenCounter } from '../../src/core/types.js';
import { codePointLength, createApproxCounter, TOKENS_PER_FILE, TOKENS_PER_IMAGE } from '../../src/tokens/approx.js';
import { createBpeCounter, type Encoding } from '../../src/tokens/bpe.js';
import { createCounter, isTokenizerName } from '../../src/tokens/index.js';
import { scaled } from '../helpers/scale.js';

function rendered(text: string, images = 0, files = 0): Rendered {
  return { text, images, files };
}

/** Python's len(): astral characters count once. */
function pythonLength(s: string): number {
  return Array.from(s).length;
}

const flatCost = (list: readonly Rendered[]): number =>
  list.reduce((sum, r) => sum + r.images * 85 + r.files * 1000, 0);

describe('the approximate counter', () => {
  const approx = createApproxCounter();

  it('charges a quarter token per code point, rounded down', () => {
    expect(approx.measure([rendered('abc')])).toBe(0);
    expect(approx.measure([rendered('abcd')])).toBe(1);
    expect(approx.measure([rendered('abcdefg')])).toBe(1);
    expect(approx.measure([rendered('abcdefgh')])).toBe(2);
  });

  it('counts the newline that joins the messages of a group', () => {
    // "ab\nc" is 4 code points.
    expect(approx.measure([rendered('ab'), rendered('c')])).toBe(1);
    expect(approx.measure([rendered('ab')])).toBe(0);
    expect(approx.measure([rendered('c')])).toBe(0);
  });

  it('counts an astral character once, as Python does', () => {
    expect(approx.measure([rendered('😀😀😀😀')])).toBe(1);
    expect(approx.measure([rendered('😀😀😀')])).toBe(0);
    expect(codePointLength('a😀b')).toBe(3);
    expect(codePointLength('\ud800x')).toBe(2);
    expect(codePointLength('x\udc00')).toBe(2);
  });

  it('adds 85 tokens per image and 1000 per file', () => {
    expect(TOKENS_PER_IMAGE).toBe(85);
    expect(TOKENS_PER_FILE).toBe(1000);
    expect(approx.measure([rendered('abcd', 2, 0)])).toBe(171);
    expect(approx.measure([rendered('abcd', 0, 1), rendered('', 1, 0)])).toBe(1 + 1000 + 85);
  });

  it('measures an empty group as zero', () => {
    expect(approx.measure([])).toBe(0);
  });

  const units = fc.constantFrom('a', ' ', '\n', '字', '😀', 'e\u0301', '\ud800', '\udc00', '🇫🇷', '\u0000');
  const item = fc.record({
    text: fc.string({ unit: units, maxLength: 30 }),
    images: fc.integer({ min: 0, max: 2 }),
    files: fc.integer({ min: 0, max: 1 }),
  });

  it('is floor(code points of the texts joined by newlines / 4) plus the flat costs, for any group', () => {
    fc.assert(
      fc.property(fc.array(item, { maxLength: 8 }), (list) => {
        const expected = Math.floor(pythonLength(list.map((r) => r.text).join('\n')) / 4) + flatCost(list);
        expect(createApproxCounter().measure(list)).toBe(expected);
      }),
      { numRuns: scaled(1000) },
    );
  });

  it('with a limit returns the exact count at or under the limit and some number above it otherwise', () => {
    fc.assert(
      fc.property(fc.array(item, { maxLength: 8 }), fc.integer({ min: 0, max: 3000 }), (list, limit) => {
        const counter = createApproxCounter();
        const exact = counter.measure(list);
        const limited = counter.measure(list, limit);
        if (exact <= limit) expect(limited).toBe(exact);
        else expect(limited).toBeGreaterThan(limit);
      }),
      { numRuns: scaled(1000) },
    );
  });
});

/** Input text is never read as special tokens. */
const PLAIN = { disallowedSpecial: new Set<string>(), allowedSpecial: new Set<string>() };

const BPE_UNITS = [
  'a',
  'Z',
  'the',
  ' word',
  'I',
  "'s",
  "'LL",
  ' ',
  '  ',
  '\t',
  '\n',
  '\n\n',
  '\r',
  '\r\n',
  '\u00a0',
  '\u3000',
  '.',
  ',',
  '!',
  '?',
  '/',
  '//',
  '\\',
  '-',
  '_',
  '"',
  "'",
  '(',
  ')',
  '{',
  '}',
  '[',
  ']',
  '<',
  '>',
  '|',
  ':',
  '*',
  '#',
  '0',
  '7',
  '123',
  '4567',
  '字',
  '語の',
  'ア',
  '한국',
  '😀',
  '👍🏽',
  '🇫🇷',
  'é',
  'e\u0301',
  '\u0301',
  'ß',
  'Ω',
  '<|endoftext|>',
  '<|im_start|>',
  '<|endofprompt|>',
  '\u2028',
  '\u000b',
  '\u0085',
];

/** A rendered message: it always starts with `[`, as `renderMessage` writes `[ROLE]` or `[tool:NAME]` first. */
const bpeText: fc.Arbitrary<string> = fc.oneof(
  { weight: 8, arbitrary: fc.string({ unit: fc.constantFrom(...BPE_UNITS), maxLength: 30 }).map((s) => `[${s}`) },
  { weight: 1, arbitrary: fc.constantFrom('[', '[user] ', '[tool:x] \n', '[assistant] ok!\r', '[user] a  ') },
  // Long tails, so the newline-cost search can run out of room and fall back.
  {
    weight: 1,
    arbitrary: fc
      .tuple(
        fc.constantFrom('x', ' ', '.', '字', '😀', ' !', '\n'),
        fc.integer({ min: 100, max: 700 }),
        fc.constantFrom('', ' ', '.', '\n', 'a'),
      )
      .map(([unit, n, end]) => `[tool:t] ${unit.repeat(n)}${end}`),
  },
);

const bpeItem = fc.record({
  text: bpeText,
  images: fc.oneof({ weight: 6, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.constant(1) }),
  files: fc.oneof({ weight: 8, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.constant(1) }),
});

/** A group that may hold the same rendered message more than once, at the end and elsewhere (the counter caches per message). */
const bpeGroup = fc
  .tuple(fc.array(bpeItem, { minLength: 1, maxLength: 6 }), fc.array(fc.nat(), { maxLength: 3 }))
  .map(([list, repeats]) => {
    const out: Rendered[] = [...list];
    for (const r of repeats) out.splice(r % (out.length + 1), 0, list[r % list.length] as Rendered);
    return out;
  });

const encodings: Array<[string, Encoding]> = [
  ['o200k_base', o200k],
  ['cl100k_base', cl100k],
];

describe.each(encodings)('the %s counter', (name, encoding) => {
  const wholeCount = (list: readonly Rendered[]): number =>
    list.length === 0 ? 0 : encoding.countTokens(list.map((r) => r.text).join('\n'), PLAIN) + flatCost(list);

  it('counts a group as gpt-tokenizer counts its texts joined by newlines, plus the flat costs', () => {
    const counter = createBpeCounter(name, encoding);
    fc.assert(
      fc.property(bpeGroup, (list) => {
        expect(counter.measure(list)).toBe(wholeCount(list));
      }),
      { numRuns: scaled(600) },
    );
  });

  it('counts the same group the same way with a fresh counter', () => {
    fc.assert(
      fc.property(bpeGroup, (list) => {
        expect(createBpeCounter(name, encoding).measure(list)).toBe(wholeCount(list));
      }),
      { numRuns: scaled(150) },
    );
  });

  it('with a limit returns the exact count at or under the limit and some number above it otherwise', () => {
    const counter = createBpeCounter(name, encoding);
    fc.assert(
      fc.property(bpeGroup, fc.integer({ min: 0, max: 400 }), (list, limit) => {
        const exact = wholeCount(list);
        const limited = counter.measure(list, limit);
        if (exact <= limit) expect(limited).toBe(exact);
        else expect(limited).toBeGreaterThan(limit);
      }),
      { numRuns: scaled(400) },
    );
  });

  it('reads special-token text as plain text', () => {
    const counter = createBpeCounter(name, encoding);
    const list = [rendered('[user] <|endoftext|>'), rendered('[assistant] <|im_start|>hi')];
    expect(counter.measure(list)).toBe(encoding.countTokens('[user] <|endoftext|>\n[assistant] <|im_start|>hi', PLAIN));
    expect(counter.measure(list)).toBeGreaterThan(4);
  });

  it('measures an empty group as zero', () => {
    expect(createBpeCounter(name, encoding).measure([])).toBe(0);
  });
});

describe('createCounter', () => {
  it('knows the three tokenizer names and nothing else', () => {
    expect(['o200k_base', 'cl100k_base', 'approx'].every(isTokenizerName)).toBe(true);
    expect(isTokenizerName('gpt2')).toBe(false);
  });

  it('creates each counter under its own name', async () => {
    const counters: TokenCounter[] = await Promise.all([
      createCounter('o200k_base'),
      createCounter('cl100k_base'),
      createCounter('approx'),
    ]);
    expect(counters.map((c) => c.name)).toEqual(['o200k_base', 'cl100k_base', 'approx']);
    const list = [rendered('[user] hello world')];
    expect(counters[0]?.measure(list)).toBe(o200k.countTokens('[user] hello world', PLAIN));
    expect(counters[1]?.measure(list)).toBe(cl100k.countTokens('[user] hello world', PLAIN));
    expect(counters[2]?.measure(list)).toBe(4);
  });
});
