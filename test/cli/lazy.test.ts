/** A module the command line loads at its point of use fails as start-up does (what a run loads: test/e2e/startup.test.ts). */
import { describe, expect, it } from '@jest/globals';
import { CannotStartError, loadLazily } from '../../src/cli/lazy.js';

describe('a module loaded at its point of use', () => {
  it('fails as start-up does when it cannot load for want of open files or memory', async () => {
    const fails = (code: string) => () => Promise.reject(Object.assign(new Error(`${code}: cannot open`), { code }));
    await expect(loadLazily(fails('EMFILE'))).rejects.toThrow(
      new CannotStartError('too many open files (raise the limit with ulimit -n)'),
    );
    await expect(loadLazily(fails('ENOMEM'))).rejects.toThrow('cannot start: out of memory');
    await expect(loadLazily(fails('EACCES'))).rejects.toThrow('cannot start: EACCES: cannot open');
  });

  it('keeps any other failure as it is (a bug keeps its stack)', async () => {
    const bug = new TypeError('x is not a function');
    await expect(loadLazily(() => Promise.reject(bug))).rejects.toBe(bug);
    await expect(loadLazily(() => Promise.resolve({ value: 1 }))).resolves.toEqual({ value: 1 });
  });
});
