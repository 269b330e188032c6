/**
 * `--strategy offload` is Haystack 3.4's `ToolResultOffloadCompactor`: it acts only over the target, offloads oldest
 * first and stops at the target, takes results over `--min-tokens` only, keeps a pointer only where it saves tokens,
 * and writes 3.4's pointer and metadata; `--offload-over` selects the older `ToolResultOffloadHook` rule.
 */
import { describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { compactArgs } from '../helpers/argv.js';
import { tempDir } from '../helpers/cli.js';
import { runSwc } from '../helpers/run-in-process.js';

/** An OpenAI chat file of a task and one search step per result, each answered by its text. */
function steps(...results: string[]): string {
  const items: unknown[] = [{ role: 'user', content: 'task' }];
  results.forEach((text, k) => {
    items.push({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: `c${k}`, type: 'function', function: { name: 'search', arguments: '{}' } }],
    });
    items.push({ role: 'tool', tool_call_id: `c${k}`, content: text });
  });
  return JSON.stringify(items);
}

const OFFLOAD = ['--strategy', 'offload', '--offload-dir', 'store'];

/** The contents of the tool messages of an OpenAI chat output. */
function toolTexts(stdout: string): string[] {
  return (JSON.parse(stdout) as { role: string; content: string }[])
    .filter((m) => m.role === 'tool')
    .map((m) => m.content);
}

/** Runs swc compact in a fresh folder holding `run.json`. */
async function compact(file: string, target: number, ...flags: string[]) {
  const dir = tempDir();
  writeFileSync(path.join(dir, 'run.json'), file);
  const r = await runSwc(compactArgs('run.json', target, ...OFFLOAD, ...flags), { cwd: dir });
  return { ...r, dir };
}

