import { promises as fs } from 'node:fs';
import path from 'node:path';
import { escapeForLine, InputError, UsageError } from '../errors.js';
import { describeFsError, realTarget, writeFileAtomic } from '../io/files.js';
import { DEFAULT_PRICES, findPrices, PRICE_MODELS, pricesOf } from '../replay/prices.js';
import { createFileReplayer, type FileReplayOptions } from '../replay/file.js';
import { totalsOf } from '../replay/figures.js';
import type { ReplayPrices, ReplayRun, ReplayRuns } from '../replay/types.js';
import { colorFor } from './color.js';
import { EXIT } from './exit-codes.js';
import { writeAll, type CliIo } from './io.js';
import { standardStream } from './json-output.js';
import { colorWhen, parseWhole, quietLevel } from './options.js';
import { recordError } from './report.js';
import { resolveSettings, type CompactFlags, type CompactSettings } from './settings.js';
import { summarySourceFor } from './summary-source.js';
import { findTargets, readTarget, type Target } from './targets.js';
import { isChangedRun } from './view/replay-changes.js';
import { renderReplay } from './view/replay-table.js';

/**
 * `swc replay`: recorded agent runs replayed as if Haystack's `CompactionHook` had run before every LLM call, once
 * per policy (src/replay/), shown as a table or written as JSON. Its compaction settings are `swc compact`'s, read
 * and checked by the same rules (settings.ts).
 */

/** Options of `swc replay` as commander hands them over. */
export interface ReplayFlags extends Omit<CompactFlags, 'strategy'> {
  /** Each `--strategy` given, in order. */
  strategy?: string[];
  prices?: string;
  failOnOverflow?: boolean;
  maxLost?: string;
  changedOnly?: boolean;
}

/** The policies as given (`window` alone when none is), each checked as `swc compact --strategy` checks a chain. */
function policiesOf(flags: ReplayFlags): string[] {
  const given = flags.strategy ?? ['window'];
  const seen = new Set<string>();
  for (const s of given) {
    if (seen.has(s)) throw new UsageError(`--strategy ${s} is given twice: each policy is replayed once`);
    seen.add(s);
    if (s !== 'none' && s.split(',').some((x) => x.trim() === 'offload'))
      throw new UsageError(
        `--strategy ${s}: a replay never writes files, and offloading writes each result to one; replay prune instead (a pointer costs about what a placeholder does)`,
      );
  }
  return given;
}

/** The compaction settings of one policy, checked by `swc compact`'s rules (`none` is checked as the window). */
function settingsOf(inputs: readonly string[], flags: ReplayFlags, strategy: string): CompactSettings {
  if (flags.contextWindow === undefined)
    throw new UsageError('--context-window <tokens> is required (the model context window the hook compacts for)');
  const { strategy: _all, prices: _p, failOnOverflow: _f, maxLost: _m, report: _r, changedOnly: _c, ...shared } = flags;
  const uses = (name: string): boolean => strategy.split(',').some((x) => x.trim() === name);
  // Settings of a strategy this policy does not use are another policy's: they are left out here.
  const own: CompactFlags = {
    ...shared,
    ...(uses('prune') ? {} : { minTokens: undefined, placeholder: undefined }),
    ...(uses('summarize')
      ? {}
      : {
          summaryTokens: undefined,
          summaryInstruction: undefined,
          baseUrl: undefined,
          model: undefined,
          summarizeCommand: undefined,
          concurrency: undefined,
          cacheDir: undefined,
          cache: undefined,
          strict: undefined,
          minRetention: undefined,
        }),
    strategy: strategy === 'none' ? 'window' : strategy,
    dryRun: true,
  };
  return resolveSettings(inputs, own);
}

/**
 * Refuses a strategy's setting that no policy uses (`--min-tokens` without a policy that prunes), in compact's words:
 * the settings are checked once against every strategy some policy names.
 */
