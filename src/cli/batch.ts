import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { InputError, UsageError } from '../errors.js';
import { ChangedError, describeFsError, realTarget, writeFileAtomic, type WriteOptions } from '../io/files.js';
import { ConfinedFolders } from '../io/folders.js';
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
import { colorLevel } from './color.js';
import { EXIT } from './exit-codes.js';
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
import { DEFAULT_PLACEHOLDER, noteTemplate, type FileCompactor } from '../pipeline/index.js';
import { offloadStore, writeStore } from './offload.js';
import {
  addUsage,
  createSummarizingCompactor,
  NO_USAGE,
  usageLine,
  type SummarizingCompactor,
} from '../summarize-run.js';
import { summarySourceFor } from './summary-source.js';
import {
  compactorFor,
  processFile,
  processFileAsync,
  runOptionsFor,
  type FromWorker,
  type Job,
  type JobResult,
  type JobSettings,
  type WorkerInit,
} from './worker.js';

/**
 * `swc compact` over many files: expand the inputs, keep this shard's files, compact them in worker threads,
 * and commit the results strictly in sorted path order (writes started, lines printed, records kept), so the
 * output, the reports and the exit code are the same whatever --jobs is. The main thread only schedules,
 * writes and reports; at most a bounded number of files is in flight, so memory and descriptors stay flat
 * on archives of any size.
 */

/**
 * The worker's module: beside this one when built (the bundle's `worker.js` entry in dist/bin, or dist/cli/worker.js
 * compiled); the compiled copy when this runs from its TypeScript source (tests).
 */
const WORKER_URL = import.meta.url.endsWith('.ts')
  ? new URL('../../dist/cli/worker.js', import.meta.url)
  : new URL('./worker.js', import.meta.url);

/** Jobs a worker holds at once: one running, one waiting, so it never idles between files. */
const PER_WORKER = 2;
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

/** A job that went to a worker and is not back yet. */
interface Pending {
  readonly job: Job;
  readonly resolve: (result: JobResult) => void;
  readonly reject: (error: Error) => void;
}

interface PoolWorker {
  readonly worker: Worker;
  ready: boolean;
  readonly running: Map<number, Pending>;
}

/** A fixed set of worker threads, each loading the tokenizer once and taking jobs as it frees up. */
class WorkerPool {
  private readonly workers: PoolWorker[] = [];
  private readonly queue: Pending[] = [];
  private respawns = 0;
  /** How many of the pool's first workers have been started. */
  private started = 1;
  private fatal: Error | null = null;
  private closed = false;

  constructor(
    private readonly size: number,
    private readonly init: WorkerInit,
    private readonly target: number,
  ) {
    // One at a time: a worker loading its modules opens dozens of files at once, and several together can pass a low
    // open-file limit (`ulimit -n 64`). The next starts as soon as the previous has its modules, so the encodings
    // still load side by side.
    this.workers.push(this.spawn());
  }

  /** Runs a job; resolves with its result (a failed record when its worker died), never rejects unless no worker can start. */
  run(job: Job): Promise<JobResult> {
    if (this.fatal !== null) return Promise.reject(this.fatal);
    return new Promise<JobResult>((resolve, reject) => {
      this.queue.push({ job, resolve, reject });
      this.pump();
    });
  }

