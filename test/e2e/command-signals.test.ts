/**
 * A summarize command runs in a process group of its own, which a Ctrl-C or a CI job's SIGTERM to swc never reaches:
 * when swc is stopped by a signal, the commands it is waiting on are stopped too, and swc still ends by that signal
 * (alone, or with the CLI's clean-up of temporary files installed first). Runs the built modules (`npm run build`).
 */
import { describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT, tempDir } from '../helpers/cli.js';
import { isAlive } from '../helpers/processes.js';

const DIST = path.join(ROOT, 'dist');

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('a summarize command when swc is stopped by a signal', () => {
  it.each([
    ['SIGTERM', false],
    ['SIGINT', false],
    ['SIGTERM', true],
    ['SIGINT', true],
  ] as const)(
    'is stopped by %s, and swc ends by that signal (CLI clean-up installed first: %s)',
    async (signal, withCleanup) => {
      const dir = tempDir();
      const pidFile = path.join(dir, 'pid');
      const script = path.join(dir, 'run.mjs');
      writeFileSync(
        script,
        [
          withCleanup
            ? `const { cleanUpOnInterrupt } = await import(${JSON.stringify(pathToFileURL(path.join(DIST, 'io/files.js')).href)}); cleanUpOnInterrupt();`
            : '',
          `const { createCommandSummarizer } = await import(${JSON.stringify(pathToFileURL(path.join(DIST, 'io/model/command.js')).href)});`,
          `const summarize = createCommandSummarizer({ command: ${JSON.stringify(`sleep 60 & echo $! > '${pidFile}'; wait`)} });`,
          `await summarize({ system: 's', user: 'u' });`,
        ].join('\n'),
      );
      const child = spawn(process.execPath, [script], { stdio: 'ignore' });
      const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, sig) => resolve(sig)));
      // The signal is sent once the command has started its job (the pid file is written), not after a guessed delay.
      for (let i = 0; i < 2000 && !(existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== ''); i++)
        await pause(5);
      const pid = Number(readFileSync(pidFile, 'utf8'));
      expect(isAlive(pid)).toBe(true);
      child.kill(signal);
      expect(await exited).toBe(signal);
      for (let i = 0; i < 200 && isAlive(pid); i++) await pause(10);
      expect(isAlive(pid)).toBe(false);
    },
    20_000,
  );
});
