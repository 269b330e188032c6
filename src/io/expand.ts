import fg from 'fast-glob';
import micromatch from 'micromatch';
import { promises as fs, readdir, type Stats } from 'node:fs';
import path from 'node:path';
import { InputError, missingInput, UsageError } from '../errors.js';
import { describeFsError, isInside, nameUnder } from './files.js';
import { STORE_MARKER } from './folders.js';

export { nameUnder };

export { isInside };

/**
 * Turns command-line inputs (files, directories, quoted glob patterns) into one sorted list of files, the way
 * prettier and eslint do: every pattern goes through fast-glob from the working directory, so `--ignore`
 * patterns mean the same thing whatever the input looked like.
 */

/** What a directory input is searched for (in any case): JSON and JSONL, plain or compressed with gzip or brotli. */
export const TRANSCRIPT_GLOB = '**/*.{json,jsonl,ndjson}{,.gz,.br}';

/** What the run writes into each folder `ExpandOptions.exclude` may name, for the message refusing an input there. */
const EXCLUDED_WRITES: Readonly<Record<string, string>> = {
  '--out-dir': 'its results',
  '--backup-dir': 'backups',
  '--cache-dir': 'the summaries it caches',
};

/** The kinds of file a directory search finds, as messages name them. */
const SEARCHED = '.json, .jsonl or .ndjson files (or .gz, .br of them)';

/** Never searched into (as prettier and eslint do); a file there named outright is still taken. */
export const DEFAULT_IGNORE = ['**/node_modules/**'] as const;

export interface ExpandOptions {
  /** Patterns and paths are relative to this directory. */
  readonly cwd: string;
  /** Patterns to leave out (relative to `cwd`), as given with --ignore. */
  readonly ignore?: readonly string[];
  /** Directories whose files are never inputs (the --out-dir, --backup-dir, summary cache), absolute; compared by real path. */
  readonly exclude?: readonly string[];
  /** The option each of `exclude` came from, for messages (by default --out-dir). */
  readonly excludeNames?: readonly string[];
  /** The directory results are relative to; by default the common base of the inputs. Absolute or relative to `cwd`. */
  readonly base?: string;
}

/** One file to process. */
export interface InputFile {
  /** Absolute path, as given or found (a symbolic link stays one). */
  readonly absolute: string;
  /** The file it really is (links resolved): what is read, compared and replaced. */
  readonly real: string;
  /** Path relative to the base with `/` separators, NFC-normalized: the sort key, the shard key, the out-dir path. */
  readonly relative: string;
  /**
   * The path every output names it by, as the user named it: a file named outright as typed; one a folder search
   * found as the folder was typed joined with its path inside it (`nameUnder`); one a pattern matched as fast-glob
   * gives it, in the pattern's own form. Relative stays relative, absolute stays absolute.
   */
  readonly display: string;
  /** Found by a directory search or a pattern (a regular file then), not named outright. */
  readonly found: boolean;
  /**
   * Set for a folder the search could not read (its files are unknown): why, as `describeFsError` words it. A run
   * reports it as a failed input and goes on with the rest.
   */
  readonly unreadable?: string;
}

/** The failure an unreadable folder is reported as, like a file that cannot be read. */
export function unreadableFolderError(file: InputFile): InputError {
  return new InputError(
    `cannot read this folder: ${file.unreadable ?? 'permission denied'}; the files in it were not searched`,
    file.display,
  );
}

/** Test seam: an error to give instead of reading a folder, so an unreadable folder can be made even as root. */
export const expandHooks: { readdirError?: (dir: string) => NodeJS.ErrnoException | undefined } = {};

/** Folders a search could not read, absolute, with the error; filled by the search's `fs.readdir`. */
type Unreadable = Map<string, unknown>;

/**
 * fast-glob's file system with a `readdir` that, for a folder it may not read (EACCES, EPERM), records the folder and
 * gives it no entries, so one unreadable folder does not end the whole search.
 */
function searchFs(unreadable: Unreadable) {
  return {
    readdir: ((dir: string, ...rest: unknown[]) => {
      // Called as readdir(dir, options, callback) or readdir(dir, callback).
      const callback = rest[rest.length - 1] as (error: NodeJS.ErrnoException | null, entries: unknown[]) => void;
      const options = (rest.length > 1 ? rest[0] : {}) as { withFileTypes: true };
      const injected = expandHooks.readdirError?.(dir);
      const done = (error: NodeJS.ErrnoException | null, entries: unknown[]): void => {
        if (error !== null && (error.code === 'EACCES' || error.code === 'EPERM')) {
          unreadable.set(path.resolve(dir), error);
          callback(null, []);
          return;
        }
        callback(error, entries);
      };
      if (injected !== undefined) done(injected, []);
      else readdir(dir, options, (error, entries) => done(error, entries as unknown[]));
    }) as unknown as typeof readdir,
  };
}

