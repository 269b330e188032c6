import { Argument, Command, CommanderError, Option } from 'commander';
import { createRequire } from 'node:module';
import { isKnownError, UsageError } from '../errors.js';
import { formatNames, STRATEGIES } from '../pipeline/index.js';
import { TOKENIZERS } from '../tokens/index.js';
import { runCompact } from './compact.js';
import { blameConfig, CONFIG_FILE, loadConfig, PACKAGE_KEY, withConfig } from './config.js';
import {
  DEFAULT_COMPACT_AT,
  DEFAULT_COMPACT_TO,
  resolveSettings,
  type CompactFlags,
  type CompactSettings,
} from './settings.js';
import type { InspectFlags } from './inspect.js';
import type { ReplayFlags } from './replay.js';
import type { RestoreFlags } from './restore.js';
import { EXIT } from './exit-codes.js';
import { writeAll, type CliIo } from './io.js';
import { cannotStart, loadLazily } from './lazy.js';
import { COLOR_WHEN, countFlag, SHELLS, type Shell } from './options.js';

const require = createRequire(import.meta.url);
const { version } = require('../../package.json') as { version: string };

/**
 * The built-in price models' names (src/replay/prices.ts), for replay's help; written out so that no other command
 * loads the price models (test/replay/cli.test.ts compares them).
 */
export const PRICE_MODEL_NAMES = ['anthropic-sonnet', 'openai-gpt-4.1'] as const;

/** Commander's error text as one line: `error: unknown option '--x' (did you mean --y?)`. */
function oneLine(text: string): string {
  return text
    .trim()
    .replace(/\s*\n\(Did you mean (.*)\)$/s, ' (did you mean $1)')
    .replace(/\s*\n\s*/g, ' ');
}

/** inspect's modules (its views, reporters and colour) load only for `swc inspect`. */
function loadInspect(): Promise<typeof import('./inspect.js')> {
  return loadLazily(() => import('./inspect.js'));
}

/** replay's modules (the replay, its table) load only for `swc replay`. */
function loadReplay(): Promise<typeof import('./replay.js')> {
  return loadLazily(() => import('./replay.js'));
}

/** restore's module loads only for `swc restore`. */
function loadRestore(): Promise<typeof import('./restore.js')> {
  return loadLazily(() => import('./restore.js'));
}

/** A fraction as the help says it: `0.7` is `70%`. */
function percentOf(fraction: string): string {
  return `${Math.round(Number(fraction) * 1000) / 10}%`;
}

/** Examples closing each command's help: a command line and what it does. test/cli/help-examples runs every one. */
export const HELP_EXAMPLES: Readonly<
  Record<'compact' | 'inspect' | 'replay' | 'restore', readonly (readonly [string, string])[]>
> = {
  compact: [
    ['swc compact log.jsonl -t 8k -o small.jsonl', 'compact one file to 8,000 tokens, in the format it came in'],
    ['swc compact log.jsonl -t 8k --dry-run', 'show what would go and what it costs, writing nothing'],
    ['swc compact log.jsonl.gz -t 8k -o small.jsonl.gz', 'compressed in, compressed out'],
    [
      "swc compact 'archive/**/*.jsonl' -t 8k --in-place --backup-dir backup",
      'rewrite an archive, keeping each original',
    ],
    [
      'swc compact archive --context-window 128k --check',
      `exit 1 if some file has reached ${percentOf(DEFAULT_COMPACT_AT)} of the window`,
    ],
    [
      'swc compact log.jsonl -t 8k --strategy prune,window -o small.jsonl',
      'shrink old tool results first, then drop turns',
    ],
  ],
  inspect: [
    ['swc inspect log.jsonl', 'structure, tokens per turn and step, and problems'],
    ['swc inspect archive -q', 'one line per error and the total, nothing for files without one (exit 1 if any)'],
  ],
  replay: [
    [
      'swc replay log.jsonl --context-window 20k --strategy none --strategy window --strategy prune,window',
      'what each policy would have done to a recorded run: calls, compactions, cache, cost, what was lost',
    ],
    [
      "swc replay 'archive/**/*.jsonl' --context-window 20k --fail-on-overflow --max-lost 0",
      'exit 1 if a policy overflows the window or loses an identifier the agent needed again',
    ],
  ],
  restore: [
    ['swc restore small.jsonl --offload-dir store -o full.jsonl', 'put back what --strategy offload moved to store'],
  ],
};

