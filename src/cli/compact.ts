import { promises as fs } from 'node:fs';
import path from 'node:path';
import { UsageError } from '../errors.js';
import type { CliIo } from './io.js';
import { isStreamRun, type CompactSettings } from './settings.js';
import { runStream } from './stream.js';

/**
 * Runs `swc compact` for validated settings.
 * @returns the exit code: 0 done, 1 when --check found files to compact, 2 when any input could not be read,
 *   parsed or written
 */
export async function runCompact(
  settings: CompactSettings,
  io: CliIo,
  report: (line: string) => void,
): Promise<number> {
  const only = settings.inputs[0] as string;
  // Batch machinery (fast-glob, ora, worker threads) loads only when needed: one file starts without paying for it.
  if (isStreamRun(settings)) {
    const stat = only === '-' ? null : await fs.stat(path.resolve(io.cwd, only)).catch(() => null);
    // A name that exists is a file, whatever its characters; only a missing one is looked at as a pattern.
    if (only !== '-' && stat === null) {
      const { isPattern } = await import('../io/expand.js');
      if (isPattern(only))
        throw new UsageError(
          `${JSON.stringify(only)} is a pattern: add --out-dir <dir>, --in-place, --check or --dry-run to compact the files it matches`,
        );
    }
    if (stat?.isDirectory())
      throw new UsageError(
        `${only} is a directory: add --out-dir <dir>, --in-place, --check or --dry-run to compact the files in it`,
      );
    return runStream(settings, io, report);
  }
  const { runBatch } = await import('./batch.js');
  return runBatch(settings, io, report);
}
