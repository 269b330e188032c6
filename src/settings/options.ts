import type { OptionCommand, OptionRow } from './option-row.js';
import { parseTokens, parseWhole } from './parse.js';
import { RUN_ROWS } from './run-rows.js';
import { SETTING_ROWS } from './setting-rows.js';

export * from './option-row.js';

/**
 * Every option, once: its library name (a settings file's key too), its flag, how its value is read and bounded,
 * where it applies, and its help. The command line builds its commander options from this table, a settings file
 * takes the keys it marks, the library the names it marks, and the completion scripts read the commander options
 * built from it.
 */

/**
 * The options, in the order a settings file's keys and the library's names are listed in messages (the library lists
 * `format` first: it says how the rest are read).
 */
export const OPTIONS: readonly OptionRow[] = [...SETTING_ROWS, ...RUN_ROWS];

/** Names written as words apart. */
function namesOf(text: string): string[] {
  return text.trim().split(/\s+/);
}

/** Each command's options in the order its help lists them (names of the table's rows). */
export const HELP_ORDER: Readonly<Record<OptionCommand, readonly string[]>> = {
  compact: namesOf(`
    target contextWindow compactAt compactTo minKeepSteps strategy minTokens offloadDir previewChars offloadHook offloadOver
    placeholder summaryTokens summaryInstruction baseUrl model summarizeCommand concurrency cacheDir cache
    strict minRetention note tokenizer format charsPerToken tokensPerImage tokensPerFile conversationKey
    conversationPath output inPlace backupDir outDir force base check failOverTarget dryRun stat verbose json report exact
    ignore skipUnrecognized jobs shard quiet color config debug
  `),
  inspect: namesOf(`
    tokenizer format charsPerToken tokensPerImage tokensPerFile conversationKey conversationPath json
    jsonLines ignore skipUnrecognized quiet color config debug
  `),
  replay: namesOf(`
    contextWindow compactAt compactTo minKeepSteps strategy minTokens placeholder summaryTokens
    summaryInstruction baseUrl model summarizeCommand concurrency cacheDir cache minRetention dryRun note
    tokenizer format charsPerToken tokensPerImage tokensPerFile conversationKey conversationPath prices json
    report changedOnly failOnOverflow maxLost ignore color debug
  `),
  restore: namesOf('offloadDir output inPlace format conversationKey conversationPath quiet debug'),
};

const BY_NAME: ReadonlyMap<string, OptionRow> = new Map(OPTIONS.map((row) => [row.name, row]));

/**
 * The row of an option.
 * @throws Error for a name the table does not hold (a mistake in the code, not in the user's input)
 */
export function optionRow(name: string): OptionRow {
  const row = BY_NAME.get(name);
  if (row === undefined) throw new Error(`no option ${JSON.stringify(name)} in the options table`);
  return row;
}

/** The long flag of an option (`--min-keep-steps`, `--no-cache`), or its kebab-case name when it has none. */
export function longFlag(name: string): string {
  const long = BY_NAME.get(name)
    ?.flags?.split(/,\s*/)
    .find((f) => f.startsWith('--'));
  return long ?? `--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

/** The option a long flag sets (`--tokens-per-image`: `tokensPerImage`). */
export function nameOfFlag(flag: string): string {
  const row = OPTIONS.find((r) => r.flags?.split(/,\s*/).includes(flag));
  if (row === undefined) throw new Error(`no option has the flag ${flag}`);
  return row.name;
}

/**
 * The first flag of a command's options for a strategy that the flags give, in help order: a `--no-` flag is given
 * when its value is false, any other when it has one.
 * @param flags commander's values, by each row's name
 */
export function givenFlagOf(
  command: OptionCommand,
  strategy: NonNullable<OptionRow['strategy']>,
  flags: Readonly<Record<string, unknown>>,
): string | undefined {
  const name = HELP_ORDER[command].find((option) => {
    const row = optionRow(option);
    if (row.strategy !== strategy) return false;
    return row.flags?.startsWith('--no-') === true ? flags[option] === false : flags[option] !== undefined;
  });
  return name === undefined ? undefined : longFlag(name);
}

/** The least value of a numeric option (0 when the table gives none). */
export function minOf(name: string): number {
  return optionRow(name).min ?? 0;
}

/**
 * What an option is when it is not given.
 * @throws Error for an option the table gives no default
 */
export function defaultOf(name: string): number | string {
  const value = optionRow(name).default;
  if (value === undefined) throw new Error(`the options table gives ${name} no default`);
  return value;
}

/**
 * A number option's value: its default when not given, else the text read by its kind and held to its bound.
 * @param shownName the option as the error names it (`--min-keep-steps`, `minKeepSteps`)
 */
export function countOf(name: string, shownName: string, raw: string | undefined): number {
  return raw === undefined ? (defaultOf(name) as number) : parseCount(name, shownName, raw);
}

/**
 * A token count or whole number as written on the command line or in a settings file, read by the option's kind and
 * held to its bound.
 * @param shownName the option as the error names it (`--min-keep-steps`, `minKeepSteps`)
 * @throws UsageError for text that is not such a number, or one below the bound
 */
export function parseCount(name: string, shownName: string, raw: string): number {
  const row = optionRow(name);
  if (row.value === 'tokens') return parseTokens(shownName, raw, row.min ?? 0);
  if (row.value === 'whole') return parseWhole(shownName, raw, row.min ?? 0);
  throw new Error(`${name} is not a number option`);
}

/** The names the library's functions take, `format` first. */
export function libraryOptionNames(): string[] {
  const names = OPTIONS.filter((row) => row.library === true).map((row) => row.name);
  return ['format', ...names.filter((name) => name !== 'format')];
}

/** The keys a settings file sets. */
export function configKeys(): OptionRow[] {
  return OPTIONS.filter((row) => row.config === true);
}

/** The commands of the settings file's keys: those that read a settings file. */
export const CONFIG_COMMANDS = ['compact', 'inspect'] as const;
