/**
 * `swc replay` and `swc restore` fed hostile input, run in process: recorded counts and prices that are not numbers a
 * replay can add up, previews cut inside an emoji, summary calls that all fail, and names that carry terminal escapes.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { previewOf } from '../../src/replay/run.js';
import type { ReplayRun } from '../../src/replay/types.js';
import { tempDir } from '../helpers/cli.js';
import { runSwc } from '../helpers/run-in-process.js';

/** A LangChain run of one call (`messages_to_dict`), its AI message recording `usage` as given. */
function langchainRun(usage: Record<string, unknown>): string {
  return JSON.stringify([
    { type: 'human', data: { content: 'Fix the failing test.', type: 'human' } },
    { type: 'ai', data: { content: 'Done.', type: 'ai', usage_metadata: usage } },
  ]);
}

/** A folder holding `files` (name to text). */
function folderWith(files: Record<string, string>): string {
  const dir = tempDir();
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  return dir;
}

const replay = (args: readonly string[], cwd: string) =>
  runSwc(['replay', ...args, '--tokenizer', 'approx', '--context-window', '1000'], { cwd });

describe('replay refuses numbers it cannot add up', () => {
  it.each([
    ['1e308', 1e308, 'input_tokens', 'data.usage_metadata.input_tokens is 1e+308'],
    ['a fraction', 0.5, 'output_tokens', 'data.usage_metadata.output_tokens is 0.5'],
    ['a negative count', -3, 'input_tokens', 'data.usage_metadata.input_tokens is -3'],
    ['a string', '12', 'output_tokens', 'data.usage_metadata.output_tokens is "12"'],
  ])('fails a file whose recorded usage holds %s, naming the file and the field', async (_, value, key, said) => {
    const usage = { input_tokens: 10, output_tokens: 2, [key]: value };
    const r = await replay(['run.json', '--json'], folderWith({ 'run.json': langchainRun(usage) }));
    expect(r.status).toBe(2);
    expect(JSON.parse(r.stdout)).toEqual({ runs: [], totals: [] });
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toBe(`swc: run.json: message 2: ${said}, not a whole number of tokens (0 to 2^53 - 1)`);
  });

  it('fails a file whose recorded counts add up past 2^53 - 1', async () => {
    const call = (id: string) => ({
      type: 'ai',
      data: { content: id, type: 'ai', usage_metadata: { input_tokens: Number.MAX_SAFE_INTEGER, output_tokens: 1 } },
    });
    const text = JSON.stringify([{ type: 'human', data: { content: 'go', type: 'human' } }, call('a'), call('b')]);
    const r = await replay(['run.json'], folderWith({ 'run.json': text }));
    expect(r.status).toBe(2);
    expect(r.stderr.trimEnd()).toBe(
      'swc: run.json: the recorded input tokens add up past 2^53 - 1, more than any run sends',
    );
  });

  it('still reads whole counts and null ones as the provider wrote them', async () => {
    const usage = {
      input_tokens: 1500,
      output_tokens: 80,
      input_token_details: { cache_read: 1024, cache_creation: null },
    };
    const r = await replay(['run.json', '--json'], folderWith({ 'run.json': langchainRun(usage) }));
    expect(r.status).toBe(0);
    expect((JSON.parse(r.stdout) as ReplayRun).recorded).toEqual({
      calls: 1,
      inputTokens: 1500,
      cacheReadTokens: 1024,
      cacheWriteTokens: 0,
      outputTokens: 80,
    });
  });

  it.each([
    ['1e308', '1e308'],
    ['-1', '-1'],
  ])('refuses a price of %s per million tokens, naming the price file and the field', async (_, price) => {
    const prices = `{ "input": ${price}, "cacheRead": 0.3, "cacheWrite": 3.75, "output": 15, "minCacheablePrefix": 1024 }`;
    const dir = folderWith({ 'run.json': langchainRun({ input_tokens: 10, output_tokens: 2 }), 'p.json': prices });
    const r = await replay(['run.json', '--prices', 'p.json'], dir);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trimEnd()).toBe(
      `swc: error: --prices p.json: "input" must be a price per million tokens (a number from 0 to 1e+288), not ${Number(price)}`,
    );
  });

  it('prices the highest price it takes with finite costs in the table and the JSON', async () => {
    const prices =
      '{ "input": 1e288, "cacheRead": 1e288, "cacheWrite": 1e288, "output": 1e288, "minCacheablePrefix": 0 }';
    const dir = folderWith({ 'run.json': langchainRun({ input_tokens: 10, output_tokens: 2 }), 'p.json': prices });
    const json = await replay(['run.json', '--prices', 'p.json', '--json', '--strategy', 'none'], dir);
    expect(json.status).toBe(0);
    const cost = (JSON.parse(json.stdout) as ReplayRun).policies[0]!.cost;
    for (const v of Object.values(cost)) expect(Number.isFinite(v)).toBe(true);
    const table = await replay(['run.json', '--prices', 'p.json', '--strategy', 'none'], dir);
    expect(table.stdout).not.toMatch(/Infinity|NaN|∞/);
  });
});

