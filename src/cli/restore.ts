import {
  closeSync,
  constants as fsConstants,
  fstatSync,
  lstatSync,
  openSync,
  promises as fs,
  readdirSync,
  readFileSync,
  realpathSync,
} from 'node:fs';
import path from 'node:path';
import { escapeForLine, InputError, missingInput, UsageError } from '../errors.js';
import { compress, outputCompression, type CompressionFormat } from '../io/compressed.js';
import { ChangedError, describeFsError, identifyFile, isInside, realTarget, writeFileAtomic } from '../io/files.js';
import { readSourceFile, readStreamBounded, sourceFromBytes } from '../io/lines.js';
import { encodeOutput, type SourceText } from '../io/source.js';
import { restoreSource, type RestoreResult, type StoreReader, type StoreRecordFile } from '../pipeline/index.js';
import { writeAll, type CliIo } from './io.js';
import { STORE_MARKER } from './offload.js';
import { quietLevel } from './options.js';
import { checkConversationPath } from './settings.js';

/** Options of `swc restore` as commander hands them over. */
export interface RestoreFlags {
  offloadDir?: string;
  output?: string;
  inPlace?: boolean;
  /** How many times -q was given: once is enough to print nothing but errors. */
  quiet?: number;
  format?: string;
  conversationKey?: string;
  conversationPath?: string;
}

/**
 * `swc restore FILE [--offload-dir DIR]`: puts the results an offloading run replaced back, byte for byte, from the
 * store (the one the pointers lead to, or DIR); the transcript goes to stdout, `--output` or (`--in-place`) the file
 * itself, atomically; compressed as `-o`'s name says, as the input was with `--in-place`, plain on stdout.
 * @returns the exit code
 */
export async function runRestore(
  input: string,
  flags: RestoreFlags,
  io: CliIo,
  err: (line: string) => void,
): Promise<number> {
  if (flags.offloadDir === '')
    throw new UsageError('--offload-dir needs a folder: the store the results were offloaded to');
  if (flags.inPlace === true && flags.output !== undefined)
    throw new UsageError('--in-place and --output cannot be used together');
  if (flags.inPlace === true && input === '-')
    throw new UsageError('--in-place cannot rewrite standard input; use --output');
  const conversationPath = checkConversationPath(flags);
  if (input !== '-' && (await fs.lstat(path.resolve(io.cwd, input)).catch(() => null)) === null)
    throw new UsageError(missingInput(input));
  const dir =
    flags.offloadDir === undefined
      ? undefined
      : await storeFolder(path.resolve(io.cwd, flags.offloadDir), flags.offloadDir);
  const real = input === '-' ? '-' : await realTarget(path.resolve(io.cwd, input));
  const identity = real === '-' ? null : identifyFile(real);
  const source =
    real === '-' ? sourceFromBytes(await readStreamBounded(io.stdin), '<stdin>') : readSourceFile(real, input);
  try {
    // Relative references are relative to the transcript's folder (standard input's: the working directory).
    const store = storeReader(real === '-' ? io.cwd : path.dirname(real), dir);
    const result = restoreSource(source, {
      store,
      format: flags.format,
      conversationKey: flags.conversationKey,
      conversationPath,
    });
    const target =
      flags.inPlace === true
        ? real
        : flags.output !== undefined && flags.output !== '-'
          ? path.resolve(io.cwd, flags.output)
          : null;
    // --in-place keeps the input's name, so its compression; -o's name says; standard output gets plain text.
    const data = restoredBytes(
      source,
      result,
      flags.inPlace === true ? (source.compressed?.format ?? null) : outputCompression(target),
    );
    if (target !== null) {
      if (flags.inPlace !== true || result.changed) {
        try {
          await writeFileAtomic(target, data, { expect: target === real ? (identity ?? undefined) : undefined });
        } catch (error) {
          if (error instanceof ChangedError)
            throw new InputError(`${error.message}; nothing was written for it`, input);
          throw new InputError(`cannot write: ${describeFsError(error)}`, target);
        }
      }
    } else {
      await writeAll(io.stdout, data);
    }
    if (quietLevel(flags.quiet) === 0)
      err(
        `swc: ${escapeForLine(input)}: ${result.restored === 0 ? 'nothing to restore' : `restored ${result.restored} item${result.restored === 1 ? '' : 's'}`}`,
      );
    return 0;
  } finally {
    source.release?.();
  }
}

/** The bytes to write, compressed as asked (as `compact` does); unchanged and asked as it was read, the bytes read. */
function restoredBytes(source: SourceText, result: RestoreResult, compression: CompressionFormat | null): Uint8Array {
  if (!result.changed && source.compressed !== undefined && source.compressed.format === compression)
    return source.compressed.original();
  const plain = encodeOutput(result.changed ? result.output : source.text, source.bom);
  return compression === null ? plain : compress(plain, compression);
}

/**
 * The --offload-dir, resolved, which must be an existing folder: a mistyped store is an error, never "nothing to restore".
 * @throws UsageError naming it when it does not exist or is not a folder
 */
