import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { analyze } from '../../src/core/groups.js';
import { renderMessage } from '../../src/core/render.js';
import { InputError } from '../../src/errors.js';
import { decodeSource } from '../../src/io/source.js';
import { compactSource, type FileResult } from '../../src/pipeline/index.js';
import { createApproxCounter } from '../../src/tokens/index.js';
import { ROOT, REAL_DATA, tempDir } from '../helpers/cli.js';
import { runSwc } from '../helpers/run-in-process.js';
import { createFakeCounter } from '../helpers/fake-counter.js';

type Line = Record<string, unknown>;

const FIXTURES = path.join(ROOT, 'fixtures/claude-code');
const SESSION = '7b0d2c4e-1f3a-4c5b-9d8e-0a1b2c3d4e5f';
const NOTE = (n: number): string =>
  `[${n} earlier messages were removed from this conversation to free up context and cannot be recovered.]`;
const NAME_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function fixture(name: string): string {
  return readFileSync(path.join(FIXTURES, name), 'utf8');
}

/** Compacts a session's text in memory, every message costing 10 tokens. */
async function compactText(text: string, target: number, file = 'session.jsonl'): Promise<FileResult> {
  return await compactSource(decodeSource(Buffer.from(text), file), { target, counter: createFakeCounter(10) });
}

function linesOf(text: string): string[] {
  return text.split('\n').filter((l) => l !== '');
}

function parseLines(text: string): Line[] {
  return linesOf(text).map((l) => JSON.parse(l) as Line);
}

/** What a line says, short: the text or tool of its message, or its type. */
function label(line: Line): string {
  const message = line.message as Line | undefined;
  const content = message?.content;
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    const block = content[0] as Line;
    if (block.type === 'text') return block.text as string;
    if (block.type === 'tool_use') return `call ${block.name as string}`;
    if (block.type === 'tool_result') return `result ${block.tool_use_id as string}`;
  }
  return `${line.type as string}${typeof line.summary === 'string' ? `: ${line.summary}` : ''}`;
}

/** The problems of a session's links: a parentUuid that points at no line of the file. */
function chainProblems(lines: readonly Line[]): string[] {
  const uuids = new Set(lines.map((l) => l.uuid).filter((u): u is string => typeof u === 'string'));
  return lines
    .filter((l) => typeof l.parentUuid === 'string' && !uuids.has(l.parentUuid))
    .map((l) => `${label(l)} points at missing ${l.parentUuid as string}`);
}

/** The tool_use ids without a tool_result and the results without a call, over the whole file. */
function pairingProblems(lines: readonly Line[]): string[] {
  const calls = new Set<string>();
  const results = new Set<string>();
  for (const line of lines) {
    const content = (line.message as Line | undefined)?.content;
    if (!Array.isArray(content)) continue;
    for (const block of content as Line[]) {
      if (block.type === 'tool_use') calls.add(block.id as string);
      if (block.type === 'tool_result') results.add(block.tool_use_id as string);
    }
  }
  return [
    ...[...calls].filter((id) => !results.has(id)).map((id) => `call ${id} lost its result`),
    ...[...results].filter((id) => !calls.has(id)).map((id) => `result ${id} lost its call`),
  ];
}

/** An output line with its relinked references set back to the input's, to compare it with the input byte for byte. */
function withReferences(raw: string, original: Line): string {
  let out = raw;
  for (const key of ['parentUuid', 'leafUuid', 'logicalParentUuid']) {
    if (!(key in original)) continue;
    out = out.replace(new RegExp(`"${key}":(null|"[^"]*")`), `"${key}":${JSON.stringify(original[key])}`);
  }
  return out;
}

