/**
 * `--strategy`: pruning through the command line on fresh random conversations, checked against an independent model
 * of `ToolResultPruningCompactor` (approximate counter), in OpenAI and Haystack files; chains; the JSON plan's pruned
 * groups; usage errors.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  haystackCodec,
  openaiCodec,
  transcriptFile,
  type ConvMessage,
  type FormatCodec,
} from '../helpers/conversation-arbitraries.js';
import { BARE, obj, PRETTY_2 } from '../helpers/json-text.js';
import { runSwc } from '../helpers/run-in-process.js';
import { tempDir } from '../helpers/cli.js';
import { scaled } from '../helpers/scale.js';
import { TWO_SEARCHES } from '../helpers/two-searches.js';

const CWD = tempDir();
const PLACEHOLDER = '[Tool result removed to free up context. Call `{tool_name}` again if you need it.]';

/** The text the approximate counter sees, as the issue states Haystack renders it (arguments are always `{}` here). */
function rendered(m: ConvMessage): string {
  switch (m.role) {
    case 'system':
    case 'user':
      return `[${m.role}] ${m.text}`;
    case 'assistant': {
      const lines = m.text === null ? [] : [`[assistant] ${m.text}`];
      for (const c of m.calls) lines.push(`[assistant -> tool_call] ${c.name}({})`);
      return lines.length > 0 ? lines.join('\n') : '[assistant] <no content>';
    }
    case 'tool':
      return `[tool:${m.name}] ${m.text}`;
    case 'note':
      throw new Error('not generated');
  }
}

const tokens = (texts: readonly string[]): number =>
  texts.length === 0 ? 0 : Math.floor([...texts.join('\n')].length / 4);

/** The pruning rules on the neutral model: the indices of the tool messages replaced. */
function modelPrune(
  messages: readonly ConvMessage[],
  target: number,
  minTokens: number,
  minKeepSteps: number,
): number[] {
  let total = tokens(messages.map(rendered));
  if (total <= target) return [];
  const steps: number[][] = [];
  for (let i = 0; i < messages.length; i++) {
    if (messages[i]?.role !== 'assistant') continue;
    const results: number[] = [];
    while (messages[i + 1]?.role === 'tool') results.push(++i);
    if (results.length > 0) steps.push(results);
  }
  const untouchable = new Set(steps.slice(-minKeepSteps).flat());
  const out: number[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i] as ConvMessage;
    if (m.role !== 'tool' || untouchable.has(i)) continue;
    const before = tokens([rendered(m)]);
    if (before <= minTokens) continue;
    const after = tokens([`[tool:${m.name}] ${PLACEHOLDER.replace('{tool_name}', m.name)}`]);
    if (before - after <= 0) continue;
    out.push(i);
    total -= before - after;
    if (total <= target) break;
  }
  return out;
}

/** Conversations of a task and steps whose results are of every size, some far over min_tokens. */
const conversationArb: fc.Arbitrary<ConvMessage[]> = fc
  .record({
    system: fc.boolean(),
    steps: fc.array(
      fc.record({
        text: fc.option(fc.constantFrom('let me look', 'checking'), { nil: null }),
        results: fc.array(
          fc.record({ name: fc.constantFrom('search', 'fetch', 'run_sql'), size: fc.constantFrom(5, 300, 900, 2500) }),
          { minLength: 0, maxLength: 3 },
        ),
      }),
      { maxLength: 6 },
    ),
  })
  .map(({ system, steps }) => {
    const out: ConvMessage[] = [];
    let n = 0;
    if (system) out.push({ role: 'system', text: 'rules', extras: [] });
    out.push({ role: 'user', text: 'the task', extras: [] });
    for (const s of steps) {
      if (s.text === null && s.results.length === 0) continue;
      const calls = s.results.map((r) => ({ id: `call_${++n}`, name: r.name, args: obj() }));
      out.push({ role: 'assistant', text: s.text, calls, extras: [] });
      s.results.forEach((r, k) =>
        out.push({
          role: 'tool',
          callId: calls[k]?.id as string,
          name: r.name,
          text: `#${n}-${k} ${'x'.repeat(r.size)}`,
          extras: [],
        }),
      );
    }
    return out;
  });

