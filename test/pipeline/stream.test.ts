/**
 * A JSONL file normalized while its lines are parsed (pipeline/stream.ts) is compacted exactly as when every item is
 * kept (`streamBlock: 0`): the same bytes, plans, figures and messages, or the same error, for random OpenAI chats in
 * memory and read again from disk, a format that changes after the first block, a refused message before a broken
 * line, formats that cannot continue, a format named, records and a conversation path; and whether the stream took
 * the file is checked too, so that each comparison compares something. Files past the default block, and past the
 * calls a normalization holds: test/e2e/stream.test.ts.
 */
import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { decodeSource } from '../../src/io/source.js';
import { readLayout, type ItemSink, type Slot } from '../../src/io/layout.js';
import type { FileOptions } from '../../src/pipeline/index.js';
import { ROOT } from '../helpers/cli.js';
import { conversationArb, openaiCodec } from '../helpers/conversation-arbitraries.js';
import { FORMAT_NAMES, randomConversation, writeAs } from '../helpers/convert.js';
import { fileBytes } from '../helpers/json-text.js';
import { scaled, scaledCount } from '../helpers/scale.js';
import {
  counter,
  BLOCKS,
  CHAINS,
  STORE,
  compareRoads,
  fileRoad,
  bytesRoad,
  jsonlText,
  withLongResults,
  styleArb,
  optionsArb,
  line,
  plainLines,
  SWITCHES,
  REFUSED,
  BROKEN,
} from '../helpers/stream-roads.js';

/** The formats whose normalization can be continued (`Normalized.more`): a JSONL file of one of them streams. */
const CONTINUING: ReadonlySet<string> = new Set(['openai', 'anthropic', 'gemini', 'haystack']);

/**
 * Whether each block size streams a file of one conversation of `format`: OpenAI chat in every size; another format
 * that continues in the default block (the whole file), and in a smaller one only where its first block already reads
 * as that format (plain lines read as OpenAI chat, and the stream gives up when the format changes); any other never.
 */
function expectedStreams(format: string, records: boolean): unknown[] {
  if (records || !CONTINUING.has(format)) return BLOCKS.map(() => false);
  if (format === 'openai') return BLOCKS.map(() => true);
  return BLOCKS.map((b) => (b === undefined ? true : expect.any(Boolean)));
}

