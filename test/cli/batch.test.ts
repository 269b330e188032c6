import { describe, expect, it } from '@jest/globals';
import { mkdirSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, tempDir } from '../helpers/cli.js';
import { runSwc } from '../helpers/run-in-process.js';

/**
 * `swc compact` on many files, end to end on temporary trees: inputs (files, directories, globs, --ignore),
 * --out-dir and its refusal to write outside itself, --check, broken files among good ones, the summary,
 * --json and --report, --dry-run over many files, and the same results whatever --jobs is. (10,000 files under a limit of open files:
 * test/e2e/batch.test.ts.)
 */

/** A deterministic pseudo-random source. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

/** An OpenAI-chat transcript as JSONL (or as a JSON array): a system prompt and a few turns; `size` scales the texts. */
function transcript(seed: number, size: number, framing: 'jsonl' | 'json' = 'jsonl'): string {
  const r = random(seed);
  const messages: object[] = [{ role: 'system', content: `You are agent ${seed}.` }];
  const turns = 3 + Math.floor(r() * 4);
  for (let t = 0; t < turns; t++) {
    messages.push({ role: 'user', content: `Question ${t}: ${'what about this '.repeat(1 + Math.floor(r() * size))}` });
    messages.push({ role: 'assistant', content: `Answer ${t}: ${'it is so '.repeat(1 + Math.floor(r() * size))}` });
  }
  return framing === 'json'
    ? `${JSON.stringify(messages, null, 2)}\n`
    : `${messages.map((m) => JSON.stringify(m)).join('\n')}\n`;
}

/** Writes files (path -> content) under a fresh directory. */
function tree(files: Record<string, string>): string {
  const dir = tempDir();
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  }
  return dir;
}

/** Every file under `dir`, relative, sorted. */
function listFiles(dir: string): string[] {
  return (readdirSync(dir, { recursive: true }) as string[])
    .filter((p) => statSync(path.join(dir, p)).isFile())
    .map((p) => p.split(path.sep).join('/'))
    .sort();
}

function readTree(dir: string): Record<string, string> {
  return Object.fromEntries(listFiles(dir).map((p) => [p, readFileSync(path.join(dir, p), 'utf8')]));
}

const APPROX = ['--tokenizer', 'approx'];
const BIG = transcript(1, 40);
const BIG2 = transcript(2, 40, 'json');
const SMALL = transcript(3, 1);

/** A tree with files that need compaction at -t 300, files that do not, and files swc never looks at. */
function archive(): string {
  return tree({
    'archive/a/big.jsonl': BIG,
    'archive/a/small.jsonl': SMALL,
    'archive/b/big2.json': BIG2,
    'archive/b/notes.txt': 'not a transcript',
    'archive/.cache/hidden.jsonl': BIG,
    'archive/node_modules/dep.json': '{}',
    'other/c.jsonl': BIG,
  });
}

/** The paths a --report lists. */
function reportPaths(dir: string, file = 'report.json'): string[] {
  const report = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as { files: Array<{ path: string }> };
  return report.files.map((f) => f.path);
}

