/**
 * Sketches: what pruning and offloading read of a long tool result in a file read slim, instead of its text. Every
 * question a sketch answers must be answered as the whole text answers it, and the questions the strategies ask of
 * ordinary results must be answered (or the sketches would save nothing). Compared here with the texts themselves;
 * the lazy-chains and differential tests compare whole decisions.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { codePointLength as codePoints } from '../../src/core/code-points.js';
import { DEFAULT_PLACEHOLDER, fillPlaceholder, isPlaceholderSketch, isPlaceholderText } from '../../src/core/prune.js';
import { contentOf, renderMessage } from '../../src/core/render.js';
import { endsWith, letterEnd, longerThanCodePoints, renderedLetterEnd, startsWith } from '../../src/core/sketch.js';
import type { TextSketch } from '../../src/core/types.js';
import { isSketchedRecord } from '../../src/formats/registry.js';
import { openai } from '../../src/formats/openai.js';
import { readLayout } from '../../src/io/layout.js';
import { sourceFromBytes } from '../../src/io/lines.js';
import { sketchOf, slimItem, SLIMMED } from '../../src/io/slim.js';
import { normalizeSlot } from '../../src/pipeline/index.js';
import { tailNewlineCost } from '../../src/tokens/bpe.js';
import { createCounter } from '../../src/tokens/index.js';
import { scaled, scaledCount } from '../helpers/scale.js';

const o200k = await createCounter('o200k_base');
const count = (text: string): number => o200k.measure([{ text, images: 0, files: 0 }]);

/** Characters that make ends interesting: letters, digits, marks, punctuation, spaces, astral letters and emoji. */
const piece = fc.constantFrom(
  'a',
  'Z',
  '7',
  'é',
  'e\u0301',
  '\u0301',
  'ß',
  '中',
  '𝒳',
  '😀',
  '.',
  '"}',
  ')',
  ']',
  ' ',
  '\n',
  '\t',
  '\r',
  '!',
  '`',
  '-',
  '--',
  '٣',
  'ـ',
  '\u200d',
);
const text = fc.array(piece, { minLength: 0, maxLength: 90 }).map((parts) => parts.join(''));

/** A text's sketch as the slim reading makes it (a tool message's content); one left whole is its own, as adapters give it. */
function sketchOfText(value: string): TextSketch {
  const item = { role: 'tool', tool_call_id: 'c1', content: value };
  slimItem(item, { longerThan: 0, keep: () => false, sketch: isSketchedRecord });
  return sketchOf(item, 'content') ?? { length: value.length, head: value, tail: '' };
}

describe('a text sketched', () => {
  it('keeps its length and ends, and replaces the text', () => {
    fc.assert(
      fc.property(
        text.filter((t) => t.trim() !== ''),
        (value) => {
          const item = { role: 'tool', content: value };
          slimItem(item, { longerThan: 0, keep: () => false, sketch: isSketchedRecord });
          expect(item.content).toBe(SLIMMED);
          const sketch = sketchOf(item, 'content') as TextSketch;
          expect(sketch.length).toBe(value.length);
          expect(value.startsWith(sketch.head)).toBe(true);
          expect(value.endsWith(sketch.tail)).toBe(true);
          expect(sketch.head.length + sketch.tail.length).toBeLessThanOrEqual(value.length);
          // Never half a surrogate pair at the cut.
          expect(/[\ud800-\udbff]$/.test(sketch.head)).toBe(false);
          expect(/^[\udc00-\udfff]/.test(sketch.tail)).toBe(false);
          // Invisible to anything that reads keys or JSON.
          expect(Object.keys(item)).toEqual(['role', 'content']);
          expect(JSON.stringify(item)).toBe(JSON.stringify({ role: 'tool', content: SLIMMED }));
        },
      ),
      { numRuns: scaled(300) },
    );
  });

  it('is made only for the objects a format sketches', () => {
    const user = { role: 'user', content: 'x'.repeat(100) };
    slimItem(user, { longerThan: 64, keep: () => false, sketch: isSketchedRecord });
    expect(user.content).toBe(SLIMMED);
    expect(sketchOf(user, 'content')).toBeUndefined();
    const tool = { role: 'tool', content: 'y'.repeat(100) };
    slimItem(tool, { longerThan: 64, keep: () => false });
    expect(sketchOf(tool, 'content')).toBeUndefined();
  });
});

