import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { TokenCounter } from '../core/types.js';
import { InputError, UsageError } from '../errors.js';
import { describeFsError, readStdin, writeFileAtomic } from '../io/files.js';
import { decodeSource, encodeOutput } from '../io/source.js';
import { compactSource, type FileResult } from '../pipeline.js';
import { createCounter, isTokenizerName, TOKENIZERS, type TokenizerName } from '../tokens/index.js';
import { writeAll, type CliIo } from './io.js';
import { parseWhole } from './options.js';
import { describeOutcome } from './summary.js';

/** Options of `swc compact` as commander hands them over. */
export interface CompactFlags {
  target?: string;
  minKeepSteps?: string;
  note?: string | boolean;
  tokenizer?: string;
  format?: string;
  output?: string;
  inPlace?: boolean;
  quiet?: boolean;
  debug?: boolean;
  color?: boolean;
}

/** Validated settings of one `swc compact` run. */
export interface CompactSettings {
  readonly inputs: readonly string[];
  readonly target: number;
  readonly minKeepSteps: number;
  /** undefined: the default note; null: no note; otherwise the template. */
  readonly note: string | null | undefined;
  readonly tokenizer: TokenizerName;
  readonly format: string;
  readonly output: string | undefined;
  readonly inPlace: boolean;
  readonly quiet: boolean;
}

/** Checks flags and turns them into settings; every problem is a UsageError that says what to do. */
export function resolveSettings(inputs: readonly string[], flags: CompactFlags): CompactSettings {
  if (flags.target === undefined) throw new UsageError('--target <tokens> is required (the token budget to compact to)');
  const target = parseWhole('--target', flags.target, 1);
  const minKeepSteps = flags.minKeepSteps === undefined ? 1 : parseWhole('--min-keep-steps', flags.minKeepSteps, 0);
  const tokenizer = flags.tokenizer ?? 'o200k_base';
  if (!isTokenizerName(tokenizer)) throw new UsageError(`unknown tokenizer "${tokenizer}" (choose one of: ${TOKENIZERS.join(', ')})`);
  const note = flags.note === false ? null : flags.note === true || flags.note === undefined ? undefined : flags.note === '' ? null : flags.note;
  if (inputs.length === 0) throw new UsageError('no input given (a file path, or - for standard input)');
  if (flags.inPlace && flags.output !== undefined) throw new UsageError('--in-place and --output cannot be used together');
  if (flags.inPlace && inputs.includes('-')) throw new UsageError('--in-place cannot rewrite standard input; use --output');
  if (inputs.length > 1 && !flags.inPlace) {
    throw new UsageError(`${inputs.length} inputs given: add --in-place to rewrite each file (or give one input)`);
  }
  return {
    inputs,
    target,
    minKeepSteps,
    note,
    tokenizer,
    format: flags.format ?? 'auto',
    output: flags.output,
    inPlace: flags.inPlace === true,
    quiet: flags.quiet === true,
  };
}

/** Reads an input (a path, or - for standard input) as bytes. */
export async function readInput(input: string, io: CliIo): Promise<Uint8Array> {
  if (input === '-') return readStdin(io.stdin);
  try {
    return await fs.readFile(path.resolve(io.cwd, input));
  } catch (error) {
    throw new InputError(`cannot read: ${describeFsError(error)}`, input);
  }
}

/** Compacts one input with a counter; returns the decision and the output text. */
export async function compactInput(input: string, settings: CompactSettings, counter: TokenCounter, io: CliIo): Promise<FileResult> {
  const bytes = await readInput(input, io);
  const source = decodeSource(bytes, input === '-' ? '<stdin>' : input);
  return compactSource(source, {
    target: settings.target,
    minKeepSteps: settings.minKeepSteps,
    note: settings.note,
    format: settings.format,
    counter,
  });
}

/** Writes a result where the settings say: in place (only when changed), to --output, or to stdout. */
async function deliver(input: string, result: FileResult, settings: CompactSettings, io: CliIo): Promise<void> {
  const data = encodeOutput(result.output, result.layout.source.bom);
  if (settings.inPlace) {
    if (!result.changed) return;
    try {
      await writeFileAtomic(path.resolve(io.cwd, input), data);
    } catch (error) {
      throw new InputError(`cannot write: ${describeFsError(error)} (the original is unchanged)`, input);
    }
    return;
  }
  if (settings.output !== undefined && settings.output !== '-') {
    const out = path.resolve(io.cwd, settings.output);
    try {
      await writeFileAtomic(out, data, input === '-' ? undefined : path.resolve(io.cwd, input));
    } catch (error) {
      throw new InputError(`cannot write: ${describeFsError(error)}`, settings.output);
    }
    return;
  }
  await writeAll(io.stdout, data);
}

/**
 * Runs `swc compact` for validated settings.
 * @returns the exit code: 0 done, 2 when an input could not be read, parsed or written
 */
export async function runCompact(settings: CompactSettings, io: CliIo, report: (line: string) => void): Promise<number> {
  const counter = await createCounter(settings.tokenizer);
  let failed = 0;
  for (const input of settings.inputs) {
    try {
      const result = await compactInput(input, settings, counter, io);
      await deliver(input, result, settings, io);
      if (!settings.quiet) report(describeOutcome(result, settings.target, counter.name));
    } catch (error) {
      if (!(error instanceof InputError) || settings.inputs.length === 1) throw error;
      report(`swc: ${error.message}`);
      failed++;
    }
  }
  return failed > 0 ? 2 : 0;
}
