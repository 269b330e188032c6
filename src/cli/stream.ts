import path from 'node:path';
import { existsSync } from 'node:fs';
import { escapeForLine, InputError, missingInput, UsageError } from '../errors.js';
import { outputCompression } from '../io/compressed.js';
import {
  ChangedError,
  describeFsError,
  identifyFile,
  realTarget,
  writeFileAtomic,
  type FileIdentity,
} from '../io/files.js';
import { readSourceFile, readStreamBounded, sourceFromBytes } from '../io/lines.js';
import {
  createFileCompactor,
  DEFAULT_PLACEHOLDER,
  outputBytes,
  noteTemplate,
  type FileCompactor,
  type FileResult,
} from '../pipeline/index.js';
import { EXIT } from './exit-codes.js';
import { writeAll, type CliIo } from './io.js';
import { checkReportPath, emitJson, reportTarget, standardStream } from './json-output.js';
import { loadLazily } from './lazy.js';
import { counterSettingsOf, windowThresholds, type CompactSettings } from './settings.js';

/** One input to stdout or --output, in this thread: the run of one file. */

/** The summarize strategy's modules (the model layer, the rounds) load only when the chain holds summarize. */
async function loadSummarizing(): Promise<typeof import('./summary-source.js') & typeof import('../summarize-run.js')> {
  const [source, run] = await loadLazily(() =>
    Promise.all([import('./summary-source.js'), import('../summarize-run.js')]),
  );
  return { ...source, ...run };
}

/** The offload store's module loads only with --offload-dir. */
function loadOffload(): Promise<typeof import('./offload.js')> {
  return loadLazily(() => import('./offload.js'));
}

/** The JSON plan's module (and what it says a compaction forgets) loads only with --json or --report. */
function loadPlan(): Promise<typeof import('./plan-json.js')> {
  return loadLazily(() => import('./plan-json.js'));
}

/** The one-line account of a result loads only when it is printed (not with -q, which a run on one file needs no total for). */
function loadSummaryLine(): Promise<typeof import('./result-line.js')> {
  return loadLazily(() => import('./result-line.js'));
}

