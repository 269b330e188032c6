import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { formatNames } from '../../src/pipeline/index.js';
import { ROOT, tempDir } from '../helpers/cli.js';
import { runSwc } from '../helpers/run-in-process.js';
import { scaled } from '../helpers/scale.js';

/**
 * Settings from a file: transcript-compact.config.json or package.json's "transcript-compact", found from the working
 * directory up to the repository root; keys named as the library's options; the command line overrides the file; a
 * bad key or value is one line naming the file and the key (exit 2), by the same rules a flag is checked with.
 */

const SAMPLE = path.join(ROOT, 'fixtures/sample.jsonl');
const CONFIG = 'transcript-compact.config.json';

/** A repository (a folder with .git) holding sample.jsonl in `sub/`, and files given by path. */
function repo(files: Record<string, unknown> = {}): { root: string; sub: string } {
  const root = path.join(tempDir(), 'repo');
  mkdirSync(path.join(root, '.git'), { recursive: true });
  mkdirSync(path.join(root, 'sub'));
  cpSync(SAMPLE, path.join(root, 'sub/sample.jsonl'));
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), typeof content === 'string' ? content : JSON.stringify(content));
  }
  return { root, sub: path.join(root, 'sub') };
}

/** The JSON plan of a dry run of sample.jsonl, and what the run printed. */
async function plan(cwd: string, ...flags: string[]) {
  const r = await runSwc(['compact', 'sample.jsonl', '--dry-run', '--json', ...flags], { cwd });
  return { ...r, plan: r.status === 0 ? (JSON.parse(r.stdout) as { settings: Record<string, unknown> }) : null };
}

describe('where the settings file is found', () => {
  it('reads transcript-compact.config.json in the working directory or a folder above it', async () => {
    for (const where of [`sub/${CONFIG}`, CONFIG]) {
      const { sub } = repo({ [where]: { target: '1.5k', tokenizer: 'approx' } });
      const r = await plan(sub);
      expect(r.plan?.settings).toMatchObject({
        target: 1500,
        tokenizer: 'approx',
        config: path.relative('sub', where),
      });
    }
  });

  it('reads the "transcript-compact" key of a package.json, and passes over a package.json without one', async () => {
    const { sub } = repo({
      'package.json': { name: 'x', 'transcript-compact': { target: 1500 } },
      'sub/package.json': { name: 'y' },
    });
    expect((await plan(sub)).plan?.settings).toMatchObject({ target: 1500, config: '../package.json' });
  });

  it('stops at the repository root: a file above it is not read', async () => {
    const { root, sub } = repo();
    writeFileSync(path.join(root, '..', CONFIG), JSON.stringify({ target: 1500 }));
    const r = await plan(sub);
    expect(r).toMatchObject({
      status: 2,
      stderr: 'swc: error: --target <tokens> is required (the token budget to compact to)\n',
    });
  });

  it('refuses a folder holding both files, which would leave a reader guessing', async () => {
    const { sub } = repo({ [CONFIG]: { target: 1500 }, 'package.json': { 'transcript-compact': { target: 900 } } });
    const r = await plan(sub);
    expect(r).toMatchObject({
      status: 2,
      stderr: `swc: error: ../${CONFIG} and ../package.json ("transcript-compact") both hold settings: keep one of them\n`,
    });
  });

  it('takes --config FILE (a package.json at its key) and reads none with --no-config', async () => {
    const { root, sub } = repo({
      [CONFIG]: { target: 1500 },
      'other.json': { target: 1200 },
      'pkg/package.json': { 'transcript-compact': { target: 1100 } },
    });
    expect((await plan(sub, '--config', '../other.json')).plan?.settings).toMatchObject({
      target: 1200,
      config: '../other.json',
    });
    expect((await plan(sub, '--config=../pkg/package.json')).plan?.settings).toMatchObject({
      target: 1100,
      config: '../pkg/package.json',
    });
    const none = await plan(sub, '--no-config', '-t', '1000');
    expect(none.plan?.settings).toMatchObject({ target: 1000 });
    expect(none.plan?.settings).not.toHaveProperty('config');
    expect(await runSwc(['compact', 'sample.jsonl', '--config', 'nope.json', '-t', '1'], { cwd: sub })).toEqual({
      status: 2,
      stdout: '',
      stderr: 'swc: error: --config nope.json: no such file\n',
    });
    writeFileSync(path.join(root, 'bare/package.json'.replace('bare/', '')), JSON.stringify({ name: 'z' }));
    const bare = await runSwc(['compact', 'sample.jsonl', '--config', '../package.json'], { cwd: sub });
    expect(bare.stderr).toBe('swc: error: --config ../package.json: it has no "transcript-compact" key\n');
  });
});

