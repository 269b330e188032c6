import { Readable } from 'node:stream';
import type { CliIo, OutStream } from '../../src/cli/io.js';
import { run } from '../../src/cli/program.js';
import type { Summarizer } from '../../src/core/summarize.js';

/** What an in-process run printed and returned. */
export interface InProcessRun {
  status: number;
  stdout: string;
  stderr: string;
}

/** An output stream that keeps what is written to it. */
function memoryStream(): OutStream & { text(): string } {
  const chunks: string[] = [];
  return {
    write(chunk) {
      chunks.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      return true;
    },
    text: () => chunks.join(''),
  };
}

/**
 * Runs the swc command line in this process with an in-memory io and NO_COLOR, as `run(argv, io)` is called by the
 * binary: the way most CLI tests should run it.
 */
export async function runSwc(
  argv: readonly string[],
  options: { cwd: string; stdin?: string | Buffer; env?: Record<string, string>; summarizer?: Summarizer },
): Promise<InProcessRun> {
  const stdout = memoryStream();
  const stderr = memoryStream();
  const io: CliIo = {
    stdout,
    stderr,
    stdin: Readable.from(options.stdin === undefined ? [] : [Buffer.from(options.stdin)]),
    env: { NO_COLOR: '1', ...options.env },
    cwd: options.cwd,
    ...(options.summarizer !== undefined ? { summarizer: options.summarizer } : {}),
  };
  const status = await run(argv, io);
  return { status, stdout: stdout.text(), stderr: stderr.text() };
}
