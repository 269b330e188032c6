import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InputError } from '../errors.js';
import { describeFsError, spoolPrefix } from './files.js';

/** Temporary files of decompressed inputs not released yet, removed when the process exits. */
const spools = new Set<string>();

let spoolCleanup = false;

/** Where a decompressed result goes: memory up to a size, then a temporary file. */
export class Spool {
  private readonly pieces: Uint8Array[] = [];
  private held = 0;
  private dir: string | null = null;
  private fd: number | null = null;

  constructor(
    private readonly file: string,
    private readonly holdUpTo: number,
  ) {}

  write(piece: Uint8Array): void {
    if (this.dir === null && this.held + piece.length <= this.holdUpTo) {
      this.pieces.push(piece);
      this.held += piece.length;
      return;
    }
    try {
      if (this.fd === null) this.open();
      for (const p of this.pieces.splice(0)) this.writeAll(p);
      this.writeAll(piece);
    } catch (error) {
      if (error instanceof InputError) throw error;
      throw new InputError(
        `cannot decompress into a temporary file in ${tmpdir()}: ${describeFsError(error)} (set TMPDIR to a folder with room)`,
        this.file,
      );
    }
  }

  /** Ends the writing. @returns the temporary file, or null when the result is held in memory */
  finish(): string | null {
    if (this.fd !== null) {
      closeSync(this.fd);
      this.fd = null;
    }
    return this.dir === null ? null : join(this.dir, 'decompressed');
  }

  /** The result held in memory. */
  bytes(): Buffer {
    return Buffer.concat(this.pieces, this.held);
  }

  /** Removes the temporary file, if any. */
  discard(): void {
    this.pieces.length = 0;
    if (this.fd !== null) {
      closeSync(this.fd);
      this.fd = null;
    }
    if (this.dir !== null) {
      rmSync(this.dir, { recursive: true, force: true });
      spools.delete(this.dir);
      this.dir = null;
    }
  }

  private open(): void {
    if (!spoolCleanup) {
      spoolCleanup = true;
      process.on('exit', () => {
        for (const dir of spools) rmSync(dir, { recursive: true, force: true });
      });
    }
    // A new folder of its own (mode 0700), and the file created in it exclusively: nothing there can be a link.
    this.dir = mkdtempSync(join(tmpdir(), spoolPrefix()));
    spools.add(this.dir);
    this.fd = openSync(join(this.dir, 'decompressed'), 'wx', 0o600);
  }

  private writeAll(piece: Uint8Array): void {
    let done = 0;
    while (done < piece.length) done += writeSync(this.fd as number, piece, done, piece.length - done);
  }
}
