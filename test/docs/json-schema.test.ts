/**
 * The JSON Schemas in docs/schema describe what the command line really writes (run in process): plans from `--dry-run --json` on
 * fixtures of every shape (instructions outside the list, many conversations, thresholds with tool schemas, missed
 * targets) and batch reports from `--check --report` and `--dry-run --json` on a folder with compacted, unchanged
 * and broken files. They forbid what they do not describe, so new output fields arrive with their documentation.
 */
import { describe, expect, it } from '@jest/globals';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { ROOT, tempDir } from '../helpers/cli.js';
import { runSwc } from '../helpers/run-in-process.js';

function schema(name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(path.join(ROOT, 'docs/schema', name), 'utf8')) as Record<string, unknown>;
}

const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true });
ajv.addSchema(schema('plan.schema.json')).addSchema(schema('report.schema.json'));
ajv.addSchema(schema('inspection.schema.json')).addSchema(schema('inspect-run.schema.json'));
ajv.addSchema(schema('replay.schema.json'));
const validatePlan = ajv.getSchema('plan.schema.json') as ValidateFunction;
const validateReport = ajv.getSchema('report.schema.json') as ValidateFunction;
const validateInspection = ajv.getSchema('inspection.schema.json') as ValidateFunction;
const validateInspectRun = ajv.getSchema('inspect-run.schema.json') as ValidateFunction;
const validateReplay = ajv.getSchema('replay.schema.json') as ValidateFunction;

/** The schema's complaints about a document, one line each (empty when it is valid). */
function problems(validate: ValidateFunction, document: unknown): string[] {
  return validate(document) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
}

/** Runs the command line and parses its standard output as JSON. */
async function jsonOf(args: string[], cwd = ROOT): Promise<unknown> {
  const r = await runSwc(args, { cwd });
  expect(r.stderr).not.toMatch(/error/);
  return JSON.parse(r.stdout) as unknown;
}

describe('docs/schema/plan.schema.json', () => {
  it.each([
    ['a compacted JSONL file with a note', ['fixtures/sample.jsonl', '-t', '2000']],
    ['a target missed because of the protected part', ['fixtures/sample.jsonl', '-t', '100']],
    ['notes off', ['fixtures/sample.jsonl', '-t', '2000', '--no-note']],
    ['instructions held outside the list', ['fixtures/anthropic/agent-session.json', '-t', '300']],
    ['a file of many conversations', ['fixtures/multi/records.json', '-t', '50']],
    ['context-window thresholds with tool schemas', ['fixtures/real/openai-chat/pydanticai-deepseek_deferred_capability_with_thinking.request.json', '--context-window', '1000']],
    ['tool schemas larger than the target', ['fixtures/real/openai-chat/pydanticai-deepseek_deferred_capability_with_thinking.request.json', '--context-window', '300']],
    ['an unchanged file', ['fixtures/anthropic/messages.jsonl', '-t', '100000']],
    ['pruned tool results', ['fixtures/real/openai-chat/taubench-airline-task109-messages.json', '-t', '1000', '--strategy', 'prune', '--min-tokens', '0']],
    ['pruning then the sliding window', ['fixtures/real/haystack/DERIVED-taubench-airline-task109.haystack.json', '-t', '1000', '--strategy', 'prune,window']],
    ['offloaded tool results', ['fixtures/real/openai-chat/taubench-airline-task109-messages.json', '-t', '1000', '--strategy', 'offload,window', '--offload-dir', '/tmp/swc-schema-store', '--offload-over', '100']],
  ])('describes the dry-run plan of %s', async (_name, args) => {
    const plan = await jsonOf(['compact', ...args, '--dry-run', '--json']);
    expect(problems(validatePlan, plan)).toEqual([]);
  });

  it('rejects what it does not describe', async () => {
    const plan = (await jsonOf(['compact', 'fixtures/sample.jsonl', '-t', '2000', '--dry-run', '--json'])) as Record<string, unknown>;
    expect(validatePlan({ ...plan, surprise: 1 })).toBe(false);
    expect(validatePlan({ ...plan, groups: [{ kind: 'chapter', start: 0, end: 1, messages: 1, tokens: 1, kept: true }] })).toBe(false);
    expect(validatePlan({ ...plan, missReason: { kind: 'protected' } })).toBe(false);
  });
});