describe('swc compact with many inputs', () => {
  it('expands files, directories and quoted globs into one sorted list without duplicates', async () => {
    const dir = archive();
    const run = await runSwc(
      [
        'compact',
        'other/c.jsonl',
        'archive',
        'archive/a/*.jsonl',
        '--check',
        '-t',
        '350',
        ...APPROX,
        '--report',
        'report.json',
      ],
      { cwd: dir },
    );
    expect(run.status).toBe(1);
    // Dot directories and node_modules are not searched; other files than .json and .jsonl are not taken.
    expect(reportPaths(dir)).toEqual([
      'archive/a/big.jsonl',
      'archive/a/small.jsonl',
      'archive/b/big2.json',
      'other/c.jsonl',
    ]);
    expect(run.stdout).toBe('archive/a/big.jsonl\narchive/b/big2.json\nother/c.jsonl\n');
  });

  it('leaves out what --ignore matches, also files named outright', async () => {
    const dir = archive();
    const run = await runSwc(
      [
        'compact',
        'archive',
        'other/c.jsonl',
        'archive/node_modules/dep.json',
        '--ignore',
        'archive/b/**',
        '--ignore',
        'other/*',
        '--check',
        '-t',
        '350',
        ...APPROX,
        '--report',
        'report.json',
      ],
      { cwd: dir },
    );
    // A file in node_modules named outright is taken (and fails: {} holds no conversation).
    expect(run.status).toBe(2);
    expect(reportPaths(dir)).toEqual(['archive/a/big.jsonl', 'archive/a/small.jsonl', 'archive/node_modules/dep.json']);
  });

  it('stops before doing anything when a pattern or directory matches nothing, naming it', async () => {
    const dir = archive();
    const pattern = await runSwc(['compact', 'archive', 'nothing/**/*.jsonl', '--in-place', '-t', '350'], { cwd: dir });
    expect(pattern.status).toBe(2);
    expect(pattern.stderr.split('\n')[0]).toBe('swc: error: no files match the pattern "nothing/**/*.jsonl"');
    const ignored = await runSwc(['compact', 'archive/a', '--ignore', 'archive/a/**', '--check', '-t', '350'], {
      cwd: dir,
    });
    expect(ignored.status).toBe(2);
    expect(ignored.stderr.split('\n')[0]).toBe(
      'swc: error: no .json, .jsonl or .ndjson files (or .gz, .br of them) under "archive/a" (after --ignore and the output directory are left out)',
    );
    expect(readFileSync(path.join(dir, 'archive/a/big.jsonl'), 'utf8')).toBe(BIG);
  });

  it('refuses several inputs without saying where results go, naming the options to add', async () => {
    const dir = archive();
    const run = await runSwc(['compact', 'archive/a/big.jsonl', 'other/c.jsonl', '-t', '350'], { cwd: dir });
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr.split('\n')[0]).toBe(
      'swc: error: 2 inputs given: add --out-dir <dir> to write the results there, --in-place to rewrite each file, --check to only report which need compaction, or --dry-run to preview',
    );
    const directory = await runSwc(['compact', 'archive', '-t', '350'], { cwd: dir });
    expect(directory.status).toBe(2);
    expect(directory.stderr.split('\n')[0]).toBe(
      'swc: error: archive is a directory: add --out-dir <dir>, --in-place, --check or --dry-run to compact the files in it',
    );
  });
});

describe('swc compact --out-dir', () => {
  it('mirrors every input under the out-dir, compacting some and copying the rest byte for byte', async () => {
    const dir = archive();
    const before = readTree(path.join(dir, 'archive'));
    const run = await runSwc(['compact', 'archive/a', 'archive/b', '--out-dir', 'out', '-t', '350', ...APPROX], {
      cwd: dir,
    });
    expect(run.status).toBe(0);
    expect(run.stdout).toBe('');
    // The base is the common directory of the inputs: archive.
    expect(listFiles(path.join(dir, 'out'))).toEqual(['a/big.jsonl', 'a/small.jsonl', 'b/big2.json']);
    const single = async (file: string): Promise<string> =>
      (await runSwc(['compact', file, '-t', '350', ...APPROX], { cwd: dir })).stdout;
    expect(readFileSync(path.join(dir, 'out/a/big.jsonl'), 'utf8')).toBe(await single('archive/a/big.jsonl'));
    expect(readFileSync(path.join(dir, 'out/b/big2.json'), 'utf8')).toBe(await single('archive/b/big2.json'));
    expect(readFileSync(path.join(dir, 'out/a/small.jsonl'))).toEqual(
      readFileSync(path.join(dir, 'archive/a/small.jsonl')),
    );
    expect(readFileSync(path.join(dir, 'out/a/big.jsonl'), 'utf8')).not.toBe(BIG);
    expect(readTree(path.join(dir, 'archive'))).toEqual(before);
  });

  it('mirrors from --base, and refuses an input outside it', async () => {
    const dir = archive();
    const run = await runSwc(['compact', 'archive/a', '--base', '.', '--out-dir', 'out', '-t', '350', ...APPROX], {
      cwd: dir,
    });
    expect(run.status).toBe(0);
    expect(listFiles(path.join(dir, 'out'))).toEqual(['archive/a/big.jsonl', 'archive/a/small.jsonl']);
    const outside = await runSwc(
      ['compact', 'archive/a', 'other', '--base', 'archive', '--out-dir', 'out2', '-t', '350'],
      { cwd: dir },
    );
    expect(outside.status).toBe(2);
    expect(outside.stderr.split('\n')[0]).toBe(
      'swc: error: other/c.jsonl is outside the base archive (set --base to a directory that holds every input)',
    );
    expect(listFiles(dir).some((f) => f.startsWith('out2/'))).toBe(false);
  });

  it('never writes outside the out-dir, whether inputs climb with .. or a directory in it links elsewhere', async () => {
    const dir = archive();
    mkdirSync(path.join(dir, 'work'));
    mkdirSync(path.join(dir, 'elsewhere'));
    // out/a is a link that leads out of the out-dir.
    mkdirSync(path.join(dir, 'work/out'));
    symlinkSync(path.join(dir, 'elsewhere'), path.join(dir, 'work/out/a'));
    const before = readTree(dir);
    const run = await runSwc(
      ['compact', '../archive/a/*.jsonl', '../archive/b/../b', '--out-dir', 'out', '-t', '350', ...APPROX],
      { cwd: path.join(dir, 'work') },
    );
    expect(run.status).toBe(2);
    expect(run.stderr).toContain(
      'swc: ../archive/a/big.jsonl: out/a is a symbolic link that leads outside the out-dir; refusing to write there',
    );
    expect(listFiles(path.join(dir, 'elsewhere'))).toEqual([]);
    const after = readTree(dir);
    const added = Object.keys(after).filter((f) => !(f in before));
    expect(added).toEqual(['work/out/b/big2.json']);
  });

  it('keeps its own outputs out of the inputs when the out-dir and the report are inside them', async () => {
    const dir = archive();
    const args = [
      'compact',
      'archive/a',
      '--out-dir',
      'archive/a/out',
      '-t',
      '350',
      ...APPROX,
      '--report',
      'archive/a/report.json',
    ];
    expect((await runSwc(args, { cwd: dir })).status).toBe(0);
    expect((await runSwc(args, { cwd: dir })).status).toBe(0);
    expect(reportPaths(dir, 'archive/a/report.json')).toEqual(['archive/a/big.jsonl', 'archive/a/small.jsonl']);
    expect(listFiles(path.join(dir, 'archive/a/out'))).toEqual(['big.jsonl', 'small.jsonl']);
  });
});