/** An offload store a search met, whose files were left out. */
export interface SkippedStore {
  /** The store's folder, absolute. */
  readonly dir: string;
  /** The folder as outputs name it, in the form of the input that met it (see `InputFile.display`). */
  readonly shown: string;
  /** How many of its files the search left out. */
  readonly files: number;
}

export interface Expansion {
  readonly files: readonly InputFile[];
  /** Absolute base directory. */
  readonly base: string;
  /** The offload stores a search met, whose files were left out, sorted by folder. */
  readonly skippedStores: readonly SkippedStore[];
}

/** A store record's name (`NAME.txt.{hash}.swc.json`, or `NAME.txt.swc.json` from stores without a marker). */
const STORE_RECORD = /\.txt(\.[0-9a-f]{16})?\.swc\.json$/i;

/**
 * Finds which files a search met belong to an offload store: those under a folder holding the store's marker, and
 * store records by their name (stores written before the marker).
 */
function storeFinder(): (file: string) => Promise<string | null> {
  const roots = new Map<string, Promise<string | null>>();
  const rootOf = (dir: string): Promise<string | null> => {
    let known = roots.get(dir);
    if (known === undefined) {
      known = fs
        .lstat(path.join(dir, STORE_MARKER))
        .then(
          (stat) => (stat.isFile() ? dir : null),
          () => null,
        )
        .then((found) => (found !== null || path.dirname(dir) === dir ? found : rootOf(path.dirname(dir))));
      roots.set(dir, known);
    }
    return known;
  };
  return async (file) => (await rootOf(path.dirname(file))) ?? (STORE_RECORD.test(file) ? path.dirname(file) : null);
}

/** Whether a string is a glob pattern rather than a plain path (a file that exists under that exact name wins). */
export function isPattern(input: string): boolean {
  return fg.isDynamicPattern(input);
}

/** A path relative to `cwd` with `/` separators, for fast-glob (absolute patterns would not meet relative ignores). */
function toGlobPath(cwd: string, p: string): string {
  const rel = path.relative(cwd, path.resolve(cwd, p));
  return rel === '' ? '.' : rel.split(path.sep).join('/');
}

/** Trailing separators a typed folder may end with (`dir/`); only `/` on POSIX, where a backslash is a name's character. */
/** A folder an input searched from: as typed and absolute. */
interface SearchRoot {
  readonly typed: string;
  readonly absolute: string;
}

/** The folders an input searches from: a directory itself, or each fixed part of a pattern (several with braces). */
function searchRoots(input: string, cwd: string, isDirectory: boolean): SearchRoot[] {
  if (isDirectory) return [{ typed: input, absolute: path.resolve(cwd, input) }];
  return fg.generateTasks([input]).map((t) => ({ typed: t.base, absolute: path.resolve(cwd, t.base) }));
}

/**
 * A folder a search met (an unreadable one, an offload store), named from the root it was met under as `nameUnder`
 * names files; one above every root (a store whose marker is higher up) relative to the working directory, or
 * absolute when the input was.
 */
function folderName(dir: string, roots: readonly SearchRoot[], cwd: string): string {
  const root = roots.find((r) => r.absolute === dir || isInside(r.absolute, dir));
  if (root !== undefined) return nameUnder(root.typed, path.relative(root.absolute, dir));
  if (roots.some((r) => path.isAbsolute(r.typed))) return dir;
  return path.relative(cwd, dir) || '.';
}

/** The directory a glob pattern cannot reach above (its static part), absolute. */
function patternBase(cwd: string, pattern: string): string {
  const bases = fg.generateTasks([pattern]).map((t) => path.resolve(cwd, t.base));
  return commonAncestor(bases.length > 0 ? bases : [cwd]);
}

/** The deepest directory that holds all these absolute paths. */
export function commonAncestor(dirs: readonly string[]): string {
  const split = dirs.map((d) => path.resolve(d).split(path.sep));
  const first = split[0] ?? [];
  let n = first.length;
  for (const parts of split.slice(1)) {
    let k = 0;
    while (k < n && k < parts.length && parts[k] === first[k]) k++;
    n = k;
  }
  const joined = first.slice(0, n).join(path.sep);
  return joined === '' ? path.sep : joined;
}

