import { OptionsError, UsageError } from '../errors.js';

/**
 * Where settings come from, and how its errors name them: the command line's flags (`--compact-at`) or the library's
 * options (`compactAt`). The rules in this folder are written once and speak through a surface, so both say the same
 * thing in their own terms.
 */
export interface Surface {
  /** An option's name as the user wrote it: `--min-keep-steps` or `minKeepSteps`. */
  name(option: string): string;
  /** An option with what it takes, where a message asks for it: `--context-window <tokens>` or `contextWindow`. */
  ask(option: string, argument: string): string;
  /** The strategy named as the user would set it: `--strategy prune` or `strategy prune`. */
  strategy(name: string): string;
  /** What follows the list of strategies to choose from: how a chain is written, where that needs saying. */
  readonly chainHint: string;
  /** How to ask for no note: `--no-note` or `null for none`. */
  readonly noNote: string;
  /** The error this surface throws for settings that cannot work. */
  fail(message: string): never;
}

/** camelCase to the kebab-case of a flag. */
function kebab(option: string): string {
  return option.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/** The command line: flags, and a UsageError (exit 2). */
export const CLI: Surface = {
  name: (option) => `--${kebab(option)}`,
  ask: (option, argument) => `--${kebab(option)} ${argument}`,
  strategy: (name) => `--strategy ${name}`,
  chainHint: ', comma-separated',
  noNote: '--no-note',
  fail(message): never {
    throw new UsageError(message);
  },
};

/** The library: option names as `CompactorOptions` spells them, and an OptionsError. */
export const LIBRARY: Surface = {
  name: (option) => option,
  ask: (option) => option,
  strategy: (name) => `strategy ${name}`,
  chainHint: '',
  noNote: 'null for none',
  fail(message): never {
    throw new OptionsError(message);
  },
};

/**
 * A settings file (transcript-compact.config.json, package.json's "transcript-compact"): keys named as the library
 * names its options, and a UsageError (exit 2); the file is named by whoever reads it (see src/cli/config.ts).
 */
export const CONFIG: Surface = {
  name: (option) => option,
  ask: (option) => option,
  strategy: (name) => `strategy ${name}`,
  chainHint: ', as a list or comma-separated',
  noNote: 'null for none',
  fail(message): never {
    throw new UsageError(message);
  },
};
