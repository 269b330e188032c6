/** Compacting a file through the stream and without it, for test/pipeline/stream.test.ts and test/e2e/stream.test.ts. */
import { expectEqual } from './bytes.js';
import { afterAll, expect, jest } from '@jest/globals';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { InputError } from '../../src/errors.js';
import type { Message } from '../../src/core/types.js';
import type { Normalized } from '../../src/formats/types.js';
import { readSourceFile, sourceFromBytes } from '../../src/io/lines.js';
import type { SourceText } from '../../src/io/source.js';
import { compactSource, type FileOptions, type FileResult, type StrategyName } from '../../src/pipeline/index.js';
import { StreamedRead } from '../../src/pipeline/stream.js';
import { createApproxCounter } from '../../src/tokens/approx.js';
import { ROOT, tempDir } from './cli.js';
import { noteArb, type ConvMessage } from './conversation-arbitraries.js';
import { writeLine, type FileStyle, type JsonNode } from './json-text.js';

export const counter = createApproxCounter();
/** The block sizes the stream is tried with: tiny ones cross a block at every line; undefined is the default. */
export const BLOCKS: readonly (number | undefined)[] = [1, 2, 3, 7, undefined];
/**
 * Up to how many items each block size is tried keeping parsed: none (each parsed again from its line when read), a
 * few (let go of part way through most files), and the default (every item of these files).
 */
export const KEEPS: readonly (number | undefined)[] = [0, 3, undefined];
export const CHAINS: readonly (readonly StrategyName[])[] = [
  ['window'],
  ['prune', 'window'],
  ['offload', 'window'],
  ['prune', 'offload', 'window'],
];
/** Offloading only names its store's files here (compactSource writes nothing). */
export const STORE = path.join(ROOT, 'never-written-store');

// Spied on, not changed: they tell whether the stream took a file, and whether it gave up.
export const taking = jest.spyOn(StreamedRead.prototype, 'take');
export const finishing = jest.spyOn(StreamedRead.prototype, 'finish');
afterAll(() => void jest.restoreAllMocks());

/** What a message is to a decision and to every output: its marks, its content and what pruning reads of it. */
export function messageShown(m: Message): unknown {
  return {
    role: m.role,
    compaction: m.compaction,
    exactNote: m.exactNote,
    weight: m.weight,
    content: typeof m.content === 'function' ? m.content() : m.content,
    sketch: m.sketch?.(),
  };
}

export function normalizedShown(n: Normalized): unknown {
  return { messages: n.messages.map(messageShown), itemsOf: n.itemsOf, pinned: n.pinned };
}

/** Everything a result shows: bytes, store files, and each conversation's decision, figures and messages. */
export function resultShown(result: FileResult): unknown {
  return {
    output: result.output,
    changed: result.changed,
    format: result.format,
    records: result.records,
    conversationCount: result.conversationCount,
    changedConversations: result.changedConversations,
    stored: result.stored,
    conversations: result.conversations.map((c) => ({
      where: c.slot.where,
      items: c.slot.items.length,
      plan: c.plan,
      target: c.target,
      pruned: c.pruned,
      offloaded: c.offloaded,
      outcome: c.outcome,
      normalized: normalizedShown(c.normalized),
    })),
  };
}

/** An error as a reader sees it: its class, its one line, where it points. */
export function errorShown(error: unknown): unknown {
  if (!(error instanceof Error)) return { thrown: String(error) };
  const at = error instanceof InputError ? { line: error.line, column: error.column } : {};
  return { error: error.constructor.name, message: error.message, ...at };
}

export interface Run {
  readonly shown: unknown;
  /** Whether the layout offered the stream any items. */
  readonly offered: boolean;
  /** Whether the stream took the file's first block (it normalized it, and offered to continue). */
  readonly started: boolean;
  /** Whether the slot was compacted from what the stream read (it did not give up). */
  readonly streamed: boolean;
  readonly failed: boolean;
}

/** Compacts a fresh source, noting what the stream did with it. */
export async function compactRun(make: () => SourceText, options: FileOptions): Promise<Run> {
  taking.mockClear();
  finishing.mockClear();
  let shown: unknown;
  let failed = false;
  try {
    shown = resultShown(await compactSource(make(), options));
  } catch (error) {
    shown = errorShown(error);
    failed = true;
  }
  const first = taking.mock.calls.findIndex(([, from]) => from === 0);
  const started = first !== -1 && taking.mock.results[first]?.value === true;
  const streamed = finishing.mock.results.some((r) => r.type === 'return' && r.value !== null);
  return { shown, offered: taking.mock.calls.length > 0, started, streamed, failed };
}

/**
 * Compacts without the stream and with each block size (`runs`, in BLOCKS' order), each keeping as many items as
 * KEEPS says, expecting the same of each; the stream must take and give up alike whatever it keeps.
 */
export async function compareRoads(
  label: unknown,
  make: () => SourceText,
  options: FileOptions,
): Promise<{ base: Run; runs: Run[] }> {
  const base = await compactRun(make, { ...options, streamBlock: 0 });
  expect(base.offered || base.streamed).toBe(false);
  const runs: Run[] = [];
  for (const streamBlock of BLOCKS) {
    // One at a time: each run reads the stream's spies, cleared as it starts.
    const kept: Run[] = [];
    for (const keepStreamedItems of KEEPS) {
      const run = await compactRun(make, { ...options, streamBlock, keepStreamedItems });
      expectEqual(
        { label, streamBlock, keepStreamedItems, shown: run.shown },
        {
          label,
          streamBlock,
          keepStreamedItems,
          shown: base.shown,
        },
      );
      kept.push(run);
    }
    const [first, ...others] = kept;
    const road = (r: Run): unknown => [r.offered, r.started, r.streamed];
    for (const other of others)
      expect({ label, streamBlock, road: road(other) }).toEqual({ label, streamBlock, road: road(first as Run) });
    runs.push(first as Run);
  }
  return { base, runs };
}

