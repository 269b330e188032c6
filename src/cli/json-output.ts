import { promises as fs } from 'node:fs';
import path from 'node:path';
import { InputError, UsageError } from '../errors.js';
import { describeFsError, isInside, realTarget, writeFileAtomic } from '../io/files.js';
import { writeAll, type CliIo } from './io.js';
import type { CompactSettings } from './settings.js';

/** Where the JSON plans and reports of `swc compact` go, and the paths they may never take. */

/**
 * Refuses a --report path that would overwrite what the run reads or writes: an input, the --output, or a file in
 * the out-dir (compared by real path, so links count). An input that is swc's own earlier report is no transcript:
 * it is left out of the inputs instead, so a report kept among the inputs can be written again.
 * @param inputs the real paths of the inputs
 * @returns the report's real path when it is to be left out of the inputs, else null
 */
export async function checkReportPath(settings: CompactSettings, io: CliIo, inputs: readonly string[]): Promise<string | null> {
  if (settings.report === undefined || settings.report === '-') return null;
  const report = await realTarget(path.resolve(io.cwd, settings.report));
  if (settings.output !== undefined && settings.output !== '-' && (await realTarget(path.resolve(io.cwd, settings.output))) === report) {
    throw new UsageError(`--report ${settings.report} is also the --output file; give them different paths`);
  }
  if (settings.outDir !== undefined) {
    const outDir = await realTarget(path.resolve(io.cwd, settings.outDir));
    if (isInside(outDir, report)) throw new UsageError(`--report ${settings.report} is inside the --out-dir, where results are written; write the report elsewhere`);
  }
  if (!inputs.includes(report)) return null;
  if (inputs.length > 1 && (await isOwnReport(report))) return report;
  throw new UsageError(`--report ${settings.report} is one of the inputs, so the report would overwrite it: write the report elsewhere (or leave the file out with --ignore)`);
}

/** Whether a file is a report swc wrote (`version`, `settings`, `summary`, `files`), not a transcript. */
async function isOwnReport(file: string): Promise<boolean> {
  try {
    const doc = JSON.parse(await fs.readFile(file, 'utf8')) as Record<string, unknown> | null;
    return typeof doc === 'object' && doc !== null && typeof doc.version === 'number' && typeof doc.settings === 'object' && typeof doc.summary === 'object' && Array.isArray(doc.files);
  } catch {
    return false;
  }
}

/** Where the JSON plan or report goes: a file, stdout (dry runs), stderr, or nowhere. */
export type ReportTarget = { readonly kind: 'file'; readonly file: string } | { readonly kind: 'stdout' } | { readonly kind: 'stderr' } | null;

/** --report names a file; --json alone prints to stdout for a dry run (instead of the diff), else to stderr. */
export function reportTarget(settings: CompactSettings): ReportTarget {
  if (settings.report !== undefined) return { kind: 'file', file: settings.report };
  if (!settings.json) return null;
  return settings.dryRun ? { kind: 'stdout' } : { kind: 'stderr' };
}

/** Writes a JSON document where it was asked for. */
export async function emitJson(target: Exclude<ReportTarget, null>, document: unknown, io: CliIo): Promise<void> {
  const text = `${JSON.stringify(document, null, 2)}\n`;
  if (target.kind === 'stdout') return writeAll(io.stdout, text);
  if (target.kind === 'stderr') return writeAll(io.stderr, text);
  try {
    await writeFileAtomic(path.resolve(io.cwd, target.file), Buffer.from(text, 'utf8'), { follow: true });
  } catch (error) {
    throw new InputError(`cannot write the report: ${describeFsError(error)}`, target.file);
  }
}

