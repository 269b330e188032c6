/**
 * The counters' settings (Haystack's `ApproximateTokenCounter(chars_per_token, tokens_per_image, tokens_per_file)`):
 * the approximate count at non-integer rates against numbers worked out by hand, the flat costs for every tokenizer,
 * the defaults giving exactly the numbers the fixed counter gave, names that say the settings, and the validation
 * the CLI reports as one-line usage errors.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import * as o200k from 'gpt-tokenizer/encoding/o200k_base';
import { renderMessage } from '../../src/core/render.js';
import type { Message, Rendered, TokenCounter } from '../../src/core/types.js';
import { UsageError } from '../../src/errors.js';
import { decodeSource } from '../../src/io/source.js';
import { compactSource } from '../../src/pipeline/index.js';
import { codePointLength, createApproxCounter } from '../../src/tokens/approx.js';
import {
  createCounter,
  parseCounterOptions,
  resolveCounterOptions,
  type RawCounterOptions,
  type TokenizerName,
} from '../../src/tokens/index.js';
import { counterName } from '../../src/tokens/options.js';
import {
  conversationArb,
  haystackCodec,
  jsonStyleArb,
  openaiCodec,
  transcriptFile,
} from '../helpers/conversation-arbitraries.js';
import { BARE } from '../helpers/json-text.js';
import { scaled } from '../helpers/scale.js';

const PLAIN = { disallowedSpecial: new Set<string>(), allowedSpecial: new Set<string>() };

function rendered(text: string, images = 0, files = 0): Rendered {
  return { text, images, files };
}

/** A rendered message of exactly `n` code points. */
function chars(n: number, unit = 'x'): Rendered {
  return rendered(unit.repeat(n));
}

/**
 * The approximate counter exactly as it was before it took settings (fixed at 4 characters per token, 85 per image,
 * 1000 per file), kept here so the defaults can be checked against it number for number.
 */
function createFixedApproxCounter(): TokenCounter {
  const lengths = new WeakMap<Rendered, number>();
  const lengthOf = (r: Rendered): number => {
    let n = lengths.get(r);
    if (n === undefined) {
      n = codePointLength(r.text);
      lengths.set(r, n);
    }
    return n;
  };
  return {
    name: 'approx',
    measure(messages, limit) {
      let chars = messages.length > 0 ? messages.length - 1 : 0;
      let flat = 0;
      for (let i = messages.length - 1; i >= 0; i--) {
        const r = messages[i] as Rendered;
        chars += lengthOf(r);
        flat += r.images * 85 + r.files * 1000;
        if (limit !== undefined && Math.floor(chars / 4) + flat > limit && i > 0) return Math.floor(chars / 4) + flat;
      }
      return Math.floor(chars / 4) + flat;
    },
  };
}

/** A tool message whose one result carries images and files, as a screenshot or an attachment tool returns them. */
function toolResultWith(text: string, images: number, files: number): Message {
  return {
    role: 'tool',
    content: {
      texts: [],
      toolCalls: [],
      results: [{ name: 'shot', text, error: false, images, files }],
      images: 0,
      files: [],
    },
  };
}