describe('swc compact --check', () => {
  it('exits 1 listing the files that would be compacted, and writes nothing', async () => {
    const dir = archive();
    const before = readTree(dir);
    const mtime = statSync(path.join(dir, 'archive/a/big.jsonl')).mtimeMs;
    const run = await runSwc(['compact', 'archive/a', 'archive/b', '--check', '-t', '350', ...APPROX], { cwd: dir });
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('archive/a/big.jsonl\narchive/b/big2.json\n');
    expect(run.stderr).toMatch(
      /^swc: 3 files scanned: 2 would be compacted, 1 unchanged, 0 failed; tokens 813 → 644 \(−21%, approx\); \d+\.\d\d s\n$/,
    );
    expect(readTree(dir)).toEqual(before);
    expect(statSync(path.join(dir, 'archive/a/big.jsonl')).mtimeMs).toBe(mtime);
  });

  it('exits 0 with an empty list when nothing needs compaction', async () => {
    const dir = archive();
    const run = await runSwc(['compact', 'archive/a', '--check', '-t', '1000000', ...APPROX, '-qq'], { cwd: dir });
    expect(run).toEqual({ status: 0, stdout: '', stderr: '' });
  });
});

describe('swc compact with broken files among good ones', () => {
  const broken = {
    'tree/a.jsonl': BIG,
    'tree/b-truncated.jsonl': `${BIG.split('\n')[0]}\n{"role": "user", "content": "cut of`,
    'tree/c-not-utf8.jsonl': '',
    'tree/d.json': BIG2,
    'tree/e-no-list.json': '{"hello": "world"}\n',
  };

  it('reports each broken file with its line and column, leaves it untouched, compacts the rest, and exits 2', async () => {
    const dir = tree(broken);
    writeFileSync(
      path.join(dir, 'tree/c-not-utf8.jsonl'),
      Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0xff, 0x7d, 0x0a]),
    );
    const bad = ['tree/b-truncated.jsonl', 'tree/c-not-utf8.jsonl', 'tree/e-no-list.json'].map(
      (f) => [f, readFileSync(path.join(dir, f)), statSync(path.join(dir, f)).mtimeMs] as const,
    );
    const run = await runSwc(['compact', 'tree', '--in-place', '-t', '350', ...APPROX], { cwd: dir });
    expect(run.status).toBe(2);
    const lines = run.stderr.trimEnd().split('\n');
    // The reasons are the parser's (path:line:col is this feature's promise).
    expect(lines.filter((l) => !/ tokens \(−\d+%, approx\), removed/.test(l))).toEqual([
      expect.stringMatching(/^swc: tree\/b-truncated\.jsonl:2:\d+: .*not valid JSON/),
      expect.stringMatching(/^swc: tree\/c-not-utf8\.jsonl:1:6: invalid UTF-8/),
      expect.stringMatching(/^swc: tree\/e-no-list\.json:1:1: no message list found/),
      expect.stringMatching(
        /^swc: 5 files scanned: 2 compacted, 0 unchanged, 3 failed; tokens 756 → 587 \(−22%, approx\); \d+\.\d\d s$/,
      ),
    ]);
    for (const [file, bytes, mtime] of bad) {
      expect(readFileSync(path.join(dir, file))).toEqual(bytes);
      expect(statSync(path.join(dir, file)).mtimeMs).toBe(mtime);
    }
    expect(readFileSync(path.join(dir, 'tree/a.jsonl'), 'utf8')).toBe(
      (await runSwc(['compact', '-', '-t', '350', ...APPROX], { cwd: ROOT, stdin: BIG })).stdout,
    );
  });

  it('puts every failure in the JSON report with its reason, line and column', async () => {
    const dir = tree(broken);
    writeFileSync(path.join(dir, 'tree/c-not-utf8.jsonl'), Buffer.from([0x7b, 0xff, 0x0a]));
    const run = await runSwc(['compact', 'tree', '--check', '-t', '350', ...APPROX, '--json'], { cwd: dir });
    expect(run.status).toBe(2);
    const report = JSON.parse(run.stdout) as {
      summary: Record<string, unknown>;
      files: Array<Record<string, unknown>>;
    };
    expect(report.files.map((f) => [f.path, f.status])).toEqual([
      ['tree/a.jsonl', 'compacted'],
      ['tree/b-truncated.jsonl', 'failed'],
      ['tree/c-not-utf8.jsonl', 'failed'],
      ['tree/d.json', 'compacted'],
      ['tree/e-no-list.json', 'failed'],
    ]);
    const error = report.files[2]?.error as { message: string; reason: string; line: number; column: number };
    expect([error.line, error.column]).toEqual([1, 2]);
    expect(error.reason).toMatch(/^invalid UTF-8/);
    expect(error.message).toBe(`tree/c-not-utf8.jsonl:1:2: ${error.reason}`);
    expect(report.files[2]?.plan).toBeNull();
    expect(report.summary).toMatchObject({ files: 5, compacted: 2, unchanged: 0, failed: 3, tokensBeforeExact: true });
  });
});

