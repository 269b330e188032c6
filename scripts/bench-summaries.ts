/**
 * Summary calls against the local OpenAI-compatible server with a fixed latency (200 ms, a fast hosted model's
 * time to a short answer): how much `--concurrency` buys over one call at a time, and that a second run over the same
 * prompts is answered by the cache without a call.
 *
 * Two ways, both measured by `npm run bench -- --summaries` (rows (7), (7′), (8), (8′)), or alone with
 * `TS_NODE_TRANSPILE_ONLY=1 node --loader ts-node/esm scripts/bench-summaries.ts [--summary-files N] [--swc bin/swc.js] [tree]`:
 *
 * - the model layer driven directly (endpoint client, shared limiter, disk cache), one prompt per file;
 * - `swc compact --strategy summarize --base-url … --concurrency N` over the files, when the build has those flags.
 *
 * The server runs in this process; the CLI runs as a child process (asynchronously, so the server keeps answering).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { endpointIdentity, withCache } from '../src/io/model/cache.js';
import { createEndpointSummarizer } from '../src/io/model/endpoint.js';
import { createLimiter } from '../src/io/model/limit.js';
import type { SummaryRequest } from '../src/io/model/types.js';
import { startOpenAiServer, type OpenAiServer } from '../test/helpers/openai-server.js';

export interface SummaryRun {
  readonly label: string;
  /** Wall time in seconds. */
  readonly wall: number;
  /** Requests that reached the server. */
  readonly calls: number;
  /** The most requests the server held at once. */
  readonly maxInFlight: number;
  /** Answers that came from the cache (the layer's count; for the CLI, what its summary line says, when it says). */
  readonly hits?: number;
}

export interface SummaryBench {
  readonly runs: SummaryRun[];
  /** Markdown rows for the bench's two tables: | what | input | wall time | calls | and | ratio | input | value |. */
  readonly rows: string[];
  readonly ratios: string[];
}

const seconds = (v: number): string => (v < 1 ? `${(v * 1000).toFixed(0)} ms` : `${v.toFixed(2)} s`);

/** One prompt per file: Haystack's wrapper around the file's first 4,000 characters, so requests have a real size. */
export function promptsOf(files: readonly string[]): SummaryRequest[] {
  return files.map((file) => ({
    system: 'Summarize the conversation for an agent that continues it.',
    user: `<conversation_to_summarize>\n${readFileSync(file, 'utf8').slice(0, 4000)}\n</conversation_to_summarize>`,
  }));
}

/** Every file under a folder, sorted. */
export function filesOf(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name))
    .sort();
}

/** Runs every prompt through one limiter and one cache, all at once, and times it. */
async function driveLayer(
  server: OpenAiServer,
  prompts: readonly SummaryRequest[],
  concurrency: number,
  cacheDir: string,
  label: string,
): Promise<SummaryRun> {
  server.reset();
  const baseUrl = `${server.url}/v1`;
  const limit = createLimiter(concurrency);
  const summarize = withCache(limit(createEndpointSummarizer({ baseUrl, model: 'bench-model' })), {
    dir: cacheDir,
    model: endpointIdentity(baseUrl, 'bench-model'),
  });
  const start = process.hrtime.bigint();
  await Promise.all(prompts.map((p) => summarize(p)));
  const wall = Number(process.hrtime.bigint() - start) / 1e9;
  return { label, wall, calls: server.requests.length, maxInFlight: server.maxInFlight, hits: summarize.stats().hits };
}

