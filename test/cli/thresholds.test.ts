import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import * as o200k from 'gpt-tokenizer/encoding/o200k_base';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, tempDir } from '../helpers/cli.js';
import { runSwc } from '../helpers/run-in-process.js';
import { scaled } from '../helpers/scale.js';

/**
 * --context-window / --compact-at / --compact-to: a file is compacted only once its size (tool schemas included)
 * reaches window × compact-at, and then to window × compact-to, the schemas coming off that target.
 */

/** The tools as written in the file: a float with a fraction of zero, an exponent, a non-ASCII character. */
const TOOLS_JSON =
  '[{"type": "function", "function": {"name": "pick", "description": "Choose a café", "parameters": {"type": "object", "properties": {"n": {"type": "number", "minimum": 1.0, "maximum": 1e3}}}}}]';
/** What Python's json.dumps(tools, sort_keys=True) gives for them (checked with CPython 3). */
const TOOLS_PYTHON =
  '[{"function": {"description": "Choose a caf\\u00e9", "name": "pick", "parameters": {"properties": {"n": {"maximum": 1000.0, "minimum": 1.0, "type": "number"}}, "type": "object"}}, "type": "function"}]';

const TURNS = 12;

/** A request body with a system prompt, TURNS question/answer turns, a last question and a short answer. */
function messages(): Array<{ role: string; content: string }> {
  const out = [{ role: 'system', content: 'You are terse.' }];
  for (let t = 0; t < TURNS; t++) {
    out.push({ role: 'user', content: `Question ${t}: ${'how does this work '.repeat(5 + t)}` });
    out.push({ role: 'assistant', content: `Answer ${t}: ${'like that '.repeat(4 + t)}` });
  }
  out.push({ role: 'user', content: 'And finally?' });
  out.push({ role: 'assistant', content: 'Done.' });
  return out;
}

/** The conversation as Haystack's counter renders it. */
const RENDERED = messages().map((m) => `[${m.role}] ${m.content}`);

/** Writes the request body, with or without its tools, and returns its path. */
function requestFile(withTools = true): string {
  const dir = tempDir();
  const file = path.join(dir, 'request.json');
  const body = messages()
    .map((m) => JSON.stringify(m))
    .join(',\n    ');
  writeFileSync(
    file,
    `{\n  "model": "m",\n  "messages": [\n    ${body}\n  ]${withTools ? `,\n  "tools": ${TOOLS_JSON}` : ''}\n}\n`,
  );
  return file;
}

interface Record {
  status: string;
  tokensBefore: number;
  tokensAfter: number;
  toolTokens: number;
  target: number;
  targetMet: boolean;
  plan: { settings: { [key: string]: unknown }; target: number; tokensAfter: number };
}

/** Runs a --check with a report and returns the one file's record and the exit status. */
async function check(file: string, args: readonly string[]): Promise<{ status: number; record: Record }> {
  const report = path.join(tempDir(), 'report.json');
  // The directory as input: a report of files (a file named alone would give its bare plan).
  const run = await runSwc(['compact', path.dirname(file), '--check', ...args, '--report', report], { cwd: ROOT });
  const { files } = JSON.parse(readFileSync(report, 'utf8')) as { files: Record[] };
  return { status: run.status, record: files[0] as Record };
}

/** A file of a question, its answer and a task whose texts Haystack's approximate counter puts at `tokens` exactly. */
function fileOfTokens(tokens: number): string {
  const dir = tempDir();
  const file = path.join(dir, 'sized.jsonl');
  // "[user] " + question + "\n[assistant] " + answer + "\n[user] go": 4 characters a token, rounded down.
  const fixed = '[user] '.length + 1 + '[assistant] '.length + 1 + '[user] go'.length;
  const chars = tokens * 4 - fixed;
  const first = Math.floor(chars / 2);
  const lines = [
    { role: 'user', content: 'q'.repeat(first) },
    { role: 'assistant', content: 'a'.repeat(chars - first) },
    { role: 'user', content: 'go' },
  ];
  writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  return file;
}

