/**
 * swc's own reading of the BPE encodings (dist/ranks, written by the build from gpt-tokenizer): the same counts as
 * gpt-tokenizer's countTokens on real transcripts, generated text and hostile strings, down to gpt-tokenizer's
 * own lookup quirks; the counter createCounter hands out is this one.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import * as cl100k from 'gpt-tokenizer/encoding/cl100k_base';
import * as o200k from 'gpt-tokenizer/encoding/o200k_base';
import { renderMessage } from '../../src/core/render.js';
import type { Rendered } from '../../src/core/types.js';
import { createBpeCounter } from '../../src/tokens/bpe.js';
import { createCounter } from '../../src/tokens/index.js';
import { createRankCounter, RankTable } from '../../src/tokens/ranks.js';
import { isBig, realTranscripts } from '../helpers/cli.js';
import { createRng, randomConversation, referenceMessages } from '../helpers/convert.js';
import { scaled } from '../helpers/scale.js';

const PLAIN = { disallowedSpecial: new Set<string>(), allowedSpecial: new Set<string>() };

/**
 * Every transcript file under fixtures/real (they are what users have) that is not big (`isBig`), as text;
 * test/e2e/ranks.test.ts counts the big ones.
 */
function realTexts(): string[] {
  return realTranscripts()
    .filter((file) => !isBig(file))
    .map((file) => readFileSync(file, 'utf8'));
}

/** Units that stress the pre-tokenizer and the byte lookups: byte-order marks, lone surrogates, joiners, scripts. */
const UNITS = [
  'a',
  'Z',
  'the',
  ' ',
  '   ',
  '\n',
  '\r\n',
  '\t',
  '0',
  '1234',
  '\ufeff',
  '\ufeffusing',
  '\ud800',
  '\udc00',
  '\ud83d',
  '😀',
  '👨‍👩‍👧',
  '中文',
  '名',
  'ñ',
  'é',
  '\u0301',
  "'s",
  "'LL",
  '!',
  '...',
  '<|endoftext|>',
  '<|im_start|>',
  '\u00a0',
  'ـ',
  'ß',
  'İ',
  '\u200b',
  '٣',
  'ង',
  'Привет',
  '{"a": [1, 2.5]}',
  '\\u00e9',
  '----',
  '    def f():',
];

