import type { ChalkInstance } from 'chalk';
import { escapeForLine } from '../errors.js';
import { colorFor } from './color.js';
import { emitLine } from './view/layout.js';
import {
  hasErrors,
  inspectDocument,
  inspectRunDocument,
  inspectTotalLine,
  inspectTotals,
  renderInspect,
  renderProblems,
  type Inspected,
} from './view/inspect.js';
import { writeAll, type CliIo } from './io.js';
import { emitJson, type ReportTarget } from './json-output.js';
import {
  recordError,
  reportDocument,
  summaryLine,
  type FileRecord,
  type ReportSettings,
  type Totals,
} from './report.js';
import { showsTotals, type QuietLevel } from './options.js';
import type { CompactSettings } from './settings.js';
import { isStatShown, renderStat } from './view/stat.js';
import type { JobResult } from './worker.js';

/**
 * The outputs of a `swc compact` run over files, each a reporter with one job: a committed file's result (or the
 * run's records) in, text out. The runner looks them up by name from `reportersFor` and calls them in that order; it
 * holds no output logic of its own.
 */

/** What every reporter of a run may read. */
export interface RunContext {
  readonly settings: CompactSettings;
  readonly io: CliIo;
  /** The command named one file (or -): its JSON is that file's plan, and it gets a line even when unchanged. */
  readonly single: boolean;
  /** Where the JSON goes, or null. */
  readonly json: ReportTarget;
  /** The report's settings part (mode, tokenizer, thresholds, shard). */
  readonly reportSettings: ReportSettings;
  /** Writes one line to stderr. */
  readonly say: (line: string) => void;
  /** What the reporters have shown so far (a diff after another is a blank line apart). */
  readonly shown: { diffs: number };
}

/** What the run knows when the last file is done. */
export interface RunEnd {
  readonly records: readonly FileRecord[];
  readonly totals: Totals;
  readonly seconds: number;
  /** `2/4 (31 of 120 files)`, or null without --shard. */
  readonly shard: string | null;
}

/** One output of a run. */
export interface Reporter {
  /** Called for each committed file, in sorted path order; `count` is how many files were reported so far, this one included. */
  file?(result: JobResult, record: FileRecord, count: number, ctx: RunContext): Promise<void>;
  /** Called once after the last file. @returns false when the output could not be written (the run then exits 2) */
  end?(run: RunEnd, ctx: RunContext): Promise<boolean>;
}

