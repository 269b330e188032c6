/**
 * Broken and hostile input, through the command line run in process: each case gets exactly one line on stderr (file,
 * line and column where they apply, the reason in plain words), exit code 2, nothing on stdout, no output file, the
 * input unchanged and no stack trace. One fixture per file case lives in fixtures/bad/; the deep cases are generated
 * here, the line of 200 MB in test/e2e/bad-input.test.ts.
 */
import { describe, expect, it } from '@jest/globals';
import { readFileSync, readdirSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { MAX_JSON_DEPTH } from '../src/core/json/value.js';
import { CONVERSATION_KEYS, LIST_KEYS } from '../src/io/layout.js';
import { BAD, expectRefused, workDir } from './helpers/bad-input.js';
import { ROOT } from './helpers/cli.js';
import { runSwc } from './helpers/run-in-process.js';

const APPROX = ['--tokenizer', 'approx'];

async function refuseFixture(name: string, message: string): Promise<void> {
  await expectRefused(name, ['-t', '100', ...APPROX], message);
}

describe('a file that is not a transcript', () => {
  it('is refused when it is empty', async () => {
    await refuseFixture('empty.json', 'swc: empty.json: the file is empty');
  });

  it('is refused when it holds only whitespace', async () => {
    await refuseFixture('whitespace-only.json', 'swc: whitespace-only.json: the file holds only whitespace');
  });

  it('is refused at the string the file ends inside when the JSON is truncated', async () => {
    await refuseFixture(
      'truncated.json',
      'swc: truncated.json:4:36: invalid JSON: unterminated string (the file ends inside it: truncated?)',
    );
  });

  it('is refused at the first character after the JSON value when garbage trails it', async () => {
    await refuseFixture(
      'trailing-garbage.json',
      'swc: trailing-garbage.json:5:1: invalid JSON: unexpected data after the JSON value (trailing garbage, or JSONL saved as .json?)',
    );
  });

  it('is refused naming the one bad line of a JSONL file and the column in it', async () => {
    await refuseFixture('bad-line.jsonl', 'swc: bad-line.jsonl:3:38: line 3 is not valid JSON: expected a key string');
  });

  it('is refused at the first byte that is not UTF-8', async () => {
    await refuseFixture(
      'invalid-utf8.json',
      'swc: invalid-utf8.json:3:37: invalid UTF-8 (byte 0xe9 at byte offset 90)',
    );
  });

  it('is refused as UTF-16 when it starts with a UTF-16 byte-order mark', async () => {
    await refuseFixture(
      'utf16.json',
      'swc: utf16.json: the file is UTF-16 (it starts with a UTF-16 byte-order mark); convert it to UTF-8 first',
    );
  });

  it('is refused at a NUL byte', async () => {
    await refuseFixture('nul-byte.json', 'swc: nul-byte.json:3:37: NUL byte in the file (is it binary?)');
  });

  it('is refused when it is a single value rather than a list of messages', async () => {
    await refuseFixture(
      'single-value.json',
      'swc: single-value.json:1:1: expected a list of messages or an object holding one, found a single value',
    );
  });

  it('is refused when an object holds no message list', async () => {
    // The keys looked for grow with the formats; the message lists them all.
    const keys = [...new Set([...LIST_KEYS, ...CONVERSATION_KEYS])].map((k) => `"${k}"`).join(', ');
    await refuseFixture(
      'no-message-list.json',
      `swc: no-message-list.json:1:1: no message list found: expected a top-level list or an object with ${keys} (found keys: model, prompt)`,
    );
  });
});

describe('a transcript with a malformed message', () => {
  it('is refused at a number where a message should be', async () => {
    await refuseFixture(
      'number-as-message.json',
      'swc: number-as-message.json:3:3: message 2: expected a message object, found a number',
    );
  });

  it('is refused at a string where a message should be', async () => {
    await refuseFixture(
      'string-as-message.json',
      'swc: string-as-message.json:3:3: message 2: expected a message object, found a string',
    );
  });

  it('is refused at a message with no role', async () => {
    await refuseFixture('no-role.json', 'swc: no-role.json:3:3: message 2: no "role"');
  });

  it('is refused at a message with an unknown role', async () => {
    await refuseFixture(
      'unknown-role.json',
      'swc: unknown-role.json:3:3: message 2: unknown role "wizard" (expected system, developer, user, assistant, tool or function)',
    );
  });

  it('is refused at a role named like an Object.prototype member, which is no role at all', async () => {
    await refuseFixture(
      'proto-role.json',
      'swc: proto-role.json:3:3: message 2: unknown role "__proto__" (expected system, developer, user, assistant, tool or function)',
    );
  });

  it('is refused at content of the wrong type', async () => {
    await refuseFixture(
      'content-wrong-type.json',
      'swc: content-wrong-type.json:3:3: message 2: "content" must be a string, null or a list of parts, found an object',
    );
  });

  it('is refused at tool_calls of the wrong type', async () => {
    await refuseFixture(
      'tool-calls-wrong-type.json',
      'swc: tool-calls-wrong-type.json:4:3: message 3: "tool_calls" must be a list of objects, found a string',
    );
  });

  it('is refused at Haystack content that is not a list of parts', async () => {
    await refuseFixture(
      'haystack-content-wrong-type.json',
      'swc: haystack-content-wrong-type.json:3:3: message 2: "content" must be a list of part objects, found an object',
    );
  });

  it('is refused at a role Haystack does not have', async () => {
    await refuseFixture(
      'haystack-unknown-role.json',
      'swc: haystack-unknown-role.json:3:3: message 2: unknown role "developer" (expected system, user, assistant or tool)',
    );
  });
});

describe('an error that quotes a name or a value', () => {
  it('stays on one line when the file name holds a newline and an escape sequence', async () => {
    await expectRefused(
      'bad\n\u001b[31mname.json',
      ['-t', '100', ...APPROX],
      'swc: bad\\u000a\\u001b[31mname.json: the file is empty',
      '',
    );
  });

  it('stays on one line when the target holds a newline', async () => {
    await expectRefused(
      'missing-tool-call.json',
      ['-t', '1\n2', ...APPROX],
      'swc: error: --target must be a whole number, got "1\\u000a2"',
    );
  });
});

describe('the same refusal wherever the output would go', () => {
  const message = 'swc: truncated.json:4:36: invalid JSON: unterminated string (the file ends inside it: truncated?)';

  it('writes nothing to stdout', async () => {
    const dir = workDir('truncated.json');
    expect(await runSwc(['compact', 'truncated.json', '-t', '100', ...APPROX], { cwd: dir })).toEqual({
      status: 2,
      stdout: '',
      stderr: `${message}\n`,
    });
  });

  it('leaves the file and its directory untouched with --in-place', async () => {
    const dir = workDir('truncated.json');
    // --quiet leaves out the batch summary --in-place prints after the files.
    const run = await runSwc(['compact', 'truncated.json', '-t', '100', '--in-place', '--quiet', ...APPROX], {
      cwd: dir,
    });
    expect(run).toEqual({ status: 2, stdout: '', stderr: `${message}\n` });
    expect(readdirSync(dir)).toEqual(['truncated.json']);
    expect(readFileSync(path.join(dir, 'truncated.json'))).toEqual(readFileSync(path.join(BAD, 'truncated.json')));
  });

  it('names standard input as <stdin>', async () => {
    const run = await runSwc(['compact', '-', '-t', '100', ...APPROX], {
      cwd: ROOT,
      stdin: readFileSync(path.join(BAD, 'truncated.json')),
    });
    expect(run).toEqual({
      status: 2,
      stdout: '',
      stderr: 'swc: <stdin>:4:36: invalid JSON: unterminated string (the file ends inside it: truncated?)\n',
    });
  });

  it('prints the same single line with --debug, since the error is a known one', async () => {
    const dir = workDir('truncated.json');
    expect(await runSwc(['compact', 'truncated.json', '-t', '100', '--debug', ...APPROX], { cwd: dir })).toEqual({
      status: 2,
      stdout: '',
      stderr: `${message}\n`,
    });
  });

  it('leaves no file behind when the output path is a directory', async () => {
    const dir = workDir('missing-tool-call.json');
    mkdirSync(path.join(dir, 'out'));
    const run = await runSwc(['compact', 'missing-tool-call.json', '-t', '100', '-o', 'out', ...APPROX], { cwd: dir });
    expect(run).toEqual({ status: 2, stdout: '', stderr: 'swc: out: cannot write: is a directory\n' });
    expect(readdirSync(dir).sort()).toEqual(['missing-tool-call.json', 'out']);
    expect(readdirSync(path.join(dir, 'out'))).toEqual([]);
  });
});

describe('a tool result whose call is missing', () => {
  const file = path.join(BAD, 'missing-tool-call.json');
  const lines = readFileSync(file, 'utf8').split('\n');
  const note = (n: number): string =>
    `  {"role": "user", "content": "[${n} earlier messages were removed from this conversation to free up context and cannot be recovered.]"},`;

  it('is no error: a file that fits comes out unchanged', async () => {
    const run = await runSwc(['compact', file, '-t', '1000', ...APPROX], { cwd: ROOT });
    expect(run.status).toBe(0);
    expect(run.stdout).toBe(readFileSync(file, 'utf8'));
  });

  it('stays where it is, after the result it follows, when its step is kept', async () => {
    const run = await runSwc(['compact', file, '-t', '100', ...APPROX], { cwd: ROOT });
    expect(run.status).toBe(0);
    expect(run.stdout).toBe([lines[0], lines[1], note(2), ...lines.slice(4)].join('\n'));
  });

  it('goes together with the call and the result of its step when that step is removed', async () => {
    const run = await runSwc(['compact', file, '-t', '30', ...APPROX], { cwd: ROOT });
    expect(run.status).toBe(0);
    expect(run.stdout).toBe([lines[0], lines[1], lines[4], note(5), ...lines.slice(8)].join('\n'));
  });
});

describe('deeply nested JSON', () => {
  /** `levels` openers, the inner text, `levels` closers. */
  const deep = (open: string, inner: string, close: string, levels = 100_000): string =>
    open.repeat(levels) + inner + close.repeat(levels);
  // As deep as a message's member can be and the file stay within MAX_JSON_DEPTH (the list and the message are 2).
  const WITHIN = MAX_JSON_DEPTH - 2;
  const system = '{"role":"system","content":"Be terse."}';
  const old = `{"role":"user","content":"${'An old question. '.repeat(20).trim()}"}`;
  const note =
    '{"role":"user","content":"[1 earlier messages were removed from this conversation to free up context and cannot be recovered.]"}';
  const tooDeep = `the JSON is nested deeper than ${MAX_JSON_DEPTH.toLocaleString('en-US')} levels of arrays and objects; swc refuses JSON this deep`;

  it('is kept byte for byte inside a message that survives compaction, up to the depth limit', async () => {
    const task = `{"role":"user","content":"Now this.","x":${deep('[', '', ']', WITHIN)}}`;
    const dir = workDir('deep.json', `[${system},${old},${task}]`);
    const run = await runSwc(['compact', 'deep.json', '-t', '20', ...APPROX], { cwd: dir });
    expect(run.status).toBe(0);
    expect(run.stdout).toBe(`[${system},${note},${task}]`);
  });

  it('in OpenAI tool-call arguments (a string) 100,000 levels deep is measured as its text without a crash', async () => {
    const args = JSON.stringify(deep('{"a":', '1', '}'));
    const text = `${system}\n{"role":"user","content":"Go."}\n{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":${args}}}]}\n{"role":"tool","tool_call_id":"c1","content":"ok"}\n`;
    const dir = workDir('deep.jsonl', text);
    const run = await runSwc(['compact', 'deep.jsonl', '-t', '100000', ...APPROX], { cwd: dir });
    expect(run.status).toBe(0);
    expect(run.stdout).toBe(text);
  });

  it('in Haystack tool-call arguments is measured without a crash, up to the depth limit', async () => {
    const item = (role: string, part: string): string => `{"role":"${role}","meta":{},"name":null,"content":[${part}]}`;
    // The list, the message, its content list, the part and the tool call are 5 levels.
    const text = `[${item('user', '{"text":"Go."}')},${item('assistant', `{"tool_call":{"tool_name":"f","arguments":${deep('{"a":', '1', '}', MAX_JSON_DEPTH - 5)},"id":"c1"}}`)}]`;
    const dir = workDir('deep.json', text);
    const run = await runSwc(['compact', 'deep.json', '-t', '100000', ...APPROX], { cwd: dir });
    expect(run.status).toBe(0);
    expect(run.stdout).toBe(text);
  });

  it('is refused past the limit, at the bracket that opens the level past it, even when it is never closed', async () => {
    const head = `[${system},{"role":"user","content":"Now this.","x":`;
    const text = `${head}${'['.repeat(100000)}`;
    // The list and the message are 2 levels: level 10,001 opens at the 9,999th bracket of "x".
    await expectRefused(
      'deep.json',
      ['-t', '20', ...APPROX],
      `swc: deep.json:1:${head.length + MAX_JSON_DEPTH - 1}: ${tooDeep}`,
      text,
    );
  });

  it('is refused past the limit when the file is nothing but nesting', async () => {
    await expectRefused(
      'deep.json',
      ['-t', '20', ...APPROX],
      `swc: deep.json:1:${MAX_JSON_DEPTH + 1}: ${tooDeep}`,
      deep('[', '', ']'),
    );
  });
});

describe('a hostile note template', () => {
  const file = path.join(BAD, 'missing-tool-call.json');
  const lines = readFileSync(file, 'utf8').split('\n');
  const withNote = (text: string): string =>
    [lines[0], lines[1], `  {"role": "user", "content": ${JSON.stringify(text)}},`, ...lines.slice(4)].join('\n');

  it('of 10,000 characters is written in full and recognised on the next run', async () => {
    const template = `Removed {num_removed}: ${'x'.repeat(10000 - 'Removed {num_removed}: '.length)}`;
    expect(template).toHaveLength(10000);
    const dir = workDir('missing-tool-call.json');
    const first = await runSwc(
      ['compact', 'missing-tool-call.json', '-t', '100', '--note', template, '-o', 'out.json', ...APPROX],
      { cwd: dir },
    );
    expect(first.status).toBe(0);
    expect(readFileSync(path.join(dir, 'out.json'), 'utf8')).toBe(withNote(template.replace('{num_removed}', '2')));
    const second = await runSwc(['compact', 'out.json', '-t', '100', '--note', template, ...APPROX], { cwd: dir });
    expect(second.status).toBe(0);
    expect(second.stdout).toBe(readFileSync(path.join(dir, 'out.json'), 'utf8'));
  });

  it('full of regular-expression and $ patterns is filled in literally and recognised on the next run', async () => {
    const template = readFileSync(path.join(BAD, 'note-template-regex.txt'), 'utf8');
    const dir = workDir('missing-tool-call.json');
    const first = await runSwc(
      ['compact', 'missing-tool-call.json', '-t', '100', '--note', template, '-o', 'out.json', ...APPROX],
      { cwd: dir },
    );
    expect(first.status).toBe(0);
    const text = String.raw`Removed 2 message(s) $& $1 $$ $` + "` $' (.*) [^a-z]+ \\d{2,} ^$ | {0} \\{num_removed\\} 2";
    expect(readFileSync(path.join(dir, 'out.json'), 'utf8')).toBe(withNote(text));
    const second = await runSwc(['compact', 'out.json', '-t', '100', '--note', template, ...APPROX], { cwd: dir });
    expect(second.status).toBe(0);
    expect(second.stdout).toBe(readFileSync(path.join(dir, 'out.json'), 'utf8'));
  });
});

describe('a bad target or flag', () => {
  const refuseArgs = async (args: string[], message: string): Promise<void> => {
    await expectRefused('missing-tool-call.json', args, message);
  };

  it.each([
    ['0', 'swc: error: --target must be at least 1, got 0'],
    ['-5', 'swc: error: --target must be at least 1, got -5'],
    ['2.5', 'swc: error: --target must be a whole number, got "2.5"'],
    ['abc', 'swc: error: --target must be a whole number, got "abc"'],
    ['', 'swc: error: --target must be a whole number, got ""'],
  ])('refuses --target %j with one line', async (target, message) => {
    await refuseArgs(['--target', target, ...APPROX], message);
  });

  it('refuses a negative or fractional --min-keep-steps', async () => {
    await refuseArgs(['-t', '100', '-k', '-1', ...APPROX], 'swc: error: --min-keep-steps must be at least 0, got -1');
    await refuseArgs(
      ['-t', '100', '-k', '1.5', ...APPROX],
      'swc: error: --min-keep-steps must be a whole number, got "1.5"',
    );
  });

  it('refuses an unknown flag and suggests the closest one', async () => {
    await refuseArgs(['-t', '100', '--tagret', '5'], "swc: error: unknown option '--tagret' (did you mean --target?)");
    await refuseArgs(['-t', '100', '--in-plac'], "swc: error: unknown option '--in-plac' (did you mean --in-place?)");
  });

  it('refuses an unknown flag with no close match without a suggestion', async () => {
    await refuseArgs(['-t', '100', '-x'], "swc: error: unknown option '-x'");
  });

  it('refuses an unknown command and suggests the closest one', async () => {
    const dir = workDir('missing-tool-call.json');
    const run = await runSwc(['compat', 'missing-tool-call.json', '-t', '100'], { cwd: dir });
    expect(run).toEqual({
      status: 2,
      stdout: '',
      stderr: "swc: error: unknown command 'compat' (did you mean compact?)\n",
    });
  });
});