/** The examples of a command as its help shows them. */
function examplesText(command: keyof typeof HELP_EXAMPLES): string {
  return `\nExamples:\n${HELP_EXAMPLES[command].map(([line, what]) => `  # ${what}\n  ${line}`).join('\n\n')}\n`;
}

/**
 * Runs the swc command line.
 * @param argv the arguments after `node swc`
 * @param io streams, environment and working directory
 * @returns the exit code (the caller sets process.exitCode; nothing here calls process.exit)
 */
export async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const state: RunState = { code: EXIT.ok, debug: argv.includes('--debug') };
  const err = (line: string): void => {
    io.stderr.write(`${line}\n`);
  };
  const program = new Command('swc')
    .description('Shrink AI-agent chat transcripts to a token budget with the sliding-window strategy.')
    .version(version, '-v, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({
      writeOut: (s) => void io.stdout.write(s),
      writeErr: (s) => void io.stderr.write(s),
      outputError: (s, write) => write(`swc: ${oneLine(s)}\n`),
    });
  addCompact(program, state, io, err);
  addInspect(program, state, io, err);
  addReplay(program, state, io, err);
  addRestore(program, state, io, err);
  addCompletion(program, io);
  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (error) {
    return failureCode(error, state.debug, err);
  }
  return state.code;
}

/** What a run's command sets: its exit code, and whether --debug was given. */
interface RunState {
  code: number;
  debug: boolean;
}

/** The exit code of a run that threw, its error printed as one line (a stack only with --debug for unknown ones). */
function failureCode(error: unknown, debug: boolean, err: (line: string) => void): number {
  if (error instanceof CommanderError) {
    // Commander has already printed its message (help and version exit with 0).
    return error.exitCode === 0 ? EXIT.ok : EXIT.error;
  }
  if (isKnownError(error)) {
    err(`swc: ${error instanceof UsageError ? 'error: ' : ''}${error.message}`);
    return EXIT.error;
  }
  const start = cannotStart(error);
  if (start !== null) {
    err(`swc: ${start.message}`);
    return EXIT.error;
  }
  err(`swc: unexpected error: ${error instanceof Error ? error.message : String(error)}`);
  if (debug && error instanceof Error && error.stack) err(error.stack);
  else err('Run again with --debug for the stack trace, and please report it.');
  return EXIT.error;
}

/** `swc compact`: its options in the order help lists them, and its action. */
function addCompact(program: Command, state: RunState, io: CliIo, err: (line: string) => void): void {
  const noteFlags = new Set<string>();
  const command = program
    .command('compact')
    .description('compact transcripts to a token target, writing them in the format they came in')
    .argument(
      '<inputs...>',
      "transcript files (JSON or JSONL), directories, quoted glob patterns ('archive/**/*.jsonl'), or - for standard input",
    );
  addCompactionOptions(command);
  addReadingOptions(command);
  addOutputOptions(command);
  command
    // --note and --no-note set one value, the last one winning; given together they are a mistake, not a choice.
    .on('option:note', () => noteFlags.add('--note'))
    .on('option:no-note', () => noteFlags.add('--no-note'))
    .addHelpText('after', examplesText('compact'))
    .action(async (inputs: string[], flags: CompactFlags, self: Command) => {
      state.debug = flags.debug === true;
      if (noteFlags.size > 1)
        throw new UsageError(
          '--note and --no-note cannot be used together: give a note template, or --no-note to remove silently',
        );
      const config = loadConfig(flags.config, io.cwd);
      const stream =
        inputs.length === 1 &&
        flags.inPlace !== true &&
        flags.outDir === undefined &&
        flags.check !== true &&
        flags.dryRun !== true;
      const merged = withConfig(flags, givenOn(self), config, { command: 'compact', stream });
      let settings: CompactSettings;
      try {
        settings = resolveSettings(inputs, merged.flags, config?.file ?? null);
      } catch (error) {
        throw blameConfig(error, config, merged.used);
      }
      state.code = await runCompact(settings, io, err);
    });
}

