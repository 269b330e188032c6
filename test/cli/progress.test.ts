import { describe, expect, it } from '@jest/globals';
import { EventEmitter } from 'node:events';
import { guardStream, type CliIo, type RawStream } from '../../src/cli/io.js';
import { createProgress, isSpinnerWanted } from '../../src/cli/progress.js';

/**
 * The spinner of a batch run on a terminal. Standard error reaches the command guarded (its write errors recorded,
 * never thrown); the spinner still needs the terminal's cursor controls, which the guarded stream does not have.
 */

/** A terminal as Node's tty.WriteStream presents it: writes, a size, and cursor controls. */
function fakeTerminal(): RawStream & { written: string[]; controls: string[] } {
  const emitter = new EventEmitter();
  const written: string[] = [];
  const controls: string[] = [];
  const control =
    (name: string) =>
    (..._args: unknown[]): boolean => {
      controls.push(name);
      return true;
    };
  return Object.assign(emitter, {
    written,
    controls,
    isTTY: true,
    columns: 80,
    rows: 24,
    write(chunk: string | Uint8Array): boolean {
      written.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      return true;
    },
    cursorTo: control('cursorTo'),
    clearLine: control('clearLine'),
    moveCursor: control('moveCursor'),
  });
}

describe('the progress spinner', () => {
  it('runs and clears on a guarded terminal stderr (the stream swc really hands it)', async () => {
    const terminal = fakeTerminal();
    const stderr = guardStream(terminal);
    const io = { stdout: guardStream(fakeTerminal()), stderr, env: {}, cwd: '/' } as unknown as CliIo;
    expect(isSpinnerWanted(io, false)).toBe(true);
    const progress = await createProgress(io, true);
    progress.update(1, 3, 'a.jsonl');
    progress.update(2, 3, 'b.jsonl');
    progress.stop();
    expect(terminal.written.join('')).toContain('files');
    // Stopping clears the spinner's line through the terminal's own controls.
    expect(terminal.controls).toContain('cursorTo');
  });

  it('is not wanted when stderr is no terminal, in CI, or with --quiet', () => {
    const pipe = {
      stdout: guardStream(fakeTerminal()),
      stderr: { write: () => true },
      env: {},
      cwd: '/',
    } as unknown as CliIo;
    expect(isSpinnerWanted(pipe, false)).toBe(false);
    const ci = { ...pipe, stderr: guardStream(fakeTerminal()), env: { CI: 'true' } } as unknown as CliIo;
    expect(isSpinnerWanted(ci, false)).toBe(false);
    expect(isSpinnerWanted({ ...ci, env: {} } as unknown as CliIo, true)).toBe(false);
  });
});
