import path from 'node:path';
import { InputError, NoConversationError, UsageError } from '../errors.js';
import type { SourceText } from '../io/source.js';
import { createInspector } from '../pipeline/index.js';
import { isTokenizerName, TOKENIZERS } from '../tokens/index.js';
import { colorFor } from './color.js';
import { colorWhen, quietLevel } from './options.js';
import { EXIT } from './exit-codes.js';
import { hasErrors, type Inspected } from './view/inspect.js';
import { recordError } from './report.js';
import { INSPECT_REPORTERS, inspectReportersFor, type InspectContext, type InspectReporter } from './reporters.js';
import { checkConversationPath, counterOptionsOf } from './settings.js';
import type { CliIo } from './io.js';
import { findTargets, readTarget } from './targets.js';

/**
 * `swc inspect`: the structure and token cost of a transcript, and its problems: errors, which the provider of its
 * format rejects, and warnings, which it accepts (src/lint/rules.ts). The pipeline's inspector reads and checks
 * (src/pipeline/inspect.ts, src/lint); this module finds the files and hands what it found to the reporters the flags call for
 * (reporters.ts), which show it with inspect-view.ts.
 */

// The checks and the inspect road, reachable through the command's module too.
export { checkPairing } from '../lint/pairing.js';
export { inspectSource } from '../pipeline/index.js';
export type { Finding, Problem, ProblemKind, Rule, Severity } from '../lint/types.js';
export { providerOf, severityOf, type Provider } from '../lint/rules.js';
export type { InspectedConversation, Inspection } from '../outcome/inspection.js';
export { inspectDocument, renderInspect, renderProblems } from './view/inspect.js';

/** Options of `swc inspect` as commander hands them over. */
export interface InspectFlags {
  tokenizer?: string;
  format?: string;
  conversationKey?: string;
  conversationPath?: string;
  charsPerToken?: string;
  tokensPerImage?: string;
  tokensPerFile?: string;
  json?: boolean;
  jsonLines?: boolean;
  ignore?: string[];
  /** A file in which no conversation is found is skipped (counted in the total), not an error. */
  skipUnrecognized?: boolean;
  /** How many times -q was given. */
  quiet?: number;
  color?: string | boolean;
  debug?: boolean;
}

/** Whether the command named one file (or -): its JSON is then that file's document, as for `swc compact`. */
async function isSingleInput(inputs: readonly string[], io: CliIo): Promise<boolean> {
  if (inputs.length !== 1) return false;
  if (inputs[0] === '-') return true;
  const { promises: fs } = await import('node:fs');
  const stat = await fs.stat(path.resolve(io.cwd, inputs[0] as string)).catch(() => null);
  return stat?.isFile() === true;
}

/**
 * Runs `swc inspect` over its inputs.
 * @param inputs files, directories and quoted glob patterns, or - for standard input
 * @returns 0 when no error was found (warnings leave it alone), 1 when some was, 2 when an input could not be read
 *   (the highest wins)
 * @throws UsageError for a bad flag, or an input that matches no file
 */
export async function runInspect(
  inputs: readonly string[],
  flags: InspectFlags,
  io: CliIo,
  report: (line: string) => void,
  config: string | null = null,
): Promise<number> {
  const tokenizer = flags.tokenizer ?? 'o200k_base';
  if (!isTokenizerName(tokenizer))
    throw new UsageError(`unknown tokenizer "${tokenizer}" (choose one of: ${TOKENIZERS.join(', ')})`);
  if (flags.json === true && flags.jsonLines === true)
    throw new UsageError(
      '--json and --json-lines cannot be used together: one document for the run, or one line per file',
    );
  const counterOptions = counterOptionsOf(flags, tokenizer);
  if (inputs.length === 0) throw new UsageError('no input given (a file path, or - for standard input)');
  const conversationPath = checkConversationPath(flags);
  const targets = await findTargets(inputs, flags.ignore ?? [], io, quietLevel(flags.quiet) === 0 ? report : null);
  const inspector = await createInspector({
    tokenizer,
    counterOptions,
    format: flags.format ?? 'auto',
    conversationKey: flags.conversationKey,
    conversationPath,
  });
  const single = await isSingleInput(inputs, io);
  const quiet = quietLevel(flags.quiet);
  const ctx: InspectContext = {
    io,
    color: colorFor(io.stdout, io.env, colorWhen(flags.color)),
    width: io.stdout.isTTY && typeof io.stdout.columns === 'number' && io.stdout.columns > 0 ? io.stdout.columns : 80,
    quiet,
    single,
    tokenizer: inspector.tokenizer,
    config,
    shown: { files: 0 },
    skipped: { files: 0 },
  };
  const reporters = inspectReportersFor(flags, quiet, single).map((name) => INSPECT_REPORTERS[name] as InspectReporter);
  const found: Inspected[] = [];
  let code: number = EXIT.ok;
  for (const target of targets) {
    let done: Inspected;
    let source: SourceText | null = null;
    try {
      source = await readTarget(target, io);
      done = { file: target.shown, inspection: inspector.inspect(source) };
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      if (flags.skipUnrecognized === true && error instanceof NoConversationError) {
        // Other JSON beside the transcripts (a package.json): counted apart, not an error, as compact counts it.
        ctx.skipped.files++;
        continue;
      }
      report(`swc: ${error.message}`);
      done = { file: target.shown, error: recordError(target.shown, error) };
      code = EXIT.error;
    } finally {
      // An inspection is plain data: what reading held (a decompressed spool) can go.
      source?.release?.();
    }
    found.push(done);
    if ('inspection' in done && hasErrors(done.inspection)) code = Math.max(code, EXIT.problems);
    for (const r of reporters) await r.file?.(done, ctx);
  }
  for (const r of reporters) await r.end?.(found, ctx);
  return code;
}
