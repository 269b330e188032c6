/**
 * The inspect road of the pipeline: files read as compacting reads them (a JSONL file as lines, never as one
 * text), the same formats and failures, and problems placed in the file however it is held.
 */
import { describe, expect, it } from '@jest/globals';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isLineSource, readSourceFile } from '../../src/io/lines.js';
import { decodeSource, lineColumn, type SourceText } from '../../src/io/source.js';
import type { Inspection } from '../../src/outcome/inspection.js';
import { compactSource, createInspector, inspectSource } from '../../src/pipeline/index.js';
import { createFakeCounter } from '../helpers/fake-counter.js';
import { tempDir } from '../helpers/cli.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function tempFile(name: string, text: string): string {
  const file = path.join(tempDir(), name);
  writeFileSync(file, text);
  return file;
}

/** A source whose whole text may not be built: what a file past one JavaScript string's size is. */
function withoutText(source: SourceText): SourceText {
  return new Proxy(source, {
    get(target, key, receiver) {
      if (key === 'text') throw new Error('the whole text was built');
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
}

/** What an inspection shows, without the functions and lazy parts it holds. */
function shown(inspection: Inspection) {
  return {
    format: inspection.format,
    tokenizer: inspection.tokenizer,
    conversations: inspection.conversations.map((c) => ({
      where: c.where,
      format: c.format,
      tokens: c.tokens,
      messageCount: c.messageCount,
      totals: c.totals,
      rows: c.rows,
      groups: c.groups.map((g) => [g.kind, g.start, g.end, g.tokens]),
      problems: c.problems,
      pairingChecked: c.pairingChecked,
    })),
  };
}

/** The error a function throws, as its message. */
async function errorOf(run: () => unknown): Promise<string> {
  try {
    await run();
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  return 'no error';
}

/** Records of one OpenAI conversation each; every third leaves its call unanswered, the text has astral characters. */
function records(n: number, eol = '\n'): string {
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    const messages = [
      { role: 'user', content: `Weather ${i} 😀 漢字?` },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'w', arguments: '{}' } }],
      },
      ...(i % 3 === 0 ? [] : [{ role: 'tool', tool_call_id: `c${i}`, content: 'ok 😀' }]),
      { role: 'assistant', content: i % 5 === 0 ? '' : 'Done' },
    ];
    lines.push(JSON.stringify({ id: `r${i}`, note: '😀é'.repeat(i % 4), messages }));
  }
  return lines.join(eol) + eol;
}

describe('createInspector', () => {
  it('loads the tokenizer named and inspects with it', async () => {
    const inspector = await createInspector({ tokenizer: 'approx' });
    expect(inspector.tokenizer).toBe('approx');
    const file = path.join(ROOT, 'fixtures/inspect/missing-result.json');
    const inspection = inspector.inspect(readSourceFile(file, 'missing-result.json'));
    expect(inspection.tokenizer).toBe('approx');
    expect(inspection.conversations[0]?.problems.map((p) => p.kind)).toEqual(['missing-result']);
  });
});

/** One OpenAI conversation, a message a line; every third call is left unanswered, the text has astral characters. */
function messagesJsonl(calls: number, eol = '\n'): string {
  const lines: string[] = [JSON.stringify({ role: 'system', content: 'Be brief 😀.' })];
  for (let i = 0; i < calls; i++) {
    lines.push(JSON.stringify({ role: 'user', content: `Weather ${i} 😀 漢字?`, note: '😀é'.repeat(i % 4) }));
    lines.push(
      JSON.stringify({
        role: 'assistant',
        content: null,
        tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'w', arguments: '{}' } }],
      }),
    );
    if (i % 3 !== 0) lines.push(JSON.stringify({ role: 'tool', tool_call_id: `c${i}`, content: 'ok 😀' }));
    lines.push(JSON.stringify({ role: 'assistant', content: i % 5 === 0 ? '' : 'Done' }));
  }
  return lines.join(eol) + eol;
}