/** compact's options of the budget, the strategies and the note. */
function addCompactionOptions(command: Command): void {
  command
    .option('-t, --target <tokens>', 'the token budget to compact to (required, unless --context-window)')
    .option('--context-window <tokens>', 'compact by thresholds of this context window instead of a fixed --target')
    .option(
      '--compact-at <fraction>',
      `with --context-window: compact files whose size reaches this share of it (default: ${DEFAULT_COMPACT_AT})`,
    )
    .option(
      '--compact-to <fraction>',
      `with --context-window: compact them to this share of it (default: ${DEFAULT_COMPACT_TO})`,
    )
    .option('-k, --min-keep-steps <n>', 'newest steps of the current task always kept (default: 1)')
    .addOption(
      listOption(
        new Option(
          '--strategy <list>',
          "window (sliding window), prune (tool-result pruning), offload (results to files), summarize (a model's summary), or a comma-separated chain applied in order, e.g. prune,window (default: window)",
        ),
        STRATEGIES,
      ),
    )
    .option('--min-tokens <n>', 'with prune: only replace tool results of more than this many tokens (default: 200)')
    .option(
      '--offload-dir <dir>',
      'with offload: the store directory the offloaded results are written under (one folder per input file)',
    )
    .option('--offload-over <chars>', 'with offload: offload results longer than this many characters (default: 8,000)')
    .option(
      '--placeholder <template>',
      "with prune: the text left in place of a result; {tool_name} becomes the tool's name",
    )
    .option(
      '--summary-tokens <n>',
      'with summarize: about how long a summary comes out, for planning each round (default: 1,024)',
    )
    .option(
      '--summary-instruction <file>',
      "with summarize: the summary prompt's instruction, read from a file (default: swc's own, for agent transcripts)",
    )
    .option(
      '--base-url <url>',
      'with summarize: an OpenAI-compatible endpoint, POST {url}/chat/completions (default: $OPENAI_BASE_URL); the key comes from $OPENAI_API_KEY',
    )
    .option('--model <name>', 'with summarize: the model the endpoint writes summaries with')
    .option(
      '--summarize-command <cmd>',
      'with summarize: a shell command that writes a summary: the prompt on stdin, the instruction in $SWC_SUMMARY_INSTRUCTION, the summary on stdout',
    )
    .option('--concurrency <n>', 'with summarize: summary calls in flight at once across the files (default: 4)')
    .option(
      '--cache-dir <dir>',
      'with summarize: where summaries are cached (default: $XDG_CACHE_HOME/swc or ~/.cache/swc)',
    )
    .option('--no-cache', 'with summarize: neither read nor write the summary cache')
    .option(
      '--strict',
      'with summarize: a failed or useless summary fails the file (exit 2, nothing written) instead of keeping the last good result',
    )
    .option(
      '--min-retention <f>',
      'with summarize: a summary that keeps less than this share (0 to 1, or 80%) of the identifiers it replaces counts as a failed call',
    )
    .option('--note <template>', 'omission note text; {num_removed} becomes the number of removed messages')
    .option('--no-note', 'remove silently, without an omission note');
}

/** How a file is read and counted: the options compact and inspect share. */
function addReadingOptions(command: Command): void {
  command
    // A default with a description is shown bare, `(default: o200k_base)`, like every other default here.
    .addOption(
      new Option('--tokenizer <name>', 'how tokens are counted')
        .choices([...TOKENIZERS])
        .default('o200k_base', 'o200k_base'),
    )
    .addOption(
      new Option('-f, --format <name>', 'transcript format')
        .choices(['auto', ...formatNames()])
        .default('auto', 'auto'),
    )
    .option('--chars-per-token <x>', 'with --tokenizer approx: characters per token, decimals allowed (default: 4)')
    .option('--tokens-per-image <n>', 'tokens an image costs (default: 85)')
    .option('--tokens-per-file <n>', 'tokens a file attachment costs (default: 1,000)')
    .option(
      '--conversation-key <key>',
      'in files of many records, the key each record holds its conversation under (tried before messages, conversations, traj, history)',
    )
    .option(
      '--conversation-path <pointer>',
      'a JSON Pointer to the conversation, in the file or in each record: /input_data/serialized_data/gpt-4o/messages',
    );
}

