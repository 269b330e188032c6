/**
 * `--min-retention` and the library's `minRetention`, in process: a summary that drops identifiers of the messages it
 * replaces reports its retention (plan, summary line), and under the share asked its round fails as a failed call
 * does (the last result stands with a warning; --strict fails the file). The model is a shell script.
 */
import { describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { compactMessages } from '../../src/library/index.js';
import { compactArgs, summarizeFlags } from '../helpers/argv.js';
import { ROOT, tempDir } from '../helpers/cli.js';
import { runSwc } from '../helpers/run-in-process.js';

/** An old turn naming a path, an error, a URL and a commit; then the current task, which stays. */
const MESSAGES = [
  { role: 'system', content: 'You are a coding agent.' },
  {
    role: 'user',
    content: `Why does src/auth/login.ts throw TypeError? See https://example.com/bug and commit 3f63cd0. ${'old question '.repeat(40)}`,
  },
  { role: 'assistant', content: 'old answer '.repeat(40) },
  { role: 'user', content: 'current task' },
];

/** The fake model: a script that answers every prompt with a summary keeping the path and the error, not the rest. */
const SUMMARY = 'The TypeError is in src/auth/login.ts.';

function folder(): string {
  const dir = tempDir();
  writeFileSync(path.join(dir, 'a.json'), JSON.stringify({ messages: MESSAGES }, null, 2));
  writeFileSync(path.join(dir, 'model.sh'), `cat >/dev/null\nprintf '%s' '${SUMMARY}'\n`);
  return dir;
}

async function compact(dir: string, ...args: string[]) {
  // Dry runs write nothing, so they take no -o.
  const output = args.includes('--dry-run') ? [] : ['-o', 'out.json'];
  const model = `sh '${path.join(dir, 'model.sh')}'`;
  const run = await runSwc(
    compactArgs('a.json', 40, ...summarizeFlags(), ...output, '--summarize-command', model, '--no-cache', ...args),
    { cwd: dir },
  );
  const out = path.join(dir, 'out.json');
  return {
    ...run,
    output: existsSync(out)
      ? (JSON.parse(readFileSync(out, 'utf8')) as { messages: { content: string }[] }).messages
      : null,
  };
}

type PlanSummary = { round: number; identifiers: number; identifiersKept: number | null; retention: number | null };

function validator(): ValidateFunction {
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true });
  ajv.addSchema(JSON.parse(readFileSync(path.join(ROOT, 'docs/schema/plan.schema.json'), 'utf8')) as object);
  return ajv.getSchema('plan.schema.json') as ValidateFunction;
}

