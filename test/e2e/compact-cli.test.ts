/**
 * The command line end to end. A few tests run the built binary itself, where the process is what is tested: its
 * start-up and --version, standard input as a real pipe, the exit code the entry point sets, real files rewritten in
 * place. The rest call the command line in process (runSwc), which is much faster.
 */
import { describe, expect, it } from '@jest/globals';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, REAL_DATA, swc, tempDir } from '../helpers/cli.js';
import { runSwc, type InProcessRun } from '../helpers/run-in-process.js';
import { pairingProblems } from '../helpers/invariants.js';

const SAMPLE = path.join(ROOT, 'fixtures/sample.jsonl');
const sampleLines = readFileSync(SAMPLE, 'utf8').trimEnd().split('\n');
type Msg = Record<string, unknown>;

function parseJsonl(text: string): Msg[] {
  return text
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as Msg);
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
    expect(kept.map((l) => sampleLines.indexOf(l))).toEqual(
      [...kept.map((l) => sampleLines.indexOf(l))].sort((a, b) => a - b),
    );
    const removed = sampleLines.length - kept.length;
    expect(JSON.parse(note[0] as string)).toEqual({
      role: 'user',
      content: `[${removed} earlier messages were removed from this conversation to free up context and cannot be recovered.]`,
    });
    expect(run.stderr).toMatch(
      new RegExp(
        `^swc: .*sample\\.jsonl: 6,609 → [\\d,]+ tokens \\(−\\d+%, approx\\), removed ${removed} of 62 messages; target 2,000 met\\n$`,
      ),
    );
  });

  it('keeps the system prompt and the latest user message', async () => {
    const out = parseJsonl((await runSwc(['compact', SAMPLE, '-t', '1500'], { cwd: ROOT })).stdout);
    const input = parseJsonl(readFileSync(SAMPLE, 'utf8'));
    const lastUser = [...input].reverse().find((m) => m.role === 'user');
    expect(out[0]).toEqual(input[0]);
    expect(out).toContainEqual(lastUser);
  });

  it('changes nothing on a second run with the same settings', async () => {
    const dir = tempDir();
    const first = path.join(dir, 'first.jsonl');
    expect((await runSwc(['compact', SAMPLE, '-t', '3000', '-o', first], { cwd: ROOT })).status).toBe(0);
    const second = await runSwc(['compact', first, '-t', '3000'], { cwd: ROOT });
    expect(second.status).toBe(0);
    expect(second.stdout).toBe(readFileSync(first, 'utf8'));
    expect(second.stderr).toContain('unchanged');
  });

  it('writes the input unchanged when it already fits, so -o always produces a file', async () => {
    const dir = tempDir();
    const out = path.join(dir, 'out.jsonl');
    const run = await runSwc(['compact', SAMPLE, '--target', '1000000', '-o', out], { cwd: ROOT });
    expect(run.status).toBe(0);
    expect(readFileSync(out)).toEqual(readFileSync(SAMPLE));
    expect(run.stdout).toBe('');
  });

  it('reads standard input when the input is -', async () => {
    const run = swc(['compact', '-', '-t', '2500'], { input: readFileSync(SAMPLE) });
    expect(run.status).toBe(0);
    expect(run.stdout).toBe((await runSwc(['compact', SAMPLE, '-t', '2500'], { cwd: ROOT })).stdout);
    expect(run.stderr).toContain('<stdin>');
  });

  it('rewrites a file in place only when it changes', async () => {
    const dir = tempDir([SAMPLE]);
    const file = path.join(dir, 'sample.jsonl');
    const before = statSync(file).mtimeMs;
    expect(swc(['compact', file, '-t', '1000000', '--in-place']).status).toBe(0);
    expect(statSync(file).mtimeMs).toBe(before);
    const run = swc(['compact', file, '-t', '2000', '--in-place']);
    expect(run.status).toBe(0);
    expect(run.stdout).toBe('');
    expect(readFileSync(file, 'utf8')).toBe((await runSwc(['compact', SAMPLE, '-t', '2000'], { cwd: ROOT })).stdout);
    expect(readdirSync(dir)).toEqual(['sample.jsonl']);
  });

  it('removes silently with --no-note and fills in a custom --note literally', async () => {
    const silent = (await runSwc(['compact', SAMPLE, '-t', '2000', '--no-note'], { cwd: ROOT })).stdout
      .trimEnd()
      .split('\n');
    expect(silent.filter((l) => !sampleLines.includes(l))).toEqual([]);
    expect(silent).toHaveLength(8);
    const custom = (
      await runSwc(['compact', SAMPLE, '-t', '2000', '--note', 'gone: {num_removed} ($& {0} $1)'], { cwd: ROOT })
    ).stdout.split('\n');
    // The note follows the file's own JSON style (here Python's ", " and ": ").
    expect(custom).toContain('{"role": "user", "content": "gone: 54 ($& {0} $1)"}');
  });

  it('keeps at least --min-keep-steps newest steps even over the target', async () => {
    const two = parseJsonl(
      (await runSwc(['compact', SAMPLE, '-t', '100', '-k', '2', '--tokenizer', 'approx'], { cwd: ROOT })).stdout,
    );
    const zero = parseJsonl(
      (await runSwc(['compact', SAMPLE, '-t', '100', '-k', '0', '--tokenizer', 'approx'], { cwd: ROOT })).stdout,
    );
    const assistants = (ms: Msg[]): number => ms.filter((m) => m.role === 'assistant').length;
    expect(assistants(two)).toBe(2);
    expect(assistants(zero)).toBe(0);
  });
});