describe('the command line over the file', () => {
  it("overrides a key the file sets, and a flag that sets the budget another way displaces the file's", async () => {
    const { sub } = repo({ [CONFIG]: { target: 1500, tokenizer: 'approx', minKeepSteps: 2 } });
    expect((await plan(sub, '-t', '1000')).plan?.settings).toMatchObject({ target: 1000, minKeepSteps: 2 });
    expect((await plan(sub, '--tokenizer', 'o200k_base')).plan?.settings).toMatchObject({ tokenizer: 'o200k_base' });
    const window = (await plan(sub, '--context-window', '8k')).plan?.settings;
    expect(window).toMatchObject({ target: null, contextWindow: 8000, compactAt: 0.7, compactTo: 0.4 });
  });

  it("keeps the file's shares of the window under a --context-window, and replaces them all with --target", async () => {
    const { sub } = repo({ [CONFIG]: { contextWindow: 10000, compactAt: '60%', compactTo: 0.2 } });
    expect((await plan(sub)).plan?.settings).toMatchObject({ contextWindow: 10000, compactAt: 0.6, compactTo: 0.2 });
    expect((await plan(sub, '--context-window', '20k')).plan?.settings).toMatchObject({
      contextWindow: 20000,
      compactAt: 0.6,
    });
    const fixed = (await plan(sub, '-t', '2000')).plan?.settings;
    expect(fixed).toMatchObject({ target: 2000 });
    expect(fixed).not.toHaveProperty('contextWindow');
  });

  it("uses a strategy's settings only when the run's chain holds it", async () => {
    const { sub } = repo({
      [CONFIG]: { target: 2000, minTokens: 300, placeholder: '[gone: {tool_name}]', skipUnrecognized: true },
    });
    const plain = await plan(sub);
    expect(plain.status).toBe(0);
    expect(plain.plan?.settings).not.toHaveProperty('minTokens');
    const pruning = await plan(sub, '--strategy', 'prune,window');
    expect(pruning.plan?.settings).toMatchObject({
      strategies: ['prune', 'window'],
      minTokens: 300,
      placeholder: '[gone: {tool_name}]',
    });
    // skipUnrecognized applies to batch runs; one file to stdout leaves it unused rather than refusing it.
    expect((await runSwc(['compact', 'sample.jsonl', '-o', 'out.jsonl'], { cwd: sub })).status).toBe(0);
  });

  it("says which of the file's keys a refused combination comes from", async () => {
    const { sub } = repo({ [CONFIG]: { target: 2000, strategy: ['prune', 'window'] } });
    const r = await runSwc(['compact', 'sample.jsonl', '-k', '0', '-o', 'out.jsonl'], { cwd: sub });
    expect(r).toEqual({
      status: 2,
      stdout: '',
      stderr:
        'swc: error: --min-keep-steps must be at least 1 with --strategy prune: the newest results are the ones the model is about to act on (strategy set in ../transcript-compact.config.json)\n',
    });
  });

  it("resolves a folder the file names against the file's own folder", async () => {
    const { root, sub } = repo({
      [CONFIG]: { target: 1000, strategy: 'offload', offloadDir: 'store', offloadOver: 100 },
    });
    const r = await runSwc(['compact', 'sample.jsonl', '-o', 'out.jsonl', '-q'], { cwd: sub });
    expect(r).toEqual({ status: 0, stdout: '', stderr: '' });
    expect(readFileSync(path.join(root, 'store/.swc-store'), 'utf8')).toContain('offload-store');
  });

  it('gives swc inspect the reading settings and nothing else', async () => {
    const { sub } = repo({ [CONFIG]: { target: 1000, tokenizer: 'approx', tokensPerImage: 10 } });
    const r = await runSwc(['inspect', 'sample.jsonl', '--json'], { cwd: sub });
    expect(r.status).toBe(0);
    expect((JSON.parse(r.stdout) as { tokenizer: unknown }).tokenizer).toBe(
      'approx (4 chars/token, 10/image, 1000/file)',
    );
  });
});

