import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { isIndexToken, parsePointer, pointerOf, PointerSyntaxError } from '../../src/io/json-pointer.js';
import { REAL_DATA, tempDir } from '../helpers/cli.js';
import { runSwc } from '../helpers/run-in-process.js';

/**
 * --conversation-path reaches a conversation anywhere in a JSON value (RFC 6901 JSON Pointer), in a single file and
 * in each record; everything outside the list stays byte for byte.
 */

const SAVED_STATE = path.join(REAL_DATA, 'haystack/haystack-experimental-saved_state-answer_joiner.json');
const TAUBENCH = path.join(REAL_DATA, 'haystack/DERIVED-taubench-airline-task109.haystack.json');
const POINTER = '/input_data/serialized_data/gpt-4o/messages';
const TARGET = ['-t', '2000', '--tokenizer', 'approx'];

/**
 * A Haystack saved state (the real one, its indentation kept) whose gpt-4o messages are the 62-message taubench
 * conversation, and the offsets of that list in its text.
 */
function savedState(): { text: string; start: number; end: number } {
  const state = readFileSync(SAVED_STATE, 'utf8');
  const messages = readFileSync(TAUBENCH, 'utf8').trim();
  // The first "messages" list of the file is gpt-4o's under input_data.serialized_data.
  const at = state.indexOf('"messages"', state.indexOf('"gpt-4o"'));
  const start = state.indexOf('[', at);
  let depth = 0;
  let end = start;
  for (; end < state.length; end++) {
    const c = state[end];
    if (c === '[') depth++;
    else if (c === ']' && --depth === 0) break;
  }
  const text = state.slice(0, start) + messages + state.slice(end + 1);
  return { text, start, end: start + messages.length };
}