const NOTE_TEXT = /^\[\d+ earlier messages were removed/;

/** Asserts that every output line but the note is an input line, in input order, only its references changed. */
function expectKeptVerbatim(input: string, output: string): void {
  const inLines = linesOf(input);
  const inParsed = inLines.map((l) => JSON.parse(l) as Line);
  let next = 0;
  for (const raw of linesOf(output)) {
    const line = JSON.parse(raw) as Line;
    if (line.type === 'user' && NOTE_TEXT.test(label(line))) continue;
    const same = (k: number): boolean =>
      line.uuid !== undefined ? inParsed[k]!.uuid === line.uuid : withReferences(raw, inParsed[k]!) === inLines[k];
    while (next < inLines.length && !same(next)) next++;
    expect(next).toBeLessThan(inLines.length);
    expect(withReferences(raw, inParsed[next]!)).toBe(inLines[next]);
    next++;
  }
}

describe('Claude Code sessions: what a message is', () => {
  it('reads an assistant message split over lines sharing message.id as one message that weighs one per line', async () => {
    const { conversations, format } = await compactText(fixture('split-assistant.jsonl'), 1_000_000);
    const { normalized } = conversations[0]!;
    expect(format).toBe('claude-code');
    expect(normalized.messages.map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'tool',
      'assistant',
      'user',
      'assistant',
      'tool',
      'assistant',
    ]);
    expect(normalized.itemsOf).toEqual([[0], [1, 2, 3], [4], [5], [6], [7], [8, 9], [10], [11]]);
    expect(normalized.messages.map((m) => m.weight)).toEqual([1, 3, 1, 1, 1, 1, 2, 1, 1]);
    expect(renderMessage(normalized.messages[1]!).text).toBe(
      "[assistant] I'll list both directories.\n" +
        '[assistant -> tool_call] Bash({"command": "ls src", "description": "List src"})\n' +
        '[assistant -> tool_call] Bash({"command": "ls test", "description": "List test"})',
    );
    expect(renderMessage(normalized.messages[2]!).text).toBe('[tool:Bash] a.ts\nb.ts');
  });

  it('makes turns only of typed requests: meta lines, local commands, their caveat and interruptions stay with their group', async () => {
    const { normalized } = (await compactText(fixture('interruption-meta.jsonl'), 1_000_000)).conversations[0]!;
    // Lines 0-2 (caveat, /model and its output) come before any message and always stay.
    expect(normalized.pinned).toEqual([0, 1, 2]);
    expect(normalized.itemsOf).toEqual([
      [3],
      [4],
      [5],
      [6],
      [7],
      [8],
      [9],
      [10, 11],
      [12],
      [13],
      [14],
      [15, 16],
      [17, 18],
    ]);
    const roles = normalized.messages.map((m) => m.role);
    expect(roles).toEqual([
      'user',
      'assistant',
      'tool',
      'tool',
      'user',
      'assistant',
      'tool',
      'assistant',
      'assistant',
      'tool',
      'assistant',
      'user',
      'assistant',
    ]);
    // The interruption after a result is a results message of its own that pruning leaves alone.
    expect(normalized.messages.map((m) => m.fixed === true)).toEqual(roles.map((_, m) => m === 3));
    const structure = analyze(normalized.messages);
    // The /review prompt command is the task; the two typed requests before it start the turns.
    expect(structure.task).toBe(11);
    expect(structure.turns).toEqual([
      [0, 4],
      [4, 11],
    ]);
    // The meta expansion of /review counts as part of the task, the hook feedback as part of the message before it.
    expect(renderMessage(normalized.messages[11]!).text).toBe(
      '[user] <command-message>review is running…</command-message>\n<command-name>/review</command-name>\n' +
        'Review the changes on this branch and list anything that needs fixing before merge.',
    );
    expect(renderMessage(normalized.messages[7]!).text).toBe(
      '[assistant] The parser tests pass now.\nStop hook feedback:\nRun the linter before finishing.',
    );
    expect(renderMessage(normalized.messages[2]!).text).toBe(
      "[tool:Bash (error)] The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.",
    );
    expect(renderMessage(normalized.messages[3]!).text).toBe('[tool:] [Request interrupted by user for tool use]');
  });

  it("keeps a sub-agent's lines with the Task call they sit under, and counts them as removed messages", async () => {
    const input = fixture('sidechain.jsonl');
    const { normalized } = (await compactText(input, 1_000_000)).conversations[0]!;
    expect(normalized.itemsOf[1]).toEqual([1, 2, 3, 4, 5]);
    expect(normalized.messages[1]!.weight).toBe(5);
    const result = await compactText(input, 50);
    expect(parseLines(result.output).map(label)).toEqual([
      NOTE(8),
      'Thanks. Now write a test for it.',
      'call Write',
      'result toolu_13',
      'I wrote test/a.test.ts.',
    ]);
  });

  it('does not count sub-agent lines or the toolUseResult copies the model never sees', async () => {
    const input = fixture('sidechain.jsonl');
    const stripped = parseLines(input)
      .filter((l) => l.isSidechain !== true)
      .map((l) => {
        const { toolUseResult: _dropped, ...rest } = l;
        return JSON.stringify(rest);
      })
      .join('\n');
    const measure = async (text: string): Promise<number> =>
      (
        await compactSource(decodeSource(Buffer.from(text), 's.jsonl'), {
          target: 1_000_000,
          counter: createApproxCounter(),
        })
      ).conversations[0]!.plan.tokensBefore;
    expect(await measure(input)).toBe(await measure(stripped));
    expect(await measure(input)).toBeGreaterThan(0);
  });
});

