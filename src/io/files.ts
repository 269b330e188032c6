import { randomBytes } from 'node:crypto';
import { promises as fs, unlinkSync } from 'node:fs';
import path from 'node:path';

/**
 * Atomic file replacement: write a temporary file beside the target, flush it, give it the target's mode,
 * rename it over the target. A reader (or a crash) sees the old file or the new one, never a mix.
 */

const pending = new Set<string>();
let handlersInstalled = false;
/** Writes between their first step and their rename or clean-up. */
let inFlight = 0;
/** Set once a signal asks the process to stop: writes still in flight remove their temporary file and stop. */
let interrupted = false;
/** Re-raises the signal once the writes in flight have cleaned up. */
let whenSettled: (() => void) | null = null;

/** Thrown inside a write that an interrupt overtook; its temporary file is removed on the way out. */
class Interrupted extends Error {}

function removePending(): void {
  for (const tmp of pending) {
    try {
      unlinkSync(tmp);
    } catch {
      // already renamed or gone
    }
  }
  pending.clear();
}

/**
 * Removes temporary files when the process is interrupted. A temporary file whose creation is still in flight when
 * the signal arrives would appear after a plain clean-up, so the signal is re-raised only once every write in
 * flight has stopped and removed its own file (or after two seconds at most).
 */
function installCleanup(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.on('exit', removePending);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      interrupted = true;
      removePending();
      const raise = (): void => {
        removePending();
        process.kill(process.pid, signal);
      };
      if (inFlight === 0) raise();
      else {
        whenSettled = raise;
        setTimeout(raise, 2000).unref();
      }
    });
  }
}

/** Stops a write that an interrupt overtook. */
function checkInterrupted(): void {
  if (interrupted) throw new Interrupted('interrupted');
}

/**
 * Replaces a file's content atomically. A symlink is followed: the file it points to is rewritten and the link stays.
 * A device, FIFO or socket is written into directly (there is nothing to replace atomically).
 * @param file the path to write
 * @param data the new content
 * @param modeFrom a file whose permission bits the new file gets (defaults to the target when it exists)
 * @param durable flush the new content and the directory to disk before and after the rename, so a power loss
 *   leaves the old file or the new one, never an empty one: for replacing an input (`--in-place`). Results written
 *   beside the inputs (`--out-dir`) skip it, as compilers and formatters do: two flushes per file would make disk
 *   waits, not work, the cost of a large batch.
 */
export async function writeFileAtomic(file: string, data: Uint8Array, modeFrom?: string, durable = true): Promise<void> {
  installCleanup();
  let target = file;
  try {
    target = await fs.realpath(file);
  } catch {
    // a new file: write where asked
  }
  const existing = await fs.stat(target).catch(() => null);
  if (existing !== null && !existing.isFile() && !existing.isDirectory()) {
    // A device, FIFO or socket (`-o /dev/null`, `-o /dev/stdout`) is written into, never replaced by a file.
    await fs.writeFile(target, data);
    return;
  }
  let mode = 0o644;
  try {
    mode = (await fs.stat(modeFrom ?? target)).mode & 0o7777;
  } catch {
    // new file: default mode
  }
  const dir = path.dirname(target);
  // The name keeps a short prefix of the target's so it stays under the 255-byte limit of file names.
  const tmp = path.join(dir, `.${Array.from(path.basename(target)).slice(0, 48).join('')}.swc-${process.pid}-${randomBytes(4).toString('hex')}.tmp`);
  checkInterrupted();
  pending.add(tmp);
  inFlight++;
  try {
    const handle = await fs.open(tmp, 'wx', mode);
    try {
      checkInterrupted();
      await handle.writeFile(data);
      checkInterrupted();
      if (durable) await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.chmod(tmp, mode);
    checkInterrupted();
    await fs.rename(tmp, target);
    pending.delete(tmp);
    if (durable) await syncDirectory(dir);
  } catch (error) {
    pending.delete(tmp);
    await fs.unlink(tmp).catch(() => undefined);
    throw error;
  } finally {
    inFlight--;
    if (inFlight === 0 && whenSettled !== null) whenSettled();
  }
}

/** Flushes a directory so a rename in it survives a power cut (best effort: not every file system allows it). */
async function syncDirectory(dir: string): Promise<void> {
  try {
    const handle = await fs.open(dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // not supported here; the rename itself is still atomic
  }
}

/** Reads all of standard input. */
export async function readStdin(stream: NodeJS.ReadableStream = process.stdin): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks);
}

/** Explains a file-system error in plain words. */
export function describeFsError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case 'ENOENT':
      return 'no such file';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'is a directory';
    case 'ENOTDIR':
      return 'a part of the path is not a directory';
    case 'ENAMETOOLONG':
      return 'the file name is too long';
    case 'EEXIST':
      return 'a file is in the way';
    case 'ENOSPC':
      return 'no space left on the device';
    case 'EROFS':
      return 'read-only file system';
    case 'ERR_FS_FILE_TOO_LARGE':
      return 'the file is too large to read as one text (over 2 GiB)';
    default:
      return error instanceof Error ? error.message : String(error);
  }
}
