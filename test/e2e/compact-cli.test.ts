import { describe, expect, it } from '@jest/globals';
import { readFileSync, statSync, writeFileSync, existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { ROOT, SHARED_DATA, swc, tempDir } from '../helpers/cli.js';
import { pairingProblems } from '../helpers/invariants.js';

const SAMPLE = path.join(ROOT, 'fixtures/sample.jsonl');
const sampleLines = readFileSync(SAMPLE, 'utf8').trimEnd().split('\n');
type Msg = Record<string, unknown>;

function parseJsonl(text: string): Msg[] {
  return text.trimEnd().split('\n').map((l) => JSON.parse(l) as Msg);
}

describe('swc compact on the shipped sample', () => {
  it('writes a compacted JSONL transcript to stdout and a one-line summary to stderr', () => {
    const run = swc(['compact', SAMPLE, '--target', '2000', '--tokenizer', 'approx']);
    expect(run.status).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    const note = lines.filter((l) => !sampleLines.includes(l));
    // Every output line but the note is an input line, byte for byte, in input order.
    expect(note).toHaveLength(1);
    const kept = lines.filter((l) => sampleLines.includes(l));
    expect(kept.map((l) => sampleLines.indexOf(l))).toEqual([...kept.map((l) => sampleLines.indexOf(l))].sort((a, b) => a - b));
    const removed = sampleLines.length - kept.length;
    expect(JSON.parse(note[0] as string)).toEqual({
      role: 'user',
      content: `[${removed} earlier messages were removed from this conversation to free up context and cannot be recovered.]`,
    });
    expect(run.stderr).toMatch(new RegExp(`^swc: .*sample\\.jsonl: more than 2,000 → [\\d,]+ tokens \\(approx\\), removed ${removed} of 62 messages; target 2,000 met\\n$`));
  });

  it('keeps the system prompt and the latest user message', () => {
    const out = parseJsonl(swc(['compact', SAMPLE, '-t', '1500']).stdout);
    const input = parseJsonl(readFileSync(SAMPLE, 'utf8'));
    const lastUser = [...input].reverse().find((m) => m.role === 'user');
    expect(out[0]).toEqual(input[0]);
    expect(out).toContainEqual(lastUser);
  });

  it('changes nothing on a second run with the same settings', () => {
    const dir = tempDir();
    const first = path.join(dir, 'first.jsonl');
    expect(swc(['compact', SAMPLE, '-t', '3000', '-o', first]).status).toBe(0);
    const second = swc(['compact', first, '-t', '3000']);
    expect(second.status).toBe(0);
    expect(second.stdout).toBe(readFileSync(first, 'utf8'));
    expect(second.stderr).toContain('unchanged');
  });

  it('writes the input unchanged when it already fits, so -o always produces a file', () => {
    const dir = tempDir();
    const out = path.join(dir, 'out.jsonl');
    const run = swc(['compact', SAMPLE, '--target', '1000000', '-o', out]);
    expect(run.status).toBe(0);
    expect(readFileSync(out)).toEqual(readFileSync(SAMPLE));
    expect(run.stdout).toBe('');
  });

  it('reads standard input when the input is -', () => {
    const run = swc(['compact', '-', '-t', '2500'], { input: readFileSync(SAMPLE) });
    expect(run.status).toBe(0);
    expect(run.stdout).toBe(swc(['compact', SAMPLE, '-t', '2500']).stdout);
    expect(run.stderr).toContain('<stdin>');
  });

  it('rewrites a file in place only when it changes', () => {
    const dir = tempDir([SAMPLE]);
    const file = path.join(dir, 'sample.jsonl');
    const before = statSync(file).mtimeMs;
    expect(swc(['compact', file, '-t', '1000000', '--in-place']).status).toBe(0);
    expect(statSync(file).mtimeMs).toBe(before);
    const run = swc(['compact', file, '-t', '2000', '--in-place']);
    expect(run.status).toBe(0);
    expect(run.stdout).toBe('');
    expect(readFileSync(file, 'utf8')).toBe(swc(['compact', SAMPLE, '-t', '2000']).stdout);
    expect(readdirSync(dir)).toEqual(['sample.jsonl']);
  });

  it('removes silently with --no-note and fills in a custom --note literally', () => {
    const silent = swc(['compact', SAMPLE, '-t', '2000', '--no-note']).stdout.trimEnd().split('\n');
    expect(silent.filter((l) => !sampleLines.includes(l))).toEqual([]);
    expect(silent).toHaveLength(8);
    const custom = swc(['compact', SAMPLE, '-t', '2000', '--note', 'gone: {num_removed} ($& {0} $1)']).stdout.split('\n');
    // The note follows the file's own JSON style (here Python's ", " and ": ").
    expect(custom).toContain('{"role": "user", "content": "gone: 54 ($& {0} $1)"}');
  });

  it('keeps at least --min-keep-steps newest steps even over the target', () => {
    const two = parseJsonl(swc(['compact', SAMPLE, '-t', '100', '-k', '2', '--tokenizer', 'approx']).stdout);
    const zero = parseJsonl(swc(['compact', SAMPLE, '-t', '100', '-k', '0', '--tokenizer', 'approx']).stdout);
    const assistants = (ms: Msg[]): number => ms.filter((m) => m.role === 'assistant').length;
    expect(assistants(two)).toBe(2);
    expect(assistants(zero)).toBe(0);
  });
});

describe('swc command line', () => {
  it('prints its version and help', () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(swc(['--version'])).toEqual({ status: 0, stdout: `${pkg.version}\n`, stderr: '' });
    const help = swc(['--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('compact');
    const compactHelp = swc(['compact', '--help']);
    expect(compactHelp.status).toBe(0);
    expect(compactHelp.stdout).toContain('--target <tokens>');
    expect(compactHelp.stdout).toContain('--min-keep-steps <n>');
  });

  it('exits 2 with one clear line when --target is missing', () => {
    const run = swc(['compact', SAMPLE]);
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr.split('\n')[0]).toBe('swc: error: --target <tokens> is required (the token budget to compact to)');
  });

  it('exits 2 naming the file when it does not exist', () => {
    const run = swc(['compact', 'nope.jsonl', '-t', '10']);
    expect(run).toEqual({ status: 2, stdout: '', stderr: 'swc: nope.jsonl: cannot read: no such file\n' });
  });

  it('suggests --format when it cannot tell the format', () => {
    const dir = tempDir();
    const file = path.join(dir, 'odd.json');
    writeFileSync(file, '[{"speaker": "me", "said": "hi"}]');
    const run = swc(['compact', file, '-t', '10']);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/cannot tell the transcript format .* pass --format/);
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });
});

