/** What a row of the options table (src/settings/options.ts) holds, and what rows share. */

/** The commands whose options the table describes. */
export type OptionCommand = 'compact' | 'inspect' | 'replay' | 'restore';

/**
 * How an option's value is written and read: a token count (`8k`), a whole number, a share of the window (`0.7`,
 * `70%`), a share of identifiers kept, characters per token, text, a folder or a file, a JSON Pointer, a chain of
 * strategies, a placeholder or note template, a tokenizer or format name, true or false, one of some names; or what
 * only the library takes (a function, the request's own data).
 */
export type ValueKind =
  | 'tokens'
  | 'whole'
  | 'share'
  | 'retention'
  | 'rate'
  | 'text'
  | 'folder'
  | 'file'
  | 'pointer'
  | 'strategies'
  | 'placeholder'
  | 'note'
  | 'tokenizer'
  | 'format'
  | 'boolean'
  | 'choice'
  | 'library';

/** How one command shows an option: its help, and what differs there. */
export interface FlagUse {
  readonly help: string;
  /** The value's name where it differs from the row's (`--report <file.html>` in replay). */
  readonly argument?: string;
  /** Commander holds the row's default when the flag is not given, and the help shows it bare: `(default: auto)`. */
  readonly preset?: true;
  /** Given more than once: each value gathered in a list, or the times counted (`-qq`). */
  readonly repeat?: 'list' | 'count';
  /** A comma-separated chain of these names (`--strategy prune,window`), for the completion scripts. */
  readonly chain?: readonly string[];
}

/** One option. */
export interface OptionRow {
  /** The library's name, a settings file's key, and the attribute commander stores the flag's value under. */
  readonly name: string;
  /** The flag's names as commander reads them (`-k, --min-keep-steps`); absent for an option only the library takes. */
  readonly flags?: string;
  /** The value's name in the help (`<tokens>`); absent for a flag that takes none. */
  readonly argument?: string;
  /** The flag that says no (`--no-note`), listed right after the flag, with its help. */
  readonly negated?: { readonly flag: string; readonly help: string };
  readonly value: ValueKind;
  /** The least value a number takes, in every surface. */
  readonly min?: number;
  /** What the option is when it is not given, in every surface (the help says so where it shows a default). */
  readonly default?: number | string;
  /** The names the value is one of (commander refuses others with its own one-line error). */
  readonly choices?: () => readonly string[];
  /** Names a completion offers besides files (`--prices <model|file>`). */
  readonly words?: readonly string[];
  /** The strategy it applies with; given without it, a flag or a library option is refused, a file's key unused. */
  readonly strategy?: 'prune' | 'offload' | 'summarize';
  /** What else it needs to apply: the approx counter, or a batch run (a file's key is otherwise unused). */
  readonly needs?: 'approx' | 'batch';
  /** In a settings file: `true`, a key; a sentence, why a file may not set it; absent, an unknown key. */
  readonly config?: true | string;
  /** Whether the library's functions take it. */
  readonly library?: boolean;
  /** A settings file's keys it replaces when the flag is given: they say the same thing another way. */
  readonly displaces?: readonly string[];
  /** The commands that have the flag, and how each shows it. */
  readonly on: Partial<Record<OptionCommand, FlagUse>>;
}

/** The settings file's own name. */
export const CONFIG_FILE = 'transcript-compact.config.json';
/** The key of package.json that holds the settings. */
export const PACKAGE_KEY = 'transcript-compact';

/** `--color WHEN`, as ripgrep and git spell it; `--no-color` is `never`. */
export const COLOR_WHEN = ['always', 'never', 'auto'] as const;
export type ColorWhen = (typeof COLOR_WHEN)[number];

/**
 * The built-in price models' names (src/replay/prices.ts), for replay's help; written out so that no other command
 * loads the price models (test/replay/cli.test.ts compares them).
 */
export const PRICE_MODEL_NAMES = ['anthropic-sonnet', 'openai-gpt-4.1'] as const;

/** A number as the help writes it: `8,000`. */
export function thousands(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** The same use in each of these commands. */
export function on(commands: readonly OptionCommand[], use: FlagUse): Partial<Record<OptionCommand, FlagUse>> {
  return Object.fromEntries(commands.map((command) => [command, use]));
}

/** Why a file may not set an option that says what one run does. */
export const ONE_RUN = (flag: string): string => `give ${flag} on the command line (it says what one run does)`;
/** Why a file may not set an option only the library's functions take. */
export const LIBRARY_ONLY = "it is an option of the library's functions (a function, or the request's own data)";

/** The commands that read transcripts and count them. */
export const READING: readonly OptionCommand[] = ['compact', 'inspect', 'replay'];
/** The commands that compact. */
export const COMPACTING: readonly OptionCommand[] = ['compact', 'replay'];
