/**
 * The offload store and `swc restore` keep every promise: any line ending, one store for many conversations (in
 * parallel too), any legal name, stores that travel with their transcripts, pointers whatever their paths hold,
 * conversations wherever they live, quoted pointers, compressed inputs.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { writeHooks } from '../../src/io/files.js';
import { sourceFromBytes } from '../../src/io/lines.js';
import { InputError } from '../../src/errors.js';
import { restoreSource, type StoreReader } from '../../src/index.js';
import { runSwc } from '../helpers/run-in-process.js';
import { tempDir } from '../helpers/cli.js';

const fresh = (): string => tempDir();
/** The hash a store name holds: the first 16 hex digits of the SHA-256 of the file's bytes. */
const storeHash = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 16);
const OFFLOAD = ['-t', '100', '--tokenizer', 'approx', '--strategy', 'offload', '--offload-over', '1000'];

/** An OpenAI chat conversation of two tool steps: the older step's result is offloaded, the newest stays. */
function conversation(id: string, fill = 'x', more: { tool?: string } = {}): Record<string, unknown>[] {
  const tool = more.tool ?? 'search';
  return [
    { role: 'user', content: `task ${id}` },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id, type: 'function', function: { name: tool, arguments: '{}' } }],
    },
    { role: 'tool', tool_call_id: id, content: fill.repeat(4000) },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: `${id}-2`, type: 'function', function: { name: tool, arguments: '{}' } }],
    },
    { role: 'tool', tool_call_id: `${id}-2`, content: 'y'.repeat(4000) },
  ];
}

/** Every file under a folder, relative to it, sorted. */
function filesUnder(dir: string): string[] {
  return (readdirSync(dir, { recursive: true }) as string[]).filter((f) => statSync(path.join(dir, f)).isFile()).sort();
}

/** Offloads `name` in `dir` to `out` and restores `out`; returns both runs. */
async function roundTrip(dir: string, name: string, out: string, extra: string[] = [], store = 'store') {
  const off = await runSwc(['compact', name, ...OFFLOAD, '--offload-dir', store, '-o', out, ...extra], { cwd: dir });
  const back = await runSwc(['restore', out], { cwd: dir });
  return { off, back };
}

afterEach(() => {
  delete writeHooks.beforePlace;
});

describe('every line ending round-trips', () => {
  it.each([
    ['CRLF JSONL', (lines: string[]) => `${lines.join('\r\n')}\r\n`, 'run.jsonl'],
    ['CRLF JSONL without a final line break', (lines: string[]) => lines.join('\r\n'), 'run.jsonl'],
    ['LF JSONL', (lines: string[]) => `${lines.join('\n')}\n`, 'run.jsonl'],
    [
      'CRLF pretty JSON',
      (lines: string[]) =>
        `${JSON.stringify(
          lines.map((l) => JSON.parse(l)),
          null,
          2,
        ).replace(/\n/g, '\r\n')}\r\n`,
      'run.json',
    ],
  ])('%s: restore gives the bytes back', async (_name, write, name) => {
    const dir = fresh();
    const original = write(conversation('a').map((m) => JSON.stringify(m)));
    writeFileSync(path.join(dir, name), original);
    const { off, back } = await roundTrip(dir, name, `out-${name}`);
    expect(off.status).toBe(0);
    expect(readFileSync(path.join(dir, `out-${name}`), 'utf8')).toMatch(/Tool result offloaded to/);
    expect(back.stderr).toBe(`swc: out-${name}: restored 1 item\n`);
    expect(back.status).toBe(0);
    expect(back.stdout).toBe(original);
  });
});

