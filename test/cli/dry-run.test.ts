/**
 * The `--dry-run` view, rendered from real compactions of small OpenAI transcripts with a fake counter
 * (10 tokens a message), so every number in the snapshots can be worked out by hand.
 */
import fc from 'fast-check';
import { describe, expect, it } from '@jest/globals';
import { Chalk } from 'chalk';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { renderDryRun, type DryRunView } from '../../src/cli/view/dry-run.js';
import { allocate, markColumn } from '../../src/cli/view/layout.js';
import { resolveWindow, type WindowSettings } from '../../src/cli/settings.js';
import { displayWidth } from '../../src/cli/view/text-width.js';
import { noteTemplate } from '../../src/core/compact.js';
import { DEFAULT_NOTE_TEMPLATE, formatNote } from '../../src/core/note.js';
import { createApproxCounter } from '../../src/tokens/index.js';
import type { TokenCounter } from '../../src/core/types.js';
import { decodeSource } from '../../src/io/source.js';
import { compactSource, type FileResult } from '../../src/pipeline/index.js';
import { ROOT } from '../helpers/cli.js';
import { createFakeCounter } from '../helpers/fake-counter.js';

type Item = Record<string, unknown>;

const sys = (content: string): Item => ({ role: 'system', content });
const usr = (content: string): Item => ({ role: 'user', content });
let nextId = 0;
/** An assistant message; each name is one tool call. */
const ast = (content: string | null, ...calls: string[]): Item =>
  calls.length === 0
    ? { role: 'assistant', content }
    : {
        role: 'assistant',
        content,
        tool_calls: calls.map((name) => ({
          id: `call_${++nextId}`,
          type: 'function',
          function: { name, arguments: '{}' },
        })),
      };
const tool = (content: string): Item => ({ role: 'tool', tool_call_id: `call_${nextId}`, content });

/** Compacts messages written as an OpenAI JSON file, counting every group. */
async function compactMessages(
  messages: readonly Item[],
  settings: { target: number; minKeepSteps?: number; note?: string | null },
  counter: TokenCounter = createFakeCounter(),
  file = 'chat.json',
  text = JSON.stringify(messages, null, 2),
): Promise<FileResult> {
  return await compactSource(decodeSource(Buffer.from(text), file), {
    target: settings.target,
    minKeepSteps: settings.minKeepSteps ?? 1,
    note: settings.note,
    counter,
    exhaustive: true,
  });
}

function view(
  settings: { target: number; minKeepSteps?: number; note?: string | null },
  extra: Partial<DryRunView> = {},
): DryRunView {
  return {
    target: settings.target,
    tokenizer: 'fake',
    minKeepSteps: settings.minKeepSteps ?? 1,
    note: noteTemplate(settings.note),
    width: 80,
    color: new Chalk({ level: 0 }),
    ...extra,
  };
}

async function dryRun(
  messages: readonly Item[],
  settings: { target: number; minKeepSteps?: number; note?: string | null },
  extra: Partial<DryRunView> = {},
): Promise<string> {
  return renderDryRun(await compactMessages(messages, settings), view(settings, extra));
}

// 0 S, turn [1,2], turn [3..6] with a tool step, task 7, one step [8..11] calling three tools.
// Fake counter: whole 120, protected 20, step 40, turns 20 and 40.
const history = (): Item[] => {
  nextId = 0;
  return [
    sys('You are a careful agent.'),
    usr('first question'),
    ast('first answer'),
    usr('second question'),
    ast(null, 'search'),
    tool('found it'),
    ast('second answer'),
    usr('the current task'),
    ast('Looking.', 'search', 'read_file', 'read_file'),
    tool('a'),
    tool('b'),
    tool('c'),
  ];
};

// 0 S, 1 U task, then three steps of two messages each: protected 20, steps 60.
const steps = (): Item[] => {
  nextId = 0;
  return [
    sys('Be brief.'),
    usr('Do the task.'),
    ast('one', 'search'),
    tool('r1'),
    ast('two', 'fetch'),
    tool('r2'),
    ast('three', 'write'),
    tool('r3'),
  ];
};

