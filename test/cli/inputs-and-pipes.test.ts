import { describe, expect, it } from '@jest/globals';
import { EventEmitter } from 'node:events';
import { existsSync, readdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { exitCodeAfter, guardStream, type RawStream } from '../../src/cli/io.js';
import { tempDir } from '../helpers/cli.js';
import { runSwc } from '../helpers/run-in-process.js';
import { sampleTree as tree } from '../helpers/trees.js';

/**
 * Inputs are unique real files found without following links into loops; a reader that goes away never turns a
 * failing run into a pass. (FIFOs and the binary with a broken output: test/e2e/inputs-and-pipes.test.ts.)
 */

const TARGET = ['-t', '200', '--tokenizer', 'approx'];

describe('finding the inputs', () => {
  it('does not follow directory links, so two links back to the folder end instead of walking forever', async () => {
    const dir = tree('in/a.jsonl');
    symlinkSync('.', path.join(dir, 'in/s1'));
    symlinkSync('.', path.join(dir, 'in/s2'));
    const r = await runSwc(['compact', 'in', '--check', ...TARGET], { cwd: dir });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('in/a.jsonl\n');
    expect(r.stderr).toContain('1 file scanned');
  });

  it('writes one copy through --out-dir when the input folder links to itself', async () => {
    const dir = tree('in/a.jsonl');
    symlinkSync('.', path.join(dir, 'in/self'));
    const r = await runSwc(['compact', 'in', '--out-dir', 'out', ...TARGET], { cwd: dir });
    expect(r.status).toBe(0);
    expect(readdirSync(path.join(dir, 'out'), { recursive: true })).toEqual(['a.jsonl']);
  });

  it('compacts a file and a link to it once, under the path given first', async () => {
    const dir = tree('in/a.jsonl');
    symlinkSync('a.jsonl', path.join(dir, 'in/link.jsonl'));
    const r = await runSwc(['compact', 'in/link.jsonl', 'in/a.jsonl', '--check', ...TARGET], { cwd: dir });
    expect(r.stdout).toBe('in/link.jsonl\n');
    expect(r.stderr).toContain('1 file scanned');
  });

  it('takes a path that exists as a file, whatever its characters (a backslash included)', async () => {
    const dir = tree('q\\*.jsonl');
    const r = await runSwc(['compact', 'q\\*.jsonl', '--check', ...TARGET], { cwd: dir });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('q\\*.jsonl\n');
  });

  it('never reads its own results back from an out-dir whose name holds a backslash', async () => {
    const dir = tree('in/a.jsonl');
    expect((await runSwc(['compact', 'in', '--out-dir', 'in/o\\ut', ...TARGET], { cwd: dir })).status).toBe(0);
    const again = await runSwc(['compact', 'in', '--out-dir', 'in/o\\ut', ...TARGET], { cwd: dir });
    expect(again.status).toBe(0);
    expect(again.stderr).toContain('1 file scanned');
    expect(existsSync(path.join(dir, 'in/o\\ut/o\\ut'))).toBe(false);
  });

  it('says a shard number past what it can count is too large', async () => {
    const r = await runSwc(
      ['compact', 'in', '--check', ...TARGET, '--shard', '99999999999999999998/99999999999999999999'],
      { cwd: tempDir() },
    );
    expect(r.status).toBe(2);
    expect(r.stderr).toBe('swc: error: --shard is too large: "99999999999999999998/99999999999999999999"\n');
  });
});

/** A stream like process.stdout whose writes can be made to fail. */
class FakeStream extends EventEmitter implements RawStream {
  written: string[] = [];
  full = false;
  write(chunk: string | Uint8Array): boolean {
    this.written.push(String(chunk));
    return !this.full;
  }
}

describe('standard output that fails', () => {
  it('drops writes after an error and lets a writer waiting for drain go on', () => {
    const raw = new FakeStream();
    const out = guardStream(raw);
    raw.full = true;
    expect(out.write('a')).toBe(false);
    let resumed = false;
    out.once?.('drain', () => {
      resumed = true;
    });
    raw.emit('error', Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    expect(resumed).toBe(true);
    expect(out.write('b')).toBe(true);
    expect(raw.written).toEqual(['a']);
    expect(out.failure?.code).toBe('EPIPE');
  });

  it('keeps the exit code a run earned when its reader hangs up, and never reports success', () => {
    const epipe = Object.assign(new Error('EPIPE'), { code: 'EPIPE' });
    expect(exitCodeAfter(1, epipe)).toBe(1);
    expect(exitCodeAfter(2, epipe)).toBe(2);
    expect(exitCodeAfter(0, epipe)).toBe(141);
    expect(exitCodeAfter(0, Object.assign(new Error('ENOSPC'), { code: 'ENOSPC' }))).toBe(2);
    expect(exitCodeAfter(1, null)).toBe(1);
  });
});
