/**
 * What a run loads. `swc compact FILE -o OUT -q`, the command CI runs thousands of times, loads only its own road:
 * the modules of other commands and options load when they are used. The built binary runs under a module `load`
 * hook (test/helpers/record-loads.mjs) that writes down every file the process loads; the command line is bundled
 * (scripts/bundle-cli.mjs), and dist/bin/modules.json says which modules of dist/ each of its files holds.
 */
import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { BIN, ROOT, tempDir } from '../helpers/cli.js';

const HOOK = path.join(ROOT, 'test/helpers/record-loads.mjs');
const BUNDLE = `${pathToFileURL(path.join(ROOT, 'dist/bin')).href}/`;
/** The modules of dist/ each file of the bundle holds. */
const HELD = JSON.parse(readFileSync(path.join(ROOT, 'dist/bin/modules.json'), 'utf8')) as Record<string, string[]>;
const MODULES = `${pathToFileURL(path.join(ROOT, 'node_modules')).href}/`;

/** Modules a plain compaction of one file never runs, as paths under dist/ (or package names). */
const NOT_ON_THE_PLAIN_ROAD = [
  'cli/inspect.js',
  'cli/view/inspect.js',
  'cli/restore.js',
  'cli/replay.js',
  'cli/view/replay-table.js',
  'replay/prices.js',
  'replay/run.js',
  'cli/completion.js',
  'cli/batch.js',
  'cli/reporters.js',
  'cli/report.js',
  'cli/view/dry-run.js',
  'cli/view/stat.js',
  'cli/plan-json.js',
  'cli/result-line.js',
  'cli/summary-source.js',
  'summarize-run.js',
  'io/model/index.js',
  'io/model/endpoint.js',
  'io/model/command.js',
  'io/model/cache.js',
  'io/model/limit.js',
  'cli/offload.js',
  'io/folders.js',
  'io/expand.js',
  'chalk',
  'ora',
  'fast-glob',
];

/** Runs the built binary on a one-message transcript and returns its exit code and the modules it loaded. */
function loadedBy(args: readonly string[]): { status: number | null; stderr: string; loaded: string[] } {
  const dir = tempDir();
  writeFileSync(path.join(dir, 'log.jsonl'), '{"role":"user","content":"hi"}\n');
  const record = path.join(dir, 'loaded.txt');
  writeFileSync(record, '');
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', SWC_RECORD_LOADS: record };
  delete env.NODE_OPTIONS;
  const run = spawnSync(process.execPath, ['--import', HOOK, BIN, ...args], { cwd: dir, env, encoding: 'utf8' });
  const urls = readFileSync(record, 'utf8')
    .split('\n')
    .filter((url) => url !== '');
  const loaded = urls.flatMap((url) => {
    if (url.startsWith(BUNDLE)) {
      const held = HELD[url.slice(BUNDLE.length)];
      if (held === undefined) throw new Error(`${url} is not a file of the bundle (rebuild: npm run build)`);
      return held;
    }
    if (url.startsWith(MODULES)) return [url.slice(MODULES.length).split('/')[0] as string];
    return [];
  });
  return { status: run.status, stderr: run.stderr, loaded: [...new Set(loaded)] };
}

describe('what swc loads', () => {
  it('loads none of the other commands, options and outputs for compact FILE -o OUT -q', () => {
    const run = loadedBy(['compact', 'log.jsonl', '-t', '8000', '-o', 'out.jsonl', '-q']);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    // The hook saw the road itself, so an empty intersection below is not an empty record.
    expect(run.loaded).toEqual(
      expect.arrayContaining(['cli/main.js', 'cli/stream.js', 'pipeline/index.js', 'commander']),
    );
    expect(run.loaded.filter((name) => NOT_ON_THE_PLAIN_ROAD.includes(name))).toEqual([]);
  });

  it.each([
    [
      'the result line',
      'without --quiet',
      ['compact', 'log.jsonl', '-t', '8000', '-o', 'out.jsonl'],
      ['cli/result-line.js'],
    ],
    [
      'the JSON plan',
      'with --json',
      ['compact', 'log.jsonl', '-t', '8000', '-o', 'out.jsonl', '-q', '--json'],
      ['cli/plan-json.js'],
    ],
    [
      'the diff and colour',
      'with --dry-run',
      ['compact', 'log.jsonl', '-t', '8000', '--dry-run'],
      ['cli/view/dry-run.js', 'chalk'],
    ],
    [
      'the offload store',
      'with --offload-dir',
      [
        'compact',
        'log.jsonl',
        '-t',
        '8000',
        '-o',
        'out.jsonl',
        '-q',
        '--strategy',
        'offload',
        '--offload-dir',
        'store',
      ],
      ['cli/offload.js'],
    ],
    [
      'the model layer',
      'with --strategy summarize',
      [
        'compact',
        'log.jsonl',
        '-t',
        '8000',
        '-o',
        'out.jsonl',
        '-q',
        '--strategy',
        'summarize',
        '--summarize-command',
        'cat',
      ],
      ['cli/summary-source.js', 'summarize-run.js', 'io/model/command.js'],
    ],
    [
      'inspect and its views',
      'for swc inspect',
      ['inspect', 'log.jsonl'],
      ['cli/inspect.js', 'cli/view/inspect.js', 'chalk'],
    ],
    ['restore', 'for swc restore', ['restore', 'log.jsonl', '-q'], ['cli/restore.js']],
  ])('loads %s %s', (_what, _when, args, modules) => {
    const run = loadedBy(args);
    expect(run.stderr).not.toContain('unexpected');
    expect(run.status).toBe(0);
    expect(run.loaded).toEqual(expect.arrayContaining(modules));
  });
});
