/**
 * The GitHub Action (action.yml, whose step runs .github/action/compact.sh) and the pre-commit hook
 * (.pre-commit-hooks.yaml) run the package's own command. The action's script runs here as GitHub would run it, with
 * `npx` standing in for the registry: a stand-in that checks it was asked for `transcript-compact@VERSION` and runs
 * the built binary instead.
 */
import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { parse } from 'yaml';
import { BIN, ROOT, tempDir } from '../helpers/cli.js';
import { scaled } from '../helpers/scale.js';

const PKG = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  bin: Record<string, string>;
};
const SCRIPT = path.join(ROOT, '.github/action/compact.sh');
const SAMPLE = path.join(ROOT, 'fixtures/sample.jsonl');

interface ActionYaml {
  inputs: Record<string, { required?: boolean; default?: string }>;
  runs: {
    using: string;
    steps: Array<{
      uses?: string;
      with?: Record<string, unknown>;
      run?: string;
      shell?: string;
      env?: Record<string, string>;
    }>;
  };
}
const ACTION = parse(readFileSync(path.join(ROOT, 'action.yml'), 'utf8')) as ActionYaml;

/** The variable GitHub gives an input in the step's env: `context-window` -> INPUT_CONTEXT_WINDOW. */
function variableOf(input: string): string {
  return `INPUT_${input.toUpperCase().replace(/-/g, '_')}`;
}

/** A folder holding a stand-in `npx` that logs what it was asked for and runs the built binary. */
function fakeNpx(): { bin: string; log: string } {
  const bin = tempDir();
  const log = path.join(bin, 'npx.log');
  writeFileSync(
    path.join(bin, 'npx'),
    `#!/usr/bin/env bash\nprintf '%s\\n' "$@" > ${JSON.stringify(log)}\n[ "$1" = --yes ] || exit 99\nshift 2\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} "$@"\n`,
  );
  chmodSync(path.join(bin, 'npx'), 0o755);
  return { bin, log };
}

/** Runs the action's step with these inputs (unset ones get the action's defaults), in a folder holding archive/. */
function runAction(inputs: Record<string, string>, cwd: string) {
  const npx = fakeNpx();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NO_COLOR: '1',
    PATH: `${npx.bin}${path.delimiter}${process.env.PATH ?? ''}`,
    GITHUB_ACTION_PATH: ROOT,
  };
  delete env.FORCE_COLOR;
  for (const [name, spec] of Object.entries(ACTION.inputs)) env[variableOf(name)] = inputs[name] ?? spec.default ?? '';
  const r = spawnSync('bash', [SCRIPT], { cwd, env, encoding: 'utf8' });
  const asked = existsSync(npx.log) ? readFileSync(npx.log, 'utf8').trimEnd().split('\n') : [];
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, asked };
}

/** A workspace with archive/sample.jsonl (7,632 tokens) and archive/small/hello.jsonl (a few). */
function workspace(): string {
  const dir = tempDir();
  cpSync(SAMPLE, path.join(dir, 'archive/sample.jsonl'));
  mkdirSync(path.join(dir, 'archive/small'));
  writeFileSync(path.join(dir, 'archive/small/hello.jsonl'), '{"role": "user", "content": "Hello!"}\n');
  return dir;
}

