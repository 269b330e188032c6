/**
 * Consecutive assistant messages whose calls the results after the last of them answer are one step: a compaction
 * keeps or removes them with their results whole, so it never turns a request its provider accepts into one it
 * rejects (docs/strategy.md, "Steps"). Checked through the real command line in process, its output read by the real
 * inspect road.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { inspectSource } from '../../src/cli/inspect.js';
import type { SummaryReply, SummaryRequest } from '../../src/core/summarize.js';
import { decodeSource } from '../../src/io/source.js';
import { tempDir } from '../helpers/cli.js';
import { writeAs, type Conversation, type RefMessage } from '../helpers/convert.js';
import { createFakeCounter } from '../helpers/fake-counter.js';
import { runSwc } from '../helpers/run-in-process.js';
import { scaled, scaledTimeout } from '../helpers/scale.js';

/** The pairing problems inspect finds in a file's text, as `kind severity` lines, sorted. */
export function pairingProblems(text: string, file: string): string[] {
  const inspection = inspectSource(decodeSource(Buffer.from(text), file), {
    format: 'auto',
    counter: createFakeCounter(),
  });
  return inspection.conversations
    .flatMap((c) => c.problems)
    .filter((p) => p.kind === 'orphan-result' || p.kind === 'missing-result' || p.kind === 'duplicate-id')
    .map((p) => `${p.kind} ${p.severity}`)
    .sort();
}

/** Whether every line of `after` is in `before`, as many times at least. */
export function isSubBag(after: readonly string[], before: readonly string[]): boolean {
  const left = [...before];
  return after.every((line) => {
    const k = left.indexOf(line);
    if (k < 0) return false;
    left.splice(k, 1);
    return true;
  });
}

const PAD = 'the weather in the city was mild and the report said so at length '.repeat(6);

/** A stub model: every summary is one short line. */
const summarizer = async (request: SummaryRequest): Promise<SummaryReply> => {
  void request;
  return { text: 'summary of earlier work' };
};

interface Case {
  readonly name: string;
  readonly file: string;
  readonly value: unknown;
}

/** Markers in the arguments of the run's two calls, found nowhere else in a file. */
const MARKERS = ['call_alpha_tool', 'call_bravo_tool'] as const;

const gemini = (ids: boolean): Case => {
  const call = (name: string) => ({
    functionCall: { name, args: { marker: `call_${name}` }, ...(ids ? { id: `id_${name}` } : {}) },
  });
  const response = (name: string) => ({
    functionResponse: { name, response: { r: PAD }, ...(ids ? { id: `id_${name}` } : {}) },
  });
  return {
    name: ids ? 'Gemini with call ids' : 'Gemini without call ids',
    file: 'g.json',
    value: {
      contents: [
        { role: 'user', parts: [{ text: `earlier question ${PAD}` }] },
        { role: 'model', parts: [{ text: `earlier answer ${PAD}` }] },
        { role: 'user', parts: [{ text: 'q' }] },
        { role: 'model', parts: [call('alpha_tool')] },
        { role: 'model', parts: [call('bravo_tool')] },
        { role: 'user', parts: [response('alpha_tool'), response('bravo_tool')] },
        { role: 'model', parts: [{ text: `final answer ${PAD}` }] },
      ],
    },
  };
};

const openai: Case = {
  name: 'OpenAI chat',
  file: 'o.json',
  value: [
    { role: 'user', content: `earlier question ${PAD}` },
    { role: 'assistant', content: `earlier answer ${PAD}` },
    { role: 'user', content: 'q' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        {
          id: 'c_alpha',
          type: 'function',
          function: { name: 'alpha_tool', arguments: '{"marker":"call_alpha_tool"}' },
        },
      ],
    },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        {
          id: 'c_bravo',
          type: 'function',
          function: { name: 'bravo_tool', arguments: '{"marker":"call_bravo_tool"}' },
        },
      ],
    },
    { role: 'tool', tool_call_id: 'c_alpha', content: PAD },
    { role: 'tool', tool_call_id: 'c_bravo', content: PAD },
    { role: 'assistant', content: `final answer ${PAD}` },
  ],
};

