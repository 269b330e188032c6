import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { InputError, UsageError } from '../errors.js';
import { ChangedError, describeFsError, realTarget, writeFileAtomic, type WriteOptions } from '../io/files.js';
import { readStreamBounded } from '../io/lines.js';
import {
  expandInputs,
  isInside,
  isPattern,
  nameUnder,
  skippedStoreLine,
  unreadableFolderError,
  type Expansion,
  type InputFile,
} from '../io/expand.js';
import { defaultCacheDir } from '../io/model/index.js';
import { BackupDir } from './backup.js';
import { OutDir } from './out-dir.js';
import { PER_WORKER, WORKERS_AVAILABLE, WorkerPool } from './worker-pool.js';
import { colorLevel } from './color.js';
import { EXIT } from './exit-codes.js';
import { showsTotals } from './options.js';
import { checkReportPath, reportTarget } from './json-output.js';
import { counterSettingsOf, type CompactSettings } from './settings.js';
import type { CliIo } from './io.js';
import { createProgress, isSpinnerWanted } from './progress.js';
import {
  failedRecord,
  isUnrecognized,
  skippedLine,
  skippedRecord,
  totalsOf,
  type FileRecord,
  type ReportSettings,
} from './report.js';
import { REPORTERS, reportersFor, type Reporter, type RunContext, type RunEnd } from './reporters.js';
import { DEFAULT_PLACEHOLDER, noteTemplate, type FileCompactor, type SummaryUsage } from '../pipeline/index.js';
import { offloadStore, writeStore } from './offload.js';
import { addUsage, NO_USAGE, summaryRunner, usageLine } from '../summarize-run.js';
import { summarySourceFor } from './summary-source.js';
import { compactorFor, processFile, type Job, type JobResult, type JobSettings } from './worker.js';

/**
 * `swc compact` over many files: expand the inputs, keep this shard's files, compact them in worker threads,
 * and commit the results strictly in sorted path order (writes started, lines printed, records kept), so the
 * output, the reports and the exit code are the same whatever --jobs is. The main thread only schedules,
 * writes and reports; at most a bounded number of files is in flight, so memory and descriptors stay flat
 * on archives of any size.
 */

/** Files written at once (each write is a temporary file, a flush and a rename). */
const WRITES_IN_FLIGHT = 8;

/**
 * The shard a file belongs to: a hash of its path under the base (`/`-separated, NFC), so the split depends
 * on neither the order of the files nor the machine.
 * @returns a shard number from 1 to `count`
 */
export function shardOf(relative: string, count: number): number {
  const digest = createHash('sha256').update(relative, 'utf8').digest();
  return Number(digest.readBigUInt64BE(0) % BigInt(count)) + 1;
}

/** What the run is doing with results. */
function modeOf(settings: CompactSettings): ReportSettings['mode'] {
  if (settings.dryRun) return 'dry-run';
  if (settings.check) return 'check';
  if (settings.inPlace) return 'in-place';
  if (settings.outDir !== undefined) return 'out-dir';
  return 'stdout';
}

/** The settings part of the report. */
function reportSettings(settings: CompactSettings, tokenizer: string): ReportSettings {
  const counter = counterSettingsOf(settings);
  return {
    mode: modeOf(settings),
    tokenizer,
    target: settings.window === null ? settings.target : null,
    contextWindow: settings.window?.tokens ?? null,
    compactAt: settings.window?.compactAt.value ?? null,
    compactTo: settings.window?.compactTo.value ?? null,
    minKeepSteps: settings.minKeepSteps,
    note: noteTemplate(settings.note),
    format: settings.format,
    shard: settings.shard === null ? null : `${settings.shard.index}/${settings.shard.count}`,
    ...(counter !== null ? { counter } : {}),
    ...(settings.config !== null ? { config: settings.config } : {}),
    ...(settings.strategies.join(',') !== 'window'
      ? {
          strategies: settings.strategies,
          ...(settings.strategies.includes('prune')
            ? { minTokens: settings.minTokens, placeholder: settings.placeholder ?? DEFAULT_PLACEHOLDER }
            : {}),
          ...(settings.strategies.includes('offload') ? { offloadOver: settings.offloadOver } : {}),
        }
      : {}),
  };
}

/** Files to process and how to get each one's result. */
interface Work {
  readonly files: readonly InputFile[];
  /** The offload stores the search left out. */
  readonly skippedStores?: Expansion['skippedStores'];
  /** How many files the inputs gave before sharding. */
  readonly total: number;
  readonly base: string;
  /** The --report file's real path, resolved once (null without one). */
  readonly report: string | null;
}

