/**
 * `--strategy offload` and `swc restore`: results go to the store before the transcript points at them, and restoring
 * gives the original bytes back, on every real transcript of fixtures/real.
 */
import { describe, expect, it } from '@jest/globals';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { codePointLength as codePoints } from '../../src/core/code-points.js';
import { planOffload, pointerText, portableName, storeKey } from '../../src/core/offload.js';
import { textContent } from '../../src/core/render.js';
import type { Content, Message } from '../../src/core/types.js';
import { compactArgs, offloadFlags } from '../helpers/argv.js';
import { runSwc } from '../helpers/run-in-process.js';
import { isBig, REAL_DATA, tempDir } from '../helpers/cli.js';
import { expectOffloadRoundTrip, REAL_FILES } from '../helpers/offload-real.js';
import { TWO_SEARCHES } from '../helpers/two-searches.js';

const fresh = (): string => tempDir();
/** The hash a store name holds: the first 16 hex digits of the SHA-256 of the file's bytes. */
const storeHash = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 16);

function content(parts: Partial<Content>): Content {
  return { texts: [], toolCalls: [], results: [], images: 0, files: [], ...parts };
}
const call = (): Message => ({
  role: 'assistant',
  content: content({ toolCalls: [{ name: 'search', arguments: '{}' }] }),
});
const result = (text: string, more: { error?: boolean; images?: number; offloaded?: boolean } = {}): Message => ({
  role: 'tool',
  offloaded: more.offloaded,
  content: content({
    results: [{ name: 'search', text, error: more.error ?? false, images: more.images ?? 0, files: 0 }],
  }),
});

/** The pointer of one offloaded text, its preview Haystack's default 200 characters. */
const pointerOf = (reference: string, text: string): string => pointerText([{ reference, text }], 200);

describe('planOffload', () => {
  it('offloads text results over the threshold outside the newest steps, never errors, images or pointers', () => {
    const messages: Message[] = [
      { role: 'user', content: textContent('task') },
      call(),
      result('a'.repeat(101)),
      call(),
      result('b'.repeat(100)),
      call(),
      result('c'.repeat(500), { error: true }),
      call(),
      result('d'.repeat(500), { images: 1 }),
      call(),
      result(pointerOf('/s/x.txt', 'e'.repeat(500))),
      call(),
      result('f'.repeat(500), { offloaded: true }),
      call(),
      result('newest'.repeat(100)),
    ];
    expect(planOffload(messages, { over: 100 }).map((c) => [c.index, c.step])).toEqual([[2, 1]]);
  });

  it("writes Haystack 3.4's pointer and swc's key", () => {
    expect(pointerOf('/s/1_search_c1.txt', 'x'.repeat(250))).toBe(
      `Tool result offloaded to text (250 characters) at '/s/1_search_c1.txt'. Preview: ${'x'.repeat(200)}...`,
    );
    expect(pointerOf('/r', 'short')).toBe("Tool result offloaded to text (5 characters) at '/r'. Preview: short");
    expect(codePoints('😀a')).toBe(2);
    expect(storeKey(2, 'web_search', 'call-123', 0, 'ab12')).toBe('2_web_search_call-123-ab12.txt');
    expect(storeKey(2, 'a/b', null, 1, 'ab12')).toBe('2_a%2Fb_call1-ab12.txt');
  });

  it('escapes in a store name what Windows and sync tools cannot hold, so two texts never share one name', () => {
    expect(storeKey(1, 'get_weather', 'functions.get_weather:0', 0, 'ab12')).toBe(
      '1_get_weather_functions.get_weather%3A0-ab12.txt',
    );
    expect(storeKey(1, 'a*b?', 'x"<>|\\/\n\u0000', 0, 'ab12')).toBe('1_a%2Ab%3F_x%22%3C%3E%7C%5C%2F%0A%00-ab12.txt');
    // `_` stays, `:` is escaped, and `%` too: the three ids give three names.
    expect(new Set(['a_b', 'a:b', 'a%3Ab'].map((id) => storeKey(1, 't', id, 0, 'h'))).size).toBe(3);
    // Folder names taken from the input's path: no device name, no leading space, no trailing dot or space.
    expect(
      ['CON', 'nul.json', 'Com1', 'x.', 'x ', ' x', '.', '..', '100%', 'café', '中文', ''].map(portableName),
    ).toEqual([
      '%43ON',
      '%6Eul.json',
      '%43om1',
      'x%2E',
      'x%20',
      '%20x',
      '%2E',
      '.%2E',
      '100%25',
      'caf%C3%A9',
      '中文',
      '~',
    ]);
    // Past the cap, a digest of the whole text keeps two cut names apart.
    const long = storeKey(1, 't', `${'i'.repeat(60)}1`, 0, 'h');
    expect(long).toMatch(/^1_t_i{39}~[0-9a-f]{8}-h\.txt$/);
    expect(storeKey(1, 't', `${'i'.repeat(60)}2`, 0, 'h')).not.toBe(long);
  });
});