const anthropic: Case = {
  name: 'Anthropic',
  file: 'a.json',
  value: {
    model: 'claude',
    max_tokens: 100,
    messages: [
      { role: 'user', content: `earlier question ${PAD}` },
      { role: 'assistant', content: `earlier answer ${PAD}` },
      { role: 'user', content: 'q' },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'toolu_alpha', name: 'alpha_tool', input: { marker: 'call_alpha_tool' } }],
      },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'toolu_bravo', name: 'bravo_tool', input: { marker: 'call_bravo_tool' } }],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_alpha', content: PAD },
          { type: 'tool_result', tool_use_id: 'toolu_bravo', content: PAD },
        ],
      },
      { role: 'assistant', content: `final answer ${PAD}` },
    ],
  },
};

const aiSdk: Case = {
  name: 'AI SDK',
  file: 'ai.json',
  value: [
    { role: 'user', content: [{ type: 'text', text: `earlier question ${PAD}` }] },
    { role: 'assistant', content: [{ type: 'text', text: `earlier answer ${PAD}` }] },
    { role: 'user', content: [{ type: 'text', text: 'q' }] },
    ...(['alpha_tool', 'bravo_tool'] as const).map((name) => ({
      role: 'assistant',
      content: [{ type: 'tool-call', toolCallId: `c_${name}`, toolName: name, input: { marker: `call_${name}` } }],
    })),
    {
      role: 'tool',
      content: (['alpha_tool', 'bravo_tool'] as const).map((name) => ({
        type: 'tool-result',
        toolCallId: `c_${name}`,
        toolName: name,
        output: { type: 'text', value: PAD },
      })),
    },
    { role: 'assistant', content: [{ type: 'text', text: `final answer ${PAD}` }] },
  ],
};

const CASES: readonly Case[] = [gemini(true), gemini(false), openai, anthropic, aiSdk];
const STRATEGIES = ['window', 'prune,window', 'summarize'] as const;

describe('a run of assistant messages answered after the last of them', () => {
  for (const c of CASES) {
    it(`stays whole with its results in ${c.name}, under every strategy, target and kept steps`, async () => {
      const dir = tempDir();
      const input = JSON.stringify(c.value, null, 1);
      writeFileSync(path.join(dir, c.file), input);
      const before = pairingProblems(input, c.file);
      let changed = 0;
      for (const strategy of STRATEGIES)
        for (const target of [10, 60, 120, 200, 300])
          for (const keep of strategy === 'summarize' ? ['1'] : ['1', '2', '3']) {
            const out = path.join(dir, `out-${c.file}`);
            const run = await runSwc(
              [
                'compact',
                c.file,
                '-t',
                String(target),
                '-k',
                keep,
                '--strategy',
                strategy,
                '--tokenizer',
                'approx',
                '-o',
                `out-${c.file}`,
              ],
              { cwd: dir, summarizer },
            );
            const setting = `${strategy} -t ${target} -k ${keep}`;
            expect([setting, run.status, run.stderr]).toEqual([setting, 0, run.status === 0 ? run.stderr : '']);
            const output = readFileSync(out, 'utf8');
            if (output !== input) changed++;
            expect([setting, isSubBag(pairingProblems(output, c.file), before)]).toEqual([setting, true]);
            const kept = MARKERS.map((marker) => output.includes(marker));
            expect([setting, kept[0]]).toEqual([setting, kept[1]]);
          }
      // Not vacuous: some settings compact the file.
      expect(changed).toBeGreaterThan(0);
    });
  }
});

