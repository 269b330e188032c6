import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { renderMessage } from '../../src/core/render.js';
import { decodeSource } from '../../src/io/source.js';
import { compactSource, type FileResult } from '../../src/pipeline/index.js';
import { ROOT, REAL_DATA, tempDir } from '../helpers/cli.js';
import { runSwc } from '../helpers/run-in-process.js';
import { createFakeCounter } from '../helpers/fake-counter.js';

type Item = Record<string, unknown>;
type Record_ = { conversations?: Item[]; messages?: Item[] } & Item;

const FIXTURES = path.join(ROOT, 'fixtures/multi');
const NOTE = (n: number): string =>
  `[${n} earlier messages were removed from this conversation to free up context and cannot be recovered.]`;

function fixture(name: string): string {
  return readFileSync(path.join(FIXTURES, name), 'utf8');
}

async function compactText(text: string, target: number, file: string): Promise<FileResult> {
  return await compactSource(decodeSource(Buffer.from(text), file), { target, counter: createFakeCounter(10) });
}

function parseJsonl(text: string): Record_[] {
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record_);
}

/** The speaker of an item in either shape. */
function speaker(item: Item): string {
  return (item.from ?? item.role) as string;
}

/**
 * Calls and observations link by position: every observation follows a call or another observation, and
 * every run of calls is followed by as many observations as there are calls in it (or by none, at the end).
 */
function pairingProblems(conversation: readonly Item[]): string[] {
  const problems: string[] = [];
  const callsIn = (item: Item): number => {
    if (speaker(item) === 'function_call') return 1;
    return Array.isArray(item.content) ? (item.content as Item[]).filter((p) => p.type === 'tool_call').length : 0;
  };
  const isObservation = (item: Item): boolean => speaker(item) === 'observation' || speaker(item) === 'tool';
  conversation.forEach((item, k) => {
    const before = conversation[k - 1];
    if (isObservation(item) && (before === undefined || (!isObservation(before) && callsIn(before) === 0)))
      problems.push(`observation ${k} answers no call`);
    if (callsIn(item) > 0 && k + 1 < conversation.length) {
      const next = conversation[k + 1] as Item;
      if (!isObservation(next) && callsIn(next) === 0 && speaker(next) !== 'gpt' && speaker(next) !== 'assistant')
        problems.push(`call ${k} lost its observation`);
    }
  });
  return problems;
}

describe('ShareGPT records', () => {
  it('makes one assistant message of a gpt message and the function_call after it, and names observations by position', async () => {
    const result = await compactText(fixture('sharegpt.json'), 1_000_000, 'sharegpt.json');
    expect(result.format).toBe('sharegpt');
    const { normalized } = result.conversations[0]!;
    expect(normalized.messages.map((m) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'assistant',
      'user',
      'assistant',
      'tool',
      'assistant',
    ]);
    // The record's system prompt stands for no item of the list.
    expect(normalized.itemsOf).toEqual([[], [0], [1, 2], [3], [4], [5], [6], [7], [8]]);
    expect(normalized.messages.map((m) => m.weight ?? 1)).toEqual([0, 1, 2, 1, 1, 1, 1, 1, 1]);
    expect(normalized.messages.map((m) => renderMessage(m).text).slice(0, 4)).toEqual([
      '[system] You answer weather questions.',
      "[user] What's the weather in Oslo?",
      '[assistant] Let me check.\n[assistant -> tool_call] get_weather({"city": "Oslo"})',
      '[tool:get_weather] {"temp_c": 4}',
    ]);
    // Two calls in a row, then their observations: each observation takes the call at its position.
    const third = result.conversations[2]!.normalized;
    expect(third.itemsOf).toEqual([[0], [1, 2], [3], [4], [5], [6]]);
    expect(renderMessage(third.messages[4]!).text).toBe('[tool:get_weather] {"temp_c": 13}');
  });

  it('removes whole turns and steps per record and writes the note as a human message', async () => {
    const input = fixture('sharegpt.json');
    const records = JSON.parse(input) as Record_[];
    const human = (n: number): Item => ({ from: 'human', value: NOTE(n) });
    const at60 = await compactText(input, 60, 'sharegpt.json');
    const c0 = records[0]!.conversations!;
    const expected60 = [{ ...records[0], conversations: [human(5), ...c0.slice(5)] }, records[1], records[2]];
    expect(at60.output).toBe(`${JSON.stringify(expected60, null, 2)}\n`);
    expect(at60.changedConversations).toBe(1);

    const at40 = await compactText(input, 40, 'sharegpt.json');
    const c2 = records[2]!.conversations!;
    const expected40 = [
      { ...records[0], conversations: [c0[5], human(7), c0[8]] },
      records[1],
      // The gpt message and its function_call went together, with the observation after them.
      { ...records[2], conversations: [c2[0], human(3), ...c2.slice(4)] },
    ];
    expect(at40.output).toBe(`${JSON.stringify(expected40, null, 2)}\n`);
    for (const record of JSON.parse(at40.output) as Record_[])
      expect(pairingProblems(record.conversations!)).toEqual([]);
  });

  it('reads typed content parts and writes the note in that shape', async () => {
    const input = fixture('sharegpt-typed.jsonl');
    const inRecords = parseJsonl(input);
    const { normalized } = (await compactText(input, 1_000_000, 'typed.jsonl')).conversations[0]!;
    expect(normalized.messages.map((m) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'assistant',
      'user',
      'assistant',
      'tool',
      'assistant',
    ]);
    expect(renderMessage(normalized.messages[6]!).text).toBe(
      '[assistant -> tool_call] add({"a": 391, "b": 9})\n[assistant -> tool_call] add({"a": 0, "b": 400})',
    );
    expect(renderMessage(normalized.messages[4]!).text).toBe('[assistant] 17 * 23 = 391.');

    const result = await compactText(input, 60, 'typed.jsonl');
    const lines = result.output.split('\n');
    const note = `{"role": "user", "content": [{"type": "text", "value": "${NOTE(4)}"}]}`;
    expect(lines[0]).toContain(
      `"messages": [${JSON.stringify(inRecords[0]!.messages![0]).replace(/":/g, '": ').replace(/,"/g, ', "')}, ${note}, `,
    );
    const out = parseJsonl(result.output);
    expect(out[0]).toEqual({
      ...inRecords[0],
      messages: [inRecords[0]!.messages![0], JSON.parse(note), ...inRecords[0]!.messages!.slice(5)],
    });
    expect(lines[1]).toBe(input.split('\n')[1]);
  });

  it("tells LLaMA-Factory's role/content rows with function_call and observation from OpenAI chat", async () => {
    const row = {
      messages: [
        { role: 'user', content: 'Convert 10 USD to EUR.' },
        {
          role: 'function_call',
          content: '{"name": "convert", "arguments": {"amount": 10, "from": "USD", "to": "EUR"}}',
        },
        { role: 'observation', content: '{"amount": 9.2}' },
        { role: 'assistant', content: '10 USD is 9.20 EUR.' },
        { role: 'user', content: 'And 20 USD?' },
        { role: 'assistant', content: '20 USD is 18.40 EUR.' },
      ],
    };
    const text = `${JSON.stringify(row)}\n`;
    const result = await compactText(text, 40, 'rows.jsonl');
    expect(result.format).toBe('sharegpt');
    expect(renderMessage(result.conversations[0]!.normalized.messages[2]!).text).toBe('[tool:convert] {"amount": 9.2}');
    expect(parseJsonl(result.output)[0]!.messages).toEqual([
      { role: 'user', content: NOTE(4) },
      ...row.messages.slice(4),
    ]);
  });

  it('changes nothing on a second run at the same target', async () => {
    for (const [name, file] of [
      ['sharegpt.json', 'a.json'],
      ['sharegpt-typed.jsonl', 'b.jsonl'],
    ] as const) {
      for (const target of [40, 60]) {
        const first = (await compactText(fixture(name), target, file)).output;
        const second = await compactText(first, target, file);
        expect(second.changed).toBe(false);
        expect(second.output).toBe(first);
      }
    }
  });
});

