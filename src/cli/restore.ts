import { lstatSync, promises as fs, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { InputError, UsageError } from '../errors.js';
import { ChangedError, describeFsError, identifyFile, isInside, realTarget, writeFileAtomic } from '../io/files.js';
import { readSourceFile, readStreamBounded, sourceFromBytes } from '../io/lines.js';
import { encodeOutput } from '../io/source.js';
import { restoreSource } from '../pipeline.js';
import { writeAll, type CliIo } from './io.js';

/** Options of `swc restore` as commander hands them over. */
export interface RestoreFlags {
  offloadDir?: string;
  output?: string;
  inPlace?: boolean;
  quiet?: boolean;
}

/**
 * `swc restore FILE --offload-dir DIR`: puts the results an offloading run replaced back, byte for byte, from the
 * store; the transcript goes to stdout, `--output` or (`--in-place`) the file itself, atomically.
 * @returns the exit code
 */
export async function runRestore(input: string, flags: RestoreFlags, io: CliIo, err: (line: string) => void): Promise<number> {
  if (flags.offloadDir === undefined || flags.offloadDir === '') throw new UsageError('swc restore needs --offload-dir <dir>, the store the results were offloaded to');
  if (flags.inPlace === true && flags.output !== undefined) throw new UsageError('--in-place and --output cannot be used together');
  if (flags.inPlace === true && input === '-') throw new UsageError('--in-place cannot rewrite standard input; use --output');
  const dir = path.resolve(io.cwd, flags.offloadDir);
  const real = input === '-' ? '-' : await realTarget(path.resolve(io.cwd, input));
  const identity = real === '-' ? null : identifyFile(real);
  const source = real === '-' ? sourceFromBytes(await readStreamBounded(io.stdin), '<stdin>') : readSourceFile(real, input);
  const realDir = await fs.realpath(dir).catch(() => dir);
  // Only regular files really inside the store are read: a record that is a link (to anywhere) counts as missing.
  const read = (file: string): string | null => {
    try {
      if (!lstatSync(file).isFile() || !isInside(realDir, realpathSync(file))) return null;
      return readFileSync(file, 'utf8');
    } catch {
      return null;
    }
  };
  const result = restoreSource(source, dir, read);
  const data = result.changed ? encodeOutput(result.output, source.bom) : encodeOutput(source.text, source.bom);
  const target = flags.inPlace === true ? real : flags.output !== undefined && flags.output !== '-' ? path.resolve(io.cwd, flags.output) : null;
  if (target !== null) {
    if (flags.inPlace !== true || result.changed) {
      try {
        await writeFileAtomic(target, data, { expect: target === real ? (identity ?? undefined) : undefined });
      } catch (error) {
        if (error instanceof ChangedError) throw new InputError(`${error.message}; nothing was written for it`, input);
        throw new InputError(`cannot write: ${describeFsError(error)}`, target);
      }
    }
  } else {
    await writeAll(io.stdout, data);
  }
  if (flags.quiet !== true) err(`swc: ${input}: ${result.restored === 0 ? 'nothing to restore' : `restored ${result.restored} item${result.restored === 1 ? '' : 's'}`}`);
  return 0;
}