/** Runs a command to its end without blocking this process's event loop (the server must keep answering). */
function runAsync(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, argv, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** Whether a build of the CLI has the summarize flags this row needs. */
export function hasSummarizeFlags(swc: string): boolean {
  const help = spawnSync(process.execPath, [swc, 'compact', '--help'], { encoding: 'utf8' }).stdout ?? '';
  return ['--base-url', '--concurrency', '--cache-dir'].every((f) => help.includes(f));
}

/** `swc compact --strategy summarize` over a tree, timed, against the server. */
async function driveCli(
  server: OpenAiServer,
  swc: string,
  tree: string,
  concurrency: number,
  cacheDir: string,
  outDir: string,
  label: string,
): Promise<SummaryRun> {
  server.reset();
  const argv = [
    swc,
    'compact',
    '--strategy',
    'summarize',
    '--target',
    '2000',
    '--base-url',
    `${server.url}/v1`,
    '--model',
    'bench-model',
    '--concurrency',
    String(concurrency),
    '--cache-dir',
    cacheDir,
    '--out-dir',
    outDir,
    tree,
  ];
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
  delete env.OPENAI_API_KEY;
  delete env.OPENAI_BASE_URL;
  const start = process.hrtime.bigint();
  const r = await runAsync(argv, env);
  const wall = Number(process.hrtime.bigint() - start) / 1e9;
  if (r.status !== 0)
    process.stderr.write(`failed (${r.status}): node ${argv.join(' ')}\n${r.stderr.slice(0, 2000)}\n`);
  const hits = /(\d[\d,]*) (?:cache )?hits?/.exec(r.stderr + r.stdout)?.[1];
  return {
    label,
    wall,
    calls: server.requests.length,
    maxInFlight: server.maxInFlight,
    ...(hits === undefined ? {} : { hits: Number(hits.replace(/,/g, '')) }),
  };
}

/**
 * The summary rows.
 * @param tree the folder of transcripts (the bench's 1,000-file tree)
 * @param options the latency, the concurrencies compared, and the CLI build (left out: layer rows only)
 */
export async function benchSummaries(
  tree: string,
  options: { latencyMs?: number; low?: number; high?: number; swc?: string; limit?: number } = {},
): Promise<SummaryBench> {
  const latencyMs = options.latencyMs ?? 200;
  const low = options.low ?? 1;
  const high = options.high ?? 8;
  const files = filesOf(tree).slice(0, options.limit ?? Number.POSITIVE_INFINITY);
  const input = `${files.length.toLocaleString('en-US')} files, ${latencyMs} ms a call`;
  const prompts = promptsOf(files);
  const server = await startOpenAiServer({ latencyMs });
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'swc-bench-summaries-'));
  const runs: SummaryRun[] = [];
  const rows: string[] = [];
  const ratios: string[] = [];
  const row = (what: string, r: SummaryRun): string =>
    `| ${what} | ${input} | ${seconds(r.wall)} | ${r.calls.toLocaleString('en-US')} calls, at most ${r.maxInFlight} at once${r.hits !== undefined ? `, ${r.hits.toLocaleString('en-US')} cache hits` : ''} |`;
  try {
    process.stderr.write(`summaries through the model layer (${input}):\n`);
    const one = await driveLayer(server, prompts, low, path.join(scratch, 'layer-low'), `layer ${low}`);
    process.stderr.write(`  concurrency ${low}: ${seconds(one.wall)}\n`);
    const many = await driveLayer(server, prompts, high, path.join(scratch, 'layer-high'), `layer ${high}`);
    process.stderr.write(`  concurrency ${high}: ${seconds(many.wall)}\n`);
    const again = await driveLayer(server, prompts, high, path.join(scratch, 'layer-high'), 'layer cached');
    process.stderr.write(`  again, cached: ${seconds(again.wall)}, ${again.calls} calls\n`);
    runs.push(one, many, again);
    rows.push(
      row(`(7) model layer: endpoint + limiter + cache, concurrency ${low}`, one),
      row(`(7) model layer: endpoint + limiter + cache, concurrency ${high}`, many),
      row(`(7′) model layer, the same prompts again (cache of the concurrency ${high} run)`, again),
    );
    ratios.push(
      `| (7) concurrency ${high} speed-up over ${low} (target ≥ 6×) | ${input} | ${(one.wall / many.wall).toFixed(2)}× |`,
      `| (7′) calls made by the cached second pass (target 0) | ${input} | ${again.calls} |`,
    );
    if (options.swc !== undefined) {
      if (!hasSummarizeFlags(options.swc)) {
        process.stderr.write(`${options.swc} has no --base-url/--concurrency/--cache-dir: CLI summary rows left out\n`);
      } else {
        process.stderr.write(`swc compact --strategy summarize (${input}):\n`);
        const cli = (c: number, cache: string, label: string): Promise<SummaryRun> =>
          driveCli(
            server,
            options.swc as string,
            tree,
            c,
            path.join(scratch, cache),
            path.join(scratch, `out-${label}`),
            label,
          );
        const cOne = await cli(low, 'cli-low', 'cli-low');
        process.stderr.write(`  --concurrency ${low}: ${seconds(cOne.wall)}, ${cOne.calls} calls\n`);
        const cMany = await cli(high, 'cli-high', 'cli-high');
        process.stderr.write(`  --concurrency ${high}: ${seconds(cMany.wall)}, ${cMany.calls} calls\n`);
        const cAgain = await cli(high, 'cli-high', 'cli-again');
        process.stderr.write(`  again, cached: ${seconds(cAgain.wall)}, ${cAgain.calls} calls\n`);
        runs.push(cOne, cMany, cAgain);
        rows.push(
          row(`(8) swc compact --strategy summarize --target 2000 --concurrency ${low}`, cOne),
          row(`(8) swc compact --strategy summarize --target 2000 --concurrency ${high}`, cMany),
          row(`(8′) the same run again, same --cache-dir`, cAgain),
        );
        ratios.push(
          `| (8) --concurrency ${high} speed-up over --concurrency ${low} (target ≥ 6×) | ${input} | ${(cOne.wall / cMany.wall).toFixed(2)}× |`,
          `| (8′) calls made by the second run with the cache (target 0) | ${input} | ${cAgain.calls} |`,
        );
      }
    }
  } finally {
    await server.close();
    rmSync(scratch, { recursive: true, force: true });
  }
  return { runs, rows, ratios };
}

// Run alone: the rows for a tree (default: the bench's .bench/tree-1000, made by `npm run bench`).
if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const value = (name: string): string | undefined => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const positional = args.filter(
    (a, i) => !a.startsWith('--') && !['--summary-files', '--swc', '--latency'].includes(args[i - 1] ?? ''),
  );
  const tree = path.resolve(positional[0] ?? path.join(root, '.bench', 'tree-1000'));
  const limit = value('--summary-files');
  const swc = value('--swc');
  const latency = value('--latency');
  const result = await benchSummaries(tree, {
    ...(limit === undefined ? {} : { limit: Number(limit) }),
    ...(swc === undefined ? {} : { swc: path.resolve(swc) }),
    ...(latency === undefined ? {} : { latencyMs: Number(latency) }),
  });
  process.stdout.write(
    [
      '| what | input | wall time | calls |',
      '|---|---|---|---|',
      ...result.rows,
      '',
      '| ratio | input | value |',
      '|---|---|---|',
      ...result.ratios,
      '',
    ].join('\n'),
  );
}
