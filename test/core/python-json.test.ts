/**
 * Tool-call arguments are measured as Python's `json.dumps(args, sort_keys=True)` writes them; every expected
 * string below is what CPython 3 prints. Also the note template matcher, which must read templates literally.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { parseJson } from '../../src/core/json/value.js';
import { DEFAULT_NOTE_TEMPLATE, formatNote, isEarlierNoteText, matchesNoteTemplate } from '../../src/core/note.js';
import {
  compareCodePoints,
  pythonJsonDumps,
  pythonNumber,
  pythonString,
  renderArgumentsString,
} from '../../src/core/json/python.js';
import { scaled } from '../helpers/scale.js';

const dumps = (json: string): string => pythonJsonDumps(parseJson(json));

describe('pythonNumber', () => {
  it.each([
    ['1.0', '1.0'],
    ['1e16', '1e+16'],
    ['1E16', '1e+16'],
    ['1e15', '1000000000000000.0'],
    ['1e-05', '1e-05'],
    ['0.00001', '1e-05'],
    ['0.0001', '0.0001'],
    ['1e-4', '0.0001'],
    ['0.000123', '0.000123'],
    ['2.5e-5', '2.5e-05'],
    ['4.35e-7', '4.35e-07'],
    ['0.1', '0.1'],
    ['2e-1', '0.2'],
    ['100.0', '100.0'],
    ['-12.50', '-12.5'],
    ['1E+2', '100.0'],
    ['1e0', '1.0'],
    ['0e0', '0.0'],
    ['123456.789e3', '123456789.0'],
    ['1e22', '1e+22'],
    ['1.5e300', '1.5e+300'],
    ['5e-324', '5e-324'],
    ['1.7976931348623157e308', '1.7976931348623157e+308'],
    ['12345678901234567.0', '1.2345678901234568e+16'],
    ['9007199254740993.0', '9007199254740992.0'],
    ['-0.0', '-0.0'],
    ['-0e10', '-0.0'],
    ['1e400', 'Infinity'],
    ['-1e400', '-Infinity'],
  ])('writes the float %s as %s', (raw, expected) => {
    expect(pythonNumber(raw)).toBe(expected);
  });

  it.each([
    ['0', '0'],
    ['-0', '0'],
    ['42', '42'],
    ['-7', '-7'],
    ['9007199254740993', '9007199254740993'],
    ['123456789012345678901234567890', '123456789012345678901234567890'],
    ['-123456789012345678901234567890', '-123456789012345678901234567890'],
  ])('writes the integer %s as %s, exactly', (raw, expected) => {
    expect(pythonNumber(raw)).toBe(expected);
  });

  // Random doubles in several written forms, with CPython's json.dumps(json.loads(lexeme)).
  it.each([
    ['95.3078824548157', '95.3078824548157'],
    [
      '143457781264131115799524308652960801771679007599510238097731751762386071371947915147323476092306606617978701658333342035506183540607348850697116243329740386958311308290261792943792096739018195663660173368099777345890442794974455815111732701082973591681205069639835751182524787007573360693782541020398375403520.0',
      '1.4345778126413112e+308',
    ],
    ['4.2912002522132694e-20', '4.2912002522132694e-20'],
    ['2.9322836275209558e+21', '2.932283627520956e+21'],
    ['4.764e+15', '4764000000000000.0'],
    ['5.9594252841224723e-300', '5.959425284122472e-300'],
    ['2.114e+100', '2.114e+100'],
    ['1.419e-03', '0.001419'],
    ['74089968917153824374784.0', '7.4089968917153824e+22'],
    ['6.57108633856198e-310', '6.571086338562e-310'],
    ['6.27005677156875e+16', '6.27005677156875e+16'],
    ['3.698e+05', '369800.0'],
    ['0.0017366950971619286', '0.0017366950971619286'],
    ['35914398840116788.0', '3.5914398840116788e+16'],
    ['1352865313426939.0', '1352865313426939.0'],
    ['6.21905683854243e+17', '6.21905683854243e+17'],
    ['7.2733786104423539e+17', '7.273378610442354e+17'],
    ['7.580434011768e-310', '7.580434011768e-310'],
    ['6.49827589134769e-05', '6.49827589134769e-05'],
    ['7.64527041635315e-06', '7.64527041635315e-06'],
    ['925134603562055.0', '925134603562055.0'],
    ['3.501e+22', '3.501e+22'],
  ])('writes %s as CPython does', (raw, expected) => {
    expect(pythonNumber(raw)).toBe(expected);
  });
});

describe('pythonString', () => {
  it('escapes quotes, backslashes and the short control escapes, and leaves the slash alone', () => {
    expect(pythonString('"\\/\n\r\t\b\f')).toBe('"\\"\\\\/\\n\\r\\t\\b\\f"');
  });

  it('escapes other control characters and DEL as \\u00XX', () => {
    expect(pythonString('\u0000\u001f\u007f')).toBe('"\\u0000\\u001f\\u007f"');
  });

  it('escapes everything outside printable ASCII in lowercase hex', () => {
    expect(pythonString('é')).toBe('"\\u00e9"');
    expect(pythonString('字\u00a0\uffff')).toBe('"\\u5b57\\u00a0\\uffff"');
  });

  it('escapes an astral character as a surrogate pair', () => {
    expect(pythonString('😀')).toBe('"\\ud83d\\ude00"');
    expect(pythonString('a👍🏽b')).toBe('"a\\ud83d\\udc4d\\ud83c\\udffdb"');
  });

  it('escapes a lone surrogate like any other character', () => {
    expect(pythonString('\ud800')).toBe('"\\ud800"');
  });

  it('leaves printable ASCII as it is', () => {
    const printable = Array.from({ length: 0x7f - 0x20 }, (_, i) => String.fromCharCode(0x20 + i))
      .filter((c) => c !== '"' && c !== '\\')
      .join('');
    expect(pythonString(printable)).toBe(`"${printable}"`);
  });
});

describe('pythonJsonDumps', () => {
  it('sorts keys at every level and writes ", " and ": " separators', () => {
    expect(dumps('{"b":[1,{"d":1.0,"c":null}],"a":true,"e":false}')).toBe(
      '{"a": true, "b": [1, {"c": null, "d": 1.0}], "e": false}',
    );
  });

  it('writes empty containers without spaces', () => {
    expect(dumps('{"a":{},"b":[]}')).toBe('{"a": {}, "b": []}');
  });

  it('sorts keys by code point, putting astral characters after U+FFFF', () => {
    const json = '{"\\ud83d\\ude00": 2, "\\uffff": 1, "\\ue000": 3, "b": 0, "A": 4, "": 5, "\\u00e9": 6, "a": 7}';
    expect(dumps(json)).toBe(
      '{"": 5, "A": 4, "a": 7, "b": 0, "\\u00e9": 6, "\\ue000": 3, "\\uffff": 1, "\\ud83d\\ude00": 2}',
    );
  });

  it('keeps the last value of a duplicated key, as Python does', () => {
    expect(dumps('{"a":1,"b":2,"a":3}')).toBe('{"a": 3, "b": 2}');
  });

  it('treats __proto__ and constructor as ordinary keys', () => {
    expect(dumps('{"__proto__": {"x": []}, "constructor": {}}')).toBe('{"__proto__": {"x": []}, "constructor": {}}');
  });

  it('decodes escapes before writing them back the Python way', () => {
    expect(dumps('"\\u00E9\\/\\ud83d\\ude00"')).toBe('"\\u00e9/\\ud83d\\ude00"');
  });

  it('keeps big integers exact and floats as floats', () => {
    expect(dumps('[123456789012345678901234567890, 1.0, 1e16, -0, -0.0, 1e400]')).toBe(
      '[123456789012345678901234567890, 1.0, 1e+16, 0, -0.0, Infinity]',
    );
  });

  it('orders any keys as a code point comparison would', () => {
    const key = fc.string({
      unit: fc.constantFrom('a', 'B', 'é', '\uffff', '\ue000', '😀', '𝄞', '\u0000', '~'),
      maxLength: 4,
    });
    fc.assert(
      fc.property(fc.array(key, { maxLength: 6 }), (keys) => {
        const byCodePoint = [...keys].sort((x, y) => {
          const a = Array.from(x, (c) => c.codePointAt(0) as number);
          const b = Array.from(y, (c) => c.codePointAt(0) as number);
          for (let i = 0; i < Math.min(a.length, b.length); i++)
            if (a[i] !== b[i]) return (a[i] as number) - (b[i] as number);
          return a.length - b.length;
        });
        expect([...keys].sort(compareCodePoints)).toEqual(byCodePoint);
      }),
      { numRuns: scaled(500) },
    );
  });
});

describe('renderArgumentsString', () => {
  it('parses an arguments string and writes it the Python way', () => {
    expect(renderArgumentsString('{"path":"/tmp/é","n":2.50}')).toBe('{"n": 2.5, "path": "/tmp/\\u00e9"}');
  });

  it('leaves an arguments string that is not valid JSON as written', () => {
    for (const raw of ['{"a": 1,}', 'not json', '', '{"a": 1} trailing', "{'a': 1}"])
      expect(renderArgumentsString(raw)).toBe(raw);
  });

  it('renders arguments nested too deeply to walk without throwing', () => {
    const deep = '['.repeat(200000) + ']'.repeat(200000);
    expect(() => renderArgumentsString(deep)).not.toThrow();
  });
});

describe('matchesNoteTemplate', () => {
  it('recognises the default note with any number', () => {
    for (const n of [0, 1, 12, 100000])
      expect(matchesNoteTemplate(formatNote(DEFAULT_NOTE_TEMPLATE, n), DEFAULT_NOTE_TEMPLATE)).toBe(true);
  });

  it('wants one or more ASCII digits where the placeholder stands', () => {
    const text = (n: string) =>
      `[${n} earlier messages were removed from this conversation to free up context and cannot be recovered.]`;
    for (const n of ['', 'a', '1a', '-1', '1.5', ' 1', '１２', '٣', '{num_removed}'])
      expect(matchesNoteTemplate(text(n), DEFAULT_NOTE_TEMPLATE)).toBe(false);
    expect(matchesNoteTemplate(text('007'), DEFAULT_NOTE_TEMPLATE)).toBe(true);
  });

  it('matches the whole text, not a part of it', () => {
    const note = formatNote(DEFAULT_NOTE_TEMPLATE, 3);
    expect(matchesNoteTemplate(` ${note}`, DEFAULT_NOTE_TEMPLATE)).toBe(false);
    expect(matchesNoteTemplate(`${note}\n`, DEFAULT_NOTE_TEMPLATE)).toBe(false);
    expect(matchesNoteTemplate(note.slice(0, -1), DEFAULT_NOTE_TEMPLATE)).toBe(false);
  });

  it('matches a template without the placeholder only exactly', () => {
    expect(matchesNoteTemplate('History was cut.', 'History was cut.')).toBe(true);
    expect(matchesNoteTemplate('History was cut!', 'History was cut.')).toBe(false);
  });

  it('never matches with an empty template', () => {
    expect(matchesNoteTemplate('', '')).toBe(false);
    expect(matchesNoteTemplate('anything', '')).toBe(false);
  });

  it('reads a template full of regular-expression metacharacters literally', () => {
    const template = '^(.*)+ [a-z]? \\d+ {num_removed} $& $1 | {x} {{num_removed}} $';
    expect(matchesNoteTemplate('^(.*)+ [a-z]? \\d+ 4 $& $1 | {x} {7} $', template)).toBe(true);
    expect(matchesNoteTemplate('anything at all', template)).toBe(false);
    expect(matchesNoteTemplate('^(.*)+ b \\d+ 4 $& $1 | {x} {7} $', template)).toBe(false);
    expect(matchesNoteTemplate('abc 3', 'a.c {num_removed}')).toBe(false);
    expect(matchesNoteTemplate('a.c 3', 'a.c {num_removed}')).toBe(true);
  });

  it('finds where the number ends when the text after the placeholder starts with a digit', () => {
    expect(matchesNoteTemplate('1200 gone', '{num_removed}0 gone')).toBe(true);
    expect(matchesNoteTemplate('10 gone', '{num_removed}0 gone')).toBe(true);
    expect(matchesNoteTemplate('0 gone', '{num_removed}0 gone')).toBe(false);
  });

  // Fails today (reported): with nothing between two placeholders the matcher gives the first one every digit and
  // never backtracks, so the tool's own note from such a template is not recognised on the next run.
  it('recognises a note from a template with two placeholders side by side', () => {
    expect(
      matchesNoteTemplate(formatNote('{num_removed}{num_removed} gone', 12), '{num_removed}{num_removed} gone'),
    ).toBe(true);
    expect(matchesNoteTemplate('1 gone', '{num_removed}{num_removed} gone')).toBe(false);
  });

  it('recognises a note written from any template with any number', () => {
    const template = fc.string({
      unit: fc.constantFrom(
        '{num_removed}',
        '{',
        '}',
        '$&',
        '$1',
        '.',
        '*',
        '(',
        ')',
        '\\',
        '0',
        '9',
        ' ',
        'a',
        'é',
        '😀',
      ),
      maxLength: 8,
    });
    fc.assert(
      fc.property(template, fc.nat(100000), (t, n) => {
        // Side-by-side placeholders have their own (failing) test above.
        fc.pre(t !== '' && !t.includes('{num_removed}{num_removed}'));
        expect(matchesNoteTemplate(formatNote(t, n), t)).toBe(true);
        // The placeholder takes only digits, so one more non-digit character can never be matched.
        expect(matchesNoteTemplate(`${formatNote(t, n)}x`, t)).toBe(false);
        expect(matchesNoteTemplate(`x${formatNote(t, n)}`, t)).toBe(false);
      }),
      { numRuns: scaled(1000) },
    );
  });

  it('agrees with an escaped regular expression on texts close to the template', () => {
    const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const unit = fc.constantFrom('{num_removed}', '{', '}', '$&', '.', '(', '0', '1', ' ', 'a');
    const digits = fc.stringMatching(/^[0-9]{0,3}$/);
    fc.assert(
      fc.property(
        fc.string({ unit, minLength: 1, maxLength: 6 }),
        fc.array(digits, { minLength: 8, maxLength: 8 }),
        fc.nat(3),
        (t, numbers, noise) => {
          fc.pre(!t.includes('{num_removed}{num_removed}'));
          const pieces = t.split('{num_removed}');
          let text = pieces.map((p, k) => (k === 0 ? p : `${numbers[k - 1] ?? ''}${p}`)).join('');
          if (noise === 0 && text.length > 0) text = text.slice(1);
          if (noise === 1) text += '0';
          const expected = new RegExp(`^${pieces.map(escape).join('[0-9]+')}$`).test(text);
          expect(matchesNoteTemplate(text, t)).toBe(expected);
        },
      ),
      { numRuns: scaled(2000) },
    );
  });
});

describe('isEarlierNoteText', () => {
  it('recognises the default note even when notes are off', () => {
    expect(isEarlierNoteText(formatNote(DEFAULT_NOTE_TEMPLATE, 9), null)).toBe(true);
    expect(isEarlierNoteText('Cut 9.', null)).toBe(false);
  });

  it('recognises notes of the active template and of the default one', () => {
    expect(isEarlierNoteText('Cut 9.', 'Cut {num_removed}.')).toBe(true);
    expect(isEarlierNoteText(formatNote(DEFAULT_NOTE_TEMPLATE, 9), 'Cut {num_removed}.')).toBe(true);
    expect(isEarlierNoteText('Cut nine.', 'Cut {num_removed}.')).toBe(false);
  });

  it('does not take an ordinary user message for a note', () => {
    expect(isEarlierNoteText('Please fix the failing test.', 'Cut {num_removed}.')).toBe(false);
    expect(isEarlierNoteText('', '')).toBe(false);
  });
});