describe('a JSONL file normalized while its lines are parsed', () => {
  it('compacts random OpenAI chats as keeping every item does: held as lines, as one text, read again from disk', async () => {
    let streamed = 0;
    await fc.assert(
      fc.asyncProperty(
        conversationArb,
        fc.array(fc.nat(3), { minLength: 1, maxLength: 5 }),
        styleArb,
        fc.array(fc.constantFrom('', '', '', '-', '  ', '\t'), { maxLength: 6 }),
        optionsArb,
        fc.constantFrom(7, 64, 4096),
        async (messages, repeats, style, blanks, options, readBlock) => {
          const { items } = openaiCodec.encode(withLongResults(messages, repeats));
          const bytes = fileBytes(jsonlText(items, style, blanks), style);
          for (const [road, make] of [
            ['bytes', bytesRoad(bytes, 'chat.jsonl')],
            ['file', fileRoad(bytes, 'chat.jsonl', readBlock)],
            ['text', () => decodeSource(bytes, 'chat.jsonl')],
          ] as const) {
            const { base, runs } = await compareRoads(road, make, options);
            // Every message is OpenAI's and its own: the stream reads the whole file, in every block size.
            expect({ road, streamed: runs.map((r) => r.streamed) }).toEqual({ road, streamed: BLOCKS.map(() => true) });
            if (!base.failed) streamed++;
          }
        },
      ),
      { numRuns: scaled(30) },
    );
    expect(streamed).toBeGreaterThan(scaledCount(45, 30));
  });

  it('compacts random conversations of every format, written as JSONL, as keeping every item does', async () => {
    for (let seed = 1; seed <= 8; seed++) {
      for (const format of FORMAT_NAMES) {
        const written = writeAs(format, randomConversation(seed), { jsonl: true });
        const options: FileOptions = {
          counter,
          target: [1, 60, 400, 1e9][seed % 4] as number,
          strategies: CHAINS[seed % CHAINS.length],
          minKeepSteps: 1,
          offload: { dir: STORE, over: 20, home: ROOT },
          slimLongerThan: seed % 2 === 0 ? 0 : undefined,
        };
        const { base, runs } = await compareRoads({ seed, format }, bytesRoad(written.text, written.name), options);
        // Only formats that continue a normalization stream: any other format is read the old way.
        const label = `seed ${seed}, ${format}`;
        const found = (base.shown as { format?: string }).format ?? '';
        expect({ label, streamed: runs.map((r) => r.streamed) }).toEqual({
          label,
          streamed: expectedStreams(found, false),
        });
      }
    }
  });

  it('compacts every JSONL fixture as keeping every item does, streaming only the formats that continue', async () => {
    const folder = path.join(ROOT, 'fixtures');
    const files = readdirSync(folder, { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.jsonl'))
      .map((f) => path.join(folder, f))
      .sort();
    expect(files.length).toBeGreaterThan(15);
    const formats = new Set<string>();
    for (const file of files) {
      const name = path.relative(ROOT, file);
      const bytes = readFileSync(file);
      // The long real transcripts once, the short fixtures with a chain as well.
      const chains: FileOptions[] = [{ counter, target: 500 }];
      if (bytes.length < 100_000)
        chains.push({ counter, target: 3000, strategies: ['prune', 'window'], minTokens: 20 });
      for (const options of chains) {
        const { base, runs } = await compareRoads(name, bytesRoad(bytes, path.basename(file)), options);
        const { format = 'error', records = false } = base.shown as { format?: string; records?: boolean };
        formats.add(format);
        // One conversation of a format that continues is read by the stream in every block size; nothing else is.
        expect({ name, streamed: runs.map((r) => r.streamed) }).toEqual({
          name,
          streamed: expectedStreams(format, records),
        });
      }
    }
    expect([...formats].sort()).toEqual(expect.arrayContaining(['anthropic', 'claude-code', 'openai', 'responses']));
  });
});

describe('a format that changes after the first block', () => {
  it.each(Object.keys(SWITCHES).map((k) => [k]))('gives up and reads the file again: %s', async (kind) => {
    const lines = [...plainLines(9), ...(SWITCHES[kind] as string[]), ...plainLines(4, 9)];
    const text = `${lines.join('\n')}\n`;
    for (const make of [bytesRoad(text, 'switch.jsonl'), fileRoad(text, 'switch.jsonl')]) {
      const { base, runs } = await compareRoads(kind, make, { counter, target: 60 });
      // The first block (up to 7 lines) was OpenAI's: the stream took it, and gave up when the format changed.
      expect(runs.slice(0, 4).map((r) => [r.started, r.streamed])).toEqual(BLOCKS.slice(0, 4).map(() => [true, false]));
      // The default block holds the whole file: detected whole, never OpenAI's, streamed where its format continues.
      const whole = (base.shown as { format?: string }).format ?? '';
      expect({ whole, streamed: runs[4]?.streamed }).toEqual({ whole, streamed: CONTINUING.has(whole) });
    }
  });

  it('gives up for a format that changes and changes back, which the old road reads as OpenAI chat', async () => {
    // A prompt-caching mark makes the plain messages Anthropic's; a tool call makes them OpenAI's again.
    const cached = line({
      role: 'user',
      content: [{ type: 'text', text: 'cached', cache_control: { type: 'ephemeral' } }],
    });
    const call = line({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c9', type: 'function', function: { name: 'run', arguments: '{}' } }],
    });
    const result = line({ role: 'tool', tool_call_id: 'c9', content: `ran ${'fine '.repeat(30)}` });
    const lines = [...plainLines(9), cached, ...plainLines(6, 9), call, result, ...plainLines(3, 15)];
    const { base, runs } = await compareRoads('and back', bytesRoad(lines.join('\n'), 'back.jsonl'), {
      counter,
      target: 60,
      strategies: ['prune', 'window'],
    });
    expect(base.shown).toMatchObject({ format: 'openai', changed: true });
    // A block that ended in the Anthropic stretch gave up; the default block holds the whole file, OpenAI's at its end.
    expect(runs.map((r) => [r.started, r.streamed])).toEqual([
      ...BLOCKS.slice(0, 4).map(() => [true, false]),
      [true, true],
    ]);
  });

  it('decides and refuses as the old road wherever the change comes, for random conversations', async () => {
    let gaveUp = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 14 }),
        fc.integer({ min: 0, max: 8 }),
        fc.constantFrom(...Object.keys(SWITCHES)),
        fc.constantFrom('\n', '\r\n'),
        fc.constantFrom(1, 150, 1e9),
        async (before, after, kind, eol, target) => {
          const lines = [...plainLines(before), ...(SWITCHES[kind] as string[]), ...plainLines(after, before)];
          const text = lines.join(eol);
          const { base, runs } = await compareRoads({ kind, before, after }, bytesRoad(text, 'switch.jsonl'), {
            counter,
            target,
            strategies: ['prune', 'window'],
          });
          gaveUp += runs.filter((r) => r.started && !r.streamed).length;
          // A first block that reaches the change reads as the file's final format: there a format that continues
          // streams; where the format changes after the first block, the stream gives up.
          const whole = (base.shown as { format?: string }).format ?? '';
          const streams = BLOCKS.map((b) => CONTINUING.has(whole) && (b ?? Infinity) > before);
          expect({ whole, streamed: runs.map((r) => r.streamed) }).toEqual({ whole, streamed: streams });
        },
      ),
      { numRuns: scaled(80) },
    );
    expect(gaveUp).toBeGreaterThan(scaledCount(60, 80));
  });
});