  /** Stops every worker. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.workers.map((w) => w.worker.terminate()));
  }

  private spawn(): PoolWorker {
    const worker = new Worker(WORKER_URL, { workerData: this.init });
    const slot: PoolWorker = { worker, ready: false, running: new Map() };
    worker.on('message', (message: FromWorker) => {
      if (message.type === 'loaded') {
        if (!this.closed && this.fatal === null && this.started < this.size) {
          this.started++;
          this.workers.push(this.spawn());
        }
      } else if (message.type === 'ready') {
        slot.ready = true;
      } else {
        const pending = slot.running.get(message.result.index);
        slot.running.delete(message.result.index);
        pending?.resolve(message.result);
      }
      this.pump();
    });
    const lost = (reason: string): void => {
      if (this.closed || !this.workers.includes(slot)) return;
      this.workers.splice(this.workers.indexOf(slot), 1);
      // A worker takes its jobs in order, so the oldest one it held is the one it died on: that file fails; the
      // ones waiting behind it go back to the queue, so the outcome does not depend on which worker held them.
      const [culprit, ...waiting] = slot.running.values();
      slot.running.clear();
      this.queue.unshift(...waiting);
      if (culprit !== undefined) {
        const record = failedRecord(
          culprit.job.display,
          new Error(`the worker thread stopped: ${reason}`),
          this.target,
        );
        culprit.resolve({
          index: culprit.job.index,
          record,
          line: `swc: ${record.error?.message}`,
          diff: null,
          bytes: null,
        });
      }
      // A worker that cannot start (a low open-file or memory limit) leaves the work to those that did.
      if (!slot.ready && this.workers.length > 0) {
        this.pump();
        return;
      }
      if (!slot.ready || this.respawns >= this.size + 16) {
        // A worker that cannot even start (or keeps dying) will not do better next time: stop the run.
        this.fatal = new Error(`cannot start a worker thread: ${reason}`);
        for (const pending of this.queue.splice(0)) pending.reject(this.fatal);
        for (const other of this.workers) for (const pending of other.running.values()) pending.reject(this.fatal);
        return;
      }
      this.respawns++;
      this.workers.push(this.spawn());
      this.pump();
    };
    worker.on('error', (error) => lost(error.message));
    worker.on('exit', (code) => lost(`exited with code ${code}`));
    return slot;
  }

  private pump(): void {
    for (const slot of this.workers) {
      while (slot.ready && slot.running.size < PER_WORKER && this.queue.length > 0) {
        const pending = this.queue.shift() as Pending;
        slot.running.set(pending.job.index, pending);
        slot.worker.postMessage({ type: 'job', job: pending.job });
      }
    }
  }
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

/** A checked place for a result under the out-dir. */
interface Destination {
  readonly path: string;
  /** The real folder it is in, which must still be so right before the rename. */
  readonly realDir: string;
}

/**
 * Places results under the out-dir without ever leaving it: every directory on the way is created one level at
 * a time, and one that is a symbolic link must lead back inside; an existing symbolic link is never written through.
 * A destination that is an input (by inode, so links and hard links count) is never replaced; one that exists with
 * other content is replaced only with --force.
 */
class OutDir {
  private readonly folders: ConfinedFolders;
  private constructor(
    readonly root: string,
    realRoot: string,
    private readonly base: string,
    private readonly inputs: ReadonlySet<string>,
    private readonly force: boolean,
  ) {
    this.folders = new ConfinedFolders(root, realRoot, 'the out-dir');
  }

  static async open(dir: string, base: string, files: readonly InputFile[], force: boolean): Promise<OutDir> {
    try {
      await fs.mkdir(dir, { recursive: true });
    } catch (error) {
      throw new UsageError(`cannot create the out-dir ${dir}: ${describeFsError(await mkdirError(dir, error))}`);
    }
    const realRoot = await fs.realpath(dir);
    const realBase = await fs.realpath(base).catch(() => base);
    if (realRoot === realBase)
      throw new UsageError(
        "--out-dir is the inputs' base directory itself, so it would overwrite them: use --in-place for that, or another directory",
      );
    const stats = await Promise.all(files.map((f) => fs.stat(f.real).catch(() => null)));
    const inputs = new Set(stats.flatMap((st) => (st === null ? [] : [inodeKey(st)])));
    return new OutDir(path.resolve(dir), realRoot, base, inputs, force);
  }