/** Whether a string holds no lone surrogate (matched as a code point of its own under the `u` flag). */
const isWellFormed = (text: string): boolean => !/\p{Cs}/u.test(text);

/** The longest run of whole grapheme clusters of `text` within `units` UTF-16 code units (worked out here, not by src/). */
function wholeGraphemes(text: string, units: number): string {
  let out = '';
  for (const { segment } of new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(text)) {
    if (out.length + segment.length > units) break;
    out += segment;
  }
  return out;
}

/** An OpenAI chat run whose first user message, `task`, a window of 1,000 removes. */
function runRemoving(task: string): string {
  const big = (word: string): string => Array.from({ length: 300 }, (_, i) => `${word}${i}`).join(' ');
  const call = (id: string, name: string) => ({
    role: 'assistant',
    content: null,
    tool_calls: [{ id, type: 'function', function: { name, arguments: '{}' } }],
  });
  return JSON.stringify([
    { role: 'system', content: 'You are a careful agent.' },
    { role: 'user', content: task },
    call('c1', 'read'),
    { role: 'tool', tool_call_id: 'c1', content: big('line') },
    { role: 'assistant', content: 'I read it.' },
    { role: 'user', content: 'Now look at the logs.' },
    call('c2', 'run'),
    { role: 'tool', tool_call_id: 'c2', content: big('entry') },
    { role: 'assistant', content: 'The logs say little.' },
    { role: 'user', content: 'Now fix it.' },
    { role: 'assistant', content: 'Fixed.' },
  ]);
}

describe("a removed user message's preview", () => {
  it.each([
    ['an emoji in half', '😀'.repeat(100)],
    ['a family emoji (one grapheme of five code points) apart', `ab${'👨‍👩‍👧'.repeat(30)}`],
    ['a flag apart', `abc${'🇫🇷'.repeat(40)}`],
  ])('never cuts %s: it ends at a grapheme boundary', async (_, task) => {
    const r = await replay(
      ['run.json', '--json', '--strategy', 'window'],
      folderWith({ 'run.json': runRemoving(task) }),
    );
    expect(r.status).toBe(0);
    expect(r.stdout).not.toMatch(/\\ud[89a-f]/i);
    const removed = (JSON.parse(r.stdout) as ReplayRun).policies[0]!.removedUserMessages;
    expect(removed[0]!.message).toBe(1);
    const preview = removed[0]!.preview;
    expect(isWellFormed(preview)).toBe(true);
    expect(preview).toBe(wholeGraphemes(`[user] ${task}`, 120));
  });
});

describe('previewOf', () => {
  /** Pieces that make clusters of many code units: emoji, ZWJ sequences, flags, accents, skin tones, Hangul jamo. */
  const piece = fc.constantFrom(
    'a',
    'é',
    'e\u0301',
    '😀',
    '👨‍👩‍👧',
    '🇫🇷',
    '👍🏽',
    '\u1100\u1161\u11a8',
    '\u200d',
    '\ufe0f',
    ' ',
  );
  const text = fc
    .array(fc.oneof(piece, fc.string({ unit: 'grapheme', maxLength: 3 })), { maxLength: 200 })
    .map((p) => p.join(''));

  it('keeps the longest run of whole graphemes within the limit, for any text and limit', () => {
    fc.assert(
      fc.property(text, fc.integer({ min: 1, max: 130 }), (t, units) => {
        const expected = wholeGraphemes(t, units);
        const got = previewOf(t, units);
        if (expected !== '' || t === '') expect(got).toBe(expected);
        else {
          // A first cluster longer than the limit: cut at a whole code point.
          expect(isWellFormed(got)).toBe(true);
          expect(t.startsWith(got)).toBe(true);
          expect(got.length).toBeGreaterThanOrEqual(units - 1);
        }
      }),
      { numRuns: 2000 },
    );
  });
});

/** Names that would drive a terminal printed as they are: a window title (OSC 0), a clipboard write (OSC 52), a clear. */
const TITLE = '\u001b]0;pwned\u0007';
const CLIPBOARD = '\u001b]52;c;ZXZpbA==\u0007';
const CLEAR = '\u001b[2J';
/** Any C0 or C1 control character (a colourless run prints none). */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

