/**
 * Byte-exact round trips through the command line (run in process): kept items are copied from the input text, never
 * re-serialized, so number lexemes (`1.0`, `1e400`, `-0`, 2^53+1), escapes (`\u00e9` next to `é`), duplicate keys and
 * `__proto__`/`constructor`/`prototype` keys come out as they went in; the note and the joins follow the file's own
 * style (indentation, separators, LF or CRLF, final newline or not, byte-order mark); a file that needs nothing comes
 * out identical. Expected outputs are written out in full.
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { tempDir } from './helpers/cli.js';
import { runSwc } from './helpers/run-in-process.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function freshDir(): string {
  const dir = tempDir();
  dirs.push(dir);
  return dir;
}

/** Writes a file into a fresh temporary directory; returns the directory and the file's path. */
function place(name: string, content: string): { dir: string; file: string } {
  const dir = freshDir();
  const file = path.join(dir, name);
  writeFileSync(file, content, 'utf8');
  return { dir, file };
}

/** Compacts a file to stdout with the approximate counter (so the decision is the same on every machine). */
async function compactText(name: string, content: string, target: number, extra: string[] = []): Promise<string> {
  const { dir } = place(name, content);
  const run = await runSwc(['compact', name, '-t', String(target), '--tokenizer', 'approx', ...extra], { cwd: dir });
  expect(run.stderr).not.toMatch(/^swc: .*(error|cannot|invalid)/m);
  expect(run.status).toBe(0);
  return run.stdout;
}

// One OpenAI conversation, its items as a person or an SDK wrote them. At --target 200 the old turn (U1, A1) goes.
const S = String.raw`{"role": "system", "content": "Be exact.", "__proto__": {"role": "user"}, "constructor": 1.0, "prototype": -0}`;
const U1 = `{"role": "user", "content": "${'Tell me about order 1. '.repeat(30).trim()}"}`;
const A1 = `{"role": "assistant", "content": "${'Order 1 shipped on time. '.repeat(30).trim()}", "n": 1e400}`;
const T = String.raw`{"role": "user", "content": "first draft", "content": "Compare caf\u00e9 and café for order 9007199254740993."}`;
const A2 = String.raw`{"role": "assistant", "content": null, "tool_calls": [{"id": "call_9007199254740993", "type": "function", "function": {"name": "lookup", "arguments": "{\"order\": 9007199254740993, \"ratio\": 1.0, \"limit\": 1e400, \"offset\": -0}"}}], "usage": {"total": 1.0e0, "big": 12345678901234567890}}`;
const R2 = String.raw`{"role": "tool", "tool_call_id": "call_9007199254740993", "content": "r\u00e9sultat \ud83d\ude00 \/ ok", "__proto__": null}`;
const A3 = String.raw`{"role": "assistant", "content": "Done: caf\u00e9 = café.", "constructor": {"prototype": {"polluted": true}}}`;
const ITEMS = [S, U1, A1, T, A2, R2, A3];
const NOTE_TEXT =
  '[2 earlier messages were removed from this conversation to free up context and cannot be recovered.]';
const NOTE = `{"role": "user", "content": "${NOTE_TEXT}"}`;
const KEPT = [S, NOTE, T, A2, R2, A3];
const TARGET = 200;