describe('the approximate counter at other rates', () => {
  it('truncates the quotient at 3.5 characters per token: 7 characters are 2 tokens, 6 are 1', () => {
    const counter = createApproxCounter({ charsPerToken: 3.5 });
    // 7 / 3.5 = 2; 6 / 3.5 = 1.71…; 3 / 3.5 = 0.86…; 13 / 3.5 = 3.71…; 14 / 3.5 = 4.
    expect(counter.measure([chars(7)])).toBe(2);
    expect(counter.measure([chars(6)])).toBe(1);
    expect(counter.measure([chars(3)])).toBe(0);
    expect(counter.measure([chars(13)])).toBe(3);
    expect(counter.measure([chars(14)])).toBe(4);
  });

  it('truncates the quotient at 2.5 characters per token', () => {
    const counter = createApproxCounter({ charsPerToken: 2.5 });
    // 4 / 2.5 = 1.6; 5 / 2.5 = 2; 7 / 2.5 = 2.8; 10 / 2.5 = 4.
    expect([4, 5, 7, 10].map((n) => counter.measure([chars(n)]))).toEqual([1, 2, 2, 4]);
  });

  it('charges more than one token per character below 1 character per token', () => {
    const counter = createApproxCounter({ charsPerToken: 0.3 });
    // 1 / 0.3 = 3.33…; 2 / 0.3 = 6.67…; 3 / 0.3 = 10; 10 / 0.3 = 33.3…
    expect([1, 2, 3, 10].map((n) => counter.measure([chars(n)]))).toEqual([3, 6, 10, 33]);
  });

  it('divides in floating point as Python does: 33 characters at 1.1 per token are 29 tokens, not 30', () => {
    // In Python, 33 / 1.1 == 29.999999999999996 (1.1 is stored a little above 1.1), and int() of it is 29.
    expect(createApproxCounter({ charsPerToken: 1.1 }).measure([chars(33)])).toBe(29);
  });

  it('divides the whole group once, joins included, not each message', () => {
    const counter = createApproxCounter({ charsPerToken: 3.5 });
    // "xxx\nxxx" is 7 code points: 2 tokens, where 3 + 3 characters counted apart would be 0 + 0.
    expect(counter.measure([chars(3), chars(3)])).toBe(2);
    expect(counter.measure([chars(3)]) + counter.measure([chars(3)])).toBe(0);
  });

  it('counts one character per token at a rate of 1', () => {
    const counter = createApproxCounter({ charsPerToken: 1 });
    expect(counter.measure([rendered('[user] a'), rendered('[assistant] b')])).toBe(22);
  });

  it('counts code points, not UTF-16 units: an emoji is one character', () => {
    const counter = createApproxCounter({ charsPerToken: 3.5 });
    // Seven emoji are 7 code points (2 tokens at 3.5) though they are 14 UTF-16 units (which would be 4).
    expect(counter.measure([chars(7, '😀')])).toBe(2);
    expect(counter.measure([chars(6, '😀')])).toBe(1);
    expect(createApproxCounter({ charsPerToken: 1 }).measure([rendered('a😀b🇫🇷')])).toBe(5);
  });

  it('measures an empty group as zero at any rate', () => {
    expect(createApproxCounter({ charsPerToken: 0.3, tokensPerImage: 9 }).measure([])).toBe(0);
  });

  it('with a limit returns the exact count at or under the limit and some number above it otherwise', () => {
    const item = fc.record({
      text: fc.string({ unit: fc.constantFrom('a', ' ', '\n', '字', '😀', '\ud800'), maxLength: 30 }),
      images: fc.integer({ min: 0, max: 2 }),
      files: fc.integer({ min: 0, max: 1 }),
    });
    const options = fc.record({
      charsPerToken: fc.constantFrom(0.3, 1, 1.1, 2.5, 3.5, 4, 7.25),
      tokensPerImage: fc.constantFrom(0, 1, 85, 500),
      tokensPerFile: fc.constantFrom(0, 3, 1000),
    });
    fc.assert(
      fc.property(
        options,
        fc.array(item, { maxLength: 8 }),
        fc.integer({ min: 0, max: 2500 }),
        (settings, list, limit) => {
          const counter = createApproxCounter(settings);
          const chars = Array.from(list.map((r) => r.text).join('\n')).length;
          const flat = list.reduce(
            (a, r) => a + r.images * settings.tokensPerImage + r.files * settings.tokensPerFile,
            0,
          );
          const exact = Math.trunc(chars / settings.charsPerToken) + flat;
          expect(counter.measure(list)).toBe(exact);
          const limited = counter.measure(list, limit);
          if (exact <= limit) expect(limited).toBe(exact);
          else expect(limited).toBeGreaterThan(limit);
        },
      ),
      { numRuns: scaled(1000) },
    );
  });
});