describe('swc command line', () => {
  it('prints its version and help', async () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(swc(['--version'])).toEqual({ status: 0, stdout: `${pkg.version}\n`, stderr: '' });
    const help = await runSwc(['--help'], { cwd: ROOT });
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('compact');
    const compactHelp = await runSwc(['compact', '--help'], { cwd: ROOT });
    expect(compactHelp.status).toBe(0);
    expect(compactHelp.stdout).toContain('--target <tokens>');
    expect(compactHelp.stdout).toContain('--min-keep-steps <n>');
  });

  it('exits 2 with one clear line when --target is missing', async () => {
    const run = await runSwc(['compact', SAMPLE], { cwd: ROOT });
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr.split('\n')[0]).toBe(
      'swc: error: --target <tokens> is required (the token budget to compact to)',
    );
  });

  it('exits 2 naming the file when it does not exist', () => {
    const run = swc(['compact', 'nope.jsonl', '-t', '10']);
    expect(run).toEqual({ status: 2, stdout: '', stderr: 'swc: error: "nope.jsonl": no such file or directory\n' });
  });

  it('suggests --format when it cannot tell the format', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'odd.json');
    writeFileSync(file, '[{"speaker": "me", "said": "hi"}]');
    const run = await runSwc(['compact', file, '-t', '10'], { cwd: ROOT });
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
  return Array.isArray(value) ? (value as Msg[]) : (value as { messages: Msg[] }).messages;
}

function textOf(m: Msg): string {
  return JSON.stringify(m);
}

describe.each(REAL)('real transcript %s', (name) => {
  const file = path.join(REAL_DATA, name);
  it('exists in fixtures/real', () => {
    expect(existsSync(file)).toBe(true);
  });
  it.each([20, 200, 1000, 3000, 8000])('keeps every promise at target %i', async (target) => {
    const inputText = readFileSync(file, 'utf8');
    const input = messagesOf(inputText);
    const run = await runSwc(['compact', file, '-t', String(target), '--tokenizer', 'approx'], { cwd: ROOT });
    expect(run.status).toBe(0);
    const output = messagesOf(run.stdout);
    expect(pairingProblems(input, output)).toEqual([]);
    // Leading system messages and the latest real user message survive.
    const leading = input.slice(
      0,
      input.findIndex((m) => m.role !== 'system' && m.role !== 'developer'),
    );
    expect(output.slice(0, leading.length).map(textOf)).toEqual(leading.map(textOf));
    const task = [...input].reverse().find((m) => m.role === 'user');
    if (task) expect(output.map(textOf)).toContain(textOf(task));
    // The container keeps its other keys as they were.
    if (!Array.isArray(JSON.parse(inputText))) {
      const { messages: _a, ...restIn } = JSON.parse(inputText) as Record<string, unknown>;
      const { messages: _b, ...restOut } = JSON.parse(run.stdout) as Record<string, unknown>;
      expect(restOut).toEqual(restIn);
    }
    const again = await runSwc(['compact', '-', '-t', String(target), '--tokenizer', 'approx'], {
      cwd: ROOT,
      stdin: run.stdout,
    });
    expect(again.stdout).toBe(run.stdout);
  });
});