describe('a compacted OpenAI JSON file', () => {
  it('keeps items byte for byte in a list with one item per line, LF and a final newline', async () => {
    const input = `[\n  ${ITEMS.join(',\n  ')}\n]\n`;
    expect(await compactText('chat.json', input, TARGET)).toBe(`[\n  ${KEPT.join(',\n  ')}\n]\n`);
  });

  it('keeps tabs, CRLF, the byte-order mark and the missing final newline', async () => {
    const input = `\ufeff[\r\n\t${ITEMS.join(',\r\n\t')}\r\n]`;
    expect(await compactText('chat.json', input, TARGET)).toBe(`\ufeff[\r\n\t${KEPT.join(',\r\n\t')}\r\n]`);
  });

  it('writes the note with the separators of the first item in a one-line file', async () => {
    const compactS = String.raw`{"role":"system","content":"Be exact.","__proto__":{"role":"user"},"constructor":1.0,"prototype":-0}`;
    const input = `[${[compactS, ...ITEMS.slice(1)].join(',')}]`;
    const note = `{"role":"user","content":"${NOTE_TEXT}"}`;
    expect(await compactText('chat.json', input, TARGET)).toBe(`[${[compactS, note, T, A2, R2, A3].join(',')}]`);
  });

  it('leaves the other keys of a request body as written, __proto__ and odd numbers included', async () => {
    const body = (items: string[]): string =>
      '{\n  "model": "gpt-4o",\n  "__proto__": {"messages": []},\n  "temperature": 1.0,\n' +
      `  "messages": [\n    ${items.join(',\n    ')}\n  ],\n` +
      '  "seed": 9007199254740993,\n  "constructor": {"prototype": -0}\n}\n';
    expect(await compactText('request.json', body(ITEMS), TARGET)).toBe(body(KEPT));
  });

  it('compacts the last of duplicate "messages" keys, as JSON.parse reads it, and leaves the first as written', async () => {
    const body = (items: string[]): string => `{"messages": [${S}], "messages": [\n  ${items.join(',\n  ')}\n]}`;
    expect(await compactText('request.json', body(ITEMS), TARGET)).toBe(body(KEPT));
  });

  it('writes the note pretty-printed like its neighbours in a file indented by four spaces', async () => {
    const item = (...lines: string[]): string =>
      `        {\n${lines.map((l) => `            ${l}`).join(',\n')}\n        }`;
    const system = item('"role": "system"', '"content": "Be exact."', '"constructor": 1.0');
    const old = item('"role": "user"', `"content": "${'Tell me about order 1. '.repeat(30).trim()}"`);
    const answer = item('"role": "assistant"', `"content": "${'Order 1 shipped on time. '.repeat(30).trim()}"`);
    const task = item(
      '"role": "user"',
      String.raw`"content": "Compare caf\u00e9 and café for order 9007199254740993."`,
    );
    const done = item('"role": "assistant"', '"content": "Done."', '"n": 1e400', '"m": -0');
    const note = item('"role": "user"', `"content": "${NOTE_TEXT}"`);
    const file = (items: string[]): string => `{\n    "messages": [\n${items.join(',\n')}\n    ]\n}`;
    expect(await compactText('pretty.json', file([system, old, answer, task, done]), 150)).toBe(
      file([system, note, task, done]),
    );
  });
});

describe('a compacted OpenAI JSONL file', () => {
  it('keeps lines byte for byte with LF and a final newline', async () => {
    expect(await compactText('chat.jsonl', `${ITEMS.join('\n')}\n`, TARGET)).toBe(`${KEPT.join('\n')}\n`);
  });

  it('keeps CRLF, the byte-order mark and the missing final newline', async () => {
    expect(await compactText('chat.jsonl', `\ufeff${ITEMS.join('\r\n')}`, TARGET)).toBe(`\ufeff${KEPT.join('\r\n')}`);
  });

  it('writes the note with the separators the lines use', async () => {
    const compactS = String.raw`{"role":"system","content":"Be exact.","constructor":1.0}`;
    const note = `{"role":"user","content":"${NOTE_TEXT}"}`;
    const input = [compactS, ...ITEMS.slice(1)].join('\n');
    expect(await compactText('chat.jsonl', input, TARGET)).toBe([compactS, note, T, A2, R2, A3].join('\n'));
  });

  it('writes an empty file, not a blank line, when no line is left', async () => {
    // No instructions, no task and no note: a window of one token keeps nothing.
    const answers = [A1, A3].join('\n');
    expect(await compactText('chat.jsonl', `${answers}\n`, 1, ['--no-note', '-k', '0'])).toBe('');
    expect(await compactText('chat.jsonl', `${answers.replace('\n', '\r\n')}\r\n`, 1, ['--no-note', '-k', '0'])).toBe(
      '',
    );
  });
});

