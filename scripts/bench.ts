/**
 * `npm run bench`: swc's speed and memory against a read-and-parse floor, a count-everything compactor and
 * LangChain.js trimMessages, on generated transcripts, all in one run so the ratios are fair on a shared machine.
 * Prints a markdown table of medians (min–max) and the ratios the speed issue sets targets for.
 *
 * Options: --runs N (default 5), --slow-runs N (count-everything at 50 MB and more, LangChain past 1k messages;
 * default 3), --quick (no 50/100 MB files), --gb (the peak memory of the window and prune,window on a 1 GB file, (10)),
 * --no-langchain (also leaves out the agent loop's LangChain row), --swc <bin> (another build's bin/swc.js),
 * --summaries (summary calls on the 1,000-file tree against a local server at 200 ms a call: concurrency 1 vs 8 and
 * a cached second pass, through the model layer and, when the build has the flags, `swc compact --strategy summarize`;
 * scripts/bench-summaries.ts, which also runs alone).
 * --replay-only (only the replay rows (8‴) of pruning past the trigger, then stop: a few minutes).
 * LangChain runs on each file from the smallest up until a run does not finish within a minute.
 * Generated files live under .bench/ (git-ignored) and are reused while the generator's settings are the same.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';
import { benchSummaries, type SummaryBench } from './bench-summaries.js';
import { generateTranscript } from './generate.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BENCH = path.join(ROOT, '.bench');
const JS = path.join(BENCH, 'js');
const OUT = path.join(BENCH, 'out');
const args = process.argv.slice(2);
/** `--swc <bin>` measures another build of the command line (for example one with a change under review). */
const SWC = args.includes('--swc')
  ? path.resolve(args[args.indexOf('--swc') + 1] as string)
  : path.join(ROOT, 'bin', 'swc.js');
const NODE = process.execPath;
const TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : null;
/** Under GNU time, a time limit must stop the Node process itself (killing time would leave it running). */
const TIMEOUT = existsSync('/usr/bin/timeout') ? '/usr/bin/timeout' : null;
const MB = 1e6;
/** Bump when generate.ts changes what it writes, so cached files are made again. */
const GENERATOR_VERSION = 1;

const flag = (name: string): boolean => args.includes(name);
const numberFlag = (name: string, fallback: number): number => {
  const i = args.indexOf(name);
  return i === -1 ? fallback : Number(args[i + 1]);
};
const RUNS = numberFlag('--runs', 5);
/** Runs of the slow comparisons (count-everything at 50 MB and more, LangChain past 1k messages). */
const SLOW_RUNS = numberFlag('--slow-runs', 3);
const QUICK = flag('--quick');
const LANGCHAIN = !flag('--no-langchain');

// ---------------------------------------------------------------------------------------------------------------
// Inputs
// ---------------------------------------------------------------------------------------------------------------

interface Corpus {
  readonly name: string;
  readonly file: string;
  readonly bytes: number;
  readonly messages: number;
}

/** Generates a transcript unless the same one is already there. */
async function corpus(name: string, bytes: number, messages: number, seed = 7): Promise<Corpus> {
  const file = path.join(BENCH, `${name}.jsonl`);
  const stamp = `${file}.stamp`;
  const want = JSON.stringify({ GENERATOR_VERSION, bytes, messages, seed });
  if (!existsSync(file) || !existsSync(stamp) || readFileSync(stamp, 'utf8') !== want) {
    process.stderr.write(`generating ${path.relative(ROOT, file)}…\n`);
    await generateTranscript(file, bytes, messages, seed);
    writeFileSync(stamp, want);
  }
  return { name, file, bytes: statSync(file).size, messages };
}

/**
 * The messages of a JSONL corpus as one whole-JSON file, `{"messages":[...]}` (each line an element as it is), made
 * again whenever the corpus is.
 */
function jsonCorpus(c: Corpus): Corpus {
  const file = c.file.replace(/\.jsonl$/, '.json');
  const stamp = `${file}.stamp`;
  const want = readFileSync(`${c.file}.stamp`, 'utf8');
  if (!existsSync(file) || !existsSync(stamp) || readFileSync(stamp, 'utf8') !== want) {
    process.stderr.write(`writing ${path.relative(ROOT, file)}…\n`);
    const lines = readFileSync(c.file, 'utf8')
      .split('\n')
      .filter((l) => l !== '');
    writeFileSync(file, `{"messages":[${lines.join(',')}]}\n`);
    writeFileSync(stamp, want);
  }
  return { name: `${c.name}-json`, file, bytes: statSync(file).size, messages: c.messages };
}

/**
 * A recorded agent run of exactly `calls` LLM calls: the lines of a corpus up to its `calls`-th assistant message
 * (each assistant message is the reply of one call), made again whenever the corpus is.
 */
function runOfCalls(c: Corpus, calls: number): Corpus & { readonly calls: number } {
  const file = path.join(BENCH, `${c.name}-${calls}-calls.jsonl`);
  const stamp = `${file}.stamp`;
  const want = readFileSync(`${c.file}.stamp`, 'utf8');
  if (!existsSync(file) || !existsSync(stamp) || readFileSync(stamp, 'utf8') !== want) {
    process.stderr.write(`writing ${path.relative(ROOT, file)}…\n`);
    const kept: string[] = [];
    let replies = 0;
    for (const line of readFileSync(c.file, 'utf8').split('\n')) {
      if (line === '' || replies === calls) break;
      kept.push(line);
      if ((JSON.parse(line) as { role?: unknown }).role === 'assistant') replies++;
    }
    if (replies < calls) throw new Error(`${c.file} holds ${replies} assistant messages, fewer than ${calls}`);
    writeFileSync(file, `${kept.join('\n')}\n`);
    writeFileSync(stamp, want);
  }
  const messages = readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '').length;
  return { name: `${c.name}-${calls}-calls`, file, bytes: statSync(file).size, messages, calls };
}

/**
 * An OpenAI chat run of one task and `calls` read calls, each answered by a result of about 1,000 characters: past
 * some 1,750 calls, pruning alone cannot keep it under the trigger of a 100k window (approx), so every call compacts.
 */
function readCallsRun(calls: number): Corpus & { readonly calls: number } {
  const file = path.join(BENCH, `read-calls-${calls}.json`);
  if (!existsSync(file)) {
    const messages: unknown[] = [
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'do the thing' },
    ];
    for (let i = 0; i < calls; i++) {
      const args = JSON.stringify({ path: `src/f${i}.py` });
      messages.push(
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'read', arguments: args } }],
        },
        { role: 'tool', tool_call_id: `c${i}`, content: `line of output ${i} `.repeat(60) },
      );
    }
    messages.push({ role: 'assistant', content: 'done' });
    mkdirSync(BENCH, { recursive: true });
    writeFileSync(file, JSON.stringify(messages));
  }
  return { name: `read-calls-${calls}`, file, bytes: statSync(file).size, messages: 2 * calls + 3, calls };
}

