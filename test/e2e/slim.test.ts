/**
 * Slim items and files read again, on big files: the real transcripts past BIG_FILE, and a JSONL file of several MB
 * read back from disk (the rest: test/io/slim.test.ts).
 */
import { describe, expect, it } from '@jest/globals';
import { appendFileSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { isLineSource, readSourceFile } from '../../src/io/lines.js';
import { compactSource, type FileOptions } from '../../src/pipeline/index.js';
import { isBig, REAL_DATA, tempDir } from '../helpers/cli.js';
import { compare, compareChains, counter, filesUnder, outcome } from '../helpers/slim-compare.js';

describe('compacting with slim items decides and writes what compacting with whole items does', () => {
  const real = filesUnder(REAL_DATA).filter(isBig);

  it('finds the big transcripts to compare', () => {
    expect(real.length).toBeGreaterThan(0);
  });

  it.each(real.map((f) => [path.relative(REAL_DATA, f)]))('real/%s', async (name) => {
    await compare(name, readFileSync(path.join(REAL_DATA, name)));
    await compareChains(name, readFileSync(path.join(REAL_DATA, name)));
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

  it('compacts to the same bytes as the file held in memory, changed or not', async () => {
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
      expect({ target, ...((await outcome(async () => await compactSource(again, options))) as object) }).toEqual({
        target,
        ...((await outcome(async () => await compactSource(held, options))) as object),
      });
    }
  });

  it('refuses, writing nothing, when the file changed between reading and reading again', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'big.jsonl');
    writeFileSync(file, bigJsonl());
    const source = readSourceFile(file, 'big.jsonl', 0);
    appendFileSync(file, `${JSON.stringify({ role: 'user', content: 'sneaked in' })}\n`);
    await expect(compactSource(source, { target: 1000, counter })).rejects.toThrow(
      'big.jsonl: the file changed while it was being compacted (its size, times or inode differ); nothing was written for it',
    );
  });
});