describe('action.yml', () => {
  it('is a composite action that sets up Node 20 and runs its script with every input as a variable', () => {
    expect(ACTION.runs.using).toBe('composite');
    const [setup, step] = ACTION.runs.steps;
    expect(setup?.uses).toMatch(/^actions\/setup-node@v\d+$/);
    expect(String(setup?.with?.['node-version'])).toBe('20');
    expect(step?.shell).toBe('bash');
    expect(step?.run).toBe('bash "$GITHUB_ACTION_PATH/.github/action/compact.sh"');
    for (const name of Object.keys(ACTION.inputs)) expect(step?.env?.[variableOf(name)]).toBe(`\${{ inputs.${name} }}`);
    expect(Object.keys(ACTION.inputs).sort()).toEqual([
      'args',
      'context-window',
      'inputs',
      'mode',
      'report',
      'shard',
      'target',
      'version',
    ]);
    expect(ACTION.inputs.inputs?.required).toBe(true);
    expect(ACTION.inputs.mode?.default).toBe('check');
  });

  it('reads no variable the action does not set', () => {
    const read = new Set([...readFileSync(SCRIPT, 'utf8').matchAll(/\bINPUT_[A-Z_]+/g)].map((m) => m[0]));
    expect([...read].sort()).toEqual(Object.keys(ACTION.inputs).map(variableOf).sort());
  });

  it('runs the version of the package it was released with, by default, with --yes', () => {
    const r = runAction({ inputs: 'archive/small', target: '8000' }, workspace());
    expect(r.status).toBe(0);
    expect(r.asked.slice(0, 3)).toEqual(['--yes', `${PKG.name}@${PKG.version}`, 'compact']);
  });

  it('runs the version asked for', () => {
    const r = runAction({ inputs: 'archive/small', target: '8000', version: '9.9.9' }, workspace());
    expect(r.asked[1]).toBe(`${PKG.name}@9.9.9`);
  });

  it('fails the step and lists the files a check would compact', () => {
    const dir = workspace();
    const r = runAction({ inputs: 'archive', target: '2000', report: 'swc-report.json' }, dir);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('archive/sample.jsonl\n');
    const report = JSON.parse(readFileSync(path.join(dir, 'swc-report.json'), 'utf8')) as {
      settings: { mode: string };
      summary: { files: number };
    };
    expect(report.settings.mode).toBe('check');
    expect(report.summary.files).toBe(2);
  });

  it('takes one input per line, blanks trimmed, and patterns as typed for swc to expand', () => {
    const r = runAction({ inputs: '\n  archive/small  \narchive/*.jsonl\n', target: '2000' }, workspace());
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('archive/sample.jsonl\n');
    expect(r.asked.slice(r.asked.indexOf('--'))).toEqual(['--', 'archive/small', 'archive/*.jsonl']);
  });

  it('passes the other inputs as options, and args split as a shell splits them', () => {
    const r = runAction(
      {
        inputs: 'archive',
        'context-window': '3000',
        shard: '1/1',
        args: `--ignore 'archive/small/**' --tokenizer approx`,
      },
      workspace(),
    );
    expect(r.asked).toEqual([
      '--yes',
      `${PKG.name}@${PKG.version}`,
      'compact',
      '--check',
      '--context-window',
      '3000',
      '--shard',
      '1/1',
      '--ignore',
      'archive/small/**',
      '--tokenizer',
      'approx',
      '--',
      'archive',
    ]);
    expect(r.status).toBe(1);
  });

  it('rewrites the files in in-place mode', () => {
    const dir = workspace();
    const r = runAction({ inputs: 'archive', target: '2000', mode: 'in-place' }, dir);
    expect(r.status).toBe(0);
    expect(readFileSync(path.join(dir, 'archive/sample.jsonl'), 'utf8').length).toBeLessThan(
      readFileSync(SAMPLE, 'utf8').length,
    );
  });

  it.each([
    ['no paths', { inputs: '', target: '8000' }, "swc: error: missing required argument 'inputs'"],
    [
      'both target and context-window',
      { inputs: 'archive', target: '8000', 'context-window': '200000' },
      'swc: error: --target and --context-window both set the budget: give --target for a fixed budget, or --context-window with --compact-at/--compact-to',
    ],
    [
      'a shard past the count',
      { inputs: 'archive', target: '8000', shard: '5/3' },
      'swc: error: --shard 5/3: the shard must be between 1 and 3 (shards count from 1)',
    ],
    ['no budget', { inputs: 'archive' }, 'swc: error: --target <tokens> is required (the token budget to compact to)'],
    [
      'an unknown mode',
      { inputs: 'archive', target: '8000', mode: 'fix' },
      `swc: error: the action's mode must be check, in-place or dry-run, got "fix"`,
    ],
  ])("fails with the command line's one-line error and exit 2 on %s", (_name, inputs, message) => {
    const r = runAction(inputs, workspace());
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(`${message}\n`);
    expect(r.stdout).toBe('');
  });
});

