/**
 * What the agent will forget, end to end in process: a conversation whose removed turn names a path, a URL, a hash and
 * errors (one named again in what stays), and whose offloaded or pruned result names more. The dry run, its
 * --verbose list, the JSON plan and report, and --stat say exactly which leave, and which stay recoverable.
 */
import { describe, expect, it } from '@jest/globals';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { decodeSource } from '../../src/io/source.js';
import { compactMessages } from '../../src/library/index.js';
import { compactSource } from '../../src/pipeline/index.js';
import { createApproxCounter } from '../../src/tokens/index.js';
import { tempDir } from '../helpers/cli.js';
import { runSwc } from '../helpers/run-in-process.js';

const PAD = 'lorem ipsum dolor sit amet '.repeat(12);

/** Instructions; a turn naming a path, a URL, a hash and errors; the task; a step whose long result names more; a last step. */
const CHAT = [
  { role: 'system', content: 'You are a coding agent.' },
  { role: 'user', content: 'Fix the crash in src/auth/login.ts, reported at https://bugs.example.com/issue/42' },
  {
    role: 'assistant',
    content: null,
    tool_calls: [
      { id: 'c1', type: 'function', function: { name: 'read_file', arguments: '{"path": "src/auth/login.ts"}' } },
    ],
  },
  {
    role: 'tool',
    tool_call_id: 'c1',
    content: 'TypeError: cannot read id at src/auth/login.ts:42 (since commit 3f63cd0); ENOENT on the cache',
  },
  { role: 'assistant', content: 'Fixed it in lib/session.py.' },
  { role: 'user', content: 'Now update README.md; keep lib/session.py as it is.' },
  {
    role: 'assistant',
    content: null,
    tool_calls: [
      { id: 'c2', type: 'function', function: { name: 'run', arguments: '{"cmd": "cat /var/log/app.log"}' } },
    ],
  },
  {
    role: 'tool',
    tool_call_id: 'c2',
    content: `${PAD}ENOENT: /etc/app/config.yml is missing, see https://docs.example.com/errors/enoent ${PAD}`,
  },
  {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'c3', type: 'function', function: { name: 'run', arguments: '{"cmd": "ls"}' } }],
  },
  { role: 'tool', tool_call_id: 'c3', content: 'README.md' },
];

const REMOVED = [
  { kind: 'path', value: 'src/auth/login.ts', message: 1 },
  { kind: 'url', value: 'https://bugs.example.com/issue/42', message: 1 },
  { kind: 'error', value: 'TypeError', message: 3 },
  { kind: 'hash', value: '3f63cd0', message: 3 },
];
const STORED = [
  { kind: 'error', value: 'ENOENT', message: 7 },
  { kind: 'path', value: '/etc/app/config.yml', message: 7 },
  { kind: 'url', value: 'https://docs.example.com/errors/enoent', message: 7 },
];

function folder(): string {
  const dir = tempDir();
  writeFileSync(path.join(dir, 'chat.jsonl'), `${CHAT.map((m) => JSON.stringify(m)).join('\n')}\n`);
  return dir;
}

const APPROX = ['--tokenizer', 'approx'];
const WINDOW = ['compact', 'chat.jsonl', '-t', '300', ...APPROX];
const OFFLOAD = [
  'compact',
  'chat.jsonl',
  '-t',
  '200',
  ...APPROX,
  '--strategy',
  'offload,window',
  '--offload-dir',
  '../store',
  '--offload-over',
  '200',
];
const PRUNE = ['compact', 'chat.jsonl', '-t', '200', ...APPROX, '--strategy', 'prune,window', '--min-tokens', '50'];

interface Listed {
  count: number;
  byKind: Record<string, number>;
  identifiers: { kind: string; value: string; message: number }[];
}

