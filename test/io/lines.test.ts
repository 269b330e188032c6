/**
 * Reading JSONL line by line: the same text, byte-order mark, line endings and errors as decoding the whole file,
 * and the same layout and output, without ever building the whole text.
 */
import { describe, expect, it, jest } from '@jest/globals';
import fc from 'fast-check';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readLayout, rebuild, type Slot } from '../../src/io/layout.js';
import { isLineSource, positionOf, readSourceFile, sourceFromBytes, type LineSource } from '../../src/io/lines.js';
import { decodeSource, lineColumn, type SourceText } from '../../src/io/source.js';
import { compactSource, outputBytes } from '../../src/pipeline/index.js';
import { createApproxCounter } from '../../src/tokens/approx.js';
import { tempDir } from '../helpers/cli.js';
import { scaled } from '../helpers/scale.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SAMPLE = path.join(ROOT, 'fixtures/sample.jsonl');

const bytes = (text: string): Buffer => Buffer.from(text, 'utf8');
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

function tempFile(name: string, content: Uint8Array): string {
  const file = path.join(tempDir(), name);
  writeFileSync(file, content);
  return file;
}

/** What decoding the whole file gives, to compare a line source with. */
function whole(source: SourceText): { text: string; bom: boolean; eol: string } {
  return { text: source.text, bom: source.bom, eol: source.eol };
}

/** Text as UTF-32, little- or big-endian (Node has no UTF-32 encoder). */
function utf32(text: string, order: 'le' | 'be'): Buffer {
  const points = [...text].map((c) => c.codePointAt(0) as number);
  const out = Buffer.alloc(points.length * 4);
  points.forEach((p, i) => (order === 'le' ? out.writeUInt32LE(p, i * 4) : out.writeUInt32BE(p, i * 4)));
  return out;
}

/** The error a function throws, as its message. */
function errorOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  return 'no error';
}

/** A copy of a line source whose whole text must never be built. */
function withoutText(source: LineSource): LineSource {
  return {
    file: source.file,
    heldAs: 'lines',
    bom: source.bom,
    eol: source.eol,
    lines: source.lines,
    length: source.length,
    finalNewline: source.finalNewline,
    bytes: () => source.bytes(),
    get text(): string {
      throw new Error('the whole text was built');
    },
  };
}

const line = (role: string, content: string): string => JSON.stringify({ role, content });