describe('the dry-run diff', () => {
  it('marks the oldest turn removed and puts the note after the instructions', async () => {
    // Budget 110 - 20 = 90; the step (40) fits, leaving 50: turn [3..6] (40) stays, turn [1,2] (20) goes.
    const out = await dryRun(history(), { target: 110 });
    expect(out).toMatchSnapshot();
    expect(out).toContain('\n- turn 1  #1-2   2 msgs  20 tok  first question\n');
    expect(out).toContain('\n+ note    @1      1 msg  10 tok  [2 earlier messages were removed');
    expect(out.endsWith('removed 2 messages (20 tokens) in 1 turn\ntarget 110 met (110 tokens)\n')).toBe(true);
  });

  it('shows each step with its tool names, repeated ones counted, and its results', async () => {
    const out = await dryRun(history(), { target: 110 });
    expect(out).toContain('+ step 1  #8-11  4 msgs  40 tok  search, read_file ×2 → 3 results · Looking.\n');
  });

  it('puts the note after the task when steps go', async () => {
    // Budget 50 - 20 = 30: step 3 (20) stays, steps 1 and 2 go; after = 20 + 20 + note 10 = 50.
    const out = await dryRun(steps(), { target: 50 });
    expect(out).toMatchSnapshot();
    const lines = out.split('\n');
    const task = lines.findIndex((l) => l.startsWith('  task'));
    expect(lines[task + 1]).toMatch(/^\+ note {4}@2 /);
    expect(out).toContain('removed 4 messages (40 tokens) in 2 steps\ntarget 50 met (50 tokens)\n');
  });

  it('says min_keep_steps held steps larger than the budget when it misses the target for them', async () => {
    // min_keep_steps 3 keeps all three steps (60) against a budget of 50 - 20 = 30, and there is no turn: nothing goes.
    const out = await dryRun(steps(), { target: 50, minKeepSteps: 3 });
    expect(out).toMatchSnapshot();
    expect(out.replace(/\n {2}/g, ' ')).toContain(
      'nothing removed\ntarget 50 not met (80 tokens): min_keep_steps 3 held the 3 newest steps (60 tokens), more than the 30 tokens left\n',
    );
  });

  it('says the instructions and the current task alone are over the target when they are', async () => {
    // Both turns go; the step stays by min_keep_steps: 20 + 40 + note 10 = 70.
    const out = await dryRun(history(), { target: 15 });
    expect(out).toMatchSnapshot();
    expect(out).toContain(
      'target 15 not met (70 tokens): the instructions and the current task alone take\n  20 tokens\n',
    );
  });

  it('shows a line saying there is no note when notes are off', async () => {
    const out = await dryRun(history(), { target: 110, note: null });
    expect(out).toMatchSnapshot();
    expect(out).toContain('\n  note                           no note: notes are off\n');
    expect(out).not.toContain('earlier messages were removed');
  });

  it('shows everything kept and no note when the conversation fits', async () => {
    const out = await dryRun(history(), { target: 1000 });
    expect(out).toMatchSnapshot();
    expect(out).not.toMatch(/^- /m);
    expect(out).toContain('no note: nothing removed (fits the target)');
    expect(out).toContain('nothing removed\ntarget 1,000 met (120 tokens)\n');
  });

  it('shows messages in no group with why they go', async () => {
    nextId = 0;
    const messages = [
      sys('S'),
      ast('orphan before any user message'),
      usr('first question'),
      ast('answer'),
      usr(formatNote(DEFAULT_NOTE_TEMPLATE, 7)),
      usr('the task'),
      ast(null, 'x'),
      tool('rx'),
      sys('a stray system message'),
      ast('done'),
    ];
    // Protected 20, steps 30, turn [2,3] (the earlier note at 4 skipped) 20 > budget left 10: it goes, and the orphans with it.
    const out = await dryRun(messages, { target: 60 });
    expect(out).toMatchSnapshot();
    expect(out).toContain('\n- orphan  #1     1 msg  10 tok  before the first user message, in no turn · ass…\n');
    expect(out).toContain('\n- turn 1  #2-4  2 msgs  20 tok  first question\n');
    expect(out).toContain('\n- orphan  #4     1 msg  10 tok  earlier note, the new note replaces it · user: …\n');
    expect(out).toContain('\n- orphan  #8     1 msg  10 tok  after the task, in no step · system: a stray sy…\n');
    expect(out).toContain('removed 5 messages (50 tokens) in 1 turn and 3 other messages\n');
  });

  it('shows one section per conversation for a file that holds several', async () => {
    const line = (messages: Item[]): string => JSON.stringify({ messages });
    const text = `${line(history())}\n${line(steps())}\n`;
    const result = await compactMessages([], { target: 50 }, createFakeCounter(), 'runs.jsonl', text);
    const out = renderDryRun(result, view({ target: 50 }));
    expect(out).toMatchSnapshot();
    expect(out).toContain('@@ conversation 1 of 2 (line 1 "messages") @@');
    expect(out).toContain('@@ conversation 2 of 2 (line 2 "messages") @@');
    expect(out).toContain('--- before  20 messages  200 tokens\n');
    expect(out.endsWith('total: 2 conversations, 2 would change\nremoved 10 messages; target met in 1 of 2\n')).toBe(
      true,
    );
  });

  it('leaves out the sections of conversations that would not change', async () => {
    const line = (messages: Item[]): string => JSON.stringify({ messages });
    const small = [{ role: 'user', content: 'hi' }] as unknown as Item[];
    const text = `${line(small)}\n${line(steps())}\n${line(small)}\n`;
    const out = renderDryRun(
      await compactMessages([], { target: 50 }, createFakeCounter(), 'runs.jsonl', text),
      view({ target: 50 }),
    );
    expect(out).not.toContain('@@ conversation 1 of 3');
    expect(out).toContain('@@ conversation 2 of 3 (line 2 "messages") @@');
    expect(out).not.toContain('@@ conversation 3 of 3');
    expect(out).toContain('total: 3 conversations, 1 would change, 2 unchanged (not shown)\n');
  });
});