describe('a message the format refuses in a later block', () => {
  it.each(REFUSED.map((r, k) => [k, r] as const))('is reported as the old road reports it (%i)', async (_, refused) => {
    const lines = [...plainLines(8), refused, ...plainLines(5, 8)];
    const text = `${lines.join('\n')}\n`;
    for (const make of [bytesRoad(text, 'refused.jsonl'), fileRoad(text, 'refused.jsonl')]) {
      const { base, runs } = await compareRoads(refused, make, { counter, target: 60 });
      expect(base.shown).toMatchObject({ error: 'InputError', message: expect.stringContaining('message 9: ') });
      expect(runs.slice(0, 4).every((r) => r.started)).toBe(true);
    }
  });

  it.each(BROKEN.map((b, k) => [k, b] as const))(
    'gives way to a broken line after it, which the old road reports first (%i)',
    async (_, broken) => {
      for (const refused of REFUSED) {
        // The refusal in the first block of 7 and in a later one, the broken line after both.
        for (const at of [2, 9]) {
          const lines = [...plainLines(at), refused, ...plainLines(4, at), broken, ...plainLines(2, at + 4)];
          const text = `${lines.join('\r\n')}\r\n`;
          for (const make of [bytesRoad(text, 'broken.jsonl'), fileRoad(text, 'broken.jsonl')]) {
            const { base } = await compareRoads({ refused, at, broken: broken.slice(0, 40) }, make, {
              counter,
              target: 60,
            });
            expect(base.shown).toMatchObject({ error: 'InputError', line: at + 6 });
          }
        }
      }
    },
  );

  it('is reported in order for random places of the refusal and of a broken line', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 12 }),
        fc.integer({ min: 0, max: 6 }),
        fc.constantFrom(...REFUSED),
        fc.option(fc.constantFrom(...BROKEN)),
        fc.boolean(),
        async (at, gap, refused, broken, twice) => {
          const lines = [...plainLines(at), refused, ...plainLines(gap, at)];
          if (twice) lines.push(REFUSED[0] as string);
          if (broken !== null) lines.push(broken, ...plainLines(2, at + gap));
          const text = lines.join('\n');
          const { base } = await compareRoads({ at, gap, refused, broken }, bytesRoad(text, 'r.jsonl'), {
            counter,
            target: 40,
          });
          expect(base.failed).toBe(true);
        },
      ),
      { numRuns: scaled(80) },
    );
  });
});

