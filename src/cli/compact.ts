import { availableParallelism } from 'node:os';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { noteTemplate } from '../core/compact.js';
import type { TokenCounter } from '../core/types.js';
import { InputError, UsageError } from '../errors.js';
import { ChangedError, describeFsError, identifyFile, isInside, readStdin, realTarget, writeFileAtomic, type FileIdentity } from '../io/files.js';
import { sourceFromBytes, readSourceFile } from '../io/lines.js';
import { compactSource, outputBytes, type FileResult, type WindowThresholds } from '../pipeline.js';
import { createCounter, isTokenizerName, TOKENIZERS, type TokenizerName } from '../tokens/index.js';
import { writeAll, type CliIo } from './io.js';
import { parseWhole } from './options.js';
import { planDocument, planWindowOf } from './plan-json.js';
import { describeOutcome } from './summary.js';

/** Options of `swc compact` as commander hands them over. */
export interface CompactFlags {
  target?: string;
  contextWindow?: string;
  compactAt?: string;
  compactTo?: string;
  minKeepSteps?: string;
  note?: string | boolean;
  tokenizer?: string;
  format?: string;
  conversationKey?: string;
  output?: string;
  inPlace?: boolean;
  outDir?: string;
  base?: string;
  check?: boolean;
  dryRun?: boolean;
  json?: boolean;
  report?: string;
  ignore?: string[];
  jobs?: string;
  shard?: string;
  force?: boolean;
  quiet?: boolean;
  debug?: boolean;
  color?: boolean;
}

/** A fraction typed on the command line, kept exact (0.7 is 7/10, not a binary float). */
export interface Fraction {
  readonly text: string;
  readonly numerator: bigint;
  readonly denominator: bigint;
  readonly value: number;
}

/** The context-window thresholds, as typed and in tokens. */
export interface WindowSettings {
  readonly tokens: number;
  readonly compactAt: Fraction;
  readonly compactTo: Fraction;
  /** Sizes from here on are compacted: ceil(window × compact-at). */
  readonly trigger: number;
  /** What they are compacted to: floor(window × compact-to). */
  readonly target: number;
}

/** A shard of the files: the `index`-th (1-based) of `count`. */
export interface Shard {
  readonly index: number;
  readonly count: number;
}

/** Validated settings of one `swc compact` run. */
export interface CompactSettings {
  readonly inputs: readonly string[];
  /** The token target: --target, or the window's target. */
  readonly target: number;
  readonly window: WindowSettings | null;
  readonly minKeepSteps: number;
  /** undefined: the default note; null: no note; otherwise the template. */
  readonly note: string | null | undefined;
  readonly tokenizer: TokenizerName;
  readonly format: string;
  /** In files of many records, the key each record holds its conversation under. */
  readonly conversationKey: string | undefined;
  readonly output: string | undefined;
  readonly inPlace: boolean;
  readonly outDir: string | undefined;
  readonly base: string | undefined;
  readonly check: boolean;
  readonly dryRun: boolean;
  readonly json: boolean;
  readonly report: string | undefined;
  readonly ignore: readonly string[];
  readonly jobs: number;
  readonly shard: Shard | null;
  /** Replace files in the out-dir that hold something other than this run's result. */
  readonly force: boolean;
  readonly quiet: boolean;
  /** --no-color (false), or nothing said (undefined). */
  readonly color: boolean | undefined;
}

export const DEFAULT_COMPACT_AT = '0.7';
export const DEFAULT_COMPACT_TO = '0.4';

/**
 * Parses a fraction exactly: `0.7`, `.7`, `1`, or a percentage `70%`.
 * @throws UsageError for anything else
 */
export function parseFraction(name: string, raw: string): Fraction {
  const text = raw.trim();
  const m = /^(\d*)(?:\.(\d*))?(%?)$/.exec(text);
  if (m === null || (m[1] === '' && (m[2] ?? '') === '')) {
    throw new UsageError(`${name} must be a fraction such as 0.7 or 70%, got "${raw}"`);
  }
  const digits = `${m[1] ?? ''}${m[2] ?? ''}` || '0';
  let denominator = 10n ** BigInt((m[2] ?? '').length);
  if (m[3] === '%') denominator *= 100n;
  const numerator = BigInt(digits);
  return { text, numerator, denominator, value: Number(numerator) / Number(denominator) };
}