/** The key a file is sorted, sharded and mirrored by: its path under the base, `/`-separated, NFC. */
export function relativeKey(base: string, file: string): string {
  return path.relative(base, file).split(path.sep).join('/').normalize('NFC');
}

/** Compares strings by UTF-16 code unit, the same on every machine and locale. */
function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The options every search shares: links to directories are never followed, so a link loop cannot make a walk endless. */
const SEARCH = { onlyFiles: true, dot: false, unique: true, followSymbolicLinks: false } as const;
/** Extensions are matched in any case (`A.JSONL`), as people name files. */
const ANY_CASE = { caseSensitiveMatch: false } as const;

/** A file an input gave: its absolute path, and its name in the input's form (`InputFile.display`). */
interface Match {
  readonly abs: string;
  readonly shown: string;
}

/**
 * The files one input gives: a path that exists is taken as it is (a file, a FIFO, a link to one; never a pattern,
 * whatever its characters), a directory is searched, anything else is a glob pattern.
 */
async function filesOf(
  input: string,
  cwd: string,
  ignore: readonly string[],
  stat: Stats | null,
  unreadable: Unreadable,
): Promise<Match[]> {
  const absolute = path.resolve(cwd, input);
  const ignored = (abs: string): boolean =>
    ignore.length > 0 && micromatch.isMatch(toGlobPath(cwd, abs), ignore as string[], { dot: true });
  if (stat?.isDirectory()) {
    // Searched from inside, so no character of the directory's name is read as a pattern.
    const found = await fg(TRANSCRIPT_GLOB, {
      ...SEARCH,
      ...ANY_CASE,
      cwd: absolute,
      ignore: [...DEFAULT_IGNORE],
      fs: searchFs(unreadable),
    });
    return found
      .map((m) => ({ abs: path.join(absolute, m), shown: nameUnder(input, m.split('/').join(path.sep)) }))
      .filter((f) => !ignored(f.abs));
  }
  // A file named outright and ignored is skipped quietly (`swc compact $(git ls-files) --ignore …`).
  if (stat !== null) return ignored(absolute) ? [] : [{ abs: absolute, shown: input }];
  // fast-glob gives each match in the pattern's form (relative or absolute, `./` kept but for a `.` base).
  const found = await fg(input, { ...SEARCH, cwd, ignore: [...DEFAULT_IGNORE, ...ignore], fs: searchFs(unreadable) });
  return found.map((m) => ({ abs: path.resolve(cwd, m), shown: m }));
}

/**
 * Expands inputs into files.
 * @param inputs files, directories and glob patterns as typed
 * @param options working directory, ignores, excluded directories, base
 * @returns files sorted by their path under the base, each real file once (under the path it was first met by), and
 *   the base
 * @throws UsageError naming an input that matches nothing, or a file outside --base
 */