/** Reads one input (a file, or - for standard input) and compacts it. */
export async function compactInput(
  input: string,
  compactor: FileCompactor,
  io: CliIo,
  shown = input,
  home?: string,
): Promise<FileResult> {
  // JSONL is read line by line (no whole-file copy, files past JavaScript's string limit work).
  const source =
    input === '-'
      ? sourceFromBytes(await readStreamBounded(io.stdin), '<stdin>')
      : readSourceFile(path.resolve(io.cwd, input), shown);
  try {
    return await compactor.compact(source, home === undefined ? undefined : { home });
  } catch (error) {
    // No result will read it: what reading held (a decompressed spool) goes now.
    source.release?.();
    throw error;
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
 * Writes a result to --output (its real path, resolved when the run started) or a standard stream. An --output that
 * is the input itself is replaced only if the input is still the file that was read.
 */
async function deliver(
  input: StreamInput,
  out: string | null,
  result: FileResult,
  settings: CompactSettings,
  io: CliIo,
): Promise<void> {
  // The name given to --output says how the result is compressed; a standard stream gets it plain.
  const data = outputBytes(
    result,
    outputCompression(out !== null && settings.output !== undefined ? settings.output : null),
  );
  // The store files first, flushed: a transcript never points at a result that is not there.
  if (result.stored.length > 0 && settings.offloadDir !== undefined)
    await (await loadOffload()).writeStore(result.stored, path.resolve(io.cwd, settings.offloadDir), input.shown);
  if (out !== null && settings.output !== undefined) {
    try {
      const isInput = input.real !== '-' && out === input.real;
      if (isInput && input.identity === null)
        throw new InputError('is not a regular file, so it cannot be replaced by its result', settings.output);
      await writeFileAtomic(out, data, {
        realDir: path.dirname(out),
        expect: isInput ? (input.identity ?? undefined) : undefined,
      });
    } catch (error) {
      if (error instanceof InputError) throw error;
      if (error instanceof ChangedError)
        throw new InputError(`${error.message}; nothing was written for it`, input.shown);
      throw new InputError(`cannot write: ${describeFsError(error)}`, settings.output);
    }
    return;
  }
  const stream = settings.output !== undefined && standardStream(settings.output) === 'stderr' ? io.stderr : io.stdout;
  await writeAll(stream, data);
}

/** One input to stdout or --output, in this thread. */
export async function runStream(settings: CompactSettings, io: CliIo, report: (line: string) => void): Promise<number> {
  const given = settings.inputs[0] as string;
  const real = given === '-' ? '-' : await realTarget(path.resolve(io.cwd, given));
  // Said as every command says it (batch runs and inspect find their inputs with expandInputs).
  if (real !== '-' && !existsSync(real)) throw new UsageError(missingInput(given));
  // Every path to write is resolved once, now: a link planted there later is replaced, never written through.
  const reportPath = await checkReportPath(settings, io, real === '-' ? [] : [real]);
  const json = reportTarget(settings, reportPath.file);
  const out =
    settings.output === undefined || standardStream(settings.output) !== null
      ? null
      : await realTarget(path.resolve(io.cwd, settings.output));
  const store = settings.offloadDir === undefined ? undefined : await (await loadOffload()).offloadStore(settings, io);
  const summarize = settings.summarize === null ? null : await loadSummarizing();
  const summary = summarize === null ? null : await summarize.summarySourceFor(settings, io, io.summarizer);
  const runOptions = {
    tokenizer: settings.tokenizer,
    counterOptions: settings.counter,
    target: settings.target,
    window: windowThresholds(settings),
    minKeepSteps: settings.minKeepSteps,
    strategies: settings.strategies,
    minTokens: settings.minTokens,
    placeholder: settings.placeholder,
    ...(store !== undefined ? { offload: store } : {}),
    note: settings.note,
    format: settings.format,
    conversationKey: settings.conversationKey,
    conversationPath: settings.conversationPath,
    exhaustive: json !== null,
    exact: settings.exact,
    // The plan --json prints says what the compaction forgets; without it, nothing works that out.
    inventory: json !== null,
  };
  const compactor = await createFileCompactor(
    runOptions,
    summarize === null || summary === null ? undefined : summarize.summaryRunner(summary),
  );
  // Taken before reading: a change from here on (an append to a live log) shows when an --output that is the input is replaced.
  const input: StreamInput = { shown: given, real, identity: real === '-' ? null : identifyFile(real) };
  // Pointers are relative to the folder the result is written to (for a standard stream: the input's).
  const home = out !== null ? path.dirname(out) : real === '-' ? io.cwd : path.dirname(real);
  let result: FileResult;
  try {
    result = await compactInput(real, compactor, io, given, home);
  } catch (error) {
    // A --strict failure still says what its calls cost.
    if (summarize !== null && summary !== null && error instanceof summarize.StrictSummaryError && settings.quiet === 0)
      report(summarize.usageLine(error.usage, summary.summarizer === null, summary.summaryTokens));
    throw error;
  }
  const spent = result.summaries;
  if (spent !== undefined && summary !== null && summarize !== null) {
    for (const warning of spent.warnings) io.stderr.write(`swc: warning: ${warning}\n`);
    if (settings.quiet === 0)
      report(summarize.usageLine(spent.usage, summary.summarizer === null, summary.summaryTokens));
  }
  // A stand-in (a dry run, --check) calls no model: only a real call can fail the run.
  const failedCalls = summary === null || summary.summarizer === null ? 0 : (spent?.usage.failed ?? 0);
  let over: string | null = null;
  try {
    await finishStream(input, out, result, settings, io, report, compactor.tokenizer, json);
    // Worked out before the source goes: why a conversation misses its target may read its messages.
    if (settings.failOverTarget) over = (await loadSummaryLine()).overTargetText(result, settings.target);
  } finally {
    // What reading held (a decompressed spool) goes once the result has been written and described.
    result.layout.source.release?.();
  }
  if (failedCalls > 0) return EXIT.summaryFailed;
  if (over === null) return EXIT.ok;
  report(`swc: ${escapeForLine(given)}: ${over}`);
  return EXIT.changesNeeded;
}

/** Writes a stream run's result and says what happened. */
async function finishStream(
  input: StreamInput,
  out: string | null,
  result: FileResult,
  settings: CompactSettings,
  io: CliIo,
  report: (line: string) => void,
  tokenizer: string,
  json: ReturnType<typeof reportTarget>,
): Promise<void> {
  await deliver(input, out, result, settings, io);
  const { window } = settings;
  if (settings.quiet === 0 && json?.kind !== 'stderr') {
    const { describeOutcome } = await loadSummaryLine();
    report(
      describeOutcome(result, { tokenizer, target: settings.target, minKeepSteps: settings.minKeepSteps, window }),
    );
  }
  if (json !== null) {
    const { planDocument } = await loadPlan();
    const plan = planDocument(result, {
      target: settings.target,
      tokenizer: settings.tokenizer,
      counter: counterSettingsOf(settings),
      minKeepSteps: settings.minKeepSteps,
      note: noteTemplate(settings.note),
      format: settings.format,
      window,
      strategies: settings.strategies,
      minTokens: settings.minTokens,
      placeholder: settings.placeholder ?? DEFAULT_PLACEHOLDER,
      offloadOver: settings.offloadOver,
      config: settings.config,
    });
    await emitJson(json, plan, io);
  }
}