  /**
   * The checked place a file's result goes to, or null when the same result is already there.
   * @throws InputError when writing there would overwrite an input or a file that is not this result
   */
  async destination(file: InputFile, bytes: Uint8Array): Promise<Destination | null> {
    const rel = path.relative(this.base, file.absolute);
    if (rel === '' || !isInside(this.base, file.absolute))
      throw new InputError('is outside the base directory; refusing to write outside the out-dir', file.display);
    const dest = path.join(this.root, rel);
    if (!isInside(this.root, dest) || dest === this.root)
      throw new InputError('would land outside the out-dir; refusing', file.display);
    const realDir = await this.folders.ensure(path.dirname(dest), file.display);
    const stat = await fs.lstat(dest).catch(() => null);
    if (stat === null) return { path: dest, realDir };
    if (stat.isSymbolicLink())
      throw new InputError(`${dest} is a symbolic link; refusing to write through it`, file.display);
    if (stat.isDirectory()) throw new InputError(`${dest} is a directory`, file.display);
    // A FIFO or device there is never written into, even with --force: only regular files are replaced.
    if (!stat.isFile()) throw new InputError(`${dest} is not a regular file; refusing to write into it`, file.display);
    if (this.inputs.has(inodeKey(stat)))
      throw new InputError(`its out-dir path ${dest} is one of the inputs; refusing to overwrite it`, file.display);
    if (stat.isFile() && stat.size === bytes.length && (await fs.readFile(dest)).equals(bytes)) return null;
    if (!this.force)
      throw new InputError(
        `${dest} already exists with other content; refusing to replace it (add --force to replace files in the out-dir)`,
        file.display,
      );
    return { path: dest, realDir };
  }
}

/**
 * Why a directory could not be made: a recursive mkdir can report a missing parent where the real cause is that the
 * nearest existing ancestor refuses a new entry (a read-only file system), so that one step is tried alone.
 */
async function mkdirError(dir: string, error: unknown): Promise<unknown> {
  if ((error as NodeJS.ErrnoException | undefined)?.code !== 'ENOENT') return error;
  let child = dir;
  let parent = path.dirname(dir);
  while (parent !== child && (await fs.stat(parent).catch(() => null)) === null) {
    child = parent;
    parent = path.dirname(parent);
  }
  return fs.mkdir(child).then(
    () => error,
    (cause: unknown) => cause,
  );
}

/** A file's device and inode: the same for every path (link, hard link) that leads to it. */
function inodeKey(stat: { dev: number; ino: number }): string {
  return `${stat.dev}:${stat.ino}`;
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
 * @returns the exit code: 2 when any file failed, else 1 when --check found files to compact, else 0
 */
export async function runBatch(settings: CompactSettings, io: CliIo, report: (line: string) => void): Promise<number> {
  const started = performance.now();
  const single = await isSingleFile(settings, io);
  const work = await findWork(settings, io);
  if (!settings.quiet) for (const store of work.skippedStores ?? []) report(skippedStoreLine(store));
  const json = reportTarget(settings, work.report);
  const mode = modeOf(settings);
  const outDir =
    settings.outDir !== undefined && !settings.dryRun
      ? await OutDir.open(path.resolve(io.cwd, settings.outDir), work.base, work.files, settings.force)
      : null;
  // Originals are kept before --in-place replaces them.
  const backups =
    settings.backupDir !== undefined && settings.inPlace && !settings.dryRun
      ? await BackupDir.open(path.resolve(io.cwd, settings.backupDir), work.base)
      : null;
  const reporters = reportersFor(settings, mode, json, single);
  const store = await offloadStore(settings, io);
  const jobSettings: JobSettings = {
    tokenizer: settings.tokenizer,
    counter: settings.counter,
    target: settings.target,
    window: settings.window,
    minKeepSteps: settings.minKeepSteps,
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
    exhaustive: json !== null || (settings.dryRun && !settings.stat),
    exact: settings.exact,
    diff: reporters.includes('dry-run')
      ? {
          level: colorLevel(io.stdout, io.env, settings.color),
          width: io.stdout.isTTY ? (io.stdout.columns ?? 80) : 80,
          verbose: settings.verbose,
        }
      : null,
    plan: json !== null,
    bytes: settings.dryRun || settings.check ? 'none' : settings.inPlace ? 'changed' : 'all',
    everyLine: single,
    // The tokens before are counted for the outputs that show them; errors alone do not.
    figures: reporters.some((name) => name !== 'errors' && name !== 'check-paths'),
    // What a compaction forgets is shown by dry runs (diff and --stat) and plans; a plain run never works it out.
    inventory: settings.dryRun || json !== null,
  };

  const files = work.files;
  const stdin = files[0]?.absolute === '-';
  // Summarize runs in this thread: its files wait on the model, and their calls share one limiter (--concurrency).
  const summary = await summarySourceFor(settings, io, io.summarizer);
  const summarizing: SummarizingCompactor | null =
    summary === null ? null : await createSummarizingCompactor(runOptionsFor(jobSettings), summary);
  let usage = NO_USAGE;
  const workers = stdin || summarizing !== null ? 0 : Math.min(settings.jobs, files.length);
  const pool =
    workers > 0 ? new WorkerPool(workers, { swcWorker: true, settings: jobSettings }, settings.target) : null;
  let compactor: FileCompactor | null = stdin ? await compactorFor(jobSettings) : null;
  const inThisThread = async (): Promise<FileCompactor> => (compactor ??= await compactorFor(jobSettings));
  const progress = await createProgress(io, isSpinnerWanted(io, settings.quiet || json?.kind === 'stderr'));
  const records: FileRecord[] = [];

  const runJob = async (index: number): Promise<JobResult> => {
    const file = files[index] as InputFile;
    if (summarizing !== null) {
      const job: Job =
        file.absolute === '-'
          ? { index, file: '-', display: file.display, content: await readStreamBounded(io.stdin) }
          : { index, file: file.absolute, real: file.real, display: file.display, found: file.found };
      const result = await processFileAsync(job, jobSettings, await inThisThread(), summarizing);
      if (result.summary !== undefined) {
        usage = addUsage(usage, result.summary.usage);
        for (const warning of result.summary.warnings) io.stderr.write(`swc: warning: ${warning}\n`);
      }
      return result;
    }
    if (file.absolute === '-') {
      const content = await readStreamBounded(io.stdin);
      return processFile({ index, file: '-', display: file.display, content }, jobSettings, await inThisThread());
    }
    if (file.unreadable !== undefined) {
      // A folder the search could not read fails as an unreadable file does; the run goes on.
      const record = failedRecord(file.display, unreadableFolderError(file), settings.target);
      return { index, record, line: `swc: ${record.error?.message}`, diff: null, bytes: null };
    }
    const job: Job = { index, file: file.absolute, real: file.real, display: file.display, found: file.found };
    // A pool none of whose workers could start (a low open-file or memory limit) leaves the work to this thread.
    return (pool as WorkerPool).run(job).catch(async () => processFile(job, jobSettings, await inThisThread()));
  };

  /**
   * With --skip-unrecognized, a file in which no conversation was found is skipped, not failed: counted apart, and
   * given a line only by --verbose or a run on that one file.
   */
  const skipUnrecognized = (result: JobResult): JobResult => {
    if (!settings.skipUnrecognized || !isUnrecognized(result.record)) return result;
    const record = skippedRecord(result.record);
    return { ...result, record, line: (single || settings.verbose) && !settings.quiet ? skippedLine(record) : null };
  };

  /** Writes a result where it belongs; a write that fails turns the record into a failure, the original intact. */
  const commit = async (result: JobResult): Promise<JobResult> => {
    const file = files[result.index] as InputFile;
    if (result.record.status === 'failed' || result.record.status === 'skipped' || result.bytes === null) return result;
    try {
      // The store files first, flushed: a transcript never points at a result that is not there.
      if (store !== undefined && (result.stored?.length ?? 0) > 0)
        await writeStore(result.stored ?? [], store.dir, file.display);
      if (outDir !== null) {
        const dest = await outDir.destination(file, result.bytes);
        if (dest !== null)
          await writeOrFail(dest.path, result.bytes, file, {
            realDir: dest.realDir,
            durable: false,
            mode: result.identity?.mode,
          });
        // Named under the out-dir as it was typed, as the inputs are.
        return {
          ...result,
          record: {
            ...result.record,
            written: nameUnder(settings.outDir as string, path.relative(work.base, file.absolute)),
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
        await writeOrFail(file.real, result.bytes, file, { expect: result.identity, durable: true });
        return { ...result, record: { ...result.record, written: file.display } };
      }
      return result;
    } catch (error) {
      const record = { ...failedRecord(file.display, error, settings.target), format: result.record.format };
      return { ...result, record, line: `swc: ${record.error?.message}`, diff: null };
    }
  };

  const context: RunContext = {
    settings,
    io,
    single,
    json,
    reportSettings: reportSettings(settings, jobSettings.tokenizer),
    say: report,
    shown: { diffs: 0 },
  };
  /** Reports one committed file, in order. */
  const emit = async (result: JobResult): Promise<void> => {
    // Every record of a report has a plan key; a failed file's is null.
    const record =
      jobSettings.plan && result.record.plan === undefined ? { ...result.record, plan: null } : result.record;
    records.push(record);
    for (const name of reporters) await (REPORTERS[name] as Reporter).file?.(result, record, records.length, context);
  };

  try {
    const inFlight: Array<Promise<JobResult> | undefined> = new Array(files.length);
    const lookahead = Math.max(32, workers * PER_WORKER * 4);
    const writing: Array<Promise<JobResult>> = [];
    let dispatched = 0;
    for (let i = 0; i < files.length; i++) {
      while (dispatched < files.length && dispatched < i + lookahead) {
        const job = runJob(dispatched);
        // Only a pool that cannot start rejects; the first rejection awaited stops the run, the rest are moot.
        job.catch(() => undefined);
        inFlight[dispatched] = job;
        dispatched++;
      }
      progress.update(i, files.length, (files[i] as InputFile).display);
      const result = await (inFlight[i] as Promise<JobResult>);
      inFlight[i] = undefined;
      // Writes start in sorted order; a few overlap, and they are reported in the same order.
      writing.push(commit(skipUnrecognized(result)));
      while (writing.length >= WRITES_IN_FLIGHT) await emit(await (writing.shift() as Promise<JobResult>));
    }
    while (writing.length > 0) await emit(await (writing.shift() as Promise<JobResult>));
  } finally {
    progress.stop();
    await pool?.close();
  }

  if (summary !== null && !settings.quiet) report(usageLine(usage, summary.summarizer === null, summary.summaryTokens));
  const totals = totalsOf(records);
  // A stand-in (a dry run, --check) calls no model: only a real call can fail the run.
  const failedCalls = summary === null || summary.summarizer === null ? 0 : usage.failed;
  let code: number =
    totals.failed > 0
      ? EXIT.error
      : failedCalls > 0
        ? EXIT.summaryFailed
        : settings.check && totals.compacted > 0
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

/** Writes atomically, turning a file-system error into the file's InputError. */
async function writeOrFail(dest: string, bytes: Uint8Array, file: InputFile, options: WriteOptions): Promise<void> {
  try {
    await writeFileAtomic(dest, bytes, options);
  } catch (error) {
    if (error instanceof ChangedError)
      throw new InputError(`${error.message}; nothing was written for it`, file.display);
    throw new InputError(`cannot write ${dest}: ${describeFsError(error)} (the original is unchanged)`, file.display);
  }
}