describe('docs/schema/report.schema.json', () => {
  /** A folder of transcripts: one to compact, one already small, one of many conversations, one broken. */
  function archive(): string {
    const dir = tempDir();
    cpSync(path.join(ROOT, 'fixtures/sample.jsonl'), path.join(dir, 'archive/sample.jsonl'));
    mkdirSync(path.join(dir, 'archive/small'));
    writeFileSync(path.join(dir, 'archive/small/hello.jsonl'), '{"role": "user", "content": "Hello!"}\n');
    cpSync(path.join(ROOT, 'fixtures/multi/records.json'), path.join(dir, 'archive/records.json'));
    writeFileSync(path.join(dir, 'archive/broken.json'), '{"messages": [');
    return dir;
  }

  it('describes the report of --check --report on a folder', async () => {
    const dir = archive();
    const r = await runSwc(['compact', 'archive', '--check', '-t', '50', '--report', 'r.json'], { cwd: dir });
    expect(r.status).toBe(2);
    const report = JSON.parse(readFileSync(path.join(dir, 'r.json'), 'utf8')) as { files: Array<{ status: string; conversations: number }> };
    expect(new Set(report.files.map((f) => f.status))).toEqual(new Set(['compacted', 'failed', 'unchanged']));
    expect(report.files.some((f) => f.status === 'compacted' && f.conversations > 1)).toBe(true);
    expect(problems(validateReport, report)).toEqual([]);
  });

  it('describes the report of a pruning run', async () => {
    const dir = archive();
    const r = await runSwc(['compact', 'archive', '--dry-run', '-t', '50', '--strategy', 'prune', '--min-tokens', '0', '--json'], { cwd: dir });
    const report = JSON.parse(r.stdout) as { files: Array<{ resultsPruned?: number }> };
    expect(report.files.some((f) => (f.resultsPruned ?? 0) > 0)).toBe(true);
    expect(problems(validateReport, report)).toEqual([]);
  });

  it('describes the report of --dry-run --json with thresholds and a shard', async () => {
    const dir = archive();
    const report = await jsonOf(['compact', 'archive', '--dry-run', '--json', '--context-window', '3000', '--shard', '1/1'], dir);
    expect(problems(validateReport, report)).toEqual([]);
  });

  it('describes the report of --out-dir --report, with the paths written', async () => {
    const dir = archive();
    await runSwc(['compact', 'archive', '--out-dir', 'out', '-t', '2000', '--report', 'r.json'], { cwd: dir });
    const report = JSON.parse(readFileSync(path.join(dir, 'r.json'), 'utf8')) as { files: Array<{ written: string | null }> };
    expect(report.files.some((f) => f.written !== null)).toBe(true);
    expect(problems(validateReport, report)).toEqual([]);
  });

  it('rejects a record without its error or with an unknown status', async () => {
    const dir = archive();
    const report = (await jsonOf(['compact', 'archive', '--dry-run', '--json', '-t', '2000'], dir)) as { files: Array<Record<string, unknown>> };
    const [first] = report.files;
    expect(validateReport({ ...report, files: [{ ...first, status: 'ignored' }] })).toBe(false);
    const { error: _dropped, ...withoutError } = first as Record<string, unknown>;
    expect(validateReport({ ...report, files: [withoutError] })).toBe(false);
  });
});

describe('--json goes to stdout unless stdout carries the transcript, and every document has a version', () => {
  const SAMPLE = path.join(ROOT, 'fixtures/sample.jsonl');

  it.each([
    ['--check', ['--check']],
    ['--dry-run', ['--dry-run']],
    ['-o FILE', ['-o', 'out.jsonl']],
    ['--in-place', ['--in-place']],
    ['--out-dir', ['--out-dir', 'out']],
  ])('writes the plan of one named file on stdout with %s', async (_name, flags) => {
    const r = await runSwc(['compact', 'sample.jsonl', '-t', '2000', '--tokenizer', 'approx', '--json', ...flags], { cwd: tempDir([SAMPLE]) });
    const plan = JSON.parse(r.stdout) as { version: number };
    expect(plan.version).toBe(1);
    expect(problems(validatePlan, plan)).toEqual([]);
  });

  it('writes it on stderr when the transcript is on stdout', async () => {
    const r = await runSwc(['compact', 'sample.jsonl', '-t', '2000', '--tokenizer', 'approx', '--json'], { cwd: tempDir([SAMPLE]) });
    expect(r.stdout).toContain('"role"');
    expect(problems(validatePlan, JSON.parse(r.stderr))).toEqual([]);
  });

  it('writes a check report on stdout in place of the list of paths', async () => {
    const dir = tempDir([SAMPLE, path.join(ROOT, 'fixtures/multi/records.json')]);
    const r = await runSwc(['compact', '.', '--check', '-t', '50', '--tokenizer', 'approx', '--json'], { cwd: dir });
    expect(r.status).toBe(1);
    const report = JSON.parse(r.stdout) as { version: number; files: Array<{ plan: { version: number } }> };
    expect(report.version).toBe(1);
    expect(report.files.every((f) => f.plan.version === 1)).toBe(true);
    expect(problems(validateReport, report)).toEqual([]);
  });
});

