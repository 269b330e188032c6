/**
 * `--strategy summarize` through real HTTP: the local OpenAI-compatible server (test/helpers/openai-server.ts) behind
 * the real endpoint client, cache and limiter; batches across files share --concurrency; a second run over the same
 * files is answered from the cache. And summaries written in every format of the random conversations, recognised
 * by the next run; summarize in chains.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { SummaryReply, SummaryRequest } from '../../src/core/summarize.js';
import { FORMAT_NAMES, writeAs, type Conversation } from '../helpers/convert.js';
import { startOpenAiServer, type OpenAiServer } from '../helpers/openai-server.js';
import { compactArgs, summarizeFlags } from '../helpers/argv.js';
import { runSwc } from '../helpers/run-in-process.js';
import { tempDir } from '../helpers/cli.js';

/** History and two steps, so a tight target needs two rounds. */
function conversation(n: number): Conversation {
  return [
    { role: 'system', text: 'rules' },
    { role: 'user', texts: [`old question ${n} `.repeat(40)], images: 0, files: [] },
    { role: 'assistant', text: `old answer ${n} `.repeat(40), reasoning: null, calls: [] },
    { role: 'user', texts: ['current task'], images: 0, files: [] },
    { role: 'assistant', text: null, reasoning: null, calls: [{ id: `c${n}a`, name: 'search', args: { q: n } }] },
    { role: 'tool', callId: `c${n}a`, name: 'search', text: `first result ${n} `.repeat(40) },
    { role: 'assistant', text: null, reasoning: null, calls: [{ id: `c${n}b`, name: 'search', args: {} }] },
    { role: 'tool', callId: `c${n}b`, name: 'search', text: `second result ${n} `.repeat(40) },
  ];
}

let server: OpenAiServer;
beforeAll(async () => {
  server = await startOpenAiServer({ apiKey: 'sk-test', latencyMs: 5 });
});
afterAll(async () => {
  await server.close();
});

function tree(files: number): string {
  const dir = tempDir();
  mkdirSync(path.join(dir, 'in'));
  for (let n = 0; n < files; n++)
    writeFileSync(path.join(dir, 'in', `t${n}.json`), writeAs('openai', conversation(n)).text);
  return dir;
}

describe('summarize against a local OpenAI-compatible server', () => {
  it('summarizes a batch over HTTP with at most --concurrency calls at once, then answers a re-run from the cache', async () => {
    server.reset();
    const dir = tree(6);
    /** The batch into `out`, at most two calls at once, its replies cached. */
    const args = (out: string): string[] =>
      compactArgs(
        'in',
        60,
        ...summarizeFlags(),
        '--out-dir',
        out,
        '--base-url',
        server.url,
        '--model',
        'test-model',
        '--concurrency',
        '2',
        '--cache-dir',
        'cache',
      );
    const env = { OPENAI_API_KEY: 'sk-test' };
    const first = await runSwc(args('out'), { cwd: dir, env });
    expect(first.stderr).not.toMatch(/warning/);
    expect(first.status).toBe(0);
    expect(server.requests).toHaveLength(12);
    expect(server.maxInFlight).toBe(2);
    expect(server.requests.every((r) => r.authorization === 'key' && r.path.endsWith('/chat/completions'))).toBe(true);
    expect(first.stderr).toMatch(/summarize: 12 model calls, [\d,]+ input and [\d,]+ output tokens/);
    expect(readdirSync(path.join(dir, 'out')).sort()).toEqual([
      't0.json',
      't1.json',
      't2.json',
      't3.json',
      't4.json',
      't5.json',
    ]);
    const written = JSON.parse(readFileSync(path.join(dir, 'out', 't0.json'), 'utf8')) as {
      messages: { role: string; content: string }[];
    };
    expect(written.messages.filter((m) => m.content?.startsWith('<conversation_summary>\nsummary '))).toHaveLength(2);

    server.reset();
    const again = await runSwc(args('out2'), { cwd: dir, env });
    expect(again.status).toBe(0);
    expect(server.requests).toHaveLength(0);
    expect(again.stderr).toMatch(/summarize: 12 model calls \(12 from the cache\)\n/);
    expect(readFileSync(path.join(dir, 'out2', 't3.json'), 'utf8')).toBe(
      readFileSync(path.join(dir, 'out', 't3.json'), 'utf8'),
    );
  });

  it('keeps the last good result when the endpoint answers with no choices, and never sends the key elsewhere', async () => {
    server.reset();
    server.script({ kind: 'reply' }, { kind: 'empty-choices' });
    const dir = tree(1);
    const run = await runSwc(
      compactArgs(
        'in/t0.json',
        60,
        ...summarizeFlags(),
        '-o',
        'out.json',
        '--base-url',
        server.url,
        '--model',
        'm',
        '--no-cache',
      ),
      { cwd: dir, env: { OPENAI_API_KEY: 'sk-test' } },
    );
    // A failed call: the last good result is written and the run exits 3.
    expect(run.status).toBe(3);
    expect(run.stderr).toMatch(/warning: .*summarize round 2 failed: .*; kept the result of 1 round/);
    expect(run.stderr).not.toContain('sk-test');
  });
});