export async function expandInputs(inputs: readonly string[], options: ExpandOptions): Promise<Expansion> {
  const { cwd } = options;
  const ignore = (options.ignore ?? []).map((p) => (path.isAbsolute(p) ? toGlobPath(cwd, p) : p));
  const excluded = await Promise.all(
    (options.exclude ?? []).map((dir) => fs.realpath(dir).catch(() => path.resolve(dir))),
  );
  const found = new Map<string, { abs: string; shown: string; searched: boolean }>();
  const unreadable: Unreadable = new Map();
  /** Each unreadable folder's name, from the input whose search met it first. */
  const unreadableShown = new Map<string, string>();
  const bases: string[] = [];
  const storeOf = storeFinder();
  const skipped = new Map<string, { shown: string; files: number }>();
  for (const input of inputs) {
    const absolute = path.resolve(cwd, input);
    const stat = await fs.stat(absolute).catch(() => null);
    if (stat === null && !isPattern(input)) throw new UsageError(noMatch(input, stat, false));
    bases.push(stat?.isDirectory() ? absolute : stat !== null ? path.dirname(absolute) : patternBase(cwd, input));
    let matches: Match[];
    try {
      matches = (await filesOf(input, cwd, ignore, stat, unreadable)).sort((a, b) => compareKeys(a.abs, b.abs));
    } catch (error) {
      throw new UsageError(
        `cannot search ${JSON.stringify(input)}: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    const named = stat !== null && !stat.isDirectory();
    const roots = named ? [] : searchRoots(input, cwd, stat !== null);
    for (const dir of unreadable.keys())
      if (!unreadableShown.has(dir)) unreadableShown.set(dir, folderName(dir, roots, cwd));
    if (!named) {
      // An offload store's results and records are never transcripts: a search leaves them out, and says so.
      const stores = await Promise.all(matches.map((m) => storeOf(m.abs)));
      matches = matches.filter((_, k) => {
        const store = stores[k];
        if (store === null || store === undefined) return true;
        const known = skipped.get(store) ?? { shown: folderName(store, roots, cwd), files: 0 };
        skipped.set(store, { ...known, files: known.files + 1 });
        return false;
      });
    }
    const reals = await Promise.all(matches.map((m) => fs.realpath(m.abs).catch(() => m.abs)));
    let kept = 0;
    matches.forEach(({ abs, shown }, k) => {
      const real = reals[k] as string;
      const inside = excluded.findIndex((dir) => isInside(dir, real));
      if (inside !== -1) {
        const option = options.excludeNames?.[inside] ?? '--out-dir';
        if (named)
          throw new UsageError(
            `${input} is inside the ${option}, where this run writes ${EXCLUDED_WRITES[option] ?? 'its results'}; it cannot also be an input`,
          );
        return;
      }
      kept++;
      if (!found.has(real)) found.set(real, { abs, shown, searched: !named });
    });
    const blocked = [...unreadable.keys()].some((dir) =>
      isInside(stat?.isDirectory() ? absolute : (bases[bases.length - 1] as string), dir),
    );
    if (kept === 0 && !blocked && (stat === null || stat.isDirectory()))
      throw new UsageError(noMatch(input, stat, ignore.length > 0 || excluded.length > 0, skipped.size > 0));
  }
  const base = options.base !== undefined ? path.resolve(cwd, options.base) : commonAncestor(bases);
  const files: InputFile[] = [];
  for (const [real, { abs, shown, searched }] of found) {
    if (!isInside(base, abs)) {
      throw new UsageError(
        `${shown} is outside the base ${options.base ?? (path.relative(cwd, base) || '.')} (set --base to a directory that holds every input)`,
      );
    }
    files.push({ absolute: abs, real, relative: relativeKey(base, abs), display: shown, found: searched });
  }
  files.push(...unreadableFolders(unreadable, unreadableShown, { cwd, base, ignore, excluded }));
  files.sort((a, b) => compareKeys(a.relative, b.relative));
  return {
    files,
    base,
    skippedStores: [...skipped]
      .map(([dir, { shown, files }]) => ({ dir, shown, files }))
      .sort((a, b) => compareKeys(a.dir, b.dir)),
  };
}

/**
 * The unreadable folders a search met, as entries of the expansion (each says why it could not be read), except those
 * --ignore leaves out or that are inside the run's own outputs.
 * @param unreadable each unreadable folder and its error
 * @param shown each one's name, from the input whose search met it first
 * @param where the working directory, the base, the --ignore patterns and the excluded folders
 * @returns the entries, in the order the folders were met
 */
function unreadableFolders(
  unreadable: Unreadable,
  shown: ReadonlyMap<string, string>,
  where: { cwd: string; base: string; ignore: readonly string[]; excluded: readonly string[] },
): InputFile[] {
  const { cwd, base, ignore, excluded } = where;
  const out: InputFile[] = [];
  for (const [dir, error] of unreadable) {
    // A folder left out by --ignore (its files would be) or inside the run's own outputs is nobody's input.
    if (excluded.some((out) => isInside(out, dir))) continue;
    if (
      ignore.length > 0 &&
      micromatch.isMatch(toGlobPath(cwd, path.join(dir, '_')), ignore as string[], { dot: true })
    )
      continue;
    const name = shown.get(dir) ?? (path.relative(cwd, dir) || '.');
    const display = name.endsWith(path.sep) ? name : `${name}${path.sep}`;
    out.push({
      absolute: dir,
      real: dir,
      relative: relativeKey(base, dir),
      display,
      found: true,
      unreadable: describeFsError(error),
    });
  }
  return out;
}

/** The line that says a search left an offload store's files out. */
export function skippedStoreLine(store: SkippedStore): string {
  return `swc: left out ${store.files} file${store.files === 1 ? '' : 's'} of the offload store ${store.shown} (its results and records are not transcripts)`;
}

/** The error for an input that gave no files, saying why where it can. */
function noMatch(input: string, stat: { isDirectory(): boolean } | null, ignoring: boolean, stores = false): string {
  const after = stores
    ? ' (after offload stores and what --ignore names are left out)'
    : ignoring
      ? ' (after --ignore and the output directory are left out)'
      : '';
  if (stat?.isDirectory()) return `no ${SEARCHED} under ${JSON.stringify(input)}${after}`;
  if (isPattern(input)) return `no files match the pattern ${JSON.stringify(input)}${after}`;
  return missingInput(input);
}
