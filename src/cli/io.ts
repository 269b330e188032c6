import type { Summarizer } from '../core/summarize.js';
import { EXIT } from './exit-codes.js';

/** What a command may touch of the outside world, passed in so tests can run commands in-process. */
export interface OutStream {
  write(chunk: string | Uint8Array): boolean;
  readonly isTTY?: boolean;
  readonly columns?: number;
  once?(event: 'drain', listener: () => void): unknown;
  /** The terminal itself, for a spinner that moves the cursor (set only when the stream is an interactive terminal). */
  readonly terminal?: NodeJS.WritableStream;
}

export interface CliIo {
  readonly stdout: OutStream;
  readonly stderr: OutStream;
  readonly stdin: NodeJS.ReadableStream;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /** A test seam: the model summarize calls instead of an endpoint or command (still behind the cache and limiter). */
  readonly summarizer?: Summarizer;
}

export const realIo: CliIo = {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  cwd: process.cwd(),
};

/** Writes to a stream and waits until it has taken the data (large outputs into slow pipes). */
export function writeAll(stream: OutStream, data: string | Uint8Array): Promise<void> {
  return new Promise((resolve) => {
    if (stream.write(data) || stream.once === undefined) resolve();
    else stream.once('drain', resolve);
  });
}

/** A stream that failed (a reader that went away, a full disk) as a guarded stream records it. */
export interface GuardedStream extends OutStream {
  /** The first write error, if any. */
  readonly failure: NodeJS.ErrnoException | null;
}

/** What a real output stream must offer to be guarded. */
export interface RawStream {
  write(chunk: string | Uint8Array): boolean;
  readonly isTTY?: boolean;
  readonly columns?: number;
  once(event: 'drain', listener: () => void): unknown;
  on(event: 'error', listener: (error: NodeJS.ErrnoException) => void): unknown;
}

/**
 * Wraps stdout or stderr so a write error never crashes the run or changes what it decides: the first error is
 * recorded, later writes are dropped, and a writer waiting for the stream to drain is let go. The entry point turns
 * the recorded error into the exit code (see `exitCodeAfter`).
 */
export function guardStream(stream: RawStream): GuardedStream {
  let failure: NodeJS.ErrnoException | null = null;
  const waiting = new Set<() => void>();
  stream.on('error', (error) => {
    failure ??= error;
    for (const resume of waiting) resume();
    waiting.clear();
  });
  return {
    get failure() {
      return failure;
    },
    get isTTY() {
      return stream.isTTY;
    },
    get columns() {
      return stream.columns;
    },
    // A spinner needs the terminal's cursor controls (cursorTo, clearLine…), which only the real stream has; its
    // errors still land in the handler above.
    get terminal() {
      return stream.isTTY === true ? (stream as unknown as NodeJS.WritableStream) : undefined;
    },
    write(chunk) {
      if (failure !== null) return true;
      return stream.write(chunk);
    },
    once(_event: 'drain', listener: () => void) {
      if (failure !== null) return listener();
      const resume = (): void => {
        if (waiting.delete(resume)) listener();
      };
      waiting.add(resume);
      stream.once('drain', resume);
    },
  };
}

/**
 * The exit code a run ends with, given what happened to its standard output: a reader that went away keeps the code
 * the run earned (or 141 where it earned 0, so `swc … | head` under pipefail never passes as a success); any other
 * write error (a full disk) is an error, 2.
 * @param earned the code the command returned
 * @param failure the first write error on standard output, if any
 */
export function exitCodeAfter(earned: number, failure: NodeJS.ErrnoException | null): number {
  if (failure === null) return earned;
  if (failure.code === 'EPIPE') return earned !== EXIT.ok ? earned : EXIT.pipe;
  return EXIT.error;
}