function checkUsed(inputs: readonly string[], flags: ReplayFlags, policies: readonly string[]): void {
  const names = new Set(policies.flatMap((p) => (p === 'none' ? [] : p.split(',').map((x) => x.trim()))));
  const { strategy: _all, prices: _p, failOnOverflow: _f, maxLost: _m, report: _r, changedOnly: _c, ...shared } = flags;
  if (flags.contextWindow === undefined) return;
  resolveSettings(inputs, { ...shared, strategy: names.size === 0 ? 'window' : [...names].join(','), dryRun: true });
}

/** The price model: a built-in's name, or a JSON file of one's own. */
async function pricesFrom(given: string | undefined, io: CliIo): Promise<ReplayPrices> {
  if (given === undefined) return DEFAULT_PRICES;
  const builtIn = findPrices(given);
  if (builtIn !== undefined) return builtIn;
  let text: string;
  try {
    text = await fs.readFile(path.resolve(io.cwd, given), 'utf8');
  } catch (error) {
    throw new UsageError(
      `--prices ${given}: neither a built-in price model (${PRICE_MODELS.map((p) => p.name).join(', ')}) nor a readable file (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--prices ${given}: not JSON (${(error as Error).message})`);
  }
  const read = pricesOf(value, given);
  if (typeof read === 'string') throw new UsageError(`--prices ${read}`);
  return read;
}

/**
 * Where the HTML report goes, resolved once, before any run: a standard stream (written into as the stream swc
 * holds), or a file's real path, which must not be one of the runs replayed.
 * @throws UsageError for a report on standard output beside --json, and for a report that is also an input
 */
async function reportPathOf(
  flags: ReplayFlags,
  targets: readonly Target[],
  io: CliIo,
): Promise<{ kind: 'stdout' | 'stderr' } | { kind: 'file'; file: string; shown: string } | null> {
  const given = flags.report;
  if (given === undefined) return null;
  const stream = standardStream(given);
  if (stream === 'stdout' && flags.json === true)
    throw new UsageError(`--report ${given} and --json would both go to standard output: name a file for the report`);
  if (stream !== null) return { kind: stream };
  const file = await realTarget(path.resolve(io.cwd, given));
  for (const t of targets)
    if (t.file !== '-' && (await realTarget(t.file)) === file)
      throw new UsageError(`--report ${given} is also a run to replay (${t.shown}); give the report another path`);
  return { kind: 'file', file, shown: given };
}

/** Writes the HTML report; a file is replaced atomically, never written through a link. */
async function writeReport(
  target: NonNullable<Awaited<ReturnType<typeof reportPathOf>>>,
  document: ReplayRun | ReplayRuns,
  io: CliIo,
): Promise<void> {
  const { replayPage } = await import('./view/replay-page.js');
  const page = replayPage(document);
  if (target.kind !== 'file') return writeAll(target.kind === 'stdout' ? io.stdout : io.stderr, page);
  try {
    await writeFileAtomic(target.file, Buffer.from(page, 'utf8'), { realDir: path.dirname(target.file) });
  } catch (error) {
    throw new InputError(`cannot write the report: ${describeFsError(error)}`, target.shown);
  }
}

/**
 * The replay as the table prints it: every name that comes from input (a file's, a price model's name and currency,
 * a policy as given, an identifier lost) escaped by the rule every command prints names by (`escapeForLine`), so
 * none can set a window title, write the clipboard or clear the screen. The JSON and the page keep them as they are.
 */
function printable(document: ReplayRun | ReplayRuns): ReplayRun | ReplayRuns {
  const run = (r: ReplayRun): ReplayRun => ({
    ...r,
    file: escapeForLine(r.file),
    prices: { ...r.prices, name: escapeForLine(r.prices.name), currency: escapeForLine(r.prices.currency) },
    policies: r.policies.map((p) => ({
      ...p,
      strategy: escapeForLine(p.strategy),
      lost: p.lost.map((l) => ({ ...l, identifier: escapeForLine(l.identifier) })),
    })),
  });
  if (!('runs' in document)) return run(document);
  return {
    runs: document.runs.map(run),
    totals: document.totals.map((t) => ({ ...t, strategy: escapeForLine(t.strategy) })),
  };
}

