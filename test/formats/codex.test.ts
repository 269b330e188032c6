import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { renderMessage } from '../../src/core/render.js';
import { InputError } from '../../src/errors.js';
import { codex } from '../../src/formats/codex.js';
import type { SummaryReply } from '../../src/core/summarize.js';
import { compactMessages } from '../../src/library/index.js';
import { decodeSource } from '../../src/io/source.js';
import { compactSource, type FileResult } from '../../src/pipeline/index.js';
import { ROOT, tempDir } from '../helpers/cli.js';
import { createFakeCounter } from '../helpers/fake-counter.js';
import { runSwc } from '../helpers/run-in-process.js';
import { summarizeFlags } from '../helpers/argv.js';
import { PROPERTY_SCALE } from '../helpers/scale.js';
import { compare, compareChains } from '../helpers/slim-compare.js';

type Line = Record<string, unknown>;

const FIXTURES = path.join(ROOT, 'test/fixtures/codex');
const NOTE = (n: number): string =>
  `[${n} earlier messages were removed from this conversation to free up context and cannot be recovered.]`;

/** A rollout line, with a timestamp that tells lines apart (second k). */
function line(k: number, type: string, payload: Line): string {
  return JSON.stringify({ timestamp: `2026-01-01T00:00:${String(k).padStart(2, '0')}.000Z`, type, payload });
}

const text = (role: string, t: string): Line => ({
  type: 'message',
  role,
  content: [{ type: role === 'assistant' ? 'output_text' : 'input_text', text: t }],
});
const event = (type: string, fields: Line = {}): Line => ({ type, ...fields });

/**
 * A two-turn session as Codex 0.125 writes it: session_meta, injected context, a prompt and its mirror, reasoning, a
 * call with its output and exec_command_end, a reply and its agent_message; then a second turn with new context, a
 * custom tool call, a web search and a reply; then a world_state line and a line of a type no CLI wrote yet.
 */
const SESSION = [
  line(0, 'session_meta', { id: 's1', cli_version: '0.125.0', base_instructions: { text: 'You are Codex.' } }),
  line(1, 'event_msg', event('task_started', { turn_id: 't1' })),
  line(2, 'response_item', text('developer', '<permissions instructions>sandboxed</permissions instructions>')),
  line(3, 'response_item', text('user', '# AGENTS.md instructions for /repo\n\nUse tabs.')),
  line(4, 'response_item', text('user', '<environment_context>\n  <cwd>/repo</cwd>\n</environment_context>')),
  line(5, 'turn_context', { cwd: '/repo', model: 'gpt-5.5' }),
  line(6, 'response_item', text('user', 'List the files.')),
  line(7, 'event_msg', event('user_message', { message: 'List the files.' })),
  line(8, 'response_item', { type: 'reasoning', summary: [], content: null, encrypted_content: 'gAAAA' }),
  line(9, 'response_item', { type: 'function_call', name: 'shell', arguments: '{"command":["ls"]}', call_id: 'c1' }),
  line(10, 'event_msg', event('token_count', { info: null })),
  line(11, 'response_item', { type: 'function_call_output', call_id: 'c1', output: 'a.ts\nb.ts' }),
  line(12, 'event_msg', event('exec_command_end', { call_id: 'c1', aggregated_output: 'a.ts\nb.ts' })),
  line(13, 'event_msg', event('agent_message', { message: 'Two files.' })),
  line(14, 'response_item', text('assistant', 'Two files.')),
  line(15, 'event_msg', event('task_complete', { turn_id: 't1' })),
  line(16, 'event_msg', event('task_started', { turn_id: 't2' })),
  line(17, 'response_item', text('user', '<environment_context>\n  <cwd>/repo/src</cwd>\n</environment_context>')),
  line(18, 'turn_context', { cwd: '/repo/src', model: 'gpt-5.5' }),
  line(19, 'response_item', text('user', 'Now count the lines.')),
  line(20, 'event_msg', event('user_message', { message: 'Now count the lines.' })),
  line(21, 'response_item', { type: 'custom_tool_call', call_id: 'c2', name: 'apply_patch', input: '*** Begin Patch' }),
  line(22, 'response_item', { type: 'custom_tool_call_output', call_id: 'c2', output: 'Done.' }),
  line(23, 'response_item', { type: 'web_search_call', status: 'completed', action: { type: 'search', query: 'wc' } }),
  line(24, 'event_msg', event('agent_message', { message: '42 lines.' })),
  line(25, 'response_item', text('assistant', '42 lines.')),
  line(26, 'world_state', { full: true, state: {} }),
  line(27, 'future_line_type', { anything: [1, 2] }),
];