describe('docs/schema/inspection.schema.json and inspect-run.schema.json', () => {
  it.each([
    ['a conversation with problems', 'fixtures/sample.jsonl'],
    ['instructions held outside the list', 'fixtures/anthropic/agent-session.json'],
    ['a file of many conversations', 'fixtures/multi/records.json'],
  ])('describe the document of one named file: %s', async (_name, file) => {
    const r = await runSwc(['inspect', file, '--json', '--tokenizer', 'approx'], { cwd: ROOT });
    expect(problems(validateInspection, JSON.parse(r.stdout))).toEqual([]);
  });

  it('describe the one document of a run over a folder, a file that cannot be read included', async () => {
    const dir = tempDir([path.join(ROOT, 'fixtures/sample.jsonl'), path.join(ROOT, 'fixtures/multi/records.json')]);
    writeFileSync(path.join(dir, 'broken.json'), '{"messages": [');
    const r = await runSwc(['inspect', '.', '--json', '--tokenizer', 'approx'], { cwd: dir });
    expect(r.status).toBe(2);
    const run = JSON.parse(r.stdout) as { summary: { files: number; failed: number } };
    expect(run.summary).toMatchObject({ files: 3, failed: 1 });
    expect(problems(validateInspectRun, run)).toEqual([]);
    expect(validateInspectRun({ ...run, surprise: true })).toBe(false);
  });

  it('describe each line of --json-lines', async () => {
    const dir = tempDir([path.join(ROOT, 'fixtures/sample.jsonl'), path.join(ROOT, 'fixtures/multi/records.json')]);
    const r = await runSwc(['inspect', '.', '--json-lines', '--tokenizer', 'approx'], { cwd: dir });
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(problems(validateInspection, JSON.parse(line))).toEqual([]);
  });
});

describe('docs/schema/replay.schema.json', () => {
  const SWEAGENT = 'fixtures/real/openai-chat/sweagent-marshmallow-1867-function_calling_replace.traj.json';
  const POLICIES = ['--strategy', 'none', '--strategy', 'window', '--strategy', 'prune,window', '--strategy', 'summarize'];

  it('describes the replay of one run under every kind of policy, with compactions and lost identifiers', async () => {
    const r = await runSwc(['replay', SWEAGENT, '--context-window', '6k', '--json', ...POLICIES], { cwd: ROOT });
    expect(r.stderr).toBe('');
    const run = JSON.parse(r.stdout) as { policies: Array<{ compactions: unknown[]; lost: unknown[] }> };
    expect(run.policies.some((p) => p.compactions.length > 0 && p.lost.length > 0)).toBe(true);
    expect(problems(validateReplay, run)).toEqual([]);
    expect(validateReplay({ ...run, surprise: 1 })).toBe(false);
  });

  it('describes the runs and totals of a folder, a recorded Claude Code session and a file of many records included', async () => {
    const dir = tempDir([
      path.join(ROOT, SWEAGENT),
      path.join(ROOT, 'fixtures/real/claude-code/claude-reliability-coverage-test-fix.jsonl'),
      path.join(ROOT, 'fixtures/multi/records.json'),
    ]);
    const r = await runSwc(['replay', '.', '--context-window', '4k', '--json', '--strategy', 'none', '--strategy', 'prune,window'], { cwd: dir });
    expect(r.stderr).toBe('');
    const runs = JSON.parse(r.stdout) as { runs: Array<{ recorded: unknown }>; totals: unknown[] };
    expect(runs.runs.length).toBeGreaterThan(2);
    expect(runs.runs.some((x) => x.recorded !== null)).toBe(true);
    expect(runs.totals).toHaveLength(2);
    expect(problems(validateReplay, runs)).toEqual([]);
  });
});