describe('the dry run', () => {
  it('says what the removed turn takes with it, after the removed turns and steps, and not what the task names again', async () => {
    const r = await runSwc([...WINDOW, '--dry-run'], { cwd: folder() });
    expect(r.status).toBe(0);
    const lines = r.stdout.split('\n');
    const at = lines.findIndex((l) => l.startsWith('removed 4 messages'));
    expect(lines.slice(at + 1, at + 4).join('\n')).toBe(
      [
        'forgets 4 identifiers: 1 path (src/auth/login.ts), 1 URL',
        '  (https://bugs.example.com/issue/42), 1 hash (3f63cd0), 1 error (TypeError)',
        'target 300 met (267 tokens)',
      ].join('\n'),
    );
    // Named again in the task, lib/session.py stays known; ENOENT stays in the kept step's result.
    expect(r.stdout).not.toMatch(/session\.py \(|ENOENT\)/);
  });

  it('lists every identifier with --verbose, offloaded ones as recoverable from the store', async () => {
    const r = await runSwc([...OFFLOAD, '--dry-run', '--verbose'], { cwd: folder() });
    expect(r.status).toBe(0);
    const lines = r.stdout.split('\n');
    const at = lines.findIndex((l) => l.startsWith('forgets '));
    expect(lines.slice(at, at + 10).join('\n')).toBe(
      [
        'forgets 4 identifiers: 1 path (src/auth/login.ts), 1 URL',
        '  (https://bugs.example.com/issue/42), 1 hash (3f63cd0), 1 error (TypeError); 3',
        '  recoverable from the store',
        '  - path   #1  src/auth/login.ts',
        '  - URL    #1  https://bugs.example.com/issue/42',
        '  - error  #3  TypeError',
        '  - hash   #3  3f63cd0',
        '  ~ error  #7  ENOENT (in the store)',
        '  ~ path   #7  /etc/app/config.yml (in the store)',
        '  ~ URL    #7  https://docs.example.com/errors/enoent (in the store)',
      ].join('\n'),
    );
  });

  it('counts what a pruned result said as forgotten, unless a kept message says it too', async () => {
    const r = await runSwc([...PRUNE, '--dry-run'], { cwd: folder() });
    expect(r.stdout).toContain('pruned 1 tool result');
    expect(r.stdout).toContain(
      'forgets 2 identifiers: 1 path (/etc/app/config.yml), 1 URL\n  (https://docs.example.com/errors/enoent)\n',
    );
  });

  it('says so when nothing named leaves', async () => {
    const dir = tempDir();
    writeFileSync(
      path.join(dir, 'chat.jsonl'),
      ['hello there', 'hi, how can I help', 'tell me a joke']
        .map((content, k) => JSON.stringify({ role: k % 2 === 0 ? 'user' : 'assistant', content }))
        .join('\n'),
    );
    const r = await runSwc(['compact', 'chat.jsonl', '-t', '5', ...APPROX, '--dry-run', '--no-note'], { cwd: dir });
    expect(r.stdout).toContain('\nforgets no identifiers\n');
  });
});

describe('the JSON plan', () => {
  it('lists the forgotten identifiers by kind with the message each came from', async () => {
    const plan = JSON.parse((await runSwc([...WINDOW, '--dry-run', '--json'], { cwd: folder() })).stdout) as {
      forgotten: Listed;
      recoverable: Listed;
    };
    expect(plan.forgotten).toEqual({ count: 4, byKind: { path: 1, url: 1, hash: 1, error: 1 }, identifiers: REMOVED });
    expect(plan.recoverable).toEqual({ count: 0, byKind: {}, identifiers: [] });
  });

  it('lists offloaded results’ identifiers as recoverable, not forgotten', async () => {
    const plan = JSON.parse((await runSwc([...OFFLOAD, '--dry-run', '--json'], { cwd: folder() })).stdout) as {
      forgotten: Listed;
      recoverable: Listed;
    };
    expect(plan.forgotten.identifiers).toEqual(REMOVED);
    expect(plan.recoverable).toEqual({ count: 3, byKind: { path: 1, url: 1, error: 1 }, identifiers: STORED });
  });

  it('tags each identifier with its conversation in a file of several', async () => {
    const dir = tempDir();
    const record = { messages: CHAT };
    writeFileSync(path.join(dir, 'records.json'), JSON.stringify([record, record]));
    const plan = JSON.parse(
      (await runSwc(['compact', 'records.json', '-t', '300', ...APPROX, '--dry-run', '--json'], { cwd: dir })).stdout,
    ) as { forgotten: Listed };
    expect(plan.forgotten.count).toBe(8);
    expect(plan.forgotten.identifiers.map((id) => (id as { conversation?: number }).conversation)).toEqual([
      0, 0, 0, 0, 1, 1, 1, 1,
    ]);
  });

  it('gives the counts in each record of a batch report', async () => {
    const report = JSON.parse(
      (await runSwc([...OFFLOAD.slice(0, 1), '.', ...OFFLOAD.slice(2), '--dry-run', '--json'], { cwd: folder() }))
        .stdout,
    ) as {
      files: { identifiersForgotten: number; identifiersRecoverable: number; plan: { forgotten: Listed } }[];
    };
    expect(report.files.map((f) => [f.identifiersForgotten, f.identifiersRecoverable, f.plan.forgotten.count])).toEqual(
      [[4, 3, 4]],
    );
  });
});