const compactStdin = async (text: string, ...args: string[]) =>
  runSwc(['compact', '-', '--tokenizer', 'approx', ...args], { cwd: CWD, stdin: text });

describe.each<[string, FormatCodec]>([
  ['openai', openaiCodec],
  ['haystack', haystackCodec],
])('--strategy prune in %s files', (_name, codec) => {
  it('replaces exactly the results the model of ToolResultPruningCompactor replaces, and a second run changes nothing', async () => {
    await fc.assert(
      fc.asyncProperty(
        conversationArb,
        fc.integer({ min: 1, max: 4000 }),
        fc.constantFrom(0, 200),
        fc.constantFrom(1, 2),
        async (messages, target, minTokens, k) => {
          const file = transcriptFile(codec, messages, 'json', BARE, PRETTY_2);
          const args = [
            '--strategy',
            'prune',
            '-t',
            String(target),
            '--min-tokens',
            String(minTokens),
            '-k',
            String(k),
          ];
          const r = await compactStdin(file.text, ...args);
          expect(r.status).toBe(0);
          const pruned = modelPrune(messages, target, minTokens, k);
          const expectedMessages = messages.map((m, i) =>
            pruned.includes(i) && m.role === 'tool' ? { ...m, text: PLACEHOLDER.replace('{tool_name}', m.name) } : m,
          );
          const expected = JSON.parse(transcriptFile(codec, expectedMessages, 'json', BARE, PRETTY_2).text) as Record<
            string,
            unknown
          >[];
          if (codec === haystackCodec) {
            // ChatMessage.from_tool(...) with meta {..., context_compaction: {strategy, original_tokens}}.
            for (const i of pruned) {
              (expected[i] as { meta: Record<string, unknown> }).meta = {
                context_compaction: {
                  strategy: 'tool_result_pruning',
                  original_tokens: tokens([rendered(messages[i] as ConvMessage)]),
                },
              };
            }
          }
          expect(JSON.parse(r.stdout)).toEqual(expected);
          if (pruned.length === 0) expect(r.stdout).toBe(file.text);
          const plan = JSON.parse((await compactStdin(file.text, ...args, '--dry-run', '--json')).stdout) as {
            groups: { kind: string; start: number; end: number; tool?: string }[];
          };
          expect(plan.groups.filter((g) => g.kind === 'pruned').map((g) => [g.start, g.end, g.tool])).toEqual(
            pruned.map((i) => [i, i + 1, (messages[i] as { name: string }).name]),
          );
          const again = await compactStdin(r.stdout, ...args);
          expect(again.stdout).toBe(r.stdout);
        },
      ),
      { numRuns: scaled(40) },
    );
  });

  it('prune,window gives what pruning and then the sliding window give', async () => {
    await fc.assert(
      fc.asyncProperty(conversationArb, fc.integer({ min: 1, max: 4000 }), async (messages, target) => {
        const file = transcriptFile(codec, messages, 'json', BARE, PRETTY_2);
        const chained = await compactStdin(file.text, '--strategy', 'prune,window', '-t', String(target));
        const pruned = await compactStdin(file.text, '--strategy', 'prune', '-t', String(target));
        const windowed = await compactStdin(pruned.stdout, '--strategy', 'window', '-t', String(target));
        expect(chained.stdout).toBe(windowed.stdout);
      }),
      { numRuns: scaled(30) },
    );
  });
});

