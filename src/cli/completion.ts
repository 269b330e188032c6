import type { Command, Option } from 'commander';
import { UsageError } from '../errors.js';
import { OPTIONS, type OptionCommand, type OptionRow } from '../settings/options.js';
import { PROGRAMS, type Shell } from './options.js';
import { parseStrategies } from './settings.js';

/**
 * `swc completion bash|zsh|fish`: a shell completion script generated from the program's commander definitions, the
 * ones `--help` prints (commands, options, their choices), so a new option or format completes without an edit here.
 * Loaded only for `swc completion`.
 */

/**
 * What an option's value completes to: one of some words; a chain of names (`prune,window`), given as every chain
 * the parser accepts; a file, or one of some words (`--prices`' models); a folder; nothing (a number, a pattern).
 */
type ValueSpec =
  | { readonly kind: 'none' }
  | { readonly kind: 'words'; readonly words: readonly string[] }
  | { readonly kind: 'chain'; readonly chains: readonly string[] }
  | { readonly kind: 'file'; readonly words: readonly string[] }
  | { readonly kind: 'dir' }
  | { readonly kind: 'free'; readonly name: string };

/** The options table's rows by the attribute commander stores each option under. */
const ROWS: ReadonlyMap<string, OptionRow> = new Map(OPTIONS.map((row) => [row.name, row]));

/** One option as the scripts see it. */
interface OptionSpec {
  readonly short: string | undefined;
  readonly long: string | undefined;
  readonly description: string;
  readonly value: ValueSpec;
  /** Given more than once (`-qq`, `--ignore a --ignore b`). */
  readonly repeatable: boolean;
}

/** One command: its options and what its arguments complete to. */
interface CommandSpec {
  readonly name: string;
  readonly description: string;
  readonly options: readonly OptionSpec[];
  readonly argument: { readonly name: string; readonly value: ValueSpec; readonly variadic: boolean } | null;
}

/** The program as the scripts see it. */
interface ProgramSpec {
  readonly options: readonly OptionSpec[];
  readonly commands: readonly CommandSpec[];
}

/**
 * The script for a shell.
 * @param program the program, every command and option defined
 */
export function completionScript(program: Command, shell: Shell): string {
  const spec = programSpec(program);
  if (shell === 'bash') return bashScript(spec);
  if (shell === 'zsh') return zshScript(spec);
  return fishScript(spec);
}

/** The program's commands and options, read as `--help` reads them. */
function programSpec(program: Command): ProgramSpec {
  const help = program.createHelp();
  const commands = help.visibleCommands(program);
  const names = commands.map((c) => c.name()).filter((name) => name !== 'help');
  return {
    options: help.visibleOptions(program).map((o) => optionSpec(o, null)),
    commands: commands.map((command) => {
      const [argument] = command.registeredArguments;
      // The help command's argument is a command's name.
      const value: ValueSpec =
        argument === undefined
          ? { kind: 'none' }
          : argument.argChoices !== undefined
            ? { kind: 'words', words: argument.argChoices }
            : command.name() === 'help'
              ? { kind: 'words', words: names }
              : { kind: 'file', words: [] };
      return {
        name: command.name(),
        description: command.description(),
        options: command
          .createHelp()
          .visibleOptions(command)
          .map((o) => optionSpec(o, command.name() as OptionCommand)),
        argument: argument === undefined ? null : { name: argument.name(), value, variadic: argument.variadic },
      };
    }),
  };
}

/**
 * An option as the scripts complete it: its choices, a comma-separated list's accepted chains (the options table's
 * `chain` for this command), files for a `<file>` (`<file.html>`, `<model|file>` with the table's `words`), folders
 * for a `<dir>`, nothing for other values (a number, a pattern). An option with a parser of its own and no choices
 * gathers its values (a count, a list), so it may be given again.
 * @param command the command it belongs to, or null for the program's own (help, version)
 */
function optionSpec(option: Option, command: OptionCommand | null): OptionSpec {
  const takes = option.required || option.optional;
  const argument = /<([^>]+)>|\[([^\]]+)\]/.exec(option.flags);
  const name = argument?.[1] ?? argument?.[2] ?? 'value';
  const row = option.negate ? undefined : ROWS.get(option.attributeName());
  const list = command === null ? undefined : row?.on[command]?.chain;
  const file = name.split('|').some((part) => part === 'file' || part.startsWith('file.'));
  const value: ValueSpec = !takes
    ? { kind: 'none' }
    : option.argChoices !== undefined
      ? { kind: 'words', words: option.argChoices }
      : list !== undefined
        ? { kind: 'chain', chains: chainsOf(list) }
        : file
          ? { kind: 'file', words: row?.words ?? [] }
          : name === 'dir'
            ? { kind: 'dir' }
            : { kind: 'free', name };
  return {
    short: option.short,
    long: option.long,
    description: shortText(option.description),
    value,
    repeatable: option.parseArg !== undefined && option.argChoices === undefined,
  };
}

