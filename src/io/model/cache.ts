/**
 * A summary cache on disk, so a re-run or a CI job over the same files never pays for the same summary twice. An
 * entry is keyed by the sha256 of a version tag, the model's identity (endpoint URL and model name, or the command
 * text), the instruction and the prompt, and is one JSON file `<dir>/summaries/<key>.json` holding the text and the
 * usage of the call that wrote it. Writes are atomic (a temporary file renamed over the entry); an entry that cannot
 * be read or parsed, or belongs to another key or version, is a miss and is overwritten. Failures are never cached.
 * The files hold summaries of transcripts, so the folder is private to the user (0700, files 0600).
 */
import { createHash, randomBytes } from 'node:crypto';
import { lstat, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { chatCompletionsUrl } from './endpoint.js';
import type { SummaryReply, SummaryRequest, Summarizer } from './types.js';

/** Part of every key: bump it when the prompt's meaning or an entry's shape changes, and old entries stop matching. */
export const CACHE_VERSION = 'swc-summary-cache-1';
/** The sub-folder of the cache folder that holds summaries (the cache folder may one day hold other things). */
export const SUMMARIES_FOLDER = 'summaries';
/** Marks the folder as a cache for backup tools (https://bford.info/cachedir/). */
const CACHEDIR_TAG =
  'Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by swc (transcript-compact).\n# For information about cache directory tags, see https://bford.info/cachedir/\n';

export interface CacheOptions {
  /** The cache folder (`defaultCacheDir()` or --cache-dir); entries go in its `summaries/` sub-folder. */
  readonly dir: string;
  /** Who writes the summaries: `endpointIdentity(...)` or `commandIdentity(...)`. Hashed into the key, never written. */
  readonly model: string;
  /** Anything else that changes what a summary would be (kept apart from the model's identity). */
  readonly namespace?: string;
}

export interface CacheStats {
  /** Calls answered from the cache (on disk, or by an identical call already under way). */
  readonly hits: number;
  /** Calls passed on to the summarizer. */
  readonly misses: number;
  /** Entries that could not be written (the summary was still returned). */
  readonly writeFailures: number;
}

/** A Summarizer with its cache's counts. */
export interface CachedSummarizer extends Summarizer {
  stats(): CacheStats;
  /** Drops a request's entry: the decision refused its summary (not smaller, or keeping too few identifiers), so a later run asks again. */
  forget(request: SummaryRequest): Promise<void>;
}

/**
 * Where summaries are cached unless --cache-dir says: `$XDG_CACHE_HOME/swc` when that is an absolute path (the XDG
 * specification ignores a relative one), else `~/.cache/swc`.
 * @param env the environment to read XDG_CACHE_HOME from
 * @param home the user's home folder
 */
export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env, home: string = os.homedir()): string {
  const xdg = env.XDG_CACHE_HOME;
  return xdg !== undefined && path.isAbsolute(xdg) ? path.join(xdg, 'swc') : path.join(home, '.cache', 'swc');
}

/** The identity of an endpoint's model in cache keys: the chat completions URL it resolves to, and the model name. */
export function endpointIdentity(baseUrl: string, model: string): string {
  return `endpoint\u0000${chatCompletionsUrl(baseUrl).href}\u0000${model}`;
}

/** The identity of a command in cache keys: its text. */
export function commandIdentity(command: string): string {
  return `command\u0000${command}`;
}

/**
 * The key of one call: the sha256 of the version tag, model identity, namespace, instruction and prompt.
 * @returns 64 hex digits
 */
export function cacheKey(model: string, namespace: string, request: SummaryRequest): string {
  return createHash('sha256')
    .update(JSON.stringify([CACHE_VERSION, model, namespace, request.system, request.user]))
    .digest('hex');
}

interface Entry {
  readonly version: string;
  readonly key: string;
  readonly text: string;
  readonly usage?: { readonly input: number; readonly output: number };
}

/** The entry's text when the file is a whole entry for this key and version; undefined for a miss of any kind. */
async function readEntry(file: string, key: string): Promise<string | undefined> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(file, 'utf8'));
  } catch {
    return undefined;
  }
  const e = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as Partial<Record<keyof Entry, unknown>>;
  return e.version === CACHE_VERSION && e.key === key && typeof e.text === 'string' && e.text.trim() !== ''
    ? e.text
    : undefined;
}