describe('Claude Code sessions: what a compaction writes', () => {
  it('removes the lines of a split message together and chains the note in where the removed turn was', async () => {
    const input = fixture('split-assistant.jsonl');
    const result = await compactText(input, 50);
    const out = parseLines(result.output);
    expect(out.map(label)).toEqual([
      NOTE(7),
      'Now count the lines in a.ts.',
      'Counting.',
      'call Bash',
      'result toolu_03',
      'src/a.ts has 42 lines.',
    ]);
    const [note, task] = out as [Line, Line];
    expect(note.parentUuid).toBeNull();
    expect(task.parentUuid).toBe(note.uuid);
    expect(chainProblems(out)).toEqual([]);
    expect(pairingProblems(out)).toEqual([]);
    expectKeptVerbatim(input, result.output);
  });

  it('writes the note as a user line of the session, shaped like its user lines, with a name-based uuid', async () => {
    const input = fixture('split-assistant.jsonl');
    const inLines = parseLines(input);
    const noteRaw = linesOf((await compactText(input, 25)).output)[1] as string;
    const note = JSON.parse(noteRaw) as Line;
    const task = inLines[7] as Line;
    expect(Object.keys(note)).toEqual([
      'parentUuid',
      'isSidechain',
      'userType',
      'cwd',
      'sessionId',
      'version',
      'gitBranch',
      'type',
      'message',
      'uuid',
      'timestamp',
    ]);
    expect(note).toEqual({
      parentUuid: task.uuid,
      isSidechain: false,
      userType: 'external',
      cwd: '/work/demo',
      sessionId: SESSION,
      version: '1.0.98',
      gitBranch: 'main',
      type: 'user',
      message: { role: 'user', content: NOTE(10) },
      uuid: note.uuid,
      timestamp: task.timestamp,
    });
    expect(note.uuid).toMatch(NAME_UUID);
    expect(inLines.map((l) => l.uuid)).not.toContain(note.uuid);
    // Compact like the file's own lines: no spaces after ':' or ','.
    expect(noteRaw.startsWith(`{"parentUuid":"${task.uuid as string}","isSidechain":false,"userType":"external"`)).toBe(
      true,
    );
  });

  it('keeps the newest step after the task, relinks the task to no parent and the step to the note', async () => {
    const input = fixture('split-assistant.jsonl');
    const result = await compactText(input, 25);
    const out = parseLines(result.output);
    expect(out.map(label)).toEqual(['Now count the lines in a.ts.', NOTE(10), 'src/a.ts has 42 lines.']);
    const [task, note, step] = out as [Line, Line, Line];
    // The task's parent (the last line of the removed turn) is gone and nothing above it was kept.
    expect(task.parentUuid).toBeNull();
    expect(note.parentUuid).toBe(task.uuid);
    expect(step.parentUuid).toBe(note.uuid);
    expectKeptVerbatim(input, result.output);
  });

  it('relinks a line whose parent went to its nearest kept ancestor when there is no note', async () => {
    const input = fixture('split-assistant.jsonl');
    const result = await compactSource(decodeSource(Buffer.from(input), 's.jsonl'), {
      target: 25,
      note: null,
      counter: createFakeCounter(10),
    });
    const out = parseLines(result.output);
    expect(out.map(label)).toEqual(['Now count the lines in a.ts.', 'src/a.ts has 42 lines.']);
    expect(out[0]!.parentUuid).toBeNull();
    expect(out[1]!.parentUuid).toBe(out[0]!.uuid);
    expectKeptVerbatim(input, result.output);
  });

  it('chains the note to the pinned lines before it when the first turn goes', async () => {
    const input = fixture('interruption-meta.jsonl');
    const inLines = parseLines(input);
    const result = await compactText(input, 100);
    const out = parseLines(result.output);
    expect(out.slice(0, 5).map(label)).toEqual([
      label(inLines[0]!),
      label(inLines[1]!),
      label(inLines[2]!),
      NOTE(4),
      'Run only the parser tests.',
    ]);
    expect(out[3]!.parentUuid).toBe(inLines[2]!.uuid);
    expect(out[4]!.parentUuid).toBe(out[3]!.uuid);
    expect(out).toHaveLength(inLines.length - 4 + 1);
    expect(chainProblems(out)).toEqual([]);
    expect(pairingProblems(out)).toEqual([]);
    expectKeptVerbatim(input, result.output);
  });

  it('keeps every summary that pointed at a kept line as it was, and points one whose leaf went at its nearest kept ancestor', async () => {
    const input = fixture('summary.jsonl');
    const inRaw = linesOf(input);
    const inLines = parseLines(input);
    const turnGone = await compactText(input, 50);
    const out = linesOf(turnGone.output);
    // The compact boundary and its summary sat in the first turn and went with it (5 messages: the boundary is none).
    expect(parseLines(turnGone.output).map(label)).toEqual([
      'summary: Verbose flag',
      'summary: Quiet flag, half done',
      'summary: Flags added',
      'summary: Another session',
      NOTE(5),
      'Now add a --quiet flag.',
      'call Edit',
      'result toolu_33',
      'Added --quiet.',
    ]);
    expect(out.slice(0, 4)).toEqual(inRaw.slice(0, 4));

    const stepsGone = parseLines((await compactText(input, 25)).output);
    expect(stepsGone.map(label)).toEqual([
      'summary: Verbose flag',
      'summary: Quiet flag, half done',
      'summary: Flags added',
      'summary: Another session',
      'Now add a --quiet flag.',
      NOTE(7),
      'Added --quiet.',
    ]);
    // The half-done summary's leaf (the removed Edit call) now is the task, its nearest kept ancestor.
    expect(stepsGone[1]!.leafUuid).toBe(inLines[10]!.uuid);
    expect(stepsGone[2]).toEqual(inLines[2]);
    expect(stepsGone[3]).toEqual(inLines[3]);
    expect(chainProblems(stepsGone)).toEqual([]);
  });

  it('changes nothing on a second run at the same target', async () => {
    for (const name of ['split-assistant.jsonl', 'sidechain.jsonl', 'interruption-meta.jsonl', 'summary.jsonl']) {
      for (const target of [25, 50, 100]) {
        const first = (await compactText(fixture(name), target)).output;
        const second = await compactText(first, target);
        expect({ name, target, changed: second.changed }).toEqual({ name, target, changed: false });
        expect(second.output).toBe(first);
      }
    }
  });

  it('points at the line of an event that is not an object when the format is named', async () => {
    const text = `${linesOf(fixture('split-assistant.jsonl')).slice(0, 2).join('\n')}\n[1, 2]\n`;
    const run = async (): Promise<FileResult> =>
      await compactSource(decodeSource(Buffer.from(text), 'bad.jsonl'), {
        target: 10,
        format: 'claude-code',
        counter: createFakeCounter(10),
      });
    await expect(run()).rejects.toThrow(InputError);
    await expect(run()).rejects.toThrow('bad.jsonl:3:1: message 3: expected an event object, found a list');
  });
});