async function findWork(settings: CompactSettings, io: CliIo): Promise<Work> {
  if (settings.inputs[0] === '-') {
    if (settings.shard !== null) throw new UsageError('--shard needs files; standard input is a single stream');
    const { file } = await checkReportPath(settings, io, []);
    return {
      files: [{ absolute: '-', real: '-', relative: '<stdin>', display: '<stdin>', found: false }],
      total: 1,
      base: io.cwd,
      report: file,
    };
  }
  // The run's own outputs and its summary cache are never its inputs, even when they sit among them.
  const exclude = settings.outDir === undefined ? [] : [path.resolve(io.cwd, settings.outDir)];
  const excludeNames = exclude.map(() => '--out-dir');
  if (settings.backupDir !== undefined) {
    exclude.push(path.resolve(io.cwd, settings.backupDir));
    excludeNames.push('--backup-dir');
  }
  const cache = summaryCacheDir(settings, io);
  if (cache !== null) {
    exclude.push(cache);
    excludeNames.push('--cache-dir');
  }
  if (settings.outDir !== undefined) await refuseOutDirAsInput(settings, io);
  if (settings.backupDir !== undefined) await refuseBackupDirOverInputs(settings.backupDir, settings.inputs, io);
  const expansion = await expandInputs(settings.inputs, {
    cwd: io.cwd,
    ignore: settings.ignore,
    exclude,
    excludeNames,
    base: settings.base,
  });
  const reportPath = await checkReportPath(
    settings,
    io,
    expansion.files.map((f) => f.real),
  );
  const { base } = expansion;
  const files =
    reportPath.exclude === null ? expansion.files : expansion.files.filter((f) => f.real !== reportPath.exclude);
  const shard = settings.shard;
  const mine = shard === null ? files : files.filter((f) => shardOf(f.relative, shard.count) === shard.index);
  return { files: mine, total: files.length, base, report: reportPath.file, skippedStores: expansion.skippedStores };
}

/**
 * The summary cache's folder when summarize keeps one (--cache-dir, or the default), resolved: its entries are JSON
 * files, and a dry run or --check, which never opens it, leaves them out all the same.
 */
function summaryCacheDir(settings: CompactSettings, io: CliIo): string | null {
  const s = settings.summarize;
  if (s === null || !s.cache) return null;
  return s.cacheDir !== undefined ? path.resolve(io.cwd, s.cacheDir) : defaultCacheDir(io.env);
}

/** An --out-dir that is itself one of the input directories would put every result over its input: --in-place is that. */
async function refuseOutDirAsInput(settings: CompactSettings, io: CliIo): Promise<void> {
  const outDir = await fs.realpath(path.resolve(io.cwd, settings.outDir as string)).catch(() => null);
  if (outDir === null) return;
  for (const input of settings.inputs) {
    const real = await fs.realpath(path.resolve(io.cwd, input)).catch(() => null);
    if (real === outDir && (await fs.stat(real)).isDirectory()) {
      throw new UsageError(
        `--out-dir ${settings.outDir} is the input directory ${input} itself, so every result would replace its input: use --in-place to rewrite the files there`,
      );
    }
  }
}

/**
 * A --backup-dir that holds an input (a directory, or a pattern's folder) would put backups where the inputs are; one
 * inside an input directory would be read as transcripts by the next run over it.
 */
async function refuseBackupDirOverInputs(backupDir: string, inputs: readonly string[], io: CliIo): Promise<void> {
  const backups = await realTarget(path.resolve(io.cwd, backupDir));
  for (const input of inputs) {
    const given = path.resolve(io.cwd, input);
    const stat = await fs.stat(given).catch(() => null);
    // A file named inside it is refused by the input search, which names the file.
    if (stat !== null && !stat.isDirectory()) continue;
    const real = await realTarget(stat === null && isPattern(input) ? path.resolve(io.cwd, patternRoot(input)) : given);
    if (isInside(backups, real)) {
      throw new UsageError(
        `--backup-dir ${backupDir} holds the input ${input}, so its backups would land among the inputs: choose a folder beside the inputs`,
      );
    }
    // Left out of this run, but the next run over the same folder without --backup-dir would compact the backups.
    if (isInside(real, backups)) {
      throw new UsageError(
        `--backup-dir ${backupDir} is inside the input ${input}, so a later run over it would read (and could compact) the backups: choose a folder beside the inputs`,
      );
    }
  }
}

/** The folder a glob pattern starts from (its part before the first wildcard). */
function patternRoot(pattern: string): string {
  const parts = pattern.split('/');
  const fixed = parts.slice(
    0,
    parts.findIndex((p) => isPattern(p)),
  );
  return fixed.length === 0 ? '.' : fixed.join('/');
}