describe('--conversation-path', () => {
  it('compacts a Haystack saved state deep inside, as the conversation alone, every other byte kept', async () => {
    const dir = tempDir();
    const { text, start, end } = savedState();
    writeFileSync(path.join(dir, 'state.json'), text);
    const alone = await runSwc(['compact', TAUBENCH, ...TARGET, '-o', path.join(dir, 'alone.json')], { cwd: dir });
    expect(alone.status).toBe(0);
    const r = await runSwc(['compact', 'state.json', ...TARGET, '--conversation-path', POINTER, '-o', 'out.json'], {
      cwd: dir,
    });
    expect(r.status).toBe(0);
    expect(r.stderr).toContain('removed');
    const out = readFileSync(path.join(dir, 'out.json'), 'utf8');
    const tail = text.length - end;
    expect(out.slice(0, start)).toBe(text.slice(0, start));
    expect(out.slice(out.length - tail)).toBe(text.slice(end));
    const list = JSON.parse(out.slice(start, out.length - tail)) as unknown;
    expect(list).toEqual(JSON.parse(readFileSync(path.join(dir, 'alone.json'), 'utf8')));
    // The same through swc inspect.
    const inspect = await runSwc(['inspect', 'state.json', '--tokenizer', 'approx', '--conversation-path', POINTER], {
      cwd: dir,
    });
    expect(inspect.stdout).toContain('62 messages');
  });

  it('reaches the conversation of each JSONL line, and each record of a list', async () => {
    const dir = tempDir();
    const { text } = savedState();
    const record = JSON.stringify(JSON.parse(text));
    writeFileSync(path.join(dir, 'states.jsonl'), `${record}\n${record}\n`);
    writeFileSync(path.join(dir, 'states.json'), `[${record}, ${record}]`);
    for (const file of ['states.jsonl', 'states.json']) {
      const r = await runSwc(['compact', file, ...TARGET, '--conversation-path', POINTER, '-o', `out-${file}`], {
        cwd: dir,
      });
      expect(r.status).toBe(0);
      const out = readFileSync(path.join(dir, `out-${file}`), 'utf8');
      const records = (
        file.endsWith('.jsonl')
          ? out
              .trim()
              .split('\n')
              .map((l) => JSON.parse(l) as unknown)
          : (JSON.parse(out) as unknown[])
      ) as Array<{
        input_data: { serialized_data: Record<string, { messages: unknown[] }> };
      }>;
      expect(records).toHaveLength(2);
      for (const rec of records) {
        expect(rec.input_data.serialized_data['gpt-4o']?.messages.length).toBeLessThan(62);
        expect(rec.input_data.serialized_data['gpt-3']?.messages).toHaveLength(2);
      }
    }
  });

  it('follows list indexes and ~1, ~0 escapes', async () => {
    const dir = tempDir();
    const messages = JSON.parse(readFileSync(TAUBENCH, 'utf8')) as unknown;
    writeFileSync(path.join(dir, 'odd.json'), JSON.stringify({ 'a/b': [{ 'c~d': messages }] }, null, 2));
    const r = await runSwc(
      ['compact', 'odd.json', ...TARGET, '--conversation-path', '/a~1b/0/c~0d', '-o', 'out.json'],
      { cwd: dir },
    );
    expect(r.status).toBe(0);
    const out = JSON.parse(readFileSync(path.join(dir, 'out.json'), 'utf8')) as Record<
      string,
      Array<Record<string, unknown[]>>
    >;
    expect(out['a/b']?.[0]?.['c~d']?.length).toBeLessThan(62);
  });

  it('is suggested, with the path found, when no usual key holds the conversation', async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'state.json'), savedState().text);
    const r = await runSwc(['compact', 'state.json', ...TARGET], { cwd: dir });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(
      /no message list found: .*; a list of messages is at \/input_data\/serialized_data\/gpt-4o\/messages: pass --conversation-path \/input_data\/serialized_data\/gpt-4o\/messages\n$/,
    );
  });

  it('says where a path leads nowhere, in one line with exit 2', async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'state.json'), savedState().text);
    const missing = await runSwc(
      ['compact', 'state.json', ...TARGET, '--conversation-path', '/input_data/serialized_data/gpt-5/messages'],
      { cwd: dir },
    );
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(
      /^swc: state\.json:\d+:\d+: no key "gpt-5" at \/input_data\/serialized_data \(found keys: "gpt-4o", "gpt-3", .*\), so --conversation-path \/input_data\/serialized_data\/gpt-5\/messages leads nowhere\n$/,
    );
    const notList = await runSwc(['compact', 'state.json', ...TARGET, '--conversation-path', '/timestamp'], {
      cwd: dir,
    });
    expect(notList.stderr).toMatch(
      /^swc: state\.json:\d+:\d+: \/timestamp is a string, not a list of messages \(--conversation-path\)\n$/,
    );
  });

  it('is a usage error with --conversation-key, or when it is not a JSON Pointer', async () => {
    const dir = tempDir();
    const both = await runSwc(
      ['compact', 'x.json', ...TARGET, '--conversation-path', '/a', '--conversation-key', 'a'],
      { cwd: dir },
    );
    expect(both.status).toBe(2);
    expect(both.stderr).toMatch(/^swc: error: --conversation-path and --conversation-key cannot be used together/);
    const bad = await runSwc(['compact', 'x.json', ...TARGET, '--conversation-path', 'a/b'], { cwd: dir });
    expect(bad.stderr).toBe(
      'swc: error: --conversation-path: a JSON Pointer starts with "/" (as in /input_data/messages), got "a/b"\n',
    );
    const inspect = await runSwc(['inspect', 'x.json', '--conversation-path', '/a~2'], { cwd: dir });
    expect(inspect.status).toBe(2);
    expect(inspect.stderr).toContain('"~" in a JSON Pointer must be followed by 0');
  });
});

describe('JSON Pointer syntax', () => {
  it('reads back every list of tokens it writes', () => {
    fc.assert(
      fc.property(fc.array(fc.string()), (tokens) => {
        expect(parsePointer(pointerOf(tokens))).toEqual(tokens);
      }),
    );
  });

  it('follows RFC 6901 examples', () => {
    expect(parsePointer('')).toEqual([]);
    expect(parsePointer('/')).toEqual(['']);
    expect(parsePointer('/a~1b')).toEqual(['a/b']);
    expect(parsePointer('/m~0n')).toEqual(['m~n']);
    expect(parsePointer('/~01')).toEqual(['~1']);
    expect(() => parsePointer('#/a')).toThrow(PointerSyntaxError);
    expect(isIndexToken('0')).toBe(true);
    expect(isIndexToken('01')).toBe(false);
    expect(isIndexToken('-')).toBe(false);
  });
});
