import { randomBytes } from 'node:crypto';
import { lstatSync, promises as fs, readdirSync, rmSync, unlinkSync, type Stats } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * Atomic file replacement: write a temporary file beside the target (created exclusively, so no link is followed),
 * flush it, then rename it over the target only if the target is still what the run resolved. A reader (or a crash)
 * sees the old file or the new one, never a mix; a file that changed since it was read is never replaced.
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

/**
 * Test seam: called right before each rename with the path about to be replaced, so a test can make a concurrent
 * change happen at that exact point (no sleeps). Never set outside tests.
 */
export const writeHooks: {
  beforeRename?: (target: string) => void | Promise<void>;
  /** Called after the last check, right before the rename or link: where only the look after it can catch a swap. */
  beforePlace?: (target: string) => void | Promise<void>;
} = {};

/** What makes a file the one that was read: the inode it is, and its size and times then. */
export interface FileIdentity {
  readonly dev: number;
  readonly ino: number;
  readonly size: number;
  readonly mtimeMs: number;
  readonly ctimeMs: number;
  readonly uid: number;
  readonly gid: number;
  readonly mode: number;
}

/** The identity of a file as `stat` gives it. */
export function identityOf(stat: Stats): FileIdentity {
  return {
    dev: stat.dev,
    ino: stat.ino,
    size: stat.size,
    mtimeMs: stat.mtimeMs,
    ctimeMs: stat.ctimeMs,
    uid: stat.uid,
    gid: stat.gid,
    mode: stat.mode,
  };
}

/**
 * The identity of a path itself, links not followed: taken before a file is read, so any change after (an append,
 * a rewrite, a link swapped in) shows at write time.
 * @returns null when the path is not a regular file (or cannot be looked at)
 */
export function identifyFile(file: string): FileIdentity | null {
  let stat: Stats;
  try {
    stat = lstatSync(file);
  } catch {
    // Missing or unreadable: the read that follows says why.
    return null;
  }
  return stat.isFile() ? identityOf(stat) : null;
}

/** Whether a path is a regular file now (links not followed); false when it is missing. */
export function isRegularFile(file: string): boolean {
  try {
    return lstatSync(file).isFile();
  } catch {
    return false;
  }
}

/** Whether a file is still the one identified: same inode, size and times. */
export function isSameFile(now: Stats, then: FileIdentity): boolean {
  return (
    now.isFile() &&
    now.dev === then.dev &&
    now.ino === then.ino &&
    now.size === then.size &&
    now.mtimeMs === then.mtimeMs &&
    now.ctimeMs === then.ctimeMs
  );
}

/** Thrown when the file to replace is no longer the one that was read; nothing is written. */
export class ChangedError extends Error {
  readonly code = 'ECHANGED';
}

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
 * The prefix of this process's temporary folders for decompressed text (src/io/lines.ts): worker threads share the
 * process id, so the main thread's clean-up finds theirs too.
 */
export function spoolPrefix(): string {
  return `swc-spool-${process.pid}-`;
}

/** Removes this process's spool folders (an interrupted run leaves no decompressed copy of a transcript behind). */
function removeSpools(): void {
  let names: string[];
  try {
    names = readdirSync(tmpdir());
  } catch {
    return;
  }
  const prefix = spoolPrefix();
  for (const name of names) {
    if (name.startsWith(prefix)) rmSync(path.join(tmpdir(), name), { recursive: true, force: true });
  }
}

/**
 * Installs the clean-up of temporary files and spools on exit and on SIGINT, SIGTERM, SIGHUP, SIGQUIT and SIGUSR2
 * (the binary calls it at start-up; writes call it too). Idempotent.
 */
