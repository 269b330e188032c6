import { promises as fs } from 'node:fs';
import path from 'node:path';
import { InputError, UsageError } from '../errors.js';
import { ChangedError, describeFsError, isInside, isSameFile, writeFileAtomic, type FileIdentity } from '../io/files.js';
import type { InputFile } from '../io/expand.js';

/**
 * `--backup-dir`: before `--in-place` replaces a file, its original is copied byte for byte under the backup folder,
 * at its path under the base, written and flushed first. Only files that change are copied. A backup already there
 * is never overwritten: the same bytes count as done, other bytes fail that file (its original untouched). Nothing
 * is written outside the folder: every folder on the way is created one level at a time, one that is a symbolic link
 * must lead back inside, a link at the backup's own path is refused, and the folder's real path is checked again
 * right before the rename.
 */
export class BackupDir {
  private readonly checked = new Map<string, string>();

  private constructor(
    readonly root: string,
    private readonly realRoot: string,
    private readonly base: string,
  ) {}

  /**
   * Creates the folder (and its parents) and checks it may hold the backups of inputs under `base`.
   * @throws UsageError when it cannot be made, or holds the inputs' base (their backups would land over the inputs)
   */
  static async open(dir: string, base: string): Promise<BackupDir> {
    try {
      await fs.mkdir(dir, { recursive: true });
    } catch (error) {
      throw new UsageError(`cannot create the --backup-dir ${dir}: ${describeFsError(error)}`);
    }
    const realRoot = await fs.realpath(dir);
    const realBase = await fs.realpath(base).catch(() => base);
    if (isInside(realRoot, realBase)) {
      throw new UsageError(`--backup-dir ${dir} holds the inputs' base directory, so backups would land on the inputs: choose a folder beside or inside it`);
    }
    return new BackupDir(path.resolve(dir), realRoot, base);
  }

  /**
   * Copies a file's original under the folder, flushed, before it is replaced. The bytes copied are read now and
   * must be those of the file as it was read for compacting (same identity before and after), so the backup is the
   * original the result was made from.
   * @returns the backup's path
   * @throws InputError when the file changed, a backup with other bytes is there, or the path is refused
   */
  async keep(file: InputFile, identity: FileIdentity): Promise<string> {
    const original = await readUnchanged(file, identity);
    const rel = path.relative(this.base, file.absolute);
    if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) throw new InputError('is outside the base directory; refusing to back it up outside the --backup-dir', file.display);
    const dest = path.join(this.root, rel);
    if (!isInside(this.root, dest) || dest === this.root) throw new InputError('its backup would land outside the --backup-dir; refusing', file.display);
    const realDir = await this.ensureDirectory(path.dirname(dest), file.display);
    const stat = await fs.lstat(dest).catch(() => null);
    if (stat !== null) {
      if (stat.isSymbolicLink()) throw new InputError(`its backup path ${dest} is a symbolic link; refusing to write through it (the original is unchanged)`, file.display);
      if (stat.isFile() && stat.size === original.length && (await fs.readFile(dest)).equals(original)) return dest;
      throw new InputError(`a backup is already at ${dest} with other content; refusing to overwrite it (the original is unchanged; move that backup away or choose another --backup-dir)`, file.display);
    }
    try {
      await writeFileAtomic(dest, original, { realDir, durable: true, exclusive: true });
    } catch (error) {
      if (error instanceof ChangedError) throw new InputError(`${error.message}; nothing was written for it`, file.display);
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new InputError(`a backup appeared at ${dest} while it was being written; refusing to overwrite it (the original is unchanged)`, file.display);
      throw new InputError(`cannot write its backup ${dest}: ${describeFsError(error)} (the original is unchanged)`, file.display);
    }
    return dest;
  }

  /** Makes sure a folder under the backup folder exists and really is inside it. @returns its real path */
  private async ensureDirectory(dir: string, display: string): Promise<string> {
    if (dir === this.root) return this.realRoot;
    const known = this.checked.get(dir);
    if (known !== undefined) return known;
    await this.ensureDirectory(path.dirname(dir), display);
    const stat = await fs.lstat(dir).catch(() => null);
    if (stat === null) {
      await fs.mkdir(dir).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'EEXIST') throw new InputError(`cannot create ${dir}: ${describeFsError(error)} (the original is unchanged)`, display);
      });
      return this.ensureDirectory(dir, display);
    }
    if (!stat.isSymbolicLink() && !stat.isDirectory()) throw new InputError(`${dir} is in the way (not a directory); the original is unchanged`, display);
    const real = await fs.realpath(dir).catch(() => null);
    if (real === null || !isInside(this.realRoot, real)) throw new InputError(`${dir} is a symbolic link that leads outside the --backup-dir; refusing to write there (the original is unchanged)`, display);
    this.checked.set(dir, real);
    return real;
  }
}

/** A file's bytes, which must be those of the file as identified before it was compacted. */
async function readUnchanged(file: InputFile, identity: FileIdentity): Promise<Buffer> {
  const changed = (): InputError => new InputError('the file changed while it was being compacted; nothing was written for it', file.display);
  const handle = await fs.open(file.real, 'r').catch((error: unknown) => {
    throw new InputError(`cannot read it again to back it up: ${describeFsError(error)} (the original is unchanged)`, file.display);
  });
  try {
    if (!isSameFile(await handle.stat(), identity)) throw changed();
    const bytes = await handle.readFile();
    if (!isSameFile(await handle.stat(), identity)) throw changed();
    // The path must still lead to that file (not a link or another file swapped in since).
    const now = await fs.lstat(file.real).catch(() => null);
    if (now === null || !isSameFile(now, identity)) throw changed();
    return bytes;
  } finally {
    await handle.close();
  }
}