describe('the preview of a step', () => {
  it('names the calls of every assistant message of a run it holds', async () => {
    const dir = tempDir();
    const c = gemini(true);
    writeFileSync(path.join(dir, c.file), JSON.stringify(c.value));
    const run = await runSwc(['compact', c.file, '-t', '10', '--tokenizer', 'approx', '--dry-run', '--verbose'], {
      cwd: dir,
    });
    expect(run.stdout).toMatch(/step 1 +#3-5 .*alpha_tool, bravo_tool → 2 results/);
  });
});

/** A random task: user messages, text replies, and runs of assistant messages with calls answered after the run. */
const eventArb = fc.oneof(
  fc.record({ kind: fc.constant('user' as const), words: fc.nat({ max: 30 }) }),
  fc.record({ kind: fc.constant('text' as const), words: fc.nat({ max: 30 }) }),
  fc.record({
    kind: fc.constant('run' as const),
    calls: fc.array(
      fc.record({
        name: fc.constantFrom('read', 'grep', 'run'),
        answered: fc.double({ min: 0, max: 1 }),
        size: fc.nat({ max: 80 }),
      }),
      { minLength: 1, maxLength: 4 },
    ),
    reversed: fc.boolean(),
  }),
);

/** The conversation of some events: a run is one assistant message per call, then the results (a few never come). */
function conversationOf(events: readonly Event[]): Conversation {
  const out: RefMessage[] = [{ role: 'user', texts: ['start'], images: 0, files: [] }];
  let ids = 0;
  for (const e of events) {
    if (e.kind === 'user') out.push({ role: 'user', texts: [`more ${'word '.repeat(e.words)}`], images: 0, files: [] });
    else if (e.kind === 'text')
      out.push({ role: 'assistant', text: `said ${'word '.repeat(e.words)}`, reasoning: null, calls: [] });
    else {
      const results: RefMessage[] = [];
      for (const c of e.calls) {
        const id = `call_${ids++}`;
        out.push({ role: 'assistant', text: null, reasoning: null, calls: [{ id, name: c.name, args: { n: ids } }] });
        if (c.answered < 0.85) results.push({ role: 'tool', callId: id, name: c.name, text: 'out '.repeat(c.size) });
      }
      out.push(...(e.reversed ? results.reverse() : results));
    }
  }
  return out;
}

type Event =
  | { kind: 'user'; words: number }
  | { kind: 'text'; words: number }
  | { kind: 'run'; calls: ReadonlyArray<{ name: string; answered: number; size: number }>; reversed: boolean };

describe('every strategy on random tasks with runs of calls', () => {
  it(
    'leaves no pairing problem the input did not have',
    async () => {
      const dir = tempDir();
      let compacted = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.array(eventArb, { minLength: 1, maxLength: 10 }),
          fc.constantFrom('openai', 'anthropic', 'gemini'),
          fc.constantFrom(...STRATEGIES),
          fc.integer({ min: 5, max: 400 }),
          fc.integer({ min: 0, max: 3 }),
          async (events, format, strategy, target, keep) => {
            const written = writeAs(format, conversationOf(events as Event[]));
            writeFileSync(path.join(dir, written.name), written.text);
            const run = await runSwc(
              [
                'compact',
                written.name,
                '-t',
                String(target),
                '-k',
                String(Math.max(keep, 1)),
                '--strategy',
                strategy,
                '--tokenizer',
                'approx',
                '-o',
                `out-${written.name}`,
              ],
              { cwd: dir, summarizer },
            );
            expect([run.status, run.stderr]).toEqual([0, run.status === 0 ? run.stderr : '']);
            const output = readFileSync(path.join(dir, `out-${written.name}`), 'utf8');
            if (output !== written.text) compacted++;
            const before = pairingProblems(written.text, written.name);
            const after = pairingProblems(output, written.name);
            expect([format, strategy, before, after, isSubBag(after, before)]).toEqual([
              format,
              strategy,
              before,
              after,
              true,
            ]);
          },
        ),
        { numRuns: scaled(120) },
      );
      expect(compacted).toBeGreaterThan(0);
    },
    scaledTimeout(120_000),
  );
});
