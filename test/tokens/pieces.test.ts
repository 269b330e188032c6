/**
 * Counting piece by piece: the same counts as gpt-tokenizer, a heap merge that makes the same merges as its
 * quadratic loop, and long pieces that cost nothing when a limit is already passed.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import * as cl100k from 'gpt-tokenizer/encoding/cl100k_base';
import * as o200k from 'gpt-tokenizer/encoding/o200k_base';
import { planCompaction } from '../../src/core/compact.js';
import { textContent } from '../../src/core/render.js';
import type { Message } from '../../src/core/types.js';
import { createBpeCounter } from '../../src/tokens/bpe.js';
import { countMerges, createPieceCounter, type PieceCounter } from '../../src/tokens/pieces.js';
import { scaled } from '../helpers/scale.js';

const PLAIN = { disallowedSpecial: new Set<string>(), allowedSpecial: new Set<string>() };

/** gpt-tokenizer's own merge loop and rank lookup, to compare the heap merge with. */
interface Inside {
  bytePairMerge(bytes: Uint8Array): number[];
  getBpeRankFromBytes(bytes: Uint8Array): number | undefined;
}
const insideOf = (m: unknown): Inside =>
  (m as { default: { bytePairEncodingCoreProcessor: Inside } }).default.bytePairEncodingCoreProcessor;

const UNITS = [
  'x',
  'a',
  'B',
  'é',
  '字',
  '😀',
  ' ',
  '  ',
  '-',
  '=',
  '\n',
  '\r\n',
  '\t',
  '0',
  '42',
  'the',
  "'s",
  '<|endoftext|>',
  '\u00a0',
  '/',
];
/** Pieces made of a few units repeated: runs of one class of character, as long lines of logs have. */
const runs = fc
  .tuple(
    fc.array(fc.constantFrom(...UNITS), { minLength: 1, maxLength: 3 }),
    fc.integer({ min: 1, max: 1500 }),
    fc.nat(),
  )
  .map(([units, length, seed]) => {
    let s = '';
    for (let i = 0; s.length < length; i++) s += units[(i * 7 + seed) % units.length] as string;
    return s;
  });

describe.each([
  ['o200k_base', o200k],
  ['cl100k_base', cl100k],
])('the %s piece counter', (_name, encoding) => {
  const pieces = createPieceCounter(encoding) as PieceCounter;
  const inside = insideOf(encoding);
  const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);

  it('is available for the gpt-tokenizer this project ships with', () => {
    expect(pieces).not.toBeNull();
  });

  it('merges a piece into as many tokens as gpt-tokenizer does', () => {
    fc.assert(
      fc.property(runs, (piece) => {
        expect(countMerges(bytes(piece), (b) => inside.getBpeRankFromBytes(b))).toBe(
          inside.bytePairMerge(bytes(piece)).length,
        );
      }),
      { numRuns: scaled(300) },
    );
  });

  it('counts a text as countTokens does, long runs included', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(runs, fc.string({ maxLength: 40 })), { maxLength: 8 }), (parts) => {
        const text = parts.join('');
        expect(pieces.count(text)).toEqual({ tokens: encoding.countTokens(text, PLAIN), exact: true });
      }),
      { numRuns: scaled(200) },
    );
  });

  it('with room to spare is exact, and otherwise stops above the room', () => {
    fc.assert(
      fc.property(fc.array(runs, { maxLength: 5 }), fc.integer({ min: 0, max: 2000 }), (parts, room) => {
        const text = parts.join(' ');
        const exact = encoding.countTokens(text, PLAIN);
        const counted = pieces.count(text, room);
        if (exact <= room) expect(counted).toEqual({ tokens: exact, exact: true });
        else {
          expect(counted.exact).toBe(false);
          expect(counted.tokens).toBeGreaterThan(room);
          expect(counted.tokens).toBeLessThanOrEqual(exact);
        }
      }),
      { numRuns: scaled(200) },
    );
  });
});

describe('a very long piece', () => {
  const pieces = createPieceCounter(o200k) as PieceCounter;

  it('is not merged when its least possible count passes the room', () => {
    // A million letters are one piece; o200k's longest token is 128 bytes, so it has at least 7,813 tokens. (Not more:
    // V8 matches a piece this long in its regexp interpreter's backtrack stack, which a few million letters can
    // overflow in a process whose stack is already deep, as Jest's is; swc's own counter, ranks.ts, is tested on
    // 20 million in test/tokens/ranks.test.ts.)
    expect(pieces.count(`[assistant] ${'x'.repeat(1_000_000)}`, 100)).toEqual({ tokens: 3 + 7_813, exact: false });
  });

  it('is merged exactly, with a heap, when it has to be counted', () => {
    const text = '='.repeat(200_000);
    expect(pieces.count(text).tokens).toBe(
      countMerges(new TextEncoder().encode(text), (b) => insideOf(o200k).getBpeRankFromBytes(b)),
    );
    expect(pieces.count('-'.repeat(3000)).tokens).toBe(o200k.countTokens('-'.repeat(3000)));
  });

  it('in history that will be dropped does not stall a compaction', () => {
    const message = (role: Message['role'], text: string): Message => ({ role, content: textContent(text) });
    const conversation = [
      message('system', 'be nice'),
      message('user', 'old'),
      message('assistant', 'x'.repeat(2_000_000)),
      message('user', 'task'),
    ];
    const plan = planCompaction(conversation, createBpeCounter('o200k_base', o200k), { target: 100 });
    expect(plan.kept).toEqual([0, 3]);
    expect(plan.tokensBeforeExact).toBe(false);
  });
});

describe('an encoding without the inside the piece counter relies on', () => {
  it('gets no piece counter, and the BPE counter counts with its public functions', () => {
    const publicOnly = { countTokens: o200k.countTokens, encodeGenerator: o200k.encodeGenerator };
    expect(createPieceCounter(publicOnly)).toBeNull();
    expect(createPieceCounter(null)).toBeNull();
    const counter = createBpeCounter('o200k_base', publicOnly);
    expect(counter.measure([{ text: '[user] hello there', images: 0, files: 0 }])).toBe(
      o200k.countTokens('[user] hello there'),
    );
  });
});
