import {
  COLOR_WHEN,
  CONFIG_FILE,
  ONE_RUN,
  on,
  PACKAGE_KEY,
  PRICE_MODEL_NAMES,
  READING,
  type OptionRow,
} from './option-row.js';

/** The options table's options of one run: where results go, what is shown, how the run goes; flags only. */
export const RUN_ROWS: readonly OptionRow[] = [
  {
    name: 'output',
    flags: '-o, --output',
    argument: '<file>',
    value: 'file',
    config: ONE_RUN('--output'),
    on: on(['compact', 'restore'], { help: 'write the result to this file, - for stdout (default: -)' }),
  },
  {
    name: 'inPlace',
    flags: '--in-place',
    value: 'boolean',
    config: ONE_RUN('--in-place'),
    on: {
      compact: { help: 'rewrite each input file atomically (only when it changes)' },
      restore: { help: 'rewrite the input atomically (only when something is restored), compressed as it was' },
    },
  },
  {
    name: 'backupDir',
    flags: '--backup-dir',
    argument: '<dir>',
    value: 'folder',
    config: ONE_RUN('--backup-dir'),
    on: {
      compact: {
        help: 'with --in-place: copy each original there (at its path under the base) before replacing it; an existing backup is never overwritten',
      },
    },
  },
  {
    name: 'outDir',
    flags: '--out-dir',
    argument: '<dir>',
    value: 'folder',
    config: ONE_RUN('--out-dir'),
    on: {
      compact: {
        help: 'write every result (compacted or copied unchanged) under this directory, mirroring the inputs',
      },
    },
  },
  {
    name: 'force',
    flags: '--force',
    value: 'boolean',
    config: ONE_RUN('--force'),
    on: { compact: { help: "with --out-dir: replace files there that hold something other than this run's result" } },
  },
  {
    name: 'base',
    flags: '--base',
    argument: '<dir>',
    value: 'folder',
    config: ONE_RUN('--base'),
    on: {
      compact: { help: 'the directory paths are mirrored and sharded from (default: the common base of the inputs)' },
    },
  },
  {
    name: 'check',
    flags: '--check',
    value: 'boolean',
    config: ONE_RUN('--check'),
    on: { compact: { help: 'write nothing; list the files that would be compacted and exit 1 if there are any' } },
  },
  {
    name: 'failOverTarget',
    flags: '--fail-over-target',
    value: 'boolean',
    config: true,
    on: {
      compact: {
        help: 'exit 1 when a file stays over its target after compaction, naming each and why (for CI budgets)',
      },
    },
  },
  {
    name: 'dryRun',
    flags: '--dry-run',
    value: 'boolean',
    config: ONE_RUN('--dry-run'),
    on: {
      compact: {
        help: 'write nothing; print a diff of what would be removed, per file that would change or misses its target',
      },
      replay: {
        help: 'with summarize: call no model, assume summaries of --summary-tokens (also the default without a model)',
      },
    },
  },
  {
    name: 'stat',
    flags: '--stat',
    value: 'boolean',
    config: ONE_RUN('--stat'),
    on: {
      compact: {
        help: 'with --dry-run: one line per file (tokens before → after, messages removed, target met) and a total, instead of the diffs',
      },
    },
  },
  {
    name: 'verbose',
    flags: '--verbose',
    value: 'boolean',
    config: ONE_RUN('--verbose'),
    on: { compact: { help: 'with --dry-run: show files that would not change too' } },
  },
  {
    name: 'json',
    flags: '--json',
    value: 'boolean',
    config: ONE_RUN('--json'),
    on: {
      compact: {
        help: 'print the JSON plan (one file) or report (several files) on stdout, instead of the diff or the list of paths; on stderr when stdout carries the transcript',
      },
      inspect: {
        help: "print the same as one JSON document: the file's (one named file) or the run's, with every file and the totals",
      },
      replay: { help: 'print the replay as JSON (one run: its document; several: every run and the totals)' },
    },
  },
  {
    name: 'jsonLines',
    flags: '--json-lines',
    value: 'boolean',
    on: { inspect: { help: 'print one JSON document per file, one a line, as each file is done' } },
  },
  {
    name: 'report',
    flags: '--report',
    argument: '<file>',
    value: 'file',
    config: ONE_RUN('--report'),
    on: {
      compact: { help: 'write that JSON report to a file instead' },
      replay: {
        help: 'write a self-contained HTML page of the replay: context per call, compactions, cost, what was lost',
        argument: '<file.html>',
      },
    },
  },
  {
    name: 'ignore',
    flags: '--ignore',
    argument: '<pattern>',
    value: 'text',
    config: 'give --ignore on the command line (its patterns are matched from the working directory)',
    on: on(READING, { help: 'leave out files matching this glob pattern (repeatable)', repeat: 'list' }),
  },
  {
    name: 'jobs',
    flags: '-j, --jobs',
    argument: '<n>',
    value: 'whole',
    min: 1,
    config: ONE_RUN('--jobs'),
    on: { compact: { help: 'worker threads for many files (default: the number of CPUs)' } },
  },
  {
    name: 'shard',
    flags: '--shard',
    argument: '<i/n>',
    value: 'text',
    config: ONE_RUN('--shard'),
    on: {
      compact: { help: 'process only shard i of n (by a hash of each path), to split an archive across CI jobs' },
    },
  },
  {
    name: 'prices',
    flags: '--prices',
    argument: '<model|file>',
    value: 'file',
    words: PRICE_MODEL_NAMES,
    on: {
      replay: {
        help: `the price model: ${PRICE_MODEL_NAMES.join(', ')} (default: ${PRICE_MODEL_NAMES[0]}), or a JSON file of your own`,
      },
    },
  },
  {
    name: 'failOnOverflow',
    flags: '--fail-on-overflow',
    value: 'boolean',
    on: { replay: { help: 'exit 1 if a compacting policy sends more than the window in some call' } },
  },
  {
    name: 'changedOnly',
    flags: '--changed-only',
    value: 'boolean',
    on: {
      replay: {
        help: 'in the table, only the runs some policy changed (compacted, summarized, or overflowed); totals and --json keep all',
      },
    },
  },
  {
    name: 'maxLost',
    flags: '--max-lost',
    argument: '<n>',
    value: 'whole',
    on: {
      replay: { help: 'exit 1 if a compacting policy loses more than n identifiers that a later message names again' },
    },
  },
  {
    name: 'quiet',
    flags: '-q, --quiet',
    value: 'boolean',
    config: ONE_RUN('--quiet'),
    on: {
      compact: { help: 'print only errors and the closing total of several files; -qq: only errors', repeat: 'count' },
      inspect: {
        help: 'print only the errors found (one line each) and the total of several files; -qq: no total',
        repeat: 'count',
      },
      restore: { help: 'print nothing but errors', repeat: 'count' },
    },
  },
  {
    name: 'color',
    flags: '--color',
    argument: '<when>',
    negated: { flag: '--no-color', help: 'never use colour (--color never)' },
    value: 'choice',
    choices: () => COLOR_WHEN,
    config: ONE_RUN('--color'),
    on: on(READING, { help: 'when to colour the output (default: auto, only in a terminal)' }),
  },
  {
    name: 'config',
    flags: '--config',
    argument: '<file>',
    negated: { flag: '--no-config', help: 'read no settings file' },
    value: 'file',
    on: on(['compact', 'inspect'], {
      help: `read settings from this file (default: ${CONFIG_FILE}, or package.json's "${PACKAGE_KEY}", here or above)`,
    }),
  },
  {
    name: 'debug',
    flags: '--debug',
    value: 'boolean',
    config: ONE_RUN('--debug'),
    on: on(['compact', 'inspect', 'replay', 'restore'], { help: 'show stack traces for unexpected errors' }),
  },
];
