import { createRequire } from 'node:module';

const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-v')) {
  // Answered before the command line's modules load: for `swc --version`, loading them is most of the cost.
  const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };
  process.stdout.write(`${version}\n`);
} else {
  // A reader that goes away (`swc … | head`) is not an error: stop quietly, as other Unix tools do.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
  const [{ realIo }, { run }] = await Promise.all([import('./io.js'), import('./program.js')]);
  // The one place that sets the exit code; output is flushed before Node exits on its own.
  process.exitCode = await run(argv, realIo);
}