describe('swc compact counts messages the same way in every mode', () => {
  // A Claude Code log (split messages count their lines) and Anthropic requests (the system prompt beside the list counts none).
  const cases: Array<[string, string, { before: number; removed: number }]> = [
    ['claude-code/ccviewer-5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl', '3000', { before: 53, removed: 48 }],
    [
      'anthropic/pydanticai-tool_search_handoff_anthropic_openai_anthropic.request.json',
      '100',
      { before: 11, removed: 8 },
    ],
    ['anthropic/pydanticai-multiple_parallel_tool_calls.request.json', '100', { before: 3, removed: 0 }],
  ];

  /** `removed 48 of 53 messages` in a summary line, as numbers. */
  function lineCounts(stderr: string): { before: number; removed: number } | null {
    const m = /removed ([\d,]+) of ([\d,]+) messages/.exec(stderr);
    return m === null ? null : { before: Number(m[2]?.replace(/,/g, '')), removed: Number(m[1]?.replace(/,/g, '')) };
  }

  it.each(cases)(
    '%s: -o, --in-place, --out-dir, the batch report and --dry-run (text and --json) agree',
    async (name, target, expected) => {
      const source = path.join(REAL_DATA, name);
      const dir = tempDir();
      mkdirSync(path.join(dir, 'in'));
      cpSync(source, path.join(dir, 'in', path.basename(source)));
      const file = path.join('in', path.basename(source));
      const args = ['-t', target, '--tokenizer', 'approx'];
      const changed = expected.removed > 0;
      const run = (extra: string[]): Promise<InProcessRun> =>
        runSwc(['compact', file, ...args, ...extra], { cwd: dir });

      const output = await run(['-o', 'out.json']);
      const outDir = await run(['--out-dir', 'out1']);
      // The directory as input: a batch, with a report of files.
      const batch = await runSwc(['compact', 'in', ...args, '--out-dir', 'out2', '--report', 'report.json'], {
        cwd: dir,
      });
      const dryJson = JSON.parse((await run(['--dry-run', '--json'])).stdout) as {
        messagesBefore: number;
        messagesAfter: number;
        removed: { messages: number };
      };
      const dryText = (await run(['--dry-run'])).stdout;
      const inPlace = await run(['--in-place']);
      const report = JSON.parse(readFileSync(path.join(dir, 'report.json'), 'utf8')) as {
        files: Array<{
          messagesBefore: number;
          messagesAfter: number;
          messagesRemoved: number;
          plan: { messagesBefore: number; removed: { messages: number } };
        }>;
      };
      const record = report.files[0];
      const lines = [output, outDir, inPlace, batch].map((r) => r.stderr.split('\n')[0] as string);

      const after = expected.before - expected.removed + (changed ? 1 : 0);
      expect([dryJson.messagesBefore, dryJson.messagesAfter, dryJson.removed.messages]).toEqual([
        expected.before,
        after,
        expected.removed,
      ]);
      expect([record?.messagesBefore, record?.messagesAfter, record?.messagesRemoved]).toEqual([
        expected.before,
        after,
        expected.removed,
      ]);
      expect([record?.plan.messagesBefore, record?.plan.removed.messages]).toEqual([expected.before, expected.removed]);
      expect(dryText).toContain(
        `\n--- before  ${String(expected.before).padStart(String(expected.before).length)} messages  `,
      );
      expect(dryText).toMatch(new RegExp(`\\n\\+\\+\\+ after +${after} messages? `));
      if (changed) {
        expect(dryText).toContain(`\nremoved ${expected.removed} messages (`);
        for (const line of lines) expect(lineCounts(line)).toEqual(expected);
      } else {
        for (const line of lines)
          expect(line).toMatch(/: unchanged, [\d,]+ tokens \(approx\), nothing can be removed; target 100 not met: /);
      }
      // Every mode gives the file the same line: the same numbers (the tokens before exact whether or not a report
      // made the decision count everything), the same reason in the same words.
      expect(new Set(lines.map((l) => l.replace(/^swc: [^:]+: /, ''))).size).toBe(1);
    },
  );
});