describe("Claude Code sessions: a sub-agent's own log", () => {
  const file = path.join(FIXTURES, 'subagents/agent-a9f4657.jsonl');
  const input = readFileSync(file, 'utf8');

  it('reads the sidechain as the conversation when every line is on it', async () => {
    const { normalized } = (await compactText(input, 1_000_000, 'agent-a9f4657.jsonl')).conversations[0]!;
    expect(normalized.messages.map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
      'tool',
      'assistant',
      'tool',
      'assistant',
    ]);
    expect(analyze(normalized.messages).task).toBe(0);
  });

  it('compacts it through the CLI into a valid sub-agent log that a second run leaves alone', async () => {
    const tmp = tempDir();
    const outFile = path.join(tmp, 'agent-a9f4657.jsonl');
    const run = await runSwc(['compact', file, '--tokenizer', 'approx', '-t', '60', '-o', outFile], { cwd: ROOT });
    expect(run.status).toBe(0);
    const output = readFileSync(outFile, 'utf8');
    const out = parseLines(output);
    expect(out.map(label)).toEqual([
      'Find where the --verbose flag is parsed and report the file and line.',
      NOTE(6),
      'The flag is parsed in src/log.ts, line 1.',
    ]);
    // The note is a line of the same sub-agent: on its sidechain, with its agentId.
    expect(out[1]).toMatchObject({ isSidechain: true, agentId: 'a9f4657', sessionId: SESSION, type: 'user' });
    expect(Object.keys(out[1]!)).toEqual(Object.keys(out[0]!).filter((k) => k !== 'toolUseResult'));
    expect(out.every((l) => l.isSidechain === true)).toBe(true);
    expect(chainProblems(out)).toEqual([]);
    expect(pairingProblems(out)).toEqual([]);
    expectKeptVerbatim(input, output);
    const again = await runSwc(['compact', outFile, '--tokenizer', 'approx', '-t', '60'], { cwd: ROOT });
    expect(again.status).toBe(0);
    expect(again.stdout).toBe(output);
  });
});