const jsonl = (lines: readonly string[]): string => `${lines.join('\n')}\n`;

/** Compacts a session's text in memory, every message costing 10 tokens. */
async function compactText(input: string, target: number, file = 'rollout.jsonl'): Promise<FileResult> {
  return await compactSource(decodeSource(Buffer.from(input), file), { target, counter: createFakeCounter(10) });
}

function linesOf(t: string): string[] {
  return t.split('\n').filter((l) => l !== '');
}

/** Asserts that every output line but the note lines is an input line, byte for byte and in input order. */
function expectKeptVerbatim(input: string, output: string, notes: number): void {
  const inLines = linesOf(input);
  let next = 0;
  let fresh = 0;
  for (const raw of linesOf(output)) {
    const at = inLines.indexOf(raw, next);
    if (at === -1) {
      fresh++;
      continue;
    }
    next = at + 1;
  }
  expect(fresh).toBe(notes);
}

describe('Codex sessions: reading', () => {
  it('is detected by its {timestamp, type, payload} lines with a session_meta or response_item line', async () => {
    const result = await compactText(jsonl(SESSION), 1_000_000);
    expect(result.format).toBe('codex');
    const events = [line(0, 'event_msg', event('token_count')), line(1, 'turn_context', { cwd: '/' })];
    expect(
      codex.detect(
        events.map((l) => JSON.parse(l) as unknown),
        null,
      ),
    ).toBe(false);
    // Responses items without the envelope are not Codex lines.
    expect(codex.detect([text('user', 'hi')], null)).toBe(false);
  });

  it('makes messages of response items only, mirrors going with their items and other lines staying put', async () => {
    const { conversations } = await compactText(jsonl(SESSION), 1_000_000);
    const { normalized } = conversations[0]!;
    expect(normalized.messages.map((m) => m.role)).toEqual([
      'system',
      'system',
      'system',
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
    expect(normalized.itemsOf).toEqual([
      [],
      [2],
      [3],
      [4],
      [6, 7],
      [8, 9],
      [11, 12],
      [13, 14],
      [17, 19, 20],
      [21],
      [22],
      [23, 24, 25],
    ]);
    expect(normalized.pinned).toEqual([0, 1, 5, 10, 15, 16, 18, 26, 27]);
    // Weights count response items: the base instructions stand for no line, events are not counted.
    expect(normalized.messages.map((m) => m.weight ?? 1)).toEqual([0, 1, 1, 1, 1, 2, 1, 1, 2, 1, 1, 2]);
  });

  it('reads the base instructions, the task with its context (prompt first), calls, outputs and a web search', async () => {
    const { conversations } = await compactText(jsonl(SESSION), 1_000_000);
    const m = conversations[0]!.normalized.messages;
    expect(renderMessage(m[0]!).text).toBe('[system] You are Codex.');
    expect(renderMessage(m[8]!).text).toBe(
      '[user] Now count the lines.\n<environment_context>\n  <cwd>/repo/src</cwd>\n</environment_context>',
    );
    expect(renderMessage(m[5]!).text).toBe('[assistant -> tool_call] shell({"command": ["ls"]})');
    expect(renderMessage(m[6]!).text).toBe('[tool:shell] a.ts\nb.ts');
    expect(renderMessage(m[9]!).text).toBe('[assistant -> tool_call] apply_patch(*** Begin Patch)');
    expect(renderMessage(m[10]!).text).toBe('[tool:apply_patch] Done.');
    expect(renderMessage(m[11]!).text).toBe(
      '[assistant] 42 lines.\n[assistant -> tool_call] web_search({"query": "wc", "type": "search"})',
    );
  });

  it('drops the first turn with its mirrors, keeps every other line byte for byte and dates the note as the line before', async () => {
    // 12 messages of 10 tokens; protected: 4 instructions and the task (50); both steps fit 30, the turn (40) does not.
    const input = jsonl(SESSION);
    const result = await compactText(input, 80);
    const out = linesOf(result.output);
    const kept = [0, 1, 2, 3, 4, 5, 10, 15, 16];
    const after = [17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27];
    expect(out).toEqual([
      ...kept.map((k) => SESSION[k]),
      JSON.stringify({
        timestamp: '2026-01-01T00:00:16.000Z',
        type: 'response_item',
        payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: NOTE(5) }] },
      }),
      ...after.map((k) => SESSION[k]),
    ]);
    expectKeptVerbatim(input, result.output, 1);
    // A second run reads the note as a note, not as a prompt or context, and changes nothing.
    const again = await compactText(result.output, 80);
    expect(again.changed).toBe(false);
    expect(again.conversations[0]!.normalized.messages[4]).toMatchObject({
      role: 'user',
      compaction: 'sliding_window',
    });
  });

  it('drops the events of a removed web search and of calls made inside a removed exec call with their turn', async () => {
    // web_search_end names the search by its ws_ item id and 0.144's nested calls use exec-<uuid> ids: no response
    // item carries those ids, so each event goes with the item Codex writes next (the search, the exec's output).
    const turn = (k: number, n: number): string[] => [
      line(k, 'response_item', text('user', `Task ${n}.`)),
      line(k + 1, 'event_msg', event('user_message', { message: `Task ${n}.` })),
      line(k + 2, 'event_msg', event('web_search_end', { call_id: `ws_${n}`, query: 'q' })),
      line(k + 3, 'response_item', { type: 'web_search_call', status: 'completed', action: { type: 'search' } }),
      line(k + 4, 'response_item', { type: 'custom_tool_call', call_id: `x${n}`, name: 'exec', input: 'tools.x()' }),
      line(k + 5, 'event_msg', event('patch_apply_end', { call_id: `exec-${n}`, success: true })),
      line(k + 6, 'response_item', { type: 'custom_tool_call_output', call_id: `x${n}`, output: 'Script completed' }),
      line(k + 7, 'response_item', text('assistant', `Done ${n}.`)),
    ];
    const lines = [line(0, 'session_meta', { id: 's3' }), ...turn(1, 1), ...turn(9, 2)];
    const result = await compactText(jsonl(lines), 60);
    const out = linesOf(result.output);
    expect(result.conversations[0]!.normalized.itemsOf.slice(0, 4)).toEqual([[1, 2], [3, 4, 5], [6, 7], [8]]);
    expect(out).toEqual([lines[0], expect.stringContaining(NOTE(5)), ...lines.slice(9)]);
  });

  it('takes the latest non-injected user message as the task when no user_message event mirrors one', async () => {
    const lines = SESSION.filter((l) => !l.includes('"user_message"'));
    const { conversations } = await compactText(jsonl(lines), 1_000_000);
    const messages = conversations[0]!.normalized.messages;
    expect(messages.map((m) => m.role).filter((r) => r === 'user')).toHaveLength(2);
    expect(renderMessage(messages[8]!).text.startsWith('[user] Now count the lines.')).toBe(true);
  });

  it('trusts the mirrors over the texts: an unmirrored user message after a prompt is context of that prompt', async () => {
    const redacted = [
      line(0, 'session_meta', { id: 's2' }),
      line(1, 'response_item', text('user', '[REDACTED_TEXT len=3021 sha=dc9e82a0]')),
      line(2, 'response_item', text('user', '[REDACTED_TEXT len=86 sha=2239bcba]')),
      line(3, 'event_msg', event('user_message', { message: '[REDACTED_MESSAGE len=86 sha=2239bcba]' })),
      line(4, 'response_item', text('user', '[REDACTED_TEXT len=3490 sha=00c48df1]')),
      line(5, 'response_item', text('assistant', 'Done.')),
    ];
    const { conversations } = await compactText(jsonl(redacted), 1_000_000);
    const { messages, itemsOf } = conversations[0]!.normalized;
    expect(messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant']);
    expect(itemsOf).toEqual([[1], [2, 3, 4], [5]]);
  });

  it('compacts a session with no prompt yet without error, its context being instructions', async () => {
    const file = path.join(FIXTURES, 'neurodata-no-prompt.jsonl');
    const input = readFileSync(file, 'utf8');
    const result = await compactText(input, 1);
    expect(result.changed).toBe(false);
    expect(result.conversations[0]!.normalized.messages.map((m) => m.role)).toEqual(['system']);
    const run = await runSwc(['compact', file, '-t', '1', '--dry-run'], { cwd: ROOT });
    expect(run.status).toBe(0);
  });

  it('keeps a line of a type no CLI wrote yet whatever its payload, as Codex skips it, and still refuses a bad known line', async () => {
    const future = [
      JSON.stringify({ timestamp: '2026-01-01T00:00:30.000Z', type: 'future_marker', payload: 'opaque' }),
      JSON.stringify({ timestamp: '2026-01-01T00:00:31.000Z', type: 'future_list', payload: [1, 2] }),
      JSON.stringify({ timestamp: '2026-01-01T00:00:32.000Z', type: 'future_null', payload: null }),
    ];
    const input = jsonl([...SESSION.slice(0, 15), ...future, ...SESSION.slice(15)]);
    const run = await runSwc(['compact', '-', '-t', '80', '--tokenizer', 'approx'], { cwd: ROOT, stdin: input });
    expect(run.stderr).not.toContain('swc: -:');
    expect(run.status).toBe(0);
    for (const l of future) expect(linesOf(run.stdout)).toContain(l);
    const inspect = await runSwc(['inspect', '-'], { cwd: ROOT, stdin: input });
    expect([inspect.status, inspect.stdout]).toEqual([0, expect.stringContaining('no problems found')]);
    const broken = jsonl([...SESSION.slice(0, 15), line(30, 'event_msg', 'opaque' as unknown as Line)]);
    const refused = await runSwc(['compact', '-', '-t', '80', '--format', 'codex'], { cwd: ROOT, stdin: broken });
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain('<stdin>:16:1: message 16: rollout line has no string');
  });

  it('recognises a session of CLIs before 0.34 by its bare header and says it is not read, never taking it for Responses', async () => {
    const legacy = jsonl([
      JSON.stringify({ id: 's0', timestamp: '2025-08-01T10:00:00.000Z', instructions: null }),
      JSON.stringify({ record_type: 'state' }),
      JSON.stringify(text('user', 'Fix the bug.')),
      JSON.stringify(text('assistant', 'Fixed.')),
    ]);
    const run = await runSwc(['compact', '-', '-t', '10'], { cwd: ROOT, stdin: legacy });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('<stdin>:1:1: message 1: a Codex session from before CLI 0.34');
    const inspect = await runSwc(['inspect', '-'], { cwd: ROOT, stdin: legacy });
    expect(inspect.stdout + inspect.stderr).not.toContain('format responses');
    expect([inspect.status, inspect.stderr]).toEqual([
      2,
      expect.stringContaining('a Codex session from before CLI 0.34'),
    ]);
  });

  it('points at the line that is not a rollout object when the format is named', async () => {
    const input = jsonl([SESSION[0]!, '[1, 2]', SESSION[6]!]);
    const attempt = compactSource(decodeSource(Buffer.from(input), 'rollout.jsonl'), {
      target: 10,
      counter: createFakeCounter(10),
      format: 'codex',
    });
    await expect(attempt).rejects.toThrow(InputError);
    await expect(attempt).rejects.toThrow('rollout.jsonl:2:1: message 2: expected a rollout line object, found a list');
  });
});