/** compact's options of where results go, what is shown, and how the run goes. */
function addOutputOptions(command: Command): void {
  command
    .option('-o, --output <file>', 'write the result to this file, - for stdout (default: -)')
    .option('--in-place', 'rewrite each input file atomically (only when it changes)')
    .option(
      '--backup-dir <dir>',
      'with --in-place: copy each original there (at its path under the base) before replacing it; an existing backup is never overwritten',
    )
    .option(
      '--out-dir <dir>',
      'write every result (compacted or copied unchanged) under this directory, mirroring the inputs',
    )
    .option('--force', "with --out-dir: replace files there that hold something other than this run's result")
    .option(
      '--base <dir>',
      'the directory paths are mirrored and sharded from (default: the common base of the inputs)',
    )
    .option('--check', 'write nothing; list the files that would be compacted and exit 1 if there are any')
    .option(
      '--dry-run',
      'write nothing; print a diff of what would be removed, per file that would change or misses its target',
    )
    .option(
      '--stat',
      'with --dry-run: one line per file (tokens before → after, messages removed, target met) and a total, instead of the diffs',
    )
    .option('--verbose', 'with --dry-run: show files that would not change too')
    .option(
      '--json',
      'print the JSON plan (one file) or report (several files) on stdout, instead of the diff or the list of paths; on stderr when stdout carries the transcript',
    )
    .option('--report <file>', 'write that JSON report to a file instead')
    .option(
      '--exact',
      'count the tokens before exactly in every file (by default files over 4 MiB show an estimate, marked ≈)',
    )
    .option(
      '--ignore <pattern>',
      'leave out files matching this glob pattern (repeatable)',
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option(
      '--skip-unrecognized',
      'count files in which no conversation is found (other JSON) as skipped, not failed; broken transcripts still fail',
    )
    .option('-j, --jobs <n>', 'worker threads for many files (default: the number of CPUs)')
    .option('--shard <i/n>', 'process only shard i of n (by a hash of each path), to split an archive across CI jobs')
    .option('-q, --quiet', 'print only errors and the closing total of several files; -qq: only errors', countFlag);
  addColorOptions(command);
  addConfigOptions(command);
  command.option('--debug', 'show stack traces for unexpected errors');
}

/**
 * Options whose value is a comma-separated list of these names, for the completion scripts (commander's `choices`
 * would refuse a chain; the names are checked with the other settings).
 */
const LIST_CHOICES = new WeakMap<Option, readonly string[]>();

/** Records an option's list of names (see LIST_CHOICES). */
function listOption(option: Option, names: readonly string[]): Option {
  LIST_CHOICES.set(option, names);
  return option;
}

/** `swc completion bash|zsh|fish`: the script, from the program's own definitions. */
function addCompletion(program: Command, io: CliIo): void {
  program
    .command('completion')
    .description('print a shell completion script for bash, zsh or fish')
    .addArgument(new Argument('<shell>', 'the shell the script is for').choices(SHELLS))
    .addHelpText(
      'after',
      `\nLoad it:\n  bash: source <(swc completion bash)        (in ~/.bashrc)\n  zsh:  source <(swc completion zsh)         (in ~/.zshrc, after compinit)\n  fish: swc completion fish > ~/.config/fish/completions/swc.fish\n`,
    )
    .action(async (shell: Shell) => {
      const { completionScript } = await loadLazily(() => import('./completion.js'));
      await writeAll(io.stdout, completionScript(program, shell, LIST_CHOICES));
    });
}

/** Whether commander took an option's value from the command line, not from a default. */
function givenOn(command: Command): (key: string) => boolean {
  return (key) => command.getOptionValueSource(key) === 'cli';
}

/** `--config FILE` and `--no-config`: the settings file, found from the working directory upward by default. */
function addConfigOptions(command: Command): void {
  command
    .option(
      '--config <file>',
      `read settings from this file (default: ${CONFIG_FILE}, or package.json's "${PACKAGE_KEY}", here or above)`,
    )
    .option('--no-config', 'read no settings file');
}

/** `--color WHEN` and `--no-color`: the last one given wins; either beats NO_COLOR and FORCE_COLOR. */
function addColorOptions(command: Command): void {
  command
    .addOption(
      new Option('--color <when>', 'when to colour the output (default: auto, only in a terminal)').choices(COLOR_WHEN),
    )
    .option('--no-color', 'never use colour (--color never)');
}

/** `swc inspect`. */
function addInspect(program: Command, state: RunState, io: CliIo, err: (line: string) => void): void {
  const command = program
    .command('inspect')
    .description('show the structure and token cost of transcripts and the problems a provider would reject them for')
    .argument(
      '<inputs...>',
      "transcript files (JSON or JSONL), directories, quoted glob patterns ('archive/**/*.jsonl'), or - for standard input",
    );
  addReadingOptions(command);
  command
    .option(
      '--json',
      "print the same as one JSON document: the file's (one named file) or the run's, with every file and the totals",
    )
    .option('--json-lines', 'print one JSON document per file, one a line, as each file is done')
    .option(
      '--ignore <pattern>',
      'leave out files matching this glob pattern (repeatable)',
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option(
      '-q, --quiet',
      'print only the errors found (one line each) and the total of several files; -qq: no total',
      countFlag,
    );
  addColorOptions(command);
  addConfigOptions(command);
  command
    .option('--debug', 'show stack traces for unexpected errors')
    .addHelpText('after', examplesText('inspect'))
    .action(async (inputs: string[], flags: InspectFlags & { config?: string | boolean }, self: Command) => {
      state.debug = flags.debug === true;
      const config = loadConfig(flags.config, io.cwd);
      const merged = withConfig(flags, givenOn(self), config, { command: 'inspect', stream: false });
      const { runInspect } = await loadInspect();
      try {
        state.code = await runInspect(inputs, merged.flags, io, err, config?.file ?? null);
      } catch (error) {
        throw blameConfig(error, config, merged.used);
      }
    });
}

/** `swc replay`. */
function addReplay(program: Command, state: RunState, io: CliIo, err: (line: string) => void): void {
  const noteFlags = new Set<string>();
  const command = program
    .command('replay')
    .description(
      "replay recorded agent runs as if Haystack's CompactionHook ran before every LLM call, and compare policies",
    )
    .argument(
      '<runs...>',
      "transcript files (JSON or JSONL), directories, quoted glob patterns ('runs/**/*.jsonl'), or - for standard input",
    )
    .option('--context-window <tokens>', "the model's context window the hook compacts for (required)")
    .option(
      '--compact-at <fraction>',
      `compact once the history reaches this share of the window (default: ${DEFAULT_COMPACT_AT})`,
    )
    .option('--compact-to <fraction>', `compact it to this share of the window (default: ${DEFAULT_COMPACT_TO})`)
    .option('-k, --min-keep-steps <n>', 'newest steps of the current task always kept (default: 1)')
    .addOption(
      listOption(
        new Option(
          '--strategy <policy>',
          'a policy to replay, repeatable: none (never compacts), window, prune, summarize, or a chain such as prune,window (default: window)',
        ).argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]),
        ['none', ...STRATEGIES.filter((s) => s !== 'offload')],
      ),
    )
    .option('--min-tokens <n>', 'with prune: only replace tool results of more than this many tokens (default: 200)')
    .option(
      '--placeholder <template>',
      "with prune: the text left in place of a result; {tool_name} becomes the tool's name",
    )
    .option(
      '--summary-tokens <n>',
      'with summarize: the size a summary is assumed to have without a model (default: 1,024)',
    )
    .option('--summary-instruction <file>', "with summarize: the summary prompt's instruction, read from a file")
    .option(
      '--base-url <url>',
      'with summarize: an OpenAI-compatible endpoint that writes the summaries (default: $OPENAI_BASE_URL)',
    )
    .option('--model <name>', 'with summarize: the model the endpoint writes summaries with')
    .option('--summarize-command <cmd>', 'with summarize: a shell command that writes a summary (the prompt on stdin)')
    .option('--concurrency <n>', 'with summarize: summary calls in flight at once (default: 4)')
    .option(
      '--cache-dir <dir>',
      'with summarize: where summaries are cached (default: $XDG_CACHE_HOME/swc or ~/.cache/swc)',
    )
    .option('--no-cache', 'with summarize: neither read nor write the summary cache')
    .option(
      '--min-retention <f>',
      'with summarize: a summary keeping less than this share of the identifiers it replaces fails',
    )
    .option(
      '--dry-run',
      'with summarize: call no model, assume summaries of --summary-tokens (also the default without a model)',
    )
    .option('--note <template>', 'omission note text; {num_removed} becomes the number of removed messages')
    .option('--no-note', 'remove silently, without an omission note');
  addReadingOptions(command);
  command
    .option(
      '--prices <model|file>',
      `the price model: ${PRICE_MODEL_NAMES.join(', ')} (default: ${PRICE_MODEL_NAMES[0]}), or a JSON file of your own`,
    )
    .option('--json', 'print the replay as JSON (one run: its document; several: every run and the totals)')
    .option(
      '--report <file.html>',
      'write a self-contained HTML page of the replay: context per call, compactions, cost, what was lost',
    )
    .option('--fail-on-overflow', 'exit 1 if a compacting policy sends more than the window in some call')
    .option(
      '--max-lost <n>',
      'exit 1 if a compacting policy loses more than n identifiers that a later message names again',
    )
    .option(
      '--ignore <pattern>',
      'leave out files matching this glob pattern (repeatable)',
      (value: string, previous: string[] = []) => [...previous, value],
    );
  addColorOptions(command);
  command
    .option('--debug', 'show stack traces for unexpected errors')
    .on('option:note', () => noteFlags.add('--note'))
    .on('option:no-note', () => noteFlags.add('--no-note'))
    .addHelpText('after', examplesText('replay'))
    .action(async (inputs: string[], flags: ReplayFlags) => {
      state.debug = flags.debug === true;
      if (noteFlags.size > 1)
        throw new UsageError(
          '--note and --no-note cannot be used together: give a note template, or --no-note to remove silently',
        );
      const { runReplay } = await loadReplay();
      state.code = await runReplay(inputs, flags, io, err);
    });
}