describe('the dry-run diff in item positions and window terms', () => {
  it('numbers a Claude Code log by its lines: a split message spans them, the note at the line it is written', async () => {
    // Lines: 0 U, 1-3 one assistant message split in three, 4-5 results, 6 A, 7 U (task), 8-9 A split, 10 result, 11 A.
    const text = readFileSync(path.join(ROOT, 'fixtures/claude-code/split-assistant.jsonl'), 'utf8');
    const settings = { target: 50, note: '[{num_removed} gone]' };
    const out = renderDryRun(
      await compactMessages([], settings, createFakeCounter(), 'split.jsonl', text),
      view(settings),
    );
    expect(out).toBe(
      [
        'dry run: split.jsonl',
        'format claude-code  tokenizer fake  target 50  min_keep_steps 1  note on',
        '--- before  12 messages  90 tokens',
        '+++ after    6 messages  50 tokens  target 50 met',
        '',
        '+ note    @0      1 msg  10 tok  [7 gone]',
        '- turn 1  #0-6   7 msgs  50 tok  List the files in src and test.',
        '  task    #7      1 msg  10 tok  Now count the lines in a.ts.',
        '+ step 1  #8-10  3 msgs  20 tok  Bash → 1 result · Counting.',
        '+ step 2  #11     1 msg  10 tok  src/a.ts has 42 lines.',
        '',
        `budget [${'█'.repeat(7)}${'▒'.repeat(21)}${'▞'.repeat(7)}│${'░'.repeat(35)}]`,
        '█ protected 10  ▒ steps 30  ▞ note 10  ░ removed 50  │ target 50',
        'removed 7 messages (50 tokens) in 1 turn',
        'target 50 met (50 tokens)',
        '',
      ].join('\n'),
    );
  });

  it('shows instructions held outside the list (Anthropic system) as outside, with no message', async () => {
    const body = {
      model: 'm',
      system: 'Be brief.',
      messages: [usr('old question'), ast('old answer'), usr('the task')],
    };
    const settings = { target: 30, note: null };
    const out = renderDryRun(
      await compactMessages([], settings, createFakeCounter(), 'request.json', JSON.stringify(body)),
      view(settings),
    );
    expect(out).toContain(
      [
        '--- before  3 messages  40 tokens',
        '+++ after   1 message   20 tokens  target 30 met',
        '',
        '  system  outside  0 msgs  10 tok  Be brief.',
        '  note                             no note: notes are off',
        '- turn 1  #0-1     2 msgs  20 tok  old question',
        '  task    #2        1 msg  10 tok  the task',
      ].join('\n'),
    );
  });

  /** An OpenAI request body with one tool schema (10 tokens to the fake counter), dry-run against window thresholds. */
  async function windowRun(contextWindow: number, compactAt: number, compactTo: number): Promise<string> {
    const body = {
      messages: [usr('old question'), ast('old answer'), usr('the task')],
      tools: [{ type: 'function', function: { name: 'pick', parameters: {} } }],
    };
    const window = resolveWindow({
      contextWindow: String(contextWindow),
      compactAt: String(compactAt),
      compactTo: String(compactTo),
    }) as WindowSettings;
    const result = await compactSource(decodeSource(Buffer.from(JSON.stringify(body)), 'request.json'), {
      target: window.target,
      window: { trigger: window.trigger, target: window.target },
      counter: createFakeCounter(),
      exhaustive: true,
    });
    return renderDryRun(result, view({ target: window.target }, { window }));
  }

  it('says a file below the compact-at threshold is below it, with the window settings in the header', async () => {
    // 30 tokens of messages + 10 of schemas = 40, below ceil(100 × 0.7) = 70.
    const out = await windowRun(100, 0.7, 0.4);
    expect(out).toContain(
      [
        'format openai  tokenizer fake  context window 100  compact at 70% (70)',
        'compact to 40% (40)  min_keep_steps 1  note on',
        '--- before  3 messages  30 tokens  (+ 10 tokens of tool schemas)',
        '+++ after   3 messages  30 tokens  below the threshold 70 (70% of 100)',
        '',
        '  note                          no note: nothing removed (below the threshold)',
      ].join('\n'),
    );
    expect(out).toContain(
      '│ threshold 70 (60 after tool schemas)\nnothing removed\nbelow the threshold 70 (70% of 100): 40 tokens, tool schemas included\n',
    );
  });

  it('says when the tool schemas alone take more than the compact-to share', async () => {
    // 40 tokens reach ceil(40 × 0.7) = 28; the schemas (10) are more than floor(40 × 0.2) = 8.
    const out = await windowRun(40, 0.7, 0.2);
    expect(out.replace(/\n {2}/g, ' ')).toContain(
      'target 0 (after 10 tokens of tool schemas) not met (20 tokens): the tool schemas alone take 10 tokens, more than the 8-token target\n',
    );
  });

  it('says when the note is what brings the kept messages over the target the schemas leave', async () => {
    // 40 tokens reach ceil(60 × 0.5) = 30; the target floor(60 × 0.4) = 24 less 10 of schemas leaves 14: task 10 + note 10.
    const out = await windowRun(60, 0.5, 0.4);
    expect(out.replace(/\n {2}/g, ' ')).toContain(
      'target 14 (after 10 tokens of tool schemas) not met (20 tokens): the kept messages fit, but the note (10 tokens) brings them to 20 tokens\n',
    );
  });
});