describe('the flat costs of images and files', () => {
  it('charges each image and file at the cost given, on top of the text', () => {
    const counter = createApproxCounter({ tokensPerImage: 200, tokensPerFile: 3000 });
    // "abcd" is 1 token at 4 characters per token.
    expect(counter.measure([rendered('abcd', 2, 1)])).toBe(1 + 2 * 200 + 3000);
  });

  it('charges nothing for them at a cost of 0, leaving only their placeholders’ text', () => {
    const counter = createApproxCounter({ charsPerToken: 1, tokensPerImage: 0, tokensPerFile: 0 });
    const message: Message = {
      role: 'user',
      content: { texts: [], toolCalls: [], results: [], images: 1, files: ['a.pdf'] },
    };
    // "[user] <image>\n[user] <file: a.pdf>" is 14 + 1 + 20 code points.
    expect(counter.measure([renderMessage(message)])).toBe(35);
  });

  it('counts images and files inside a tool result', () => {
    const r = renderMessage(toolResultWith('shot:<image><image><file: x>', 2, 1));
    expect(r.text).toBe('[tool:shot] shot:<image><image><file: x>');
    // 40 code points: 11 tokens at 3.5 (11.43), then 2 images and 1 file.
    expect(createApproxCounter({ charsPerToken: 3.5, tokensPerImage: 500, tokensPerFile: 7 }).measure([r])).toBe(
      11 + 2 * 500 + 7,
    );
    expect(createApproxCounter({ charsPerToken: 3.5, tokensPerImage: 0, tokensPerFile: 0 }).measure([r])).toBe(11);
  });

  it('apply to a BPE tokenizer as well, on top of its tokens', async () => {
    const text = '[user] look at this';
    const base = o200k.countTokens(text, PLAIN);
    const counter = await createCounter('o200k_base', { tokensPerImage: 0, tokensPerFile: 7 });
    expect(counter.measure([rendered(text, 2, 1)])).toBe(base + 7);
    expect((await createCounter('o200k_base')).measure([rendered(text, 2, 1)])).toBe(base + 2 * 85 + 1000);
  });
});

describe('the defaults', () => {
  const fixed = createFixedApproxCounter();

  it('are 4 characters per token, 85 per image and 1000 per file', () => {
    expect(createApproxCounter().settings).toEqual({ charsPerToken: 4, tokensPerImage: 85, tokensPerFile: 1000 });
    expect(resolveCounterOptions({}, 'o200k_base')).toEqual({
      charsPerToken: null,
      tokensPerImage: 85,
      tokensPerFile: 1000,
    });
  });

  it('give the numbers the fixed counter gave for any group, with and without a limit', () => {
    const item = fc.record({
      text: fc.string({
        unit: fc.constantFrom('a', ' ', '\n', '字', '😀', 'e\u0301', '\ud800', '\udc00', '🇫🇷'),
        maxLength: 40,
      }),
      images: fc.integer({ min: 0, max: 2 }),
      files: fc.integer({ min: 0, max: 1 }),
    });
    fc.assert(
      fc.property(fc.array(item, { maxLength: 8 }), fc.option(fc.integer({ min: 0, max: 3000 })), (list, limit) => {
        const explicit = createApproxCounter({ charsPerToken: 4, tokensPerImage: 85, tokensPerFile: 1000 });
        const expected = fixed.measure(list, limit ?? undefined);
        expect(createApproxCounter().measure(list, limit ?? undefined)).toBe(expected);
        expect(explicit.measure(list, limit ?? undefined)).toBe(expected);
      }),
      { numRuns: scaled(1000) },
    );
  });

  it('make the same decisions and outputs as the fixed counter on generated transcripts', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(openaiCodec, haystackCodec),
        conversationArb,
        jsonStyleArb,
        fc.double({ min: 0, max: 1.2, noNaN: true }),
        async (codec, messages, style, share) => {
          const file = transcriptFile(codec, messages, 'json', BARE, style);
          const run = (counter: TokenCounter, target: number) =>
            compactSource(decodeSource(file.bytes, file.name), { target, counter, exhaustive: true });
          const whole = (await run(fixed, Number.MAX_SAFE_INTEGER)).conversations.reduce(
            (a, c) => a + c.plan.tokensBefore,
            0,
          );
          const target = Math.max(1, Math.floor(whole * share));
          const before = await run(fixed, target);
          const after = await run(createApproxCounter(), target);
          expect(after.output).toBe(before.output);
          expect(after.conversations.map((c) => c.plan)).toEqual(before.conversations.map((c) => c.plan));
        },
      ),
      { numRuns: scaled(150) },
    );
  });
});