describe('the JSON Schemas', () => {
  const schema = (name: string): Record<string, unknown> =>
    JSON.parse(readFileSync(path.join(process.cwd(), 'docs/schema', name), 'utf8')) as Record<string, unknown>;
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true });
  ajv.addSchema(schema('plan.schema.json')).addSchema(schema('report.schema.json'));

  it('describe the plan and the report with forgotten and recoverable identifiers', async () => {
    const dir = folder();
    const plan = JSON.parse((await runSwc([...OFFLOAD, '--dry-run', '--json'], { cwd: dir })).stdout) as unknown;
    const report = JSON.parse(
      (await runSwc([...OFFLOAD.slice(0, 1), '.', ...OFFLOAD.slice(2), '--dry-run', '--json'], { cwd: dir })).stdout,
    ) as unknown;
    expect(ajv.validate('plan.schema.json', plan) ? [] : ajv.errors).toEqual([]);
    expect(ajv.validate('report.schema.json', report) ? [] : ajv.errors).toEqual([]);
  });
});

describe('--dry-run --stat', () => {
  it('gives each file a forgets column', async () => {
    const r = await runSwc([...OFFLOAD.slice(0, 1), '.', ...OFFLOAD.slice(2), '--dry-run', '--stat'], {
      cwd: folder(),
    });
    expect(r.stdout.split('\n')[0]).toMatch(
      /^chat\.jsonl .* −4 messages {2}offloaded [\d,]+ {2}forgets 4, 3 in the store {2}target met$/,
    );
  });
});

describe('the library', () => {
  it('lists exactly the identifiers that leave, with the index of the message each came from', async () => {
    const out = await compactMessages(CHAT, { target: 300, tokenizer: 'approx' });
    expect(out.forgotten).toEqual(REMOVED);
  });

  it('counts what a summary names as kept, and the rest of what it replaced as leaving', async () => {
    const out = await compactMessages(CHAT, {
      target: 150,
      tokenizer: 'approx',
      strategy: 'summarize',
      summaryTokens: 20,
      summarize: async () => 'Fixed src/auth/login.ts (TypeError).',
    });
    expect(out.summarized?.summaries.length).toBeGreaterThan(0);
    const values = out.forgotten.map((id) => id.value);
    expect(values).toEqual(expect.arrayContaining(['https://bugs.example.com/issue/42', '3f63cd0']));
    expect(values).not.toContain('src/auth/login.ts');
    expect(values).not.toContain('TypeError');
  });

  it('counts a pruned result’s text as leaving', async () => {
    const out = await compactMessages(CHAT, {
      target: 200,
      tokenizer: 'approx',
      strategy: 'prune,window',
      minTokens: 50,
    });
    expect(out.forgotten).toEqual([
      { kind: 'path', value: '/etc/app/config.yml', message: 7 },
      { kind: 'url', value: 'https://docs.example.com/errors/enoent', message: 7 },
    ]);
  });
});

describe('the cost', () => {
  it('is not paid unless asked: a plain compaction’s outcome holds no inventory', async () => {
    const dir = folder();
    const source = decodeSource(readFileSync(path.join(dir, 'chat.jsonl')), 'chat.jsonl');
    const options = { target: 300, counter: createApproxCounter() };
    expect((await compactSource(source, options)).conversations[0]?.outcome.inventory).toBeNull();
    expect(
      (await compactSource(source, { ...options, inventory: true })).conversations[0]?.outcome.inventory?.forgotten,
    ).toHaveLength(4);
  });
});