// A Haystack `to_dict()` dump, indented by two spaces as Python's json.dump(indent=2) writes it.
const HAYSTACK_SYSTEM = `  {
    "role": "system",
    "meta": {"__proto__": {"context_compaction": {"strategy": "sliding_window"}}},
    "name": null,
    "content": [{"text": "Be exact."}]
  }`;
const HAYSTACK_OLD = `  {
    "role": "user",
    "meta": {},
    "name": null,
    "content": [{"text": "${'Tell me about order 1. '.repeat(30).trim()}"}]
  }`;
const HAYSTACK_OLD_ANSWER = `  {
    "role": "assistant",
    "meta": {},
    "name": null,
    "content": [{"text": "${'Order 1 shipped on time. '.repeat(30).trim()}"}]
  }`;
const HAYSTACK_TASK = String.raw`  {
    "role": "user",
    "meta": {"constructor": {"prototype": 1.0}},
    "name": null,
    "content": [{"text": "Compare caf\u00e9 and café."}]
  }`;
const HAYSTACK_CALL = `  {
    "role": "assistant",
    "meta": {"usage": {"prompt_tokens": 1.0e0}},
    "name": null,
    "content": [{"tool_call": {"tool_name": "lookup", "arguments": {"order": 9007199254740993, "ratio": 1.0, "limit": 1e400, "offset": -0}, "id": "call_1"}}]
  }`;
const HAYSTACK_RESULT = String.raw`  {
    "role": "tool",
    "meta": {},
    "name": null,
    "content": [{"tool_call_result": {"result": "r\u00e9sultat \ud83d\ude00", "origin": {"tool_name": "lookup", "arguments": {}, "id": "call_1"}, "error": false}}]
  }`;
// The note is written as json.dump(indent=2) would write it, at the list's indentation.
const HAYSTACK_NOTE = `  {
    "role": "user",
    "meta": {
      "context_compaction": {
        "strategy": "sliding_window",
        "removed_messages": 2,
        "kept_messages": 4
      }
    },
    "name": null,
    "content": [
      {
        "text": "${NOTE_TEXT}"
      }
    ]
  }`;

describe('a compacted Haystack JSON file', () => {
  it('keeps items byte for byte, reads a __proto__ member of meta as data, and writes its note with metadata', async () => {
    const file = (items: string[]): string => `[\n${items.join(',\n')}\n]\n`;
    const input = file([
      HAYSTACK_SYSTEM,
      HAYSTACK_OLD,
      HAYSTACK_OLD_ANSWER,
      HAYSTACK_TASK,
      HAYSTACK_CALL,
      HAYSTACK_RESULT,
    ]);
    // The system message stays an instruction: its meta's __proto__ member is not compaction metadata.
    expect(await compactText('chat.json', input, TARGET)).toBe(
      file([HAYSTACK_SYSTEM, HAYSTACK_NOTE, HAYSTACK_TASK, HAYSTACK_CALL, HAYSTACK_RESULT]),
    );
  });
});

describe('keys such as __proto__ change no decision', () => {
  it('compacts a conversation full of __proto__, constructor and prototype keys exactly as the same one without them', async () => {
    const clean = [
      '{"role": "system", "content": "Be exact."}',
      U1,
      A1,
      T,
      A2,
      String.raw`{"role": "tool", "tool_call_id": "call_9007199254740993", "content": "r\u00e9sultat \ud83d\ude00 \/ ok"}`,
      String.raw`{"role": "assistant", "content": "Done: caf\u00e9 = café."}`,
    ];
    expect(clean.join('\n')).not.toMatch(/__proto__|constructor|prototype/);
    const keptOf = async (items: string[]): Promise<number[]> => {
      const out = (await compactText('chat.jsonl', `${items.join('\n')}\n`, TARGET)).trimEnd().split('\n');
      return out.map((line) => items.indexOf(line));
    };
    expect(await keptOf(ITEMS)).toEqual([0, -1, 3, 4, 5, 6]);
    expect(await keptOf(clean)).toEqual([0, -1, 3, 4, 5, 6]);
  });
});