describe('ShareGPT records: the real LLaMA-Factory datasets through the CLI', () => {
  const cases = [
    { file: 'llamafactory-glaive_toolcall_en_demo.json', key: 'conversations', jsonl: false },
    { file: 'llamafactory-reason_tool_use_demo_50.jsonl', key: 'messages', jsonl: true },
  ] as const;
  for (const { file, key, jsonl } of cases) {
    it(`compacts every record of ${file} on its own, keeping the other fields, the task and the call pairing`, async () => {
      const source = path.join(REAL_DATA, 'sharegpt', file);
      const text = readFileSync(source, 'utf8');
      const input: Record_[] = jsonl ? parseJsonl(text) : (JSON.parse(text) as Record_[]);
      const tmp = tempDir();
      for (const target of ['300', '1200']) {
        const outFile = path.join(tmp, `${target}-${file}`);
        const run = await runSwc(['compact', source, '-t', target, '-o', outFile], { cwd: ROOT });
        expect(run.status).toBe(0);
        const outText = readFileSync(outFile, 'utf8');
        const out: Record_[] = jsonl ? parseJsonl(outText) : (JSON.parse(outText) as Record_[]);
        expect(out).toHaveLength(input.length);
        let changed = 0;
        out.forEach((record, k) => {
          const before = input[k] as Record_;
          const conversation = record[key] as Item[];
          const original = before[key] as Item[];
          const { [key]: _a, ...restOut } = record;
          const { [key]: _b, ...restIn } = before;
          expect(restOut).toEqual(restIn);
          if (JSON.stringify(conversation) !== JSON.stringify(original)) changed++;
          expect(pairingProblems(conversation)).toEqual([]);
          // The leading system message and the last human message (the task) are kept.
          const lastHuman = [...original].reverse().find((m) => speaker(m) === 'human' || speaker(m) === 'user');
          if (lastHuman !== undefined) expect(conversation).toContainEqual(lastHuman);
          if (speaker(original[0]!) === 'system') expect(conversation[0]).toEqual(original[0]);
        });
        expect(changed).toBeGreaterThan(0);
        if (jsonl) {
          // A record that needed nothing is its line, byte for byte.
          const inLines = text.split('\n');
          outText.split('\n').forEach((line, k) => {
            if (JSON.stringify(out[k]) === JSON.stringify(input[k])) expect(line).toBe(inLines[k]);
          });
        }
        const again = await runSwc(['compact', outFile, '-t', target], { cwd: ROOT });
        expect(again.status).toBe(0);
        expect(again.stdout).toBe(outText);
      }
    });
  }
});