describe('swc compact reports', () => {
  it('writes one record per file to --report, with the plan of each', async () => {
    const dir = archive();
    const run = await runSwc(
      [
        'compact',
        'archive/a',
        'archive/b',
        '--out-dir',
        'out',
        '-t',
        '350',
        ...APPROX,
        '--report',
        'report.json',
        '-qq',
      ],
      { cwd: dir },
    );
    expect(run).toEqual({ status: 0, stdout: '', stderr: '' });
    const report = JSON.parse(readFileSync(path.join(dir, 'report.json'), 'utf8')) as Record<string, unknown> & {
      files: Array<Record<string, unknown>>;
    };
    expect(Object.keys(report)).toEqual(['version', 'settings', 'summary', 'files']);
    expect(report.settings).toEqual({
      mode: 'out-dir',
      tokenizer: 'approx',
      target: 350,
      contextWindow: null,
      compactAt: null,
      compactTo: null,
      minKeepSteps: 1,
      note: '[{num_removed} earlier messages were removed from this conversation to free up context and cannot be recovered.]',
      format: 'auto',
      shard: null,
    });
    const big = report.files[0] as Record<string, unknown> & { plan: Record<string, unknown> };
    expect(Object.keys(big)).toEqual([
      'path',
      'status',
      'written',
      'format',
      'conversations',
      'messagesBefore',
      'messagesAfter',
      'messagesRemoved',
      'tokensBefore',
      'tokensBeforeExact',
      'tokensAfter',
      'toolTokens',
      'identifiersForgotten',
      'identifiersRecoverable',
      'target',
      'targetMet',
      'error',
      'plan',
    ]);
    expect(big).toMatchObject({
      path: 'archive/a/big.jsonl',
      status: 'compacted',
      written: 'out/a/big.jsonl',
      format: 'openai',
      conversations: 1,
      targetMet: true,
      error: null,
    });
    // The record agrees with its plan, and the plan with a single-file --json plan.
    expect(big.tokensBefore).toBe(big.plan.tokensBefore);
    expect(big.tokensAfter).toBe(big.plan.tokensAfter);
    const alone = JSON.parse(
      (await runSwc(['compact', 'archive/a/big.jsonl', '-t', '350', ...APPROX, '--json'], { cwd: dir })).stderr,
    ) as Record<string, unknown>;
    expect(big.plan).toEqual(alone);
    expect(report.files[1]).toMatchObject({
      path: 'archive/a/small.jsonl',
      status: 'unchanged',
      written: 'out/a/small.jsonl',
      messagesRemoved: 0,
    });
  });

  it('prints the report to stdout with --json, the summary staying on stderr', async () => {
    const dir = archive();
    const run = await runSwc(['compact', 'archive/a', '--in-place', '-t', '350', ...APPROX, '--json'], { cwd: dir });
    expect(run.status).toBe(0);
    expect(run.stderr).toMatch(/^swc: 2 files scanned: 1 compacted, 1 unchanged/m);
    const report = JSON.parse(run.stdout) as { summary: Record<string, number>; files: unknown[] };
    expect(report.files).toHaveLength(2);
    expect(report.summary).toMatchObject({ files: 2, compacted: 1, unchanged: 1, failed: 0 });
  });

  it('prints only errors and the closing total with -q, and only errors with -qq', async () => {
    const dir = tree({ 'tree/a.jsonl': BIG, 'tree/bad.jsonl': '{"role": \n' });
    const run = await runSwc(['compact', 'tree', '--in-place', '-t', '350', ...APPROX, '--quiet'], { cwd: dir });
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^swc: tree\/bad\.jsonl:1:\d+: [^\n]+\nswc: 2 files scanned: 1 compacted, [^\n]+\n$/);
    const quieter = await runSwc(['compact', 'tree', '--in-place', '-t', '350', ...APPROX, '-qq'], { cwd: dir });
    expect(quieter.status).toBe(2);
    expect(quieter.stdout).toBe('');
    expect(quieter.stderr).toMatch(/^swc: tree\/bad\.jsonl:1:\d+: [^\n]+\n$/);
  });
});