describe('inspecting a file held as lines', () => {
  const settings = { format: 'auto', counter: createFakeCounter() };

  it.each([
    [
      'a Claude Code session',
      () => readFileSync(path.join(ROOT, 'fixtures/inspect/claude-code-duplicate-id.jsonl'), 'utf8'),
    ],
    ['a conversation with astral characters', () => messagesJsonl(30)],
    ['a conversation with CRLF line ends', () => messagesJsonl(30, '\r\n')],
    ['a conversation after a byte-order mark', () => `\ufeff${messagesJsonl(12)}`],
  ])('finds in %s what decoding the whole file finds, never building its text', (_what, make) => {
    const file = tempFile('session.jsonl', make());
    const whole = inspectSource(decodeSource(readFileSync(file), 'session.jsonl'), settings);
    // Held up to 0 bytes: the lines are read again from the file, as for a file too big to hold.
    const lines = readSourceFile(file, 'session.jsonl', 0);
    expect(isLineSource(lines)).toBe(true);
    const inspection = inspectSource(withoutText(lines), settings);
    expect(shown(inspection)).toEqual(shown(whole));
    expect(inspection.conversations[0]?.problems.length).toBeGreaterThan(0);
  });

  it('finds in records, one conversation a line, what decoding the whole file finds', () => {
    const file = tempFile('records.jsonl', records(40, '\r\n'));
    const whole = inspectSource(decodeSource(readFileSync(file), 'records.jsonl'), settings);
    const lines = readSourceFile(file, 'records.jsonl', 0);
    expect(isLineSource(lines)).toBe(true);
    expect(shown(inspectSource(lines, settings))).toEqual(shown(whole));
    expect(whole.conversations).toHaveLength(40);
  });

  it('places each of many problems on its own line', () => {
    const n = 6000;
    const text = messagesJsonl(n);
    const file = tempFile('many.jsonl', text);
    const [c] = inspectSource(withoutText(readSourceFile(file, 'many.jsonl', 0)), {
      counter: createFakeCounter(),
    }).conversations;
    const missing = c?.problems.filter((p) => p.kind === 'missing-result') ?? [];
    expect(missing).toHaveLength(n / 3);
    const lineOfCall = (i: number) => text.split('\n').findIndex((l) => l.includes(`"id":"c${i}"`)) + 1;
    expect(missing.slice(0, 3).map((p) => [p.line, p.column])).toEqual([0, 3, 6].map((i) => [lineOfCall(i), 1]));
    expect(missing.at(-1)?.line).toBe(lineOfCall(n - 3));
  });

  it.each([
    ['on one line', ', '],
    ['on lines of their own', ',\n  '],
  ])('places problems of a file held as one text, its items %s, in code points', (_what, separator) => {
    const items = [
      { role: 'user', content: '😀😀 漢字 é' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'x1', type: 'function', function: { name: 'w', arguments: '{}' } }],
      },
      { role: 'assistant', content: '' },
    ].map((m) => JSON.stringify(m));
    const text = `[\n  ${items.join(separator)}\n]\n`;
    const [c] = inspectSource(decodeSource(Buffer.from(text), 'x.json'), settings).conversations;
    const at = (k: number) => lineColumn(text, text.indexOf(items[k] as string));
    expect(c?.problems.map((p) => [p.kind, p.line, p.column])).toEqual([
      ['missing-result', at(1).line, at(1).column],
      ['empty-assistant', at(2).line, at(2).column],
    ]);
  });
});

describe('failures', () => {
  const compactSettings = { target: 100, counter: createFakeCounter() };

  it('words a message a format refuses as compacting does, naming the record', async () => {
    const text = `${JSON.stringify({ messages: [{ role: 'user', content: 'Hi' }] })}\n${JSON.stringify({
      messages: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 42 },
      ],
    })}\n`;
    const source = (): SourceText => decodeSource(Buffer.from(text), 'r.jsonl');
    const inspecting = await errorOf(() => inspectSource(source(), { format: 'openai', counter: createFakeCounter() }));
    expect(inspecting).toBe(await errorOf(() => compactSource(source(), { ...compactSettings, format: 'openai' })));
    expect(inspecting).toMatch(/^r\.jsonl:2:\d+: line 2 "messages", message 2: /);
  });

  it('words a format it cannot tell as compacting does', async () => {
    const text = JSON.stringify([{ speaker: 'a', words: 'b' }]);
    const source = (): SourceText => decodeSource(Buffer.from(text), 'x.json');
    const inspecting = await errorOf(() => inspectSource(source(), { counter: createFakeCounter() }));
    expect(inspecting).toBe(await errorOf(() => compactSource(source(), compactSettings)));
    expect(inspecting).toMatch(/cannot tell the transcript format/);
  });

  it('refuses an unknown format name as compacting does', async () => {
    const source = (): SourceText => decodeSource(Buffer.from('[{"role":"user","content":"Hi"}]'), 'x.json');
    expect(await errorOf(() => inspectSource(source(), { format: 'nope', counter: createFakeCounter() }))).toBe(
      await errorOf(() => compactSource(source(), { ...compactSettings, format: 'nope' })),
    );
  });
});
