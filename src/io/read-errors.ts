import { InputError } from '../errors.js';
import { describeFsError } from './files.js';

/** The errors of reading an input, worded once for every way of reading it. */

/** A file that changed while it was read. */
export function changedWhileRead(file: string): InputError {
  return new InputError('the file changed while it was being read; nothing was written for it', file);
}

/** A file that changed between its reading and a later read of its lines. */
export function changedWhileCompacted(file: string, how: string): InputError {
  return new InputError(`the file changed while it was being compacted (${how}); nothing was written for it`, file);
}

/** A device named as an input (reading one may never end). */
export function deviceRefused(file: string): InputError {
  return new InputError('is a device, not a transcript file', file);
}

/** A pipe or standard input that brought more than the limit. */
export function streamTooLarge(file: string, limit: number): InputError {
  return new InputError(
    `the input is too large (more than ${describeSize(limit)} from a pipe or standard input, which is held in memory whole; that is the limit)`,
    file,
  );
}

/** A whole-JSON file over the limit. */
export function jsonTooLarge(file: string, size: number, limit: number): InputError {
  return new InputError(
    `is ${describeSize(size)}; whole JSON files over ${describeSize(limit)} are refused (a JSON file is read as one text, and a JavaScript string holds about 512 MiB at most; a JSONL file has no such limit)`,
    file,
  );
}

/** A size in MiB, KiB or bytes, rounded up (a size just over a limit is never shown as the limit). */
function describeSize(bytes: number): string {
  if (bytes >= 1 << 20) return `${Math.ceil(bytes / (1 << 20))} MiB`;
  if (bytes >= 1 << 10) return `${Math.ceil(bytes / (1 << 10))} KiB`;
  return `${bytes} bytes`;
}

/** A file the file system refused to read. */
export function cannotRead(error: unknown, file: string): InputError {
  return new InputError(`cannot read: ${describeFsError(error)}`, file);
}