/**
 * Says, a line for each policy of each run, which summary calls failed (the policy then ran without those summaries,
 * as `swc compact` keeps its last good result).
 * @returns how many calls failed in all
 */
function warnFailedSummaries(runs: readonly ReplayRun[], report: (line: string) => void): number {
  let failed = 0;
  for (const run of runs)
    for (const p of run.policies) {
      const n = p.summary.failed ?? 0;
      if (n === 0) continue;
      failed += n;
      const why = p.summary.failure == null ? '' : ` (${p.summary.failure})`;
      report(
        escapeForLine(
          `swc: warning: ${run.file}: policy ${p.strategy}: ${n} of ${p.summary.calls} summary calls failed${why}; its figures are those of a run without those summaries`,
        ),
      );
    }
  return failed;
}

/**
 * Why each compacting policy fails the run, one line each: it overflowed with --fail-on-overflow, or lost more than
 * --max-lost identifiers that were needed again (the first few named). `none` is the baseline and never fails.
 * @param which the run's place in its file when the file holds several (` (run 2 of 5)`), else ''
 */
function gateFailures(run: ReplayRun, which: string, failOnOverflow: boolean, maxLost: number | null): string[] {
  const where = `${escapeForLine(run.file)}${which}: policy `;
  return run.policies.flatMap((p) => {
    if (p.strategy === 'none') return [];
    const policy = `${where}${escapeForLine(p.strategy)}`;
    const lines: string[] = [];
    if (failOnOverflow && p.overflows > 0)
      lines.push(
        `${policy} sent more than the ${run.contextWindow.toLocaleString('en-US')}-token window in ${p.overflows} call${p.overflows === 1 ? '' : 's'} (--fail-on-overflow)`,
      );
    if (maxLost !== null && p.lost.length > maxLost) {
      const named = p.lost.slice(0, 3).map((l) => escapeForLine(l.identifier));
      const more = p.lost.length > 3 ? `, and ${p.lost.length - 3} more` : '';
      lines.push(
        `${policy} lost ${p.lost.length} identifier${p.lost.length === 1 ? '' : 's'} needed again, over --max-lost ${maxLost} (${named.join(', ')}${more})`,
      );
    }
    return lines;
  });
}

/** Each run's failures of the CI gates, its place in its file named where the file holds several runs. */
function gateLines(runs: readonly ReplayRun[], failOnOverflow: boolean, maxLost: number | null): string[] {
  const perFile = new Map<string, number>();
  for (const r of runs) perFile.set(r.file, (perFile.get(r.file) ?? 0) + 1);
  const seen = new Map<string, number>();
  return runs.flatMap((r) => {
    const k = (seen.get(r.file) ?? 0) + 1;
    seen.set(r.file, k);
    const total = perFile.get(r.file) ?? 1;
    return gateFailures(r, total > 1 ? ` (run ${k} of ${total})` : '', failOnOverflow, maxLost);
  });
}

/**
 * Runs `swc replay`.
 * @returns 0; 1 when a compacting policy overflows (with --fail-on-overflow) or loses more than --max-lost
 *   identifiers that were needed again, in some run; 3 when a summary call failed; 2 when an input could not be
 *   read (2 wins over 3, 3 over 1)
 * @throws UsageError for a bad flag, or an input that matches no file
 */