describe("the thresholds as Haystack's CompactionHook computes them, in doubles", () => {
  it('does not compact 110 tokens at window 200 and compact-at 0.55 (200 × 0.55 is 110.00000000000001)', async () => {
    const file = fileOfTokens(110);
    const size = (await check(file, ['--context-window', '1000000', '--tokenizer', 'approx'])).record.tokensBefore;
    expect(size).toBe(110);
    const at055 = await check(file, [
      '--context-window',
      '200',
      '--compact-at',
      '0.55',
      '--compact-to',
      '0.2',
      '--tokenizer',
      'approx',
    ]);
    expect({ status: at055.status, record: at055.record.status }).toEqual({ status: 0, record: 'unchanged' });
    // 0.5 of 200 is 100 exactly: 110 tokens compact.
    const at05 = await check(file, [
      '--context-window',
      '200',
      '--compact-at',
      '0.5',
      '--compact-to',
      '0.2',
      '--tokenizer',
      'approx',
    ]);
    expect({ status: at05.status, record: at05.record.status }).toEqual({ status: 1, record: 'compacted' });
  });

  it('aims at int(window × compact-to): 434 for window 1,500 and compact-to 0.29 (434.99999999999994)', async () => {
    const { record } = await check(fileOfTokens(1200), [
      '--context-window',
      '1500',
      '--compact-to',
      '0.29',
      '--tokenizer',
      'approx',
    ]);
    expect(record.target).toBe(434);
    const percent = await check(fileOfTokens(1200), [
      '--context-window',
      '1500',
      '--compact-to',
      '29%',
      '--tokenizer',
      'approx',
    ]);
    expect(percent.record.target).toBe(434);
  });

  it('decides as the hook for random windows and shares, at the size where it starts', async () => {
    const { compactMessages } = await import('../../src/library/index.js');
    const words = {
      name: 'chars',
      measure: (items: readonly { text: string }[]) => items.reduce((n, r) => n + r.text.length, 0),
    };
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 10, max: 5000 }),
        fc.integer({ min: 2, max: 100 }),
        fc.integer({ min: 1, max: 99 }),
        async (w, atPercent, toPercent) => {
          fc.pre(toPercent < atPercent);
          const compactAt = atPercent / 100;
          const compactTo = toPercent / 100;
          fc.pre(Math.trunc(w * compactTo) >= 1);
          // The smallest size the hook compacts at: the first integer >= w * compact_at.
          const edge = Math.ceil(w * compactAt);
          for (const size of [edge - 1, edge]) {
            if (size < 12) continue;
            const text = 'x'.repeat(size - '[user] '.length);
            const history = [{ role: 'user', content: text }];
            const r = await compactMessages(history, {
              contextWindow: w,
              compactAt,
              compactTo,
              counter: words,
              note: null,
            });
            const rendered = r.plan.tokensBefore;
            expect({ w, compactAt, size, rendered }).toEqual({ w, compactAt, size, rendered: size });
            // A single user message is the task: nothing can go, so the plan says why it did not change.
            expect({ w, compactAt, size, unchanged: r.plan.unchanged }).toEqual({
              w,
              compactAt,
              size,
              unchanged: size >= w * compactAt ? 'nothing-removed' : 'fits',
            });
          }
        },
      ),
      { numRuns: scaled(200) },
    );
  });
});

