/**
 * Summaries from a command the user names (`llm -m gpt-4o-mini -s "$SWC_SUMMARY_INSTRUCTION"`, a script, a local
 * model runner): run through `/bin/sh -c`, the user message on stdin, the instruction in SWC_SUMMARY_INSTRUCTION;
 * its trimmed stdout is the summary. A non-zero exit, a signal, a timeout, too much output or an empty answer is a
 * SummaryCallError naming the first line of stderr. The command runs in a process group of its own, so a timeout
 * stops what it started too, and a run that ends (or is interrupted) leaves none behind.
 */
import { spawn, type ChildProcess, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { SummaryCallError, UsageError } from '../../errors.js';
import type { Summarizer } from './types.js';

export interface CommandOptions {
  /** Shell text, run by `/bin/sh -c`. */
  readonly command: string;
  /** Each call's limit. Default 300 s: local models can be slow, and a command has no retries of its own. */
  readonly timeoutMs?: number;
  /** The command's environment (default: this process's), SWC_SUMMARY_INSTRUCTION added. */
  readonly env?: NodeJS.ProcessEnv;
  /** The shell; `/bin/sh` unless a test says otherwise. */
  readonly shell?: string;
}

/** The environment variable that holds the instruction (Haystack's system message). */
export const INSTRUCTION_VARIABLE = 'SWC_SUMMARY_INSTRUCTION';
export const DEFAULT_COMMAND_TIMEOUT_MS = 300_000;
/** More output than this is not a summary: the command is stopped and the call fails. */
export const MAX_COMMAND_OUTPUT_BYTES = 8 * 1024 * 1024;
/** Stderr kept for the reason (only its first line is quoted). */
const MAX_STDERR_BYTES = 64 * 1024;

/** Process groups of commands still running, stopped if this process exits first. */
const running = new Set<ChildProcess>();
let exitHookInstalled = false;

/** Sends a signal to the command's whole group (it was spawned detached, so its pid is the group's id). */
function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // The group is gone already.
  }
}

/** The signals that end swc (those the CLI cleans up after, src/io/files.ts). */
const ENDING_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGUSR2'] as const;

/** Stops every command still running (their groups), at once. */
function stopAll(): void {
  for (const child of running) signalGroup(child, 'SIGKILL');
}

/**
 * Stops the commands' groups when this process ends: on exit, and on a signal, which never reaches them otherwise
 * (a group of their own is outside the terminal's foreground group). The signal hook must not change how the process
 * ends, so it runs first and once: when other handlers follow (the CLI's clean-up, which re-raises the signal when
 * its writes have stopped), they decide; when there is none, it re-raises the signal itself and the default action
 * ends the process. (Running after the clean-up instead would catch the signal it re-raises, and swallow it.)
 */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', stopAll);
  for (const signal of ENDING_SIGNALS) {
    process.prependOnceListener(signal, () => {
      stopAll();
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    });
  }
}

/** The first non-empty line of stderr, cut short, for the reason. */
function firstLine(stderr: string): string | undefined {
  const line = stderr.split(/\r?\n/).find((l) => l.trim() !== '');
  if (line === undefined) return undefined;
  const trimmed = line.trim();
  return trimmed.length > 200 ? `${trimmed.slice(0, 200)}…` : trimmed;
}

/**
 * A Summarizer that runs a command for each call.
 * @param options the command text, its time limit and environment
 * @returns the summarizer; a failed call throws SummaryCallError (the reason never quotes the command, which may hold secrets)
 * @throws UsageError at once for an empty command or a limit that is not a positive number
 */
export function createCommandSummarizer(options: CommandOptions): Summarizer {
  if (options.command.trim() === '') throw new UsageError('the summarize command is empty');
  const timeoutMs = options.timeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
  if (!(Number.isFinite(timeoutMs) && timeoutMs > 0))
    throw new UsageError(
      `the summarize command timeout must be a positive number of milliseconds, not ${String(timeoutMs)}`,
    );
  const shell = options.shell ?? '/bin/sh';
  installExitHook();

  return ({ system, user }) =>
    new Promise((resolve, reject) => {
      let child: ChildProcessWithoutNullStreams;
      try {
        child = spawn(shell, ['-c', options.command], {
          env: { ...(options.env ?? process.env), [INSTRUCTION_VARIABLE]: system },
          stdio: ['pipe', 'pipe', 'pipe'],
          detached: true,
        });
      } catch (error) {
        // An environment cannot hold a NUL character: spawn refuses before anything runs.
        reject(new SummaryCallError(`summarize command could not start: ${(error as Error).message}`));
        return;
      }
      running.add(child);
      const out: Buffer[] = [];
      let outBytes = 0;
      const err: Buffer[] = [];
      let errBytes = 0;
      let stopped: string | undefined;
      let settled = false;

      const stop = (why: string): void => {
        if (stopped !== undefined) return;
        stopped = why;
        signalGroup(child, 'SIGKILL');
      };
      const timer = setTimeout(() => stop(`gave no answer within ${timeoutMs} ms`), timeoutMs);
      const finish = (error: SummaryCallError | undefined, text?: string): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        running.delete(child);
        // Whatever the command left running in its group (a background job holding nothing we wait for) goes too.
        signalGroup(child, 'SIGKILL');
        if (error !== undefined) reject(error);
        else resolve({ text: text as string });
      };
      const failure = (what: string): SummaryCallError => {
        const said = firstLine(Buffer.concat(err).toString('utf8'));
        return new SummaryCallError(`summarize command ${what}${said !== undefined ? `: ${said}` : ''}`);
      };

      child.stdout.on('data', (chunk: Buffer) => {
        outBytes += chunk.length;
        if (outBytes > MAX_COMMAND_OUTPUT_BYTES) return stop(`wrote more than ${MAX_COMMAND_OUTPUT_BYTES} bytes`);
        out.push(chunk);
      });
      child.stderr.on('data', (chunk: Buffer) => {
        if (errBytes < MAX_STDERR_BYTES) err.push(chunk);
        errBytes += chunk.length;
      });
      child.on('error', (error) => finish(new SummaryCallError(`summarize command could not start: ${error.message}`)));
      // The shell is done: what it left running in its group would only hold stdout open, so it goes now.
      child.on('exit', () => signalGroup(child, 'SIGKILL'));
      child.on('close', (code, signal) => {
        if (stopped !== undefined) return finish(failure(stopped));
        if (signal !== null) return finish(failure(`was stopped by ${signal}`));
        if (code !== 0) return finish(failure(`exited with status ${String(code)}`));
        const text = Buffer.concat(out).toString('utf8').trim();
        if (text === '') return finish(failure('wrote no summary'));
        finish(undefined, text);
      });
      // A command that does not read its input closes the pipe: EPIPE then says nothing about the answer.
      child.stdin.on('error', () => undefined);
      child.stdin.end(user);
    });
}