describe('a bad settings file', () => {
  it.each([
    [{ targte: 10 }, 'unknown key "targte" (did you mean target?)'],
    [{ 'context-window': 10 }, 'unknown key "context-window" (did you mean contextWindow?)'],
    [{ target: 0 }, 'target must be at least 1, got 0'],
    [{ target: '8kb' }, 'target must be a whole number, got "8kb"'],
    [{ target: true }, 'target must be a number of tokens (8000, or "8k"), got true'],
    [{ compactAt: 'most' }, 'compactAt must be a fraction such as 0.7 or 70%, got "most"'],
    [
      { strategy: 'window,shrink' },
      'unknown strategy "shrink" (choose from: window, prune, offload, summarize, as a list or comma-separated)',
    ],
    [{ strategy: ['prune', 'prune'] }, 'strategy names "prune" twice: each strategy runs once in a chain'],
    [{ tokenizer: 'gpt2' }, 'unknown tokenizer "gpt2" (choose one of: o200k_base, cl100k_base, approx)'],
    [{ format: 'xml' }, `unknown format "xml" (choose one of: auto, ${formatNames().join(', ')})`],
    [
      { note: '{num_removed}' },
      expect.stringMatching(/^note needs text besides \{num_removed\} .*, or null for none$/),
    ],
    [{ placeholder: '{tool_name}' }, expect.stringMatching(/^placeholder needs text besides \{tool_name\}/)],
    [{ conversationPath: 'messages' }, expect.stringMatching(/^conversationPath: /)],
    [{ target: 1000, contextWindow: 8000 }, expect.stringMatching(/^target and contextWindow both set the budget/)],
    [
      { baseUrl: 'https://example.com' },
      expect.stringMatching(/^baseUrl cannot be set in a settings file: give --base-url on the command line/),
    ],
    [{ summarizeCommand: 'cat' }, expect.stringMatching(/^summarizeCommand cannot be set in a settings file/)],
    [
      { output: 'x.jsonl' },
      'output cannot be set in a settings file: give --output on the command line (it says what one run does)',
    ],
    [[1, 2], 'the settings must be an object such as { "target": 8000 }, got an array'],
  ])('%j is one line naming the file and the key, exit 2', async (settings, reason) => {
    const { sub } = repo({ [CONFIG]: settings });
    const r = await runSwc(['compact', 'sample.jsonl', '-o', 'out.jsonl'], { cwd: sub });
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    const line = /^swc: error: \.\.\/transcript-compact\.config\.json: (.*)\n$/.exec(r.stderr);
    expect(line?.[1]).toEqual(reason);
  });

  it('names the key under package.json\'s "transcript-compact"', async () => {
    const { sub } = repo({ 'package.json': { 'transcript-compact': { minKeepSteps: -1 } } });
    const r = await runSwc(['compact', 'sample.jsonl', '-t', '1000', '-o', 'out.jsonl'], { cwd: sub });
    expect(r.stderr).toBe(
      'swc: error: ../package.json ("transcript-compact"): minKeepSteps must be at least 0, got -1\n',
    );
  });

  it('says a file that is not JSON is not, in one line naming where', async () => {
    const { sub } = repo({ [CONFIG]: '{ target: 1 }' });
    const r = await runSwc(['compact', 'sample.jsonl', '-o', 'out.jsonl'], { cwd: sub });
    expect(r).toEqual({
      status: 2,
      stdout: '',
      stderr: 'swc: error: ../transcript-compact.config.json:1:3: not valid JSON\n',
    });
  });
});

