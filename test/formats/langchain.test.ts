import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { renderMessage } from '../../src/core/render.js';
import { InputError } from '../../src/errors.js';
import { decodeSource } from '../../src/io/source.js';
import { compactSource, type FileResult } from '../../src/pipeline/index.js';
import { ROOT, REAL_DATA, tempDir } from '../helpers/cli.js';
import { runSwc, type InProcessRun } from '../helpers/run-in-process.js';
import { createFakeCounter } from '../helpers/fake-counter.js';

type Item = Record<string, unknown>;

const FIXTURES = path.join(ROOT, 'fixtures/langchain');
const NOTE = (n: number): string =>
  `[${n} earlier messages were removed from this conversation to free up context and cannot be recovered.]`;

function fixture(name: string): string {
  return readFileSync(path.join(FIXTURES, name), 'utf8');
}

async function compactText(text: string, target: number, file = 'messages.json'): Promise<FileResult> {
  return await compactSource(decodeSource(Buffer.from(text), file), { target, counter: createFakeCounter(10) });
}

/** The fields of a serialized message in either form. */
function fieldsOf(item: Item): Item {
  return (item.lc !== undefined ? item.kwargs : item.data) as Item;
}

function kindOf(item: Item): string {
  return item.lc !== undefined ? ((item.id as string[]).at(-1) as string) : (item.type as string);
}

/** Call ids made by kept AI messages and answered by kept tool messages must match. */
function pairingProblems(items: readonly Item[]): string[] {
  const calls = new Set<string>();
  const answers = new Set<string>();
  for (const item of items) {
    const fields = fieldsOf(item);
    for (const call of (fields.tool_calls as Item[] | undefined) ?? []) calls.add(call.id as string);
    if (typeof fields.tool_call_id === 'string') answers.add(fields.tool_call_id);
  }
  return [
    ...[...calls].filter((id) => !answers.has(id)).map((id) => `call ${id} lost its result`),
    ...[...answers].filter((id) => !calls.has(id)).map((id) => `result ${id} lost its call`),
  ];
}

describe('LangChain messages', () => {
  it('reads messages_to_dict and dumpd output as the same conversation', async () => {
    const dict = await compactText(fixture('messages-to-dict.json'), 1_000_000);
    const dumpd = await compactText(fixture('dumpd.json'), 1_000_000);
    expect(dict.format).toBe('langchain');
    expect(dumpd.format).toBe('langchain');
    const rendered = (r: FileResult): string[] =>
      r.conversations[0]!.normalized.messages.map((m) => renderMessage(m).text);
    expect(rendered(dumpd)).toEqual(rendered(dict));
    expect(rendered(dict)).toEqual([
      '[system] You are a travel agent. Book only flights the user confirms.',
      '[user] Find me a flight from Lyon to Paris on 3 May.',
      '[assistant -> tool_call] search_flights({"date": "2025-05-03", "from": "LYS", "to": "CDG"})',
      '[tool:search_flights] [{"flight": "AF7641", "departs": "09:05", "price": 89.0}]',
      '[assistant] AF7641 leaves Lyon at 09:05 and costs 89 EUR. Shall I book it?',
      '[user] Yes, book AF7641.',
      // The call is in tool_calls and mirrored in a tool_use block: it is counted once.
      '[assistant] Booking AF7641 now.\n[assistant -> tool_call] book_flight({"flight": "AF7641"})',
      '[tool:book_flight] Booked: confirmation K7Q2ZP.',
      '[assistant] Your flight AF7641 is booked; the confirmation code is K7Q2ZP.',
    ]);
  });

  it('writes the note as a human message in messages_to_dict form, indented like the file', async () => {
    const input = fixture('messages-to-dict.json');
    const items = JSON.parse(input) as Item[];
    const result = await compactText(input, 60);
    const note = {
      type: 'human',
      data: { content: NOTE(4), additional_kwargs: {}, response_metadata: {}, type: 'human', name: null, id: null },
    };
    const expected = [items[0], note, ...items.slice(5)];
    expect(result.output).toBe(`${JSON.stringify(expected, null, 2)}\n`);
    expect(pairingProblems(expected as Item[])).toEqual([]);
  });

  it('writes the note as a HumanMessage constructor in dumpd form', async () => {
    const input = fixture('dumpd.json');
    const items = JSON.parse(input) as Item[];
    const result = await compactText(input, 60);
    const note = {
      lc: 1,
      type: 'constructor',
      id: ['langchain', 'schema', 'messages', 'HumanMessage'],
      kwargs: { content: NOTE(4), type: 'human' },
    };
    expect(result.output).toBe(`${JSON.stringify([items[0], note, ...items.slice(5)], null, 2)}\n`);
  });

  it('removes a call together with its result and keeps the mirrored copies inside the kept message', async () => {
    const input = fixture('messages-to-dict.json');
    const items = JSON.parse(input) as Item[];
    // Target 40: the instructions and the task (20) leave room for the last step only.
    const out = JSON.parse((await compactText(input, 40)).output) as Item[];
    expect(out.map(kindOf)).toEqual(['system', 'human', 'human', 'ai']);
    expect(out[1]).toEqual(items[5]);
    expect(fieldsOf(out[2]!).content).toBe(NOTE(6));
    expect(pairingProblems(out)).toEqual([]);
  });

  it('recognises its own note on a second run and changes nothing', async () => {
    for (const name of ['messages-to-dict.json', 'dumpd.json']) {
      for (const target of [40, 60]) {
        const first = (await compactText(fixture(name), target)).output;
        const second = await compactText(first, target);
        expect(second.changed).toBe(false);
        expect(second.output).toBe(first);
      }
    }
  });

  it('names the item a chat message with an unknown role is', async () => {
    const text = JSON.stringify([
      { type: 'human', data: { content: 'hi' } },
      { type: 'chat', data: { content: 'hello', role: 'narrator' } },
    ]);
    const run = async (): Promise<FileResult> => await compactText(text, 1);
    await expect(run()).rejects.toThrow(InputError);
    await expect(run()).rejects.toThrow(
      'messages.json:1:43: message 2: chat message with role "narrator" (expected user, assistant, system or tool)',
    );
  });
});