describe('swc compact --strategy offload (ToolResultOffloadCompactor)', () => {
  it('leaves a conversation at or under the target as it is, and writes no store', async () => {
    const file = steps('a'.repeat(4000), 'b'.repeat(4000));
    const r = await compact(file, 1_000_000);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(file);
    expect(existsSync(path.join(r.dir, 'store'))).toBe(false);
  });

  it('offloads oldest first and stops once the running total reaches the target', async () => {
    // Three old results of 1,000 tokens each and the newest step's: a target 1,500 under the whole needs two.
    const file = steps('a'.repeat(4000), 'b'.repeat(4000), 'c'.repeat(4000), 'd'.repeat(4000));
    const probe = await compact(file, 1_000_000, '-o', 'probe.json', '--json');
    const before = (JSON.parse(probe.stdout) as { tokensBefore: number }).tokensBefore;
    const r = await compact(file, before - 1500);
    expect(r.status).toBe(0);
    const texts = toolTexts(r.stdout);
    expect(texts.map((t) => t.startsWith('Tool result offloaded to text (4000 characters) at '))).toEqual([
      true,
      true,
      false,
      false,
    ]);
    expect(texts[2]).toBe('c'.repeat(4000));
  });

  it('with --context-window, acts from the trigger and stops at the compact-to target after one result', async () => {
    const file = steps('a'.repeat(4000), 'b'.repeat(4000), 'newest');
    const dir = tempDir();
    writeFileSync(path.join(dir, 'run.json'), file);
    const flags = ['--tokenizer', 'approx', ...OFFLOAD, '--context-window', '4000', '--compact-at', '0.5'];
    const r = await runSwc(['compact', 'run.json', ...flags, '--compact-to', '0.3'], { cwd: dir });
    expect(r.status).toBe(0);
    expect(toolTexts(r.stdout).map((t) => t.startsWith('Tool result offloaded'))).toEqual([true, false, false]);
    // Under the trigger (compact-at 0.9: 3,600 tokens), nothing is offloaded.
    const under = await runSwc(['compact', 'run.json', ...flags.slice(0, -1), '0.9'], { cwd: dir });
    expect(under.stdout).toBe(file);
  });

  it('never offloads the newest -k steps, even when the target is missed', async () => {
    const r = await compact(steps('a'.repeat(4000), 'b'.repeat(4000), 'c'.repeat(4000)), 1, '-k', '2');
    expect(r.status).toBe(0);
    expect(toolTexts(r.stdout).map((t) => t.startsWith('Tool result offloaded'))).toEqual([true, false, false]);
  });

  it('takes only results over --min-tokens (default 200 tokens, the message measured alone)', async () => {
    const file = steps('a'.repeat(700), 'b'.repeat(1000), 'newest');
    const byDefault = await compact(file, 1);
    expect(toolTexts(byDefault.stdout).map((t) => t.startsWith('Tool result offloaded'))).toEqual([false, true, false]);
    const lower = await compact(file, 1, '--min-tokens', '100');
    expect(toolTexts(lower.stdout).map((t) => t.startsWith('Tool result offloaded'))).toEqual([true, true, false]);
  });

  it('keeps a small result whose pointer would cost more than it saves', async () => {
    const file = steps('tiny result', 'newest');
    const r = await compact(file, 1, '--min-tokens', '0');
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(file);
    expect(existsSync(path.join(r.dir, 'store'))).toBe(false);
  });

  it('shows --preview-chars characters of the result in its pointer', async () => {
    const r = await compact(steps(`hello ${'z'.repeat(4000)}`, 'newest'), 1, '--preview-chars', '5');
    expect(toolTexts(r.stdout)[0]).toMatch(
      /^Tool result offloaded to text \(4006 characters\) at 'store\/run\.json\/1_search_c0-[0-9a-f]{16}\.txt'\. Preview: hello\.\.\.$/,
    );
  });

  it("writes Haystack 3.4's metadata in Haystack files: the compaction mark and the references as a list", async () => {
    const origin = { tool_name: 'search', arguments: {} };
    const file = JSON.stringify([
      { role: 'user', meta: {}, name: null, content: [{ text: 'task' }] },
      { role: 'assistant', meta: {}, name: null, content: [{ tool_call: { ...origin, id: 'c1' } }] },
      {
        role: 'tool',
        meta: { custom: 1 },
        name: null,
        content: [{ tool_call_result: { result: 'x'.repeat(3000), origin: { ...origin, id: 'c1' }, error: false } }],
      },
      { role: 'assistant', meta: {}, name: null, content: [{ tool_call: { ...origin, id: 'c2' } }] },
      {
        role: 'tool',
        meta: {},
        name: null,
        content: [{ tool_call_result: { result: 'y', origin: { ...origin, id: 'c2' }, error: false } }],
      },
    ]);
    const r = await compact(file, 100);
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout) as { meta: Record<string, unknown> }[];
    const offloaded = out[2]?.meta.tool_result_offloaded as string[];
    expect(out[2]?.meta).toEqual({
      custom: 1,
      context_compaction: { strategy: 'tool_result_offloading', original_tokens: expect.any(Number) },
      tool_result_offloaded: [expect.stringMatching(/^store\/h?run\.json\/1_search_c1-[0-9a-f]{16}\.txt$/)],
    });
    // original_tokens is the message measured alone, as the approximate counter measures it: above 3,000 / 4.
    const original = (out[2]?.meta.context_compaction as { original_tokens: number }).original_tokens;
    expect(original).toBeGreaterThan(750);
    expect(readFileSync(path.join(r.dir, offloaded[0] as string), 'utf8')).toBe('x'.repeat(3000));
    // Offloading it again leaves it: it is marked offloaded and compacted.
    writeFileSync(path.join(r.dir, 'again.json'), r.stdout);
    const again = await runSwc(compactArgs('again.json', 1, ...OFFLOAD), { cwd: r.dir });
    expect(again.stdout).toBe(r.stdout);
    // And restore reads the list metadata's pointer back to the original bytes.
    const back = await runSwc(['restore', 'again.json'], { cwd: r.dir });
    expect({ status: back.status, same: back.stdout === file }).toEqual({ status: 0, same: true });
  });

  it('writes nothing, neither store nor transcript, with --check or --dry-run', async () => {
    const file = steps('a'.repeat(4000), 'b'.repeat(4000), 'newest');
    for (const flag of ['--check', '--dry-run']) {
      const r = await compact(file, 1, flag);
      expect({ flag, status: [0, 1].includes(r.status) }).toEqual({ flag, status: true });
      expect({ flag, store: existsSync(path.join(r.dir, 'store')), files: readdirSync(r.dir) }).toEqual({
        flag,
        store: false,
        files: ['run.json'],
      });
    }
  });

  it('restores what it offloaded byte for byte', async () => {
    const file = steps('a'.repeat(4000), 'b'.repeat(4000), 'newest');
    const r = await compact(file, 1);
    writeFileSync(path.join(r.dir, 'out.json'), r.stdout);
    const back = await runSwc(['restore', 'out.json'], { cwd: r.dir });
    expect({ status: back.status, stderr: back.stderr, same: back.stdout === file }).toEqual({
      status: 0,
      stderr: 'swc: out.json: restored 2 items\n',
      same: true,
    });
  });

  it('in a chain, measures what the previous step left (prune,offload: nothing is left to offload)', async () => {
    const file = steps('a'.repeat(4000), 'b'.repeat(4000), 'newest');
    const dir = tempDir();
    writeFileSync(path.join(dir, 'run.json'), file);
    const r = await runSwc(
      compactArgs('run.json', 1, '--strategy', 'prune,offload,window', '--offload-dir', 'store', '-o', 'out.json'),
      { cwd: dir },
    );
    expect(r.status).toBe(0);
    const out = readFileSync(path.join(dir, 'out.json'), 'utf8');
    expect(out).not.toContain('Tool result offloaded');
    expect(existsSync(path.join(dir, 'store')) ? readdirSync(path.join(dir, 'store')) : []).not.toContain('run.json');
  });
});

