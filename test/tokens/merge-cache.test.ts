/**
 * The merge cache policy: gpt-tokenizer's cache is emptied just before it fills (evicting from a full cache one
 * entry at a time degrades on varied text), and never on text whose pieces repeat (the cache stays warm).
 */
import { describe, expect, it } from '@jest/globals';
import { createBpeCounter, type Encoding } from '../../src/tokens/bpe.js';

/** A stand-in for a gpt-tokenizer encoding whose every piece is one token and goes through the merge cache. */
function fakeEncoding(capacity: number): { encoding: Encoding; evictions: () => number; clears: () => number } {
  const cache = new Set<string>();
  let evictions = 0;
  let clears = 0;
  const core = {
    tokenSplitRegex: /\S+|\s+/gu,
    bytePairRankDecoder: ['a'],
    mergeCache: cache,
    mergeCacheSize: capacity,
    getBpeRankFromString: (): number | undefined => undefined,
    getBpeRankFromBytes: (): number | undefined => undefined,
    bytePairEncode(piece: string): number[] {
      if (!cache.has(piece)) {
        if (cache.size >= capacity) {
          evictions++;
          cache.delete(cache.values().next().value as string);
        }
        cache.add(piece);
      }
      return [1];
    },
  };
  const encoding = {
    countTokens: (text: string): number => text.match(/\S+|\s+/gu)?.length ?? 0,
    clearMergeCache(): void {
      clears++;
      cache.clear();
    },
    default: { bytePairEncodingCoreProcessor: core },
  } as Encoding;
  return { encoding, evictions: () => evictions, clears: () => clears };
}

/** A message's rendered form. */
const rendered = (text: string) => ({ text, images: 0, files: 0 });

describe('the merge cache', () => {
  it('is emptied before it fills on text of ever new pieces, so nothing is ever evicted one by one', () => {
    const fake = fakeEncoding(50_000);
    const counter = createBpeCounter('fake', fake.encoding);
    let word = 0;
    for (let m = 0; m < 2_000; m++) {
      const words: string[] = [];
      for (let w = 0; w < 100; w++) words.push(`w${(word++).toString(36)}`);
      const text = `[USER] ${words.join(' ')}`;
      // Counted exactly: every word and every space is one piece.
      expect(counter.measure([rendered(text)])).toBe(text.match(/\S+|\s+/gu)?.length);
    }
    expect(fake.evictions()).toBe(0);
    // 200,000 new words fill 50,000 entries at least three times over.
    expect(fake.clears()).toBeGreaterThanOrEqual(3);
  });

  it('is never emptied on text whose pieces repeat', () => {
    const fake = fakeEncoding(50_000);
    const counter = createBpeCounter('fake', fake.encoding);
    const text = `[USER] ${Array.from({ length: 200 }, (_, k) => `w${k}`).join(' ')}`;
    for (let m = 0; m < 5_000; m++) counter.measure([rendered(`${text} ${m % 50}`)]);
    expect(fake.clears()).toBe(0);
  });
});