// The transcripts past BIG_FILE: test/e2e/offload.test.ts.
describe.each(REAL_FILES.filter((f) => !isBig(path.join(REAL_DATA, f))))('offloading %s', (file) => {
  it('writes every result to the store before the transcript, and swc restore gives the original bytes back', async () => {
    await expectOffloadRoundTrip(file);
  });

  it('offloads by the compactor (every older result over 0 tokens, to the target), and restores the bytes', async () => {
    await expectOffloadRoundTrip(file, ['--min-tokens', '0']);
  });
});

describe('--strategy offload on the command line', () => {
  const FILE = TWO_SEARCHES;

  it('names the store file as Haystack does, with a hash of its bytes, under a folder for the input, the pointer relative to the transcript', async () => {
    const dir = fresh();
    writeFileSync(path.join(dir, 'run.json'), FILE);
    const r = await runSwc(compactArgs('run.json', 100, ...offloadFlags(1000)), { cwd: dir });
    expect(r.status).toBe(0);
    const name = `1_search_a-${storeHash('x'.repeat(4000))}.txt`;
    expect(readFileSync(path.join(dir, 'store', 'run.json', name), 'utf8')).toBe('x'.repeat(4000));
    expect(JSON.parse(r.stdout)[2].content).toBe(pointerOf(`store/run.json/${name}`, 'x'.repeat(4000)));
    // The newest step's result stays.
    expect(JSON.parse(r.stdout)[4].content).toBe('y'.repeat(4000));
  });

  it("stores Kimi's call ids (functions.get_weather:0) under portable names, and restores them", async () => {
    const dir = fresh();
    const text = FILE.replace(/"a"/g, '"functions.get_weather:0"').replace(/"search"/g, '"get_weather"');
    writeFileSync(path.join(dir, 'CON.json'), text);
    const r = await runSwc(compactArgs('CON.json', 100, ...offloadFlags(1000), '-o', 'out.json'), { cwd: dir });
    expect(r.status).toBe(0);
    const name = `1_get_weather_functions.get_weather%3A0-${storeHash('x'.repeat(4000))}.txt`;
    expect(readFileSync(path.join(dir, 'store', '%43ON.json', name), 'utf8')).toBe('x'.repeat(4000));
    expect(JSON.parse(readFileSync(path.join(dir, 'out.json'), 'utf8'))[2].content).toBe(
      pointerOf(`store/%43ON.json/${name}`, 'x'.repeat(4000)),
    );
    const back = await runSwc(['restore', 'out.json'], { cwd: dir });
    expect(back.stdout).toBe(text);
  });

  it('fails the file with nothing written when a store file cannot be written', async () => {
    const dir = fresh();
    writeFileSync(path.join(dir, 'run.json'), FILE);
    writeFileSync(path.join(dir, 'store'), 'a file where the store directory should be');
    const r = await runSwc(compactArgs('run.json', 100, ...offloadFlags(1000), '-o', 'out.json'), { cwd: dir });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(
      /cannot create the offload store .*store: a file is in the way; nothing was written for it/,
    );
    expect(existsSync(path.join(dir, 'out.json'))).toBe(false);
  });

  it('never replaces a store file holding other content, nor writes through a folder link leading out of the store', async () => {
    const args = compactArgs('run.json', 100, ...offloadFlags(1000), '-o', 'out.json');
    const planted = fresh();
    writeFileSync(path.join(planted, 'run.json'), FILE);
    mkdirSync(path.join(planted, 'store', 'run.json'), { recursive: true });
    // Planted under the very name (hash included) this result gets.
    const name = `1_search_a-${storeHash('x'.repeat(4000))}.txt`;
    writeFileSync(path.join(planted, 'store', 'run.json', name), "another run's result");
    const r = await runSwc(args, { cwd: planted });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(
      /the offload store already holds .*1_search_a-[0-9a-f]{16}\.txt with other content; refusing to replace it/,
    );
    expect(readFileSync(path.join(planted, 'store', 'run.json', name), 'utf8')).toBe("another run's result");
    expect(existsSync(path.join(planted, 'out.json'))).toBe(false);

    const linked = fresh();
    writeFileSync(path.join(linked, 'run.json'), FILE);
    mkdirSync(path.join(linked, 'store'));
    mkdirSync(path.join(linked, 'outside'));
    symlinkSync(path.join(linked, 'outside'), path.join(linked, 'store', 'run.json'));
    const l = await runSwc(args, { cwd: linked });
    expect(l.status).toBe(2);
    expect(l.stderr).toMatch(/is a symbolic link that leads outside the offload store/);
    expect(readdirSync(path.join(linked, 'outside'))).toEqual([]);
    expect(existsSync(path.join(linked, 'out.json'))).toBe(false);
  });

  it('writes no store file in a dry run, and the plan lists the offloaded groups', async () => {
    const dir = fresh();
    writeFileSync(path.join(dir, 'run.json'), FILE);
    const r = await runSwc(compactArgs('run.json', 100, ...offloadFlags(1000), '--dry-run', '--json'), {
      cwd: dir,
    });
    expect(existsSync(path.join(dir, 'store'))).toBe(false);
    const plan = JSON.parse(r.stdout) as {
      settings: Record<string, unknown>;
      groups: { kind: string; start: number; tool?: string }[];
    };
    expect(plan.settings).toMatchObject({ strategies: ['offload'], offloadOver: 1000 });
    expect(plan.groups.filter((g) => g.kind === 'offloaded').map((g) => [g.start, g.tool])).toEqual([[2, 'search']]);
  });

  it('marks an offloaded Haystack result with meta.tool_result_offloaded, as ChatMessage.from_tool gives it', async () => {
    const dir = fresh();
    const origin = { tool_name: 'search', arguments: {}, id: 'c1' };
    const items = [
      { role: 'user', meta: {}, name: null, content: [{ text: 'task' }] },
      { role: 'assistant', meta: {}, name: null, content: [{ tool_call: origin }] },
      {
        role: 'tool',
        meta: { custom: 1 },
        name: null,
        content: [{ tool_call_result: { result: 'x'.repeat(3000), origin, error: false } }],
      },
      { role: 'assistant', meta: {}, name: null, content: [{ tool_call: { ...origin, id: 'c2' } }] },
      {
        role: 'tool',
        meta: {},
        name: null,
        content: [{ tool_call_result: { result: 'y', origin: { ...origin, id: 'c2' }, error: false } }],
      },
    ];
    writeFileSync(path.join(dir, 'h.json'), JSON.stringify(items, null, 2));
    const r = await runSwc(compactArgs('h.json', 100, ...offloadFlags(1000)), { cwd: dir });
    const reference = `store/h.json/1_search_c1-${storeHash('x'.repeat(3000))}.txt`;
    expect((JSON.parse(r.stdout) as unknown[])[2]).toEqual({
      role: 'tool',
      meta: { custom: 1, tool_result_offloaded: [reference] },
      name: null,
      content: [{ tool_call_result: { result: pointerOf(reference, 'x'.repeat(3000)), origin, error: false } }],
    });
  });

  it('is never pruned afterwards (prune skips an offloaded result)', async () => {
    const dir = fresh();
    writeFileSync(path.join(dir, 'run.json'), FILE);
    const r = await runSwc(
      [
        'compact',
        'run.json',
        '-t',
        '1',
        '--tokenizer',
        'approx',
        '--strategy',
        'offload,prune',
        '--offload-dir',
        'store',
        '--offload-over',
        '1000',
        '--min-tokens',
        '0',
      ],
      { cwd: dir },
    );
    expect(JSON.parse(r.stdout)[2].content).toMatch(/^Tool result offloaded to text \(/);
  });

  it.each([
    [
      ['--strategy', 'offload'],
      '--strategy offload needs --offload-dir <dir>, where the offloaded results are written',
    ],
    [
      ['--strategy', 'offload', '--offload-dir', 's', '--offload-over', '0'],
      '--offload-over must be at least 1, got 0',
    ],
    [['--offload-dir', 's'], '--offload-dir only applies with --strategy offload'],
    [
      ['--strategy', 'offload', '--offload-dir', 's', '-k', '0'],
      '--min-keep-steps must be at least 1 with --strategy offload: the newest results are the ones the model is about to act on',
    ],
  ])('refuses %j with one line and exit 2', async (flags, message) => {
    const dir = fresh();
    writeFileSync(path.join(dir, 'run.json'), FILE);
    const r = await runSwc(['compact', 'run.json', '-t', '100', ...flags], { cwd: dir });
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(`swc: error: ${message}\n`);
  });

  it('offloads one of two results carried by one Anthropic message and leaves the other, then restores both', async () => {
    const dir = fresh();
    const big = 'word '.repeat(100);
    const doc = {
      model: 'm',
      max_tokens: 10,
      messages: [
        { role: 'user', content: 'task' },
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: 't1', name: 'read', input: {} },
            { type: 'tool_use', id: 't2', name: 'read', input: {} },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 't1', content: big },
            { type: 'tool_result', tool_use_id: 't2', content: 'short' },
          ],
        },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't3', name: 'read', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't3', content: big }] },
        { role: 'assistant', content: 'done' },
      ],
    };
    const text = JSON.stringify(doc, null, 2);
    writeFileSync(path.join(dir, 'a.json'), text);
    for (const strategy of ['offload', 'offload,prune']) {
      const r = await runSwc(
        [
          'compact',
          'a.json',
          '--strategy',
          strategy,
          '--offload-dir',
          'store',
          '--offload-over',
          '50',
          '-t',
          '10',
          '-o',
          'out.json',
          '--tokenizer',
          'approx',
          ...(strategy === 'offload' ? [] : ['--min-tokens', '0']),
        ],
        { cwd: dir },
      );
      expect({ strategy, status: r.status, stderr: r.stderr.split('\n')[0] }).toEqual({
        strategy,
        status: 0,
        stderr: expect.stringContaining('offloaded 1 tool result'),
      });
      const out = JSON.parse(readFileSync(path.join(dir, 'out.json'), 'utf8')) as typeof doc;
      const blocks = out.messages[2]?.content as { content: string }[];
      expect(blocks[0]?.content.startsWith('Tool result offloaded to text (')).toBe(true);
      expect(blocks[1]?.content).toBe('short');
      if (strategy !== 'offload') continue;
      const back = await runSwc(['restore', 'out.json', '-o', 'back.json'], { cwd: dir });
      expect({ status: back.status, same: readFileSync(path.join(dir, 'back.json'), 'utf8') === text }).toEqual({
        status: 0,
        same: true,
      });
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps pointers through a later pruning run, so swc restore still finds every result', async () => {
    const dir = fresh();
    writeFileSync(path.join(dir, 't.json'), FILE);
    const first = await runSwc(compactArgs('t.json', 10, ...offloadFlags(500), '-o', 'off.json'), { cwd: dir });
    expect(first.status).toBe(0);
    const second = await runSwc(
      compactArgs('off.json', 10, '--strategy', 'prune', '--min-tokens', '10', '-o', 'pruned.json'),
      { cwd: dir },
    );
    expect(second.status).toBe(0);
    const pruned = readFileSync(path.join(dir, 'pruned.json'), 'utf8');
    expect(pruned).toContain('Tool result offloaded to text (');
    expect(pruned).not.toContain('Tool result removed');
    const back = await runSwc(['restore', 'pruned.json', '-o', 'back.json'], { cwd: dir });
    expect({ status: back.status, same: readFileSync(path.join(dir, 'back.json'), 'utf8') === FILE }).toEqual({
      status: 0,
      same: true,
    });
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a store inside a directory being compacted', async () => {
    const dir = fresh();
    mkdirSync(path.join(dir, 'runs'));
    writeFileSync(path.join(dir, 'runs', 'run.json'), FILE);
    const r = await runSwc(
      ['compact', 'runs', '--out-dir', 'out', '-t', '100', '--strategy', 'offload', '--offload-dir', 'runs/store'],
      { cwd: dir },
    );
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(
      'swc: error: --offload-dir runs/store is inside the input runs, so its files would be read as transcripts: put the store elsewhere\n',
    );
  });

  it('restore refuses an item changed since it was offloaded', async () => {
    const dir = fresh();
    writeFileSync(path.join(dir, 'run.json'), FILE);
    await runSwc(compactArgs('run.json', 100, ...offloadFlags(1000), '-o', 'out.json'), { cwd: dir });
    const edited = readFileSync(path.join(dir, 'out.json'), 'utf8').replace('"tool_call_id":"a"', '"tool_call_id":"z"');
    writeFileSync(path.join(dir, 'out.json'), edited);
    const r = await runSwc(['restore', 'out.json', '--offload-dir', 'store'], { cwd: dir });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/item 2 changed since .* was offloaded, so it cannot be put back/);
  });

  it('restore puts back only what a record can be checked to hold: valid JSON, from a regular file inside the store', async () => {
    const dir = fresh();
    writeFileSync(path.join(dir, 'run.json'), FILE);
    await runSwc(compactArgs('run.json', 100, ...offloadFlags(1000), '-o', 'out.json'), { cwd: dir });
    const folder = path.join(dir, 'store', 'run.json');
    const record = path.join(folder, readdirSync(folder).find((f) => f.endsWith('.swc.json')) as string);
    const good = readFileSync(record, 'utf8');
    const doc = JSON.parse(good) as { items: { raw: string }[] };
    (doc.items[0] as { raw: string }).raw = '{{{ not json';
    writeFileSync(record, JSON.stringify(doc));
    const tampered = await runSwc(['restore', 'out.json', '--offload-dir', 'store', '-o', 'back.json'], { cwd: dir });
    expect(tampered.status).toBe(2);
    expect(tampered.stderr).toMatch(
      /record .*\.swc\.json does not hold the bytes the hash in its name says \(was it edited\?\); nothing was restored/,
    );
    expect(existsSync(path.join(dir, 'back.json'))).toBe(false);
    // Renamed to the hash of its new bytes, it is still refused: what it puts back is no JSON value.
    const renamed = record.replace(/\.[0-9a-f]{16}\.swc\.json$/, `.${storeHash(JSON.stringify(doc))}.swc.json`);
    renameSync(record, renamed);
    const rehashed = await runSwc(['restore', 'out.json', '--offload-dir', 'store', '-o', 'back.json'], { cwd: dir });
    expect(rehashed.status).toBe(2);
    expect(rehashed.stderr).toMatch(/does not hold a valid item to put back \(was it edited\?\); nothing was restored/);
    expect(existsSync(path.join(dir, 'back.json'))).toBe(false);
    rmSync(renamed);
    // The record as a link (here to a good copy outside the store) counts as missing.
    writeFileSync(path.join(dir, 'elsewhere.json'), good);
    symlinkSync(path.join(dir, 'elsewhere.json'), record);
    const linked = await runSwc(['restore', 'out.json', '--offload-dir', 'store', '-o', 'back.json'], { cwd: dir });
    expect(linked.status).toBe(2);
    expect(linked.stderr).toMatch(/the store has no record of it/);
    rmSync(record);
    writeFileSync(record, good);
    const back = await runSwc(['restore', 'out.json', '--offload-dir', 'store', '-o', 'back.json'], { cwd: dir });
    expect(back.status).toBe(0);
    expect(readFileSync(path.join(dir, 'back.json'), 'utf8')).toBe(FILE);
  });
});
