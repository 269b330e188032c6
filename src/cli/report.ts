import type { ChalkInstance } from 'chalk';
import type { CounterSettings } from '../tokens/options.js';
import { escapeForLine, InputError, NoConversationError } from '../errors.js';
import type { FileResult } from '../pipeline/index.js';
import { changeText, fileTokens, formatCount, outcomeLine, type LineContext } from './result-line.js';

/**
 * What a batch run says about each file and about the whole run: one record per file (the `--json` /
 * `--report` data), the per-file lines and the closing summary on stderr. Pure: builds values and text.
 */

/** `skipped`: no conversation was found in the file, and --skip-unrecognized counts such files apart from failures. */
export type FileStatus = 'compacted' | 'unchanged' | 'failed' | 'skipped';

/** Where a file went wrong: the reason, and the line and column when the problem is inside the file. */
export interface RecordError {
  readonly message: string;
  readonly reason: string;
  readonly line: number | null;
  readonly column: number | null;
  /** Only when true: no conversation was found in the file (a `NoConversationError`), which --skip-unrecognized skips. */
  readonly unrecognized?: true;
}

/** One file of a run. Tokens include the tool schemas (`toolTokens`) when thresholds are used. */
export interface FileRecord {
  /** The path as the user named it (see `InputFile.display`). */
  readonly path: string;
  /** compacted: the result differs from the input (written unless --check or --dry-run). */
  readonly status: FileStatus;
  /** Where the result was written (under the out-dir as it was typed, or the input's path), or null when nothing was written. */
  readonly written: string | null;
  readonly format: string | null;
  readonly conversations: number;
  readonly messagesBefore: number | null;
  readonly messagesAfter: number | null;
  readonly messagesRemoved: number | null;
  readonly tokensBefore: number | null;
  /** False when `tokensBefore` is an estimate (a big file whose count stopped early); plans and reports count exactly. */
  readonly tokensBeforeExact: boolean;
  readonly tokensAfter: number | null;
  readonly toolTokens: number | null;
  /** Tool results pruning replaced, only when there are any. */
  readonly resultsPruned?: number;
  /** Tool results offloading replaced with pointers, only when there are any. */
  readonly resultsOffloaded?: number;
  /**
   * With prune or offload in the chain, where the tokens are worked out: what they took out of the messages the
   * output keeps (the plan's `saved`), one of the figures that add up to the change.
   */
  readonly saved?: { readonly pruned: number; readonly offloaded: number };
  /**
   * Identifiers (paths, URLs, hashes, UUIDs, errors, symbols) named only in what the compaction removes or prunes,
   * and those only offloading moved to the store: only in dry runs and JSON output, which work them out.
   */
  readonly identifiersForgotten?: number;
  readonly identifiersRecoverable?: number;
  /** The token target: --target, or context window × compact-to. */
  readonly target: number | null;
  /** Whether every conversation ends at or under its target (with thresholds: or stayed below the trigger). */
  readonly targetMet: boolean | null;
  /** In a file of several conversations: how many of them end at or under their target (the one verdict shown). */
  readonly conversationsMet?: number;
  readonly error: RecordError | null;
  /** The file's JSON plan, when a report or dry run asked for it. */
  readonly plan?: unknown;
}

/** The settings a report records (a copy of the command line's meaning, never timings or job counts). */
export interface ReportSettings {
  readonly mode: 'stdout' | 'in-place' | 'out-dir' | 'check' | 'dry-run';
  readonly tokenizer: string;
  readonly target: number | null;
  readonly contextWindow: number | null;
  readonly compactAt: number | null;
  readonly compactTo: number | null;
  readonly minKeepSteps: number;
  readonly note: string | null;
  readonly format: string;
  readonly shard: string | null;
  /** The counter's settings, only when they are not Haystack's defaults. */
  readonly counter?: CounterSettings;
  /** The strategies applied in order and pruning's settings, only when not the sliding window alone. */
  readonly strategies?: readonly string[];
  readonly minTokens?: number;
  readonly placeholder?: string;
  readonly offloadOver?: number;
  /** The settings file the run read, only when it read one. */
  readonly config?: string;
}

/** Totals of a run. */
export interface Totals {
  readonly files: number;
  readonly compacted: number;
  readonly unchanged: number;
  readonly failed: number;
  /** Files in which no conversation was found, with --skip-unrecognized. */
  readonly skipped: number;
  readonly tokensBefore: number;
  readonly tokensBeforeExact: boolean;
  readonly tokensAfter: number;
  /** Files whose result misses its target. */
  readonly targetMissed: number;
  /**
   * Conversations over the files that were read, and how many end at or under their target (`--stat`'s verdict, as
   * a file's own line gives it for a file of several; the report's summary leaves them out).
   */
  readonly conversations: number;
  readonly conversationsMet: number;
  /** Messages removed over the files (the `--stat` total; the report's summary leaves it out). */
  readonly messagesRemoved: number;
  /** What pruning and offloading saved over the files whose records say (`--stat` only), or null when none does. */
  readonly saved: FileRecord['saved'] | null;
}

