import { Chalk } from 'chalk';
import { lstatSync } from 'node:fs';
import path from 'node:path';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { InputError } from '../errors.js';
import { describeFsError, identifyFile, isRegularFile, type FileIdentity } from '../io/files.js';
import { sourceFromBytes, readSourceFile } from '../io/lines.js';
import {
  createFileCompactor,
  DEFAULT_PLACEHOLDER,
  outputBytes,
  noteTemplate,
  type FileCompactor,
  type FileResult,
  type RunOptions,
  type StoreFile,
  type SummaryReport,
  type SummaryRunner,
} from '../pipeline/index.js';
import { StrictSummaryError } from '../summarize-run.js';
import { renderDryRun } from './view/dry-run.js';
import { planDocument } from './plan-json.js';
import { counterSettingsOf, type CompactSettings } from './settings.js';
import { failedRecord, fileLine, recordOf, type FileRecord } from './report.js';
import { overTargetText, type LineContext } from './result-line.js';

/**
 * One file's work, the same in a worker thread and in the main thread: read, compact, and describe the result
 * (record, plan, diff, per-file line, output bytes). Everything returned is plain data that crosses threads.
 * Run as a worker (dist/bin/worker.js, the bundle's entry), it loads the encoding once and then takes jobs from the main
 * thread.
 */

/**
 * What every job of a run shares; sent once to each worker: the run's own settings (as resolved from the command
 * line, nothing renamed) and what the chosen reporters need of each file.
 */
export interface JobSettings
  extends
    Pick<
      CompactSettings,
      'tokenizer' | 'counter' | 'target' | 'window' | 'minKeepSteps' | 'note' | 'format' | 'conversationKey'
    >,
    Partial<
      Pick<
        CompactSettings,
        'conversationPath' | 'exact' | 'strategies' | 'minTokens' | 'placeholder' | 'config' | 'failOverTarget'
      >
    > {
  /**
   * Offloading: the store directory (absolute) and threshold; the working directory and the out-dir (its root and the
   * inputs' base), which give the folder each result is written to, that pointers are relative to.
   */
  readonly offload?:
    | {
        readonly dir: string;
        readonly over: number | undefined;
        readonly previewChars: number;
        readonly cwd: string;
        readonly outDir?: { readonly root: string; readonly base: string };
      }
    | undefined;
  /** Count every group: a plan or a dry run was asked for. */
  readonly exhaustive: boolean;
  /** Render the dry-run diff with this colour level and width. */
  readonly diff: { readonly level: 0 | 1 | 2 | 3; readonly width: number; readonly verbose?: boolean } | null;
  /** Include the plan document in the record. */
  readonly plan: boolean;
  /** Which output bytes to send back: none (check, dry run), changed files (in place), all (out-dir). */
  readonly bytes: 'none' | 'changed' | 'all';
  /** Give unchanged files a line too (a run on one named file). */
  readonly everyLine: boolean;
  /** Whether any output shows the tokens before (false: `--quiet` without JSON, so they are not counted). Default true. */
  readonly figures?: boolean;
  /** Work out what each compaction forgets: a dry run, a plan or --stat shows it. Default false. */
  readonly inventory?: boolean;
}

/** One file to do. */
export interface Job {
  readonly index: number;
  readonly file: string;
  /** The file it really is (links resolved): identified, then read. */
  readonly real?: string;
  /** The path shown in messages and records. */
  readonly display: string;
  /** Found by a directory search or a pattern (so a regular file then), not named outright. */
  readonly found?: boolean;
  /** The content, when it does not come from the file (standard input). */
  readonly content?: Uint8Array;
}

/** What a job gives back. */
export interface JobResult {
  readonly index: number;
  readonly record: FileRecord;
  /** The line for stderr, if the file is worth one. */
  readonly line: string | null;
  readonly diff: string | null;
  /** The bytes to write (the compacted output, or the input unchanged), when asked for. */
  readonly bytes: Uint8Array | null;
  /** The file as it was before it was read (null: not a regular file, or standard input): a rewrite must find it so. */
  readonly identity?: FileIdentity | null;
  /** The offload store's files to write before the output, when bytes are sent. */
  readonly stored?: readonly StoreFile[];
  /** With summarize: what the file's model calls cost, and a line per conversation whose rounds failed. */
  readonly summary?: SummaryReport;
  /** With --fail-over-target: why the file stays over its target (`over its target 2,000: …`), if it does. */
  readonly overTarget?: string;
}

