/** Errors the CLI reports as one clear line (no stack unless --debug). */

const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * Writes control characters, line separators and bidi overrides as `\uXXXX`, so an error naming a file or quoting
 * input stays one line and cannot drive the terminal.
 */
export function escapeForLine(text: string): string {
  return text.replace(UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** The command line asks for something impossible. Exit 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(escapeForLine(message));
    this.name = 'UsageError';
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
    super(escapeForLine(`${file}${line !== undefined ? `:${line}${column !== undefined ? `:${column}` : ''}` : ''}: ${reason}`));
    this.name = 'InputError';
  }
}

/** Whether an error is one of ours, to be shown as one line. */
export function isKnownError(error: unknown): error is UsageError | InputError {
  return error instanceof UsageError || error instanceof InputError;
}