describe('Claude Code sessions: real logs through the CLI', () => {
  const dir = path.join(REAL_DATA, 'claude-code');
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.jsonl'))
    .sort();

  it('finds the four real session logs', () => {
    expect(files).toHaveLength(4);
  });

  for (const file of files) {
    it(`compacts ${file} at several targets into a valid session that a second run leaves alone`, async () => {
      const source = path.join(dir, file);
      const input = readFileSync(source, 'utf8');
      const inLines = parseLines(input);
      const original = (await compactText(input, 1_000_000)).conversations[0]!.normalized;
      const task = analyze(original.messages).task;
      const taskUuid = task === null ? null : (inLines[original.itemsOf[task]![0]!]!.uuid as string);
      const tmp = tempDir();
      for (const target of ['1500', '4000', '9000']) {
        const outFile = path.join(tmp, `${target}.jsonl`);
        const run = await runSwc(['compact', source, '-t', target, '-o', outFile], { cwd: ROOT });
        expect(run.status).toBe(0);
        expect(run.stderr).toMatch(new RegExp(`^swc: .*${file.replace(/\./g, '\\.')}: .*\\n$`));
        const output = readFileSync(outFile, 'utf8');
        const out = parseLines(output);
        expect(
          (
            await compactSource(decodeSource(Buffer.from(output), file), {
              target: 1_000_000,
              counter: createFakeCounter(1),
            })
          ).format,
        ).toBe('claude-code');
        expect(chainProblems(out)).toEqual([]);
        expect(pairingProblems(out)).toEqual([]);
        if (taskUuid !== null) expect(out.map((l) => l.uuid)).toContain(taskUuid);
        expectKeptVerbatim(input, output);
        const again = await runSwc(['compact', outFile, '-t', target], { cwd: ROOT });
        expect(again.status).toBe(0);
        expect(again.stdout).toBe(output);
      }
    });
  }
});