/**
 * Reads, compacts and describes one file. Never throws: a file that cannot be read or parsed, or an
 * unexpected failure, comes back as a failed record.
 * @param job the file
 * @param settings the run's settings
 * @param compactor the run's compactor, its tokenizer loaded once per thread
 */
export async function processFile(job: Job, settings: JobSettings, compactor: FileCompactor): Promise<JobResult> {
  try {
    return await describeFile(job, settings, compactor);
  } catch (error) {
    // A file that cannot be read or parsed, or a bug met on it: that file fails, the run goes on.
    const record = failedRecord(job.display, error, settings.target);
    // A --strict failure still says what its calls cost.
    const summary = error instanceof StrictSummaryError ? { summary: { usage: error.usage, warnings: [] } } : {};
    return {
      index: job.index,
      record,
      line: fileLine(record, null, lineContext(settings, compactor)),
      diff: null,
      bytes: null,
      ...summary,
    };
  }
}

/** The error a path's lstat gives (a missing file, a folder that cannot be searched), or null when there is one. */
function lstatError(file: string): unknown {
  try {
    lstatSync(file);
    return null;
  } catch (error) {
    return error;
  }
}

/**
 * A file a search found was a regular file; one swapped for a FIFO since would block the read forever. One deleted
 * since says what the read would (`cannot read: no such file`), not that it changed kind.
 */
function checkStillRegular(job: Job): void {
  if (job.found !== true || isRegularFile(job.real ?? job.file)) return;
  const gone = lstatError(job.real ?? job.file);
  throw new InputError(
    gone !== null ? `cannot read: ${describeFsError(gone)}` : 'is no longer a regular file; nothing was read from it',
    job.display,
  );
}

/** The work of `processFile`; throws on a file it cannot handle. */
async function describeFile(job: Job, settings: JobSettings, compactor: FileCompactor): Promise<JobResult> {
  // Taken before reading: whatever happens to the file from here on shows when its rewrite compares.
  const identity = job.content === undefined && settings.bytes !== 'none' ? identifyFile(job.real ?? job.file) : null;
  checkStillRegular(job);
  const source =
    job.content !== undefined
      ? sourceFromBytes(job.content, job.display)
      : readSourceFile(job.real ?? job.file, job.display);
  try {
    const result = await compactor.compact(source, { home: homeOf(job, settings) });
    const described = describeResult(job, result, identity, settings, compactor);
    return result.summaries === undefined ? described : { ...described, summary: result.summaries };
  } finally {
    // Everything returned is plain data: what reading held (a decompressed spool) can go.
    source.release?.();
  }
}

/** The folder a job's result is written to: under the out-dir, else the input's (standard input: the working directory). */
function homeOf(job: Job, settings: JobSettings): string | undefined {
  const offload = settings.offload;
  if (offload === undefined) return undefined;
  if (job.content !== undefined || job.file === '-') return offload.cwd;
  if (offload.outDir !== undefined)
    return path.dirname(path.join(offload.outDir.root, path.relative(offload.outDir.base, job.file)));
  return path.dirname(job.real ?? job.file);
}