/** a < b for fractions. */
function isBelow(a: Fraction, b: Fraction): boolean {
  return a.numerator * b.denominator < b.numerator * a.denominator;
}

/** window × fraction, rounded up or down, in exact integer arithmetic. */
function scale(window: number, f: Fraction, round: 'up' | 'down'): number {
  const product = BigInt(window) * f.numerator;
  const q = product / f.denominator;
  return Number(round === 'up' && q * f.denominator !== product ? q + 1n : q);
}

/**
 * Checks the threshold options: `0 < compact-to < compact-at <= 1` and a positive window, each refusal
 * saying why the rule exists.
 */
export function resolveWindow(flags: CompactFlags): WindowSettings | null {
  if (flags.contextWindow === undefined) {
    const stray = flags.compactAt !== undefined ? '--compact-at' : flags.compactTo !== undefined ? '--compact-to' : null;
    if (stray !== null) throw new UsageError(`${stray} needs --context-window <tokens>: its fraction is a share of that window`);
    return null;
  }
  if (flags.target !== undefined) {
    throw new UsageError('--target and --context-window both set the budget: give --target for a fixed budget, or --context-window with --compact-at/--compact-to');
  }
  const tokens = parseWhole('--context-window', flags.contextWindow, 1);
  const compactAt = parseFraction('--compact-at', flags.compactAt ?? DEFAULT_COMPACT_AT);
  const compactTo = parseFraction('--compact-to', flags.compactTo ?? DEFAULT_COMPACT_TO);
  if (compactAt.numerator === 0n) throw new UsageError(`--compact-at must be above 0, got ${compactAt.text}: at 0 every file, even an empty one, would be compacted`);
  if (compactAt.numerator > compactAt.denominator) {
    throw new UsageError(`--compact-at must be at most 1, got ${compactAt.text}: a transcript larger than its context window no longer fits it, so waiting that long is too late`);
  }
  if (compactTo.numerator === 0n) throw new UsageError(`--compact-to must be above 0, got ${compactTo.text}: nothing of a conversation fits in 0 tokens`);
  if (!isBelow(compactTo, compactAt)) {
    throw new UsageError(
      `--compact-to (${compactTo.text}) must be below --compact-at (${compactAt.text}): a compacted file has to end smaller than the size that triggers compaction, or the next run compacts it again`,
    );
  }
  const target = scale(tokens, compactTo, 'down');
  if (target < 1) {
    throw new UsageError(`--compact-to ${compactTo.text} of a ${tokens}-token window is less than one token: nothing would fit; raise --compact-to or --context-window`);
  }
  return { tokens, compactAt, compactTo, trigger: scale(tokens, compactAt, 'up'), target };
}

/** Parses `--shard i/n` (1-based, like jest and playwright). */
export function parseShard(raw: string): Shard {
  const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(raw);
  if (m === null) throw new UsageError(`--shard must look like 2/4 (the 2nd of 4 shards), got "${raw}"`);
  const index = Number(m[1]);
  const count = Number(m[2]);
  if (!Number.isSafeInteger(count)) throw new UsageError(`--shard is too large: "${raw}"`);
  if (count < 1) throw new UsageError(`--shard ${raw}: the number of shards must be at least 1`);
  if (index < 1 || index > count) throw new UsageError(`--shard ${raw}: the shard must be between 1 and ${count} (shards count from 1)`);
  return { index, count };
}

/** Whether a run writes nothing but its result to stdout (one input, no batch option): the behaviour of one file. */
export function isStreamRun(settings: CompactSettings): boolean {
  return !settings.inPlace && settings.outDir === undefined && !settings.check && !settings.dryRun && settings.inputs.length === 1;
}

