/**
 * Slim items and files read again: compacting with every bulk string left out of the parsed items, and with a
 * file's lines read back from disk instead of held, decides and writes exactly what compacting with everything
 * in memory does, on every fixture, every real transcript in fixtures/real and random conversations in five formats.
 * The real transcripts past BIG_FILE and a big file read again: test/e2e/slim.test.ts.
 */
import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { sourceFromBytes } from '../../src/io/lines.js';
import { SLIMMED, slimItem } from '../../src/io/slim.js';
import { decodeSource } from '../../src/io/source.js';
import { compactSource, type FileOptions } from '../../src/pipeline/index.js';
import { isBig, ROOT, REAL_DATA } from '../helpers/cli.js';
import { FORMAT_NAMES, randomConversation, writeAs } from '../helpers/convert.js';
import { compare, compareChains, counter, filesUnder, outcome, slimmed } from '../helpers/slim-compare.js';
import { scaled } from '../helpers/scale.js';

describe('slim items', () => {
  it('replace long strings under bulk keys only, keeping whitespace and the texts named to keep whole', () => {
    const long = `Please look at this. ${'x'.repeat(400)}`;
    const telling = `  <command-name>/model</command-name> ${'x'.repeat(400)}`;
    const blank = ' \n'.repeat(300);
    const item = {
      role: 'user',
      id: 'y'.repeat(400),
      content: [
        { type: 'text', text: long },
        { type: 'text', text: 'short' },
        { type: 'text', text: telling },
        { type: 'text', text: blank },
      ],
      nested: { output: long, name: long },
      lines: [long, 7, { text: long }],
      data: telling,
    };
    const slim = slimItem(structuredClone(item), {
      longerThan: 256,
      keep: (t) => t.trimStart().startsWith('<command-name>'),
    }) as typeof item;
    expect(slim.content.map((part) => part.text)).toEqual([SLIMMED, 'short', telling, blank]);
    expect(slim.id).toBe(item.id);
    expect(slim.nested).toEqual({ output: SLIMMED, name: long });
    expect(slim.lines).toEqual([SLIMMED, 7, { text: SLIMMED }]);
    expect(slim.data).toBe(telling);
    expect(slim.role).toBe('user');
  });

  it('walk values nested far deeper than the call stack goes', () => {
    let deep: unknown = { content: 'z'.repeat(300) };
    for (let i = 0; i < 200_000; i++) deep = [deep];
    slimItem(deep, { longerThan: 0, keep: () => false });
    let inner = deep;
    while (Array.isArray(inner)) inner = inner[0];
    expect((inner as { content: string }).content).toBe(SLIMMED);
  });
});

describe('compacting with slim items decides and writes what compacting with whole items does', () => {
  // The real transcripts are compared on their own below, so the hand-written fixtures leave them out.
  const fixtures = filesUnder(path.join(ROOT, 'fixtures')).filter((f) => !f.startsWith(REAL_DATA + path.sep));
  // The transcripts past BIG_FILE are compared in test/e2e/slim.test.ts.
  const real = filesUnder(REAL_DATA).filter((f) => !isBig(f));

  it('finds the transcripts to compare', () => {
    expect(fixtures.length).toBeGreaterThan(30);
    expect(real.length).toBeGreaterThan(20);
  });

  it.each(fixtures.map((f) => [path.relative(ROOT, f)]))('%s', async (name) => {
    await compare(name, readFileSync(path.join(ROOT, name)));
    await compareChains(name, readFileSync(path.join(ROOT, name)));
  });

  it.each(real.map((f) => [path.relative(REAL_DATA, f)]))('real/%s', async (name) => {
    await compare(name, readFileSync(path.join(REAL_DATA, name)));
    await compareChains(name, readFileSync(path.join(REAL_DATA, name)));
  });

  it('really slims items in every format directory of fixtures/real (so the comparisons compare something)', async () => {
    const dirs = readdirSync(REAL_DATA, { withFileTypes: true }).filter((d) => d.isDirectory());
    for (const dir of dirs) {
      const files = filesUnder(path.join(REAL_DATA, dir.name));
      let any = false;
      for (const f of files) {
        any = await slimmed(() =>
          compactSource(sourceFromBytes(readFileSync(f), path.basename(f)), { target: 1, counter, slimLongerThan: 0 }),
        );
        if (any) break;
      }
      expect({ dir: dir.name, slimmed: any }).toEqual({ dir: dir.name, slimmed: true });
    }
  });

  it.each(FORMAT_NAMES.map((f) => [f]))('random %s conversations, JSON and JSONL', async (format) => {
    for (let seed = 1; seed <= scaled(60); seed++) {
      const conversation = randomConversation(seed);
      for (const jsonl of [false, true]) {
        const written = writeAs(format, conversation, { jsonl });
        const bytes = Buffer.from(written.text);
        for (const target of [1, 60, 400, 1e9]) {
          const options: FileOptions = { target, counter, minKeepSteps: seed % 3 };
          const slim = await outcome(
            async () => await compactSource(sourceFromBytes(bytes, written.name), { ...options, slimLongerThan: 0 }),
          );
          const full = await outcome(
            async () =>
              await compactSource(decodeSource(bytes, written.name), { ...options, slimLongerThan: Infinity }),
          );
          expect({ seed, jsonl, target, ...(slim as object) }).toEqual({ seed, jsonl, target, ...(full as object) });
        }
      }
    }
  });
});