/**
 * Each name alone, then every chain of two or more of them that `--strategy`'s parser accepts, shortest first: the
 * parser's rules (each strategy once; `none`, replay's policy of no compaction, only alone) decide, not a list here.
 * A chain the parser refuses is not grown, since it checks a chain's names in order.
 */
function chainsOf(names: readonly string[]): string[] {
  const out: string[][] = names.map((n) => [n]);
  for (let from = 0; from < out.length; from++) {
    const chain = out[from] as string[];
    for (const name of names) if (accepts([...chain, name])) out.push([...chain, name]);
  }
  return out.map((chain) => chain.join(','));
}

/** Whether the strategy parser takes a chain. */
function accepts(chain: readonly string[]): boolean {
  try {
    parseStrategies(chain.join(','));
    return true;
  } catch (error) {
    if (error instanceof UsageError) return false;
    throw error;
  }
}

/** A description cut to one short line at a word, for a completion menu. */
function shortText(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= 72) return flat;
  const cut = flat.slice(0, 71);
  return `${cut.slice(0, Math.max(cut.lastIndexOf(' '), 40))}…`;
}

/** Every name an option is given by: `-f`, `--format`. */
function namesOf(option: OptionSpec): string[] {
  return [option.short, option.long].filter((n): n is string => n !== undefined);
}

/** A word a script holds unquoted: option names, command names and choices are such words, or the script says so. */
function word(text: string): string {
  if (!/^[A-Za-z0-9_.,:+@%=/-]+$/.test(text)) throw new Error(`cannot complete ${JSON.stringify(text)}`);
  return text;
}

/** A POSIX shell's single-quoted string. */
function quoted(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/** A bash function name for a command. */
function bashName(command: string): string {
  return `_swc_${command.replace(/[^A-Za-z0-9]/g, '_')}`;
}

/** The bash script: one function that finds the command, then completes by the word before the cursor. */
function bashScript(spec: ProgramSpec): string {
  const top = [...spec.commands.map((c) => c.name), ...spec.options.flatMap(namesOf)].map(word).join(' ');
  const commands = spec.commands.map((command) => {
    const valueCases = command.options
      .filter((o) => o.value.kind !== 'none')
      .map((o) => `        ${namesOf(o).map(word).join('|')}) ${bashValue(o.value)}; return ;;`);
    const options = command.options.flatMap(namesOf).map(word).join(' ');
    const argument = command.argument === null ? 'return' : bashValue(command.argument.value);
    return [
      `    ${word(command.name)})`,
      ...(valueCases.length > 0 ? ['      case "$prev" in', ...valueCases, '      esac'] : []),
      `      if [[ $cur == -* ]]; then _swc_words ${quoted(options)}; else ${argument}; fi`,
      '      ;;',
    ].join('\n');
  });
  return `${[
    '# bash completion for swc (transcript-compact), written by `swc completion bash`.',
    '# Load it in ~/.bashrc with: source <(swc completion bash)',
    '# or save it as ~/.local/share/bash-completion/completions/swc (and transcript-compact).',
    '',
    '_swc_words() { mapfile -t COMPREPLY < <(compgen -W "$1" -- "$cur"); }',
    '# A comma-separated chain, given every chain accepted: the chain typed up to its last comma and one name more.',
    '_swc_chain() {',
    '  local head="" chain next',
    '  local -A seen=()',
    '  [[ $cur == *,* ]] && head="${cur%,*},"',
    '  COMPREPLY=()',
    '  for chain in $1; do',
    '    [[ $chain == "$head"?* ]] || continue',
    '    next="${chain#"$head"}"',
    '    next="$head${next%%,*}"',
    '    [[ $next == "$cur"* && -z ${seen[$next]:-} ]] || continue',
    '    seen[$next]=1',
    '    COMPREPLY+=("$next")',
    '  done',
    '}',
    '_swc_files() { mapfile -t COMPREPLY < <(compgen -f -- "$cur"); }',
    '# Files, and these names.',
    '_swc_files_and() { mapfile -t COMPREPLY < <(compgen -W "$1" -- "$cur"; compgen -f -- "$cur"); }',
    '_swc_dirs() { mapfile -t COMPREPLY < <(compgen -d -- "$cur"); }',
    '',
    '_swc() {',
    '  local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" command="" i',
    '  COMPREPLY=()',
    '  # --option=value: bash makes "=" a word of its own.',
    '  if [[ $cur == "=" ]]; then cur=""',
    '  elif [[ $prev == "=" ]]; then prev="${COMP_WORDS[COMP_CWORD-2]}"; fi',
    '  for ((i = 1; i < COMP_CWORD; i++)); do',
    '    case "${COMP_WORDS[i]}" in',
    `      ${spec.commands.map((c) => word(c.name)).join('|')}) command="\${COMP_WORDS[i]}"; break ;;`,
    '    esac',
    '  done',
    '  case "$command" in',
    `    "") _swc_words ${quoted(top)} ;;`,
    ...commands,
    '  esac',
    '}',
    `complete -o filenames -F _swc ${PROGRAMS.join(' ')}`,
  ].join('\n')}\n`;
}