/** A Haystack file: a task, one old step whose result is `result`, and a newest step answered briefly. */
function haystackSteps(result: unknown): string {
  const origin = (id: string) => ({ tool_name: 'search', arguments: {}, id });
  return JSON.stringify([
    { role: 'user', meta: {}, name: null, content: [{ text: 'task' }] },
    { role: 'assistant', meta: {}, name: null, content: [{ tool_call: origin('old') }] },
    {
      role: 'tool',
      meta: {},
      name: null,
      content: [{ tool_call_result: { result, origin: origin('old'), error: false } }],
    },
    { role: 'assistant', meta: {}, name: null, content: [{ tool_call: origin('new') }] },
    {
      role: 'tool',
      meta: {},
      name: null,
      content: [{ tool_call_result: { result: 'ok', origin: origin('new'), error: false } }],
    },
  ]);
}

// A 1x1 PNG padded with 1,000 zero bytes (Haystack's test image).
const PNG = Buffer.concat([
  Buffer.from(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
    'base64',
  ),
  Buffer.alloc(1000),
]);
const image = {
  image: { base64_image: PNG.toString('base64'), mime_type: 'image/png', detail: null, meta: {}, validation: true },
};

describe('images and files in Haystack results', () => {
  it('offloads an image as its bytes, named by its MIME type, and restores the file byte for byte', async () => {
    const file = haystackSteps([image]);
    const r = await compact(file, 1, '--min-tokens', '0');
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout) as {
      meta: Record<string, unknown>;
      content: { tool_call_result: { result: unknown } }[];
    }[];
    const [reference] = out[2]?.meta.tool_result_offloaded as string[];
    expect(reference).toMatch(/^store\/run\.json\/1_search_old-[0-9a-f]{16}\.png$/);
    expect(out[2]?.content[0]?.tool_call_result.result).toBe(
      `Tool result offloaded to image/png (${PNG.length} bytes) at '${reference}'`,
    );
    expect(readFileSync(path.join(r.dir, reference as string)).equals(PNG)).toBe(true);
    writeFileSync(path.join(r.dir, 'out.json'), r.stdout);
    const back = await runSwc(['restore', 'out.json'], { cwd: r.dir });
    expect({ status: back.status, same: back.stdout === file }).toEqual({ status: 0, same: true });
  });

  it('gives a result of several parts one entry each (text, image, a named file) and a numbered pointer', async () => {
    const pdf = Buffer.from('%PDF-1.4 '.repeat(200));
    const file = haystackSteps([
      { text: 'x'.repeat(2000) },
      image,
      { file: { base64_data: pdf.toString('base64'), mime_type: 'application/pdf', filename: 'q3.report', extra: {} } },
    ]);
    const r = await compact(file, 1, '--min-tokens', '0', '--preview-chars', '3');
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout) as {
      meta: Record<string, unknown>;
      content: { tool_call_result: { result: unknown } }[];
    }[];
    const references = out[2]?.meta.tool_result_offloaded as string[];
    expect(references.map((f) => path.basename(f).replace(/-[0-9a-f]{16}/, ''))).toEqual([
      '1_search_old_0.txt',
      '1_search_old_1.png',
      '1_search_old_2.report',
    ]);
    expect(out[2]?.content[0]?.tool_call_result.result).toBe(
      [
        'Tool result offloaded to 3 files:',
        `1. text (2000 characters) at '${references[0]}'. Preview: xxx...`,
        `2. image/png (${PNG.length} bytes) at '${references[1]}'`,
        `3. application/pdf named 'q3.report' (${pdf.length} bytes) at '${references[2]}'`,
      ].join('\n'),
    );
    expect(readFileSync(path.join(r.dir, references[0] as string), 'utf8')).toBe('x'.repeat(2000));
    expect(readFileSync(path.join(r.dir, references[2] as string)).equals(pdf)).toBe(true);
    writeFileSync(path.join(r.dir, 'out.json'), r.stdout);
    const back = await runSwc(['restore', 'out.json'], { cwd: r.dir });
    expect({ status: back.status, same: back.stdout === file }).toEqual({ status: 0, same: true });
  });

  it('offloads an Anthropic tool result of a text and a base64 image as two entries, the image as bytes', async () => {
    const file = JSON.stringify({
      model: 'm',
      max_tokens: 10,
      messages: [
        { role: 'user', content: 'task' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'old', name: 'shot', input: {} }] },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'old',
              content: [
                { type: 'text', text: 'y'.repeat(3000) },
                { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG.toString('base64') } },
              ],
            },
          ],
        },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'new', name: 'shot', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'new', content: 'ok' }] },
      ],
    });
    const r = await compact(file, 1);
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout) as { messages: { content: { content?: unknown }[] }[] };
    const pointer = out.messages[2]?.content[0]?.content as string;
    const shape = new RegExp(
      `^Tool result offloaded to 2 files:\\n1\\. text \\(3000 characters\\) at '([^']+)'\\. Preview: y+\\.\\.\\.\\n2\\. image/png \\(${PNG.length} bytes\\) at '([^']+)'$`,
    );
    const [, text, image] = shape.exec(pointer) ?? [];
    expect(readFileSync(path.join(r.dir, text as string), 'utf8')).toBe('y'.repeat(3000));
    expect(readFileSync(path.join(r.dir, image as string)).equals(PNG)).toBe(true);
    expect(path.basename(image as string)).toMatch(/^1_shot_old_1-[0-9a-f]{16}\.png$/);
    writeFileSync(path.join(r.dir, 'out.json'), r.stdout);
    const back = await runSwc(['restore', 'out.json'], { cwd: r.dir });
    expect({ status: back.status, same: back.stdout === file }).toEqual({ status: 0, same: true });
  });

  it('leaves an image in an OpenAI tool result, whose format holds no bytes for it, in context', async () => {
    const file = JSON.stringify([
      { role: 'user', content: 'task' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'a', type: 'function', function: { name: 's', arguments: '{}' } }],
      },
      {
        role: 'tool',
        tool_call_id: 'a',
        content: [
          { type: 'text', text: 'x'.repeat(3000) },
          { type: 'image_url', image_url: { url: 'https://x/y.png' } },
        ],
      },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'b', type: 'function', function: { name: 's', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'b', content: 'ok' },
    ]);
    const r = await compact(file, 1, '--min-tokens', '0');
    expect(r.status).toBe(0);
    expect(r.stdout).not.toContain('Tool result offloaded');
  });
});

