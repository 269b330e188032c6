/**
 * Inputs that would never end or would not fit: a device is refused by name, a pipe or standard input stops at the
 * stream limit, and a whole-JSON file over the JSON limit is refused by its size before it is read.
 */
import { describe, expect, it } from '@jest/globals';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, writeFileSync, writeSync, ftruncateSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import {
  isLineSource,
  JSON_LIMIT,
  readSourceFile,
  readStreamBounded,
  sourceFromBytes,
  type ReadLimits,
} from '../../src/io/lines.js';
import { tempDir } from '../helpers/cli.js';

const line = (role: string, content: string): string => JSON.stringify({ role, content });
const jsonlOf = (count: number): string =>
  Array.from({ length: count }, (_, i) => line(i % 2 === 0 ? 'user' : 'assistant', `message ${i}`)).join('\n') + '\n';
const jsonOf = (count: number): string => `[\n${jsonlOf(count).trimEnd().split('\n').join(',\n')}\n]\n`;

function tempFile(name: string, content: string): string {
  const file = path.join(tempDir(), name);
  writeFileSync(file, content);
  return file;
}

/** The error a function throws, as its message. */
function errorOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  return 'no error';
}

const REASON =
  'a JSON file is read as one text, and a JavaScript string holds about 512 MiB at most; a JSONL file has no such limit';

/** Limits lowered so that small inputs pass them. */
const small = (limits: Partial<ReadLimits>): ReadLimits => ({ json: JSON_LIMIT, stream: 512 << 20, ...limits });

/** A named pipe and a shell that writes `command`'s output into it (started before the pipe is opened to read). */
function fifoFedBy(command: string): { fifo: string; writer: ChildProcess; done: Promise<void> } {
  const fifo = path.join(tempDir(), 'pipe');
  expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
  const writer = spawn('sh', ['-c', `${command} > "${fifo}"`], { stdio: 'ignore' });
  // The writer may end with a broken pipe once the reader stops: only its end matters.
  const done = new Promise<void>((resolve) => writer.on('close', () => resolve()));
  return { fifo, writer, done };
}

describe('a device named as an input', () => {
  it('is refused before it is read, with one line', () => {
    expect(errorOf(() => readSourceFile('/dev/null', '/dev/null'))).toBe(
      '/dev/null: is a device, not a transcript file',
    );
  });
});

describe('a FIFO named as an input', () => {
  it('is read whole when it brings no more than the stream limit', async () => {
    const content = jsonlOf(200);
    const { fifo, done } = fifoFedBy(`cat "${tempFile('content', content)}"`);
    const source = readSourceFile(fifo, 'pipe', undefined, undefined, small({ stream: Buffer.byteLength(content) }));
    await done;
    expect(isLineSource(source)).toBe(true);
    expect(source.text).toBe(content);
  }, 20_000);

  it('stops with one line as soon as it brings more than the stream limit', async () => {
    // Valid JSONL lines, many more than the limit: only the size can make it fail.
    const { fifo, writer, done } = fifoFedBy(`yes '${line('user', 'hello')}' | head -c 8000000`);
    const error = errorOf(() => readSourceFile(fifo, 'pipe', undefined, undefined, small({ stream: 1 << 20 })));
    writer.kill();
    await done;
    expect(error).toBe(
      'pipe: the input is too large (more than 1 MiB from a pipe or standard input, which is held in memory whole; that is the limit)',
    );
  }, 20_000);

  it('is refused past the JSON limit when it holds whole JSON', async () => {
    const content = jsonOf(100);
    const { fifo, done } = fifoFedBy(`cat "${tempFile('content', content)}"`);
    const error = errorOf(() => readSourceFile(fifo, 'pipe.json', undefined, undefined, small({ json: 1024 })));
    await done;
    expect(error).toMatch(
      /^pipe\.json: is \d+ KiB; whole JSON files over 1 KiB are refused \(a JSON file is read as one text, and a JavaScript string holds about 512 MiB at most; a JSONL file has no such limit\)$/,
    );
  }, 20_000);
});