const REAL = [
  'openai-chat/taubench-airline-task109-messages.json',
  'openai-chat/pydanticai-multiple_agent_tool_calls.request.json',
  'openai-chat/pydanticai-deepseek_deferred_capability_with_thinking.request.json',
  'haystack/DERIVED-taubench-airline-task109.haystack.json',
];

function messagesOf(text: string): Msg[] {
  const value = JSON.parse(text) as unknown;
  return Array.isArray(value) ? (value as Msg[]) : ((value as { messages: Msg[] }).messages);
}

function textOf(m: Msg): string {
  return JSON.stringify(m);
}

describe.each(REAL)('real transcript %s', (name) => {
  const file = path.join(SHARED_DATA, name);
  it('exists in the shared data', () => {
    expect(existsSync(file)).toBe(true);
  });
  it.each([20, 200, 1000, 3000, 8000])('keeps every promise at target %i', (target) => {
    const inputText = readFileSync(file, 'utf8');
    const input = messagesOf(inputText);
    const run = swc(['compact', file, '-t', String(target), '--tokenizer', 'approx']);
    expect(run.status).toBe(0);
    const output = messagesOf(run.stdout);
    expect(pairingProblems(input, output)).toEqual([]);
    // Leading system messages and the latest real user message survive.
    const leading = input.slice(0, input.findIndex((m) => m.role !== 'system' && m.role !== 'developer'));
    expect(output.slice(0, leading.length).map(textOf)).toEqual(leading.map(textOf));
    const task = [...input].reverse().find((m) => m.role === 'user');
    if (task) expect(output.map(textOf)).toContain(textOf(task));
    // The container keeps its other keys as they were.
    if (!Array.isArray(JSON.parse(inputText))) {
      const { messages: _a, ...restIn } = JSON.parse(inputText) as Record<string, unknown>;
      const { messages: _b, ...restOut } = JSON.parse(run.stdout) as Record<string, unknown>;
      expect(restOut).toEqual(restIn);
    }
    const again = swc(['compact', '-', '-t', String(target), '--tokenizer', 'approx'], { input: run.stdout });
    expect(again.stdout).toBe(run.stdout);
  });
});