/** A file of JSONL text, written once and read again from disk at each compaction (lines not held). */
export function fileRoad(text: string | Buffer, name: string, readBlock = 64): () => SourceText {
  const file = path.join(tempDir(), name);
  writeFileSync(file, text);
  return () => readSourceFile(file, name, 0, readBlock);
}

/** The same bytes as a file held in memory (standard input's road), decoded afresh at each compaction. */
export function bytesRoad(bytes: Buffer | string, name: string): () => SourceText {
  return () => sourceFromBytes(Buffer.from(bytes), name);
}

/**
 * Items one per line with the style's line ending, and blank lines: `blanks[k]` (cycled) before item k, '' for none,
 * '-' for an empty line, else that whitespace; an empty line before the end too when some blank is a tab.
 */
export function jsonlText(items: readonly JsonNode[], style: FileStyle, blanks: readonly string[]): string {
  const lines: string[] = [];
  items.forEach((item, k) => {
    const blank = blanks[k % Math.max(blanks.length, 1)] ?? '';
    if (blank !== '') lines.push(blank === '-' ? '' : blank);
    lines.push(writeLine(item, style));
  });
  if (blanks.includes('\t')) lines.push('');
  return lines.join(style.eol) + (style.finalNewline ? style.eol : '');
}

/** Tool results made long enough to be pruned and offloaded, by how many times each repeats its text. */
export function withLongResults(messages: readonly ConvMessage[], repeats: readonly number[]): ConvMessage[] {
  let k = 0;
  return messages.map((m) =>
    m.role === 'tool' ? { ...m, text: `${m.text} `.repeat(1 + (repeats[k++ % repeats.length] ?? 0) * 9) } : m,
  );
}

export const styleArb: fc.Arbitrary<FileStyle> = fc.record({
  unit: fc.constant(null),
  itemIndent: fc.constant(null),
  colon: fc.constantFrom(': ', ':'),
  comma: fc.constantFrom(', ', ','),
  eol: fc.constantFrom<'\n' | '\r\n'>('\n', '\r\n'),
  finalNewline: fc.boolean(),
  bom: fc.boolean(),
});

export const optionsArb: fc.Arbitrary<FileOptions> = fc
  .record({
    strategies: fc.constantFrom(...CHAINS),
    target: fc.constantFrom(1, 40, 150, 600, 1e9),
    minKeepSteps: fc.constantFrom(1, 1, 2, 0),
    minTokens: fc.constantFrom(0, 5, 60),
    slimLongerThan: fc.constantFrom<number | undefined>(undefined, 0, 24, Infinity),
    note: noteArb,
    inventory: fc.boolean(),
    over: fc.constantFrom(5, 60),
  })
  // Pruning and offloading refuse to take the newest step's results (min_keep_steps 0); the window alone may.
  .map(({ over, minKeepSteps, ...rest }) => ({
    ...rest,
    minKeepSteps: rest.strategies.length === 1 ? minKeepSteps : Math.max(minKeepSteps, 1),
    counter,
    offload: { dir: STORE, over, home: ROOT },
  }));

/** One line of a message, as JSON text. */
export const line = (value: unknown): string => JSON.stringify(value);

/** A plain conversation of `n` OpenAI messages every format that reads `{role, content}` also takes. */
export function plainLines(n: number, from = 0): string[] {
  return Array.from({ length: n }, (_, i) => {
    const k = i + from;
    const role = k === 0 ? 'system' : k % 2 === 1 ? 'user' : 'assistant';
    return line({ role, content: k === 0 ? 'You are terse.' : `message ${k} ${'word '.repeat(i % 9)}` });
  });
}

/** Lines that, met after plain messages, make OpenAI detection fail and another format (or none) fit. */
export const SWITCHES: Readonly<Record<string, readonly string[]>> = {
  anthropic: [
    line({ role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'run', input: { a: 1 } }] }),
    line({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'done' }] }),
  ],
  sharegpt: [line({ role: 'human', content: 'a ShareGPT speaker' })],
  responses: [
    line({ type: 'function_call', call_id: 'c1', name: 'run', arguments: '{}' }),
    line({ type: 'function_call_output', call_id: 'c1', output: 'ran' }),
  ],
  gemini: [line({ role: 'model', parts: [{ text: 'a Gemini content' }] })],
  number: ['42'],
  null: ['null'],
  list: ['[]'],
  empty: ['{}'],
  objectContent: [line({ role: 'user', content: { text: 'an object' } })],
  numberRole: [line({ role: 7, content: 'x' })],
  claudeCode: [line({ type: 'user', uuid: 'u1', message: { role: 'user', content: 'hi' } })],
};

/** Messages OpenAI detection takes but its normalization refuses. */
export const REFUSED: readonly string[] = [
  line({ role: 'robot', content: 'an unknown role' }),
  line({ role: 'assistant', content: null, tool_calls: 'not a list' }),
  line({ role: 'assistant', content: null, tool_calls: [1] }),
  '{"role": "__proto__", "content": "a role no object has of its own"}',
];

/** Lines the layout refuses: a cut line, a missing comma, a value nested deeper than it reads. */
export const BROKEN: readonly string[] = [
  '{"role": "user", "content": ',
  '{"role": "user" "content": "x"}',
  '['.repeat(5000),
];