describe('the counter’s name', () => {
  it('is the tokenizer alone with the defaults, given or not', async () => {
    expect(createApproxCounter().name).toBe('approx');
    expect(createApproxCounter({ charsPerToken: 4, tokensPerImage: 85, tokensPerFile: 1000 }).name).toBe('approx');
    expect((await createCounter('approx')).name).toBe('approx');
    expect((await createCounter('o200k_base', { tokensPerImage: 85 })).name).toBe('o200k_base');
  });

  it('lists every setting when any differs from the defaults', async () => {
    expect(createApproxCounter({ charsPerToken: 3.5 }).name).toBe('approx (3.5 chars/token, 85/image, 1000/file)');
    expect(createApproxCounter({ tokensPerImage: 0 }).name).toBe('approx (4 chars/token, 0/image, 1000/file)');
    expect((await createCounter('approx', { charsPerToken: 0.3, tokensPerFile: 2000 })).name).toBe(
      'approx (0.3 chars/token, 85/image, 2000/file)',
    );
    expect((await createCounter('cl100k_base', { tokensPerImage: 765 })).name).toBe(
      'cl100k_base (765/image, 1000/file)',
    );
    expect(counterName('o200k_base', { charsPerToken: null, tokensPerImage: 85, tokensPerFile: 0 })).toBe(
      'o200k_base (85/image, 0/file)',
    );
  });

  it('comes with the settings the counter counts with', async () => {
    expect(createApproxCounter({ charsPerToken: 2.5, tokensPerFile: 0 }).settings).toEqual({
      charsPerToken: 2.5,
      tokensPerImage: 85,
      tokensPerFile: 0,
    });
    expect((await createCounter('o200k_base', { tokensPerImage: 1 })).settings).toEqual({
      charsPerToken: null,
      tokensPerImage: 1,
      tokensPerFile: 1000,
    });
  });
});

describe('the options in the library', () => {
  it.each([0, -1, Infinity, -Infinity, NaN, -0])('refuse %p characters per token', (charsPerToken) => {
    expect(() => createApproxCounter({ charsPerToken })).toThrow(RangeError);
    expect(() => createApproxCounter({ charsPerToken })).toThrow(
      /^charsPerToken must be a positive finite number, got /,
    );
  });

  it.each([-5, 1.5, NaN, Infinity, 2 ** 53])('refuse %p tokens per image or file', (cost) => {
    expect(() => createApproxCounter({ tokensPerImage: cost })).toThrow(
      /^tokensPerImage must be a whole number of at least 0, got /,
    );
    expect(() => createApproxCounter({ tokensPerFile: cost })).toThrow(
      /^tokensPerFile must be a whole number of at least 0, got /,
    );
  });

  it('refuse characters per token for a BPE tokenizer, before loading it', async () => {
    await expect(createCounter('o200k_base', { charsPerToken: 4 })).rejects.toThrow(
      'charsPerToken only applies to the approx tokenizer, not o200k_base',
    );
    expect(() => resolveCounterOptions({ charsPerToken: 3 }, 'cl100k_base')).toThrow(RangeError);
  });

  it('take very small and very large rates that are finite', () => {
    expect(createApproxCounter({ charsPerToken: 1e-3 }).measure([chars(2)])).toBe(2000);
    expect(createApproxCounter({ charsPerToken: 1e300 }).measure([chars(2)])).toBe(0);
  });
});

