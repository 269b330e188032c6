/** What a command may touch of the outside world, passed in so tests can run commands in-process. */
export interface OutStream {
  write(chunk: string | Uint8Array): boolean;
  readonly isTTY?: boolean;
  readonly columns?: number;
  once?(event: 'drain', listener: () => void): unknown;
}

export interface CliIo {
  readonly stdout: OutStream;
  readonly stderr: OutStream;
  readonly stdin: NodeJS.ReadableStream;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
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