describe.each([
  ['o200k_base', o200k],
  ['cl100k_base', cl100k],
] as const)('the %s rank table', (name, gpt) => {
  const table = RankTable.load(name) as RankTable;
  const pieces = createRankCounter(table);
  const reference = (text: string): number => gpt.countTokens(text, PLAIN);

  it('is written by the build and loads', () => {
    expect(table).not.toBeNull();
    expect(table.name).toBe(name);
  });

  it('counts every real transcript exactly as gpt-tokenizer does', () => {
    const texts = realTexts();
    expect(texts.length).toBeGreaterThan(10);
    for (const text of texts) expect(pieces.count(text)).toEqual({ tokens: reference(text), exact: true });
  });

  it('counts rendered random conversations exactly as gpt-tokenizer does', () => {
    for (let seed = 1; seed <= scaled(60); seed++) {
      for (const message of referenceMessages(randomConversation(seed))) {
        const text = renderMessage(message).text;
        expect(pieces.count(text).tokens).toBe(reference(text));
      }
    }
  });

  it('counts hostile strings exactly as gpt-tokenizer does (byte-order marks, lone surrogates, long runs)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.constantFrom(...UNITS),
            fc.string({ maxLength: 12, unit: 'binary' }),
            fc.string({ maxLength: 12, unit: 'grapheme' }),
          ),
          { maxLength: 30 },
        ),
        fc.nat({ max: 1600 }),
        fc.constantFrom('', ' ', 'x', '-', '\n', '7'),
        (parts, runLength, run) => {
          const text = parts.join('') + run.repeat(runLength);
          expect(pieces.count(text)).toEqual({ tokens: reference(text), exact: true });
        },
      ),
      { numRuns: scaled(400) },
    );
  });

  it('looks up valid UTF-8 after a byte-order mark without the mark, as gpt-tokenizer does', () => {
    // gpt-tokenizer decodes the bytes it looks up and TextDecoder drops a leading U+FEFF: "\ufeff名" is one token.
    const rng = createRng(11);
    const sample = ['名', 'ង', 'using', 'namespace', '\n\n'];
    for (let i = 0; i < 300; i++)
      sample.push(String.fromCodePoint(rng.int(0x20, 0x2fff)) + String.fromCodePoint(rng.int(0x4e00, 0x9fff)));
    for (const tail of sample) {
      for (const text of [`\ufeff${tail}`, `a\ufeff${tail}`, `\ufeff\ufeff${tail}`])
        expect(pieces.count(text).tokens).toBe(reference(text));
    }
  });

  it('stops at a room with a number above it, and is exact when it did not stop', () => {
    const rng = createRng(5);
    const texts = realTexts().map((t) => t.slice(0, 20_000));
    for (const text of texts) {
      const full = reference(text);
      const room = rng.int(0, full + 5);
      const got = pieces.count(text, room);
      if (got.exact) expect(got.tokens).toBe(full);
      else {
        expect(got.tokens).toBeGreaterThan(room);
        expect(full).toBeGreaterThanOrEqual(got.tokens);
      }
      expect(got.exact).toBe(full <= room);
    }
  });

  it('goes on from where a count stopped, to the count it would have given from the start', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.constantFrom(...UNITS), fc.string({ maxLength: 12, unit: 'grapheme' })), {
          minLength: 1,
          maxLength: 60,
        }),
        fc.nat({ max: 1500 }),
        fc.nat({ max: 80 }),
        fc.nat({ max: 80 }),
        (parts, runLength, first, more) => {
          const text = parts.join('') + '-'.repeat(runLength);
          const stopped = pieces.count(text, first);
          if (stopped.exact) return;
          expect(stopped.resume).toBeDefined();
          expect(pieces.count(text, undefined, stopped.resume)).toEqual({ tokens: reference(text), exact: true });
          const second = first + more;
          const again = pieces.count(text, second, stopped.resume);
          const fresh = pieces.count(text, second);
          expect(again.exact).toBe(fresh.exact);
          if (again.exact) expect(again.tokens).toBe(fresh.tokens);
          else expect(again.tokens).toBeGreaterThan(second);
        },
      ),
      { numRuns: scaled(300) },
    );
  });

  it('does not count the start of a message again when a count that stopped inside it is asked for more', () => {
    let chars = 0;
    const tally = {
      count(text: string, room?: number, from?: { at: number; tokens: number }) {
        const counted = pieces.count(text, room, from);
        // The characters this call went through: from where it started to where it stopped (or the end).
        chars += (counted.resume?.at ?? text.length) - (from?.at ?? 0);
        return counted;
      },
      cacheRoom: () => Infinity,
    };
    const counter = createBpeCounter(name, { countTokens: (t: string) => tally.count(t).tokens }, tally);
    const long: Rendered = { text: `[tool:read] ${realTexts().join('\n').slice(0, 200_000)}`, images: 0, files: 0 };
    const list = [{ text: '[user] go on', images: 0, files: 0 }, long];
    for (const limit of [100, 2_000, 20_000]) expect(counter.measure(list, limit)).toBeGreaterThan(limit);
    const exact = counter.measure(list);
    expect(exact).toBe(reference(list.map((r) => r.text).join('\n')));
    // Each character of the long message counted once (and the short one twice: linked, then as the last).
    expect(chars).toBeLessThan(long.text.length + 100);
  });

  it('is what createCounter hands out, measuring groups as the gpt-tokenizer counter does', async () => {
    const ours = await createCounter(name);
    const theirs = createBpeCounter(name, gpt);
    for (let seed = 100; seed < 130; seed++) {
      const rendered: Rendered[] = referenceMessages(randomConversation(seed)).map(renderMessage);
      expect(ours.measure(rendered)).toBe(theirs.measure(rendered));
    }
  });
});

describe('a rank file that is not there', () => {
  it('is reported as missing (createCounter then refuses to count rather than count another way)', () => {
    expect(RankTable.load('no_such_encoding')).toBeNull();
  });
});
