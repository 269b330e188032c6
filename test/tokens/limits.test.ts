/**
 * Counting with a limit: the BPE counter stops inside a long message once it passes what the decision compares
 * it with, and still gives exact counts wherever they are at or under the limit.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import * as o200k from 'gpt-tokenizer/encoding/o200k_base';
import { planCompaction } from '../../src/core/compact.js';
import { textContent } from '../../src/core/render.js';
import type { Message, Rendered } from '../../src/core/types.js';
import { createBpeCounter, type Encoding } from '../../src/tokens/bpe.js';
import { scaled } from '../helpers/scale.js';

const PLAIN = { disallowedSpecial: new Set<string>(), allowedSpecial: new Set<string>() };

/** o200k that also tallies how many characters it was given to tokenize. */
function spyEncoding(): Encoding & { chars: number } {
  const spy = {
    chars: 0,
    countTokens(text: string, options?: typeof PLAIN): number {
      spy.chars += text.length;
      return o200k.countTokens(text, options);
    },
    *encodeGenerator(text: string, options?: typeof PLAIN): Generator<number[]> {
      for (const piece of o200k.encodeGenerator(text, options)) {
        spy.chars += o200k.decode(piece).length;
        yield piece;
      }
    },
  };
  return spy;
}

const rendered = (text: string, images = 0, files = 0): Rendered => ({ text, images, files });

/** A long rendered message of varied text: prose, code, JSON and non-ASCII. */
function longText(chars: number, seed: number): string {
  const parts = [
    'The cache is stale, rebuilding the index. ',
    'const total = items.reduce((a, b) => a + b, 0);\n',
    '{"id": 42, "ok": true}, ',
    '数据库迁移失败了。',
    'Привет, мир! ',
    '😀 ',
  ];
  let out = '[tool:read_file] ';
  for (let i = 0; out.length < chars; i++) out += parts[(i * 7 + seed) % parts.length] as string;
  return out;
}

describe('the BPE counter with a limit', () => {
  it('stops inside a long message once the count passes the limit', () => {
    const encoding = spyEncoding();
    const counter = createBpeCounter('o200k_base', encoding);
    const big = rendered(longText(1_000_000, 1));
    const tokens = counter.measure([rendered('[user] hi'), big], 100);
    expect(tokens).toBeGreaterThan(100);
    expect(encoding.chars).toBeLessThan(5_000);
  });

  it('gives the exact count afterwards when asked without a limit', () => {
    const counter = createBpeCounter('o200k_base', spyEncoding());
    const list = [rendered(longText(60_000, 2)), rendered(longText(50_000, 3), 1, 0)];
    expect(counter.measure(list, 50)).toBeGreaterThan(50);
    const exact = o200k.countTokens(list.map((r) => r.text).join('\n'), PLAIN) + 85;
    expect(counter.measure(list)).toBe(exact);
    expect(counter.measure(list, 50)).toBeGreaterThan(50);
    expect(counter.measure(list, exact)).toBe(exact);
  });

  it('is exact at or under the limit and above it otherwise, for groups with long messages', () => {
    const item = fc.oneof(
      fc.record({
        text: fc.constantFrom('[user] ok', '[assistant] 好的\n', '[tool:x] {"a": 1}'),
        images: fc.constantFrom(0, 1),
        files: fc.constant(0),
      }),
      fc.tuple(fc.integer({ min: 16_384, max: 60_000 }), fc.nat(5)).map(([n, seed]) => rendered(longText(n, seed))),
    );
    const counter = createBpeCounter('o200k_base', o200k);
    fc.assert(
      fc.property(
        fc.array(item, { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 0, max: 40_000 }),
        (list, limit) => {
          const exact =
            o200k.countTokens(list.map((r) => r.text).join('\n'), PLAIN) + list.reduce((a, r) => a + r.images * 85, 0);
          const limited = counter.measure(list, limit);
          if (exact <= limit) expect(limited).toBe(exact);
          else expect(limited).toBeGreaterThan(limit);
        },
      ),
      { numRuns: scaled(60) },
    );
  });
});

describe('a compaction to a small target', () => {
  it('never tokenizes most of a long message in the history it drops', () => {
    const message = (role: Message['role'], text: string): Message => ({ role, content: textContent(text) });
    const conversation: Message[] = [
      message('system', 'You are careful.'),
      message('user', 'Read the log.'),
      message('assistant', longText(2_000_000, 4)),
      message('user', 'Now fix the bug.'),
      message('assistant', 'Done.'),
    ];
    const encoding = spyEncoding();
    const plan = planCompaction(conversation, createBpeCounter('o200k_base', encoding), { target: 200 });
    expect(plan.removed).toEqual([1, 2]);
    expect(plan.tokensBeforeExact).toBe(false);
    expect(encoding.chars).toBeLessThan(10_000);
  });
});
