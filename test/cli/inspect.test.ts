/**
 * `swc inspect`: the pairing checks on their own, then the built CLI on temporary copies of the broken fixtures
 * (one per problem kind) and on the real transcripts in ../shared/data.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkPairing, inspectSource } from '../../src/cli/inspect.js';
import { textContent } from '../../src/core/render.js';
import type { Message } from '../../src/core/types.js';
import { haystack } from '../../src/formats/haystack.js';
import { openai } from '../../src/formats/openai.js';
import type { ConversationInput, Pairing } from '../../src/formats/types.js';
import { decodeSource } from '../../src/io/source.js';
import { createFakeCounter } from '../helpers/fake-counter.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const fixtures = path.join(root, 'fixtures/inspect');
const data = path.resolve(root, '../shared/data');
const cli = path.join(root, 'bin/swc.js');

const msg = (role: Message['role']): Message => ({ role, content: textContent('x') });

describe('pairing checks', () => {
  // Messages: 0 user, 1 assistant (calls), 2 tool, 3 tool, 4 assistant, 5 tool; items are messages here.
  const roles: Message[] = [msg('user'), msg('assistant'), msg('tool'), msg('tool'), msg('assistant'), msg('tool')];
  const check = (pairing: Pairing) => checkPairing(pairing, (item) => item, roles, (item) => item + 10);

  it('accepts calls answered by the tool messages right after them', () => {
    expect(
      check({
        calls: [
          { item: 1, id: 'a', name: 'search' },
          { item: 1, id: 'b', name: 'read' },
        ],
        results: [
          { item: 2, id: 'b', name: '' },
          { item: 3, id: 'a', name: '' },
        ],
      }),
    ).toEqual([]);
  });

  it('flags a call without a result, and a result without a call', () => {
    expect(
      check({
        calls: [{ item: 1, id: 'a', name: 'search' }],
        results: [{ item: 2, id: 'z', name: '' }],
      }),
    ).toEqual([
      { kind: 'orphan-result', item: 2, text: 'result for call id "z" answers no call' },
      { kind: 'missing-result', item: 1, text: 'tool call "a" (search) has no result' },
    ]);
  });

  it('flags a result that is not right after its call, and the call it leaves unanswered', () => {
    expect(
      check({
        calls: [{ item: 1, id: 'a', name: 'search' }],
        results: [{ item: 5, id: 'a', name: '' }],
      }),
    ).toEqual([
      { kind: 'orphan-result', item: 5, text: 'result for call id "a" is not right after its call (line 11)' },
      { kind: 'missing-result', item: 1, text: 'tool call "a" (search) has no result right after it' },
    ]);
  });

  it('flags a second result for a call that already has one', () => {
    expect(
      check({
        calls: [{ item: 1, id: 'a', name: 'search' }],
        results: [
          { item: 2, id: 'a', name: '' },
          { item: 3, id: 'a', name: '' },
        ],
      }),
    ).toEqual([{ kind: 'orphan-result', item: 3, text: 'result for call id "a" repeats a result the call already has' }]);
  });

  it('flags a call id used twice', () => {
    expect(
      check({
        calls: [
          { item: 1, id: 'a', name: 'search' },
          { item: 4, id: 'a', name: 'search' },
        ],
        results: [
          { item: 2, id: 'a', name: '' },
          { item: 5, id: 'a', name: '' },
        ],
      }),
    ).toEqual([{ kind: 'duplicate-id', item: 4, text: 'call id "a" (search) is already used by the call on line 11' }]);
  });

  it('pairs calls and results without ids by tool name, in order', () => {
    expect(
      check({
        calls: [
          { item: 1, id: null, name: 'search' },
          { item: 1, id: null, name: 'read' },
        ],
        results: [
          { item: 2, id: null, name: 'read' },
          { item: 3, id: null, name: 'write' },
        ],
      }),
    ).toEqual([
      { kind: 'orphan-result', item: 3, text: 'result of write (no call id) answers no call right before it' },
      { kind: 'missing-result', item: 1, text: 'tool call without an id (search) has no result' },
    ]);
  });
});

/** A ConversationInput over parsed items, for calling an adapter's `pairing` directly. */
function inputOf(items: unknown[]): ConversationInput {
  return {
    file: 'x.json',
    items,
    raws: items.map((i) => JSON.stringify(i)),
    container: null,
    fail(item, reason): never {
      throw new Error(`${item}: ${reason}`);
    },
  };
}

