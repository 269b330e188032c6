/**
 * Slim items and files read again: compacting with every bulk string left out of the parsed items, and with a
 * file's lines read back from disk instead of held, decides and writes exactly what compacting with everything
 * in memory does, on every fixture, every real transcript in fixtures/real and random conversations in five formats.
 */
import { describe, expect, it } from '@jest/globals';
import { appendFileSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { isLineSource, readSourceFile, sourceFromBytes } from '../../src/io/lines.js';
import { SLIMMED, slimItem } from '../../src/io/slim.js';
import { decodeSource, type SourceText } from '../../src/io/source.js';
import { compactSource, type FileOptions, type FileResult } from '../../src/pipeline/index.js';
import { createApproxCounter } from '../../src/tokens/approx.js';
import { createCounter } from '../../src/tokens/index.js';
import { ROOT, REAL_DATA, tempDir } from '../helpers/cli.js';
import { FORMAT_NAMES, randomConversation, writeAs } from '../helpers/convert.js';

const counter = createApproxCounter();
const o200k = await createCounter('o200k_base');

/** Every transcript-like file under a directory. */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(full));
    else if (/\.(json|jsonl)$/.test(entry.name)) out.push(full);
  }
  return out.sort();
}

/** What a compaction decided and wrote, or the error it stopped with. */
function outcome(run: () => FileResult): unknown {
  let result: FileResult;
  try {
    result = run();
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
  return {
    changed: result.changed,
    output: result.output,
    plans: result.conversations.map((c) => c.plan),
    formats: result.format,
  };
}

/** Whether some item of a result holds a stand-in (so a comparison really compared slim items). */
function slimmed(run: () => FileResult): boolean {
  try {
    return run().conversations.some((c) =>
      c.slot.items.some((item) => JSON.stringify(item).includes(JSON.stringify(SLIMMED).slice(1, -1))),
    );
  } catch {
    return false;
  }
}

/** A note template longer than any string kept whole, so earlier notes must be recognised by the keep rule. */
const LONG_NOTE = `${'Earlier history was summarised away. '.repeat(9)}{num_removed} messages went.`;

const TARGETS = [1, 300, 3000, 30_000, 1e9];

function compare(file: string, bytes: Buffer): void {
  const make = (): SourceText => sourceFromBytes(bytes, path.basename(file));
  for (const target of TARGETS) {
    for (const note of [undefined, LONG_NOTE]) {
      const options: FileOptions = { target, note, counter, exhaustive: target === 3000 };
      const slim = outcome(() => compactSource(make(), { ...options, slimLongerThan: 0 }));
      const full = outcome(() => compactSource(make(), { ...options, slimLongerThan: Infinity }));
      expect({ file, target, note, ...(slim as object) }).toEqual({ file, target, note, ...(full as object) });
      // Compacting the result again recognises the note it wrote either way.
      const first = full as { output?: string; changed?: boolean };
      if (first.changed === true && typeof first.output === 'string') {
        const again = Buffer.from(first.output);
        const slimAgain = outcome(() =>
          compactSource(sourceFromBytes(again, path.basename(file)), { ...options, slimLongerThan: 0 }),
        );
        const fullAgain = outcome(() =>
          compactSource(sourceFromBytes(again, path.basename(file)), { ...options, slimLongerThan: Infinity }),
        );
        expect({ file, target, note, again: true, ...(slimAgain as object) }).toEqual({
          file,
          target,
          note,
          again: true,
          ...(fullAgain as object),
        });
      }
    }
  }
}

/**
 * Pruning and offloading read slim files' tool results by their sketches (src/core/sketch.ts): the same chains with
 * whole items (no sketches, every text read) must decide and write the same, with a BPE counter (whose pruning bound
 * reads each result's end) and the approximate one.
 */
function compareChains(file: string, bytes: Buffer): void {
  const make = (): SourceText => sourceFromBytes(bytes, path.basename(file));
  for (const [strategies, target, count] of [
    [['prune', 'window'], 300, o200k],
    [['prune', 'window'], 3000, o200k],
    [['offload', 'window'], 300, counter],
    [['prune', 'offload', 'window'], 3000, o200k],
  ] as const) {
    const options: FileOptions = {
      target,
      counter: count,
      strategies,
      minTokens: 20,
      offload: { dir: '/tmp/swc-slim-store', over: 200 },
    };
    const run = (slimLongerThan: number): unknown => {
      try {
        const result = compactSource(make(), { ...options, slimLongerThan });
        return {
          ...(outcome(() => result) as object),
          stored: result.stored,
          pruned: result.conversations.map((c) => c.pruned),
          offloaded: result.conversations.map((c) => c.offloaded),
        };
      } catch (error) {
        return { error: error instanceof Error ? error.message : String(error) };
      }
    };
    expect({ file, strategies, target, ...(run(64) as object) }).toEqual({
      file,
      strategies,
      target,
      ...(run(Infinity) as object),
    });
  }
}

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
  const real = filesUnder(REAL_DATA);

  it('finds the transcripts to compare', () => {
    expect(fixtures.length).toBeGreaterThan(30);
    expect(real.length).toBeGreaterThan(20);
  });

  it.each(fixtures.map((f) => [path.relative(ROOT, f)]))('%s', (name) => {
    compare(name, readFileSync(path.join(ROOT, name)));
    compareChains(name, readFileSync(path.join(ROOT, name)));
  });

  it.each(real.map((f) => [path.relative(REAL_DATA, f)]))('real/%s', (name) => {
    compare(name, readFileSync(path.join(REAL_DATA, name)));
    compareChains(name, readFileSync(path.join(REAL_DATA, name)));
  });

  it('really slims items in every format directory of fixtures/real (so the comparisons compare something)', () => {
    const dirs = readdirSync(REAL_DATA, { withFileTypes: true }).filter((d) => d.isDirectory());
    for (const dir of dirs) {
      const files = filesUnder(path.join(REAL_DATA, dir.name));
      const any = files.some((f) =>
        slimmed(() =>
          compactSource(sourceFromBytes(readFileSync(f), path.basename(f)), { target: 1, counter, slimLongerThan: 0 }),
        ),
      );
      expect({ dir: dir.name, slimmed: any }).toEqual({ dir: dir.name, slimmed: true });
    }
  });

  it.each(FORMAT_NAMES.map((f) => [f]))('random %s conversations, JSON and JSONL', (format) => {
    for (let seed = 1; seed <= 60; seed++) {
      const conversation = randomConversation(seed);
      for (const jsonl of [false, true]) {
        const written = writeAs(format, conversation, { jsonl });
        const bytes = Buffer.from(written.text);
        for (const target of [1, 60, 400, 1e9]) {
          const options: FileOptions = { target, counter, minKeepSteps: seed % 3 };
          const slim = outcome(() =>
            compactSource(sourceFromBytes(bytes, written.name), { ...options, slimLongerThan: 0 }),
          );
          const full = outcome(() =>
            compactSource(decodeSource(bytes, written.name), { ...options, slimLongerThan: Infinity }),
          );
          expect({ seed, jsonl, target, ...(slim as object) }).toEqual({ seed, jsonl, target, ...(full as object) });
        }
      }
    }
  });
});