describe('a JSONL file read as lines', () => {
  const cases: Array<[string, Buffer]> = [
    ['a final newline', bytes(`${line('user', 'a')}\n${line('assistant', 'b')}\n`)],
    ['no final newline', bytes(`${line('user', 'a')}\n${line('assistant', 'b')}`)],
    ['CRLF line endings', bytes(`${line('user', 'a')}\r\n${line('assistant', 'b')}\r\n`)],
    ['blank and whitespace lines between items', bytes(`\n${line('user', 'a')}\n   \n\n${line('assistant', 'b')}\n\n`)],
    ['a byte-order mark', Buffer.concat([BOM, bytes(`${line('user', 'a')}\n${line('assistant', 'ü 😀')}\n`)])],
    [
      'non-ASCII text and a second byte-order mark inside',
      bytes(`${line('user', '你好 \ufeff')}\n${line('assistant', 'Привет')}\n`),
    ],
    ['an empty first line before CRLF lines', bytes(`\n${line('user', 'a')}\r\n${line('assistant', 'b')}\r\n`)],
  ];

  it.each(cases)(
    'has the same text, byte-order mark and line ending as the whole decoded file (%s)',
    (_name, content) => {
      const source = sourceFromBytes(content, 'chat.jsonl');
      expect(isLineSource(source)).toBe(true);
      expect(whole(source)).toEqual(whole(decodeSource(content, 'chat.jsonl')));
      expect((source as LineSource).length).toBe(source.text.length);
    },
  );

  it.each(cases)('lays out the same items, raws and offsets as the whole decoded file (%s)', (_name, content) => {
    const fromLines = readLayout(withoutText(sourceFromBytes(content, 'chat.jsonl') as LineSource));
    const fromText = readLayout(decodeSource(content, 'chat.jsonl'));
    const shape = (slot: Slot): unknown => ({
      items: slot.items,
      raws: slot.raws,
      offsets: slot.offsets,
      region: slot.region,
    });
    expect(fromLines.slots.map(shape)).toEqual(fromText.slots.map(shape));
    const [a] = fromLines.slots as Slot[];
    const [b] = fromText.slots as Slot[];
    expect(a?.write(a.raws.slice(1))).toBe(b?.write(b.raws.slice(1)));
  });

  it('reads a file in 1 MiB pieces whose lines and multi-byte characters straddle the pieces', () => {
    const lines: string[] = [];
    for (let i = 0; i < 40; i++)
      lines.push(line(i % 2 === 0 ? 'user' : 'assistant', `${'😀é你'.repeat(9000 + i * 17)} ${i}`));
    // One line longer than a piece as well.
    lines.push(line('user', 'x'.repeat(2_500_000)));
    const content = Buffer.concat([BOM, bytes(`${lines.join('\r\n')}\r\n`)]);
    const file = tempFile('big.jsonl', content);
    const source = readSourceFile(file, 'big.jsonl');
    expect(isLineSource(source)).toBe(true);
    expect(whole(source)).toEqual(whole(decodeSource(content, 'big.jsonl')));
  });

  it('recognises JSONL without a .jsonl extension from its first lines, and leaves JSON whole', () => {
    const jsonl = bytes(`  \n${line('user', 'a')}\n${line('assistant', 'b')}\n`);
    expect(isLineSource(readSourceFile(tempFile('session', jsonl), 'session'))).toBe(true);
    expect(isLineSource(sourceFromBytes(jsonl, '<stdin>'))).toBe(true);
    const json = bytes(`[\n  ${line('user', 'a')},\n  ${line('assistant', 'b')}\n]\n`);
    expect(isLineSource(readSourceFile(tempFile('session', json), 'session'))).toBe(false);
    expect(isLineSource(readSourceFile(tempFile('chat.json', jsonl), 'chat.json'))).toBe(false);
    // One value only: JSON, as detectFraming says.
    expect(isLineSource(sourceFromBytes(bytes(`${line('user', 'a')}\n`), '<stdin>'))).toBe(false);
  });

  const refused: Array<[string, Buffer]> = [
    ['an empty file', Buffer.alloc(0)],
    ['only a byte-order mark', BOM],
    ['only whitespace', bytes(' \n\t\r\n \n')],
    ['a NUL byte', bytes(`${line('user', 'a')}\n{"role":"user","content":"b\u0000"}\n`)],
    [
      'invalid UTF-8',
      Buffer.concat([
        bytes(`${line('user', 'a')}\n{"role":"user","content":"`),
        Buffer.from([0xc3, 0x28]),
        bytes('"}\n'),
      ]),
    ],
    [
      'a UTF-16 byte-order mark',
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(`${line('user', 'a')}\n`, 'utf16le')]),
    ],
    ['a UTF-32 LE byte-order mark', utf32(`\ufeff${line('user', 'a')}\n`, 'le')],
    ['a UTF-32 BE byte-order mark', utf32(`\ufeff${line('user', 'a')}\n`, 'be')],
  ];

  it.each([
    ['le', 'UTF-32 LE'],
    ['be', 'UTF-32 BE'],
  ] as const)('names UTF-32 %s with its byte-order mark as UTF-32, not UTF-16', (order, name) => {
    const content = utf32(`\ufeff${line('user', 'a')}\n`, order);
    expect(errorOf(() => decodeSource(content, 'chat.jsonl'))).toBe(
      `chat.jsonl: the file is ${name} (it starts with a ${name} byte-order mark); convert it to UTF-8 first`,
    );
  });

  it.each(refused)('refuses %s with the same error as decoding the whole file', (_name, content) => {
    const expected = errorOf(() => decodeSource(content, 'chat.jsonl'));
    expect(expected).not.toBe('no error');
    expect(errorOf(() => sourceFromBytes(content, 'chat.jsonl'))).toBe(expected);
    expect(errorOf(() => readSourceFile(tempFile('chat.jsonl', content), 'chat.jsonl'))).toBe(expected);
  });

  it('says why a file cannot be read, as the command line words it', () => {
    const dir = tempDir();
    expect(errorOf(() => readSourceFile(path.join(dir, 'missing.jsonl'), 'missing.jsonl'))).toBe(
      'missing.jsonl: cannot read: no such file',
    );
    expect(errorOf(() => readSourceFile(dir, 'dir.jsonl'))).toBe('dir.jsonl: cannot read: is a directory');
  });

  it('reports a line that is not JSON with the same message, line and column, without building the text', () => {
    const content = bytes(`${line('user', 'a')}\n\n{"role": "assistant", "content": tru}\n`);
    const expected = errorOf(() => readLayout(decodeSource(content, 'chat.jsonl')));
    expect(expected).toMatch(/^chat\.jsonl:3:\d+: line 3 is not valid JSON/);
    expect(errorOf(() => readLayout(withoutText(sourceFromBytes(content, 'chat.jsonl') as LineSource)))).toBe(expected);
  });

  it('names each record line by its number in the file, blank lines counted, held or read again', () => {
    const record = (n: number): string => JSON.stringify({ id: n, messages: [{ role: 'user', content: `q${n}` }] });
    const content = bytes(`${record(1)}\n\n  \n${record(2)}\n${record(3)}\n`);
    const file = tempFile('records.jsonl', content);
    for (const source of [decodeSource(content, 'records.jsonl'), readSourceFile(file, 'records.jsonl', 0, 64)]) {
      const layout = readLayout(source);
      expect(layout.slots.map((slot) => slot.where)).toEqual([
        'line 1 "messages"',
        'line 4 "messages"',
        'line 5 "messages"',
      ]);
      expect(layout.slots.map((slot) => slot.raws[0])).toEqual([
        '{"role":"user","content":"q1"}',
        '{"role":"user","content":"q2"}',
        '{"role":"user","content":"q3"}',
      ]);
    }
  });

  it('finds the line and column of an offset in its lines', () => {
    const content = bytes(`${line('user', 'a😀b')}\r\n\n${line('assistant', 'ü')}`);
    const source = sourceFromBytes(content, 'chat.jsonl');
    for (const offset of [0, 5, 20, 27, 28, 29, 30, 31, 40, source.text.length]) {
      expect(positionOf(withoutText(source as LineSource), offset)).toEqual(lineColumn(source.text, offset));
    }
  });

  it('compacts to the same output without building the whole text, changed or not', async () => {
    const content = readFileSync(SAMPLE);
    const counter = createApproxCounter();
    for (const target of [2000, 1_000_000]) {
      const options = { target, counter };
      const fromLines = await compactSource(
        withoutText(sourceFromBytes(content, 'sample.jsonl') as LineSource),
        options,
      );
      const fromText = await compactSource(decodeSource(content, 'sample.jsonl'), options);
      expect(fromLines.changed).toBe(target === 2000);
      expect(fromLines.changed).toBe(fromText.changed);
      if (fromLines.changed) expect(fromLines.output).toBe(fromText.output);
      else expect(() => fromLines.output).toThrow('the whole text was built');
      expect(fromLines.conversations.map((c) => c.plan)).toEqual(fromText.conversations.map((c) => c.plan));
    }
  });

  it('writes an unchanged file as the bytes it was read from, held or read again, without building its text', async () => {
    const sample = readFileSync(SAMPLE);
    const content = Buffer.concat([BOM, sample.subarray(0, sample.lastIndexOf(0x0a, 20_000)), bytes('\r\n')]);
    const file = tempFile('same.jsonl', content);
    for (const holdUpTo of [Infinity, 0]) {
      const source = withoutText(readSourceFile(file, 'same.jsonl', holdUpTo) as LineSource);
      const result = await compactSource(source, { target: 1_000_000_000, counter: createApproxCounter() });
      expect(result.changed).toBe(false);
      expect(Buffer.compare(outputBytes(result), content)).toBe(0);
    }
  });

  it('rebuilds a whole-file slot from its replacement alone', () => {
    const source = withoutText(sourceFromBytes(readFileSync(SAMPLE), 'sample.jsonl') as LineSource);
    const layout = readLayout(source);
    const slot = layout.slots[0] as Slot;
    expect(rebuild(layout, new Map([[slot, 'replacement']]))).toBe('replacement');
  });
});