/** Checks flags and turns them into settings; every problem is a UsageError that says what to do. */
export function resolveSettings(inputs: readonly string[], flags: CompactFlags): CompactSettings {
  const window = resolveWindow(flags);
  if (window === null && flags.target === undefined) {
    throw new UsageError('--target <tokens> is required (the token budget to compact to)');
  }
  const target = window?.target ?? parseWhole('--target', flags.target as string, 1);
  const minKeepSteps = flags.minKeepSteps === undefined ? 1 : parseWhole('--min-keep-steps', flags.minKeepSteps, 0);
  const tokenizer = flags.tokenizer ?? 'o200k_base';
  if (!isTokenizerName(tokenizer)) throw new UsageError(`unknown tokenizer "${tokenizer}" (choose one of: ${TOKENIZERS.join(', ')})`);
  const note = flags.note === false ? null : flags.note === true || flags.note === undefined ? undefined : flags.note === '' ? null : flags.note;
  if (inputs.length === 0) throw new UsageError('no input given (a file, a directory, a quoted glob pattern, or - for standard input)');
  const inPlace = flags.inPlace === true;
  const check = flags.check === true;
  const dryRun = flags.dryRun === true;
  const outDir = flags.outDir;
  if (inPlace && outDir !== undefined) throw new UsageError('--in-place and --out-dir cannot be used together: rewrite the inputs, or write copies under the out-dir');
  if (check && (inPlace || outDir !== undefined)) {
    throw new UsageError(`--check writes nothing, so it cannot be used with ${inPlace ? '--in-place' : '--out-dir'}: run the check and the rewrite as two steps`);
  }
  if (flags.output !== undefined) {
    // Name the option that clashes with --output; only then is the number of inputs the problem.
    if (dryRun) throw new UsageError('--dry-run writes nothing; it cannot be combined with --output');
    if (check) throw new UsageError('--check writes nothing; it cannot be combined with --output');
    if (inPlace) throw new UsageError('--in-place rewrites each input itself; it cannot be combined with --output');
    if (outDir !== undefined) throw new UsageError('--out-dir and --output cannot be used together: write every result under the out-dir, or one result to --output');
    if (inputs.length > 1) throw new UsageError('--output takes the result of exactly one input; with several files use --out-dir or --in-place');
  }
  if (inputs.includes('-')) {
    if (inputs.length > 1) throw new UsageError('- (standard input) cannot be mixed with other inputs');
    if (inPlace) throw new UsageError('--in-place cannot rewrite standard input; use --output');
    if (outDir !== undefined) throw new UsageError('--out-dir needs files; for standard input use --output');
  }
  if (inputs.length > 1 && !inPlace && outDir === undefined && !check && !dryRun) {
    throw new UsageError(
      `${inputs.length} inputs given: add --out-dir <dir> to write the results there, --in-place to rewrite each file, --check to only report which need compaction, or --dry-run to preview`,
    );
  }
  const jobs = flags.jobs === undefined ? availableParallelism() : parseWhole('--jobs', flags.jobs, 1);
  const settings: CompactSettings = {
    inputs,
    target,
    window,
    minKeepSteps,
    note,
    tokenizer,
    format: flags.format ?? 'auto',
    conversationKey: flags.conversationKey,
    output: flags.output,
    inPlace,
    outDir,
    base: flags.base,
    check,
    dryRun,
    json: flags.json === true,
    report: flags.report,
    ignore: flags.ignore ?? [],
    jobs,
    shard: flags.shard === undefined ? null : parseShard(flags.shard),
    force: flags.force === true,
    quiet: flags.quiet === true,
    color: flags.color === false ? false : undefined,
  };
  if (isStreamRun(settings) && (settings.shard !== null || settings.base !== undefined || settings.ignore.length > 0)) {
    const flag = settings.shard !== null ? '--shard' : settings.base !== undefined ? '--base' : '--ignore';
    throw new UsageError(`${flag} only applies to batch runs: add --out-dir, --in-place, --check or --dry-run`);
  }
  return settings;
}

/** The pipeline's thresholds for settings, or undefined for a fixed target. */
export function windowThresholds(settings: CompactSettings): WindowThresholds | undefined {
  return settings.window === null ? undefined : { trigger: settings.window.trigger, target: settings.window.target };
}

/** Compacts one input with a counter; returns the decision and the output text. */
export async function compactInput(input: string, settings: CompactSettings, counter: TokenCounter, io: CliIo, exhaustive = false, shown = input): Promise<FileResult> {
  // JSONL is read line by line (no whole-file copy, files past JavaScript's string limit work).
  const source = input === '-' ? sourceFromBytes(await readStdin(io.stdin), '<stdin>') : readSourceFile(path.resolve(io.cwd, input), shown);
  return compactSource(source, {
    target: settings.target,
    window: windowThresholds(settings),
    minKeepSteps: settings.minKeepSteps,
    note: settings.note,
    format: settings.format,
    conversationKey: settings.conversationKey,
    counter,
    exhaustive,
  });
}

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