describe('lines drawn from every format, broken ones among them', () => {
  /** The first lines of every JSONL fixture, and every line above that changes the format or is refused or broken. */
  function linePool(): string[] {
    const lines: string[] = [];
    for (const dir of ['anthropic', 'claude-code', 'multi', 'responses', 'inspect', 'bad', '.']) {
      const folder = path.join(ROOT, 'fixtures', dir);
      for (const name of readdirSync(folder)
        .filter((n) => n.endsWith('.jsonl'))
        .sort())
        lines.push(...readFileSync(path.join(folder, name), 'utf8').split('\n').slice(0, 12));
    }
    return [...lines, ...Object.values(SWITCHES).flat(), ...REFUSED, ...BROKEN.slice(0, 2)];
  }
  const pool = linePool();
  const openaiLines = readFileSync(path.join(ROOT, 'fixtures/sample.jsonl'), 'utf8').split('\n').filter(Boolean);

  it('compacts or refuses a file that begins as OpenAI chat as the old road does', async () => {
    let gaveUp = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.nat(openaiLines.length - 1), { minLength: 1, maxLength: 9 }),
        // After it, any line of the pool (or of the chat again, as -1 - its index).
        fc.array(
          fc.oneof(
            fc.nat(pool.length - 1),
            fc.nat(openaiLines.length - 1).map((k) => -1 - k),
          ),
          { maxLength: 10 },
        ),
        fc.constantFrom(1, 400, 1e9),
        async (head, tail, target) => {
          const lines = [
            ...head.map((k) => openaiLines[k] as string),
            ...tail.map((k) => (k < 0 ? openaiLines[-1 - k] : pool[k]) as string),
          ];
          const { runs } = await compareRoads(lines, bytesRoad(lines.join('\n'), 'drawn.jsonl'), { counter, target });
          gaveUp += runs.filter((r) => r.started && !r.streamed).length;
        },
      ),
      { numRuns: scaled(100) },
    );
    expect(gaveUp).toBeGreaterThan(scaledCount(30, 100));
  });
});

describe('a format named', () => {
  const chat = `${plainLines(12).join('\n')}\n`;
  const anthropic = readFileSync(path.join(ROOT, 'fixtures/anthropic/messages.jsonl'));

  it.each([['openai'], ['auto'], ['anthropic'], ['sharegpt'], ['opnai'], ['OpenAI']])(
    'compacts or refuses as the old road: --format %s',
    async (format) => {
      for (const [name, bytes] of [
        ['chat.jsonl', chat],
        ['messages.jsonl', anthropic],
      ] as const) {
        for (const make of [bytesRoad(bytes, name), fileRoad(bytes, name)]) {
          const { base, runs } = await compareRoads({ format, name }, make, { counter, target: 40, format });
          if (format === 'openai') expect(runs.every((r) => r.streamed)).toBe(true);
          const unknown = { error: 'InputError', message: expect.stringContaining('unknown format') };
          if (format === 'opnai' || format === 'OpenAI') expect(base.shown).toMatchObject(unknown);
        }
      }
    },
  );

  it('still refuses a later message it cannot read, and the broken line after it first', async () => {
    const lines = [...plainLines(9), REFUSED[0] as string, ...plainLines(3, 9)];
    for (const tail of [[], [BROKEN[0] as string]]) {
      const text = [...lines, ...tail].join('\n');
      const { base } = await compareRoads(tail, bytesRoad(text, 'named.jsonl'), {
        counter,
        target: 40,
        format: 'openai',
      });
      expect(base.failed).toBe(true);
    }
  });
});