/** What a job gives back for a file's result. */
function describeResult(
  job: Job,
  result: FileResult,
  identity: FileIdentity | null,
  settings: JobSettings,
  compactor: FileCompactor,
): JobResult {
  const note = noteTemplate(settings.note);
  const target = settings.target;
  const { window } = settings;
  let record = recordOf(result, job.display, settings.target, settings.figures ?? true);
  if (settings.plan) {
    const plan = planDocument(result, {
      target,
      tokenizer: settings.tokenizer,
      counter: counterSettingsOf(settings),
      minKeepSteps: settings.minKeepSteps,
      note,
      format: settings.format,
      window,
      strategies: settings.strategies ?? ['window'],
      minTokens: settings.minTokens ?? 200,
      placeholder: settings.placeholder ?? DEFAULT_PLACEHOLDER,
      offloadOver: settings.offload?.over,
      config: settings.config,
    });
    record = { ...record, plan };
  }
  const diff =
    settings.diff === null
      ? null
      : renderDryRun(result, {
          target,
          tokenizer: compactor.tokenizer,
          minKeepSteps: settings.minKeepSteps,
          note,
          width: settings.diff.width,
          color: new Chalk({ level: settings.diff.level }),
          window,
          verbose: settings.diff.verbose === true,
          config: settings.config,
        });
  let bytes: Uint8Array | null = null;
  if (settings.bytes === 'all' || (settings.bytes === 'changed' && result.changed)) {
    bytes = outputBytes(result);
  }
  const stored = bytes !== null && result.stored.length > 0 ? { stored: result.stored } : {};
  const line =
    settings.figures === false ? null : fileLine(record, result, lineContext(settings, compactor), settings.everyLine);
  const over = settings.failOverTarget === true ? overTargetText(result, target) : null;
  return {
    index: job.index,
    record,
    line,
    diff,
    bytes,
    identity,
    ...stored,
    ...(over === null ? {} : { overTarget: over }),
  };
}

/** What a file's line says besides the result: the run's settings and the tokenizer's name. */
function lineContext(settings: JobSettings, compactor: FileCompactor): LineContext {
  return {
    tokenizer: compactor.tokenizer,
    target: settings.target,
    minKeepSteps: settings.minKeepSteps,
    window: settings.window,
    lookOnly: settings.bytes === 'none',
  };
}

/** The compactor for a run's settings: the settings every file of the run shares, the tokenizer loaded once. */
export function compactorFor(settings: JobSettings, summaries?: SummaryRunner): Promise<FileCompactor> {
  return createFileCompactor(runOptionsFor(settings), summaries);
}

/** A run's settings as the pipeline takes them. */
export function runOptionsFor(settings: JobSettings): RunOptions {
  return {
    tokenizer: settings.tokenizer,
    counterOptions: settings.counter,
    target: settings.target,
    window: settings.window ?? undefined,
    minKeepSteps: settings.minKeepSteps,
    strategies: settings.strategies,
    minTokens: settings.minTokens,
    placeholder: settings.placeholder,
    ...(settings.offload !== undefined ? { offload: settings.offload } : {}),
    note: settings.note,
    format: settings.format,
    conversationKey: settings.conversationKey,
    conversationPath: settings.conversationPath,
    exhaustive: settings.exhaustive,
    exact: settings.exact,
    inventory: settings.inventory === true,
  };
}

/** Messages from the main thread. */
export type ToWorker = { readonly type: 'job'; readonly job: Job };
/** Messages to the main thread. */
export type FromWorker =
  { readonly type: 'loaded' } | { readonly type: 'ready' } | { readonly type: 'done'; readonly result: JobResult };

/** Data a worker is started with. */
export interface WorkerInit {
  readonly swcWorker: true;
  readonly settings: JobSettings;
}

async function serve(port: NonNullable<typeof parentPort>, init: WorkerInit): Promise<void> {
  // The modules are loaded: the pool may start the next worker (module loading opens many files at once).
  port.postMessage({ type: 'loaded' } satisfies FromWorker);
  const compactor = await compactorFor(init.settings);
  port.on('message', async (message: ToWorker) => {
    const result = await processFile(message.job, init.settings, compactor);
    // The output bytes move to the main thread instead of being copied, unless they share a pooled buffer.
    const bytes = result.bytes;
    const own =
      bytes !== null &&
      bytes.byteOffset === 0 &&
      bytes.byteLength === bytes.buffer.byteLength &&
      bytes.buffer instanceof ArrayBuffer;
    port.postMessage({ type: 'done', result } satisfies FromWorker, own ? [bytes.buffer as ArrayBuffer] : []);
  });
  port.postMessage({ type: 'ready' } satisfies FromWorker);
}

const init = workerData as WorkerInit | null;
if (!isMainThread && parentPort !== null && init?.swcWorker === true) {
  await serve(parentPort, init);
}
