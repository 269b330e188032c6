import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { InputError } from '../../src/errors.js';
import { formatNames } from '../../src/formats/registry.js';
import { decodeSource } from '../../src/io/source.js';
import { compactSource, type FileResult } from '../../src/pipeline/index.js';
import { ROOT, REAL_DATA, tempDir } from '../helpers/cli.js';
import { runSwc } from '../helpers/run-in-process.js';
import { createFakeCounter } from '../helpers/fake-counter.js';
import { pairingProblems } from '../helpers/invariants.js';
import { expectOnlyListsChanged } from '../helpers/multi-conversation.js';

type Item = Record<string, unknown>;

const FIXTURES = path.join(ROOT, 'fixtures/multi');
const NOTE = (n: number): string =>
  `[${n} earlier messages were removed from this conversation to free up context and cannot be recovered.]`;

function fixture(name: string): string {
  return readFileSync(path.join(FIXTURES, name), 'utf8');
}

async function compactText(text: string, target: number, file: string, conversationKey?: string): Promise<FileResult> {
  return await compactSource(decodeSource(Buffer.from(text), file), {
    target,
    counter: createFakeCounter(10),
    conversationKey,
  });
}

describe('files that hold many conversations', () => {
  it('compacts each record of a JSON list on its own and leaves a record that needs nothing byte for byte', async () => {
    const input = fixture('records.json');
    const records = JSON.parse(input) as Item[];
    const result = await compactText(input, 50, 'records.json');
    expect(result.records).toBe(true);
    expect(result.conversationCount).toBe(3);
    expect(result.changedConversations).toBe(2);
    expect(result.format).toBe('openai');
    expect(result.conversations.map((c) => c.slot.where)).toEqual([
      'record 1 "messages"',
      'record 2 "messages"',
      'record 3 "messages"',
    ]);
    const cut = (record: Item): Item => {
      const messages = record.messages as Item[];
      return { ...record, messages: [messages[0], { role: 'user', content: NOTE(4) }, ...messages.slice(5)] };
    };
    // Python wrote the score of run 2 as 1.0; swc copies it as written.
    const expected = JSON.stringify([cut(records[0]!), records[1], cut(records[2]!)], null, 2).replace(
      '"score": 1,',
      '"score": 1.0,',
    );
    expect(result.output).toBe(`${expected}\n`);
    expect(expectOnlyListsChanged(input, result.output, 'records.json')).toBe(2);
  });

  it('compacts JSONL with one record per line, each line on its own', async () => {
    const input = fixture('records.jsonl');
    const result = await compactText(input, 50, 'records.jsonl');
    expect(result.conversations.map((c) => c.slot.where)).toEqual([
      'line 1 "messages"',
      'line 2 "messages"',
      'line 3 "messages"',
    ]);
    expect(result.changedConversations).toBe(2);
    const inLines = input.split('\n');
    const outLines = result.output.split('\n');
    expect(outLines).toHaveLength(inLines.length);
    expect(outLines[1]).toBe(inLines[1]);
    expect(expectOnlyListsChanged(input, result.output, 'records.jsonl')).toBe(2);
    // The note is written in the line's own style.
    expect(outLines[0]).toContain(
      `{"role": "system", "content": "You are a weather assistant."}, {"role": "user", "content": "${NOTE(4)}"}, {"role": "user", "content": "And in Rome?"}`,
    );
  });

  it('changes nothing on a second run', async () => {
    for (const name of ['records.json', 'records.jsonl', 'sharegpt.json', 'sharegpt-typed.jsonl']) {
      const first = (await compactText(fixture(name), 50, name)).output;
      const second = await compactText(first, 50, name);
      expect(second.changedConversations).toBe(0);
      expect(second.output).toBe(first);
    }
  });

  it('finds conversations under the key --conversation-key names', async () => {
    const input = fixture('dialog.json');
    const result = await compactText(input, 50, 'dialog.json', 'dialog');
    expect(result.conversations.map((c) => c.slot.where)).toEqual(['record 1 "dialog"', 'record 2 "dialog"']);
    expect(result.changedConversations).toBe(1);
    expect(expectOnlyListsChanged(input, result.output, 'dialog.json', 'dialog')).toBe(1);
  });

  it('suggests --conversation-key when the items look like records under another key', async () => {
    const run = async (): Promise<FileResult> => await compactText(fixture('dialog.json'), 50, 'dialog.json');
    await expect(run()).rejects.toThrow(InputError);
    await expect(run()).rejects.toThrow(
      'dialog.json: cannot tell the transcript format of the top-level list (first item has keys "name", "dialog"); pass --format (' +
        `${formatNames().join(', ')}), or --conversation-key "dialog" if each item is a record holding its conversation there`,
    );
  });

  it('points at a record that holds no conversation', async () => {
    const run = await runSwc(['compact', path.join(FIXTURES, 'missing-key.json'), '-t', '50'], { cwd: ROOT });
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      `swc: ${path.join(FIXTURES, 'missing-key.json')}:18:3: record 2 holds no conversation: expected a list under "messages", "conversations", "traj", "history" ` +
        '(as in the first record; --conversation-key names another key)\n',
    );
  });

  it('names the record and the message of an error inside a record', async () => {
    const text = JSON.stringify([
      { messages: [{ role: 'user', content: 'hi' }] },
      { messages: [{ role: 'robot', content: 'beep' }] },
    ]);
    const run = async (): Promise<FileResult> =>
      await compactSource(decodeSource(Buffer.from(text), 'r.json'), {
        target: 5,
        format: 'openai',
        counter: createFakeCounter(10),
      });
    await expect(run()).rejects.toThrow(
      'r.json:1:61: record 2 "messages", message 1: unknown role "robot" (expected system, developer, user, assistant, tool or function)',
    );
  });

  it('accepts an empty conversation among records and leaves it alone', async () => {
    const text = JSON.stringify([{ messages: [{ role: 'user', content: 'hi' }] }, { id: 2, messages: [] }]);
    const result = await compactText(text, 5, 'r.json');
    expect(result.format).toBe('openai');
    expect(result.conversationCount).toBe(2);
    expect(result.output).toBe(text);
  });

  it('reads a session log or a plain message list as one conversation, not as records', async () => {
    const session = await compactText(
      readFileSync(path.join(ROOT, 'fixtures/claude-code/split-assistant.jsonl'), 'utf8'),
      1_000_000,
      's.jsonl',
    );
    expect(session.records).toBe(false);
    expect(session.conversationCount).toBe(1);
    const list = await compactText(JSON.stringify([{ role: 'user', content: 'hi' }]), 1_000_000, 'l.json');
    expect(list.records).toBe(false);
    expect(list.conversations[0]!.slot.where).toBe('the top-level list');
  });
});

describe('files that hold many conversations: real trajectories through the CLI', () => {
  it('compacts a SWE-agent trajectory under "history", every other byte of the file kept', async () => {
    const source = path.join(REAL_DATA, 'openai-chat/sweagent-marshmallow-1867-function_calling_replace.traj.json');
    const input = readFileSync(source, 'utf8');
    const history = (JSON.parse(input) as { history: Item[] }).history;
    const tmp = tempDir();
    for (const target of ['1500', '4000']) {
      const outFile = path.join(tmp, `${target}.json`);
      expect((await runSwc(['compact', source, '-t', target, '-o', outFile], { cwd: ROOT })).status).toBe(0);
      const output = readFileSync(outFile, 'utf8');
      expect(expectOnlyListsChanged(input, output, 'traj.json')).toBe(1);
      const kept = (JSON.parse(output) as { history: Item[] }).history;
      expect(kept[0]).toEqual(history[0]);
      expect(kept).toContainEqual([...history].reverse().find((m) => m.role === 'user'));
      expect(pairingProblems(history, kept)).toEqual([]);
      expect((await runSwc(['compact', outFile, '-t', target], { cwd: ROOT })).stdout).toBe(output);
    }
  });
});