async function storeFolder(dir: string, given: string): Promise<string> {
  const stat = await fs.stat(dir).catch(() => null);
  if (stat === null) throw new UsageError(`the offload store ${given} does not exist (${dir})`);
  if (!stat.isDirectory()) throw new UsageError(`the offload store ${given} is not a folder (${dir})`);
  return dir;
}

/** A record's name beside the result `NAME`: `NAME.{16 hex digits}.swc.json`, or `NAME.swc.json` (stores before records were hashed). */
function isRecordName(name: string, result: string): boolean {
  if (!name.startsWith(result) || !name.endsWith('.swc.json')) return false;
  const middle = name.slice(result.length, -'.swc.json'.length);
  return middle === '' || /^\.[0-9a-f]{16}$/.test(middle);
}

/** The longest reference a pointer may give: longer than any path a file system opens (Linux's PATH_MAX). */
const MAX_REFERENCE = 4096;

/** The most trailing segments of a reference tried below a store given with --offload-dir (a store's depth is far less). */
const MAX_MOVED_SEGMENTS = 64;

/** Opening flags for a record: never through a link at its end, and never waiting on a FIFO put there. */
const RECORD_OPEN = fsConstants.O_RDONLY | (fsConstants.O_NOFOLLOW ?? 0) | (fsConstants.O_NONBLOCK ?? 0);

/** The real path of a path, or null when it cannot be resolved. */
function realOf(p: string): string | null {
  try {
    return realpathSync(p);
  } catch {
    return null;
  }
}

/** A record's text, read only when it is a regular file (checked on the opened file, so no link swapped in counts). */
function readRecord(at: string): string | null {
  let fd: number;
  try {
    // Where opening cannot refuse a link (Windows), the name is checked first.
    if (fsConstants.O_NOFOLLOW === undefined && !lstatSync(at).isFile()) return null;
    fd = openSync(at, RECORD_OPEN);
  } catch {
    return null;
  }
  try {
    return fstatSync(fd).isFile() ? readFileSync(fd, 'utf8') : null;
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/**
 * How restore reaches a store. With --offload-dir, references must lead inside it; one that does not (the transcript
 * or the store moved, an absolute path of another machine) is looked for as its path below the store's root, tried
 * from the longest. Without it, a reference's store is the nearest folder above its file that holds the store's
 * marker. Only regular files really inside that store are read, from a folder really inside it: a record that is a
 * link (to anywhere), or a folder that is a link leading out of the store, counts as missing. A reference longer
 * than any path is refused.
 */
function storeReader(home: string, dir: string | undefined): StoreReader {
  const realDir = dir === undefined ? null : realOf(dir);
  const roots = new Map<string, string | null>();
  /** The folder at or above `folder` holding the store's marker, or null (found walking up, every folder remembered). */
  const rootOf = (folder: string): string | null => {
    const walked: string[] = [];
    let at = folder;
    let found: string | null | undefined;
    for (;;) {
      found = roots.get(at);
      if (found !== undefined) break;
      walked.push(at);
      try {
        if (lstatSync(path.join(at, STORE_MARKER)).isFile()) {
          found = at;
          break;
        }
      } catch {
        // No marker here.
      }
      const parent = path.dirname(at);
      if (parent === at) {
        found = null;
        break;
      }
      at = parent;
    }
    for (const w of walked) roots.set(w, found);
    return found;
  };
  const records = (file: string): StoreRecordFile[] => {
    const root =
      dir !== undefined
        ? realDir
        : (() => {
            const r = rootOf(path.dirname(file));
            return r === null ? null : realOf(r);
          })();
    if (root === null) return [];
    const folder = path.dirname(file);
    const realFolder = realOf(folder);
    // A folder that is (or passes through) a link leading out of the store is not listed at all.
    if (realFolder === null || !isInside(root, realFolder)) return [];
    const base = path.basename(file);
    let names: string[];
    try {
      names = readdirSync(realFolder)
        .filter((name) => isRecordName(name, base))
        .sort();
    } catch {
      return [];
    }
    const out: StoreRecordFile[] = [];
    for (const name of names) {
      const text = readRecord(path.join(realFolder, name));
      if (text !== null) out.push({ path: path.join(folder, name), text });
    }
    return out;
  };
  return {
    locate(reference) {
      if (reference.length > MAX_REFERENCE)
        return { refused: `which is longer than any path (over ${MAX_REFERENCE} characters)` };
      const file = path.isAbsolute(reference) ? path.normalize(reference) : path.resolve(home, reference);
      if (dir !== undefined) {
        if (file !== dir && isInside(dir, file)) return { file };
        const segments = file.split(path.sep).filter((s) => s !== '');
        for (let i = Math.max(1, segments.length - MAX_MOVED_SEGMENTS); i < segments.length; i++) {
          const moved = path.join(dir, ...segments.slice(i));
          if (records(moved).length > 0) return { file: moved };
        }
        return { refused: `which is outside the offload store ${dir}` };
      }
      if (rootOf(path.dirname(file)) === null)
        return {
          refused: `which is in no offload store (no folder above it holds ${STORE_MARKER}): give the store with --offload-dir`,
        };
      return { file };
    },
    records,
  };
}