/** Whether the command named exactly one file (or -): its JSON is then that file's plan, as for a single file. */
async function isSingleFile(settings: CompactSettings, io: CliIo): Promise<boolean> {
  const only = settings.inputs[0] as string;
  if (settings.inputs.length !== 1) return false;
  if (only === '-') return true;
  const stat = await fs.stat(path.resolve(io.cwd, only)).catch(() => null);
  return stat?.isFile() === true;
}

/**
 * Runs a batch.
 * @returns the exit code: 2 when any file failed, else 1 when --check found files to compact or, with
 *   --fail-over-target, a file stays over its target, else 0
 */
export async function runBatch(settings: CompactSettings, io: CliIo, report: (line: string) => void): Promise<number> {
  const started = performance.now();
  const single = await isSingleFile(settings, io);
  const work = await findWork(settings, io);
  if (settings.quiet === 0) for (const store of work.skippedStores ?? []) report(skippedStoreLine(store));
  const json = reportTarget(settings, work.report);
  const outDir =
    settings.outDir !== undefined && !settings.dryRun
      ? await OutDir.open(path.resolve(io.cwd, settings.outDir), work.base, work.files, settings.force, settings.outDir)
      : null;
  // Originals are kept before --in-place replaces them.
  const backups =
    settings.backupDir !== undefined && settings.inPlace && !settings.dryRun
      ? await BackupDir.open(path.resolve(io.cwd, settings.backupDir), work.base, settings.backupDir)
      : null;
  const reporters = reportersFor(settings, modeOf(settings), json, single);
  const store = await offloadStore(settings, io);
  const jobSettings = jobSettingsOf({ settings, io, work, store, outDir, reporters, plan: json !== null, single });
  const runner = await jobRunner(settings, io, work.files, jobSettings);
  const commit = committer({ settings, files: work.files, base: work.base, store, outDir, backups });
  const context: RunContext = {
    settings,
    io,
    single,
    json,
    reportSettings: reportSettings(settings, jobSettings.tokenizer),
    say: report,
    shown: { diffs: 0 },
  };
  const records: FileRecord[] = [];
  /** Reports one committed file, in order. */
  const emit = async (result: JobResult): Promise<void> => {
    // Every record of a report has a plan key; a failed file's is null.
    const record =
      jobSettings.plan && result.record.plan === undefined ? { ...result.record, plan: null } : result.record;
    records.push(record);
    for (const name of reporters) await (REPORTERS[name] as Reporter).file?.(result, record, records.length, context);
  };
  const progress = await createProgress(io, isSpinnerWanted(io, settings.quiet > 0 || json?.kind === 'stderr'));
  try {
    await inSortedOrder(
      work.files,
      runner,
      (result) => commit(skipUnrecognized(settings, single, result)),
      emit,
      progress,
    );
  } finally {
    progress.stop();
    await runner.close();
  }
  const { summary } = runner;
  const usage = runner.usage();
  if (summary !== null && showsTotals(settings.quiet, single))
    report(usageLine(usage, summary.summarizer === null, summary.summaryTokens));
  const totals = totalsOf(records);
  // A stand-in (a dry run, --check) calls no model: only a real call can fail the run.
  const failedCalls = summary === null || summary.summarizer === null ? 0 : usage.failed;
  let code: number =
    totals.failed > 0
      ? EXIT.error
      : failedCalls > 0
        ? EXIT.summaryFailed
        : (settings.check && totals.compacted > 0) || (settings.failOverTarget && totals.targetMissed > 0)
          ? EXIT.changesNeeded
          : EXIT.ok;
  const shard =
    settings.shard === null
      ? null
      : `${settings.shard.index}/${settings.shard.count} (${work.files.length} of ${work.total} files)`;
  const end: RunEnd = { records, totals, seconds: (performance.now() - started) / 1000, shard };
  for (const name of reporters) {
    const written = (await (REPORTERS[name] as Reporter).end?.(end, context)) ?? true;
    if (!written) code = EXIT.error;
  }
  return code;
}

/** What a batch's jobs are made with. */
interface JobContext {
  readonly settings: CompactSettings;
  readonly io: CliIo;
  readonly work: Work;
  readonly store: Awaited<ReturnType<typeof offloadStore>>;
  readonly outDir: OutDir | null;
  readonly reporters: ReturnType<typeof reportersFor>;
  /** Whether a JSON plan or report is made. */
  readonly plan: boolean;
  readonly single: boolean;
}