describe('a value in the file against the same value as a flag', () => {
  /** How the command line and a file with the same value end: exit code, and the reason with the names set apart. */
  async function both(
    key: string,
    flag: string,
    value: string | number,
    extra: Record<string, unknown>,
    extraFlags: string[],
  ) {
    const { sub } = repo({ [CONFIG]: { ...extra, [key]: value } });
    const file = await runSwc(['compact', 'sample.jsonl', '--check'], { cwd: sub });
    const cli = await runSwc(['compact', 'sample.jsonl', '--check', '--no-config', ...extraFlags, `${flag}=${value}`], {
      cwd: sub,
    });
    // The file's own check names the key; a check of the merged settings names the flag and says the file set it.
    const reason = (stderr: string): string =>
      stderr
        .replace(/^swc: error: (\.\.\/transcript-compact\.config\.json: )?/, '')
        .replace(/ \([a-zA-Z, ]+ set in \.\.\/transcript-compact\.config\.json\)\n$/, '\n')
        .replaceAll(flag, 'NAME')
        .replaceAll(key, 'NAME')
        .replace(/^swc: sample\.jsonl: .*/s, 'ok');
    return { file: [file.status, reason(file.stderr)], cli: [cli.status, reason(cli.stderr)] };
  }

  const raw = fc.oneof(
    fc.constantFrom(
      '8k',
      '1.5k',
      '1,000',
      '8_000',
      '0',
      '-3',
      '2.5',
      '1e3',
      '8kb',
      'k',
      ' 12 ',
      '1.2345k',
      '99999999999m',
      '',
    ),
    fc.integer({ min: -5, max: 5000 }),
    fc.double({ min: -2, max: 5000, noNaN: true, noDefaultInfinity: true }),
  );

  it.each([
    ['target', '--target', {}, []],
    ['minKeepSteps', '--min-keep-steps', { target: 1000 }, ['-t', '1000']],
    ['tokensPerImage', '--tokens-per-image', { target: 1000 }, ['-t', '1000']],
    ['contextWindow', '--context-window', {}, []],
  ] as const)('is refused or taken as %s is on the command line', async (key, flag, extra, extraFlags) => {
    await fc.assert(
      fc.asyncProperty(raw, async (value) => {
        const { file, cli } = await both(key, flag, value, extra, [...extraFlags]);
        expect(file).toEqual(cli);
      }),
      { numRuns: scaled(20) },
    );
  });
});

describe('the JSON documents', () => {
  const schema = (name: string) =>
    JSON.parse(readFileSync(path.join(ROOT, 'docs/schema', name), 'utf8')) as Record<string, unknown>;
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true });
  ajv.addSchema(schema('plan.schema.json')).addSchema(schema('report.schema.json'));

  it('name the settings file in the plan and the report, as the schemas describe', async () => {
    const { sub } = repo({ [CONFIG]: { target: 1500, tokenizer: 'approx' } });
    const single = await plan(sub);
    expect(single.plan?.settings.config).toBe('../transcript-compact.config.json');
    expect((ajv.getSchema('plan.schema.json') as ValidateFunction)(single.plan)).toBe(true);
    const batch = await runSwc(['compact', '.', '--check', '--json'], { cwd: sub });
    const report = JSON.parse(batch.stdout) as {
      settings: Record<string, unknown>;
      files: Array<{ plan: { settings: Record<string, unknown> } }>;
    };
    expect(report.settings.config).toBe('../transcript-compact.config.json');
    expect(report.files[0]?.plan.settings.config).toBe('../transcript-compact.config.json');
    const validate = ajv.getSchema('report.schema.json') as ValidateFunction;
    expect([validate(report), validate.errors]).toEqual([true, null]);
  });

  it("names it in the dry run's header too", async () => {
    const { sub } = repo({ [CONFIG]: { target: 1500, tokenizer: 'approx' } });
    const r = await runSwc(['compact', 'sample.jsonl', '--dry-run'], { cwd: sub });
    expect(r.stdout.split('\n').slice(1, 3).join('  ')).toMatch(/ {2}config \.\.\/transcript-compact\.config\.json$/);
  });
});