/** Every reporter, by name. */
export const REPORTERS = {
  /** A failed file's one-line error on stderr; a skipped file's line when the run gave it one (--verbose, one file). */
  errors: {
    async file(result, record, _count, ctx) {
      if (record.status === 'failed') ctx.say(result.line ?? `swc: ${record.path}: failed`);
      else if (record.status === 'skipped' && result.line !== null) ctx.say(result.line);
    },
  },
  /** Each file's outcome line on stderr (files that changed, or missed their target). */
  'file-lines': {
    async file(result, record, _count, ctx) {
      if ((record.status === 'compacted' || record.status === 'unchanged') && result.line !== null)
        ctx.say(result.line);
    },
  },
  /**
   * The dry-run view of each file on stdout, a blank line between files: in a batch only files that would change or
   * miss their target, unless --verbose; a named file always.
   */
  'dry-run': {
    async file(result, record, _count, ctx) {
      if (result.diff === null || !(ctx.single || isStatShown(record, ctx.settings.verbose))) return;
      await writeAll(ctx.io.stdout, `${ctx.shown.diffs > 0 ? '\n' : ''}${result.diff}`);
      ctx.shown.diffs++;
    },
  },
  /** `--dry-run --stat`: one line per file and a total on stdout, once every file is known (the columns align). */
  'dry-run-stat': {
    async end(run, ctx) {
      await writeAll(
        ctx.io.stdout,
        renderStat(run.records, ctx.reportSettings.tokenizer, ctx.single || ctx.settings.verbose),
      );
      return true;
    },
  },
  /** `--fail-over-target`: a line on stderr for each file left over its target, and why (as an error is said). */
  'over-target': {
    async file(result, record, _count, ctx) {
      if (result.overTarget !== undefined) ctx.say(`swc: ${escapeForLine(record.path)}: ${result.overTarget}`);
    },
  },
  /** `--check`: the path of each file that would be compacted on stdout, one a line (a newline in a name escaped). */
  'check-paths': {
    async file(_result, record, _count, ctx) {
      if (record.status === 'compacted') await writeAll(ctx.io.stdout, `${escapeForLine(record.path)}\n`);
    },
  },
  /** The JSON document: the one file's plan, or the report of every file. */
  json: {
    async end(run, ctx) {
      const target = ctx.json;
      if (target === null) return true;
      const document = ctx.single ? (run.records[0]?.plan ?? null) : reportDocument(ctx.reportSettings, run.records);
      try {
        if (document !== null) await emitJson(target, document, ctx.io);
        return true;
      } catch (error) {
        ctx.say(`swc: ${recordError(target.kind === 'file' ? target.file : '<report>', error).message}`);
        return false;
      }
    },
  },
  /** The closing line on stderr: files scanned, compacted, unchanged, failed, tokens, time. */
  summary: {
    async end(run, ctx) {
      ctx.say(
        summaryLine(
          run.totals,
          ctx.reportSettings,
          run.seconds,
          run.shard,
          colorFor(ctx.io.stderr, ctx.io.env, ctx.settings.color),
        ),
      );
      return true;
    },
  },
} as const satisfies Record<string, Reporter>;

export type ReporterName = keyof typeof REPORTERS;

/**
 * The reporters a run's settings call for, in the order they write. With the JSON on stderr the errors live in it
 * (a single file's plan cannot hold one, so its error is still printed); -q keeps only errors and a batch's total, -qq
 * only errors.
 */
export function reportersFor(
  settings: CompactSettings,
  mode: ReportSettings['mode'],
  json: ReportTarget,
  single: boolean,
): ReporterName[] {
  const human = settings.quiet === 0 && json?.kind !== 'stderr';
  const names: ReporterName[] = [];
  if (json?.kind !== 'stderr' || single) names.push('errors');
  if (human && (mode === 'in-place' || mode === 'out-dir' || (single && mode === 'check'))) names.push('file-lines');
  if (settings.dryRun && json?.kind !== 'stdout') names.push(settings.stat ? 'dry-run-stat' : 'dry-run');
  // The JSON on stdout holds the files that would be compacted; a list of paths beside it would break it.
  if (settings.check && !settings.dryRun && json?.kind !== 'stdout') names.push('check-paths');
  // A failed gate is said whatever -q says, as an error is.
  if (settings.failOverTarget) names.push('over-target');
  if (json !== null) names.push('json');
  // One named file has said all in its own line (or its view); a batch ends with the summary.
  if (!single && json?.kind !== 'stderr' && showsTotals(settings.quiet, single)) names.push('summary');
  return names;
}

/** What every reporter of an inspect run may read. */
export interface InspectContext {
  readonly io: CliIo;
  readonly color: ChalkInstance;
  /** Terminal columns for the text; problem lines are never cut. */
  readonly width: number;
  /** -q: only the errors' lines and the total; -qq: only the errors' lines. */
  readonly quiet: QuietLevel;
  /** The command named one file (or -): its JSON is that file's document, and no total closes the text. */
  readonly single: boolean;
  readonly tokenizer: string;
  /** The settings file the run read, as outputs name it, or null: the JSON documents say which it was. */
  readonly config: string | null;
  /** What has been shown so far (texts of files are a blank line apart). */
  readonly shown: { files: number };
  /** Files --skip-unrecognized left out: no conversation was found in them. */
  readonly skipped: { files: number };
}