/** What bash completes a value to. */
function bashValue(value: ValueSpec): string {
  switch (value.kind) {
    case 'words':
      return `_swc_words ${quoted(value.words.map(word).join(' '))}`;
    case 'chain':
      return `_swc_chain ${quoted(value.chains.map(word).join(' '))}`;
    case 'file':
      return value.words.length === 0 ? '_swc_files' : `_swc_files_and ${quoted(value.words.map(word).join(' '))}`;
    case 'dir':
      return '_swc_dirs';
    default:
      return 'COMPREPLY=()';
  }
}

/** Text inside a zsh `_arguments` description or message: its brackets and colons are syntax there. */
function zshText(text: string): string {
  return text.replace(/[\\[\]:]/g, (c) => `\\${c}`);
}

/** The zsh script: `_arguments` for the program and each command, with `_describe` for the commands. */
function zshScript(spec: ProgramSpec): string {
  const commandList = spec.commands.map((c) => `    ${quoted(`${word(c.name)}:${zshText(shortText(c.description))}`)}`);
  const functions = spec.commands.map((command) => {
    const lines = command.options.map((o) => `    ${zshOption(o)}`);
    if (command.argument !== null) {
      const { name, value, variadic } = command.argument;
      lines.push(`    ${quoted(`${variadic ? '*' : ''}:${zshText(name)}:${zshAction(value)}`)}`);
    }
    return [`${bashName(command.name)}() {`, `  _arguments -s -S \\`, `${lines.join(' \\\n')}`, '}'].join('\n');
  });
  return `${[
    '#compdef swc transcript-compact',
    '# zsh completion for swc (transcript-compact), written by `swc completion zsh`.',
    '# Save it as _swc in a folder of $fpath (before compinit runs), or, after compinit: source <(swc completion zsh)',
    '',
    '# A comma-separated chain, given every chain accepted: one name more after the chain typed up to its last comma.',
    '_swc_chain() {',
    '  local head="" chain',
    '  local -a next',
    '  [[ $PREFIX == *,* ]] && head="${PREFIX%,*},"',
    '  for chain in "$@"; do',
    '    [[ $chain == ${(b)head}?* ]] || continue',
    '    chain=${chain#${(b)head}}',
    '    next+=("${chain%%,*}")',
    '  done',
    "  compset -P '*,'",
    '  compadd -- "${(@u)next}"',
    '}',
    '# Files, and these names.',
    '_swc_files_and() {',
    `  _alternative "names:name:($*)" 'files:file:_files'`,
    '}',
    '',
    ...functions,
    '',
    '_swc() {',
    '  local curcontext="$curcontext" state line',
    '  typeset -A opt_args',
    '  _arguments -C \\',
    ...spec.options.map((o) => `    ${zshOption(o, true)} \\`),
    "    '1:command:->command' \\",
    "    '*::argument:->argument' && return",
    '  case $state in',
    '    command)',
    '      local -a commands',
    '      commands=(',
    ...commandList,
    '      )',
    "      _describe -t commands 'swc command' commands",
    '      ;;',
    '    argument)',
    '      curcontext="${curcontext%:*:*}:swc-$line[1]:"',
    '      case $line[1] in',
    ...spec.commands.map((c) => `        ${word(c.name)}) ${bashName(c.name)} ;;`),
    '      esac',
    '      ;;',
    '  esac',
    '}',
    '',
    'if [[ $funcstack[1] == _swc ]]; then _swc "$@"; else compdef _swc swc transcript-compact; fi',
  ].join('\n')}\n`;
}

/**
 * One option as `_arguments` takes it: `'(-t --target)'{-t+,--target=}'[the token budget]:tokens: '`. The names of
 * one option exclude each other; a repeatable one is starred; `stop` options (help, version) end the line.
 */
function zshOption(option: OptionSpec, stop = false): string {
  const names = namesOf(option).map(word);
  const takes = option.value.kind !== 'none';
  const forms = names.map((n) => (takes ? `${n}${n.startsWith('--') ? '=' : '+'}` : n));
  const exclude = option.repeatable ? '*' : stop ? '(- *)' : names.length > 1 ? `(${names.join(' ')})` : '';
  const head = forms.length > 1 ? `{${forms.join(',')}}` : (forms[0] as string);
  const argument = takes ? `:${zshText(valueName(option.value))}:${zshAction(option.value)}` : '';
  const rest = `[${zshText(option.description)}]${argument}`;
  return forms.length > 1
    ? `${exclude === '' ? '' : quoted(exclude)}${head}${quoted(rest)}`
    : quoted(`${exclude}${head}${rest}`);
}