describe('swc compact --context-window', () => {
  it('counts the tool schemas as Haystack does: json.dumps(tools, sort_keys=True) after the messages', async () => {
    const file = requestFile();
    const { record } = await check(file, ['--context-window', '1000000']);
    // The whole request measured as one text: the rendered messages, then the schemas, joined by newlines.
    const whole = o200k.countTokens(`${RENDERED.join('\n')}\n${TOOLS_PYTHON}`);
    expect(record.tokensBefore).toBe(whole);
    expect(record.toolTokens).toBe(whole - o200k.countTokens(RENDERED.join('\n')));
    expect(record.status).toBe('unchanged');
  });

  it('compacts a file only once its size, schemas included, reaches window × compact-at', async () => {
    const file = requestFile();
    const size = (await check(file, ['--context-window', '1000000', '--tokenizer', 'approx'])).record.tokensBefore;
    // Haystack's hook compacts when size >= w * 0.7, in doubles: the largest such window.
    let largest = Math.ceil((size * 10) / 7) + 2;
    while (!(size >= largest * 0.7)) largest--;
    const at = await check(file, ['--context-window', String(largest), '--tokenizer', 'approx']);
    expect(at.status).toBe(1);
    expect(at.record.status).toBe('compacted');
    const below = await check(file, ['--context-window', String(largest + 1), '--tokenizer', 'approx']);
    expect(below.status).toBe(0);
    expect(below.record).toMatchObject({ status: 'unchanged', tokensBefore: size, tokensAfter: size, targetMet: true });
  });

  it('compacts to window × compact-to, the schemas coming off that target', async () => {
    const file = requestFile();
    const { status, record } = await check(file, ['--context-window', '1500', '--tokenizer', 'approx']);
    expect(status).toBe(1);
    expect(record.target).toBe(600);
    // What the schemas add after "[assistant] Done." (17 characters) and a newline, at 4 characters a token.
    expect(record.toolTokens).toBe(Math.floor((17 + 1 + TOOLS_PYTHON.length) / 4) - Math.floor(17 / 4));
    // The conversation itself aims at what the schemas leave of the target; the plan records the window settings.
    expect(record.plan.target).toBe(600 - record.toolTokens);
    expect(record.plan.settings).toMatchObject({ target: null, contextWindow: 1500, compactAt: 0.7, compactTo: 0.4 });
    expect(record.tokensAfter).toBe(record.plan.tokensAfter + record.toolTokens);
    expect(record.tokensAfter).toBeLessThanOrEqual(600);
    expect(record.targetMet).toBe(true);
    // Without the schemas the same window keeps more of the conversation.
    const bare = (await check(requestFile(false), ['--context-window', '1500', '--tokenizer', 'approx'])).record;
    expect(bare.toolTokens).toBe(0);
    expect(bare.tokensAfter).toBeGreaterThan(record.tokensAfter - record.toolTokens);
  });

  it('uses 0.7 and 0.4 unless told otherwise, and takes percentages', async () => {
    const file = requestFile();
    const defaults = await runSwc(['compact', file, '--context-window', '1500', '--tokenizer', 'approx'], {
      cwd: ROOT,
    });
    const explicit = await runSwc(
      [
        'compact',
        file,
        '--context-window',
        '1500',
        '--compact-at',
        '0.7',
        '--compact-to',
        '0.4',
        '--tokenizer',
        'approx',
      ],
      { cwd: ROOT },
    );
    const percent = await runSwc(
      [
        'compact',
        file,
        '--context-window',
        '1500',
        '--compact-at',
        '70%',
        '--compact-to',
        '40%',
        '--tokenizer',
        'approx',
      ],
      { cwd: ROOT },
    );
    expect(defaults.status).toBe(0);
    expect(explicit).toEqual(defaults);
    expect(percent).toEqual(defaults);
    expect(defaults.stdout).not.toBe(readFileSync(file, 'utf8'));
  });

  it('leaves schemas out of the count with a fixed --target', async () => {
    const file = requestFile();
    const { record } = await check(file, ['--target', '1000000']);
    expect(record.toolTokens).toBe(0);
    expect(record.tokensBefore).toBe(o200k.countTokens(RENDERED.join('\n')));
  });
});