describe('the dry-run layout', () => {
  // Previews in Japanese, Korean, fullwidth Latin, emoji, with newlines, escapes and very long lines.
  const wide = (): Item[] => {
    nextId = 0;
    return [
      sys('あなたは旅行代理店のアシスタントです。\n\tRules: be kind 😊'),
      usr(`東京の天気を教えてください。🌧️☔ ${'長い'.repeat(2000)}`),
      ast(null, 'search', 'read_file', 'read_file'),
      tool('晴れ'),
      tool('x'.repeat(5000)),
      tool('y'),
      ast('明日は晴れです 👨‍👩‍👧‍👦 🇯🇵 e\u0301 \u001b[31mred\u001b[0m'),
      usr(`서울은 어때요? ${'긴 문장 '.repeat(500)}`),
      ast('서울은 맑아요.\r\nline2'),
      usr(`Ｆｕｌｌｗｉｄｔｈ and 中文 ${'lorem ipsum '.repeat(800)}`),
      ast(`Working — ${'步骤'.repeat(300)}`, 'search', 'search', 'fetch_page'),
      tool('結果'),
      tool('結果'),
      tool('page'),
      ast('🎉 完了しました！\u202eevil\u202c'),
    ];
  };

  it.each([20, 40, 60, 80, 100, 132])(
    'keeps every line within %i columns, previews in CJK and emoji included',
    async (width) => {
      const settings = { target: 1500 };
      const out = renderDryRun(
        await compactMessages(wide(), settings, createApproxCounter()),
        view(settings, { width, tokenizer: 'approx' }),
      );
      for (const line of out.split('\n')) expect(displayWidth(line)).toBeLessThanOrEqual(width);
    },
  );

  it('keeps the columns aligned when previews hold wide characters', async () => {
    const settings = { target: 1500 };
    const out = renderDryRun(
      await compactMessages(wide(), settings, createApproxCounter()),
      view(settings, { width: 100, tokenizer: 'approx' }),
    );
    const rows = out.split('\n').filter((l) => / tok {2}/.test(l));
    expect(rows.length).toBe(7);
    // Where each row's preview starts, in columns: the same for all of them.
    const starts = new Set(rows.map((l) => displayWidth(l.slice(0, l.indexOf(' tok  ') + 6))));
    expect(starts.size).toBe(1);
    expect(out).toMatchSnapshot();
  });

  it('shows control characters, newlines and bidi overrides as visible escapes', async () => {
    const settings = { target: 1500 };
    const out = renderDryRun(
      await compactMessages(wide(), settings, createApproxCounter()),
      view(settings, { width: 200, tokenizer: 'approx' }),
    );
    expect(out).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u202e]/u);
    expect(out).toContain('あなたは旅行代理店のアシスタントです。\\n\\tRules: be kind 😊');
    expect(out).toContain('\\u202eevil\\u202c');
  });

  it('colours removed lines red, kept green, protected dim and the note yellow when colour is on', async () => {
    const out = await dryRun(history(), { target: 110 }, { color: new Chalk({ level: 1 }) });
    expect(out).toContain('\u001b[31m- turn 1');
    expect(out).toContain('\u001b[32m+ turn 2');
    expect(out).toContain('\u001b[2m  system');
    expect(out).toContain('\u001b[33m+ note');
  });

  it('writes no colour codes with a colourless chalk, and the markers still tell removed from kept', async () => {
    const out = await dryRun(history(), { target: 110 });
    expect(out).not.toContain('\u001b');
    expect(out).toMatch(/^- turn 1 /m);
    expect(out).toMatch(/^\+ turn 2 /m);
  });

  it('draws the budget bar in proportion: protected, kept, note, removed, and the target marker', async () => {
    // Parts 20, 40, 40, 10, 20 (130) over 70 columns end at 20, 60, 100, 110 and 130 tokens: columns 10.8, 32.3, 53.8,
    // 59.2 and 70, rounded 11, 32, 54, 59, 70, so 11, 21, 22, 5, 11 columns; the target 110 falls at 59.2 -> column 59,
    // right after the note: what is kept fits the target.
    const out = await dryRun(history(), { target: 110 });
    const bar = out.split('\n').find((l) => l.startsWith('budget ['));
    expect(bar).toBe(`budget [${'█'.repeat(11)}${'▓'.repeat(21)}${'▒'.repeat(22)}${'▞'.repeat(5)}│${'░'.repeat(11)}]`);
  });
});