/** A tree of many small transcripts for the --jobs comparison. */
async function tree(count: number): Promise<{ dir: string; bytes: number }> {
  const dir = path.join(BENCH, `tree-${count}`);
  const stamp = path.join(BENCH, `tree-${count}.stamp`);
  const want = JSON.stringify({ GENERATOR_VERSION, count });
  if (!existsSync(stamp) || readFileSync(stamp, 'utf8') !== want) {
    process.stderr.write(`generating ${path.relative(ROOT, dir)}/ (${count} files)…\n`);
    rmSync(dir, { recursive: true, force: true });
    for (let i = 0; i < count; i++) {
      await generateTranscript(
        path.join(dir, `p${String(i % 10)}`, `session-${String(i).padStart(4, '0')}.jsonl`),
        24_000,
        30,
        1000 + i,
      );
    }
    writeFileSync(stamp, want);
  }
  let bytes = 0;
  for (const sub of readdirSync(dir))
    for (const f of readdirSync(path.join(dir, sub))) bytes += statSync(path.join(dir, sub, f)).size;
  return { dir, bytes };
}

/** Compiles a script to plain JavaScript whose imports of ../src point at the built ../dist. */
function compileScript(name: string): string {
  const source = readFileSync(path.join(ROOT, 'scripts', `${name}.ts`), 'utf8');
  const { outputText } = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: false },
  });
  const dist = pathToFileURL(path.join(ROOT, 'dist')).href;
  const out = path.join(JS, `${name}.mjs`);
  writeFileSync(out, outputText.replace(/(['"])\.\.\/src\//g, `$1${dist}/`));
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Measuring
// ---------------------------------------------------------------------------------------------------------------

interface Sample {
  /** Wall time in seconds. */
  readonly wall: number;
  /** Peak resident memory in MB, or NaN when it could not be read. */
  readonly rss: number;
  readonly stdout: string;
  readonly ok: boolean;
  readonly timedOut: boolean;
}

const RSS_FILE = path.join(BENCH, 'rss.txt');
const PRELOAD = path.join(JS, 'report-rss.mjs');

/**
 * Runs one Node process to its end. Peak memory comes from /usr/bin/time when the machine has it, otherwise from
 * a preloaded module that writes `process.resourceUsage().maxRSS` when the process exits.
 */
function runNode(argv: readonly string[], timeoutMs = 0, cwd = ROOT, expected = 0): Sample {
  rmSync(RSS_FILE, { force: true });
  const useTime = TIME !== null && (timeoutMs === 0 || TIMEOUT !== null);
  const limited = timeoutMs > 0 && useTime ? [TIMEOUT as string, '-s', 'KILL', `${timeoutMs / 1000}s`] : [];
  const command = useTime ? (TIME as string) : NODE;
  const full = useTime
    ? ['-f', '%M', '-o', RSS_FILE, ...limited, NODE, ...argv]
    : ['--import', pathToFileURL(PRELOAD).href, ...argv];
  const start = process.hrtime.bigint();
  const r = spawnSync(command, full, {
    cwd,
    encoding: 'utf8',
    // Without GNU time the Node process is the child, and the child is what a time limit stops.
    timeout: timeoutMs > 0 && !useTime ? timeoutMs : undefined,
    killSignal: 'SIGKILL',
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, NO_COLOR: '1', SWC_BENCH_RSS: RSS_FILE },
  });
  const wall = Number(process.hrtime.bigint() - start) / 1e9;
  // timeout(1) ends with status 137 after SIGKILL (GNU time passes the status on); spawnSync reports ETIMEDOUT.
  const timedOut =
    (r.error !== undefined && (r.error as NodeJS.ErrnoException).code === 'ETIMEDOUT') ||
    (limited.length > 0 && r.status === 137);
  let rss = Number.NaN;
  if (existsSync(RSS_FILE)) {
    const lines = readFileSync(RSS_FILE, 'utf8').trim().split('\n');
    // GNU time prints the status line first when the command failed; the figure is on the last line (KB).
    rss = Number(lines[lines.length - 1]) / 1024;
  }
  const ok = r.status === expected && !timedOut;
  if (!ok && !timedOut) process.stderr.write(`failed (${r.status}): node ${argv.join(' ')}\n${r.stderr}\n`);
  return { wall, rss: rss * 1.048576, stdout: r.stdout ?? '', ok, timedOut };
}

interface Row {
  readonly label: string;
  readonly input: string;
  readonly argv: readonly string[];
  readonly cwd?: string;
  readonly timeoutMs?: number;
  /** Set when the process measured only starts others, so its own peak memory says nothing. */
  readonly noMemory?: boolean;
  /** The exit status a run must end with (a refused input ends with 2). */
  readonly expected?: number;
  readonly samples: Sample[];
}

function row(
  label: string,
  input: string,
  argv: readonly string[],
  extra: Partial<Pick<Row, 'cwd' | 'timeoutMs' | 'noMemory' | 'expected'>> = {},
): Row {
  return { label, input, argv, samples: [], ...extra };
}

/** Runs rows round-robin (run 1 of each, then run 2 of each…), so drifting load hits them all alike. */
function runRows(rows: readonly Row[], runs: number): void {
  for (let r = 0; r < runs; r++) {
    for (const x of rows) {
      const s = runNode(x.argv, x.timeoutMs, x.cwd, x.expected);
      x.samples.push(s);
      process.stderr.write(
        `  ${x.label} · ${x.input}: ${s.timedOut ? 'stopped' : `${s.wall.toFixed(2)} s, ${s.rss.toFixed(0)} MB`}\n`,
      );
    }
  }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

const wallOf = (x: Row): number => median(x.samples.map((s) => s.wall));
const rssOf = (x: Row): number => median(x.samples.map((s) => s.rss));

function seconds(v: number): string {
  return v < 1 ? `${(v * 1000).toFixed(0)} ms` : `${v.toFixed(2)} s`;
}

function spread(values: readonly number[], show: (v: number) => string): string {
  return `${show(median(values))} (${show(Math.min(...values))}–${show(Math.max(...values))})`;
}

function tableRow(x: Row): string {
  if (x.samples.every((s) => s.timedOut)) {
    return `| ${x.label} | ${x.input} | stopped after ${seconds((x.timeoutMs ?? 0) / 1000)} | – | ${x.samples.length} |`;
  }
  const done = x.samples.filter((s) => s.ok);
  const wall = spread(
    done.map((s) => s.wall),
    seconds,
  );
  const rss =
    x.noMemory === true
      ? '–'
      : spread(
          done.map((s) => s.rss),
          (v) => `${v.toFixed(0)} MB`,
        );
  return `| ${x.label} | ${x.input} | ${wall} | ${rss} | ${done.length} |`;
}

function ratio(a: number, b: number): string {
  return `${(a / b).toFixed(2)}×`;
}

// ---------------------------------------------------------------------------------------------------------------
// The run
// ---------------------------------------------------------------------------------------------------------------

mkdirSync(JS, { recursive: true });
mkdirSync(OUT, { recursive: true });
writeFileSync(
  PRELOAD,
  "import { writeFileSync } from 'node:fs';\nprocess.on('exit', () => writeFileSync(process.env.SWC_BENCH_RSS, String(process.resourceUsage().maxRSS)));\n",
);

// `swc replay` of runs that pruning alone cannot keep under the trigger (`readCallsRun`): `prune` then compacts at
// every call, and `prune,window` at many. Each compaction should cost what it reads, not the whole history again:
// 8 times the calls should take about 8 times as long. One run each (the 8,000-call rows take seconds each).
const PRUNED_CALLS = [1_000, 8_000] as const;
const PRUNED_POLICIES = ['window', 'prune', 'prune,window'] as const;
const prunedRows: Row[] = [];
const prunedRatios: string[] = [];
for (const policy of PRUNED_POLICIES) {
  const rows = PRUNED_CALLS.map((calls) => {
    const run = readCallsRun(calls);
    return row(
      `(8‴) swc replay --context-window 100k --tokenizer approx --strategy ${policy}`,
      `${calls.toLocaleString('en-US')} read calls, ${(run.bytes / MB).toFixed(1)} MB`,
      [SWC, 'replay', run.file, '--context-window', '100k', '--tokenizer', 'approx', '--strategy', policy],
      { timeoutMs: 600_000 },
    );
  });
  process.stderr.write(`replay --strategy ${policy} of read calls at ${PRUNED_CALLS.join(' and ')} calls:\n`);
  runRows(rows, 1);
  prunedRows.push(...rows);
  const line = `| (8‴) replay --strategy ${policy}, 8,000 read calls ÷ 1,000 (linear: about 8) | read-calls | ${ratio(wallOf(rows[1] as Row), wallOf(rows[0] as Row))} |`;
  process.stderr.write(`  ${line}\n`);
  prunedRatios.push(line);
}
if (flag('--replay-only')) {
  const table = [
    '| what | input | wall time | peak memory | runs |',
    '|---|---|---|---|---|',
    ...prunedRows.map(tableRow),
  ];
  process.stdout.write(
    `${[...table, '', '| ratio | input | this run |', '|---|---|---|', ...prunedRatios].join('\n')}\n`,
  );
  process.exit(0);
}

const child = compileScript('bench-child');
const countEverything = compileScript('count-everything');

const sizes = QUICK
  ? [await corpus('chat-1mb', 1 * MB, 1_000), await corpus('chat-10mb', 10 * MB, 10_000)]
  : [
      await corpus('chat-1mb', 1 * MB, 1_000),
      await corpus('chat-10mb', 10 * MB, 10_000),
      await corpus('chat-100mb', 100 * MB, 100_000),
    ];
const half = QUICK ? null : await corpus('chat-50mb', 50 * MB, 50_000);
const files = await tree(1000);

const TARGET = 8000;
const label = (c: Corpus): string =>
  `${(c.bytes / MB).toFixed(c.bytes < 10 * MB ? 2 : 1)} MB, ${c.messages.toLocaleString('en-US')} msgs`;
const outFile = (name: string): string => path.join(OUT, `${name}.jsonl`);

interface SizeRows {
  corpus: Corpus;
  swc: Row;
  floor: Row;
  floorLines: Row;
  everything: Row;
}

const perSize: SizeRows[] = sizes.map((c) => ({
  corpus: c,
  swc: row('(1) swc compact --target 8000', label(c), [
    SWC,
    'compact',
    '--target',
    String(TARGET),
    '-q',
    '-o',
    outFile(`${c.name}-swc`),
    c.file,
  ]),
  floor: row('(2) floor: read whole + JSON.parse lines', label(c), [child, 'floor', c.file]),
  floorLines: row('(2′) floor: read by line + JSON.parse', label(c), [child, 'floor-lines', c.file]),
  everything: row('(3) count-everything compactor', label(c), [
    countEverything,
    c.file,
    String(TARGET),
    outFile(`${c.name}-all`),
  ]),
}));

// Doubling the history at a fixed target: the 50 MB file runs round-robin with the 100 MB one.
const doubling =
  half === null
    ? null
    : {
        swc50: row('(1) swc compact --target 8000', label(half), [
          SWC,
          'compact',
          '--target',
          String(TARGET),
          '-q',
          '-o',
          outFile(`${half.name}-swc`),
          half.file,
        ]),
        floor50: row('(2) floor: read whole + JSON.parse lines', label(half), [child, 'floor', half.file]),
        floorLines50: row('(2′) floor: read by line + JSON.parse', label(half), [child, 'floor-lines', half.file]),
      };

const started = Date.now();
/** The machine's load when the run began (the VM is shared: ratios within one run are what compare). */
const loadAtStart = os.loadavg();

/**
 * What touching fresh memory costs here, in ms per 100 MiB (the median of 5 processes): mapping pages is most of what
 * the whole-file floor (2) costs beyond (2′) (it holds the file and its text, ~360 MB at 100 MB), and it differs
 * widely between machines (a page fault took about 0.1 µs on one, 11 µs on another), so ratios to (2) do too.
 */
function freshMemoryCost(): number {
  const script =
    'const b = Buffer.allocUnsafeSlow(100 << 20); const t = process.hrtime.bigint(); for (let i = 0; i < b.length; i += 4096) b[i] = 1; process.stdout.write(String(Number(process.hrtime.bigint() - t) / 1e6));';
  const times = Array.from({ length: 5 }, () => Number(spawnSync(NODE, ['-e', script], { encoding: 'utf8' }).stdout));
  return median(times);
}
const memoryCost = freshMemoryCost();

// `swc replay` of a 1,000-call run under four policies against one cold compaction of the same file, in the same
// run. `offload` is refused by a replay (it writes no files), so summarize, planned with assumed summaries
// (`--dry-run`: no model is called), is the fourth policy beside the window and pruning. Measured first, so a run
// stopped once its ratio is printed has it.
const REPLAY_CALLS = 1_000;
const REPLAY_WINDOW = '100k';
const REPLAY_POLICIES = ['none', 'window', 'prune,window', 'summarize'];
/** A replay takes seconds: a few runs are enough beside the others. */
const REPLAY_RUNS = Math.min(RUNS, 3);
const replayRun = runOfCalls(sizes.find((c) => c.messages === 10_000) as Corpus, REPLAY_CALLS);
const replayLabel = `${REPLAY_CALLS.toLocaleString('en-US')} calls, ${label(replayRun)} (of ${replayRun.name.replace(/-\d+-calls$/, '')})`;
const replayRow = row(
  `(8) swc replay --context-window ${REPLAY_WINDOW}, four policies (${REPLAY_POLICIES.join(', ')})`,
  replayLabel,
  [
    SWC,
    'replay',
    replayRun.file,
    '--context-window',
    REPLAY_WINDOW,
    ...REPLAY_POLICIES.flatMap((p) => ['--strategy', p]),
    '--dry-run',
  ],
);
const replayCompactRow = row(`(8′) swc compact --context-window ${REPLAY_WINDOW}, one cold compaction`, replayLabel, [
  SWC,
  'compact',
  '--context-window',
  REPLAY_WINDOW,
  '-q',
  '-o',
  outFile(`${replayRun.name}-swc`),
  replayRun.file,
]);
process.stderr.write(`replay of ${replayRun.name}:\n`);
runRows([replayRow, replayCompactRow], REPLAY_RUNS);
const replayRatio = `| (8)/(8′) replay of ${REPLAY_CALLS.toLocaleString('en-US')} calls under four policies ÷ one cold compaction | ${replayLabel} | ${ratio(wallOf(replayRow), wallOf(replayCompactRow))} (${((wallOf(replayRow) * 1000) / (REPLAY_CALLS * REPLAY_POLICIES.length)).toFixed(2)} ms a call and policy) |`;
process.stderr.write(`  ${replayRatio}\n`);

// `swc replay` under `none`, `window` and `prune` at 1,000 and at 8,000 calls: with no compaction the history only
// grows, so a replay that read it whole at every call would take 64 times as long for 8 times the calls; a linear
// one about 8 times. `window` compacts now and then, `prune` alone at most calls (it never gets under the trigger):
// their compactions read what they compact, the rest of the replay should still be linear. The 8,000-call run is
// cut from a corpus of 20,000 messages (about 10,800 assistant messages). `prune` runs once (it is the slow one).
const LINEAR_CALLS = [1_000, 8_000] as const;
const LINEAR_POLICIES = ['none', 'window', 'prune'] as const;
const linearCorpus = await corpus('chat-20mb', 20 * MB, 20_000);
const linearRowsOf = (policy: string): Row[] =>
  LINEAR_CALLS.map((calls) => {
    const run = runOfCalls(linearCorpus, calls);
    return row(
      `(8″) swc replay --context-window ${REPLAY_WINDOW} --strategy ${policy}`,
      `${calls.toLocaleString('en-US')} calls, ${label(run)}`,
      [SWC, 'replay', run.file, '--context-window', REPLAY_WINDOW, '--strategy', policy],
    );
  });
const linearRows: Row[] = [];
const linearRatios: string[] = [];
for (const policy of LINEAR_POLICIES) {
  const rows = linearRowsOf(policy);
  process.stderr.write(`replay --strategy ${policy} at ${LINEAR_CALLS.join(' and ')} calls:\n`);
  runRows(rows, policy === 'prune' ? 1 : REPLAY_RUNS);
  linearRows.push(...rows);
  const line = `| (8″) replay --strategy ${policy}, 8,000 calls ÷ 1,000 calls (linear: about 8; reading the whole history at every call: about 64) | ${linearCorpus.name} | ${ratio(wallOf(rows[1] as Row), wallOf(rows[0] as Row))} |`;
  process.stderr.write(`  ${line}\n`);
  linearRatios.push(line);
}
for (const s of perSize) {
  process.stderr.write(`${s.corpus.name}:\n`);
  const big = s.corpus.bytes >= 50 * MB;
  const extra = big && doubling !== null ? [doubling.swc50, doubling.floor50, doubling.floorLines50] : [];
  runRows([s.swc, s.floor, s.floorLines, ...extra, ...(big ? [] : [s.everything])], RUNS);
  if (big) runRows([s.everything], SLOW_RUNS);
}

/** `swc compact --target 8000 [--strategy …] -q` of a corpus, written to its output named `what`. */
function quietCompact(c: Corpus, what: string, strategy?: string): string[] {
  const chain = strategy === undefined ? [] : ['--strategy', strategy];
  return [SWC, 'compact', '--target', String(TARGET), ...chain, '-q', '-o', outFile(`${c.name}-${what}`), c.file];
}

// Pruning then the window, on the largest file: pruning counts each result it considers once, until the target.
const largest = perSize[perSize.length - 1] as SizeRows;
const pruneRow = row(
  '(1p) swc compact --target 8000 --strategy prune,window',
  label(largest.corpus),
  quietCompact(largest.corpus, 'prune', 'prune,window'),
);
const offloadRow = row('(1o) swc compact --target 8000 --strategy offload,window', label(largest.corpus), [
  SWC,
  'compact',
  '--target',
  String(TARGET),
  '--strategy',
  'offload,window',
  '--offload-dir',
  path.join(OUT, 'store'),
  '-q',
  '-o',
  outFile(`${largest.corpus.name}-offload`),
  largest.corpus.file,
]);
// The window as a user runs it, without -q: its summary line (counts, an estimate of "before") is part of the cost.
const plainRow = row('(1s) swc compact --target 8000, with its summary line (no -q)', label(largest.corpus), [
  SWC,
  'compact',
  '--target',
  String(TARGET),
  '-o',
  outFile(`${largest.corpus.name}-plain`),
  largest.corpus.file,
]);
// The same messages as one whole-JSON file, `{"messages":[...]}`: decoded and laid out as one text, not by line.
const whole = jsonCorpus(largest.corpus);
const jsonRow = row(
  '(1j) swc compact --target 8000, the same messages as one JSON file {"messages":[...]}',
  label(whole),
  [SWC, 'compact', '--target', String(TARGET), '-q', '-o', path.join(OUT, `${whole.name}-swc.json`), whole.file],
);
// Side by side with the window alone and the floor, interleaved, so the ratios compare like for like.
process.stderr.write(`prune,window, offload,window and whole JSON on ${largest.corpus.name}:\n`);
runRows([pruneRow, offloadRow, plainRow, jsonRow, largest.swc, largest.floor], RUNS);

// (10) With --gb: the peak memory of the window and of prune,window on a 1 GB JSONL file (the speed issue's goal is at
// most 250 MiB for each), beside the line-by-line floor's. About two minutes, and a 1 GB file in .bench/.
const gigabyte = flag('--gb') ? await corpus('chat-1gb', 1000 * MB, 1_000_000) : null;
const gbRows =
  gigabyte === null
    ? []
    : [
        row('(10) swc compact --target 8000', label(gigabyte), quietCompact(gigabyte, 'swc')),
        row(
          '(10p) swc compact --target 8000 --strategy prune,window',
          label(gigabyte),
          quietCompact(gigabyte, 'prune', 'prune,window'),
        ),
        row('(10′) floor: read by line + JSON.parse', label(gigabyte), [child, 'floor-lines', gigabyte.file]),
      ];
if (gigabyte !== null) {
  process.stderr.write(`memory at ${gigabyte.name}:\n`);
  runRows(gbRows, SLOW_RUNS);
}

// The dry run's inventory of what the compaction forgets: the same dry run of the largest file with it and without.
const dryInventory = row('(1d) dry run, with the inventory of what it forgets', label(largest.corpus), [
  child,
  'dry-run',
  largest.corpus.file,
  String(TARGET),
  'inventory',
]);
const dryBare = row('(1d′) dry run, without the inventory', label(largest.corpus), [
  child,
  'dry-run',
  largest.corpus.file,
  String(TARGET),
  'none',
]);
process.stderr.write(`dry run with and without the inventory on ${largest.corpus.name}:\n`);
runRows([dryInventory, dryBare], RUNS);

// LangChain, from the smallest file up, as long as one run finishes within a minute.
const langchainRows: Array<{ row: Row; corpus: Corpus; cached: boolean }> = [];
if (LANGCHAIN) {
  for (const cached of [false, true]) {
    for (const c of sizes) {
      const what = `(4) LangChain.js trimMessages${cached ? ', counts cached per message' : ''}`;
      const x = row(what, label(c), [child, 'langchain', c.file, String(TARGET), ...(cached ? ['cached'] : [])], {
        timeoutMs: 60_000,
      });
      langchainRows.push({ row: x, corpus: c, cached });
      process.stderr.write(`LangChain${cached ? ' (cached counter)' : ''} on ${c.name}:\n`);
      runRows([x], 1);
      if ((x.samples[0] as Sample).timedOut) break;
      runRows([x], (c.messages > 1_000 ? SLOW_RUNS : RUNS) - 1);
    }
  }
}

// An agent's loop: the history grows by two messages a step and is compacted before every step (what a
// prepareStep does), by one swc compactor and by LangChain's trimMessages with a cached counter.
const LOOP_STEPS = 2_000;
const loopCorpus = sizes.find((c) => c.messages >= 2 * LOOP_STEPS) as Corpus;
const loopLabel = `${LOOP_STEPS.toLocaleString('en-US')} steps of ${loopCorpus.name}`;
const loopSwc = row(`(6) agent loop: swc createCompactor().compact before each step, --target ${TARGET}`, loopLabel, [
  child,
  'loop-swc',
  loopCorpus.file,
  String(LOOP_STEPS),
  String(TARGET),
]);
const LOOP_LIMIT_S = 1200;
const loopLangchain = row(
  '(6′) agent loop: LangChain.js trimMessages before each step (counts cached per message)',
  loopLabel,
  [child, 'loop-langchain', loopCorpus.file, String(LOOP_STEPS), String(TARGET)],
  { timeoutMs: LOOP_LIMIT_S * 1000 },
);
process.stderr.write('agent loop:\n');
runRows([loopSwc], RUNS);
if (LANGCHAIN) {
  // One run: it takes minutes.
  runRows([loopLangchain], 1);
}

// A warm step against the size of the history: one swc compactor and a drop-oldest loop with cached counts,
// interleaved in one process, at each size the largest corpus holds.
const stepCorpus = sizes[sizes.length - 1] as Corpus;
const stepSizes = [1_000, 10_000, 100_000].filter((n) => n <= stepCorpus.messages);
/** The medians of the warm steps, by contender and size. */
type StepMedians = {
  swc: Record<string, number>;
  swcAssumeUnchanged: Record<string, number>;
  dropOldest: Record<string, number>;
  prepareStep: Record<string, number>;
};
process.stderr.write('warm steps:\n');
const stepMedians = JSON.parse(
  runNode([child, 'steps', stepCorpus.file, stepSizes.join(','), String(TARGET)]).stdout.trim(),
) as StepMedians;
// The same history as one task of many steps (a coding agent's): its steps, not its turns, are what the window cuts.
process.stderr.write('warm steps, one task:\n');
const oneTaskMedians = JSON.parse(
  runNode([child, 'steps', stepCorpus.file, stepSizes.join(','), String(TARGET), 'one-task']).stdout.trim(),
) as StepMedians;

// One call at each of those sizes on fresh copies of the messages, in a warm process: swc compactMessages, the
// drop-oldest loop and LangChain trimMessages with cached counts, interleaved in one process.
process.stderr.write('one call in process:\n');
const coldMedians = JSON.parse(
  runNode(['--expose-gc', child, 'cold', stepCorpus.file, stepSizes.join(','), String(TARGET)]).stdout.trim(),
) as {
  swc: Record<string, number | null>;
  dropOldest: Record<string, number | null>;
  langchain: Record<string, number | null>;
  kept: Record<string, Record<string, number | null> | undefined>;
};

// A target close to the total: everything is counted; compared with gpt-tokenizer counting the same text raw.
const near = sizes.find((c) => c.messages === 10_000) as Corpus;
const renderedText = path.join(OUT, `${near.name}.rendered.txt`);
const renderedChars = Number(runNode([child, 'render', near.file, renderedText]).stdout.trim());
const renderedBytes = statSync(renderedText).size;
const total = Number(
  runNode([countEverything, near.file, '1', path.join(OUT, 'total.jsonl')])
    .stdout.trim()
    .split(' ')[0],
);
const nearTarget = total - 1;
process.stderr.write(`near-total target ${nearTarget} (total ${total}, ${renderedChars} chars rendered):\n`);
const nearSwc = row(`(1) swc compact --target ${nearTarget.toLocaleString('en-US')} (total − 1)`, label(near), [
  SWC,
  'compact',
  '--target',
  String(nearTarget),
  '-q',
  '-o',
  outFile(`${near.name}-near`),
  near.file,
]);
const nearRaw = row('gpt-tokenizer countTokens on the rendered text', `${(renderedBytes / MB).toFixed(1)} MB of text`, [
  child,
  'raw-count',
  renderedText,
]);
// What the raw count pays before counting (start-up, loading o200k), to compare counting throughput alone; swc's
// counterpart is its run at --target 8000 on the same file (start-up, o200k, reading and parsing, little counting).
const empty = path.join(OUT, 'empty.txt');
writeFileSync(empty, '');
const nearRaw0 = row('gpt-tokenizer countTokens on an empty text', '0 MB', [child, 'raw-count', empty]);
const nearSwc0 = row(
  '(1) swc compact --target 8000, beside the near-total runs',
  label(near),
  (perSize.find((s) => s.corpus === near) as SizeRows).swc.argv,
);
runRows([nearSwc, nearRaw, nearSwc0, nearRaw0], RUNS);

// --jobs on a tree of files.
process.stderr.write(`tree of 1,000 files (${(files.bytes / MB).toFixed(1)} MB):\n`);
const jobRow = (jobs: number): Row =>
  row(`(5) swc compact --target 2000 --out-dir --jobs ${jobs}`, `1,000 files, ${(files.bytes / MB).toFixed(1)} MB`, [
    SWC,
    'compact',
    '--target',
    '2000',
    // Errors only: -q would keep the closing total, whose figures this row does not measure.
    '-qq',
    '--out-dir',
    path.join(OUT, `tree-jobs${jobs}`),
    '--jobs',
    String(jobs),
    files.dir,
  ]);
const jobs1 = jobRow(1);
const jobs2 = jobRow(2);
// The ceiling two cores give this work here: two independent one-job processes on halves of the tree at once.
const halvesRow = row(
  '(5′) two swc --jobs 1 processes at once, half the tree each',
  `1,000 files, ${(files.bytes / MB).toFixed(1)} MB`,
  [child, 'halves', SWC, files.dir, path.join(OUT, 'tree-halves')],
  { noMemory: true },
);
runRows([jobs1, jobs2, halvesRow], RUNS);

// The worst nesting: a 14 MB JSON file whose tool input nests 7 million lists, and 48 MB of JSONL nesting 24 million
// in one line. Refused past MAX_JSON_DEPTH (exit 2) before anything is parsed; the rows measure what refusing costs.
const deepInput = (levels: number): string =>
  `{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"walk","input":{"a":${'['.repeat(levels)}${']'.repeat(levels)}}}]}`;
const deepJson = path.join(OUT, 'deep-7m.json');
const deepJsonl = path.join(OUT, 'deep-24m.jsonl');
writeFileSync(deepJson, `{"messages":[{"role":"user","content":"Walk the tree."},${deepInput(7_000_000)}]}\n`);
writeFileSync(deepJsonl, `{"role":"user","content":"Walk the tree."}\n${deepInput(24_000_000)}\n`);
const deepRows = [
  row(
    '(7) swc compact --target 8000, nested 7,000,000 deep (refused, exit 2)',
    '14 MB JSON',
    [SWC, 'compact', '--target', String(TARGET), '-q', '-o', path.join(OUT, 'deep-out.json'), deepJson],
    { expected: 2 },
  ),
  row('(7) swc inspect, nested 7,000,000 deep (refused, exit 2)', '14 MB JSON', [SWC, 'inspect', deepJson], {
    expected: 2,
  }),
  row(
    '(7) swc compact --target 8000, a line nested 24,000,000 deep (refused, exit 2)',
    '48 MB JSONL',
    [SWC, 'compact', '--target', String(TARGET), '-q', '-o', path.join(OUT, 'deep-out.jsonl'), deepJsonl],
    { expected: 2 },
  ),
];
process.stderr.write('deep nesting:\n');
runRows(deepRows, RUNS);

// Start-up.
process.stderr.write('start-up:\n');
const version = row('swc --version', '–', [SWC, '--version']);
const nodeOnly = row('node -e 0', '–', ['-e', '0']);
const help = row('swc compact --help', '–', [SWC, 'compact', '--help']);
runRows([version, nodeOnly, help], Math.max(RUNS, 10));

// Summary calls (--summaries): minutes at concurrency 1 (1,000 calls of 200 ms each), so only when asked.
const summaries: SummaryBench | null = flag('--summaries') ? await benchSummaries(files.dir, { swc: SWC }) : null;

// ---------------------------------------------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------------------------------------------

const same = (a: string, b: string): string => {
  try {
    return readFileSync(a).equals(readFileSync(b)) ? 'identical' : 'DIFFERENT';
  } catch {
    return 'missing';
  }
};

/** Whether a whole-JSON output holds, under "messages", the same values as the lines of a JSONL output. */
const sameMessages = (json: string, jsonl: string): string => {
  try {
    const kept = (JSON.parse(readFileSync(json, 'utf8')) as { messages: unknown[] }).messages;
    const lines = readFileSync(jsonl, 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as unknown);
    return JSON.stringify(kept) === JSON.stringify(lines) ? 'hold the same messages' : 'DIFFERENT';
  } catch {
    return 'missing';
  }
};

const cpu = os.cpus();
const lines: string[] = [];
const loads = (l: number[]): string => l.map((x) => x.toFixed(2)).join(', ');
lines.push(
  `Machine: ${cpu.length} × ${cpu[0]?.model.trim() ?? 'CPU'}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, ${os.platform()}; ${new Date().toISOString().slice(0, 10)}; load average (1, 5, 15 min) ${loads(loadAtStart)} at the start, ${loads(os.loadavg())} at the end; touching 100 MiB of fresh memory ${memoryCost.toFixed(0)} ms; ${RUNS} runs (${SLOW_RUNS} for count-everything at 100 MB and LangChain past 1k messages, ${REPLAY_RUNS} for the replay rows (8)), medians (min–max); peak memory is the peak resident set of the whole process${TIME !== null ? ' (GNU time)' : ''}.`,
);
lines.push('');
lines.push('| what | input | wall time | peak memory | runs |');
lines.push('|---|---|---|---|---|');
for (const s of perSize) {
  lines.push(tableRow(s.swc), tableRow(s.floor), tableRow(s.floorLines), tableRow(s.everything));
  for (const l of langchainRows) if (l.corpus === s.corpus) lines.push(tableRow(l.row));
}
if (doubling) lines.push(tableRow(doubling.swc50), tableRow(doubling.floor50), tableRow(doubling.floorLines50));
lines.push(tableRow(pruneRow), tableRow(offloadRow), tableRow(plainRow), tableRow(jsonRow));
for (const r of gbRows) lines.push(tableRow(r));
lines.push(tableRow(dryInventory), tableRow(dryBare));
lines.push(
  tableRow(nearSwc),
  tableRow(nearSwc0),
  tableRow(nearRaw),
  tableRow(nearRaw0),
  tableRow(jobs1),
  tableRow(jobs2),
  tableRow(halvesRow),
  tableRow(version),
  tableRow(help),
  tableRow(nodeOnly),
);
lines.push(tableRow(loopSwc), ...(LANGCHAIN ? [tableRow(loopLangchain)] : []));
lines.push(...deepRows.map(tableRow));
lines.push(tableRow(replayRow), tableRow(replayCompactRow), ...linearRows.map(tableRow), ...prunedRows.map(tableRow));
lines.push('');
{
  const cells = (xs: Record<string, number>): string =>
    stepSizes.map((n) => `${(xs[n] ?? NaN).toFixed(2)} ms`).join(' / ');
  lines.push(
    `| (7) warm step, one message pushed (median of 5 rounds of 15 steps) | ${stepSizes.map((n) => n.toLocaleString('en-US')).join(' / ')} msgs of ${stepCorpus.name} |`,
    '|---|---|',
  );
  for (const [medians, shape] of [
    [stepMedians, ''],
    [oneTaskMedians, ', one task'],
  ] as const)
    lines.push(
      `| swc createCompactor().compact, approximate counter${shape} | ${cells(medians.swc)} |`,
      `| swc createCompactor({ assumeUnchanged: true }).compact${shape} | ${cells(medians.swcAssumeUnchanged)} |`,
      `| drop-oldest loop, counts cached per message object${shape} | ${cells(medians.dropOldest)} |`,
      `| swcPrepareStep (OpenAI messages), its kept view${shape} | ${cells(medians.prepareStep)} |`,
    );
}
lines.push('');
{
  /** A median and the messages kept, or a dash where the contender did not run. */
  const cell = (name: 'swc' | 'dropOldest' | 'langchain', n: number): string => {
    const ms = coldMedians[name][n];
    return ms === null || ms === undefined ? '–' : `${ms.toFixed(2)} ms (${coldMedians.kept[name]?.[n]} kept)`;
  };
  lines.push(
    `| (9) one call in process, fresh copies (median of 5, after one warm-up) | ${stepSizes.map((n) => n.toLocaleString('en-US')).join(' / ')} msgs of ${stepCorpus.name} |`,
    '|---|---|',
    `| swc compactMessages, approximate counter | ${stepSizes.map((n) => cell('swc', n)).join(' / ')} |`,
    `| drop-oldest loop, a new count cache per call | ${stepSizes.map((n) => cell('dropOldest', n)).join(' / ')} |`,
    `| LangChain trimMessages, counts (characters ÷ 4) cached per message | ${stepSizes.map((n) => cell('langchain', n)).join(' / ')} |`,
  );
}
lines.push('');
lines.push('| ratio | input | value |');
lines.push('|---|---|---|');
for (const s of perSize) {
  const floorBest = Math.min(wallOf(s.floor), wallOf(s.floorLines));
  lines.push(
    `| (1)/(2) swc ÷ floor (the faster of (2), (2′)) | ${label(s.corpus)} | ${ratio(wallOf(s.swc), floorBest)} |`,
  );
  if (s === largest) {
    lines.push(
      `| (1)/(2) swc ÷ the whole-file floor (2) alone | ${label(s.corpus)} | ${ratio(wallOf(s.swc), wallOf(s.floor))} |`,
    );
    lines.push(
      `| (1p)/(2) swc --strategy prune,window ÷ floor (the faster; ÷ (2) alone) | ${label(s.corpus)} | ${ratio(wallOf(pruneRow), floorBest)} (${ratio(wallOf(pruneRow), wallOf(s.floor))}) |`,
    );
    lines.push(
      `| (1o)/(2) swc --strategy offload,window ÷ floor (the faster; ÷ (2) alone) | ${label(s.corpus)} | ${ratio(wallOf(offloadRow), floorBest)} (${ratio(wallOf(offloadRow), wallOf(s.floor))}) |`,
    );
    lines.push(
      `| (1s)/(1) the window with its summary line ÷ with -q | ${label(s.corpus)} | ${ratio(wallOf(plainRow), wallOf(s.swc))} (÷ (2) alone: ${ratio(wallOf(plainRow), wallOf(s.floor))}) |`,
    );
    if (gigabyte !== null) {
      const mib = (r: Row): string => `${(rssOf(r) / 1.048576).toFixed(0)} MiB`;
      const [gbWindow, gbPrune] = gbRows as [Row, Row];
      lines.push(
        `| (10) peak memory at 1 GB: window / prune,window (goal: at most 250 MiB each) | ${label(gigabyte)} | ${mib(gbWindow)} / ${mib(gbPrune)} |`,
      );
    }
    lines.push(
      `| peak memory: prune,window / offload,window ÷ the window's | ${label(s.corpus)} | ${ratio(rssOf(pruneRow), rssOf(s.swc))} / ${ratio(rssOf(offloadRow), rssOf(s.swc))} |`,
    );
    lines.push(
      `| (1j)/(1) whole JSON ÷ JSONL of the same messages: wall time; peak memory | ${label(whole)} | ${ratio(wallOf(jsonRow), wallOf(s.swc))}; ${ratio(rssOf(jsonRow), rssOf(s.swc))} (outputs ${sameMessages(path.join(OUT, `${whole.name}-swc.json`), outFile(`${s.corpus.name}-swc`))}) |`,
    );
  }
  if (s === largest)
    lines.push(
      `| (1d)/(1d′) dry run with the inventory ÷ without | ${label(s.corpus)} | ${ratio(wallOf(dryInventory), wallOf(dryBare))} (${seconds(wallOf(dryInventory) - wallOf(dryBare))} more) |`,
    );
  lines.push(
    `| (3)/(1) count-everything ÷ swc | ${label(s.corpus)} | ${ratio(wallOf(s.everything), wallOf(s.swc))} (outputs ${same(outFile(`${s.corpus.name}-swc`), outFile(`${s.corpus.name}-all`))}) |`,
  );
  for (const l of langchainRows) {
    if (l.corpus !== s.corpus) continue;
    const name = `(4)/(1) LangChain${l.cached ? ' (cached counts)' : ''} ÷ swc`;
    const done = l.row.samples.filter((x) => x.ok);
    const value =
      done.length > 0
        ? ratio(median(done.map((x) => x.wall)), wallOf(s.swc))
        : `> ${ratio(60, wallOf(s.swc))} (stopped at 60 s)`;
    lines.push(`| ${name} | ${label(s.corpus)} | ${value} |`);
  }
  lines.push(`| swc peak memory ÷ file size | ${label(s.corpus)} | ${ratio(rssOf(s.swc), s.corpus.bytes / MB)} |`);
}
if (doubling) {
  const full = perSize.find((s) => s.corpus.messages === 100_000);
  if (full) {
    const extraSwc = wallOf(full.swc) - wallOf(doubling.swc50);
    const extraFloor = wallOf(full.floor) - wallOf(doubling.floor50);
    const extraLines = wallOf(full.floorLines) - wallOf(doubling.floorLines50);
    lines.push(
      `| doubling 50 → 100 MB: extra swc time ÷ extra parse time | ${label(half as Corpus)} → ${label(full.corpus)} | ${seconds(extraSwc)} ÷ ${seconds(Math.min(extraFloor, extraLines))} = ${ratio(extraSwc, Math.min(extraFloor, extraLines))} |`,
    );
  }
}
lines.push(
  `| near-total target: swc throughput ÷ raw gpt-tokenizer throughput, whole processes (raw time ÷ swc time) | ${label(near)} | ${ratio(wallOf(nearRaw), wallOf(nearSwc))} (${(renderedBytes / MB / wallOf(nearSwc)).toFixed(2)} vs ${(renderedBytes / MB / wallOf(nearRaw)).toFixed(2)} MB/s) |`,
);
const swcWork = wallOf(nearSwc) - wallOf(nearSwc0);
const rawWork = wallOf(nearRaw) - wallOf(nearRaw0);
lines.push(
  `| near-total target: counting alone (swc: the near-total run less a --target 8000 run on the same file, so rendering every message still counts against swc; raw: less a run on an empty text) | ${label(near)} | ${ratio(rawWork, swcWork)} (${(renderedBytes / MB / swcWork).toFixed(2)} vs ${(renderedBytes / MB / rawWork).toFixed(2)} MB/s) |`,
);
lines.push(
  `| --jobs 2 speed-up over --jobs 1 | 1,000 files | ${ratio(wallOf(jobs1), wallOf(jobs2))} (outputs ${sameTree(path.join(OUT, 'tree-jobs1'), path.join(OUT, 'tree-jobs2'))}) |`,
);
lines.push(
  `| the machine's ceiling: --jobs 1 ÷ two --jobs 1 processes on halves at once (5′) | 1,000 files | ${ratio(wallOf(jobs1), wallOf(halvesRow))} |`,
);
lines.push(`| swc --version ÷ node -e 0 | – | ${ratio(wallOf(version), wallOf(nodeOnly))} |`);
if (LANGCHAIN) {
  const finished = loopLangchain.samples.filter((x) => !x.timedOut);
  const value =
    finished.length > 0
      ? ratio(median(finished.map((x) => x.wall)), wallOf(loopSwc))
      : `> ${ratio(LOOP_LIMIT_S, wallOf(loopSwc))} (stopped at ${LOOP_LIMIT_S} s)`;
  lines.push(`| (6′)/(6) agent loop: LangChain trimMessages ÷ swc compactor | ${loopLabel} | ${value} |`);
}
{
  const [small, big] = [stepSizes[stepSizes.length - 2], stepSizes[stepSizes.length - 1]] as [number, number];
  const swcAt = (n: number): number => stepMedians.swc[n] ?? NaN;
  lines.push(
    `| (7) swc warm step at ${big.toLocaleString('en-US')} ÷ at ${small.toLocaleString('en-US')} msgs | ${stepCorpus.name} | ${ratio(swcAt(big), swcAt(small))} |`,
    `| (7) swc warm step ÷ drop-oldest loop, at ${big.toLocaleString('en-US')} msgs | ${stepCorpus.name} | ${ratio(swcAt(big), stepMedians.dropOldest[big] ?? NaN)} |`,
    `| (7) swc warm step, assumeUnchanged, at ${big.toLocaleString('en-US')} ÷ at ${small.toLocaleString('en-US')} msgs | ${stepCorpus.name} | ${ratio(stepMedians.swcAssumeUnchanged[big] ?? NaN, stepMedians.swcAssumeUnchanged[small] ?? NaN)} |`,
    `| (7) swc warm step, assumeUnchanged, ÷ drop-oldest loop, at ${big.toLocaleString('en-US')} msgs | ${stepCorpus.name} | ${ratio(stepMedians.swcAssumeUnchanged[big] ?? NaN, stepMedians.dropOldest[big] ?? NaN)} |`,
    `| (7) swc warm step, assumeUnchanged, one task, at ${big.toLocaleString('en-US')} ÷ at ${small.toLocaleString('en-US')} msgs | ${stepCorpus.name} | ${ratio(oneTaskMedians.swcAssumeUnchanged[big] ?? NaN, oneTaskMedians.swcAssumeUnchanged[small] ?? NaN)} |`,
    `| (7) swc warm step, assumeUnchanged, one task, ÷ drop-oldest loop, at ${big.toLocaleString('en-US')} msgs | ${stepCorpus.name} | ${ratio(oneTaskMedians.swcAssumeUnchanged[big] ?? NaN, oneTaskMedians.dropOldest[big] ?? NaN)} |`,
    `| (7) swcPrepareStep step at ${big.toLocaleString('en-US')} ÷ at ${small.toLocaleString('en-US')} msgs: turns / one task | ${stepCorpus.name} | ${ratio(stepMedians.prepareStep[big] ?? NaN, stepMedians.prepareStep[small] ?? NaN)} / ${ratio(oneTaskMedians.prepareStep[big] ?? NaN, oneTaskMedians.prepareStep[small] ?? NaN)} |`,
  );
}
for (const n of stepSizes)
  lines.push(
    `| (9) drop-oldest ÷ swc compactMessages at ${n.toLocaleString('en-US')} | ${stepCorpus.name} | ${ratio(coldMedians.dropOldest[n] ?? NaN, coldMedians.swc[n] ?? NaN)} |`,
  );
for (const n of stepSizes) {
  const trimmed = coldMedians.langchain[n];
  if (trimmed === null || trimmed === undefined) continue;
  lines.push(
    `| (9) LangChain trimMessages (cached) ÷ swc compactMessages at ${n.toLocaleString('en-US')} | ${stepCorpus.name} | ${ratio(trimmed, coldMedians.swc[n] ?? NaN)} |`,
  );
}
lines.push(replayRatio, ...linearRatios, ...prunedRatios);
if (summaries !== null) {
  lines.push('', '| summaries | input | wall time | calls |', '|---|---|---|---|', ...summaries.rows);
  lines.push('', '| ratio | input | value |', '|---|---|---|', ...summaries.ratios);
}
lines.push('');
lines.push(`(Bench took ${((Date.now() - started) / 1000).toFixed(0)} s.)`);

/** Whether two output trees hold the same files with the same bytes. */
function sameTree(a: string, b: string): string {
  const list = (dir: string): string[] => {
    if (!existsSync(dir)) return [];
    const out: string[] = [];
    const walk = (d: string): void => {
      for (const e of readdirSync(d, { withFileTypes: true })) {
        const p = path.join(d, e.name);
        if (e.isDirectory()) walk(p);
        else out.push(path.relative(dir, p));
      }
    };
    walk(dir);
    return out.sort();
  };
  const la = list(a);
  const lb = list(b);
  if (la.length === 0 || la.join('\n') !== lb.join('\n')) return 'DIFFERENT';
  return la.every((f) => readFileSync(path.join(a, f)).equals(readFileSync(path.join(b, f))))
    ? 'identical'
    : 'DIFFERENT';
}

process.stdout.write(`${lines.join('\n')}\n`);