describe('adapter pairing', () => {
  it('reads OpenAI tool_call ids, tool_call_id and SWE-agent tool_call_ids, and unknown roles', () => {
    const pairing = openai.pairing?.(
      inputOf([
        { role: 'assistant', content: null, tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'a', content: 'r' },
        { role: 'tool', tool_call_ids: ['b', 'c'], content: 'r' },
        { role: 'narrator', content: 'r' },
        { role: 'constructor', content: 'r' },
        'not a message',
      ]),
    );
    expect(pairing).toEqual({
      calls: [{ item: 0, id: 'a', name: 'f' }],
      results: [
        { item: 1, id: 'a', name: '' },
        { item: 2, id: 'b', name: '' },
        { item: 2, id: 'c', name: '' },
      ],
      unknownRoles: [
        { item: 3, role: 'narrator' },
        { item: 4, role: 'constructor' },
        { item: 5, role: null },
      ],
    });
  });

  it('reads Haystack tool_call ids and the origin of each tool_call_result', () => {
    const call = { tool_name: 'f', arguments: {}, id: 'a' };
    const pairing = haystack.pairing?.(
      inputOf([
        { role: 'assistant', meta: {}, content: [{ text: 'hi' }, { tool_call: call }, { tool_call: { ...call, id: null, tool_name: 'g' } }] },
        { role: 'tool', meta: {}, content: [{ tool_call_result: { result: 'r', origin: call, error: false } }] },
        { role: 'robot', meta: {}, content: [] },
      ]),
    );
    expect(pairing).toEqual({
      calls: [
        { item: 0, id: 'a', name: 'f' },
        { item: 0, id: null, name: 'g' },
      ],
      results: [{ item: 1, id: 'a', name: 'f' }],
      unknownRoles: [{ item: 2, role: 'robot' }],
    });
  });
});

describe('inspecting a source', () => {
  it('counts every group and leaves messages of unknown role out of the structure, flagging them', () => {
    const text = JSON.stringify([
      { role: 'system', content: 'S' },
      { role: 'user', content: 'U' },
      { role: 'narrator', content: 'N' },
      { role: 'assistant', content: 'A' },
    ]);
    const inspection = inspectSource(decodeSource(Buffer.from(text), 'x.json'), { format: 'auto', counter: createFakeCounter() });
    const [c] = inspection.conversations;
    expect(c?.groups.map((g) => [g.kind, g.start, g.end, g.tokens])).toEqual([
      ['system', 0, 1, 10],
      ['task', 1, 2, 10],
      ['step', 2, 3, 10],
    ]);
    expect(c?.tokens).toBe(30);
    expect(c?.problems).toEqual([
      { kind: 'unknown-role', item: 2, message: null, line: 1, column: 64, text: 'unknown role "narrator" (left out of the structure above)' },
    ]);
  });
});