describe('--strategy on the command line', () => {
  const FILE = TWO_SEARCHES;

  it('says in the summary how many results were pruned', async () => {
    const r = await compactStdin(FILE, '--strategy', 'prune', '-t', '1500');
    expect(r.stderr).toBe(
      'swc: <stdin>: 2,028 → 1,047 tokens (−48%, approx), pruned 1 tool result; target 1,500 met\n',
    );
  });

  it('shows a pruned result as a ~ row in the dry run', async () => {
    const r = await compactStdin(FILE, '--strategy', 'prune', '-t', '1500', '--dry-run');
    expect(r.stdout).toContain('~ pruned  #2     1 msg  1,003 → 22  search');
    expect(r.stdout).toContain('pruned 1 tool result (981 tokens saved)');
  });

  it('uses the placeholder given, {tool_name} filled in and other braces kept', async () => {
    const r = await compactStdin(
      FILE,
      '--strategy',
      'prune',
      '-t',
      '1500',
      '--placeholder',
      '{tool_name}: gone {"q": 1}',
    );
    expect(JSON.parse(r.stdout)[2].content).toBe('search: gone {"q": 1}');
  });

  it('with --context-window, pruning that brings the conversation under the trigger leaves the window nothing to do', async () => {
    // 2,028 tokens reach 0.5 of 3,000; pruning towards 0.1 (300) can only prune the older result and leaves 1,047:
    // below the trigger, so the window, checking it again, removes nothing.
    const r = await compactStdin(
      FILE,
      '--strategy',
      'prune,window',
      '--context-window',
      '3000',
      '--compact-at',
      '0.5',
      '--compact-to',
      '0.1',
    );
    const out = JSON.parse(r.stdout) as unknown[];
    expect(out).toHaveLength(5);
    expect((out[2] as { content: string }).content).toBe(PLACEHOLDER.replace('{tool_name}', 'search'));
    expect(r.stderr).toBe(
      'swc: <stdin>: 2,028 → 1,047 tokens (−48%, approx), pruned 1 tool result; target 300 not met: pruning brought it below the compact-at threshold, where the window leaves a conversation alone\n',
    );
  });

  it('with --context-window, a conversation below the trigger is left alone by pruning too', async () => {
    const r = await compactStdin(FILE, '--strategy', 'prune', '--context-window', '30000');
    expect(r.stdout).toBe(FILE);
    expect(r.stderr).toBe(
      'swc: <stdin>: unchanged, 2,028 tokens (approx), below the threshold 21,000 (70% of 30,000)\n',
    );
  });

  it('prunes in batch runs too, on worker threads, and the report records it', async () => {
    const dir = tempDir();
    for (const name of ['a.json', 'b.json', 'c.json']) writeFileSync(path.join(dir, name), FILE);
    const args = ['compact', '.', '--tokenizer', 'approx', '-t', '1500', '--strategy', 'prune', '-j', '2'];
    const check = await runSwc([...args, '--check', '--json'], { cwd: dir });
    expect(check.status).toBe(1);
    const report = JSON.parse(check.stdout) as {
      settings: Record<string, unknown>;
      files: { path: string; resultsPruned?: number }[];
    };
    expect(report.settings).toMatchObject({ strategies: ['prune'], minTokens: 200, placeholder: PLACEHOLDER });
    expect(report.files.map((f) => [f.path, f.resultsPruned])).toEqual([
      ['a.json', 1],
      ['b.json', 1],
      ['c.json', 1],
    ]);
    const run = await runSwc([...args, '--in-place'], { cwd: dir });
    expect(run.status).toBe(0);
    expect(run.stderr).toContain(
      'swc: a.json: 2,028 → 1,047 tokens (−48%, approx), pruned 1 tool result; target 1,500 met',
    );
    const written = JSON.parse(readFileSync(path.join(dir, 'b.json'), 'utf8')) as { content: string }[];
    expect(written[2]?.content).toBe(PLACEHOLDER.replace('{tool_name}', 'search'));
    expect((await runSwc([...args, '--check'], { cwd: dir })).status).toBe(0);
  });

  it.each([
    [
      ['--strategy', 'prune', '-k', '0'],
      '--min-keep-steps must be at least 1 with --strategy prune: the newest results are the ones the model is about to act on',
    ],
    [
      ['--strategy', 'summarise'],
      'unknown strategy "summarise" (choose from: window, prune, offload, summarize, comma-separated)',
    ],
    [['--strategy', 'prune,prune'], '--strategy names "prune" twice: each strategy runs once in a chain'],
    [
      ['--strategy', 'prune,'],
      '--strategy has an empty name in "prune," (choose from: window, prune, offload, summarize, comma-separated)',
    ],
    [['--strategy', 'prune', '--min-tokens', '-1'], '--min-tokens must be at least 0, got -1'],
    [
      ['--strategy', 'prune', '--placeholder', ''],
      '--placeholder must not be empty (it is what the model sees in place of a pruned result)',
    ],
    [
      ['--strategy', 'prune', '--placeholder', ' {tool_name} '],
      '--placeholder needs text besides {tool_name}: earlier placeholders are recognised by that text, and a bare {tool_name} would match every result, so nothing would be pruned',
    ],
    [['--min-tokens', '10'], '--min-tokens only applies with --strategy prune'],
  ])('refuses %j with one line and exit 2', async (flags, message) => {
    const r = await compactStdin(FILE, '-t', '100', ...flags);
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(`swc: error: ${message}\n`);
    expect(r.stdout).toBe('');
  });

  it('never prunes AI SDK UI tool outputs, which live inside the assistant message (the decision and the file agree)', async () => {
    const messages: unknown[] = [{ id: 'u', role: 'user', parts: [{ type: 'text', text: 'Find it.' }] }];
    for (let i = 0; i < 4; i++) {
      messages.push({
        id: `a${i}`,
        role: 'assistant',
        parts: [
          { type: 'step-start' },
          {
            type: 'tool-search',
            toolCallId: `c${i}`,
            state: 'output-available',
            input: { q: 'x' },
            output: 'r'.repeat(3000),
          },
        ],
      });
    }
    const text = JSON.stringify(messages);
    const r = await runSwc(['compact', '-', '-t', '500', '--tokenizer', 'approx', '--strategy', 'prune'], {
      cwd: tmpdir(),
      stdin: text,
    });
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(text);
    expect(r.stderr).toMatch(
      /^swc: <stdin>: unchanged, [\d,]+ tokens \(approx\), nothing could be changed; target 500 not met/,
    );
    const plan = await runSwc(
      ['compact', '-', '-t', '500', '--tokenizer', 'approx', '--strategy', 'prune', '--dry-run', '--json'],
      { cwd: tmpdir(), stdin: text },
    );
    expect(
      (JSON.parse(plan.stdout) as { groups: { kind: string }[] }).groups.filter((g) => g.kind === 'pruned'),
    ).toEqual([]);
  });

  it('names in the plan exactly the lines pruning rewrites, in a Claude Code session whose messages span several lines', async () => {
    const file = path.join(
      path.dirname(new URL(import.meta.url).pathname),
      '../../fixtures/real/claude-code/ccviewer-5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl',
    );
    const text = readFileSync(file, 'utf8');
    const args = ['compact', '-', '-t', '3000', '--strategy', 'prune'];
    const plan = JSON.parse(
      (await runSwc([...args, '--dry-run', '--json'], { cwd: tmpdir(), stdin: text })).stdout,
    ) as { groups: { kind: string; start: number; end: number }[] };
    const named = new Set<number>();
    for (const g of plan.groups.filter((x) => x.kind === 'pruned')) for (let k = g.start; k < g.end; k++) named.add(k);
    const out = (await runSwc(args, { cwd: tmpdir(), stdin: text })).stdout.split('\n');
    const before = text.split('\n');
    expect(out).toHaveLength(before.length);
    const changed = new Set(before.flatMap((line, k) => (line === out[k] ? [] : [k])));
    expect(changed.size).toBeGreaterThan(0);
    expect([...named].sort((a, b) => a - b)).toEqual([...changed].sort((a, b) => a - b));
  });

  it('gives one reason for a pruning run that misses, in the summary, the dry run and the JSON plan', async () => {
    const messages = [
      { role: 'user', content: 'task' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'a', content: 'x'.repeat(4000) },
    ];
    const text = JSON.stringify(messages);
    const reason = 'no other tool result may be pruned (the newest steps, small results and earlier placeholders stay)';
    const run = await compactStdin(text, '--strategy', 'prune', '-t', '100');
    expect(run.stderr).toContain(`target 100 not met: ${reason}`);
    const dry = await compactStdin(text, '--strategy', 'prune', '-t', '100', '--dry-run');
    expect(dry.stdout.replace(/\s+/g, ' ')).toContain(reason);
    expect(dry.stdout).not.toContain('fits the target');
    const plan = JSON.parse(
      (await compactStdin(text, '--strategy', 'prune', '-t', '100', '--dry-run', '--json')).stdout,
    ) as { missReason: { kind: string } };
    expect(plan.missReason.kind).toBe('nothing-to-prune');
  });

  it('shows in the budget bar what pruning took out of the results that stay', async () => {
    const file = path.join(
      path.dirname(new URL(import.meta.url).pathname),
      '../../fixtures/real/claude-code/ccviewer-5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl',
    );
    const args = ['compact', '-', '-t', '3000', '--strategy', 'prune'];
    const text = readFileSync(file, 'utf8');
    const dry = (await runSwc([...args, '--dry-run'], { cwd: tmpdir(), stdin: text })).stdout;
    const plan = JSON.parse(
      (await runSwc([...args, '--dry-run', '--json'], { cwd: tmpdir(), stdin: text })).stdout,
    ) as { groups: { kind: string; tokensBefore?: number; tokensAfter?: number }[] };
    const saved = plan.groups
      .filter((g) => g.kind === 'pruned')
      .reduce((a, g) => a + (g.tokensBefore ?? 0) - (g.tokensAfter ?? 0), 0);
    expect(saved).toBeGreaterThan(0);
    expect(dry).toContain(`~ pruned results −${saved.toLocaleString('en-US')}`);
    expect(dry.split('\n').find((l) => l.startsWith('budget ['))).toMatch(/~+\]$/);
  });

  it('never prunes a Gemini function response that carries media parts (its media would stay while counted gone)', async () => {
    const response = (id: string, media: boolean): unknown => ({
      role: 'user',
      parts: [
        {
          functionResponse: {
            id,
            name: 'shot',
            response: { output: 'r'.repeat(3000) },
            ...(media ? { parts: [{ inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } }] } : {}),
          },
        },
      ],
    });
    const call = (id: string): unknown => ({
      role: 'model',
      parts: [{ functionCall: { id, name: 'shot', args: {} } }],
    });
    const text = JSON.stringify([
      { role: 'user', parts: [{ text: 'look' }] },
      call('a'),
      response('a', true),
      call('b'),
      response('b', false),
      call('c'),
      response('c', false),
    ]);
    const args = ['compact', '-', '-t', '100', '--tokenizer', 'approx', '--strategy', 'prune', '--format', 'gemini'];
    const plan = JSON.parse(
      (await runSwc([...args, '--dry-run', '--json'], { cwd: tmpdir(), stdin: text })).stdout,
    ) as { groups: { kind: string; start: number }[] };
    // The media response (item 2) stays; the plain one outside the newest step (item 4) is pruned.
    expect(plan.groups.filter((g) => g.kind === 'pruned').map((g) => g.start)).toEqual([4]);
    const out = JSON.parse((await runSwc(args, { cwd: tmpdir(), stdin: text })).stdout) as unknown[];
    expect(out[2]).toEqual(JSON.parse(text)[2]);
  });
});