describe('what swc says about a run with --context-window', () => {
  /** The tool schemas' tokens for the approx counter: what they add after "[assistant] Done." and a newline. */
  const TOOL_TOKENS = Math.floor((17 + 1 + TOOLS_PYTHON.length) / 4) - Math.floor(17 / 4);

  it('says a file below the compact-at threshold is below it, naming the threshold and its share', async () => {
    const file = requestFile();
    const size = (await check(file, ['--context-window', '1000000', '--tokenizer', 'approx'])).record.tokensBefore;
    const run = await runSwc(
      ['compact', file, '-o', path.join(tempDir(), 'out.json'), '--context-window', '100000', '--tokenizer', 'approx'],
      { cwd: ROOT },
    );
    expect(run.status).toBe(0);
    expect(run.stderr).toBe(
      `swc: ${file}: unchanged, ${size.toLocaleString('en-US')} tokens (approx), below the threshold 70,000 (70% of 100,000)\n`,
    );
    const dry = await runSwc(
      ['compact', file, '--dry-run', '--context-window', '10000', '--compact-at', '0.5', '--tokenizer', 'approx'],
      { cwd: ROOT },
    );
    expect(dry.stdout.split('\n').slice(1, 5)).toEqual([
      'format openai  tokenizer approx  context window 10,000  compact at 50% (5,000)',
      'compact to 40% (4,000)  min_keep_steps 1  note on',
      `--- before  27 messages  ${(size - TOOL_TOKENS).toLocaleString('en-US')} tokens  (+ ${TOOL_TOKENS} tokens of tool schemas)`,
      `+++ after   27 messages  ${(size - TOOL_TOKENS).toLocaleString('en-US')} tokens  below the threshold 5,000 (50% of 10,000)`,
    ]);
  });

  it('says when the tool schemas alone take more than the compact-to share', async () => {
    // A window of 100 compacts at 70 and aims at 40, less than the schemas alone.
    expect(TOOL_TOKENS).toBeGreaterThan(40);
    const file = requestFile();
    const run = await runSwc(['compact', file, '--context-window', '100', '--tokenizer', 'approx'], { cwd: ROOT });
    expect(run.status).toBe(0);
    expect(run.stderr).toMatch(
      new RegExp(
        `^swc: [^\\n]+: 1,078 → 92 tokens \\(−91%, approx\\), removed 24 of 27 messages; target 40 not met: the tool schemas alone take ${TOOL_TOKENS} tokens, more than the 40-token target\\n$`,
      ),
    );
  });

  it('records the window settings in the plan of one file', async () => {
    const run = await runSwc(
      ['compact', requestFile(), '--context-window', '1500', '--tokenizer', 'approx', '--json'],
      { cwd: ROOT },
    );
    expect(run.status).toBe(0);
    const plan = JSON.parse(run.stderr) as { settings: { [key: string]: unknown }; target: number; toolTokens: number };
    expect(plan.settings).toEqual({
      target: null,
      tokenizer: 'approx',
      minKeepSteps: 1,
      note: '[{num_removed} earlier messages were removed from this conversation to free up context and cannot be recovered.]',
      format: 'auto',
      contextWindow: 1500,
      compactAt: 0.7,
      compactTo: 0.4,
    });
    expect([plan.target, plan.toolTokens]).toEqual([600 - TOOL_TOKENS, TOOL_TOKENS]);
  });
});

describe('swc compact threshold options', () => {
  const cases: Array<[string[], string]> = [
    [['--context-window', '0'], '--context-window must be at least 1, got 0'],
    [['--context-window', '8kb'], '--context-window must be a whole number, got "8kb"'],
    [['--compact-at', '0.5'], '--compact-at needs --context-window <tokens>: its fraction is a share of that window'],
    [
      ['--target', '100', '--context-window', '1000'],
      '--target and --context-window both set the budget: give --target for a fixed budget, or --context-window with --compact-at/--compact-to',
    ],
    [
      ['--context-window', '1000', '--compact-at', '1.2'],
      '--compact-at must be at most 1, got 1.2: a transcript larger than its context window no longer fits it, so waiting that long is too late',
    ],
    [
      ['--context-window', '1000', '--compact-at', '0'],
      '--compact-at must be above 0, got 0: at 0 every file, even an empty one, would be compacted',
    ],
    [
      ['--context-window', '1000', '--compact-to', '0'],
      '--compact-to must be above 0, got 0: nothing of a conversation fits in 0 tokens',
    ],
    [
      ['--context-window', '1000', '--compact-at', '0.5', '--compact-to', '0.6'],
      '--compact-to (0.6) must be below --compact-at (0.5): a compacted file has to end smaller than the size that triggers compaction, or the next run compacts it again',
    ],
    [
      ['--context-window', '1000', '--compact-to', '0.7'],
      '--compact-to (0.7) must be below --compact-at (0.7): a compacted file has to end smaller than the size that triggers compaction, or the next run compacts it again',
    ],
    [
      ['--context-window', '1000', '--compact-to', '0.0001'],
      '--compact-to 0.0001 of a 1000-token window is less than one token: nothing would fit; raise --compact-to or --context-window',
    ],
    [
      ['--context-window', '1000', '--compact-at', '0.7x'],
      '--compact-at must be a fraction such as 0.7 or 70%, got "0.7x"',
    ],
  ];
  it.each(cases)('refuses %j with a reason', async (args, message) => {
    const run = await runSwc(['compact', requestFile(), ...args], { cwd: ROOT });
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr.split('\n')[0]).toBe(`swc: error: ${message}`);
  });

  it('accepts compact-at 1 (compact only a full window)', async () => {
    const run = await runSwc(['compact', requestFile(), '--context-window', '100000', '--compact-at', '1', '--check'], {
      cwd: ROOT,
    });
    expect(run.status).toBe(0);
  });
});