describe('a big JSONL file, read once while its lines are parsed', () => {
  /** Read as a file too big to hold (its lines read again later), in small blocks so lines straddle them. */
  const readBig = (file: string, name: string, block = 4096): SourceText => readSourceFile(file, name, 0, block);
  const shape = (slot: Slot): unknown => ({
    items: slot.items,
    raws: slot.raws,
    offsets: slot.offsets,
    region: slot.region,
  });

  const lines: string[] = [];
  for (let i = 0; i < 300; i++)
    lines.push(line(i % 2 === 0 ? 'user' : 'assistant', `${'😀é你 '.repeat((i * 37) % 900)}${i}`));
  const contents: Array<[string, Buffer]> = [
    ['LF, final newline', bytes(`${lines.join('\n')}\n`)],
    ['CRLF, a byte-order mark, no final newline', Buffer.concat([BOM, bytes(lines.join('\r\n'))])],
    [
      'blank lines and a line longer than a block',
      bytes(`\n${lines.slice(0, 50).join('\n\n')}\n${line('user', 'x'.repeat(20_000))}\n  \n`),
    ],
  ];

  it.each(contents)('lays out the same items, raws and offsets as the whole decoded file (%s)', (_name, content) => {
    const file = tempFile('big.jsonl', content);
    for (const block of [4096, 1 << 20]) {
      const source = readBig(file, 'big.jsonl', block);
      expect(isLineSource(source)).toBe(true);
      const fromFile = readLayout(source);
      const fromText = readLayout(decodeSource(content, 'big.jsonl'));
      expect(fromFile.slots.map(shape)).toEqual(fromText.slots.map(shape));
      expect(whole(source)).toEqual(whole(decodeSource(content, 'big.jsonl')));
    }
  });

  // Every 40th line longer than the first window a line read far from the last one reads (64 KiB).
  const withLong = lines.map((l, i) => (i % 40 === 7 ? line('tool', `${'é'.repeat(50_000)}${i}`) : l));
  it.each([
    ['LF', bytes(`${withLong.join('\n')}\n`)],
    ['CRLF, a byte-order mark', Buffer.concat([BOM, bytes(withLong.join('\r\n'))])],
  ])('reads its lines again in any order: runs onward and back, and lines far apart (%s)', (_name, content) => {
    const file = tempFile('again.jsonl', content);
    const expected = readLayout(decodeSource(content, 'again.jsonl')).slots.flatMap((slot) => [...slot.raws]);
    // Runs of lines, each onward or back from a line anywhere: the windows a run reads grow, one far away is small.
    const runs = fc.array(
      fc.record({ at: fc.nat(expected.length - 1), length: fc.integer({ min: 1, max: 80 }), back: fc.boolean() }),
      { minLength: 1, maxLength: 12 },
    );
    fc.assert(
      fc.property(runs, (rs) => {
        const slot = readLayout(readBig(file, 'again.jsonl')).slots[0] as Slot;
        for (const { at, length, back } of rs)
          for (let i = 0; i < length; i++) {
            const k = back ? at - i : at + i;
            if (k >= 0 && k < expected.length) expect(slot.raws[k]).toBe(expected[k]);
          }
      }),
      { numRuns: scaled(40) },
    );
  });

  it('reports a problem of the file (invalid UTF-8, a NUL byte) before a line that is not JSON above it', () => {
    const bad = bytes(`${line('user', 'a')}\n{"role": tru}\n${lines.join('\n')}\n`);
    const cases = [
      Buffer.concat([bad, bytes('{"role":"user","content":"'), Buffer.from([0xc3, 0x28]), bytes('"}\n')]),
      Buffer.concat([bad, bytes('{"role":"user","content":"b\u0000"}\n')]),
    ];
    for (const content of cases) {
      const expected = errorOf(() => decodeSource(content, 'big.jsonl'));
      expect(expected).not.toBe('no error');
      expect(errorOf(() => readLayout(readBig(tempFile('big.jsonl', content), 'big.jsonl')))).toBe(expected);
    }
    // Without one, the line that is not JSON is what is reported, as for the whole text.
    const expected = errorOf(() => readLayout(decodeSource(bad, 'big.jsonl')));
    expect(expected).toMatch(/^big\.jsonl:2:\d+: line 2 is not valid JSON/);
    const source = readBig(tempFile('big.jsonl', bad), 'big.jsonl');
    expect(errorOf(() => readLayout(source))).toBe(expected);
    // The file was read to its end all the same: its lines are there.
    expect((source as LineSource).lines.length).toBe(lines.length + 3);
  });

  it('refuses what decoding the whole file refuses, with the same error', () => {
    for (const content of [
      Buffer.concat([
        Buffer.from([0xff, 0xfe]),
        Buffer.from(`${line('user', 'a')}\n${line('user', 'b')}\n`, 'utf16le'),
      ]),
      bytes(' \n\t\r\n \n'),
    ]) {
      const expected = errorOf(() => decodeSource(content, 'big.jsonl'));
      expect(expected).not.toBe('no error');
      expect(errorOf(() => readLayout(readBig(tempFile('big.jsonl', content), 'big.jsonl')))).toBe(expected);
    }
  });

  it('reads its blocks into one buffer, a line carried over from one block to the next included', () => {
    // Lines of about 300 bytes straddle the 4 KiB blocks: every block after the first starts with the tail of one.
    const short = Array.from({ length: 2000 }, (_, i) =>
      line(i % 2 === 0 ? 'user' : 'assistant', `${'é你 ab'.repeat(40)}${i}`),
    );
    const content = bytes(`${short.join('\n')}\n`);
    const file = tempFile('big.jsonl', content);
    const allocations = jest.spyOn(Buffer, 'allocUnsafeSlow');
    try {
      readLayout(readBig(file, 'big.jsonl'));
      // Buffers of a block's size (reading lines back later takes a window of its own, of 4 MiB).
      const blocks = allocations.mock.calls.filter(([size]) => size >= 4096 && size < 1 << 20);
      expect(content.length / 4096).toBeGreaterThan(100);
      expect(blocks.length).toBe(1);
      // Reading lines back takes that buffer over when it holds a window (here, blocks as big as the file).
      allocations.mockClear();
      const slot = readLayout(readBig(file, 'big.jsonl', 1 << 20)).slots[0] as Slot;
      expect([slot.raws[1999], slot.raws[0]]).toEqual([short[1999], short[0]]);
      expect(allocations.mock.calls.filter(([size]) => size >= 4096)).toHaveLength(1);
    } finally {
      allocations.mockRestore();
    }
  });

  it('reads its lines first when something else asks for them before the parse', () => {
    const content = contents[0]?.[1] as Buffer;
    const source = readBig(tempFile('big.jsonl', content), 'big.jsonl') as LineSource;
    expect(source.lines[7]).toBe(lines[7]);
    expect(readLayout(source).slots.map(shape)).toEqual(
      readLayout(decodeSource(content, 'big.jsonl')).slots.map(shape),
    );
  });
});
