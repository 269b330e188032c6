/**
 * Every pointer swc or Haystack ever wrote reads back to its references (docs/strategy.md, "Tool-result offloading"):
 * before 3.4, 3.4's one text part, a binary part, and 3.4's numbered list of several parts.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { isPointerLike, isPointerText, oldPointerText, parsePointers, pointerText } from '../../src/core/pointer.js';
import { scaled } from '../helpers/scale.js';

describe('parsePointers', () => {
  it('reads the pointer of Haystack before 3.4', () => {
    expect(parsePointers("Tool result offloaded to 'store/a.txt' (4000 characters). Preview: xx...")).toEqual([
      { reference: 'store/a.txt', characters: 4000 },
    ]);
  });

  it("reads 3.4's pointer of one text, of one image, and of a named file", () => {
    expect(parsePointers("Tool result offloaded to text (12 characters) at 'r/k.txt'. Preview: hello")).toEqual([
      { reference: 'r/k.txt', characters: 12 },
    ]);
    expect(parsePointers("Tool result offloaded to image/png (1069 bytes) at 'r/k.png'")).toEqual([
      { reference: 'r/k.png', characters: 1069 },
    ]);
    expect(parsePointers("Tool result offloaded to application/pdf named 'q3.pdf' (4 bytes) at 'r/k.pdf'")).toEqual([
      { reference: 'r/k.pdf', characters: 4 },
    ]);
  });

  it("reads 3.4's numbered list of several parts, a preview holding line breaks and numbers", () => {
    const text = [
      'Tool result offloaded to 3 files:',
      "1. text (20 characters) at 'r/k_0.txt'. Preview: line one",
      '2. not a part',
      "2. image (2 bytes) at 'r/k_1.bin'",
      "3. text (3 characters) at 'r/k_2.txt'. Preview: abc",
    ].join('\n');
    expect(parsePointers(text)?.map((p) => p.reference)).toEqual(['r/k_0.txt', 'r/k_1.bin', 'r/k_2.txt']);
  });

  it('is null for a text that only begins like a pointer', () => {
    expect(parsePointers('Tool result offloaded to nowhere')).toBeNull();
    expect(parsePointers('Tool result offloaded to 2 files:\n1. nothing')).toBeNull();
    expect(isPointerText('Tool result kept')).toBe(false);
    // Restore takes an edited pointer for one (and refuses it), but not a result that only starts with the words.
    expect(isPointerLike('Tool result offloaded to nowhere')).toBe(false);
    expect(isPointerLike("Tool result offloaded to text (5 characters) at 'x")).toBe(true);
    expect(isPointerLike("Tool result offloaded to 'x (5 characters)")).toBe(true);
  });

  it('reads back every reference swc writes, old and new, whatever the reference and text hold', () => {
    const reference = fc.string({ minLength: 1, maxLength: 30 });
    const text = fc.string({ maxLength: 300 });
    fc.assert(
      fc.property(fc.array(fc.tuple(reference, text), { minLength: 1, maxLength: 4 }), fc.nat(250), (parts, n) => {
        const written = pointerText(
          parts.map(([r, t]) => ({ reference: r, text: t })),
          n,
        );
        expect(parsePointers(written)?.map((p) => p.reference)).toEqual(parts.map(([r]) => r));
        const [r, t] = parts[0] as [string, string];
        expect(parsePointers(oldPointerText(r, t))?.map((p) => p.reference)).toEqual([r]);
      }),
      { numRuns: scaled(500) },
    );
  });
});
