import { promises as fs } from 'node:fs';
import path from 'node:path';
import { InputError, UsageError } from '../errors.js';
import { describeFsError } from '../io/files.js';
import { ConfinedFolders } from '../io/folders.js';
import { isInside, type InputFile } from '../io/expand.js';

// Where --out-dir results go: confined to the out-dir, never over an input, never through a symbolic link.

/** A checked place for a result under the out-dir. */
interface Destination {
  readonly path: string;
  /** The real folder it is in, which must still be so right before the rename. */
  readonly realDir: string;
}

/**
 * Places results under the out-dir without ever leaving it: every directory on the way is created one level at
 * a time, and one that is a symbolic link must lead back inside; an existing symbolic link is never written through.
 * A destination that is an input (by inode, so links and hard links count) is never replaced; one that exists with
 * other content is replaced only with --force.
 */
export class OutDir {
  private readonly folders: ConfinedFolders;
  private constructor(
    readonly root: string,
    realRoot: string,
    private readonly base: string,
    private readonly inputs: ReadonlySet<string>,
    private readonly force: boolean,
    typed: string,
  ) {
    this.folders = new ConfinedFolders(root, realRoot, 'the out-dir', '', typed);
  }

  /**
   * @param dir the out-dir, resolved
   * @param typed the out-dir as typed, which messages name paths under
   */
  static async open(
    dir: string,
    base: string,
    files: readonly InputFile[],
    force: boolean,
    typed: string,
  ): Promise<OutDir> {
    try {
      await fs.mkdir(dir, { recursive: true });
    } catch (error) {
      throw new UsageError(`cannot create the out-dir ${typed}: ${describeFsError(await mkdirError(dir, error))}`);
    }
    const realRoot = await fs.realpath(dir);
    const realBase = await fs.realpath(base).catch(() => base);
    if (realRoot === realBase)
      throw new UsageError(
        "--out-dir is the inputs' base directory itself, so it would overwrite them: use --in-place for that, or another directory",
      );
    const stats = await Promise.all(files.map((f) => fs.stat(f.real).catch(() => null)));
    const inputs = new Set(stats.flatMap((st) => (st === null ? [] : [inodeKey(st)])));
    return new OutDir(path.resolve(dir), realRoot, base, inputs, force, typed);
  }

  /** A path under the out-dir as messages name it: from the out-dir as typed. */
  shown(file: string): string {
    return this.folders.shown(file);
  }

  /**
   * The checked place a file's result goes to, or null when the same result is already there.
   * @throws InputError when writing there would overwrite an input or a file that is not this result
   */
  async destination(file: InputFile, bytes: Uint8Array): Promise<Destination | null> {
    const rel = path.relative(this.base, file.absolute);
    if (rel === '' || !isInside(this.base, file.absolute))
      throw new InputError('is outside the base directory; refusing to write outside the out-dir', file.display);
    const dest = path.join(this.root, rel);
    if (!isInside(this.root, dest) || dest === this.root)
      throw new InputError('would land outside the out-dir; refusing', file.display);
    const realDir = await this.folders.ensure(path.dirname(dest), file.display);
    const shown = this.folders.shown(dest);
    const stat = await fs.lstat(dest).catch(() => null);
    if (stat === null) return { path: dest, realDir };
    if (stat.isSymbolicLink())
      throw new InputError(`${shown} is a symbolic link; refusing to write through it`, file.display);
    if (stat.isDirectory()) throw new InputError(`${shown} is a directory`, file.display);
    // A FIFO or device there is never written into, even with --force: only regular files are replaced.
    if (!stat.isFile()) throw new InputError(`${shown} is not a regular file; refusing to write into it`, file.display);
    if (this.inputs.has(inodeKey(stat)))
      throw new InputError(`its out-dir path ${shown} is one of the inputs; refusing to overwrite it`, file.display);
    if (stat.isFile() && stat.size === bytes.length && (await fs.readFile(dest)).equals(bytes)) return null;
    if (!this.force)
      throw new InputError(
        `${shown} already exists with other content; refusing to replace it (add --force to replace files in the out-dir)`,
        file.display,
      );
    return { path: dest, realDir };
  }
}

/**
 * Why a directory could not be made: a recursive mkdir can report a missing parent where the real cause is that the
 * nearest existing ancestor refuses a new entry (a read-only file system), so that one step is tried alone.
 */
async function mkdirError(dir: string, error: unknown): Promise<unknown> {
  if ((error as NodeJS.ErrnoException | undefined)?.code !== 'ENOENT') return error;
  let child = dir;
  let parent = path.dirname(dir);
  while (parent !== child && (await fs.stat(parent).catch(() => null)) === null) {
    child = parent;
    parent = path.dirname(parent);
  }
  return fs.mkdir(child).then(
    () => error,
    (cause: unknown) => cause,
  );
}

/** A file's device and inode: the same for every path (link, hard link) that leads to it. */
export function inodeKey(stat: { dev: number; ino: number }): string {
  return `${stat.dev}:${stat.ino}`;
}