export function cleanUpOnInterrupt(): void {
  installCleanup();
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
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGUSR2'] as const) {
    process.once(signal, () => {
      interrupted = true;
      removePending();
      const raise = (): void => {
        removePending();
        // A normal exit removes each thread's spools itself; a signal ends every thread at once, so they are found here.
        removeSpools();
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

/** How a write treats what is at the target path. */
export interface WriteOptions {
  /**
   * Replace exactly this file (`--in-place`, or `-o` naming the input): right before the rename the path must still
   * be a regular file with this identity (not a link swapped in, not appended to); else nothing is written. The new
   * file keeps its permission bits (special bits dropped) and, where allowed, its owner and group.
   */
  readonly expect?: FileIdentity;
  /** The directory the target must still really be in right before the rename (an out-dir's checked folder). */
  readonly realDir?: string;
  /**
   * Flush the new content and the directory before and after the rename, so a power loss leaves the old file or the
   * new one, never an empty one (`--in-place`, `-o`). Results written beside the inputs (`--out-dir`) skip it.
   */
  readonly durable?: boolean;
  /**
   * Never replace anything: the target must not exist when the new file lands (it is linked into place, which fails
   * if something appeared there since, instead of renamed over it). For backups, which are never overwritten.
   */
  readonly exclusive?: boolean;
  /**
   * The permission bits of a new file, for copies of another file (a backup, a result under the out-dir), which keep
   * their original's rather than the default: a private transcript's copy stays private. Special bits are dropped.
   */
  readonly mode?: number;
}

/**
 * Replaces a file's content atomically. A device, FIFO or socket is written into directly (there is nothing to
 * replace atomically). A new file gets the default mode less the umask; an existing one keeps its permission bits
 * (never setuid, setgid or sticky), and its owner and group where the process may set them.
 * @param file the path to write (absolute)
 * @param data the new content, or its pieces as they come (a copy streamed from another file; an error thrown by the
 *   pieces stops the write, and nothing lands)
 * @param options what the target must still be, and whether to flush
 * @throws ChangedError when the target is no longer the file it must be; file-system errors as they come
 */
export async function writeFileAtomic(
  file: string,
  data: Uint8Array | AsyncIterable<Uint8Array>,
  options: WriteOptions = {},
): Promise<void> {
  installCleanup();
  const durable = options.durable ?? true;
  // A link at the target is replaced by the new file, never written through: callers resolve the paths they were
  // asked to write once, when the run starts.
  const target = file;
  const existing = await fs.lstat(target).catch(() => null);
  if (options.expect !== undefined && (existing === null || !isSameFile(existing, options.expect))) {
    throw new ChangedError('the file changed while it was being compacted');
  }
  if (existing !== null && !existing.isFile() && !existing.isDirectory() && !existing.isSymbolicLink()) {
    // A device, FIFO or socket (`-o /dev/null`, `-o /dev/stdout`) is written into, never replaced by a file.
    await fs.writeFile(target, data);
    return;
  }
  const keep = existing?.isFile() === true ? existing : null;
  const dir = path.dirname(target);
  // The name keeps a short prefix of the target's so it stays under the 255-byte limit of file names.
  const tmp = path.join(
    dir,
    `.${Array.from(path.basename(target)).slice(0, 48).join('')}.swc-${process.pid}-${randomBytes(4).toString('hex')}.tmp`,
  );
  checkInterrupted();
  pending.add(tmp);
  inFlight++;
  try {
    // 'wx' is O_CREAT|O_EXCL: a link planted at the temporary name is never followed. 0o666 less the umask for a new file.
    const handle = await fs.open(tmp, 'wx', 0o666);
    const written = await handle.stat();
    try {
      checkInterrupted();
      if (ArrayBuffer.isView(data)) await handle.writeFile(data);
      else {
        for await (const piece of data) {
          checkInterrupted();
          let done = 0;
          while (done < piece.length) done += (await handle.write(piece, done, piece.length - done)).bytesWritten;
        }
      }
      if (keep === null && options.mode !== undefined) await handle.chmod(options.mode & 0o777);
      if (keep !== null) {
        await handle.chmod(keep.mode & 0o777);
        if (keep.uid !== process.geteuid?.() || keep.gid !== process.getegid?.()) {
          // Only root may give a file away; for anyone else the new file is theirs (or their group's), as with any
          // editor's save.
          await handle.chown(keep.uid, keep.gid).catch(() => undefined);
        }
      }
      checkInterrupted();
      if (durable) await handle.sync();
    } finally {
      await handle.close();
    }
    checkInterrupted();
    await writeHooks.beforeRename?.(target);
    await checkStillTarget(target, dir, options);
    await writeHooks.beforePlace?.(target);
    if (options.exclusive === true) await placeExclusively(tmp, target);
    else await fs.rename(tmp, target);
    pending.delete(tmp);
    await checkLanded(target, options, written);
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

/** Errors of a file system that has no hard links (some network and FAT-like ones). */
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']);

/**
 * Puts a finished temporary file at a path where nothing may be: linked there (which fails if anything is, a link
 * included), then unlinked from its temporary name. Where hard links are not supported, the path is looked at once
 * more and the file renamed there (a file appearing in between could then be replaced: the best such a file
 * system allows).
 */
async function placeExclusively(tmp: string, target: string): Promise<void> {
  try {
    await fs.link(tmp, target);
  } catch (error) {
    if (!NO_HARD_LINKS.has((error as NodeJS.ErrnoException).code ?? '')) throw error;
    if ((await fs.lstat(target).catch(() => null)) !== null)
      throw Object.assign(new Error(`${target} exists`), { code: 'EEXIST' });
    await fs.rename(tmp, target);
    return;
  }
  await fs.unlink(tmp);
}

/** The last look before a rename: the file is still the one read, and its folder still really the one resolved. */
async function checkStillTarget(target: string, dir: string, options: WriteOptions): Promise<void> {
  if (options.expect !== undefined) {
    const now = await fs.lstat(target).catch(() => null);
    if (now === null || !isSameFile(now, options.expect))
      throw new ChangedError('the file changed while it was being compacted');
  }
  const expectedDir = options.realDir ?? (options.expect !== undefined ? dir : undefined);
  if (expectedDir !== undefined) {
    const real = await fs.realpath(dir).catch(() => null);
    if (real !== expectedDir)
      throw new ChangedError(`its folder ${dir} was moved or replaced by a link while it was being compacted`);
  }
}

/**
 * The look after a rename into a folder that must be a given real one: the new file must be there. Node has no
 * `renameat`, so a folder swapped for a link between the last look and the rename sends the file elsewhere; that
 * is not undone here, but it is never reported as success.
 */
async function checkLanded(target: string, options: WriteOptions, written: Stats): Promise<void> {
  if (options.realDir === undefined) return;
  // The folder must still really be the one checked (not a link to where the file went), and hold the new file.
  const folder = await fs.realpath(path.dirname(target)).catch(() => null);
  const there =
    folder === options.realDir
      ? await fs.lstat(path.join(options.realDir, path.basename(target))).catch(() => null)
      : null;
  if (there === null || there.ino !== written.ino || there.dev !== written.dev) {
    throw new ChangedError(
      `its folder ${path.dirname(target)} was moved or replaced by a link while it was written; the file may have landed elsewhere`,
    );
  }
}

/** Whether `child` is `parent` or inside it (both absolute, resolved). */
export function isInside(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/**
 * The real path a path names, links resolved, for comparing paths that may not exist yet: the real path of its
 * nearest existing ancestor with the rest appended.
 */
export async function realTarget(file: string): Promise<string> {
  const real = await fs.realpath(file).catch(() => null);
  if (real !== null) return real;
  const parent = path.dirname(file);
  return parent === file ? file : path.join(await realTarget(parent), path.basename(file));
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
    case 'ECHANGED':
      return error instanceof Error ? error.message : 'the file changed while it was being compacted';
    case 'ELOOP':
      return 'too many levels of symbolic links';
    case 'EMFILE':
    case 'ENFILE':
      return 'too many open files (raise the limit with ulimit -n, or use fewer --jobs)';
    case 'EPIPE':
      return 'the reader went away';
    case 'ERR_FS_FILE_TOO_LARGE':
      return 'the file is too large to read as one text (over 2 GiB)';
    default:
      return error instanceof Error ? error.message : String(error);
  }
}

const TRAILING_SEPARATORS = path.sep === '/' ? /\/+$/ : /[\\/]+$/;

/**
 * A path under a folder, named from the folder as it was typed, as ripgrep and find name what they find: `archive`
 * and `archive/` give `archive/a/x.jsonl`, `./archive` gives `./archive/a/x.jsonl`, `/data` gives `/data/a/x.jsonl`.
 * The working directory typed as `.` adds nothing (`a/x.jsonl`), as fast-glob names what `./**` matches.
 * @param typed the folder as typed
 * @param rest the path under it (native separators), or '' for the folder itself
 */
export function nameUnder(typed: string, rest: string): string {
  if (rest === '') return typed;
  const folder = typed.replace(TRAILING_SEPARATORS, '');
  if (folder === '') return `${typed.slice(0, 1)}${rest}`;
  if (folder === '.') return rest;
  return `${folder}${path.sep}${rest}`;
}