describe('swc compact --dry-run on many files', () => {
  it('prints one diff per file in path order and writes nothing', async () => {
    const dir = archive();
    const before = readTree(dir);
    const mtime = statSync(path.join(dir, 'archive/b/big2.json')).mtimeMs;
    const run = await runSwc(['compact', 'archive/b', 'archive/a', '--dry-run', '--verbose', '-t', '350', ...APPROX], {
      cwd: dir,
    });
    expect(run.status).toBe(0);
    const headers = run.stdout.split('\n').filter((l) => l.startsWith('dry run: '));
    expect(headers).toEqual([
      'dry run: archive/a/big.jsonl',
      'dry run: archive/a/small.jsonl',
      'dry run: archive/b/big2.json',
    ]);
    const alone = (
      await runSwc(['compact', 'archive/a/small.jsonl', '--dry-run', '-t', '350', ...APPROX], { cwd: dir })
    ).stdout;
    expect(run.stdout).toContain(`\n${alone}\n`);
    expect(readTree(dir)).toEqual(before);
    expect(statSync(path.join(dir, 'archive/b/big2.json')).mtimeMs).toBe(mtime);
  });

  it('prints the report to stdout with --json instead of the diffs', async () => {
    const dir = archive();
    const run = await runSwc(['compact', 'archive/a', '--dry-run', '--json', '-t', '350', ...APPROX], { cwd: dir });
    expect(run.status).toBe(0);
    const report = JSON.parse(run.stdout) as {
      settings: { mode: string };
      files: Array<{ path: string; plan: { groups: unknown[] } }>;
    };
    expect(report.settings.mode).toBe('dry-run');
    expect(report.files.map((f) => f.path)).toEqual(['archive/a/big.jsonl', 'archive/a/small.jsonl']);
    expect(report.files[0]?.plan.groups.length).toBeGreaterThan(0);
  });
});

describe('swc compact --jobs', () => {
  it('gives the same trees, reports, output and exit code with one worker as with two', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 60; i++) files[`tree/d${i % 4}/f${i}.jsonl`] = transcript(100 + i, i % 3 === 0 ? 2 : 30);
    files['tree/d1/broken.jsonl'] = '{"role": "user"\n';
    const runs = [];
    for (const jobs of [1, 2]) {
      const dir = tree(files);
      const run = await runSwc(
        [
          'compact',
          'tree',
          '--out-dir',
          'out',
          '-t',
          '350',
          ...APPROX,
          '--jobs',
          String(jobs),
          '--report',
          'report.json',
        ],
        { cwd: dir },
      );
      const check = await runSwc(['compact', 'tree', '--check', '-t', '350', ...APPROX, '--jobs', String(jobs)], {
        cwd: dir,
      });
      runs.push({
        status: run.status,
        lines: run.stderr.split('\n').slice(0, -2),
        out: readTree(path.join(dir, 'out')),
        report: readFileSync(path.join(dir, 'report.json'), 'utf8'),
        check: [check.status, check.stdout],
      });
    }
    expect(runs[0]?.status).toBe(2);
    expect(Object.keys(runs[0]?.out ?? {})).toHaveLength(60);
    expect(runs[1]).toEqual(runs[0]);
  });
});