describe('records per line and a conversation path', () => {
  /** One record a line, each with its own conversation under `key` (nested under `data` with `nested`). */
  function recordLines(count: number, key: string, nested: boolean): string {
    return Array.from({ length: count }, (_, r) => {
      const messages = plainLines(3 + (r % 4)).map((l) => JSON.parse(l) as unknown);
      const record = { id: `run-${r}`, [key]: messages };
      return line(nested ? { data: record } : record);
    }).join('\n');
  }

  it.each([
    ['messages records', recordLines(9, 'messages', false), {}],
    ['a --conversation-key', recordLines(9, 'turns', false), { conversationKey: 'turns' }],
    ['a --conversation-path', recordLines(9, 'messages', true), { conversationPath: '/data/messages' }],
    ['a --conversation-path into plain messages', plainLines(9).join('\n'), { conversationPath: '/messages' }],
    ['a --conversation-path to the content', plainLines(9).join('\n'), { conversationPath: '/content' }],
  ] as const)('are read as before, never offered to the stream: %s', async (_, text, extra) => {
    for (const target of [1, 1e9]) {
      for (const make of [bytesRoad(text, 'records.jsonl'), fileRoad(text, 'records.jsonl')]) {
        const { runs } = await compareRoads({ extra, target }, make, { counter, target, ...extra });
        expect(runs.map((r) => r.offered)).toEqual(BLOCKS.map(() => false));
      }
    }
  });

  it('takes a file whose first line is a message for one conversation, refusing a later record in it as before', async () => {
    const text = [...plainLines(8), recordLines(1, 'messages', false), ...plainLines(2, 8)].join('\n');
    const { base, runs } = await compareRoads('late record', bytesRoad(text, 'mixed.jsonl'), { counter, target: 40 });
    expect(base.shown).toMatchObject({ message: 'mixed.jsonl:9:1: message 9: no "role"' });
    expect(runs.slice(0, 4).every((r) => r.started && !r.streamed)).toBe(true);
  });
});

describe('the items a streamed file keeps', () => {
  /** A sink that takes every block and notes each item it was handed. */
  const sinkOf = (blockSize: number, keepUpTo: number): { handed: unknown[]; sink: ItemSink } => {
    const handed: unknown[] = [];
    return {
      handed,
      sink: {
        blockSize,
        keepUpTo,
        take(block) {
          handed.push(...block);
          return true;
        },
      },
    };
  };
  /** Ten lines of one length, so that the first block's rate tells the whole file's count exactly. */
  const even = `${Array.from({ length: 10 }, (_, k) => line({ role: 'user', content: `message ${k}` })).join('\n')}\n`;
  /** Three long lines, then seven short ones: the first block's rate promises fewer items than the file holds. */
  const uneven = `${[
    ...Array.from({ length: 3 }, (_, k) => line({ role: 'user', content: `${k} ${'long '.repeat(60)}` })),
    ...Array.from({ length: 7 }, (_, k) => line({ role: 'assistant', content: `short ${k}` })),
  ].join('\n')}\n`;
  const slotOf = (text: string, sink: ItemSink): Slot =>
    readLayout(decodeSource(Buffer.from(text), 'kept.jsonl'), 'jsonl', { sink }).slots[0] as Slot;

  it.each([
    [3, 10],
    [3, 11],
    [4, 100],
  ])('are the very items parsed, in blocks of %i keeping up to %i of 10', (blockSize, keepUpTo) => {
    const { handed, sink } = sinkOf(blockSize, keepUpTo);
    const slot = slotOf(even, sink);
    expect(handed).toHaveLength(10);
    // The same objects: nothing is parsed again.
    slot.items.forEach((item, k) => expect(item).toBe(handed[k]));
  });

  it.each([
    ['none kept', even, 3, 0],
    ['more promised by the first block than kept', even, 3, 9],
    ['more promised by the first line than kept', even, 1, 4],
    ['more than kept, though the first block promised fewer', uneven, 3, 5],
  ])('are parsed again from their lines: %s', (_, text, blockSize, keepUpTo) => {
    const { handed, sink } = sinkOf(blockSize, keepUpTo);
    const slot = slotOf(text, sink);
    expect(handed).toHaveLength(10);
    expect([...slot.items]).toEqual(handed);
    slot.items.forEach((item, k) => expect(item).not.toBe(handed[k]));
  });
});
