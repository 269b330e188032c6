import path from 'node:path';
import { UsageError } from '../errors.js';
import { isInside } from '../io/files.js';
import { parsePointer, PointerSyntaxError } from '../io/json-pointer.js';
import { parseRetention } from '../outcome/forgotten.js';
import {
  checkBudget,
  checkFormat,
  checkNote,
  checkPlaceholder,
  checkStrategies,
  checkTokenizer,
  CONFIG,
  shown,
} from '../settings/index.js';
import {
  CONFIG_COMMANDS,
  CONFIG_FILE,
  configKeys,
  OPTIONS,
  PACKAGE_KEY,
  parseCount,
  type OptionRow,
  type ValueKind,
} from '../settings/options.js';
import { parseFraction } from '../settings/parse.js';
import { parseCounterOptions } from '../tokens/index.js';
import { entryAt, isRepositoryRoot, readJson, realFolder } from './config-file.js';

/**
 * Settings kept in a file, as prettier and eslint keep theirs: `transcript-compact.config.json`, or the
 * `"transcript-compact"` key of a package.json, found from the working directory upward to the repository root.
 * Keys are named as the library names its options (`target`, `minKeepSteps`, `contextWindow`…); each value is checked
 * by the rules the command line follows (src/settings/rules.ts and the flags' own parsers), and the command line
 * overrides the file.
 */

export { CONFIG_FILE, PACKAGE_KEY };

/** The commands that read the file, each taking the keys that mean something to it. */
export type ConfigCommand = 'compact' | 'inspect';

/** What a setting needs to apply; without it a file's setting is left unused (a flag's would be refused). */
type Need =
  | { readonly strategy: 'prune' | 'offload' | 'summarize' }
  | { readonly tokenizer: 'approx' }
  | { readonly batch: true };

/** How a key's value is read, turned into what the flag would hold. */
type Reader = (value: unknown, key: string, dir: string, cwd: string) => string | boolean;

/** One key a file may set. */
interface KeySpec {
  readonly read: Reader;
  readonly commands: readonly ConfigCommand[];
  readonly needs?: Need;
}

/** A token count: 8000, or as the flag takes it, "8k"; at least the option's bound. */
const tokens: Reader = (value, key) => {
  const text = numberText(value, key, 'a number of tokens (8000, or "8k")');
  parseCount(key, key, text);
  return text;
};

/** A whole number, at least the option's bound. */
const whole: Reader = (value, key) => {
  const text = numberText(value, key, 'a whole number');
  parseCount(key, key, text);
  return text;
};

/** A share of the context window: 0.7, or "70%". Its range is checked with the window's other settings. */
const share: Reader = (value, key) => {
  const text = numberText(value, key, 'a fraction such as 0.7 or "70%"');
  parseFraction(key, text);
  return text;
};

/** A name or a list of names (`strategy`): a list is the comma-separated chain. */
const strategy: Reader = (value, key) => {
  if (typeof value === 'string') {
    checkStrategies(
      CONFIG,
      value.split(',').map((name) => name.trim()),
      value,
    );
    return value;
  }
  if (!Array.isArray(value))
    CONFIG.fail(`${key} must be a name or a list of names (window, prune, offload, summarize), got ${shown(value)}`);
  return checkStrategies(CONFIG, value as unknown[], '').join(',');
};

/** A non-empty string. */
const text: Reader = (value, key) => {
  if (typeof value !== 'string' || value === '') CONFIG.fail(`${key} must be a non-empty string, got ${shown(value)}`);
  return value as string;
};

/**
 * A folder, relative to the file that names it (as eslint and prettier resolve theirs), and inside that file's folder
 * with links followed: a file in a cloned repository must not send results or summaries elsewhere on the machine.
 * The command line's flag takes any folder.
 */
const folder: Reader = (value, key, dir, cwd) => {
  const name = text(value, key, dir, cwd) as string;
  const absolute = path.resolve(dir, name);
  const real = realFolder(absolute);
  const own = realFolder(dir);
  const instead = `give ${flagOf(key)} on the command line to use it`;
  if (real === null || own === null)
    CONFIG.fail(`${key} ${shown(name)} goes through a symbolic link that cannot be followed; ${instead}`);
  if (!isInside(own as string, real as string))
    CONFIG.fail(
      `${key} ${shown(name)} is outside ${dir}: a settings file keeps its folders inside its own folder; ${instead}`,
    );
  return path.isAbsolute(name) ? name : path.relative(cwd, absolute) || '.';
};

/** true or false. */
const flag: Reader = (value, key) => {
  if (typeof value !== 'boolean') CONFIG.fail(`${key} must be true or false, got ${shown(value)}`);
  return value as boolean;
};

