import path from 'node:path';
import { UsageError, type InputError } from '../errors.js';
import { readSourceFile, readStreamBounded, sourceFromBytes } from '../io/lines.js';
import type { SourceText } from '../io/source.js';
import type { CliIo } from './io.js';

/** One file a reading command (inspect, replay) reads: where it is, and the name to show for it. */
export interface Target {
  readonly file: string;
  readonly shown: string;
  /** For a folder the search could not read: the error it fails with, as an unreadable file does. */
  readonly unreadable?: InputError;
}

/**
 * The files the inputs stand for, expanded as `swc compact` expands them (directories, glob patterns,
 * `--ignore`), sorted; a file named outright keeps the name it was typed with.
 * @param skipped told of each offloading store the search left out (null: not told, as under --quiet)
 * @throws UsageError for standard input beside other inputs or beside --ignore
 */
export async function findTargets(
  inputs: readonly string[],
  ignore: readonly string[],
  io: CliIo,
  skipped: ((line: string) => void) | null,
): Promise<Target[]> {
  if (inputs.includes('-')) {
    if (inputs.length > 1) throw new UsageError('- (standard input) cannot be mixed with other inputs');
    if (ignore.length > 0) throw new UsageError('--ignore needs files; standard input is a single stream');
    return [{ file: '-', shown: '<stdin>' }];
  }
  // Loaded here, not at the top: every command imports this module, and fast-glob is slow to load.
  const { expandInputs, skippedStoreLine, unreadableFolderError } = await import('../io/expand.js');
  const { files, skippedStores } = await expandInputs(inputs, { cwd: io.cwd, ignore });
  if (skipped !== null) for (const store of skippedStores) skipped(skippedStoreLine(store));
  const typed = new Map(inputs.map((input) => [path.resolve(io.cwd, input), input]));
  return files.map((f) =>
    f.unreadable !== undefined
      ? { file: f.absolute, shown: f.display, unreadable: unreadableFolderError(f) }
      : { file: f.absolute, shown: typed.get(f.absolute) ?? f.display },
  );
}

/**
 * Reads one input as compacting does: a file through `readSourceFile` (JSONL line by line, so a file past one
 * JavaScript string's size works), standard input whole and bounded, since it cannot be read twice.
 */
export async function readTarget(target: Target, io: CliIo): Promise<SourceText> {
  if (target.unreadable !== undefined) throw target.unreadable;
  return target.file === '-'
    ? sourceFromBytes(await readStreamBounded(io.stdin, target.shown), target.shown)
    : readSourceFile(target.file, target.shown);
}