export async function runReplay(
  inputs: readonly string[],
  flags: ReplayFlags,
  io: CliIo,
  report: (line: string) => void,
): Promise<number> {
  if (inputs.length === 0) throw new UsageError('no input given (a file, a directory, a quoted glob pattern, or -)');
  const policies = policiesOf(flags);
  checkUsed(inputs, flags, policies);
  const checked = policies.map((p) => settingsOf(inputs, flags, p));
  const base = checked[0] as CompactSettings;
  const summarizing = checked.find((s) => s.summarize !== null);
  const pruning = checked.find((s) => s.strategies.includes('prune'));
  const maxLost = flags.maxLost === undefined ? null : parseWhole('--max-lost', flags.maxLost, 0);
  const prices = await pricesFrom(flags.prices, io);
  const window = base.window as NonNullable<CompactSettings['window']>;
  const summary = summarizing === undefined ? null : await summaryOf(summarizing, flags, io);
  const options: FileReplayOptions = {
    tokenizer: base.tokenizer,
    counterOptions: base.counter,
    format: base.format,
    conversationKey: base.conversationKey,
    conversationPath: base.conversationPath,
    strategies: policies,
    contextWindow: window.tokens,
    compactAt: window.compactAt.value,
    compactTo: window.compactTo.value,
    minKeepSteps: base.minKeepSteps,
    ...(base.note === undefined ? {} : { note: base.note }),
    ...(pruning === undefined ? {} : { minTokens: pruning.minTokens }),
    ...(pruning?.placeholder === undefined ? {} : { placeholder: pruning.placeholder }),
    ...(summarizing?.summarize === undefined || summarizing.summarize === null
      ? {}
      : { summaryTokens: summarizing.summarize.summaryTokens }),
    ...(summary?.instruction === undefined ? {} : { summaryInstruction: summary.instruction }),
    ...(summary?.minRetention === undefined ? {} : { minRetention: summary.minRetention }),
    prices,
    summarizer: summary?.summarizer ?? null,
  };
  const replayer = await createFileReplayer(options);
  let code: number = EXIT.ok;
  const runs: ReplayRun[] = [];
  const targets = await findTargets(inputs, flags.ignore ?? [], io, quietLevel(flags.quiet) === 0 ? report : null);
  const reportTo = await reportPathOf(flags, targets, io);
  for (const t of targets) {
    try {
      const source = await readTarget(t, io);
      runs.push(...(await replayer.replay(source)));
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      report(`swc: ${recordError(t.shown, error).message}`);
      code = EXIT.error;
    }
  }
  const single = runs.length === 1 && inputs.length === 1 && code === EXIT.ok;
  const document: ReplayRun | ReplayRuns = single ? (runs[0] as ReplayRun) : { runs, totals: totalsOf(runs) };
  if (reportTo !== null && runs.length > 0) await writeReport(reportTo, document, io);
  if (flags.json === true) await writeAll(io.stdout, `${JSON.stringify(document, null, 2)}\n`);
  else if (reportTo?.kind === 'stdout') {
    // The page is standard output.
  } else if (runs.length > 0)
    await writeAll(
      io.stdout,
      renderReplay(
        printable(document),
        colorFor(io.stdout, io.env, colorWhen(flags.color)),
        widthOf(io),
        flags.changedOnly === true ? isChangedRun : undefined,
      ),
    );
  const failedCalls = warnFailedSummaries(runs, report);
  if (code === EXIT.ok && failedCalls > 0) code = EXIT.summaryFailed;
  // Said on stderr whatever the exit code, as --check names each file it fails.
  const gates = gateLines(runs, flags.failOnOverflow === true, maxLost);
  for (const line of gates) report(`swc: ${line}`);
  if (code === EXIT.ok && gates.length > 0) code = EXIT.changesNeeded;
  return code;
}

/**
 * The table's width, as `ls` finds it: the terminal's columns when stdout is one that reports them, else `COLUMNS`
 * when it is a whole number of columns, else 80.
 */
function widthOf(io: CliIo): number {
  const columns = io.stdout.columns;
  if (io.stdout.isTTY === true && typeof columns === 'number' && columns > 0) return columns;
  const given = io.env.COLUMNS ?? '';
  return /^[1-9][0-9]{0,5}$/.test(given) ? Number(given) : 80;
}

/**
 * Where summaries come from: the model given, or none (summaries of --summary-tokens assumed, nothing called) with
 * --dry-run or when no model is named.
 */
async function summaryOf(
  settings: CompactSettings,
  flags: ReplayFlags,
  io: CliIo,
): Promise<Awaited<ReturnType<typeof summarySourceFor>>> {
  const s = settings.summarize;
  const named =
    io.summarizer !== undefined ||
    (s !== null && (s.command !== undefined || s.baseUrl !== undefined || (io.env.OPENAI_BASE_URL ?? '') !== ''));
  return summarySourceFor({ ...settings, dryRun: flags.dryRun === true || !named }, io, io.summarizer);
}