/** A fake model answering call k with `summary k`. */
function fake(): { summarizer: (r: SummaryRequest) => Promise<SummaryReply>; requests: SummaryRequest[] } {
  const requests: SummaryRequest[] = [];
  return { requests, summarizer: async (r) => (requests.push(r), { text: `summary ${requests.length - 1}` }) };
}

describe('summaries in every format', () => {
  it.each([...FORMAT_NAMES])(
    'writes summaries as a %s file writes a user message, and the next run folds them in',
    async (format) => {
      const dir = tempDir();
      const written = writeAs(format, conversation(1));
      writeFileSync(path.join(dir, written.name), written.text);
      const first = fake();
      const run = await runSwc(
        compactArgs(written.name, 60, ...summarizeFlags(), '-o', `once-${written.name}`, '--no-cache'),
        { cwd: dir, summarizer: first.summarizer },
      );
      expect(run.status).toBe(0);
      expect(first.requests).toHaveLength(2);
      const text = readFileSync(path.join(dir, `once-${written.name}`), 'utf8');
      expect(text).toContain('<conversation_summary>\\nsummary 0\\n</conversation_summary>');
      // Run again with a tighter target: the earlier summaries are recognised (never a task), so the task summary and
      // the newest step stay, and the only thing left to combine is nothing: the floor.
      const second = fake();
      const again = await runSwc(
        compactArgs(
          `once-${written.name}`,
          10,
          '-o',
          `twice-${written.name}`,
          '--strategy',
          'summarize',
          '--summary-tokens',
          '1',
          '--no-cache',
        ),
        { cwd: dir, summarizer: second.summarizer },
      );
      expect(again.status).toBe(0);
      expect(second.requests).toEqual([]);
    },
  );
});

describe('summarize in chains', () => {
  it('prune,summarize shows the model the pruned placeholders', async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'a.json'), writeAs('openai', conversation(2)).text);
    const model = fake();
    const run = await runSwc(
      compactArgs(
        'a.json',
        120,
        ...summarizeFlags('prune,summarize'),
        '-o',
        'out.json',
        '--min-tokens',
        '10',
        '--no-cache',
      ),
      { cwd: dir, summarizer: model.summarizer },
    );
    expect(run.status).toBe(0);
    expect(model.requests.length).toBeGreaterThan(0);
    expect(model.requests.some((r) => r.user.includes('[Tool result removed to free up context.'))).toBe(true);
  });

  it('summarize,window lets the window drop what summarizing left over the target, its note written in their place', async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'a.json'), writeAs('openai', conversation(3)).text);
    const model = fake();
    const run = await runSwc(
      compactArgs('a.json', 60, ...summarizeFlags('summarize,window'), '-o', 'out.json', '--no-cache'),
      { cwd: dir, summarizer: model.summarizer },
    );
    expect(run.status).toBe(0);
    expect(model.requests).toHaveLength(2);
    // As Haystack's hooks in this order: the window, still over the target, removes the summaries (they belong to no
    // turn it keeps) and writes its note; the instructions, the task and the newest step stay.
    const out = JSON.parse(readFileSync(path.join(dir, 'out.json'), 'utf8')) as {
      messages: { role: string; content: string | null; tool_call_id?: string }[];
    };
    expect(out.messages.map((m) => m.role)).toEqual(['system', 'user', 'user', 'assistant', 'tool']);
    expect(out.messages[1]?.content).toMatch(/^\[2 earlier messages were removed/);
    expect(out.messages[2]?.content).toBe('current task');
    expect(out.messages[4]?.tool_call_id).toBe('c3b');
  });
});
