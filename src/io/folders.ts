import { promises as fs } from 'node:fs';
import path from 'node:path';
import { InputError } from '../errors.js';
import { describeFsError, isInside, nameUnder } from './files.js';

/**
 * The file at an offload store's root that marks the folder as one (written by offloading): directory searches
 * leave out what it holds, and `swc restore` finds a pointer's store by it.
 */
export const STORE_MARKER = '.swc-store';

/**
 * Folders made under one root for writing into (the out-dir, the backup folder, the offload store), never leaving
 * it: each folder on the way is created one level at a time, and one that is a symbolic link must lead back inside
 * the root's real path. The real folder returned is what `writeFileAtomic`'s `realDir` checks again right before
 * its rename, so a link swapped in afterwards is caught too.
 */
export class ConfinedFolders {
  private readonly checked = new Map<string, string>();

  /**
   * @param root the root, resolved
   * @param realRoot its real path
   * @param name how errors name the root (`the out-dir`, `the --backup-dir`)
   * @param after what errors add (`; the original is unchanged`), or ''
   * @param typed the root as the user typed it, which errors name paths under (as git names paths as typed)
   */
  constructor(
    private readonly root: string,
    private readonly realRoot: string,
    private readonly name: string,
    private readonly after: string = '',
    private readonly typed: string = root,
  ) {}

  /** A path under the root as errors name it: from the root as typed (`out/a/x.jsonl`, not `/home/me/out/a/x.jsonl`). */
  shown(file: string): string {
    return isInside(this.root, file) ? nameUnder(this.typed, path.relative(this.root, file)) : file;
  }

  /**
   * Makes sure a folder under the root exists and really is inside it.
   * @param dir the folder, resolved, the root or under it
   * @param display the input the write is for, as errors name it
   * @returns its real path
   * @throws InputError when it cannot be made, something else is in the way, or it leads outside the root
   */
  async ensure(dir: string, display: string): Promise<string> {
    if (dir === this.root) return this.realRoot;
    if (!isInside(this.root, dir))
      throw new InputError(`${this.shown(dir)} is outside ${this.name}; refusing to write there${this.after}`, display);
    const known = this.checked.get(dir);
    if (known !== undefined) return known;
    await this.ensure(path.dirname(dir), display);
    const stat = await fs.lstat(dir).catch(() => null);
    if (stat === null) {
      await fs.mkdir(dir).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'EEXIST')
          throw new InputError(`cannot create ${this.shown(dir)}: ${describeFsError(error)}${this.after}`, display);
      });
      // Looked at once more, never in a loop: some file systems (/proc) say a folder exists that lstat cannot find.
      if ((await fs.lstat(dir).catch(() => null)) === null)
        throw new InputError(`cannot create ${this.shown(dir)}: the file system refuses it${this.after}`, display);
      return this.ensure(dir, display);
    }
    if (!stat.isSymbolicLink() && !stat.isDirectory())
      throw new InputError(`${this.shown(dir)} is in the way (not a directory)${this.after}`, display);
    const real = await fs.realpath(dir).catch(() => null);
    if (real === null || !isInside(this.realRoot, real))
      throw new InputError(
        `${this.shown(dir)} is a symbolic link that leads outside ${this.name}; refusing to write there${this.after}`,
        display,
      );
    this.checked.set(dir, real);
    return real;
  }
}