describe('one store, many conversations', () => {
  it('names each file by a hash of its bytes, and the same result stored twice is one file', async () => {
    const dir = fresh();
    writeFileSync(path.join(dir, 'run.json'), JSON.stringify(conversation('a')));
    await roundTrip(dir, 'run.json', 'one.json');
    const first = filesUnder(path.join(dir, 'store'));
    for (const f of first.filter((f) => f !== '.swc-store'))
      expect(f).toContain(storeHash(readFileSync(path.join(dir, 'store', f), 'utf8')));
    const { off, back } = await roundTrip(dir, 'run.json', 'two.json');
    expect(off.status).toBe(0);
    expect(back.status).toBe(0);
    expect(filesUnder(path.join(dir, 'store'))).toEqual(first);
    expect(first).toHaveLength(3); // the marker, the result, its record
  });

  it('takes two different standard-input conversations (same step, same call id) into one store, both restorable', async () => {
    const dir = fresh();
    const texts = [JSON.stringify(conversation('a', 'x')), JSON.stringify(conversation('a', 'z'))];
    for (const [k, text] of texts.entries()) {
      const r = await runSwc(['compact', '-', ...OFFLOAD, '--offload-dir', 'store', '-o', `out${k}.json`], {
        cwd: dir,
        stdin: text,
      });
      expect(r.stderr).not.toMatch(/swc: error|already holds/);
      expect(r.status).toBe(0);
    }
    for (const [k, text] of texts.entries()) {
      const back = await runSwc(['restore', `out${k}.json`], { cwd: dir });
      expect(back.stdout).toBe(text);
    }
  });

  it('8 runs on different conversations placing into one store at the same moment all succeed and all restore', async () => {
    const dir = fresh();
    const runs = 8;
    // Half of them share a result's bytes (and so its file): placing it races too.
    const texts = Array.from({ length: runs }, (_, k) =>
      JSON.stringify(
        conversation(`c${k % 2}`, k % 2 === 0 ? 'x' : 'w').map((m, i) =>
          i === 0 ? { ...m, content: `task ${k}` } : m,
        ),
      ),
    );
    texts.forEach((text, k) => writeFileSync(path.join(dir, `run${k}.json`), text));
    // Every run waits right before its first placing until all 8 are there: then they all place at once.
    let waiting = 0;
    let release: () => void = () => undefined;
    const all = new Promise<void>((resolve) => (release = resolve));
    writeHooks.beforePlace = async (target) => {
      if (!target.endsWith('.txt') || waiting >= runs) return;
      waiting++;
      if (waiting === runs) release();
      await all;
    };
    const results = await Promise.all(
      texts.map((_, k) =>
        runSwc(['compact', `run${k}.json`, ...OFFLOAD, '--offload-dir', 'store', '-o', `out${k}.json`], { cwd: dir }),
      ),
    );
    expect(waiting).toBe(runs);
    for (const r of results) {
      expect(r.stderr).not.toMatch(/swc: error|already holds|cannot/);
      expect(r.status).toBe(0);
    }
    delete writeHooks.beforePlace;
    for (const [k, text] of texts.entries())
      expect((await runSwc(['restore', `out${k}.json`], { cwd: dir })).stdout).toBe(text);
    // Two results (one per shared text) and one record per conversation, and the marker.
    expect(filesUnder(path.join(dir, 'store')).filter((f) => f.endsWith('.txt'))).toHaveLength(runs);
    expect(filesUnder(path.join(dir, 'store')).filter((f) => f.endsWith('.swc.json'))).toHaveLength(runs);
  });

  it('a write that fails after others were placed says which files this run left, and writes no transcript', async () => {
    const dir = fresh();
    writeFileSync(path.join(dir, 'run.json'), JSON.stringify(conversation('a')));
    writeHooks.beforePlace = (target) => {
      if (target.endsWith('.swc.json')) throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
    };
    const r = await runSwc(['compact', 'run.json', ...OFFLOAD, '--offload-dir', 'store', '-o', 'out.json'], {
      cwd: dir,
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(
      /cannot write the offloaded result .*\.swc\.json: .*nothing was written for it \(the store keeps the 1 file this run placed, named by their content: .*1_search_a-[0-9a-f]{16}\.txt\)/,
    );
    expect(existsSync(path.join(dir, 'out.json'))).toBe(false);
  });
});

describe('names', () => {
  it('offloads, writes under --out-dir and backs up an input whose name begins with two dots', async () => {
    const dir = fresh();
    mkdirSync(path.join(dir, 'in'));
    const text = JSON.stringify(conversation('a'));
    writeFileSync(path.join(dir, 'in', '..x.json'), text);
    const { off, back } = await roundTrip(path.join(dir, 'in'), '..x.json', 'out.json', [], '../store');
    expect(off.stderr).not.toMatch(/outside/);
    expect(off.status).toBe(0);
    expect(back.stdout).toBe(text);
    // Named outright: a directory search leaves out names that begin with a dot, as hidden files.
    const outDir = await runSwc(['compact', 'in/..x.json', '-t', '100', '--tokenizer', 'approx', '--out-dir', 'out'], {
      cwd: dir,
    });
    expect(outDir.stderr).not.toMatch(/outside/);
    expect(existsSync(path.join(dir, 'out', '..x.json'))).toBe(true);
    const backup = await runSwc(
      ['compact', 'in/..x.json', '-t', '100', '--tokenizer', 'approx', '--in-place', '--backup-dir', 'backups'],
      { cwd: dir },
    );
    expect(backup.stderr).not.toMatch(/outside/);
    expect(readFileSync(path.join(dir, 'backups', '..x.json'), 'utf8')).toBe(text);
  });

  it('caps what a 260-character call id and a long tool name add to a name; the hash keeps it unique', async () => {
    const dir = fresh();
    const text = JSON.stringify(conversation('i'.repeat(260), 'x', { tool: 't'.repeat(200) }));
    writeFileSync(path.join(dir, 'run.json'), text);
    const { off, back } = await roundTrip(dir, 'run.json', 'out.json');
    expect(off.status).toBe(0);
    expect(back.stdout).toBe(text);
    for (const f of readdirSync(path.join(dir, 'store', 'run.json')))
      expect(Buffer.byteLength(f)).toBeLessThanOrEqual(255);
  });
});

describe('a store beside its inputs', () => {
  it('is left out of directory searches, and said so, for compact, --check and inspect', async () => {
    const dir = fresh();
    mkdirSync(path.join(dir, 'archive'));
    writeFileSync(path.join(dir, 'archive', 'run.json'), JSON.stringify(conversation('a')));
    const off = await runSwc(
      ['compact', 'archive/run.json', ...OFFLOAD, '--offload-dir', 'archive/store', '--in-place'],
      { cwd: dir },
    );
    expect(off.status).toBe(0);
    const line =
      'swc: left out 1 file of the offload store archive/store (its results and records are not transcripts)';
    const check = await runSwc(['compact', '--check', 'archive', '-t', '100000', '--tokenizer', 'approx'], {
      cwd: dir,
    });
    expect(check.stderr.split('\n')).toContain(line);
    expect(check.status).toBe(0);
    const inspect = await runSwc(['inspect', 'archive', '--tokenizer', 'approx'], { cwd: dir });
    expect(inspect.stderr.split('\n')).toContain(line);
    expect(inspect.status).not.toBe(2);
    const compact = await runSwc(['compact', 'archive', '-t', '100', '--tokenizer', 'approx', '--out-dir', 'out'], {
      cwd: dir,
    });
    expect(compact.stderr.split('\n')).toContain(line);
    expect(compact.status).toBe(0);
    expect(readdirSync(path.join(dir, 'out'))).toEqual(['run.json']);
  });

  it('is recognised by its marker, whatever its files are named', async () => {
    const dir = fresh();
    mkdirSync(path.join(dir, 'archive', 'keep'), { recursive: true });
    writeFileSync(path.join(dir, 'archive', 'run.json'), JSON.stringify(conversation('a')));
    writeFileSync(path.join(dir, 'archive', 'keep', '.swc-store'), '{"swc":"offload-store","version":2}\n');
    writeFileSync(path.join(dir, 'archive', 'keep', 'notes.json'), '{"not": "a transcript"}');
    const check = await runSwc(['compact', '--check', 'archive', '-t', '100000', '--tokenizer', 'approx'], {
      cwd: dir,
    });
    expect(check.stderr).toMatch(/left out 1 file of the offload store archive\/keep/);
    expect(check.status).toBe(0);
  });
});

describe('stores that travel', () => {
  it('writes references relative to the transcript, so a transcript and its store moved together still restore, without --offload-dir', async () => {
    const root = fresh();
    const dir = path.join(root, 'here');
    mkdirSync(path.join(dir, 'runs'), { recursive: true });
    const text = JSON.stringify(conversation('a'));
    writeFileSync(path.join(dir, 'run.json'), text);
    const off = await runSwc(['compact', 'run.json', ...OFFLOAD, '--offload-dir', 'store', '-o', 'runs/out.json'], {
      cwd: dir,
    });
    expect(off.status).toBe(0);
    expect(readFileSync(path.join(dir, 'runs', 'out.json'), 'utf8')).toContain(
      "Tool result offloaded to text (4000 characters) at '../store/run.json/1_search_a-",
    );
    renameSync(dir, path.join(root, 'there'));
    const back = await runSwc(['restore', 'there/runs/out.json'], { cwd: root });
    expect(back.stderr).toBe('swc: there/runs/out.json: restored 1 item\n');
    expect(back.stdout).toBe(text);
  });

  it('finds a moved store given with --offload-dir, and still reads stores whose pointers are absolute (earlier versions)', async () => {
    const dir = fresh();
    const text = JSON.stringify(conversation('a'));
    writeFileSync(path.join(dir, 'run.json'), text);
    await runSwc(['compact', 'run.json', ...OFFLOAD, '--offload-dir', 'store', '-o', 'out.json'], { cwd: dir });
    renameSync(path.join(dir, 'store'), path.join(dir, 'moved'));
    expect((await runSwc(['restore', 'out.json'], { cwd: dir })).status).toBe(2);
    const back = await runSwc(['restore', 'out.json', '--offload-dir', 'moved'], { cwd: dir });
    expect(back.stdout).toBe(text);
    // An earlier version's store: absolute pointers, `NAME.txt` and `NAME.txt.swc.json`, no marker.
    const old = path.join(dir, 'old', 'run.json', '1_search_a.txt');
    mkdirSync(path.dirname(old), { recursive: true });
    const messages = conversation('a');
    const pointer = `Tool result offloaded to '${old}' (4000 characters). Preview: ${'x'.repeat(200)}...`;
    const written = JSON.stringify({ ...messages[2], content: pointer });
    writeFileSync(old, 'x'.repeat(4000));
    writeFileSync(
      `${old}.swc.json`,
      `${JSON.stringify({ items: [{ item: 2, raw: JSON.stringify(messages[2]), written }] })}\n`,
    );
    writeFileSync(
      path.join(dir, 'legacy.json'),
      `[${messages.map((m, i) => (i === 2 ? written : JSON.stringify(m))).join(',')}]`,
    );
    const legacy = await runSwc(['restore', 'legacy.json', '--offload-dir', 'old'], { cwd: dir });
    expect(legacy.stdout).toBe(text);
    // The library's earlier form, a directory and a reader, reads such a store too.
    const read = (file: string): string | null => (existsSync(file) ? readFileSync(file, 'utf8') : null);
    expect(
      restoreSource(
        sourceFromBytes(readFileSync(path.join(dir, 'legacy.json')), 'legacy.json'),
        path.join(dir, 'old'),
        read,
      ).output,
    ).toBe(text);
  });
});

describe('apostrophes, and all or nothing', () => {
  it("recognises every pointer whatever its path holds: O'Brien.json, a store folder John's runs, a call id with '", async () => {
    const dir = fresh();
    const messages = [
      { role: 'user', content: 'task' },
      ...[0, 1, 2].flatMap((k) => [
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: `it's-${k}`, type: 'function', function: { name: 'search', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: `it's-${k}`, content: `${k}`.repeat(4000) },
      ]),
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'last', type: 'function', function: { name: 'search', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'last', content: 'y'.repeat(4000) },
    ];
    const text = JSON.stringify(messages);
    writeFileSync(path.join(dir, "O'Brien.json"), text);
    const off = await runSwc(
      ['compact', "O'Brien.json", ...OFFLOAD, '--offload-dir', "John's runs", '-o', "O'Brien.out.json"],
      { cwd: dir },
    );
    expect(off.status).toBe(0);
    const back = await runSwc(['restore', "O'Brien.out.json"], { cwd: dir });
    expect(back.stderr).toBe("swc: O'Brien.out.json: restored 3 items\n");
    expect(back.stdout).toBe(text);
    // A record gone: the whole file fails, naming the pointer, and nothing is written.
    const folder = path.join(dir, "John's runs", "O'Brien.json");
    const record = readdirSync(folder).find(
      (f) => f.startsWith("3_search_it's-2-") && f.endsWith('.swc.json'),
    ) as string;
    rmSync(path.join(folder, record));
    const partial = await runSwc(['restore', "O'Brien.out.json", '-o', 'back.json'], { cwd: dir });
    expect(partial.status).toBe(2);
    expect(partial.stderr).toMatch(
      /item 6 points at John's runs\/O'Brien\.json\/3_search_it's-2-[0-9a-f]{16}\.txt, but the store has no record of it/,
    );
    expect(existsSync(path.join(dir, 'back.json'))).toBe(false);
  });
});

describe('where the conversation lives', () => {
  it('restores an offload made with --conversation-path without being told, and takes the option too', async () => {
    const dir = fresh();
    const text = JSON.stringify({ meta: { run: 1 }, state: { agent: { messages: conversation('a') } } }, null, 2);
    writeFileSync(path.join(dir, 'state.json'), text);
    const { off, back } = await roundTrip(dir, 'state.json', 'out.json', [
      '--conversation-path',
      '/state/agent/messages',
    ]);
    expect(off.status).toBe(0);
    expect(back.stderr).toBe('swc: out.json: restored 1 item\n');
    expect(back.stdout).toBe(text);
    const told = await runSwc(
      ['restore', 'out.json', '--conversation-path', '/state/agent/messages', '--format', 'openai'],
      { cwd: dir },
    );
    expect(told.stdout).toBe(text);
  });

  it('restores an offload made with a non-default --conversation-key', async () => {
    const dir = fresh();
    const text = `${[1, 2].map((n) => JSON.stringify({ id: n, dialog: conversation(`c${n}`, `${n}`) })).join('\n')}\n`;
    writeFileSync(path.join(dir, 'runs.jsonl'), text);
    const { off, back } = await roundTrip(dir, 'runs.jsonl', 'out.jsonl', ['--conversation-key', 'dialog']);
    expect(off.status).toBe(0);
    expect(back.stderr).toBe('swc: out.jsonl: restored 2 items\n');
    expect(back.stdout).toBe(text);
    expect((await runSwc(['restore', 'out.jsonl', '--conversation-key', 'dialog'], { cwd: dir })).stdout).toBe(text);
  });
});

describe('quoted pointers', () => {
  it('restores only the results an offload replaced: a message quoting a pointer stays as it is', async () => {
    const dir = fresh();
    writeFileSync(path.join(dir, 'run.json'), JSON.stringify(conversation('a')));
    await runSwc(['compact', 'run.json', ...OFFLOAD, '--offload-dir', 'store', '-o', 'out.json'], { cwd: dir });
    const out = JSON.parse(readFileSync(path.join(dir, 'out.json'), 'utf8')) as {
      role: string;
      content: string | null;
    }[];
    const pointer = out[2]?.content as string;
    // An assistant echoing the pointer, and a user pasting it with text around it.
    const quoted = [...out, { role: 'assistant', content: pointer }, { role: 'user', content: `see ${pointer}` }];
    writeFileSync(path.join(dir, 'quoted.json'), JSON.stringify(quoted));
    const back = await runSwc(['restore', 'quoted.json'], { cwd: dir });
    expect(back.status).toBe(0);
    const restored = JSON.parse(back.stdout) as { content: string | null }[];
    expect(restored[2]?.content).toBe('x'.repeat(4000));
    expect(restored.slice(5).map((m) => m.content)).toEqual([pointer, `see ${pointer}`]);
  });
});

describe('a pointer quoted from another transcript', () => {
  it("is no candidate, and its store's record does not tell where this file's conversation is", async () => {
    const dir = fresh();
    writeFileSync(path.join(dir, 'state.json'), JSON.stringify({ state: { messages: conversation('s', 'q') } }));
    await runSwc(
      [
        'compact',
        'state.json',
        ...OFFLOAD,
        '--offload-dir',
        'store',
        '-o',
        'state.out.json',
        '--conversation-path',
        '/state/messages',
      ],
      { cwd: dir },
    );
    const other = (
      JSON.parse(readFileSync(path.join(dir, 'state.out.json'), 'utf8')) as {
        state: { messages: { content: string }[] };
      }
    ).state.messages[2]?.content as string;
    const text = JSON.stringify(conversation('a'));
    writeFileSync(path.join(dir, 'run.json'), text);
    await runSwc(['compact', 'run.json', ...OFFLOAD, '--offload-dir', 'store', '-o', 'out.json'], { cwd: dir });
    // The other transcript's pointer, pasted by the user before anything of this one.
    const out = JSON.parse(readFileSync(path.join(dir, 'out.json'), 'utf8')) as Record<string, unknown>[];
    writeFileSync(path.join(dir, 'quoted.json'), JSON.stringify([{ role: 'user', content: other }, ...out]));
    const back = await runSwc(['restore', 'quoted.json'], { cwd: dir });
    expect(back.stderr).toBe('swc: quoted.json: restored 1 item\n');
    expect(back.stdout).toBe(JSON.stringify([{ role: 'user', content: other }, ...(JSON.parse(text) as unknown[])]));
  });
});

describe('compression and honesty', () => {
  it('restore --in-place keeps a gzip input gzip, as compact --in-place does', async () => {
    const dir = fresh();
    const text = JSON.stringify(conversation('a'));
    writeFileSync(path.join(dir, 'run.json.gz'), gzipSync(text));
    const off = await runSwc(['compact', 'run.json.gz', ...OFFLOAD, '--offload-dir', 'store', '--in-place'], {
      cwd: dir,
    });
    expect(off.status).toBe(0);
    expect(gunzipSync(readFileSync(path.join(dir, 'run.json.gz'))).toString()).toMatch(/Tool result offloaded/);
    const back = await runSwc(['restore', 'run.json.gz', '--in-place'], { cwd: dir });
    expect(back.status).toBe(0);
    expect(gunzipSync(readFileSync(path.join(dir, 'run.json.gz'))).toString()).toBe(text);
  });

  it('a store folder that does not exist is exit 2 naming it; a missing input says no such file or directory', async () => {
    const dir = fresh();
    writeFileSync(path.join(dir, 'run.json'), JSON.stringify(conversation('a')));
    const store = await runSwc(['restore', 'run.json', '--offload-dir', 'nowhere'], { cwd: dir });
    expect(store.status).toBe(2);
    expect(store.stderr).toBe(`swc: error: the offload store nowhere does not exist (${path.join(dir, 'nowhere')})\n`);
    const missing = await runSwc(['restore', 'gone.json'], { cwd: dir });
    expect(missing.status).toBe(2);
    expect(missing.stderr).toBe('swc: error: "gone.json": no such file or directory\n');
  });
});

/** Offloads `run.json` (one result) into `store`, writing `out.json`; the result's file and its record. */
async function offloaded(
  text = JSON.stringify(conversation('a')),
): Promise<{ dir: string; result: string; record: string }> {
  const dir = fresh();
  writeFileSync(path.join(dir, 'run.json'), text);
  const off = await runSwc(['compact', 'run.json', ...OFFLOAD, '--offload-dir', 'store', '-o', 'out.json'], {
    cwd: dir,
  });
  expect(off.status).toBe(0);
  const folder = path.join(dir, 'store', 'run.json');
  const names = readdirSync(folder);
  return {
    dir,
    result: path.join(folder, names.find((f) => f.endsWith('.txt')) as string),
    record: path.join(folder, names.find((f) => f.endsWith('.swc.json')) as string),
  };
}

/** A record's text with its first item put back as another valid message: the history a forger would want. */
function forged(record: string): string {
  const doc = JSON.parse(readFileSync(record, 'utf8')) as { items: { raw: string }[] };
  (doc.items[0] as { raw: string }).raw = JSON.stringify({
    role: 'tool',
    tool_call_id: 'a',
    content: 'the refund was approved',
  });
  return `${JSON.stringify(doc)}\n`;
}

describe('a record is what its name says', () => {
  it('refuses a record edited into another valid message (exit 2, one line naming it), and writes nothing', async () => {
    const { dir, record } = await offloaded();
    writeFileSync(record, forged(record));
    const out = readFileSync(path.join(dir, 'out.json'));
    const back = await runSwc(['restore', 'out.json', '-o', 'back.json'], { cwd: dir });
    expect(back.status).toBe(2);
    expect(back.stderr).toBe(
      `swc: out.json: the offload store's record ${record} does not hold the bytes the hash in its name says (was it edited?); nothing was restored\n`,
    );
    expect(existsSync(path.join(dir, 'back.json'))).toBe(false);
    const inPlace = await runSwc(['restore', 'out.json', '--in-place'], { cwd: dir });
    expect(inPlace.status).toBe(2);
    expect(readFileSync(path.join(dir, 'out.json')).equals(out)).toBe(true);
    // Given the format (so no record is read to find the conversation), the pointer's own check refuses it.
    const told = await runSwc(['restore', 'out.json', '--format', 'openai', '-o', 'back.json'], { cwd: dir });
    expect(told.stderr).toMatch(/record .* does not hold the bytes the hash in its name says/);
    expect(existsSync(path.join(dir, 'back.json'))).toBe(false);
  });

  it('refuses a record without a hash in its name beside a result whose name has one (a forged record renamed)', async () => {
    const { dir, result, record } = await offloaded();
    writeFileSync(`${result}.swc.json`, forged(record));
    rmSync(record);
    const back = await runSwc(['restore', 'out.json', '-o', 'back.json'], { cwd: dir });
    expect(back.status).toBe(2);
    expect(back.stderr).toBe(
      `swc: out.json: the offload store's record ${result}.swc.json has no hash in its name, beside a result whose name has one (a store that hashes names hashes every record); nothing was restored\n`,
    );
    expect(existsSync(path.join(dir, 'back.json'))).toBe(false);
  });

  it('restoreSource checks the records any StoreReader gives against their names', async () => {
    const text = JSON.stringify(conversation('a'));
    const { dir, result, record } = await offloaded(text);
    const source = () => sourceFromBytes(readFileSync(path.join(dir, 'out.json')), 'out.json');
    const reader = (records: { path: string; text: string }[]): StoreReader => ({
      locate: () => ({ file: result }),
      records: () => records,
    });
    const good = readFileSync(record, 'utf8');
    expect(restoreSource(source(), { store: reader([{ path: record, text: good }]) }).output).toBe(text);
    const edited = (): unknown => restoreSource(source(), { store: reader([{ path: record, text: forged(record) }]) });
    expect(edited).toThrow(InputError);
    expect(edited).toThrow(`the offload store's record ${record} does not hold the bytes the hash in its name says`);
    // Named after another result, or not as a record at all: refused too.
    expect(() =>
      restoreSource(source(), {
        store: reader([{ path: path.join(path.dirname(record), 'other.txt.0123456789abcdef.swc.json'), text: good }]),
      }),
    ).toThrow(/is not named as a record of/);
  });

  it('still restores a store written with names that held `:` (the pointer names its file)', async () => {
    const dir = fresh();
    const messages = conversation('functions.get_weather:0', 'x', { tool: 'get:weather' });
    const text = JSON.stringify(messages);
    // As earlier versions wrote it: the tool name and call id as they were, in the names of both files.
    const name = `1_get:weather_functions.get_weather:0-${storeHash('x'.repeat(4000))}.txt`;
    const reference = `store/run.json/${name}`;
    const written = JSON.stringify({
      ...messages[2],
      content: `Tool result offloaded to '${reference}' (4000 characters). Preview: ${'x'.repeat(200)}...`,
    });
    const record = `${JSON.stringify({ swc: 'offload-record', version: 2, format: 'openai', where: 'the top-level list', message: 2, items: [{ item: 2, raw: JSON.stringify(messages[2]), written }] })}\n`;
    mkdirSync(path.join(dir, 'store', 'run.json'), { recursive: true });
    writeFileSync(path.join(dir, 'store', '.swc-store'), '{"swc":"offload-store","version":2}\n');
    writeFileSync(path.join(dir, 'store', 'run.json', name), 'x'.repeat(4000));
    writeFileSync(path.join(dir, 'store', 'run.json', `${name}.${storeHash(record)}.swc.json`), record);
    writeFileSync(
      path.join(dir, 'out.json'),
      `[${messages.map((m, i) => (i === 2 ? written : JSON.stringify(m))).join(',')}]`,
    );
    const back = await runSwc(['restore', 'out.json'], { cwd: dir });
    expect(back.stderr).toBe('swc: out.json: restored 1 item\n');
    expect(back.stdout).toBe(text);
  });
});

describe('hostile pointers and stores', () => {
  /** `out.json` with its pointer's reference replaced. */
  function pointing(dir: string, reference: string): void {
    const out = readFileSync(path.join(dir, 'out.json'), 'utf8');
    const was = /Tool result offloaded to text \(\d+ characters\) at '([^']*)'/.exec(out)?.[1] as string;
    writeFileSync(path.join(dir, 'evil.json'), out.split(was).join(reference));
  }

  it.each([
    ['../../../../../../../../etc/passwd', [], /which is in no offload store/],
    ['/etc/passwd', [], /which is in no offload store/],
    ['../../../../../../../../etc/passwd', ['--offload-dir', 'store'], /which is outside the offload store/],
    ['/etc/passwd', ['--offload-dir', 'store'], /which is outside the offload store/],
  ])(
    'a pointer at %s (%j) is refused, nothing read outside the store and nothing written',
    async (reference, flags, message) => {
      const { dir } = await offloaded();
      pointing(dir, reference);
      const back = await runSwc(['restore', 'evil.json', ...flags, '-o', 'back.json'], { cwd: dir });
      expect(back.status).toBe(2);
      expect(back.stderr).toMatch(message);
      expect(back.stderr.split('\n')).toHaveLength(2);
      expect(existsSync(path.join(dir, 'back.json'))).toBe(false);
    },
  );

  it('a pointer at a path deeper than any file system holds is refused in one short line', async () => {
    const { dir } = await offloaded();
    pointing(dir, `${'a/'.repeat(60_000)}x.txt`);
    for (const flags of [[], ['--offload-dir', 'store']]) {
      const back = await runSwc(['restore', 'evil.json', ...flags], { cwd: dir });
      expect(back.status).toBe(2);
      expect(back.stderr).toMatch(
        /^swc: evil\.json: the top-level list: item 2 points at (a\/){100}… \(120005 characters\), which is longer than any path \(over 4096 characters\); nothing was restored\n$/,
      );
    }
  });

  it('never reads a record through a store folder that is a link leading out of the store', async () => {
    const { dir, result } = await offloaded();
    const folder = path.dirname(result);
    renameSync(folder, path.join(dir, 'outside'));
    symlinkSync(path.join(dir, 'outside'), folder);
    for (const flags of [[], ['--offload-dir', 'store']]) {
      const back = await runSwc(['restore', 'out.json', ...flags, '-o', 'back.json'], { cwd: dir });
      expect(back.status).toBe(2);
      expect(back.stderr).toMatch(/but the store has no record of it/);
      expect(existsSync(path.join(dir, 'back.json'))).toBe(false);
    }
  });

  it('a pointer whose record is missing fails the file; one whose result file alone is missing restores from its record', async () => {
    const text = JSON.stringify(conversation('a'));
    const { dir, result, record } = await offloaded(text);
    rmSync(result);
    const back = await runSwc(['restore', 'out.json'], { cwd: dir });
    expect(back.stdout).toBe(text);
    rmSync(record);
    const gone = await runSwc(['restore', 'out.json', '-o', 'back.json'], { cwd: dir });
    expect(gone.status).toBe(2);
    expect(gone.stderr).toMatch(
      /points at store\/run\.json\/1_search_a-[0-9a-f]{16}\.txt, but the store has no record of it/,
    );
    expect(existsSync(path.join(dir, 'back.json'))).toBe(false);
  });
});