/** Runs the built CLI like a user in a pipe: no terminal, and colour only when the environment asks for it. */
function swc(args: string[], env: Record<string, string> = { NO_COLOR: '1' }, cwd = root) {
  const base = { ...process.env };
  delete base.FORCE_COLOR;
  delete base.NO_COLOR;
  const r = spawnSync(process.execPath, [cli, ...args], { cwd, env: { ...base, ...env }, encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('swc inspect (built CLI)', () => {
  let dir: string;
  beforeAll(() => {
    if (!existsSync(path.join(root, 'dist/cli/inspect.js'))) throw new Error('build first: npx tsc -p tsconfig.build.json');
    dir = mkdtempSync(path.join(tmpdir(), 'swc-inspect-'));
    for (const f of readdirSync(fixtures)) copyFileSync(path.join(fixtures, f), path.join(dir, f));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('exits 0 and says so when there is no problem', () => {
    const r = swc(['inspect', '--tokenizer', 'approx', 'clean.json'], { NO_COLOR: '1' }, dir);
    expect(r.status).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(
      [
        'inspect: clean.json',
        'format openai  tokenizer approx',
        '',
        '8 messages, 83 tokens:  instructions 8  1 turn 41  task 5  1 step 28',
        '  system  #0     1 msg   8 tok  You are a travel agent.',
        '  turn 1  #1-4  4 msgs  41 tok  What is the weather in Oslo?',
        '  task    #5     1 msg   5 tok  And in Bergen?',
        '  step 1  #6-7  2 msgs  28 tok  get_weather → 1 result · Let me check.',
        '',
        'no problems found',
        '',
      ].join('\n'),
    );
  });

  it.each([
    ['missing-result.json', 'missing-result', 37, 6, 'tool call "call_3" (get_forecast) has no result'],
    ['orphan-result.json', 'orphan-result', 41, 7, 'result for call id "call_9" answers no call'],
    ['duplicate-id.json', 'duplicate-id', 37, 6, 'call id "call_1" (get_weather) is already used by the call on line 10'],
    ['empty-assistant.json', 'empty-assistant', 37, 6, 'assistant message has nothing in it (no text, tool call, image or file)'],
    ['haystack-missing-result.json', 'missing-result', 22, 2, 'tool call "call_2" (get_weather) has no result'],
  ])('flags %s and exits 1', (file, kind, line, message, text) => {
    const r = swc(['inspect', '--tokenizer', 'approx', file], { NO_COLOR: '1' }, dir);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain(`\n1 problem:\n  ${file}:${line}:3  #${message}  ${kind}\n    ${text}\n`);
    expect(r.stdout).toMatch(/^! step 1 /m);
  });

  it('flags a message of unknown role and exits 1', () => {
    const r = swc(['inspect', '--tokenizer', 'approx', 'unknown-role.json'], { NO_COLOR: '1' }, dir);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('\n1 problem:\n  unknown-role.json:33:3  unknown-role\n    unknown role "narrator" (left out of the structure above)\n');
  });

  it('gives the same as JSON with --json', () => {
    const r = swc(['inspect', '--tokenizer', 'approx', '--json', 'missing-result.json'], { NO_COLOR: '1' }, dir);
    expect(r.status).toBe(1);
    const doc = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(doc).toEqual({
      file: 'missing-result.json',
      format: 'openai',
      tokenizer: 'approx',
      messages: 8,
      tokens: 98,
      totals: {
        system: { groups: 1, messages: 1, tokens: 8 },
        turns: { groups: 1, messages: 4, tokens: 41 },
        task: { groups: 1, messages: 1, tokens: 5 },
        steps: { groups: 1, messages: 2, tokens: 43 },
        orphans: { groups: 0, messages: 0, tokens: 0 },
      },
      pairingChecked: true,
      ok: false,
      groups: [
        { kind: 'system', start: 0, end: 1, messages: 1, tokens: 8 },
        { kind: 'turn', start: 1, end: 5, messages: 4, tokens: 41 },
        { kind: 'task', start: 5, end: 6, messages: 1, tokens: 5 },
        { kind: 'step', start: 6, end: 8, messages: 2, tokens: 43 },
      ],
      problems: [{ kind: 'missing-result', item: 6, message: 6, line: 37, column: 3, text: 'tool call "call_3" (get_forecast) has no result' }],
    });
  });

  it('exits 2 on unreadable input, with one line on stderr', () => {
    writeFileSync(path.join(dir, 'broken.json'), '[{"role": "user", "content": "hi"},');
    const r = swc(['inspect', 'broken.json'], { NO_COLOR: '1' }, dir);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^swc: broken\.json:1:\d+: invalid JSON: .+\n$/);
    expect(swc(['inspect', 'missing.json'], { NO_COLOR: '1' }, dir).status).toBe(2);
  });

  it('exits with the worst outcome over several inputs', () => {
    expect(swc(['inspect', '--tokenizer', 'approx', 'clean.json', 'duplicate-id.json'], { NO_COLOR: '1' }, dir).status).toBe(1);
    expect(swc(['inspect', '--tokenizer', 'approx', 'clean.json', 'broken.json', 'duplicate-id.json'], { NO_COLOR: '1' }, dir).status).toBe(2);
  });

  it('colours only when FORCE_COLOR asks, never with NO_COLOR, --no-color, or when piped', () => {
    const args = ['inspect', '--tokenizer', 'approx', 'duplicate-id.json'];
    expect(swc(args, { FORCE_COLOR: '1' }, dir).stdout).toContain('\u001b[31m');
    expect(swc(args, {}, dir).stdout).not.toContain('\u001b[');
    expect(swc(args, { NO_COLOR: '1', FORCE_COLOR: '1' }, dir).stdout).not.toContain('\u001b[');
    expect(swc([...args, '--no-color'], { FORCE_COLOR: '1' }, dir).stdout).not.toContain('\u001b[');
  });

  it('does not change the file it inspects', () => {
    const file = path.join(dir, 'duplicate-id.json');
    const before = readFileSync(file);
    const mtime = statSync(file).mtimeMs;
    swc(['inspect', 'duplicate-id.json'], { NO_COLOR: '1' }, dir);
    expect(readFileSync(file).equals(before)).toBe(true);
    expect(statSync(file).mtimeMs).toBe(mtime);
  });
});

describe('swc inspect on the real transcripts in ../shared/data', () => {
  const real = (rel: string): string => path.join(data, rel);
  const have = existsSync(data);

  (have ? it : it.skip).each([
    ['openai-chat/pydanticai-multiple_agent_tool_calls.request.json', 0, []],
    ['openai-chat/pydanticai-deepseek_deferred_capability_with_thinking.request.json', 0, []],
    // tau-bench and SWE-agent reuse some call ids across steps (every result still follows its own call).
    ['openai-chat/taubench-airline-task109-messages.json', 1, ['duplicate-id', 'duplicate-id', 'duplicate-id', 'duplicate-id']],
    ['haystack/DERIVED-taubench-airline-task109.haystack.json', 1, ['duplicate-id', 'duplicate-id', 'duplicate-id', 'duplicate-id']],
    ['openai-chat/sweagent-marshmallow-1867-function_calling_replace.traj.json', 1, ['duplicate-id', 'duplicate-id', 'duplicate-id', 'duplicate-id', 'duplicate-id']],
  ])('inspects %s: exit %i, problems %j', (rel, status, kinds) => {
    const r = swc(['inspect', '--tokenizer', 'approx', '--json', real(rel)]);
    expect(r.status).toBe(status);
    const doc = JSON.parse(r.stdout) as { problems: { kind: string }[]; groups: { tokens: number }[]; tokens: number };
    expect(doc.problems.map((p) => p.kind)).toEqual(kinds);
    expect(doc.groups.every((g) => Number.isInteger(g.tokens))).toBe(true);
  });

  (have ? it : it.skip)('reads every file there without an unexpected error', () => {
    const files = readdirSync(data, { recursive: true, withFileTypes: true })
      .filter((d) => d.isFile() && /\.jsonl?$/.test(d.name))
      .map((d) => path.join(d.parentPath, d.name))
      .sort();
    expect(files.length).toBeGreaterThan(10);
    for (const file of files) {
      const r = swc(['inspect', '--tokenizer', 'approx', file]);
      expect([0, 1, 2]).toContain(r.status);
      expect(r.stderr).not.toContain('unexpected error');
      if (r.status === 2) expect(r.stderr).toMatch(/^swc: .+\n$/);
    }
  });
});
