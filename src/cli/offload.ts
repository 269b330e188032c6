import { promises as fs } from 'node:fs';
import path from 'node:path';
import { InputError, UsageError } from '../errors.js';
import { describeFsError, isInside as isInsideFolder, writeFileAtomic } from '../io/files.js';
import { ConfinedFolders, STORE_MARKER } from '../io/folders.js';
import type { StoreFile } from '../pipeline/index.js';
import type { CliIo } from './io.js';
import type { CompactSettings } from './settings.js';

/** The offload store: where it is, checked once when the run starts, and how its files are written. */

/**
 * The store directory, absolute, or undefined without offloading. A store inside a directory being compacted would be
 * read as input by the next run, so that is refused.
 * @throws UsageError when the store is inside (or is) an input directory
 */
export async function offloadStore(
  settings: CompactSettings,
  io: CliIo,
): Promise<{ dir: string; over: number | undefined; previewChars: number } | undefined> {
  if (settings.offloadDir === undefined) return undefined;
  const dir = path.resolve(io.cwd, settings.offloadDir);
  const real = await realPathOf(dir);
  for (const input of settings.inputs) {
    if (input === '-') continue;
    const absolute = path.resolve(io.cwd, input);
    const stat = await fs.stat(absolute).catch(() => null);
    // A pattern or a file cannot hold the store; a directory (or a pattern's fixed beginning) can.
    const base = stat?.isDirectory() === true ? absolute : stat === null ? fixedBase(absolute) : null;
    if (base === null) continue;
    const realBase = await realPathOf(base);
    if (isInside(real, realBase)) {
      throw new UsageError(
        `--offload-dir ${settings.offloadDir} is inside the input ${input}, so its files would be read as transcripts: put the store elsewhere`,
      );
    }
  }
  return { dir, over: settings.offloadOver, previewChars: settings.previewChars };
}

export { STORE_MARKER };

/** What the marker holds. */
const MARKER_CONTENT = `${JSON.stringify({ swc: 'offload-store', version: 2 })}\n`;

/**
 * Writes the store files of one transcript, each flushed to disk, before the transcript that points at them. Each
 * is named by its bytes and placed with a link that never replaces anything: a file already there with the same
 * bytes is this one (another run, or this one earlier, stored the same result), so runs into one store never collide.
 * @returns the files this call placed
 * @throws InputError naming the transcript when one cannot be written (its transcript is then not written); it says
 *   which files this call had placed, left in the store (named by their content, another run may share them)
 */
export async function writeStore(files: readonly StoreFile[], dir: string, shown: string): Promise<string[]> {
  let folders: ConfinedFolders;
  try {
    await fs.mkdir(dir, { recursive: true });
    folders = new ConfinedFolders(
      dir,
      await fs.realpath(dir),
      `the offload store ${dir}`,
      '; nothing was written for it',
    );
  } catch (error) {
    throw new InputError(
      `cannot create the offload store ${dir}: ${describeFsError(error)}; nothing was written for it`,
      shown,
    );
  }
  const placed: string[] = [];
  const left = (): string =>
    placed.length === 0
      ? ''
      : ` (the store keeps the ${placed.length} file${placed.length === 1 ? '' : 's'} this run placed, named by their content: ${placed.join(', ')})`;
  try {
    const marker = path.join(dir, STORE_MARKER);
    await place(marker, Buffer.from(MARKER_CONTENT, 'utf8'), folders, shown, 'marker');
    for (const file of files) {
      const dest = path.resolve(file.path);
      if (!isInside(dest, dir) || dest === dir)
        throw new InputError(`an offloaded result would be written outside ${dir}; nothing was written for it`, shown);
      // A text as UTF-8; an offloaded image's or file's bytes as they are.
      const bytes = typeof file.content === 'string' ? Buffer.from(file.content, 'utf8') : Buffer.from(file.content);
      if (await place(dest, bytes, folders, shown, 'content')) placed.push(dest);
    }
  } catch (error) {
    if (error instanceof InputError && placed.length > 0) throw new InputError(`${error.reason}${left()}`, error.file);
    throw error;
  }
  return placed;
}

/**
 * Places one store file: written beside it, flushed, then linked into place (never renamed over anything).
 * @param same what an existing file must match to count as this one: its bytes, or (the marker) only being a file
 * @returns whether this call placed it (false: it was there already)
 */
async function place(
  dest: string,
  bytes: Buffer,
  folders: ConfinedFolders,
  shown: string,
  same: 'content' | 'marker',
): Promise<boolean> {
  const realDir = await folders.ensure(path.dirname(dest), shown);
  // Most often already there (the marker, a result stored before): then nothing is written at all.
  if (await isThisFile(dest, bytes, same)) return false;
  try {
    await writeFileAtomic(dest, bytes, { durable: true, realDir, exclusive: true });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
      throw new InputError(
        `cannot write the offloaded result ${dest}: ${describeFsError(error)}; nothing was written for it`,
        shown,
      );
    }
  }
  if (await isThisFile(dest, bytes, same)) return false;
  throw new InputError(
    `the offload store already holds ${dest} with other content; refusing to replace it, so nothing was written for this file`,
    shown,
  );
}

/** Whether a regular file (a link never counts) is at `dest` with these bytes (the marker: any). */
async function isThisFile(dest: string, bytes: Buffer, same: 'content' | 'marker'): Promise<boolean> {
  const stat = await fs.lstat(dest).catch(() => null);
  if (stat?.isFile() !== true) return false;
  return same === 'marker' || (stat.size === bytes.length && (await fs.readFile(dest)).equals(bytes));
}

/** Whether `child` is `parent` or inside it (both resolved), by path segments: `..x.jsonl` is inside. */
export function isInside(child: string, parent: string): boolean {
  return isInsideFolder(parent, child);
}

/** The real path of a path whose end may not exist yet: its deepest existing ancestor resolved, the rest appended. */
async function realPathOf(p: string): Promise<string> {
  const missing: string[] = [];
  let at = p;
  for (;;) {
    const real = await fs.realpath(at).catch(() => null);
    if (real !== null) return path.join(real, ...missing.reverse());
    const parent = path.dirname(at);
    if (parent === at) return p;
    missing.push(path.basename(at));
    at = parent;
  }
}

/** The directory a glob pattern's matches are under: its path up to the first segment with a wildcard. */
function fixedBase(pattern: string): string | null {
  const segments = pattern.split(path.sep);
  const k = segments.findIndex((s) => /[*?[\]{}!]/.test(s));
  return k <= 0 ? null : segments.slice(0, k).join(path.sep) || path.sep;
}