describe('a big JSONL file read again from disk', () => {
  /** Lines of multi-byte text long enough that reads back cross many 1 MiB windows. */
  function bigJsonl(): string {
    const lines = [JSON.stringify({ role: 'system', content: 'You are careful. \ufeff' })];
    for (let i = 0; i < 120; i++) {
      lines.push(JSON.stringify({ role: 'user', content: `${'Grüße 你好 😀 '.repeat(1500 + i)} ${i}` }));
      lines.push(JSON.stringify({ role: 'assistant', content: `answer ${i} ${'é'.repeat(20_000 + i)}` }));
    }
    // One line longer than the window lines are read again through, read back and forth.
    lines.splice(120, 0, JSON.stringify({ role: 'user', content: `${'long line '.repeat(500_000)}end` }));
    return `${lines.join('\r\n')}\r\n`;
  }

  it('compacts to the same bytes as the file held in memory, changed or not', () => {
    const dir = tempDir();
    const file = path.join(dir, 'big.jsonl');
    const text = bigJsonl();
    writeFileSync(file, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]));
    expect(statSync(file).size).toBeGreaterThan(5 << 20);
    for (const target of [1, 50_000, 400_000, 1e9]) {
      const again = readSourceFile(file, 'big.jsonl', 0);
      const held = readSourceFile(file, 'big.jsonl');
      expect(isLineSource(again)).toBe(true);
      const options: FileOptions = { target, counter };
      expect({ target, ...(outcome(() => compactSource(again, options)) as object) }).toEqual({
        target,
        ...(outcome(() => compactSource(held, options)) as object),
      });
    }
  });

  it('refuses, writing nothing, when the file changed between reading and reading again', () => {
    const dir = tempDir();
    const file = path.join(dir, 'big.jsonl');
    writeFileSync(file, bigJsonl());
    const source = readSourceFile(file, 'big.jsonl', 0);
    appendFileSync(file, `${JSON.stringify({ role: 'user', content: 'sneaked in' })}\n`);
    expect(() => compactSource(source, { target: 1000, counter })).toThrow(
      'big.jsonl: the file changed while it was being compacted (its size, times or inode differ); nothing was written for it',
    );
  });
});