const UNCHANGED: Array<[string, string]> = [
  ['chat.json', `[\n  ${ITEMS.join(',\n  ')}\n]\n`],
  ['chat.json', `\ufeff[\r\n\t${ITEMS.join(',\r\n\t')}\r\n]`],
  ['chat.json', `[${ITEMS.join(',')}]`],
  ['chat.json', `  [ ${ITEMS.join(' ,\n\n ')} ]  \n\n`],
  ['chat.jsonl', `${ITEMS.join('\n')}\n`],
  ['chat.jsonl', `\ufeff${ITEMS.join('\r\n')}`],
  ['chat.jsonl', `${ITEMS.join('\n\n')}\n\n`],
  [
    'haystack.json',
    `[\n${[HAYSTACK_SYSTEM, HAYSTACK_OLD, HAYSTACK_TASK, HAYSTACK_CALL, HAYSTACK_RESULT].join(',\n')}\n]`,
  ],
];

describe('a file that needs nothing', () => {
  it.each(UNCHANGED.map(([name, text], k): [number, string, string] => [k + 1, name, text]))(
    'comes out byte for byte as it went in (case %i, %s)',
    async (_k, name, text) => {
      expect(await compactText(name, text, 100000)).toBe(text);
    },
  );

  it('is written identically by -o and left untouched by --in-place', async () => {
    const [name, text] = UNCHANGED[1] as [string, string];
    const { dir, file } = place(name, text);
    const out = path.join(dir, 'out.json');
    expect(
      (await runSwc(['compact', name, '-t', '100000', '--tokenizer', 'approx', '-o', out], { cwd: dir })).status,
    ).toBe(0);
    expect(readFileSync(out)).toEqual(Buffer.from(text, 'utf8'));
    const before = statSync(file);
    expect(
      (await runSwc(['compact', name, '-t', '100000', '--tokenizer', 'approx', '--in-place'], { cwd: dir })).status,
    ).toBe(0);
    const after = statSync(file);
    expect(readFileSync(file)).toEqual(Buffer.from(text, 'utf8'));
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
    expect(readdirSync(dir).sort()).toEqual([name, 'out.json']);
  });
});

describe('--in-place', () => {
  it('rewrites the file a symbolic link points to, keeping the link, the file mode and no temporary file', async () => {
    const dir = freshDir();
    mkdirSync(path.join(dir, 'real'));
    mkdirSync(path.join(dir, 'links'));
    const real = path.join(dir, 'real', 'chat.jsonl');
    writeFileSync(real, `${ITEMS.join('\n')}\n`);
    chmodSync(real, 0o640);
    symlinkSync('../real/chat.jsonl', path.join(dir, 'links', 'chat.jsonl'));
    const run = await runSwc(
      ['compact', 'links/chat.jsonl', '-t', String(TARGET), '--tokenizer', 'approx', '--in-place'],
      { cwd: dir },
    );
    expect(run.status).toBe(0);
    expect(run.stdout).toBe('');
    expect(lstatSync(path.join(dir, 'links', 'chat.jsonl')).isSymbolicLink()).toBe(true);
    expect(readlinkSync(path.join(dir, 'links', 'chat.jsonl'))).toBe('../real/chat.jsonl');
    expect(readFileSync(real, 'utf8')).toBe(`${KEPT.join('\n')}\n`);
    expect(statSync(real).mode & 0o777).toBe(0o640);
    expect([readdirSync(path.join(dir, 'real')), readdirSync(path.join(dir, 'links'))]).toEqual([
      ['chat.jsonl'],
      ['chat.jsonl'],
    ]);
  });
});
