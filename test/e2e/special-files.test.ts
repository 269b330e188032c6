import { describe, expect, it } from '@jest/globals';
import { spawn, spawnSync } from 'node:child_process';
import { lstatSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, tempDir } from '../helpers/cli.js';
import { runSwc } from '../helpers/run-in-process.js';

const SAMPLE = path.join(ROOT, 'fixtures/sample.jsonl');

describe('swc compact -o into a special file', () => {
  it('writes into a FIFO instead of replacing it with a regular file', async () => {
    const dir = tempDir();
    const fifo = path.join(dir, 'pipe');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const out = path.join(dir, 'received.jsonl');
    // A reader on the other end, as `-o >(gzip > x)` or a named pipe would have.
    const reader = spawn('sh', ['-c', `cat "${fifo}" > "${out}"`], { stdio: 'ignore' });
    const done = new Promise<number | null>((resolve) => reader.on('close', resolve));
    const writer = spawn(
      process.execPath,
      [path.join(ROOT, 'bin/swc.js'), 'compact', SAMPLE, '-t', '2000', '-o', fifo, '-q'],
      { stdio: 'ignore' },
    );
    const written = new Promise<number | null>((resolve) => writer.on('close', resolve));
    expect(await written).toBe(0);
    expect(await done).toBe(0);
    expect(lstatSync(fifo).isFIFO()).toBe(true);
    expect(readFileSync(out, 'utf8')).toBe((await runSwc(['compact', SAMPLE, '-t', '2000'], { cwd: ROOT })).stdout);
  });
});