describe('Codex sessions: the library', () => {
  it('compacts rollout lines passed as objects, and writes a summary as a dated user line', async () => {
    const items = SESSION.map((l) => JSON.parse(l) as Line);
    const windowed = await compactMessages(items, { format: 'codex', tokenizer: 'approx', target: 60 });
    expect(windowed.changed).toBe(true);
    // Kept lines are the objects passed in; the one new line is the note, dated as the line before it.
    const fresh = windowed.messages.filter((m) => !items.includes(m));
    expect(fresh).toHaveLength(1);
    const at = windowed.messages.indexOf(fresh[0]!);
    expect(fresh[0]).toMatchObject({ timestamp: windowed.messages[at - 1]!.timestamp, type: 'response_item' });
    const summarized = await compactMessages(items, {
      format: 'codex',
      tokenizer: 'approx',
      target: 60,
      summarize: async () => 'They listed the files.',
    });
    const made = summarized.messages.filter((m) => !items.includes(m));
    expect(made.length).toBeGreaterThan(0);
    for (const m of made) {
      const k = summarized.messages.indexOf(m);
      expect(m).toMatchObject({ type: 'response_item', payload: { type: 'message', role: 'user' } });
      expect(m.timestamp).toBe(summarized.messages[k - 1]!.timestamp);
    }
    expect(JSON.stringify(made)).toContain('<conversation_summary>\\nThey listed the files.\\n</conversation_summary>');
  });
});