describe("the action's args", () => {
  /** The words the action makes of `args`: what its stand-in npx was asked for between the mode and `--`. */
  function wordsOf(args: string) {
    const r = runAction({ inputs: 'archive/small', args }, workspace());
    return { ...r, words: r.asked.slice(4, r.asked.indexOf('--')) };
  }

  it('keeps a quote escaped inside double quotes, and every word after it', () => {
    const r = runAction(
      { inputs: 'archive/small', target: '8000', args: '--note "x\\"y {num_removed}" --no-color' },
      workspace(),
    );
    expect(r.asked.slice(r.asked.indexOf('--note'), r.asked.indexOf('--'))).toEqual([
      '--note',
      'x"y {num_removed}',
      '--no-color',
    ]);
    expect(r.status).toBe(0);
  });

  it.each([
    [`a 'b c' "d e"`, ['a', 'b c', 'd e']],
    [`'it'\\''s'`, ["it's"]],
    [`"a\\\\b" "a\\b" 'a\\b' a\\ b`, ['a\\b', 'a\\b', 'a\\b', 'a b']],
    [`"" '' x`, ['', '', 'x']],
    ['"$HOME" $HOME `id` $(id) ~ *', ['$HOME', '$HOME', '`id`', '$(id)', '~', '*']],
    ['  a\n\tb  ', ['a', 'b']],
    ['"a\\\nb" c\\\nd', ['ab', 'cd']],
    ['x\\', ['x\\']],
    ['--no-color # keep the colours off\n-q a#b "#c" \\#d', ['--no-color', '-q', 'a#b', '#c', '#d']],
  ])('splits %j into its words, expanding nothing', (args, words) => {
    expect(wordsOf(args).words).toEqual(words);
  });

  it.each([
    ['--note "x', 'an unterminated " quote'],
    ["--note 'x", "an unterminated ' quote"],
  ])('fails the step with exit 2 and runs nothing on %j', (args, what) => {
    const r = wordsOf(args);
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(`swc: error: the action's args have ${what}: ${args}\n`);
    expect(r.asked).toEqual([]);
  });

  it('splits args as bash does, quotes and backslashes included (property)', () => {
    // bash itself is the model: these strings hold no character it expands (`$`, backticks, globs), so its eval only
    // splits them; and no newline, which ends a command there and separates words in args (the examples have both).
    const split = path.join(ROOT, '.github/action/split-words.sh');
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('a', 'b', ' ', '\t', "'", '"', '\\', '-', '#'), { maxLength: 14 }),
        (chars) => {
          const args = chars.join('');
          const bash = spawnSync(
            'bash',
            ['-c', 'set -f; eval "set -- $1" 2>/dev/null || exit 3; printf "%s\\0" "$@"', '_', args],
            { encoding: 'utf8' },
          );
          const ours = spawnSync(
            'bash',
            ['-c', 'source "$0"; split_words "$1" || exit 3; printf "%s\\0" "${words[@]}"', split, args],
            { encoding: 'utf8' },
          );
          expect(ours.status).toBe(bash.status);
          if (bash.status === 0) expect(ours.stdout).toBe(bash.stdout);
        },
      ),
      { numRuns: scaled(150) },
    );
  });
});

describe('.pre-commit-hooks.yaml', () => {
  const hooks = parse(readFileSync(path.join(ROOT, '.pre-commit-hooks.yaml'), 'utf8')) as Array<Record<string, string>>;
  const hook = hooks.find((h) => h.id === 'swc-check') as Record<string, string>;

  it('defines swc-check, a node hook whose entry is a command the package installs', () => {
    expect(hook).toBeDefined();
    expect(hook.language).toBe('node');
    expect(hook.entry).toBe('swc compact --check');
    const command = (hook.entry as string).split(' ')[0] as string;
    expect(Object.keys(PKG.bin)).toContain(command);
    expect(existsSync(path.join(ROOT, PKG.bin[command] as string))).toBe(true);
  });

  it("installs from this repository: npm pack keeps the build's output off standard output, where pre-commit reads the tarball name", () => {
    // pre-commit runs `npm pack` and installs the file named by its standard output; the build's banner
    // printed there (npm 10 and later, with scripts in the foreground) would become part of that name.
    expect(readFileSync(path.join(ROOT, '.npmrc'), 'utf8')).toMatch(/^foreground-scripts=false$/m);
  });

  it('takes staged .json, .jsonl and .ndjson files', () => {
    const files = new RegExp(hook.files as string);
    expect(['a.json', 'logs/a.jsonl', 'x/y.ndjson'].filter((f) => !files.test(f))).toEqual([]);
    expect(['README.md', 'a.jsonx', 'a.json.bak'].filter((f) => files.test(f))).toEqual([]);
  });

  it('fails a commit that stages a transcript over its budget, and passes one within it, as pre-commit runs it', () => {
    const dir = workspace();
    const [command, ...rest] = (hook.entry as string).split(' ');
    // pre-commit runs ENTRY ARGS... FILENAMES...; the hook's command is the package's bin.
    const run = (files: string[]) =>
      spawnSync(
        process.execPath,
        [path.join(ROOT, PKG.bin[command as string] as string), ...rest, '--target', '2000', ...files],
        { cwd: dir, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } },
      );
    const over = run(['archive/sample.jsonl', 'archive/small/hello.jsonl']);
    expect(over.status).toBe(1);
    expect(over.stdout).toBe('archive/sample.jsonl\n');
    expect(run(['archive/small/hello.jsonl']).status).toBe(0);
  });
});
