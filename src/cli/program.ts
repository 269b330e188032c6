import { Argument, Command, CommanderError, Option } from 'commander';
import { createRequire } from 'node:module';
import { isKnownError, UsageError } from '../errors.js';
import { helpGroupOf } from './help-groups.js';
import { HELP_ORDER, optionRow, PRICE_MODEL_NAMES, type OptionCommand } from '../settings/options.js';
import { runCompact } from './compact.js';
import { blameConfig, loadConfig, withConfig } from './config.js';
import { DEFAULT_COMPACT_AT, resolveSettings, type CompactFlags, type CompactSettings } from './settings.js';
import type { InspectFlags } from './inspect.js';
import type { ReplayFlags } from './replay.js';
import type { RestoreFlags } from './restore.js';
import { EXIT } from './exit-codes.js';
import { writeAll, type CliIo } from './io.js';
import { cannotStart, loadLazily } from './lazy.js';
import { countFlag, SHELLS, type Shell } from './options.js';

const require = createRequire(import.meta.url);
const { version } = require('../../package.json') as { version: string };

/** The built-in price models' names, for replay's help (see the options table). */
export { PRICE_MODEL_NAMES };

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
  addTableOptions(command, 'compact');
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

/**
 * Adds a command's options from the options table (src/settings/options.ts), in the order its help lists them: each
 * flag with its help, value, choices and preset, and its `--no-` flag right after it.
 */
function addTableOptions(command: Command, name: OptionCommand): void {
  for (const option of HELP_ORDER[name]) {
    const row = optionRow(option);
    const use = row.on[name];
    if (use === undefined || row.flags === undefined) throw new Error(`${option} is not an option of ${name}`);
    const argument = use.argument ?? row.argument;
    const flag = new Option(argument === undefined ? row.flags : `${row.flags} ${argument}`, use.help);
    if (row.choices !== undefined) flag.choices([...row.choices()]);
    // A default with a description is shown bare, `(default: o200k_base)`, like every other default here.
    if (use.preset === true) flag.default(String(row.default), String(row.default));
    if (use.repeat === 'list') flag.argParser(collect);
    if (use.repeat === 'count') flag.argParser(countFlag);
    const group = helpGroupOf(option);
    command.addOption(flag.helpGroup(group));
    if (row.negated !== undefined) command.addOption(new Option(row.negated.flag, row.negated.help).helpGroup(group));
  }
}

/** Gathers a repeatable option's values in the order given. */
function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
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
      await writeAll(io.stdout, completionScript(program, shell));
    });
}

/** Whether commander took an option's value from the command line, not from a default. */
function givenOn(command: Command): (key: string) => boolean {
  return (key) => command.getOptionValueSource(key) === 'cli';
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
  addTableOptions(command, 'inspect');
  command
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
    );
  addTableOptions(command, 'replay');
  command
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
  const command = program
    .command('restore')
    .description(
      'put back the tool results an offloading run (--strategy offload) replaced, byte for byte, from its store',
    )
    .argument('<input>', 'the transcript file, or - for standard input');
  addTableOptions(command, 'restore');
  command
    .addHelpText('after', examplesText('restore'))
    .action(async (input: string, flags: RestoreFlags & { debug?: boolean }) => {
      state.debug = flags.debug === true;
      const { runRestore } = await loadRestore();
      state.code = await runRestore(input, flags, io, err);
    });
}