/** The settings every job of the run is decided with, in this thread or a worker's. */
function jobSettingsOf(c: JobContext): JobSettings {
  const { settings, io, work, store, outDir, reporters, plan, single } = c;
  return {
    tokenizer: settings.tokenizer,
    counter: settings.counter,
    target: settings.target,
    window: settings.window,
    minKeepSteps: settings.minKeepSteps,
    config: settings.config,
    strategies: settings.strategies,
    minTokens: settings.minTokens,
    placeholder: settings.placeholder,
    offload:
      store === undefined
        ? undefined
        : { ...store, cwd: io.cwd, ...(outDir !== null ? { outDir: { root: outDir.root, base: work.base } } : {}) },
    note: settings.note,
    format: settings.format,
    conversationKey: settings.conversationKey,
    conversationPath: settings.conversationPath,
    // The diff shows every group's count; the --stat lines need only the file's figures.
    exhaustive: plan || (settings.dryRun && !settings.stat),
    exact: settings.exact,
    failOverTarget: settings.failOverTarget,
    diff: reporters.includes('dry-run')
      ? {
          level: colorLevel(io.stdout, io.env, settings.color),
          width: io.stdout.isTTY ? (io.stdout.columns ?? 80) : 80,
          verbose: settings.verbose,
        }
      : null,
    plan,
    bytes: settings.dryRun || settings.check ? 'none' : settings.inPlace ? 'changed' : 'all',
    everyLine: single,
    // The tokens before are counted for the outputs that show them; errors alone do not.
    figures: reporters.some((name) => name !== 'errors' && name !== 'check-paths'),
    // What a compaction forgets is shown by dry runs (diff and --stat) and plans; a plain run never works it out.
    inventory: settings.dryRun || plan,
  };
}

/** Runs a batch's jobs: in worker threads, or in this thread (standard input, summarize). */
interface JobRunner {
  run(index: number): Promise<JobResult>;
  readonly workers: number;
  /** Where summaries come from, with summarize; null otherwise. */
  readonly summary: Awaited<ReturnType<typeof summarySourceFor>>;
  /** What the model calls cost so far. */
  usage(): SummaryUsage;
  close(): Promise<void>;
}

/** The runner of a batch's jobs, its pool started (none for standard input or summarize). */
async function jobRunner(
  settings: CompactSettings,
  io: CliIo,
  files: readonly InputFile[],
  jobSettings: JobSettings,
): Promise<JobRunner> {
  const stdin = files[0]?.absolute === '-';
  // Summarize runs in this thread: its files wait on the model, and their calls share one limiter (--concurrency).
  const summary = await summarySourceFor(settings, io, io.summarizer);
  const summaries = summary === null ? undefined : summaryRunner(summary);
  let usage = NO_USAGE;
  const workers = stdin || summary !== null || !WORKERS_AVAILABLE ? 0 : Math.min(settings.jobs, files.length);
  const pool =
    workers > 0 ? new WorkerPool(workers, { swcWorker: true, settings: jobSettings }, settings.target) : null;
  let compactor: FileCompactor | null = stdin ? await compactorFor(jobSettings, summaries) : null;
  const inThisThread = async (): Promise<FileCompactor> => (compactor ??= await compactorFor(jobSettings, summaries));
  /** A job of this thread, with what its summaries cost added to the run's. */
  const here = async (job: Job): Promise<JobResult> => {
    const result = await processFile(job, jobSettings, await inThisThread());
    if (result.summary !== undefined) {
      usage = addUsage(usage, result.summary.usage);
      for (const warning of result.summary.warnings) io.stderr.write(`swc: warning: ${warning}\n`);
    }
    return result;
  };
  const run = async (index: number): Promise<JobResult> => {
    const file = files[index] as InputFile;
    if (file.absolute === '-') {
      const content = await readStreamBounded(io.stdin);
      return here({ index, file: '-', display: file.display, content });
    }
    if (file.unreadable !== undefined) {
      // A folder the search could not read fails as an unreadable file does; the run goes on.
      const record = failedRecord(file.display, unreadableFolderError(file), settings.target);
      return { index, record, line: `swc: ${record.error?.message}`, diff: null, bytes: null };
    }
    const job: Job = { index, file: file.absolute, real: file.real, display: file.display, found: file.found };
    if (pool === null) return here(job);
    // A pool none of whose workers could start (a low open-file or memory limit) leaves the work to this thread.
    return pool.run(job).catch(async () => here(job));
  };
  return { run, workers, summary, usage: () => usage, close: async () => pool?.close() };
}

/**
 * Runs every file's job, a bounded number ahead, and commits and reports the results strictly in sorted order: writes
 * start in that order, a few overlap, and they are reported in the same order.
 */