/** The one input of a stream run, resolved once: the file it really is, and what it was before it was read. */
interface StreamInput {
  /** The path shown in messages. */
  readonly shown: string;
  /** The real path, or '-' for standard input. */
  readonly real: string;
  readonly identity: FileIdentity | null;
}

/**
 * Writes a result to --output or stdout. An --output that is the input itself is replaced only if the input is still
 * the file that was read.
 */
async function deliver(input: StreamInput, result: FileResult, settings: CompactSettings, io: CliIo): Promise<void> {
  const data = outputBytes(result);
  if (settings.output !== undefined && settings.output !== '-') {
    const out = path.resolve(io.cwd, settings.output);
    try {
      const isInput = input.real !== '-' && (await realTarget(out)) === input.real;
      if (isInput && input.identity === null) throw new InputError('is not a regular file, so it cannot be replaced by its result', settings.output);
      await writeFileAtomic(out, data, { follow: true, expect: isInput ? (input.identity ?? undefined) : undefined });
    } catch (error) {
      if (error instanceof InputError) throw error;
      if (error instanceof ChangedError) throw new InputError(`${error.message}; nothing was written for it`, input.shown);
      throw new InputError(`cannot write: ${describeFsError(error)}`, settings.output);
    }
    return;
  }
  await writeAll(io.stdout, data);
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

/** One input to stdout or --output: today's behaviour for a single file, in this thread. */
async function runStream(settings: CompactSettings, io: CliIo, report: (line: string) => void): Promise<number> {
  const counter = await createCounter(settings.tokenizer);
  const given = settings.inputs[0] as string;
  const real = given === '-' ? '-' : await realTarget(path.resolve(io.cwd, given));
  await checkReportPath(settings, io, real === '-' ? [] : [real]);
  // Taken before reading: a change from here on (an append to a live log) shows when an --output that is the input is replaced.
  const input: StreamInput = { shown: given, real, identity: real === '-' ? null : identifyFile(real) };
  const json = reportTarget(settings);
  const result = await compactInput(real, settings, counter, io, json !== null, given);
  await deliver(input, result, settings, io);
  const window = planWindowOf(settings.window);
  if (!settings.quiet && json?.kind !== 'stderr') {
    report(describeOutcome(result, { tokenizer: counter.name, target: settings.target, minKeepSteps: settings.minKeepSteps, counter, window }));
  }
  if (json !== null) {
    const plan = planDocument(result, {
      target: settings.target,
      tokenizer: counter.name,
      minKeepSteps: settings.minKeepSteps,
      note: noteTemplate(settings.note),
      format: settings.format,
      counter,
      window,
    });
    await emitJson(json, plan, io);
  }
  return 0;
}

/**
 * Runs `swc compact` for validated settings.
 * @returns the exit code: 0 done, 1 when --check found files to compact, 2 when any input could not be read,
 *   parsed or written
 */
export async function runCompact(settings: CompactSettings, io: CliIo, report: (line: string) => void): Promise<number> {
  const only = settings.inputs[0] as string;
  // Batch machinery (fast-glob, ora, worker threads) loads only when needed: one file starts as fast as before.
  if (isStreamRun(settings)) {
    const stat = only === '-' ? null : await fs.stat(path.resolve(io.cwd, only)).catch(() => null);
    // A name that exists is a file, whatever its characters; only a missing one is looked at as a pattern.
    if (only !== '-' && stat === null) {
      const { isPattern } = await import('../io/expand.js');
      if (isPattern(only)) throw new UsageError(`${JSON.stringify(only)} is a pattern: add --out-dir <dir>, --in-place, --check or --dry-run to compact the files it matches`);
    }
    if (stat?.isDirectory()) throw new UsageError(`${only} is a directory: add --out-dir <dir>, --in-place, --check or --dry-run to compact the files in it`);
    return runStream(settings, io, report);
  }
  const { runBatch } = await import('./batch.js');
  return runBatch(settings, io, report);
}