/** The name a value is shown by in a completion message. */
function valueName(value: ValueSpec): string {
  if (value.kind === 'free') return value.name;
  if (value.kind === 'words') return 'name';
  if (value.kind === 'chain') return 'list';
  return value.kind === 'dir' ? 'folder' : 'file';
}

/** What zsh completes a value to. */
function zshAction(value: ValueSpec): string {
  switch (value.kind) {
    case 'words':
      return `(${value.words.map(word).join(' ')})`;
    case 'chain':
      return `_swc_chain ${value.chains.map(word).join(' ')}`;
    case 'file':
      return value.words.length === 0 ? '_files' : `_swc_files_and ${value.words.map(word).join(' ')}`;
    case 'dir':
      return '_files -/';
    default:
      return ' ';
  }
}

/** A fish single-quoted string. */
function fishQuoted(text: string): string {
  return `'${text.replace(/[\\']/g, (c) => `\\${c}`)}'`;
}

/**
 * A fish function that completes a comma-separated chain, given every chain accepted: the chain typed up to its last
 * comma (after any `--option=`) and one name more.
 */
function fishChain(fn: string, chains: readonly string[]): string {
  return [
    `function ${fn}`,
    '    set -l typed (commandline -ct)',
    "    set typed (string replace -r -- '^-[^=]*=' '' \"$typed\")",
    '    set -l head (string match -r -- \'^.*,\' "$typed")',
    '    set -l skip (math (string length -- "$head") + 1)',
    `    for chain in ${chains.map(word).join(' ')}`,
    '        string match -q -- "$head?*" $chain; or continue',
    '        set -l rest (string sub -s $skip -- $chain)',
    '        echo "$head"(string split -m 1 , -- $rest)[1]',
    '    end | sort -u',
    'end',
  ].join('\n');
}

/** The fish script: one `complete` line per command and option, conditioned on the command seen. */
function fishScript(spec: ProgramSpec): string {
  const lines: string[] = [];
  const listFunctions: string[] = [];
  const option = (condition: string, o: OptionSpec, command: string): string => {
    const names = [
      ...(o.short !== undefined ? [`-s ${word(o.short.slice(1))}`] : []),
      ...(o.long !== undefined ? [`-l ${word(o.long.slice(2))}`] : []),
    ];
    let value = '';
    if (o.value.kind === 'chain') {
      const fn = `__swc_${command}_${(o.long ?? o.short ?? '').replace(/[^A-Za-z0-9]/g, '_')}`;
      listFunctions.push(fishChain(fn, o.value.chains));
      value = ` -x -a ${fishQuoted(`(${fn})`)}`;
    } else if (o.value.kind === 'words') value = ` -x -a ${fishQuoted(o.value.words.map(word).join(' '))}`;
    else if (o.value.kind === 'file')
      value = o.value.words.length === 0 ? ' -r -F' : ` -r -F -a ${fishQuoted(o.value.words.map(word).join(' '))}`;
    else if (o.value.kind === 'dir') value = ` -x -a ${fishQuoted('(__fish_complete_directories)')}`;
    else if (o.value.kind === 'free') value = ' -x';
    return `complete -c swc -n ${fishQuoted(condition)} ${names.join(' ')}${value} -d ${fishQuoted(o.description)}`;
  };
  for (const o of spec.options) lines.push(option('__fish_use_subcommand', o, 'swc'));
  for (const c of spec.commands)
    lines.push(
      `complete -c swc -n __fish_use_subcommand -a ${word(c.name)} -d ${fishQuoted(shortText(c.description))}`,
    );
  for (const c of spec.commands) {
    const condition = `__fish_seen_subcommand_from ${word(c.name)}`;
    for (const o of c.options) lines.push(option(condition, o, c.name.replace(/[^A-Za-z0-9]/g, '_')));
    const argument = c.argument?.value;
    if (argument?.kind === 'words')
      lines.push(`complete -c swc -n ${fishQuoted(condition)} -a ${fishQuoted(argument.words.map(word).join(' '))}`);
    else if (argument?.kind === 'file') lines.push(`complete -c swc -n ${fishQuoted(condition)} -F`);
  }
  return `${[
    '# fish completion for swc (transcript-compact), written by `swc completion fish`.',
    '# Load it with: swc completion fish | source',
    '# or save it as ~/.config/fish/completions/swc.fish',
    '',
    'complete -c swc -f',
    ...listFunctions,
    ...lines,
    'complete -c transcript-compact -w swc',
  ].join('\n')}\n`;
}