async function inSortedOrder(
  files: readonly InputFile[],
  runner: JobRunner,
  commit: (result: JobResult) => Promise<JobResult>,
  emit: (result: JobResult) => Promise<void>,
  progress: Awaited<ReturnType<typeof createProgress>>,
): Promise<void> {
  const inFlight: Array<Promise<JobResult> | undefined> = new Array(files.length);
  const lookahead = Math.max(32, runner.workers * PER_WORKER * 4);
  const writing: Array<Promise<JobResult>> = [];
  let dispatched = 0;
  for (let i = 0; i < files.length; i++) {
    while (dispatched < files.length && dispatched < i + lookahead) {
      const job = runner.run(dispatched);
      // Only a pool that cannot start rejects; the first rejection awaited stops the run, the rest are moot.
      job.catch(() => undefined);
      inFlight[dispatched] = job;
      dispatched++;
    }
    progress.update(i, files.length, (files[i] as InputFile).display);
    const result = await (inFlight[i] as Promise<JobResult>);
    inFlight[i] = undefined;
    writing.push(commit(result));
    while (writing.length >= WRITES_IN_FLIGHT) await emit(await (writing.shift() as Promise<JobResult>));
  }
  while (writing.length > 0) await emit(await (writing.shift() as Promise<JobResult>));
}

/**
 * With --skip-unrecognized, a file in which no conversation was found is skipped, not failed: counted apart, and
 * given a line only by --verbose or a run on that one file.
 */
function skipUnrecognized(settings: CompactSettings, single: boolean, result: JobResult): JobResult {
  if (!settings.skipUnrecognized || !isUnrecognized(result.record)) return result;
  const record = skippedRecord(result.record);
  return { ...result, record, line: (single || settings.verbose) && settings.quiet === 0 ? skippedLine(record) : null };
}

/** Where a batch writes its results. */
interface Destinations {
  readonly settings: CompactSettings;
  readonly files: readonly InputFile[];
  readonly base: string;
  readonly store: Awaited<ReturnType<typeof offloadStore>>;
  readonly outDir: OutDir | null;
  readonly backups: BackupDir | null;
}

/** Writes a result where it belongs; a write that fails turns the record into a failure, the original intact. */
function committer(d: Destinations): (result: JobResult) => Promise<JobResult> {
  const { settings, files, store, outDir, backups } = d;
  return async (result) => {
    const file = files[result.index] as InputFile;
    if (result.record.status === 'failed' || result.record.status === 'skipped' || result.bytes === null) return result;
    try {
      // The store files first, flushed: a transcript never points at a result that is not there.
      if (store !== undefined && (result.stored?.length ?? 0) > 0)
        await writeStore(result.stored ?? [], store.dir, file.display);
      if (outDir !== null) {
        const dest = await outDir.destination(file, result.bytes);
        if (dest !== null)
          await writeOrFail(dest.path, outDir.shown(dest.path), result.bytes, file, {
            realDir: dest.realDir,
            durable: false,
            mode: result.identity?.mode,
          });
        // Named under the out-dir as it was typed, as the inputs are.
        return {
          ...result,
          record: {
            ...result.record,
            written: nameUnder(settings.outDir as string, path.relative(d.base, file.absolute)),
          },
        };
      }
      if (settings.inPlace && result.record.status === 'compacted') {
        if (result.identity === null || result.identity === undefined)
          throw new InputError(
            'is not a regular file; --in-place only rewrites regular files (the original is unchanged)',
            file.display,
          );
        if (backups !== null) await backups.keep(file, result.identity);
        await writeOrFail(file.real, file.display, result.bytes, file, { expect: result.identity, durable: true });
        return { ...result, record: { ...result.record, written: file.display } };
      }
      return result;
    } catch (error) {
      const record = { ...failedRecord(file.display, error, settings.target), format: result.record.format };
      return { ...result, record, line: `swc: ${record.error?.message}`, diff: null };
    }
  };
}

/** Writes atomically, turning a file-system error into the file's InputError (naming `dest` as `shown`). */
async function writeOrFail(
  dest: string,
  shown: string,
  bytes: Uint8Array,
  file: InputFile,
  options: WriteOptions,
): Promise<void> {
  try {
    await writeFileAtomic(dest, bytes, options);
  } catch (error) {
    if (error instanceof ChangedError)
      throw new InputError(`${error.message}; nothing was written for it`, file.display);
    throw new InputError(`cannot write ${shown}: ${describeFsError(error)} (the original is unchanged)`, file.display);
  }
}
