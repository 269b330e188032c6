/** Errors the CLI reports as one clear line (no stack unless --debug). */

import { escapeUnsafe } from './safe-text.js';

/**
 * Writes control characters, line separators and bidi marks as `\uXXXX` (see safe-text.ts), so an error naming a
 * file or quoting input stays one line and cannot drive the terminal.
 */
export function escapeForLine(text: string): string {
  return escapeUnsafe(text, 'code');
}

/** The command line asks for something impossible. Exit 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(escapeForLine(message));
    this.name = 'UsageError';
  }
}

/**
 * The library's options ask for something impossible: `createCompactor`, `compactMessages` and `swcPrepareStep`
 * throw it for options that are unknown, of the wrong type, out of range or contradicting each other, with a message
 * that names the option as `CompactorOptions` spells it.
 */
export class OptionsError extends Error {
  constructor(message: string) {
    super(escapeForLine(message));
    this.name = 'OptionsError';
  }
}

/** A file cannot be read, decoded, parsed or placed in a format. Exit 2 for that file. `reason` and `file` stay as given. */
export class InputError extends Error {
  constructor(
    readonly reason: string,
    readonly file: string,
    readonly line?: number,
    readonly column?: number,
  ) {
    super(
      escapeForLine(
        `${file}${line !== undefined ? `:${line}${column !== undefined ? `:${column}` : ''}` : ''}: ${reason}`,
      ),
    );
    this.name = 'InputError';
  }
}

/**
 * A file in which no conversation is found: no list of messages where any format keeps one (a JSON object without
 * one, a single value, a list or lines none of whose items is a message of any format, a --conversation-path that
 * leads nowhere in the file). A batch with --skip-unrecognized counts such a file as skipped; a broken transcript
 * (bad JSON, a conversation found but invalid) is a plain InputError and still fails.
 */
export class NoConversationError extends InputError {
  constructor(reason: string, file: string, line?: number, column?: number) {
    super(reason, file, line, column);
    this.name = 'NoConversationError';
  }
}

/**
 * A call for a summary failed after its retries: the endpoint answered an error or nothing usable, or the command
 * failed. `reason` is one line, and never holds the API key.
 */
export class SummaryCallError extends Error {
  constructor(readonly reason: string) {
    super(escapeForLine(reason));
    this.name = 'SummaryCallError';
  }
}

/** Whether an error is one of ours, to be shown as one line. */
export function isKnownError(error: unknown): error is UsageError | InputError {
  return error instanceof UsageError || error instanceof InputError;
}

/** The one wording, in every command, for an input that names nothing (a usage error: exit 2, one line). */
export function missingInput(input: string): string {
  return `${JSON.stringify(input)}: no such file or directory`;
}
