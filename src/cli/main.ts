import { realIo } from './io.js';
import { run } from './program.js';

// The one place that sets the exit code; output is flushed before Node exits on its own.
process.exitCode = await run(process.argv.slice(2), realIo);
