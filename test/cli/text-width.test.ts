import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import stringWidth from 'string-width';
import {
  cutStartToWidth,
  cutToWidth,
  displayWidth,
  escapeControls,
  graphemeWidth,
  padEndTo,
  padStartTo,
  previewOf,
  wrapToWidth,
} from '../../src/cli/view/text-width.js';

describe('display width', () => {
  it('counts plain ASCII one column per character', () => {
    expect(displayWidth('hello, world')).toBe(12);
  });

  it('counts CJK ideographs, kana, hangul and fullwidth forms two columns each', () => {
    expect(displayWidth('東京')).toBe(4);
    expect(displayWidth('ひらがなカタカナ')).toBe(16);
    expect(displayWidth('서울')).toBe(4);
    expect(displayWidth('ＡＢＣ')).toBe(6);
    expect(displayWidth('中文 and text')).toBe(13);
  });

  it('counts emoji two columns, including ZWJ families, flags, skin tones and keycaps', () => {
    expect(displayWidth('😊')).toBe(2);
    expect(displayWidth('👨‍👩‍👧‍👦')).toBe(2);
    expect(displayWidth('🇯🇵')).toBe(2);
    expect(displayWidth('👍🏽')).toBe(2);
    expect(displayWidth('1️⃣')).toBe(2);
    expect(displayWidth('🌧️☔')).toBe(4);
  });

  it('counts a text-style pictograph one column, and two with the emoji selector', () => {
    expect(displayWidth('☺')).toBe(1);
    expect(displayWidth('☺️')).toBe(2);
    expect(displayWidth('☔︎')).toBe(1);
  });

  it('counts combining marks and zero-width characters as nothing', () => {
    expect(displayWidth('e\u0301')).toBe(1);
    expect(displayWidth('a\u200bb')).toBe(2);
    expect(displayWidth('\u0301')).toBe(0);
    expect(graphemeWidth('')).toBe(0);
  });

  it('counts East Asian ambiguous characters such as × and → as one column', () => {
    expect(displayWidth('search ×2 → 1')).toBe(13);
    expect(displayWidth('\u00d7')).toBe(1);
  });

  it('counts control characters as nothing (they are escaped before printing)', () => {
    expect(displayWidth('\u001b')).toBe(0);
    expect(displayWidth('\u0085')).toBe(0);
  });

  it('counts colour codes as nothing', () => {
    expect(displayWidth('\u001b[31m東京\u001b[39m ok')).toBe(7);
  });

  it('counts as string-width does, but for a pictograph with the text selector, which takes one column', () => {
    const pieces = [
      'a',
      ' ',
      '東',
      'ｱ',
      'ﾞ',
      'e\u0301',
      '\u0301',
      '😊',
      '👨‍👩‍👧',
      '🇯🇵',
      '1️⃣',
      '☔',
      '\ufe0f',
      '\u200d',
      '☰',
      '\u1100\u1161',
      '×',
      '\u001b[1m',
    ];
    const textForm = ['☔\ufe0e', '☺\ufe0e', '✈\ufe0e'];
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.constantFrom(...pieces), fc.string({ unit: 'grapheme' }))),
        fc.array(fc.constantFrom(...textForm)),
        (parts, texts) => {
          const plain = parts.join('');
          expect(displayWidth(plain)).toBe(stringWidth(plain));
          // Each text-form pictograph, put between spaces, adds one column to what the rest takes.
          const mixed = [plain, ...texts].join(' ');
          expect(displayWidth(mixed)).toBe(stringWidth(plain) + texts.length * 2);
        },
      ),
    );
  });
});

describe('escaping', () => {
  it('shows newlines, tabs, carriage returns and other controls as escapes', () => {
    expect(escapeControls('a\nb\tc\r\nd\u001b[31me\u007f')).toBe('a\\nb\\tc\\r\\nd\\x1b[31me\\x7f');
  });

  it('shows line separators and bidi overrides as escapes, so they cannot reorder the line', () => {
    expect(escapeControls('x\u2028y\u202eevil\u202c')).toBe('x\\u2028y\\u202eevil\\u202c');
  });

  it('leaves printable text, backslashes and emoji alone', () => {
    expect(escapeControls('C:\\path 東京 😊')).toBe('C:\\path 東京 😊');
  });
});

describe('cutting to a width', () => {
  it('returns text that fits unchanged', () => {
    expect(cutToWidth('short', 10)).toBe('short');
    expect(cutToWidth('東京', 4)).toBe('東京');
  });

  it('ends a cut with an ellipsis inside the width', () => {
    expect(cutToWidth('abcdefghij', 5)).toBe('abcd…');
    expect(displayWidth(cutToWidth('abcdefghij', 5))).toBe(5);
  });

  it('never splits a wide character: a column is left free instead', () => {
    expect(cutToWidth('東京都庁', 6)).toBe('東京…');
    expect(displayWidth(cutToWidth('東京都庁', 6))).toBe(5);
  });

  it('never splits a grapheme: an emoji family or an accented letter stays whole or goes whole', () => {
    expect(cutToWidth('ab👨‍👩‍👧‍👦cd', 4)).toBe('ab…');
    expect(cutToWidth('ab👨‍👩‍👧‍👦cd', 5)).toBe('ab👨‍👩‍👧‍👦…');
    expect(cutToWidth('e\u0301e\u0301e\u0301', 2)).toBe('e\u0301…');
  });

  it('never splits an escape', () => {
    expect(cutToWidth('ab\u001bcdef', 5)).toBe('ab…');
    expect(cutToWidth('ab\ncdef', 5)).toBe('ab\\n…');
  });

  it('gives nothing for a width of zero and only the ellipsis for a width of one', () => {
    expect(cutToWidth('abc', 0)).toBe('');
    expect(cutToWidth('abc', 1)).toBe('…');
  });

  it('reads a megabyte-long text only as far as the cut needs', () => {
    const long = '語'.repeat(1_000_000);
    expect(cutToWidth(long, 11)).toBe('語語語語語…');
  });

  it('cuts a path from the left, keeping the file name', () => {
    expect(cutStartToWidth('/very/long/path/to/file.json', 14)).toBe('…/to/file.json');
    expect(cutStartToWidth('a.json', 14)).toBe('a.json');
  });
});

describe('previews, padding and wrapping', () => {
  it('makes a one-line preview: trimmed, escaped and cut', () => {
    expect(previewOf('  \n Hello\nworld, this is long \n', 15)).toBe('Hello\\nworld, …');
  });

  it('pads by display width, so wide text lines up with narrow text', () => {
    expect(padEndTo('東京', 6)).toBe('東京  ');
    expect(padStartTo('ab', 4)).toBe('  ab');
    expect(padEndTo('toolong', 3)).toBe('toolong');
  });

  it('wraps at spaces with an indent after the first line', () => {
    expect(wrapToWidth('one two three four five', 10, '  ')).toEqual(['one two', '  three', '  four', '  five']);
  });
});
