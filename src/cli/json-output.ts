import { promises as fs } from 'node:fs';
import path from 'node:path';
import { InputError, UsageError } from '../errors.js';
import { describeFsError, isInside, realTarget, writeFileAtomic } from '../io/files.js';
import { writeAll, type CliIo } from './io.js';
import type { CompactSettings } from './settings.js';

/** Where the JSON plans and reports of `swc compact` go, and the paths they may never take. */

/** What checking the --report path found. */
export interface ReportPath {
  /** The report file's real path, resolved once (null without a report file). */
  readonly file: string | null;
  /** An input to leave out: swc's own earlier report kept among the inputs. */
  readonly exclude: string | null;
}

/**
 * Resolves the --report path once and refuses one that would overwrite what the run reads or writes: an input, the
 * --output, or a file in the out-dir (compared by real path, so links count). An input that is swc's own earlier
 * report is left out of the inputs instead, so a report kept among the inputs can be written again.
 * @param inputs the real paths of the inputs
 */
export async function checkReportPath(
  settings: CompactSettings,
  io: CliIo,
  inputs: readonly string[],
): Promise<ReportPath> {
  if (settings.report === undefined) return { file: null, exclude: null };
  const stream = standardStream(settings.report);
  if (
    stream === 'stdout' &&
    (settings.output === undefined || standardStream(settings.output) === 'stdout') &&
    !settings.check &&
    !settings.dryRun &&
    !settings.inPlace &&
    settings.outDir === undefined
  ) {
    throw new UsageError(
      `--report ${settings.report} would put the report into the transcript on standard output: use --json, or -o for the transcript`,
    );
  }
  if (stream !== null) return { file: null, exclude: null };
  const report = await realTarget(path.resolve(io.cwd, settings.report));
  if (
    settings.output !== undefined &&
    standardStream(settings.output) === null &&
    (await realTarget(path.resolve(io.cwd, settings.output))) === report
  ) {
    throw new UsageError(`--report ${settings.report} is also the --output file; give them different paths`);
  }
  if (settings.outDir !== undefined) {
    const outDir = await realTarget(path.resolve(io.cwd, settings.outDir));
    if (isInside(outDir, report))
      throw new UsageError(
        `--report ${settings.report} is inside the --out-dir, where results are written; write the report elsewhere`,
      );
  }
  if (!inputs.includes(report)) return { file: report, exclude: null };
  if (inputs.length > 1 && (await isOwnReport(report))) return { file: report, exclude: report };
  throw new UsageError(
    `--report ${settings.report} is one of the inputs, so the report would overwrite it: write the report elsewhere (or leave the file out with --ignore)`,
  );
}

/** The modes a report records. */
const MODES = new Set(['stdout', 'in-place', 'out-dir', 'check', 'dry-run']);

/**
 * Whether a file is a batch report swc wrote: an object of exactly `version`, `settings` (with a mode swc writes),
 * `summary` and `files`, each file a record with a path and a status. Anything else may be a transcript.
 */
async function isOwnReport(file: string): Promise<boolean> {
  try {
    const doc = JSON.parse(await fs.readFile(file, 'utf8')) as Record<string, unknown> | null;
    if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return false;
    const keys = Object.keys(doc).sort().join(',');
    const settings = doc.settings as Record<string, unknown> | null;
    const files = doc.files;
    return (
      keys === 'files,settings,summary,version' &&
      typeof doc.version === 'number' &&
      typeof settings === 'object' &&
      settings !== null &&
      MODES.has(settings.mode as string) &&
      Array.isArray(files) &&
      files.every(
        (f) =>
          typeof f === 'object' &&
          f !== null &&
          typeof (f as Record<string, unknown>).path === 'string' &&
          typeof (f as Record<string, unknown>).status === 'string',
      )
    );
  } catch {
    return false;
  }
}

/** Where the JSON plan or report goes: a file (resolved once, when the run starts), stdout, stderr, or nowhere. */
export type ReportTarget =
  | { readonly kind: 'file'; readonly file: string; readonly shown: string }
  | { readonly kind: 'stdout' }
  | { readonly kind: 'stderr' }
  | null;

const STDOUT_NAMES = new Set(['-', '/dev/stdout', '/dev/fd/1', '/proc/self/fd/1']);
const STDERR_NAMES = new Set(['/dev/stderr', '/dev/fd/2', '/proc/self/fd/2']);

/**
 * The standard stream a path names (`-`, `/dev/stdout`, `/dev/stderr`, `/dev/fd/1`…), written into as the stream
 * swc holds, never opened by name: opening it would truncate a file the shell appends to, and replacing it would
 * replace the link in /dev.
 */
export function standardStream(file: string): 'stdout' | 'stderr' | null {
  if (STDOUT_NAMES.has(file)) return 'stdout';
  if (STDERR_NAMES.has(file)) return 'stderr';
  return null;
}

/**
 * Whether standard output carries the transcript: a run on one input with no batch option and no --output file.
 * `--check`, `--dry-run`, `--in-place`, `--out-dir` and `-o FILE` leave it free.
 */
export function isTranscriptOnStdout(settings: CompactSettings): boolean {
  if (settings.check || settings.dryRun || settings.inPlace || settings.outDir !== undefined) return false;
  return settings.output === undefined || standardStream(settings.output) === 'stdout';
}

/**
 * --report names a file (or a standard stream); --json alone prints to stdout (instead of a dry run's diff or a
 * check's list of paths), or to stderr when stdout carries the transcript.
 * @param resolved the report file's real path, as `checkReportPath` resolved it
 */
export function reportTarget(settings: CompactSettings, resolved?: string | null): ReportTarget {
  if (settings.report !== undefined) {
    const stream = standardStream(settings.report);
    if (stream !== null) return { kind: stream };
    return { kind: 'file', file: resolved ?? settings.report, shown: settings.report };
  }
  if (!settings.json) return null;
  return isTranscriptOnStdout(settings) ? { kind: 'stderr' } : { kind: 'stdout' };
}

/** Writes a JSON document where it was asked for; a report file is replaced atomically, never written through a link. */
export async function emitJson(target: Exclude<ReportTarget, null>, document: unknown, io: CliIo): Promise<void> {
  const text = `${JSON.stringify(document, null, 2)}\n`;
  if (target.kind === 'stdout') return writeAll(io.stdout, text);
  if (target.kind === 'stderr') return writeAll(io.stderr, text);
  try {
    await writeFileAtomic(path.resolve(io.cwd, target.file), Buffer.from(text, 'utf8'), {
      realDir: path.dirname(target.file),
    });
  } catch (error) {
    throw new InputError(`cannot write the report: ${describeFsError(error)}`, target.shown);
  }
}