describe('the options on the command line', () => {
  const parse = (raw: RawCounterOptions, tokenizer: TokenizerName = 'approx') => parseCounterOptions(raw, tokenizer);
  const usageError = (raw: RawCounterOptions, tokenizer: TokenizerName = 'approx'): string => {
    try {
      parse(raw, tokenizer);
    } catch (error) {
      expect(error).toBeInstanceOf(UsageError);
      return (error as Error).message;
    }
    throw new Error('no error');
  };

  it('leave out what was not given, so the defaults apply', () => {
    expect(parse({})).toEqual({});
    expect(parse({ charsPerToken: undefined, tokensPerImage: undefined }, 'o200k_base')).toEqual({});
  });

  it('read decimals for characters per token and whole numbers for the costs', () => {
    expect(parse({ charsPerToken: '3.5', tokensPerImage: '0', tokensPerFile: '2000' })).toEqual({
      charsPerToken: 3.5,
      tokensPerImage: 0,
      tokensPerFile: 2000,
    });
    expect(parse({ charsPerToken: '4' })).toEqual({ charsPerToken: 4 });
    expect(parse({ charsPerToken: '.5' })).toEqual({ charsPerToken: 0.5 });
    expect(parse({ charsPerToken: ' 2.50 ' })).toEqual({ charsPerToken: 2.5 });
    expect(parse({ charsPerToken: '1e1' })).toEqual({ charsPerToken: 10 });
    expect(parse({ tokensPerFile: '1,000', tokensPerImage: '1_500' })).toEqual({
      tokensPerFile: 1000,
      tokensPerImage: 1500,
    });
    expect(Object.is(parse({ tokensPerImage: '-0' }).tokensPerImage, 0)).toBe(true);
  });

  it('take the costs with a BPE tokenizer', () => {
    expect(parse({ tokensPerImage: '765', tokensPerFile: '0' }, 'o200k_base')).toEqual({
      tokensPerImage: 765,
      tokensPerFile: 0,
    });
  });

  it.each([
    '0',
    '-1',
    'abc',
    'Infinity',
    '-Infinity',
    'NaN',
    '1e999',
    '1e-999',
    '',
    ' ',
    '0x10',
    '3,5',
    '4 tokens',
    '1/4',
  ])('refuse --chars-per-token %p in one line', (raw) => {
    expect(usageError({ charsPerToken: raw })).toBe(`--chars-per-token must be a positive number, got "${raw}"`);
  });

  it('refuse --tokens-per-image -5 and 1.5, and other values that are not whole numbers of at least 0', () => {
    expect(usageError({ tokensPerImage: '-5' })).toBe('--tokens-per-image must be at least 0, got -5');
    expect(usageError({ tokensPerImage: '1.5' })).toBe('--tokens-per-image must be a whole number, got "1.5"');
    expect(usageError({ tokensPerFile: 'abc' })).toBe('--tokens-per-file must be a whole number, got "abc"');
    expect(usageError({ tokensPerFile: '1e3' })).toBe('--tokens-per-file must be a whole number, got "1e3"');
    expect(usageError({ tokensPerFile: '' })).toBe('--tokens-per-file must be a whole number, got ""');
    expect(usageError({ tokensPerImage: '99999999999999999999' })).toBe(
      '--tokens-per-image is too large: "99999999999999999999"',
    );
  });

  it('refuse --chars-per-token with a BPE tokenizer, even at the default', () => {
    expect(usageError({ charsPerToken: '4' }, 'o200k_base')).toBe(
      '--chars-per-token only applies to --tokenizer approx (not o200k_base)',
    );
    expect(usageError({ charsPerToken: '3.5', tokensPerImage: '0' }, 'cl100k_base')).toBe(
      '--chars-per-token only applies to --tokenizer approx (not cl100k_base)',
    );
  });

  it('keep a value with control characters on one line', () => {
    expect(usageError({ charsPerToken: 'a\nb' })).toBe('--chars-per-token must be a positive number, got "a\\u000ab"');
  });

  it('read the costs with the reader the CLI gives, and still refuse what is not a whole number of at least 0', () => {
    const withSuffix = (_flag: string, raw: string): number =>
      raw.endsWith('k') ? Number(raw.slice(0, -1)) * 1000 : (parse({ tokensPerFile: raw }).tokensPerFile ?? NaN);
    expect(parseCounterOptions({ tokensPerImage: '1.5k', tokensPerFile: '200' }, 'o200k_base', withSuffix)).toEqual({
      tokensPerImage: 1500,
      tokensPerFile: 200,
    });
    expect(() => parseCounterOptions({ tokensPerImage: '0.0005k' }, 'approx', withSuffix)).toThrow(
      '--tokens-per-image must be a whole number of at least 0, got "0.0005k"',
    );
    expect(() => parseCounterOptions({ tokensPerImage: '-1k' }, 'approx', withSuffix)).toThrow(UsageError);
  });

  it('give options every counter takes', async () => {
    const options = parse({ charsPerToken: '3.5', tokensPerImage: '0' });
    const counter = await createCounter('approx', options);
    expect(counter.measure([chars(7, '😀'), rendered('', 3, 0)])).toBe(2);
  });
});