describe('LangChain messages: the real derived files through the CLI', () => {
  const dir = path.join(REAL_DATA, 'langchain');
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort();

  it('counts both serialized forms of the same conversation alike', async () => {
    const runs: InProcessRun[] = [];
    for (const f of files) runs.push(await runSwc(['compact', path.join(dir, f), '-t', '3000'], { cwd: ROOT }));
    const [dumpd, dict] = runs;
    expect(dumpd!.status).toBe(0);
    expect(dict!.status).toBe(0);
    const numbers = (stderr: string): string => stderr.replace(/^swc: [^:]+: /, '');
    expect(numbers(dumpd!.stderr)).toBe(numbers(dict!.stderr));
    expect(numbers(dict!.stderr)).toMatch(
      /^7,632 → [\d,]+ tokens \(−\d+%, o200k_base\), removed 44 of 62 messages; target 3,000 met\n$/,
    );
  });

  for (const file of files) {
    it(`compacts ${file} at several targets, keeping the instructions, the task and every call with its result`, async () => {
      const source = path.join(dir, file);
      const input = JSON.parse(readFileSync(source, 'utf8')) as Item[];
      const task = [...input].reverse().find((m) => kindOf(m) === 'human' || kindOf(m) === 'HumanMessage');
      const tmp = tempDir();
      for (const target of ['2000', '5000']) {
        const outFile = path.join(tmp, `${target}.json`);
        expect((await runSwc(['compact', source, '-t', target, '-o', outFile], { cwd: ROOT })).status).toBe(0);
        const text = readFileSync(outFile, 'utf8');
        const out = JSON.parse(text) as Item[];
        expect((await compactText(text, 1_000_000)).format).toBe('langchain');
        expect(out[0]).toEqual(input[0]);
        expect(out).toContainEqual(task);
        expect(pairingProblems(out)).toEqual([]);
        const again = await runSwc(['compact', outFile, '-t', target], { cwd: ROOT });
        expect(again.status).toBe(0);
        expect(again.stdout).toBe(text);
      }
    });
  }
});