describe('questions asked of a sketch', () => {
  it('are answered as of the whole text, or not at all', () => {
    let answered = 0;
    let asked = 0;
    fc.assert(
      fc.property(text, text, fc.integer({ min: 0, max: 120 }), (value, affix, over) => {
        const long = `${value}${'word '.repeat(20)}${value}`;
        const sketch = sketchOfText(long);
        for (const [question, exact] of [
          [startsWith(sketch, affix), long.startsWith(affix)],
          [startsWith(sketch, long.slice(0, affix.length)), long.startsWith(long.slice(0, affix.length))],
          [endsWith(sketch, affix), long.endsWith(affix)],
          [endsWith(sketch, long.slice(long.length - affix.length)), true],
          [longerThanCodePoints(sketch, over, codePoints), codePoints(long) > over],
        ] as const) {
          asked++;
          if (question === undefined) continue;
          answered++;
          expect(question).toBe(exact);
        }
      }),
      { numRuns: scaled(400) },
    );
    // Most questions of ordinary texts are answered (else the sketches would save no reading).
    expect(answered / asked).toBeGreaterThan(0.8);
  });

  it('tells a placeholder as isPlaceholderText does, for the default and for custom templates', () => {
    const long = '[This tool result was removed by an earlier compaction; call the tool again for it.]';
    const templates = [
      DEFAULT_PLACEHOLDER,
      '[pruned {tool_name}]',
      '{tool_name}',
      'pruned',
      long,
      'x{tool_name}y{tool_name}z',
      '',
    ];
    let answered = 0;
    fc.assert(
      fc.property(
        text,
        fc.constantFrom(...templates),
        fc.constantFrom('run', 'bash', 'a'.repeat(40), ''),
        fc.constantFrom('filled', 'ends', 'other'),
        (value, template, tool, kind) => {
          // A placeholder, a text with only its two ends (and nothing of its middle), or any text.
          const [first, ...more] = template.split('{tool_name}');
          const candidate =
            kind === 'filled'
              ? fillPlaceholder(template, `${tool}${value}`)
              : kind === 'ends'
                ? `${first}${value}${'log line '.repeat(10)}${more.pop() ?? ''}`
                : `${value}${'log line '.repeat(10)}`;
          const sketch = sketchOfText(candidate);
          const verdict = isPlaceholderSketch(sketch, template);
          if (verdict !== undefined) {
            answered++;
            expect(verdict).toBe(isPlaceholderText(candidate, template));
          }
        },
      ),
      { numRuns: scaled(500) },
    );
    expect(answered).toBeGreaterThan(scaledCount(250, 500));
  });

  it("gives the end of a text from its last letter or digit, whose joining newline costs what the whole text's does", () => {
    let ends = 0;
    fc.assert(
      fc.property(text, fc.integer({ min: 0, max: 40 }), (value, cut) => {
        const end = letterEnd(value);
        // Any end of the text that holds the answer gives it; a shorter one gives null.
        const shorter = value.slice(Math.min(cut, value.length));
        const fromShorter = letterEnd(shorter);
        if (fromShorter !== null) expect(fromShorter).toBe(end);
        if (end === null) return;
        ends++;
        expect(value.endsWith(end)).toBe(true);
        expect(tailNewlineCost(end, count)).toBe(tailNewlineCost(value, count));
        expect(tailNewlineCost(end, count)).toBe(count(`${value}\n`) - count(value));
      }),
      { numRuns: scaled(600) },
    );
    expect(ends).toBeGreaterThan(scaledCount(300, 600));
  });
});

describe('an OpenAI tool message read slim', () => {
  it('sketches its result as its content gives it, and the end of its rendered text', () => {
    fc.assert(
      fc.property(fc.array(text, { minLength: 1, maxLength: 6 }), (texts) => {
        const lines = texts.flatMap((t, k) => [
          JSON.stringify({
            role: 'assistant',
            content: null,
            tool_calls: [{ id: `c${k}`, type: 'function', function: { name: `tool${k}`, arguments: '{}' } }],
          }),
          JSON.stringify({
            role: 'tool',
            tool_call_id: `c${k}`,
            content: `${t}${k % 2 === 0 ? 'output '.repeat(12) : ''}${t}`,
          }),
        ]);
        const source = sourceFromBytes(Buffer.from(`${lines.join('\n')}\n`), 'log.jsonl');
        const layout = readLayout(source, undefined, {
          slimming: { longerThan: 64, keep: () => false, sketch: isSketchedRecord },
        });
        const slot = layout.slots[0];
        if (slot === undefined) throw new Error('no slot');
        const { messages } = normalizeSlot(source, slot, openai, null);
        for (const message of messages) {
          const sketched = message.sketch?.();
          if (message.role !== 'tool') {
            expect(sketched).toBeUndefined();
            continue;
          }
          if (sketched === undefined) throw new Error('a tool message gave no sketch');
          const results = contentOf(message).results;
          expect(sketched.map((r) => [r.name, r.error, r.images, r.files, r.text.length])).toEqual(
            results.map((r) => [r.name, r.error, r.images, r.files, r.text.length]),
          );
          sketched.forEach((r, k) => {
            const whole = (results[k] as { text: string }).text;
            expect(whole.startsWith(r.text.head) && whole.endsWith(r.text.tail)).toBe(true);
          });
          const end = renderedLetterEnd(sketched);
          if (end !== null) expect(end).toBe(letterEnd(renderMessage(message).text));
        }
      }),
      { numRuns: scaled(150) },
    );
  });
});
