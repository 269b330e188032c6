import { promises as fs } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { InputError, UsageError } from '../errors.js';
import {
  ChangedError,
  describeFsError,
  isInside,
  isSameFile,
  writeFileAtomic,
  type FileIdentity,
} from '../io/files.js';
import type { InputFile } from '../io/expand.js';
import { ConfinedFolders } from '../io/folders.js';

/**
 * `--backup-dir`: before `--in-place` replaces a file, its original is copied byte for byte under the backup folder,
 * at its path under the base, written and flushed first. Only files that change are copied. A backup already there
 * is never overwritten: the same bytes count as done, other bytes fail that file (its original untouched). Nothing
 * is written outside the folder: every folder on the way is created one level at a time, one that is a symbolic link
 * must lead back inside, a link at the backup's own path is refused, and the folder's real path is checked again
 * right before the rename.
 */
export class BackupDir {
  private readonly folders: ConfinedFolders;

  private constructor(
    readonly root: string,
    realRoot: string,
    private readonly base: string,
    typed: string,
  ) {
    this.folders = new ConfinedFolders(root, realRoot, 'the --backup-dir', ' (the original is unchanged)', typed);
  }

  /**
   * Creates the folder (and its parents) and checks it may hold the backups of inputs under `base`.
   * @throws UsageError when it cannot be made, or holds the inputs' base (their backups would land over the inputs)
   */
  static async open(dir: string, base: string, typed: string): Promise<BackupDir> {
    try {
      await fs.mkdir(dir, { recursive: true });
    } catch (error) {
      throw new UsageError(`cannot create the --backup-dir ${typed}: ${describeFsError(error)}`);
    }
    const realRoot = await fs.realpath(dir);
    const realBase = await fs.realpath(base).catch(() => base);
    if (isInside(realRoot, realBase)) {
      throw new UsageError(
        `--backup-dir ${typed} holds the inputs' base directory, so backups would land on the inputs: choose a folder beside or inside it`,
      );
    }
    return new BackupDir(path.resolve(dir), realRoot, base, typed);
  }

  /**
   * Copies a file's original under the folder, flushed, before it is replaced. The bytes copied are read now and
   * must be those of the file as it was read for compacting (same identity before and after), so the backup is the
   * original the result was made from.
   * @returns the backup's path
   * @throws InputError when the file changed, a backup with other bytes is there, or the path is refused
   */
  async keep(file: InputFile, identity: FileIdentity): Promise<string> {
    const rel = path.relative(this.base, file.absolute);
    if (rel === '' || !isInside(this.base, file.absolute))
      throw new InputError(
        'is outside the base directory; refusing to back it up outside the --backup-dir',
        file.display,
      );
    const dest = path.join(this.root, rel);
    if (!isInside(this.root, dest) || dest === this.root)
      throw new InputError('its backup would land outside the --backup-dir; refusing', file.display);
    const realDir = await this.folders.ensure(path.dirname(dest), file.display);
    const shown = this.folders.shown(dest);
    const stat = await fs.lstat(dest).catch(() => null);
    if (stat !== null) {
      if (stat.isSymbolicLink())
        throw new InputError(
          `its backup path ${shown} is a symbolic link; refusing to write through it (the original is unchanged)`,
          file.display,
        );
      const same =
        stat.isFile() &&
        stat.size === identity.size &&
        (await sameContent(file, identity, dest).catch((error: unknown) => {
          if (error instanceof InputError) throw error;
          throw new InputError(
            `cannot read the backup already at ${shown}: ${describeFsError(error)} (the original is unchanged)`,
            file.display,
          );
        }));
      if (same) return dest;
      throw new InputError(
        `a backup is already at ${shown} with other content; refusing to overwrite it (the original is unchanged; move that backup away or choose another --backup-dir)`,
        file.display,
      );
    }
    const original = await openUnchanged(file, identity);
    try {
      await writeFileAtomic(dest, readChecked(original, file, identity), {
        realDir,
        durable: true,
        exclusive: true,
        mode: identity.mode,
      });
    } catch (error) {
      if (error instanceof InputError) throw error;
      if (error instanceof ChangedError)
        throw new InputError(`${error.message}; nothing was written for it`, file.display);
      if ((error as NodeJS.ErrnoException).code === 'EEXIST')
        throw new InputError(
          `a backup appeared at ${shown} while it was being written; refusing to overwrite it (the original is unchanged)`,
          file.display,
        );
      throw new InputError(
        `cannot write its backup ${shown}: ${describeFsError(error)} (the original is unchanged)`,
        file.display,
      );
    } finally {
      await original.close();
    }
    return dest;
  }
}

/** How much of a file is copied or compared at a time. */
const PIECE = 1 << 20;

function changedError(file: InputFile): InputError {
  return new InputError('the file changed while it was being compacted; nothing was written for it', file.display);
}

/** Opens a file that must still be the one identified before it was compacted (the path leading to it too). */
async function openUnchanged(file: InputFile, identity: FileIdentity): Promise<FileHandle> {
  const handle = await fs.open(file.real, 'r').catch((error: unknown) => {
    throw new InputError(
      `cannot read it again to back it up: ${describeFsError(error)} (the original is unchanged)`,
      file.display,
    );
  });
  const now = await fs.lstat(file.real).catch(() => null);
  if (!isSameFile(await handle.stat(), identity) || now === null || !isSameFile(now, identity)) {
    await handle.close();
    throw changedError(file);
  }
  return handle;
}

/**
 * A file's bytes, a MiB at a time, from a handle opened on the identified file; at the end the file must still be
 * as identified (an append or a rewrite while it was copied fails the copy, so a backup is never a mix).
 */
async function* readChecked(handle: FileHandle, file: InputFile, identity: FileIdentity): AsyncGenerator<Uint8Array> {
  let pos = 0;
  for (;;) {
    const buffer = Buffer.allocUnsafe(PIECE);
    const { bytesRead } = await handle.read(buffer, 0, PIECE, pos);
    if (bytesRead === 0) break;
    pos += bytesRead;
    yield buffer.subarray(0, bytesRead);
  }
  if (pos !== identity.size || !isSameFile(await handle.stat(), identity)) throw changedError(file);
}

/** Whether an existing backup holds exactly the identified file's bytes (compared a MiB at a time). */
async function sameContent(file: InputFile, identity: FileIdentity, dest: string): Promise<boolean> {
  const original = await openUnchanged(file, identity);
  try {
    const backup = await fs.open(dest, 'r');
    try {
      const pieces = readChecked(original, file, identity);
      let pos = 0;
      for await (const piece of pieces) {
        const other = Buffer.allocUnsafe(piece.length);
        const { bytesRead } = await backup.read(other, 0, piece.length, pos);
        if (bytesRead !== piece.length || !other.equals(piece)) return false;
        pos += piece.length;
      }
      const { bytesRead } = await backup.read(Buffer.alloc(1), 0, 1, pos);
      return bytesRead === 0;
    } finally {
      await backup.close();
    }
  } finally {
    await original.close();
  }
}