describe('names printed by replay and restore', () => {
  it("escapes a file name's and a price model's escape sequences in the replay table, as compact does", async () => {
    const name = `run${TITLE}${CLEAR}.json`;
    const prices = JSON.stringify({
      name: `mine${CLIPBOARD}`,
      currency: `EUR${CLEAR}`,
      input: 1,
      cacheRead: 0.1,
      cacheWrite: 1.25,
      output: 5,
      minCacheablePrefix: 0,
    });
    const dir = folderWith({ [name]: runRemoving('Fix the bug.'), 'p.json': prices });
    const r = await replay([name, '--prices', 'p.json', '--strategy', 'window'], dir);
    expect(r.status).toBe(0);
    expect(r.stdout).not.toMatch(CONTROL);
    expect(r.stdout).toContain('run\\u001b]0;pwned\\u0007\\u001b[2J.json (openai)');
    // Wrapped at 80 columns at a space, never inside an escape.
    expect(r.stdout).toMatch(/priced as\s+mine\\u001b\]52;c;ZXZpbA==\\u0007\n/);
    expect(r.stdout).toContain('EUR\\u001b[2J ');
    // The JSON keeps the names as they are (JSON escapes them itself).
    const json = await replay([name, '--prices', 'p.json', '--json'], dir);
    const run = JSON.parse(json.stdout) as ReplayRun;
    expect([run.file, run.prices.name, run.prices.currency]).toEqual([name, `mine${CLIPBOARD}`, `EUR${CLEAR}`]);
  });

  it("escapes a file name's escape sequences in restore's result line", async () => {
    const name = `t${TITLE}${CLIPBOARD}${CLEAR}.json`;
    const dir = folderWith({ [name]: JSON.stringify([{ role: 'user', content: 'hi' }]) });
    const r = await runSwc(['restore', name, '-o', 'out.json'], { cwd: dir });
    expect(r.status).toBe(0);
    expect(r.stderr).not.toMatch(CONTROL);
    expect(r.stderr).toBe(
      'swc: t\\u001b]0;pwned\\u0007\\u001b]52;c;ZXZpbA==\\u0007\\u001b[2J.json: nothing to restore\n',
    );
  });
});

describe('a replay whose summary calls fail', () => {
  const args = ['run.json', '--strategy', 'none', '--strategy', 'summarize'];

  it('exits 3 and says so when every summary call fails (a command exiting 3), as compact does', async () => {
    const dir = folderWith({ 'run.json': runRemoving('Fix the bug.') });
    const r = await replay([...args, '--summarize-command', 'exit 3'], dir);
    expect(r.status).toBe(3);
    expect(r.stderr).toMatch(
      /^swc: warning: run\.json: policy summarize: (\d+) of \1 summary calls failed \(summarize command exited with status 3\); its figures are those of a run without those summaries\n$/,
    );
    expect(r.stdout).toMatch(/^summarize +0 +1,281 /m);
    const json = await replay([...args, '--summarize-command', 'exit 3', '--json'], dir);
    expect(json.status).toBe(3);
    const [none, summarize] = (JSON.parse(json.stdout) as ReplayRun).policies;
    expect(none!.summary).toEqual({ calls: 0, promptTokens: 0, replyTokens: 0, failed: 0, failure: null });
    expect(summarize!.summary.failed).toBeGreaterThan(0);
    expect(summarize!.summary.failed).toBe(summarize!.summary.calls);
    expect(summarize!.summary.failure).toBe('summarize command exited with status 3');
  });

  it('exits 3 when the endpoint cannot be reached', async () => {
    const dir = folderWith({ 'run.json': runRemoving('Fix the bug.') });
    const r = await replay([...args, '--base-url', 'http://127.0.0.1:9/v1', '--model', 'm', '--no-cache'], dir);
    expect(r.status).toBe(3);
    expect(r.stderr).toMatch(/^swc: warning: run\.json: policy summarize: \d+ of \d+ summary calls failed \(.+\)/);
  }, 60_000);

  it('exits 0 when the summaries are written, and 2 still wins over 3', async () => {
    const dir = folderWith({ 'run.json': runRemoving('Fix the bug.'), 'bad.json': '{' });
    const ok = await replay([...args, '--summarize-command', 'echo Summary of the work so far.'], dir);
    expect(ok.status).toBe(0);
    expect(ok.stderr).toBe('');
    const both = await replay(['bad.json', ...args, '--summarize-command', 'exit 3'], dir);
    expect(both.status).toBe(2);
  });
});