/** The placeholder of pruned results: a template with text besides `{tool_name}`. */
const placeholder: Reader = (value, key, dir, cwd) => {
  const template = typeof value === 'string' ? value : (text(value, key, dir, cwd) as string);
  checkPlaceholder(CONFIG, template);
  return template;
};

/** The note's template, or null (or '') for none, which is `--no-note`. */
const note: Reader = (value, key) => {
  if (value === null || value === '') return false;
  if (typeof value !== 'string')
    CONFIG.fail(`${key} must be a template ({num_removed} is filled in), or null for none, got ${shown(value)}`);
  checkNote(CONFIG, value as string);
  return value as string;
};

/** Characters per token of the approx counter. */
const rate: Reader = (value, key) => {
  const rate = numberText(value, key, 'a positive number');
  parseCounterOptions({ charsPerToken: rate }, 'approx');
  return rate;
};

/** A JSON Pointer (RFC 6901). */
const pointer: Reader = (value, key, dir, cwd) => {
  const pointer = text(value, key, dir, cwd) as string;
  try {
    parsePointer(pointer);
  } catch (error) {
    if (error instanceof PointerSyntaxError) CONFIG.fail(`${key}: ${error.message}`);
    throw error;
  }
  return pointer;
};

/** The least share of identifiers a summary keeps: a fraction from 0 to 1 or a percentage. */
const retention: Reader = (value, key) => {
  const fraction = numberText(value, key, 'a fraction from 0 to 1 or a percentage');
  try {
    parseRetention(fraction);
  } catch (error) {
    if (error instanceof RangeError) CONFIG.fail(error.message);
    throw error;
  }
  return fraction;
};

/** How a file's value of each kind is read (the options table says each key's kind). */
const READERS: Partial<Record<ValueKind, Reader>> = {
  tokens,
  whole,
  share,
  strategies: strategy,
  text,
  folder,
  boolean: flag,
  placeholder,
  note,
  rate,
  pointer,
  retention,
  tokenizer: (value) => checkTokenizer(CONFIG, value),
  format: (value) => checkFormat(CONFIG, value),
};

/** What a key needs to apply, from its row: its strategy, the approx counter, or a batch run. */
function needOf(row: OptionRow): Need | undefined {
  if (row.strategy !== undefined) return { strategy: row.strategy };
  if (row.needs === 'approx') return { tokenizer: 'approx' };
  return row.needs === 'batch' ? { batch: true } : undefined;
}

/** A key of the options table as a file sets it. */
function keySpec(row: OptionRow): KeySpec {
  const read = READERS[row.value];
  if (read === undefined) throw new Error(`a settings file cannot read ${row.name} (${row.value})`);
  const need = needOf(row);
  return {
    read,
    commands: CONFIG_COMMANDS.filter((command) => row.on[command] !== undefined),
    ...(need === undefined ? {} : { needs: need }),
  };
}

/**
 * The keys a file may set (the options table's, in its order), each with the commands it means something to and what
 * it needs to apply. A Map, so that a file's `constructor` or `__proto__` is a key like any other, not an object's own
 * method.
 */
const KEYS: ReadonlyMap<string, KeySpec> = new Map(configKeys().map((row) => [row.name, keySpec(row)]));

/**
 * Keys a file may not set, and what to do instead (the options table's reasons): a command to run and an endpoint that
 * receives the transcripts and $OPENAI_API_KEY (a file in a cloned repository must not choose those), what one run
 * does, and the library's own.
 */
const REFUSED: ReadonlyMap<string, string> = new Map(
  OPTIONS.flatMap((row) => (typeof row.config === 'string' ? [[row.name, row.config] as const] : [])),
);

/** A command line's flags that displace a file's other ways of saying the same thing. */
const DISPLACES: ReadonlyMap<string, readonly string[]> = new Map(
  OPTIONS.flatMap((row) => (row.displaces === undefined ? [] : [[row.name, row.displaces] as const])),
);