/**
 * Whether a path in the cache is a symbolic link. The cache never reads or writes through one: a settings file's
 * `cacheDir` is confined to its repository, and a link planted inside it (a cloned repository's `summaries` folder
 * pointing elsewhere) must not send summaries of the user's transcripts out, nor serve entries from there.
 */
async function isLink(file: string): Promise<boolean> {
  try {
    return (await lstat(file)).isSymbolicLink();
  } catch {
    return false;
  }
}

/** Makes the private folder and its CACHEDIR.TAG (a tag already there is left as it is); refuses a linked folder. */
async function prepareFolder(folder: string): Promise<void> {
  await mkdir(folder, { recursive: true, mode: 0o700 });
  if (await isLink(folder)) throw new Error(`${folder} is a symbolic link: the cache never writes through one`);
  await writeFile(path.join(folder, 'CACHEDIR.TAG'), CACHEDIR_TAG, { flag: 'wx', mode: 0o600 }).catch(() => undefined);
}

/** Writes an entry whole or not at all: a private temporary file beside it, renamed over whatever was there. */
async function writeEntry(file: string, entry: Entry): Promise<void> {
  const temp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await writeFile(temp, `${JSON.stringify(entry)}\n`, { flag: 'wx', mode: 0o600 });
    await rename(temp, file);
  } catch (error) {
    await rm(temp, { force: true }).catch(() => undefined);
    throw error;
  }
}

/**
 * Wraps a summarizer with the cache. Identical calls under way at once share one call.
 * @param summarizer what answers a miss
 * @param options the folder, the model's identity and an optional namespace
 * @returns a summarizer whose hits say `cached: true` (without usage: they cost nothing) and whose `stats()` counts them
 */
export function withCache(summarizer: Summarizer, options: CacheOptions): CachedSummarizer {
  const folder = path.join(options.dir, SUMMARIES_FOLDER);
  const namespace = options.namespace ?? '';
  const pending = new Map<string, Promise<SummaryReply>>();
  let hits = 0;
  let misses = 0;
  let writeFailures = 0;
  /** The folder is made once per cache, at its first write; a failure is tried again at the next. */
  let prepared: Promise<void> | undefined;
  const prepare = (): Promise<void> => {
    prepared ??= prepareFolder(folder).catch((error: unknown) => {
      prepared = undefined;
      throw error;
    });
    return prepared;
  };

  const cached = async (request: SummaryRequest): Promise<SummaryReply> => {
    const key = cacheKey(options.model, namespace, request);
    const under = pending.get(key);
    if (under !== undefined) {
      const reply = await under;
      hits += 1;
      return { text: reply.text, cached: true };
    }
    const file = path.join(folder, `${key}.json`);
    const call = (async (): Promise<SummaryReply> => {
      // Through a link, an entry is a miss (and is not written: `prepare` refuses the folder).
      const linked = (await isLink(folder)) || (await isLink(file));
      const text = linked ? undefined : await readEntry(file, key);
      if (text !== undefined) {
        hits += 1;
        return { text, cached: true };
      }
      misses += 1;
      const reply = await summarizer(request);
      // An empty text is a failed call the decision will refuse; it is not worth keeping.
      if (reply.text.trim() === '') return reply;
      const entry: Entry = {
        version: CACHE_VERSION,
        key,
        text: reply.text,
        ...(reply.usage === undefined ? {} : { usage: reply.usage }),
      };
      await prepare()
        .then(() => writeEntry(file, entry))
        .catch(() => {
          writeFailures += 1;
        });
      return reply;
    })();
    pending.set(key, call);
    try {
      return await call;
    } finally {
      pending.delete(key);
    }
  };
  const forget = async (request: SummaryRequest): Promise<void> => {
    await rm(path.join(folder, `${cacheKey(options.model, namespace, request)}.json`), { force: true }).catch(
      () => undefined,
    );
  };
  return Object.assign(cached, { stats: (): CacheStats => ({ hits, misses, writeFailures }), forget });
}
