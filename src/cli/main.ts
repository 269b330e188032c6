import { createRequire } from 'node:module';
import { EXIT } from './exit-codes.js';
import { whyCannotStart } from './lazy.js';

const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-v')) {
  // Answered before the command line's modules load: for `swc --version`, loading them is most of the cost.
  const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };
  process.stdout.write(`${version}\n`);
} else {
  try {
    const [{ exitCodeAfter, guardStream, realIo }, { run }, { cleanUpOnInterrupt, describeFsError }] =
      await Promise.all([import('./io.js'), import('./program.js'), import('../io/files.js')]);
    // An interrupt (Ctrl-C, a CI job cancelled) removes temporary files and decompressed spools before the process goes.
    cleanUpOnInterrupt();
    // A reader that goes away (`swc … | head`) or a full disk never crashes the run nor passes for a success; an
    // unwritable stderr changes nothing.
    const stdout = guardStream(process.stdout);
    const stderr = guardStream(process.stderr);
    const earned = await run(argv, { ...realIo, stdout, stderr });
    // The one place that sets the exit code; output is flushed before Node exits on its own.
    process.exitCode = exitCodeAfter(earned, stdout.failure);
    if (stdout.failure !== null && stdout.failure.code !== 'EPIPE')
      stderr.write(`swc: cannot write to standard output: ${describeFsError(stdout.failure)}\n`);
  } catch (error) {
    // Not even the command could load (a low open-file or memory limit): one line, not a stack.
    const why = whyCannotStart(error);
    if (why === undefined) throw error;
    process.stderr.write(`swc: cannot start: ${why}\n`);
    process.exitCode = EXIT.error;
  }
}