/** `minKeepSteps` as a flag: `--min-keep-steps`. */
function flagOf(key: string): string {
  return `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

/** A number, or a string as the flag takes it, as text. */
function numberText(value: unknown, key: string, what: string): string {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value === 'string') return value;
  return CONFIG.fail(`${key} must be ${what}, got ${shown(value)}`);
}

/** A settings file, read and checked. */
export interface LoadedConfig {
  /** The file as outputs name it: as --config gave it, or relative to the working directory. */
  readonly file: string;
  /** Each key's value as its flag would hold it (folders made relative to the working directory). */
  readonly flags: Readonly<Record<string, string | boolean>>;
}

/** The settings a package.json holds under "transcript-compact", or undefined when it holds none. */
function packageSettings(file: string, shownName: string): unknown {
  const manifest = readJson(file, shownName);
  if (typeof manifest !== 'object' || manifest === null || Array.isArray(manifest)) return undefined;
  return Object.hasOwn(manifest, PACKAGE_KEY) ? (manifest as Record<string, unknown>)[PACKAGE_KEY] : undefined;
}

/**
 * Whether a folder holds a settings file of this name: a regular file (links followed) does, nothing does not, and
 * anything else in its place (a folder, a FIFO, a link to nothing or in a loop) is refused rather than passed over,
 * which would let a parent folder's settings apply unseen.
 */
function isPresent(file: string, shownName: string): boolean {
  const entry = entryAt(file, shownName);
  if (typeof entry === 'object')
    throw new UsageError(`${shownName}: not a settings file: ${entry.not} (remove it, or give --no-config)`);
  return entry === 'file';
}

/**
 * The settings file the working directory is under: in each folder from it upward, `transcript-compact.config.json`
 * or a package.json with a "transcript-compact" key, both in one folder being a mistake; the search stops after the
 * repository root (the folder holding `.git`) or the file system's root.
 * @returns the file's absolute path and its settings, or null when there is none
 * @throws UsageError naming a path of either name that is not a regular file, or a file that is not JSON
 */
export function findConfig(cwd: string): { file: string; settings: unknown; inPackage: boolean } | null {
  for (let dir = path.resolve(cwd); ;) {
    const own = path.join(dir, CONFIG_FILE);
    const shownOwn = path.relative(cwd, own);
    const manifest = path.join(dir, 'package.json');
    const shownManifest = path.relative(cwd, manifest) || 'package.json';
    const inManifest = isPresent(manifest, shownManifest) ? packageSettings(manifest, shownManifest) : undefined;
    if (isPresent(own, shownOwn)) {
      if (inManifest !== undefined)
        throw new UsageError(
          `${shownOwn} and ${shownManifest} ("${PACKAGE_KEY}") both hold settings: keep one of them`,
        );
      return { file: own, settings: readJson(own, shownOwn), inPackage: false };
    }
    if (inManifest !== undefined) return { file: manifest, settings: inManifest, inPackage: true };
    const parent = path.dirname(dir);
    if (isRepositoryRoot(dir) || parent === dir) return null;
    dir = parent;
  }
}

/**
 * The settings file of a run: `--config FILE` (a package.json is read at its "transcript-compact" key), none with
 * `--no-config`, else the one `findConfig` finds.
 * @param option commander's `config`: the file, false for --no-config, undefined when neither was given
 * @throws UsageError naming the file (and the key) for a file that is missing or not a regular file, cannot be read,
 *   is not JSON, or sets a key it may not or a value no flag would take
 */
export function loadConfig(option: string | boolean | undefined, cwd: string): LoadedConfig | null {
  if (option === false) return null;
  let found: { file: string; settings: unknown; inPackage: boolean } | null;
  let shownName: string;
  if (typeof option === 'string') {
    const file = path.resolve(cwd, option);
    const entry = entryAt(file, `--config ${option}`);
    if (entry === 'absent') throw new UsageError(`--config ${option}: no such file`);
    if (typeof entry === 'object') throw new UsageError(`--config ${option}: not a settings file: ${entry.not}`);
    const inPackage = path.basename(file) === 'package.json';
    const settings = inPackage ? packageSettings(file, option) : readJson(file, option);
    if (settings === undefined) throw new UsageError(`--config ${option}: it has no "${PACKAGE_KEY}" key`);
    found = { file, settings, inPackage };
    shownName = option;
  } else {
    found = findConfig(cwd);
    if (found === null) return null;
    shownName = path.relative(cwd, found.file) || path.basename(found.file);
  }
  const where = found.inPackage ? `${shownName} ("${PACKAGE_KEY}")` : shownName;
  return { file: shownName, flags: checkedSettings(found.settings, where, path.dirname(found.file), cwd) };
}

/** Every key of a file's settings, checked, as the flags would hold them; each problem names the file and the key. */
function checkedSettings(
  settings: unknown,
  where: string,
  dir: string,
  cwd: string,
): Readonly<Record<string, string | boolean>> {
  try {
    if (typeof settings !== 'object' || settings === null || Array.isArray(settings))
      CONFIG.fail(`the settings must be an object such as { "target": 8000 }, got ${shown(settings)}`);
    const out: Record<string, string | boolean> = {};
    for (const [key, value] of Object.entries(settings as Record<string, unknown>)) {
      const spec = KEYS.get(key);
      if (spec === undefined) CONFIG.fail(unknownKey(key));
      out[key] = (spec as KeySpec).read(value, key, dir, cwd);
    }
    const given = (key: string): boolean => Object.hasOwn(out, key);
    if (given('target') && given('contextWindow'))
      checkBudget(CONFIG, { target: true, contextWindow: true, compactAt: false, compactTo: false });
    if (given('conversationKey') && given('conversationPath'))
      CONFIG.fail('conversationKey and conversationPath both say where the conversation is: keep one');
    return out;
  } catch (error) {
    if (error instanceof UsageError) throw new UsageError(`${where}: ${error.message}`);
    throw error;
  }
}

/** Why a key is not one a file may set, with the key it was likely meant to be. */
function unknownKey(key: string): string {
  const refused = REFUSED.get(key);
  if (refused !== undefined) return `${key} cannot be set in a settings file: ${refused}`;
  const like = closestKey(key);
  return `unknown key ${JSON.stringify(key)} (${like === undefined ? `keys: ${[...KEYS.keys()].join(', ')}` : `did you mean ${like}?`})`;
}

/**
 * The key a misspelt one was likely meant to be: the same letters in another case or with dashes (`context-window`),
 * or one or two letters off (`targte`), as commander suggests flags.
 */
function closestKey(key: string): string | undefined {
  const plain = (name: string): string => name.toLowerCase().replace(/[-_]/g, '');
  const known = [...KEYS.keys()];
  const same = known.find((name) => plain(name) === plain(key));
  if (same !== undefined) return same;
  let best: { name: string; distance: number } | undefined;
  for (const name of known) {
    const distance = editDistance(plain(name), plain(key));
    if (distance <= 2 && (best === undefined || distance < best.distance)) best = { name, distance };
  }
  return best?.name;
}

/** Letters inserted, deleted, changed or two of them swapped to turn one word into the other. */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const row = d[i] as number[];
      const up = d[i - 1] as number[];
      row[j] = Math.min(
        (up[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (up[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        row[j] = Math.min(row[j] as number, ((d[i - 2] as number[])[j - 2] as number) + 1);
    }
  }
  return (d[a.length] as number[])[b.length] as number;
}

/** How a run is made, as far as a file's settings depend on it. */
export interface RunShape {
  readonly command: ConfigCommand;
  /** The run writes one input to stdout or --output (batch-only settings do not apply). */
  readonly stream: boolean;
}

/**
 * The flags with a file's settings under them: a key the command line gave, or displaced by a flag that says the
 * same thing another way (`--target` for the file's `contextWindow`), is the command line's; a key that needs what
 * the run does not do (`minTokens` without `prune`, `charsPerToken` without `approx`, `skipUnrecognized` on one
 * file) is left unused.
 * @param given whether commander took the key from the command line (not a default)
 * @returns the merged flags, and the file's keys that went into them
 */
export function withConfig<F extends object>(
  flags: F,
  given: (key: string) => boolean,
  config: LoadedConfig | null,
  run: RunShape,
): { flags: F; used: string[] } {
  if (config === null) return { flags, used: [] };
  const displaced = new Set([...DISPLACES].flatMap(([key, others]) => (given(key) ? others : [])));
  const merged: Record<string, unknown> = { ...(flags as Record<string, unknown>) };
  const used: string[] = [];
  for (const [key, value] of Object.entries(config.flags)) {
    const spec = KEYS.get(key) as KeySpec;
    if (!spec.commands.includes(run.command) || given(key) || displaced.has(key)) continue;
    merged[key] = value;
    used.push(key);
  }
  // Decided on the merged flags: the command line's --strategy or --tokenizer may be what a setting needs, or not.
  const unused = used.filter((key) => !isNeedMet(KEYS.get(key)?.needs, merged, run));
  for (const key of unused) merged[key] = (flags as Record<string, unknown>)[key];
  return { flags: merged as F, used: used.filter((key) => !unused.includes(key)) };
}

/** Whether the run does what a file's setting needs: its strategy in the chain, the approx counter, a batch. */
function isNeedMet(need: Need | undefined, flags: Record<string, unknown>, run: RunShape): boolean {
  if (need === undefined) return true;
  if ('batch' in need) return !run.stream;
  if ('tokenizer' in need) return (flags.tokenizer ?? 'o200k_base') === need.tokenizer;
  const chain = typeof flags.strategy === 'string' ? flags.strategy.split(',').map((name) => name.trim()) : ['window'];
  return chain.includes(need.strategy);
}

/**
 * A usage error of the merged settings, saying which of the file's keys it involves: the error names flags, and a
 * user who typed none of them needs to know the file set them.
 */
export function blameConfig(error: unknown, config: LoadedConfig | null, used: readonly string[]): unknown {
  if (!(error instanceof UsageError) || config === null) return error;
  const involved = used.filter((key) => new RegExp(`${flagOf(key)}(?![\\w-])`).test(error.message));
  if (involved.length === 0) return error;
  return new UsageError(`${error.message} (${involved.join(', ')} set in ${config.file})`);
}