describe('allocating bar columns', () => {
  it('splits columns in proportion, each part ending at its rounded cumulative share', () => {
    expect(allocate([50, 30, 20], 100, 10)).toEqual([5, 3, 2]);
    expect(allocate([1, 1, 1], 3, 10)).toEqual([3, 4, 3]);
  });

  it('gives a part too small for half a column none, and never more columns than there are', () => {
    expect(allocate([1, 1000, 0], 1001, 10)).toEqual([0, 10, 0]);
    expect(allocate([1, 1, 1, 1], 4, 2).reduce((a, b) => a + b, 0)).toBe(2);
  });

  it('leaves the columns past the parts free when the target is above the total', () => {
    expect(allocate([10, 10], 100, 10)).toEqual([1, 1]);
  });

  it('is proportional: every boundary within half a column of its true place, the target mark at its own', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 5000 }), { minLength: 1, maxLength: 5 }),
        fc.integer({ min: 1, max: 20000 }),
        fc.integer({ min: 1, max: 120 }),
        (parts, target, cells) => {
          const total = parts.reduce((a, b) => a + b, 0);
          const scale = Math.max(total, target);
          const columns = allocate(parts, scale, cells);
          let tokens = 0;
          let at = 0;
          parts.forEach((t, i) => {
            tokens += t;
            at += columns[i] as number;
            expect(Math.abs(at - (tokens / scale) * cells)).toBeLessThanOrEqual(0.5);
          });
          const kept = parts.slice(0, -1).reduce((a, b) => a + b, 0);
          const keptColumns = columns.slice(0, -1).reduce((a, b) => a + b, 0);
          const mark = markColumn(target, scale, cells, keptColumns, kept <= target);
          expect(Math.abs(mark - (target / scale) * cells)).toBeLessThanOrEqual(0.5);
          // A met target's mark stands at or after the end of what is kept.
          if (kept <= target) expect(mark).toBeGreaterThanOrEqual(keptColumns);
        },
      ),
    );
  });
});