/** `swc restore`. */
function addRestore(program: Command, state: RunState, io: CliIo, err: (line: string) => void): void {
  program
    .command('restore')
    .description(
      'put back the tool results an offloading run (--strategy offload) replaced, byte for byte, from its store',
    )
    .argument('<input>', 'the transcript file, or - for standard input')
    .option('--offload-dir <dir>', 'the store the results were offloaded to (default: the store the pointers lead to)')
    .option('-o, --output <file>', 'write the result to this file, - for stdout (default: -)')
    .option('--in-place', 'rewrite the input atomically (only when something is restored), compressed as it was')
    .addOption(
      new Option('-f, --format <name>', 'transcript format (default: detected, as for compact)').choices([
        'auto',
        ...formatNames(),
      ]),
    )
    .option(
      '--conversation-key <key>',
      'in files of many records, the key each record holds its conversation under (default: as the store recorded it)',
    )
    .option(
      '--conversation-path <pointer>',
      'a JSON Pointer to the conversation, in the file or in each record (default: as the store recorded it)',
    )
    .option('-q, --quiet', 'print nothing but errors', countFlag)
    .option('--debug', 'show stack traces for unexpected errors')
    .addHelpText('after', examplesText('restore'))
    .action(async (input: string, flags: RestoreFlags & { debug?: boolean }) => {
      state.debug = flags.debug === true;
      const { runRestore } = await loadRestore();
      state.code = await runRestore(input, flags, io, err);
    });
}
