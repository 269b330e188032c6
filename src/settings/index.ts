// One module that validates and defaults every compaction setting, for the command line and the library alike.
export * from './defaults.js';
export * from './rules.js';
export { CLI, CONFIG, LIBRARY, type Surface } from './surface.js';
