/** Helpers for tests of what swc does with the processes and calls it starts (the model layer). */
import { expect } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { SummaryCallError } from '../../src/errors.js';

/** Whether a process still runs: signal 0 checks without sending; on Linux a zombie (killed, not yet reaped) counts as gone. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true;
  }
}

/** The SummaryCallError a call throws (fails the test when it succeeds or throws anything else). */
export async function failureOf(call: Promise<unknown>): Promise<SummaryCallError> {
  try {
    await call;
  } catch (error) {
    expect(error).toBeInstanceOf(SummaryCallError);
    return error as SummaryCallError;
  }
  throw new Error('the call succeeded');
}