/** The totals a report's summary gives. */
export type ReportSummary = Omit<Totals, 'messagesRemoved' | 'saved' | 'conversations' | 'conversationsMet'>;

/** The `--json` / `--report` document of a batch run. */
export interface ReportDocument {
  readonly version: 1;
  readonly settings: ReportSettings;
  readonly summary: ReportSummary;
  readonly files: readonly FileRecord[];
}

/**
 * The record of a file that was compacted (or found unchanged). Messages are counted as everywhere else
 * (the outcome's counts: items of the file, as the note counts them).
 * @param result the pipeline's outcome
 * @param path the path to show
 * @param target the run's token target
 * @param figures work out the tokens before (false when no output of the run shows them: they are left null)
 */
export function recordOf(result: FileResult, path: string, target: number, figures = true): FileRecord {
  const cs = result.conversations;
  const sum = (f: (c: (typeof cs)[number]) => number): number => cs.reduce((a, c) => a + f(c), 0);
  const toolTokens = sum((c) => c.toolTokens);
  const tokens = figures ? fileTokens(result) : null;
  const counts = cs.map((c) => c.outcome.counts);
  const count = (f: (n: (typeof counts)[number]) => number): number => counts.reduce((a, n) => a + f(n), 0);
  const pruned = sum((c) => (c.pruned ?? []).reduce((a, p) => a + p.tools.length, 0));
  const offloaded = sum((c) => (c.offloaded ?? []).reduce((a, p) => a + p.tools.length, 0));
  const saving = figures && cs.some((c) => c.strategies.includes('prune') || c.strategies.includes('offload'));
  const saved = saving
    ? {
        saved: {
          pruned: sum((c) => c.outcome.figures.saved.pruned),
          offloaded: sum((c) => c.outcome.figures.saved.offloaded),
        },
      }
    : {};
  const inventories = cs.map((c) => c.outcome.inventory);
  const inventory = inventories.every((i) => i !== null)
    ? {
        identifiersForgotten: inventories.reduce((a, i) => a + (i?.forgotten.length ?? 0), 0),
        identifiersRecoverable: inventories.reduce((a, i) => a + (i?.recoverable.length ?? 0), 0),
      }
    : {};
  return {
    path,
    status: result.changed ? 'compacted' : 'unchanged',
    written: null,
    format: result.format === '' ? null : result.format,
    conversations: cs.length,
    messagesBefore: count((n) => n.before),
    messagesAfter: count((n) => n.after),
    messagesRemoved: count((n) => n.removed),
    tokensBefore: tokens === null ? null : tokens.before.tokens,
    tokensBeforeExact: tokens === null ? true : tokens.before.exact,
    tokensAfter: tokens === null ? sum((c) => c.plan.tokensAfter) + toolTokens : tokens.after,
    toolTokens,
    ...(pruned > 0 ? { resultsPruned: pruned } : {}),
    ...(offloaded > 0 ? { resultsOffloaded: offloaded } : {}),
    ...saved,
    ...inventory,
    target,
    targetMet: cs.every((c) => c.plan.targetMet),
    ...(cs.length > 1 ? { conversationsMet: cs.filter((c) => c.plan.targetMet).length } : {}),
    error: null,
  };
}

/** The record of a file that could not be read, parsed or written. */
export function failedRecord(path: string, error: unknown, target: number | null): FileRecord {
  return {
    path,
    status: 'failed',
    written: null,
    format: null,
    conversations: 0,
    messagesBefore: null,
    messagesAfter: null,
    messagesRemoved: null,
    tokensBefore: null,
    tokensBeforeExact: true,
    tokensAfter: null,
    toolTokens: null,
    target,
    targetMet: null,
    error: recordError(path, error),
  };
}

/**
 * An error as a record holds it. The message is `path:line:col: reason`, the form editors and CI annotate, kept to
 * one safe line (control characters escaped); the reason stays as the parser gave it.
 */
export function recordError(path: string, error: unknown): RecordError {
  if (error instanceof InputError) {
    const line = error.line ?? null;
    const column = error.column ?? null;
    const at = line === null ? '' : `:${line}${column === null ? '' : `:${column}`}`;
    const unrecognized = error instanceof NoConversationError ? { unrecognized: true as const } : {};
    return {
      message: escapeForLine(`${path}${at}: ${error.reason}`),
      reason: error.reason,
      line,
      column,
      ...unrecognized,
    };
  }
  const reason = `unexpected error: ${error instanceof Error ? error.message : String(error)}`;
  return { message: escapeForLine(`${path}: ${reason}`), reason, line: null, column: null };
}

/** Whether a failed record is a file in which no conversation was found (what --skip-unrecognized skips). */
export function isUnrecognized(record: FileRecord): boolean {
  return record.status === 'failed' && record.error?.unrecognized === true;
}

/** A failed record of a file in which no conversation was found, as --skip-unrecognized counts it: skipped, its reason kept. */
export function skippedRecord(record: FileRecord): FileRecord {
  return { ...record, status: 'skipped' };
}