describe("a summary's retention on the command line", () => {
  it('reports what share of the replaced identifiers a summary keeps, in the JSON plan (as the schema says) and the summary line', async () => {
    const dir = folder();
    const run = await compact(dir, '--json');
    expect(run.status).toBe(0);
    expect(run.output?.[1]?.content).toBe(`<conversation_summary>\n${SUMMARY}\n</conversation_summary>`);
    const plan = JSON.parse(run.stdout) as { summaries: PlanSummary[] };
    expect(
      plan.summaries.map(({ round, identifiers, identifiersKept, retention }) => ({
        round,
        identifiers,
        identifiersKept,
        retention,
      })),
    ).toEqual([{ round: 0, identifiers: 4, identifiersKept: 2, retention: 0.5 }]);
    const validate = validator();
    expect(validate(plan) ? [] : validate.errors).toEqual([]);
    expect(run.stderr).toMatch(
      /summarize: 1 model call, [\d,]+ input and [\d,]+ output tokens; the summaries keep 2 of 4 identifiers they replace \(50%\)\n/,
    );
  });

  it.each([['0.5'], ['50%'], ['0']])('passes a summary that keeps the share --min-retention %s asks', async (share) => {
    const run = await compact(folder(), '--min-retention', share);
    expect(run.status).toBe(0);
    expect(run.stderr).not.toMatch(/warning/);
    expect(run.output?.[1]?.content).toContain(SUMMARY);
  });

  it('treats a summary under --min-retention as a failed call: the conversation is left as it was, with a one-line warning', async () => {
    const run = await compact(folder(), '--min-retention', '0.6');
    expect(run.status).toBe(0);
    expect(run.stderr).toMatch(
      /^swc: warning: a\.json: summarize round 1 failed: the summary keeps 2 of 4 identifiers \(50%\), under --min-retention 0\.6; lost https:\/\/example\.com\/bug, 3f63cd0; left unchanged$/m,
    );
    expect(run.output?.map((m) => m.content)).toEqual(MESSAGES.map((m) => m.content));
  });

  it('with --strict fails the file under --min-retention and writes nothing', async () => {
    const run = await compact(folder(), '--min-retention', '80%', '--strict');
    expect(run.status).toBe(2);
    expect(run.output).toBeNull();
    expect(run.stderr).toMatch(
      /summarize round 1 failed: the summary keeps 2 of 4 identifiers \(50%\), under --min-retention 0\.8; lost .* \(--strict: nothing written\)/,
    );
  });

  it('shows in a dry run how many identifiers each round replaces, never holding the simulated summary to --min-retention', async () => {
    const dir = folder();
    const diff = await compact(dir, '--dry-run', '--min-retention', '1');
    expect(diff.status).toBe(0);
    // Lines wrap at the terminal's width: joined again here.
    expect(diff.stdout.replace(/\n +/g, ' ')).toMatch(
      /round 1 \(historical turns\): a summary would replace items 1–2 \(naming 4 identifiers\), a call of [\d,]+ prompt tokens/,
    );
    expect(diff.stderr).not.toMatch(/warning/);
    const json = await compact(dir, '--dry-run', '--json');
    const plan = JSON.parse(json.stdout) as { summaries: PlanSummary[] };
    expect(
      plan.summaries.map(({ identifiers, identifiersKept, retention }) => ({
        identifiers,
        identifiersKept,
        retention,
      })),
    ).toEqual([{ identifiers: 4, identifiersKept: null, retention: null }]);
    const validate = validator();
    expect(validate(plan) ? [] : validate.errors).toEqual([]);
  });

  it.each([
    [['--min-retention', '1.5'], /--min-retention must be a fraction from 0 to 1 or a percentage, got "1\.5"/],
    [['--min-retention', 'most'], /--min-retention must be a fraction from 0 to 1 or a percentage, got "most"/],
    [['--min-retention', '-0.1'], /--min-retention must be a fraction from 0 to 1/],
  ])('refuses %j', async (args, message) => {
    const run = await compact(folder(), ...args);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(run.output).toBeNull();
  });

  it('refuses --min-retention without summarize in --strategy', async () => {
    const dir = folder();
    const run = await runSwc(
      ['compact', 'a.json', '-t', '40', '--strategy', 'prune,window', '--min-retention', '0.5'],
      { cwd: dir },
    );
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/--min-retention only applies with --strategy summarize/);
  });
});

describe('minRetention in the library', () => {
  const options = {
    format: 'openai' as const,
    target: 40,
    tokenizer: 'approx' as const,
    summaryTokens: 10,
    summarize: async () => SUMMARY,
  };

  it("records each round's retention in summarized", async () => {
    const result = await compactMessages(MESSAGES, options);
    expect(
      result.summarized?.rounds.map((r) => ({
        identifiers: r.identifiers,
        kept: r.retention?.kept,
        fraction: r.retention?.fraction,
      })),
    ).toEqual([{ identifiers: 4, kept: 2, fraction: 0.5 }]);
  });

  it('fails a round under minRetention, keeping the messages; with strict it throws', async () => {
    const kept = await compactMessages(MESSAGES, { ...options, minRetention: 0.75 });
    expect(kept.changed).toBe(false);
    expect(kept.summarized?.failure).toMatchObject({ round: 0, kind: 'retention' });
    expect(kept.messages).toEqual(MESSAGES);
    await expect(compactMessages(MESSAGES, { ...options, minRetention: 0.75, strict: true })).rejects.toThrow(
      /summarize round 1 failed: the summary keeps 2 of 4 identifiers \(50%\)/,
    );
    expect((await compactMessages(MESSAGES, { ...options, minRetention: 0.5 })).changed).toBe(true);
  });
});