describe("Codex sessions: Codex's own compaction", () => {
  const replacement = [
    text('user', 'List the files.'),
    text('assistant', 'Two files.'),
    { type: 'compaction', encrypted_content: 'gAAAAB' },
  ];
  const compacted = [
    ...SESSION.slice(0, 16),
    line(30, 'compacted', { message: '', replacement_history: replacement }),
    line(31, 'event_msg', event('context_compacted')),
    ...SESSION.slice(16, 26),
  ];

  it('keeps every line before the last compacted line uncounted and makes that line the first instruction', async () => {
    const { conversations } = await compactText(jsonl(compacted), 1_000_000);
    const { messages, itemsOf, pinned } = conversations[0]!.normalized;
    expect(pinned!.slice(0, 17)).toEqual([...Array(16).keys(), 17]);
    expect(itemsOf[0]).toEqual([16]);
    // The context before the first prompt after it is an instruction too.
    expect(itemsOf).toEqual([[16], [], [19], [21, 22], [23], [24], [25, 26, 27]]);
    expect(messages.map((m) => m.role)).toEqual([
      'system',
      'system',
      'system',
      'user',
      'assistant',
      'tool',
      'assistant',
    ]);
    expect(renderMessage(messages[0]!).text).toBe(
      '[system] Codex compacted the conversation here (line 17): 3 items replace all before it\nList the files.\nTwo files.',
    );
  });

  it('never removes, edits or resurrects what Codex compacted, and shows where it compacted', async () => {
    const input = jsonl(compacted);
    // 7 messages; protected: the compacted line, the base instructions, the context and the task (40): of the two steps
    // only the newest (10) fits the 10 left, so the call and its output go.
    const result = await compactText(input, 50);
    const out = linesOf(result.output);
    expect(out.slice(0, 18)).toEqual(compacted.slice(0, 18));
    expect(JSON.parse(out[out.length - 4]!)).toMatchObject({ payload: { content: [{ text: NOTE(2) }] } });
    expectKeptVerbatim(input, result.output, 1);
    const dir = tempDir();
    const file = path.join(dir, 'rollout.jsonl');
    writeFileSync(file, input);
    const dry = await runSwc(['compact', file, '-t', '50', '--dry-run', '--tokenizer', 'approx'], { cwd: dir });
    expect(dry.status).toBe(0);
    // The instructions' row opens with the compacted line (cut to the 80 columns of a pipe).
    expect(dry.stdout).toMatch(/\n {2}system {2}#16-19 {2}2 msgs .* Codex compacted the conversation here \(line 1…\n/);
    expect(dry.stdout).toContain('- step 1  #23-24  2 msgs');
  });
});

describe('Codex sessions: inspect and pruning', () => {
  it('warns about a call left without an output at the end of a running session, and exits 0', async () => {
    const file = path.join(FIXTURES, 'localpush-running.jsonl');
    const run = await runSwc(['inspect', file], { cwd: ROOT });
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('1 warning (accepted by OpenAI Responses)');
    expect(run.stdout).toContain('localpush-running.jsonl:18:1');
    expect(run.stdout).toContain('tool call "call_UtYwHmwWekzvq83m8Rb9K8jJ" (exec_command) has no output yet');
    expect(run.stdout).not.toContain('error');
  });

  it('still fails a call whose output never came although the session went on', async () => {
    const lines = [...SESSION.slice(0, 11), ...SESSION.slice(13)];
    const dir = tempDir();
    const file = path.join(dir, 'rollout.jsonl');
    writeFileSync(file, jsonl(lines));
    const run = await runSwc(['inspect', file], { cwd: dir });
    expect(run.status).toBe(1);
    expect(run.stdout).toContain('tool call "c1" (shell) has no result');
  });

  it('prunes an output given as a list of parts into a string placeholder, nothing else changed', () => {
    const raw = line(40, 'response_item', {
      type: 'custom_tool_call_output',
      call_id: 'c9',
      output: [{ type: 'input_text', text: 'big' }],
    });
    const written = codex.writePruned!({ raws: [raw], items: [0], texts: ['[gone]'], originalTokens: 10 });
    expect(written.get(0)).toBe(raw.replace('[{"type":"input_text","text":"big"}]', '"[gone]"'));
  });

  it('offloads list outputs of a real session and restores the session byte for byte', async () => {
    const file = path.join(FIXTURES, 'edgerunner-excerpt.jsonl');
    const dir = tempDir();
    const args = ['--strategy', 'offload', '-t', '3000', '--tokenizer', 'approx', '--offload-dir', 'store'];
    const run = await runSwc(['compact', file, ...args, '-o', 'off.jsonl'], { cwd: dir });
    expect(run.status).toBe(0);
    const input = readFileSync(file, 'utf8');
    const offloaded = readFileSync(path.join(dir, 'off.jsonl'), 'utf8');
    const changed = linesOf(offloaded).filter((l) => !linesOf(input).includes(l));
    expect(changed.length).toBeGreaterThan(0);
    // Only outputs change: each a string pointing at the store where a list of parts was.
    for (const l of changed) {
      const payload = (JSON.parse(l) as { payload: Line }).payload;
      expect(payload.type).toBe('custom_tool_call_output');
      expect(typeof payload.output).toBe('string');
    }
    const back = await runSwc(['restore', 'off.jsonl', '--offload-dir', 'store', '-o', 'back.jsonl'], { cwd: dir });
    expect(back.status).toBe(0);
    expect(readFileSync(path.join(dir, 'back.jsonl'), 'utf8')).toBe(input);
  });

  it("prunes an output by rewriting its payload's output alone", () => {
    const raws = SESSION;
    const written = codex.writePruned!({ raws, items: [11, 12], texts: ['[pruned]'], originalTokens: 10 });
    expect([...written.keys()]).toEqual([11]);
    expect(written.get(11)).toBe(SESSION[11]!.replace('"output":"a.ts\\nb.ts"', '"output":"[pruned]"'));
  });
});

describe('Codex sessions: real files through the CLI', () => {
  const files = readdirSync(FIXTURES)
    .filter((f) => f.endsWith('.jsonl'))
    .sort();

  it('decides and writes the same with slim items as with whole ones, for every strategy', async () => {
    // Below full strength, three: Codex's compaction, outputs as lists of parts, the oldest envelope.
    const some = ['localpush-compacted-excerpt.jsonl', 'edgerunner-excerpt.jsonl', 'openprintkit-excerpt.jsonl'];
    for (const name of PROPERTY_SCALE >= 1 ? files : some) {
      const file = path.join(FIXTURES, name);
      const bytes = readFileSync(file);
      await compare(file, bytes);
      await compareChains(file, bytes);
    }
  }, 120_000);

  it('reads the running localpush session line by line as the rules say', async () => {
    const file = path.join(FIXTURES, 'localpush-running.jsonl');
    const { conversations } = await compactText(readFileSync(file, 'utf8'), 1_000_000);
    const { messages, itemsOf, pinned } = conversations[0]!.normalized;
    // Base instructions, six injected messages before the prompt, the prompt with its mirror and the skill text
    // after it, then reasoning, reply and a call with their two events.
    expect(messages.map((m) => m.role)).toEqual([...Array(7).fill('system'), 'user', 'assistant']);
    expect(itemsOf).toEqual([[], [1], [2], [3], [4], [5], [6], [8, 9, 10], [13, 14, 15, 16, 17]]);
    expect(pinned).toEqual([0, 7, 11, 12, 18]);
    const run = await runSwc(['inspect', file, '--tokenizer', 'approx'], { cwd: ROOT });
    expect(run.stdout).toMatch(
      /\n {2}system {2}#1-6 {4}6 msgs .*\n {2}task {4}#8-10 {3}2 msgs .*\n\? step 1 {2}#13-17 {2}3 msgs /,
    );
  });

  it('reads the localpush excerpt from its compacted line on, the 57 lines before it kept and uncounted', async () => {
    const file = path.join(FIXTURES, 'localpush-compacted-excerpt.jsonl');
    const { conversations } = await compactText(readFileSync(file, 'utf8'), 1_000_000);
    const { messages, itemsOf, pinned } = conversations[0]!.normalized;
    expect(itemsOf[0]).toEqual([57]);
    expect(pinned!.slice(0, 57)).toEqual([...Array(57).keys()]);
    expect(renderMessage(messages[0]!).text).toMatch(
      /^\[system\] Codex compacted the conversation here \(line 58\): 40 items replace all before it\n/,
    );
  });

  it('has the eight fixtures', () => {
    expect(files).toHaveLength(8);
  });

  for (const name of files) {
    it(`compacts ${name} to a resumable session whose note counts the response items it removed`, async () => {
      const file = path.join(FIXTURES, name);
      const input = readFileSync(file, 'utf8');
      const dir = tempDir();
      const out = path.join(dir, name);
      const inspect = await runSwc(['inspect', file, '--tokenizer', 'approx'], { cwd: dir });
      expect(inspect.stdout).toContain('format codex');
      expect(inspect.status).toBe(0);
      const stat = await runSwc(['compact', file, '-t', '2000', '--dry-run', '--stat', '--tokenizer', 'approx'], {
        cwd: dir,
      });
      expect(stat.status).toBe(0);
      const run = await runSwc(['compact', file, '-t', '2000', '--tokenizer', 'approx', '-o', out], { cwd: dir });
      expect(run.status).toBe(0);
      const output = readFileSync(out, 'utf8');
      const inLines = linesOf(input);
      const outLines = linesOf(output);
      const fresh = outLines.filter((l) => !inLines.includes(l));
      const parsed = inLines.map((l) => JSON.parse(l) as Line);
      const cut = parsed.map((l) => l.type).lastIndexOf('compacted');
      // Nothing Codex compacted away comes back, and nothing before its compacted line goes.
      if (cut >= 0) expect(outLines.slice(0, cut + 1)).toEqual(inLines.slice(0, cut + 1));
      const removedItems = inLines.filter(
        (l, k) => !outLines.includes(l) && (parsed[k] as Line).type === 'response_item',
      ).length;
      const removedOthers = inLines.filter(
        (l, k) => !outLines.includes(l) && !['response_item', 'event_msg'].includes((parsed[k] as Line).type as string),
      );
      expect(removedOthers).toEqual([]);
      if (removedItems === 0) {
        expect(output).toBe(input);
        return;
      }
      expect(fresh).toHaveLength(1);
      const note = JSON.parse(fresh[0]!) as Line;
      expect(note).toMatchObject({
        type: 'response_item',
        payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: NOTE(removedItems) }] },
      });
      expect(typeof note.timestamp).toBe('string');
      expectKeptVerbatim(input, output, 1);
      // Every kept call keeps its output.
      const ids = (type: RegExp): string[] =>
        outLines
          .map((l) => JSON.parse(l) as Line)
          .filter((l) => l.type === 'response_item' && type.test((l.payload as Line).type as string))
          .map((l) => (l.payload as Line).call_id as string);
      const outputs = new Set(ids(/_output$/));
      const calls = new Set(ids(/^(function_call|custom_tool_call|local_shell_call)$/));
      for (const id of outputs) expect(calls.has(id)).toBe(true);
      // An event naming a call goes and stays with that call's items, else with the item written right after it.
      const keptLines = new Set(outLines);
      parsed.forEach((l, k) => {
        const id = (l.payload as Line | undefined)?.call_id;
        if (l.type !== 'event_msg' || typeof id !== 'string' || k <= cut) return;
        const ofCall = inLines.filter(
          (_, j) => parsed[j]!.type === 'response_item' && (parsed[j]!.payload as Line).call_id === id,
        );
        const next = inLines.find((_, j) => j > k && parsed[j]!.type === 'response_item');
        const owner = ofCall.length > 0 ? ofCall[ofCall.length - 1] : next;
        if (owner !== undefined) expect([name, k, keptLines.has(inLines[k]!)]).toEqual([name, k, keptLines.has(owner)]);
      });
      const again = await runSwc(['compact', out, '-t', '2000', '--tokenizer', 'approx'], { cwd: dir });
      expect(again.status).toBe(0);
      expect(again.stdout).toBe(output);
    });

    it(`summarizes ${name} keeping every kept line in its place, events between an item's lines included`, async () => {
      const file = path.join(FIXTURES, name);
      const input = readFileSync(file, 'utf8');
      const summarizer = async (): Promise<SummaryReply> => ({ text: 'They worked on the task.' });
      const flags = ['-t', '2000', '--tokenizer', 'approx', ...summarizeFlags()];
      const run = await runSwc(['compact', file, ...flags], { cwd: tempDir(), summarizer });
      expect(run.status).toBe(0);
      const inLines = new Set(linesOf(input));
      expectKeptVerbatim(input, run.stdout, linesOf(run.stdout).filter((l) => !inLines.has(l)).length);
      // The library writes the same order: the kept line objects as they were passed, in their order.
      const items = linesOf(input).map((l) => JSON.parse(l) as Line);
      const library = await compactMessages(items, {
        format: 'codex',
        tokenizer: 'approx',
        target: 2000,
        summaryTokens: 10,
        summarize: async () => 'They worked on the task.',
      });
      const order = library.messages.map((m) => items.indexOf(m)).filter((k) => k >= 0);
      expect(order).toEqual([...order].sort((a, b) => a - b));
    });
  }
});