describe('standard input read with readStreamBounded', () => {
  it('is read whole when it brings no more than the limit', async () => {
    const chunks = [Buffer.from('[{"role":"user",'), '"content":"hi"}]\n'];
    expect((await readStreamBounded(Readable.from(chunks), '<stdin>', 33)).toString()).toBe(
      '[{"role":"user","content":"hi"}]\n',
    );
  });

  it('stops as soon as the stream passes the limit, without reading the rest', async () => {
    let pulled = 0;
    function* longer(): Generator<Buffer> {
      // Sixteen times the limit: a reader without a limit takes it all and does not fail.
      for (let i = 0; i < 256; i++) {
        pulled++;
        yield Buffer.alloc(64 << 10, 0x20);
      }
    }
    const outcome = await readStreamBounded(Readable.from(longer()), '<stdin>', 1 << 20).then(
      (bytes) => `${bytes.length} bytes read`,
      (error: unknown) => (error instanceof Error ? error.message : String(error)),
    );
    expect(outcome).toBe(
      '<stdin>: the input is too large (more than 1 MiB from a pipe or standard input, which is held in memory whole; that is the limit)',
    );
    // 17 chunks pass the limit; Readable.from may have pulled a few ahead.
    expect(pulled).toBeLessThan(40);
  });
});

/** A sparse file of `size` bytes that starts with `[`: the size of a big JSON file without writing one. */
function sparseJson(size: number): string {
  const file = path.join(tempDir(), 'big.json');
  const fd = openSync(file, 'w');
  writeSync(fd, '[');
  ftruncateSync(fd, size);
  closeSync(fd);
  return file;
}

describe('a whole-JSON file past 64 MiB', () => {
  it('is read up to 512 MiB, the longest text a JavaScript string holds', () => {
    // One byte past 64 MiB, sparse: no size check refuses it, so it is read and decoded, and only then refused for
    // what it holds (the NUL bytes of its hole), at the first of them.
    expect(errorOf(() => readSourceFile(sparseJson((64 << 20) + 1), 'big.json'))).toBe(
      'big.json:1:2: NUL byte in the file (is it binary?)',
    );
    expect(JSON_LIMIT).toBe(512 << 20);
  });
});

describe('a whole-JSON file over the JSON limit', () => {
  it('is refused by its size with one line that names the limit and suggests JSONL', () => {
    // Sparse: the size of a file over the limit without writing it (and nothing past its first MiB is read).
    expect(errorOf(() => readSourceFile(sparseJson(JSON_LIMIT + 1), 'big.json'))).toBe(
      `big.json: is 513 MiB; whole JSON files over 512 MiB are refused (${REASON})`,
    );
  });

  it('is refused over a limit set lower, with the same one line naming both sizes', () => {
    const content = jsonOf(100);
    const size = Buffer.byteLength(content);
    const error = errorOf(() =>
      readSourceFile(tempFile('chat.json', content), 'chat.json', undefined, undefined, small({ json: size - 1 })),
    );
    expect(error).toBe(
      `chat.json: is ${Math.ceil(size / 1024)} KiB; whole JSON files over ${Math.ceil((size - 1) / 1024)} KiB are refused (${REASON})`,
    );
    expect(error).not.toContain('\n');
  });

  it('is refused without an extension too, once its beginning shows JSON', () => {
    const content = jsonOf(100);
    const limits = small({ json: Buffer.byteLength(content) - 1 });
    expect(
      errorOf(() => readSourceFile(tempFile('session', content), 'session', undefined, undefined, limits)),
    ).toMatch(/^session: is \d+ KiB; whole JSON files over/);
    // Also when it is bigger than the size up to which files are held.
    expect(errorOf(() => readSourceFile(tempFile('session', content), 'session', 0, undefined, limits))).toMatch(
      /^session: is \d+ KiB; whole JSON files over/,
    );
  });

  it('is read at exactly the limit', () => {
    const content = jsonOf(100);
    const source = readSourceFile(
      tempFile('chat.json', content),
      'chat.json',
      undefined,
      undefined,
      small({ json: Buffer.byteLength(content) }),
    );
    expect(source.text).toBe(content);
  });

  it('does not limit JSONL of the same size, with or without an extension', () => {
    const content = jsonlOf(200);
    const limits = small({ json: 1024 });
    for (const name of ['chat.jsonl', 'session']) {
      for (const holdUpTo of [undefined, 0]) {
        const source = readSourceFile(tempFile(name, content), name, holdUpTo, undefined, limits);
        expect(isLineSource(source)).toBe(true);
        expect(source.text).toBe(content);
      }
    }
    expect(isLineSource(sourceFromBytes(Buffer.from(content), '<stdin>', 1024))).toBe(true);
  });

  it('is refused from standard input as from a file', () => {
    const content = Buffer.from(jsonOf(100));
    expect(errorOf(() => sourceFromBytes(content, '<stdin>', 1024))).toMatch(
      /^<stdin>: is \d+ KiB; whole JSON files over 1 KiB are refused/,
    );
    expect(sourceFromBytes(content, '<stdin>', content.length).text).toBe(content.toString());
  });
});
