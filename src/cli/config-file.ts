import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readFileSync,
  realpathSync,
  statSync,
  type Stats,
} from 'node:fs';
import path from 'node:path';
import { JsonDepthError, parseJson } from '../core/json/value.js';
import { UsageError } from '../errors.js';
import { describeFsError } from '../io/files.js';
import { lineColumn } from '../io/source.js';

/**
 * A settings file read from a checkout nobody vouches for: its path is looked at before it is opened, so a folder, a
 * FIFO or a broken link in its place is named rather than waited on or passed over, and an error about its text
 * quotes none of it (the path may be a link to any file on the machine, and the error may land in a public CI log).
 */

/**
 * The real path a folder has or would have once made: links resolved as far as the path exists.
 * @returns null when a link on the way leads nowhere or loops
 */
export function realFolder(dir: string): string | null {
  try {
    return realpathSync(dir);
  } catch {
    // not there yet, or a link that cannot be followed: lstat tells which
  }
  try {
    if (lstatSync(dir, { throwIfNoEntry: false }) !== undefined) return null;
  } catch {
    return null;
  }
  const parent = path.dirname(dir);
  const real = parent === dir ? null : realFolder(parent);
  return real === null ? null : path.join(real, path.basename(dir));
}

/** The largest settings file read: a link to a log or a disk image is not read whole into memory. */
const MAX_CONFIG_BYTES = 8 * 1024 * 1024;

/** Words for what is at a settings file's path instead of a regular file. */
function kindOf(stat: Stats): string {
  if (stat.isDirectory()) return 'a directory';
  if (stat.isFIFO()) return 'a FIFO';
  if (stat.isSocket()) return 'a socket';
  if (stat.isCharacterDevice() || stat.isBlockDevice()) return 'a device';
  return 'something other than a file';
}

/**
 * What is at a settings file's path: nothing, a regular file (links followed), or what else is in its place (a
 * folder, a FIFO, a link to nothing or in a loop). Found with lstat and stat, never by opening: opening a FIFO waits
 * for a writer.
 * @throws UsageError naming the path when it cannot be looked at
 */
export function entryAt(file: string, shownName: string): 'absent' | 'file' | { readonly not: string } {
  let stat: Stats | undefined;
  try {
    stat = lstatSync(file, { throwIfNoEntry: false });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOTDIR') return 'absent';
    throw new UsageError(`${shownName}: cannot read: ${describeFsError(error)}`);
  }
  if (stat === undefined) return 'absent';
  if (stat.isSymbolicLink()) {
    try {
      stat = statSync(file);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return { not: 'a symbolic link to nothing' };
      if (code === 'ELOOP') return { not: 'a symbolic link that loops' };
      throw new UsageError(`${shownName}: cannot read: ${describeFsError(error)}`);
    }
  }
  return stat.isFile() ? 'file' : { not: kindOf(stat) };
}

/**
 * A settings file's text. Opened without waiting (a FIFO swapped in after `entryAt` looked is then found by fstat,
 * not waited on) and read only when it is a regular file of a sane size.
 */
function readText(file: string, shownName: string): string {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    throw new UsageError(`${shownName}: cannot read: ${describeFsError(error)}`);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new UsageError(`${shownName}: not a settings file: ${kindOf(stat)}`);
    if (stat.size > MAX_CONFIG_BYTES)
      throw new UsageError(`${shownName}: not a settings file: larger than ${MAX_CONFIG_BYTES / 1048576} MiB`);
    return readFileSync(fd, 'utf8');
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`${shownName}: cannot read: ${describeFsError(error)}`);
  } finally {
    closeSync(fd);
  }
}

/**
 * Reads a JSON file, or says in one line where it stops being JSON. The error quotes none of the text: the path may
 * be a link to any file on the machine, and the line may end up in a public CI log.
 */
export function readJson(file: string, shownName: string): unknown {
  const text = readText(file, shownName).replace(/^\uFEFF/, '');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new UsageError(`${shownName}${positionOfError(text)}: not valid JSON`);
  }
}

/** `:line:column` of the first thing in a text that is not JSON, or '' when the lossless reader finds none. */
function positionOfError(text: string): string {
  try {
    parseJson(text);
  } catch (error) {
    if (error instanceof JsonDepthError || !(error instanceof Error) || !('offset' in error)) return '';
    const { line, column } = lineColumn(text, error.offset as number);
    return `:${line}:${column}`;
  }
  return '';
}

/** Whether a folder holds `.git` (a folder, or a worktree's file): anything there, link or not, counts. */
export function isRepositoryRoot(dir: string): boolean {
  try {
    return lstatSync(path.join(dir, '.git'), { throwIfNoEntry: false }) !== undefined;
  } catch {
    return false;
  }
}