/** The line --verbose (or a run on that one file) gives a skipped file: `swc: skipped PATH:LINE:COL: reason`. */
export function skippedLine(record: FileRecord): string {
  return `swc: skipped ${record.error?.message ?? escapeForLine(record.path)}`;
}

/** Adds up records. */
export function totalsOf(records: readonly FileRecord[]): Totals {
  let compacted = 0;
  let unchanged = 0;
  let failed = 0;
  let skipped = 0;
  let before = 0;
  let after = 0;
  let exact = true;
  let missed = 0;
  let conversations = 0;
  let conversationsMet = 0;
  let removed = 0;
  let saved: { pruned: number; offloaded: number } | null = null;
  for (const r of records) {
    if (r.status === 'failed') {
      failed++;
      continue;
    }
    if (r.status === 'skipped') {
      skipped++;
      continue;
    }
    if (r.status === 'compacted') compacted++;
    else unchanged++;
    before += r.tokensBefore ?? 0;
    after += r.tokensAfter ?? 0;
    exact &&= r.tokensBeforeExact;
    if (r.targetMet === false) missed++;
    conversations += r.conversations;
    conversationsMet += r.conversationsMet ?? (r.targetMet === false ? 0 : r.conversations);
    removed += r.messagesRemoved ?? 0;
    if (r.saved !== undefined) {
      saved ??= { pruned: 0, offloaded: 0 };
      saved.pruned += r.saved.pruned;
      saved.offloaded += r.saved.offloaded;
    }
  }
  return {
    files: records.length,
    compacted,
    unchanged,
    failed,
    skipped,
    tokensBefore: before,
    tokensBeforeExact: exact,
    tokensAfter: after,
    targetMissed: missed,
    conversations,
    conversationsMet,
    messagesRemoved: removed,
    saved,
  };
}

/** The report document: settings, totals, one record per file in sorted path order. */
export function reportDocument(settings: ReportSettings, records: readonly FileRecord[]): ReportDocument {
  const t = totalsOf(records);
  const summary: ReportSummary = {
    files: t.files,
    compacted: t.compacted,
    unchanged: t.unchanged,
    failed: t.failed,
    skipped: t.skipped,
    tokensBefore: t.tokensBefore,
    tokensBeforeExact: t.tokensBeforeExact,
    tokensAfter: t.tokensAfter,
    targetMissed: t.targetMissed,
  };
  return { version: 1, settings, summary, files: records };
}

/** Whether the run only looks (nothing is written): wording says "would be". */
function isLookOnly(mode: ReportSettings['mode']): boolean {
  return mode === 'check' || mode === 'dry-run';
}

/**
 * The line a file gets on stderr: its error, or the outcome line every mode shares (see `outcomeLine`). In a
 * batch an unchanged file gets none unless it misses its target.
 * @param context tokenizer, the run's target, min_keep_steps, counter and window, as the outcome line needs them
 * @param every give unchanged files a line too (a run on one file)
 * @returns the line, or null when the file is not worth a line
 */
export function fileLine(
  record: FileRecord,
  result: FileResult | null,
  context: LineContext,
  every = false,
): string | null {
  if (record.status === 'failed') return `swc: ${record.error?.message ?? escapeForLine(record.path)}`;
  return result === null ? null : outcomeLine(result, record.path, context, every);
}

/**
 * The closing summary on stderr: files scanned / compacted / unchanged / skipped (only when some are) / failed,
 * tokens before -> after, time.
 * @param seconds the run's wall time
 * @param shard e.g. `2/4 (31 of 120 files)`, or null
 */
export function summaryLine(
  totals: Totals,
  settings: ReportSettings,
  seconds: number,
  shard: string | null,
  color: ChalkInstance,
): string {
  const verb = isLookOnly(settings.mode) ? 'would be compacted' : 'compacted';
  const failed = totals.failed > 0 ? color.red(`${formatCount(totals.failed)} failed`) : '0 failed';
  const before = { tokens: totals.tokensBefore, exact: totals.tokensBeforeExact };
  const change = changeText(before, totals.tokensAfter);
  const estimates = totals.tokensBeforeExact ? '' : '; before includes estimates';
  const missed = totals.targetMissed > 0 ? `, ${formatCount(totals.targetMissed)} over target` : '';
  const skipped = totals.skipped > 0 ? `${formatCount(totals.skipped)} skipped, ` : '';
  return (
    `swc: ${shard === null ? '' : `shard ${shard}: `}${formatCount(totals.files)} ${totals.files === 1 ? 'file' : 'files'} scanned: ` +
    `${formatCount(totals.compacted)} ${verb}, ${formatCount(totals.unchanged)} unchanged, ${skipped}${failed}${missed}; ` +
    `tokens ${before.exact ? '' : '≈'}${formatCount(before.tokens)} → ${formatCount(totals.tokensAfter)} (${change === null ? '' : `${change}, `}${settings.tokenizer}${estimates}); ${seconds.toFixed(2)} s`
  );
}