describe('swc restore reads every pointer swc or Haystack wrote', () => {
  it('restores a Haystack file of the pre-3.4 form: the old pointer text and the reference as a string', async () => {
    const file = haystackSteps('x'.repeat(3000));
    const r = await compact(file, 1);
    const out = JSON.parse(r.stdout) as {
      meta: Record<string, unknown>;
      content: { tool_call_result: { result: string } }[];
    }[];
    const [reference] = out[2]?.meta.tool_result_offloaded as string[];
    // The item as swc wrote it before 3.4, and its record rewritten to match (named by its new hash).
    const old = structuredClone(out);
    (old[2] as (typeof out)[number]).meta = { tool_result_offloaded: reference };
    (old[2] as (typeof out)[number]).content[0]!.tool_call_result.result =
      `Tool result offloaded to '${reference}' (3000 characters). Preview: ${'x'.repeat(200)}...`;
    const folder = path.dirname(path.join(r.dir, reference as string));
    const recordName = readdirSync(folder).find((f) => f.endsWith('.swc.json')) as string;
    const record = JSON.parse(readFileSync(path.join(folder, recordName), 'utf8')) as { items: { written: string }[] };
    const written = JSON.stringify(old[2]);
    const wholeOld = `[${old.map((m) => JSON.stringify(m)).join(',')}]`;
    (record.items[0] as { written: string }).written = written;
    const text = `${JSON.stringify(record)}\n`;
    const hash = createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 16);
    rmSync(path.join(folder, recordName));
    writeFileSync(path.join(folder, `${path.basename(reference as string)}.${hash}.swc.json`), text);
    writeFileSync(path.join(r.dir, 'legacy.json'), wholeOld);
    const back = await runSwc(['restore', 'legacy.json'], { cwd: r.dir });
    expect({ status: back.status, same: back.stdout === file }).toEqual({ status: 0, same: true });
  });

  it('leaves a result that only begins with the pointer words, and restores the rest', async () => {
    const file = steps('a'.repeat(4000), 'Tool result offloaded to nowhere, the tool said', 'newest');
    const r = await compact(file, 1);
    expect(toolTexts(r.stdout).map((t) => t.startsWith('Tool result offloaded to text ('))).toEqual([
      true,
      false,
      false,
    ]);
    writeFileSync(path.join(r.dir, 'out.json'), r.stdout);
    const back = await runSwc(['restore', 'out.json'], { cwd: r.dir });
    expect({ status: back.status, same: back.stdout === file }).toEqual({ status: 0, same: true });
  });

  it('reports a pointer Haystack itself wrote (no record of the items), and writes nothing', async () => {
    const dir = tempDir();
    mkdirSync(path.join(dir, 'tool_results'));
    writeFileSync(path.join(dir, 'tool_results', '.swc-store'), '{"swc":"offload-store","version":2}\n');
    writeFileSync(path.join(dir, 'tool_results', 'compacted_search_old_0.txt'), 'hello');
    const pointer = [
      'Tool result offloaded to 2 files:',
      "1. text (5 characters) at 'tool_results/compacted_search_old_0.txt'. Preview: hello",
      "2. image/png (3 bytes) at 'tool_results/compacted_search_old_1.png'",
    ].join('\n');
    const file = JSON.parse(haystackSteps(pointer)) as { meta: Record<string, unknown> }[];
    (file[2] as { meta: Record<string, unknown> }).meta = {
      context_compaction: { strategy: 'tool_result_offloading', original_tokens: 300 },
      tool_result_offloaded: ['tool_results/compacted_search_old_0.txt', 'tool_results/compacted_search_old_1.png'],
    };
    writeFileSync(path.join(dir, 'h.json'), JSON.stringify(file));
    const back = await runSwc(['restore', 'h.json', '-o', 'back.json'], { cwd: dir });
    expect(back.status).toBe(2);
    expect(back.stderr).toMatch(
      /points at tool_results\/compacted_search_old_0\.txt, but the store has no record of it/,
    );
    expect(existsSync(path.join(dir, 'back.json'))).toBe(false);
  });
});

describe('--offload-hook: the ToolResultOffloadHook rule', () => {
  it.each([['--offload-hook'], ['--offload-over']])(
    '%s offloads every older result over N characters, whatever the target, with the 3.4 pointer',
    async (flag) => {
      const file = steps('a'.repeat(4000), 'b'.repeat(300), 'newest');
      const r = await compact(file, 1_000_000, flag, '200');
      expect(r.status).toBe(0);
      const texts = toolTexts(r.stdout);
      expect(texts.map((t) => t.startsWith('Tool result offloaded to text ('))).toEqual([true, true, false]);
    },
  );

  it('refuses --offload-hook with its deprecated name --offload-over', async () => {
    const r = await compact(steps('a'), 10, '--offload-hook', '200', '--offload-over', '300');
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--offload-over is the deprecated name of --offload-hook: give one of them/);
  });

  it('refuses --min-tokens and --preview-chars without offload or prune', async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'run.json'), steps('a'));
    const r = await runSwc(compactArgs('run.json', 10, '--preview-chars', '5'), { cwd: dir });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--preview-chars only applies with --strategy offload/);
  });
});