/** One output of an inspect run: a file's inspection (or failure) in, text out. */
export interface InspectReporter {
  /** Called for each file in sorted path order, as it is done. */
  file?(found: Inspected, ctx: InspectContext): Promise<void>;
  /** Called once after the last file, with every file. */
  end?(found: readonly Inspected[], ctx: InspectContext): Promise<void>;
}

/** Whether a file is shown: it was read, and with -q it has errors (what fails the run). */
function isInspectShown(found: Inspected, ctx: InspectContext): found is Extract<Inspected, { inspection: unknown }> {
  return 'inspection' in found && (ctx.quiet === 0 || hasErrors(found.inspection));
}

/** An inspect document with the settings file the run read after its `version`, as a plan records it; else as it is. */
function withConfig<D extends { version: number }>(doc: D, ctx: InspectContext): D {
  if (ctx.config === null) return doc;
  const { version, ...rest } = doc;
  return { version, config: ctx.config, ...rest } as unknown as D;
}

/** Every reporter of `swc inspect`, by name. */
export const INSPECT_REPORTERS = {
  /** Each file's structure, tokens and problems on stdout, a blank line between files. */
  text: {
    async file(found, ctx) {
      if (!isInspectShown(found, ctx)) return;
      const text = renderInspect(found.inspection, { width: ctx.width, color: ctx.color });
      await writeAll(ctx.io.stdout, ctx.shown.files > 0 ? `\n${text}` : text);
      ctx.shown.files++;
    },
  },
  /** `-q`: each error on one line. */
  problems: {
    async file(found, ctx) {
      if (!isInspectShown(found, ctx)) return;
      await writeAll(ctx.io.stdout, renderProblems(found.inspection, ctx.color));
      ctx.shown.files++;
    },
  },
  /** `--json-lines`: each file's document on one line, as it is done. */
  'json-lines': {
    async file(found, ctx) {
      if (isInspectShown(found, ctx))
        await writeAll(ctx.io.stdout, `${JSON.stringify(withConfig(inspectDocument(found.inspection), ctx))}\n`);
    },
  },
  /** `--json`: one document, the named file's or the run's. */
  json: {
    async end(found, ctx) {
      const only = found[0];
      if (!ctx.single)
        await writeAll(
          ctx.io.stdout,
          `${JSON.stringify(withConfig(inspectRunDocument(ctx.tokenizer, found), ctx), null, 2)}\n`,
        );
      else if (only !== undefined && 'inspection' in only)
        await writeAll(
          ctx.io.stdout,
          `${JSON.stringify(withConfig(inspectDocument(only.inspection), ctx), null, 2)}\n`,
        );
    },
  },
  /** The closing total of a run over several files: `total: 3 files, 2 errors, 5 warnings, 12,345 tokens`. */
  total: {
    async end(found, ctx) {
      const totals = inspectTotals(found);
      const line = emitLine(
        [
          {
            text: `total: ${inspectTotalLine(totals, ctx.skipped.files)}`,
            tone: totals.errors + totals.failed > 0 ? 'bad' : totals.warnings > 0 ? 'note' : 'good',
          },
        ],
        ctx.width,
        ctx.color,
      );
      await writeAll(ctx.io.stdout, `${ctx.shown.files > 0 ? '\n' : ''}${line}\n`);
    },
  },
} as const satisfies Record<string, InspectReporter>;

export type InspectReporterName = keyof typeof INSPECT_REPORTERS;

/** The reporters an inspect run's flags call for, in the order they write. */
export function inspectReportersFor(
  flags: { json?: boolean; jsonLines?: boolean },
  quiet: QuietLevel,
  single: boolean,
): InspectReporterName[] {
  if (flags.json === true) return ['json'];
  if (flags.jsonLines === true) return ['json-lines'];
  const total = !single && showsTotals(quiet, single) ? (['total'] as const) : [];
  return [quiet > 0 ? 'problems' : 'text', ...total];
}