describe('swc compact refuses options that contradict each other, naming the conflict', () => {
  const cases: Array<[string[], string]> = [
    [['--dry-run', '-o', 'x.json'], '--dry-run writes nothing; it cannot be combined with --output'],
    [['--check', '-o', 'x.json'], '--check writes nothing; it cannot be combined with --output'],
    [['--in-place', '-o', 'x.json'], '--in-place rewrites each input itself; it cannot be combined with --output'],
    [
      ['--out-dir', 'out', '-o', 'x.json'],
      '--out-dir and --output cannot be used together: write every result under the out-dir, or one result to --output',
    ],
    [
      ['--note', 'gone', '--no-note'],
      '--note and --no-note cannot be used together: give a note template, or --no-note to remove silently',
    ],
    [
      ['--no-note', '--note', 'gone'],
      '--note and --no-note cannot be used together: give a note template, or --no-note to remove silently',
    ],
  ];
  it.each(cases)('refuses %j with one line', async (args, message) => {
    const dir = tempDir([SAMPLE]);
    const run = await runSwc(['compact', 'sample.jsonl', '-t', '100', ...args], { cwd: dir });
    expect(run).toEqual({ status: 2, stdout: '', stderr: `swc: error: ${message}\n` });
    expect(readdirSync(dir)).toEqual(['sample.jsonl']);
  });

  it('still says --output takes one input when several are given', async () => {
    const run = await runSwc(['compact', SAMPLE, SAMPLE, '-t', '100', '-o', 'x.json'], { cwd: ROOT });
    expect(run).toEqual({
      status: 2,
      stdout: '',
      stderr:
        'swc: error: --output takes the result of exactly one input; with several files use --out-dir or --in-place\n',
    });
  });

  it('runs --check with --dry-run as a dry run that exits as --check does', async () => {
    const dir = tempDir([SAMPLE]);
    const over = await runSwc(
      ['compact', 'sample.jsonl', '-t', '2000', '--tokenizer', 'approx', '--check', '--dry-run'],
      { cwd: dir },
    );
    expect(over.status).toBe(1);
    expect(over.stdout).toBe(
      (await runSwc(['compact', 'sample.jsonl', '-t', '2000', '--tokenizer', 'approx', '--dry-run'], { cwd: dir }))
        .stdout,
    );
    expect(over.stderr).toBe('');
    const fits = await runSwc(
      ['compact', 'sample.jsonl', '-t', '1000000', '--tokenizer', 'approx', '--check', '--dry-run'],
      { cwd: dir },
    );
    expect(fits.status).toBe(0);
    expect(fits.stdout.startsWith('dry run: sample.jsonl\n')).toBe(true);
    expect(readFileSync(path.join(dir, 'sample.jsonl'))).toEqual(readFileSync(SAMPLE));
  });
});

describe('swc compact --help', () => {
  it('shows every default the same way, and where --json writes for one file', async () => {
    const help = (await runSwc(['compact', '--help'], { cwd: ROOT })).stdout.replace(/\s+/g, ' ');
    expect(help).toContain('newest steps of the current task always kept (default: 1)');
    expect(help).toContain('reaches this share of it (default: 0.7)');
    expect(help).toContain('compact them to this share of it (default: 0.4)');
    expect(help).toContain('"approx", default: o200k_base)');
    expect(help).toContain(', default: auto)');
    expect(help).toContain('write the result to this file, - for stdout (default: -)');
    expect(help).not.toMatch(/default: "/);
    expect(help).toContain(
      '--json print the JSON plan (one file) or report (several files) on stdout, instead of the diff or the list of paths; on stderr when stdout carries the transcript',
    );
  });
});
