import { promises as fs } from 'node:fs';
import path from 'node:path';
import { InputError, UsageError } from '../errors.js';
import { describeFsError, writeFileAtomic } from '../io/files.js';
import { ConfinedFolders } from '../io/folders.js';
import type { StoreFile } from '../pipeline.js';
import type { CliIo } from './io.js';
import type { CompactSettings } from './settings.js';

/** The offload store: where it is, checked once when the run starts, and how its files are written. */

/**
 * The store directory, absolute, or undefined without offloading. A store inside a directory being compacted would be
 * read as input by the next run, so that is refused.
 * @throws UsageError when the store is inside (or is) an input directory
 */
export async function offloadStore(settings: CompactSettings, io: CliIo): Promise<{ dir: string; over: number } | undefined> {
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
      throw new UsageError(`--offload-dir ${settings.offloadDir} is inside the input ${input}, so its files would be read as transcripts: put the store elsewhere`);
    }
  }
  return { dir, over: settings.offloadOver };
}

/**
 * Writes the store files of one result, each flushed to disk, before the transcript that points at them.
 * @throws InputError naming the transcript when one cannot be written (its transcript is then not written)
 */
export async function writeStore(files: readonly StoreFile[], dir: string, shown: string): Promise<void> {
  let folders: ConfinedFolders;
  try {
    await fs.mkdir(dir, { recursive: true });
    folders = new ConfinedFolders(dir, await fs.realpath(dir), `the offload store ${dir}`, '; nothing was written for it');
  } catch (error) {
    throw new InputError(`cannot create the offload store ${dir}: ${describeFsError(error)}; nothing was written for it`, shown);
  }
  for (const file of files) {
    const dest = path.resolve(file.path);
    if (!isInside(dest, dir) || dest === dir) throw new InputError(`an offloaded result would be written outside ${dir}; nothing was written for it`, shown);
    const realDir = await folders.ensure(path.dirname(dest), shown);
    const bytes = Buffer.from(file.content, 'utf8');
    // A store file is never replaced: one already there with the same bytes is this result; other bytes belong to
    // another transcript's result (or were put there), which its pointer still needs.
    const stat = await fs.lstat(dest).catch(() => null);
    if (stat !== null) {
      if (stat.isFile() && stat.size === bytes.length && (await fs.readFile(dest)).equals(bytes)) continue;
      throw new InputError(`the offload store already holds ${dest} with other content; refusing to replace it, so nothing was written for this file`, shown);
    }
    try {
      await writeFileAtomic(dest, bytes, { durable: true, realDir });
    } catch (error) {
      throw new InputError(`cannot write the offloaded result ${dest}: ${describeFsError(error)}; nothing was written for it`, shown);
    }
  }
}

/** Whether `child` is `parent` or inside it (both resolved). */
export function isInside(child: string, parent: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
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
