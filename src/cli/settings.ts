import { availableParallelism } from 'node:os';
import { UsageError } from '../errors.js';
import type { StrategyName, WindowThresholds } from '../pipeline/index.js';
import {
  CLI,
  checkBudget,
  checkNote,
  checkPlaceholder,
  checkStrategies,
  checkStrategySettings,
  checkTokenizer,
  checkWindow,
  DEFAULT_CONCURRENCY,
  DEFAULT_OFFLOAD_OVER,
  onlyWith,
} from '../settings/index.js';
import {
  parseCounterOptions,
  resolveCounterOptions,
  type CounterOptions,
  type TokenizerName,
} from '../tokens/index.js';
import { isDefaultSettings, type CounterSettings } from '../tokens/options.js';
import { countOf, defaultOf, givenFlagOf, nameOfFlag, parseCount } from '../settings/options.js';
import { parseFraction, type Fraction } from '../settings/parse.js';
import { colorWhen, quietLevel, type ColorWhen, type QuietLevel } from './options.js';
import { parseRetention } from '../outcome/forgotten.js';
import { parsePointer, PointerSyntaxError } from '../io/json-pointer.js';

/** The settings of `swc compact`, checked and resolved once from the command line; every part of the run reads these. */

/** Options of `swc compact` as commander hands them over. */
export interface CompactFlags {
  target?: string;
  contextWindow?: string;
  compactAt?: string;
  compactTo?: string;
  minKeepSteps?: string;
  note?: string | boolean;
  strategy?: string;
  minTokens?: string;
  placeholder?: string;
  offloadDir?: string;
  offloadHook?: string;
  offloadOver?: string;
  previewChars?: string;
  tokenizer?: string;
  format?: string;
  conversationKey?: string;
  conversationPath?: string;
  output?: string;
  inPlace?: boolean;
  outDir?: string;
  backupDir?: string;
  base?: string;
  check?: boolean;
  dryRun?: boolean;
  json?: boolean;
  report?: string;
  ignore?: string[];
  skipUnrecognized?: boolean;
  jobs?: string;
  shard?: string;
  charsPerToken?: string;
  tokensPerImage?: string;
  tokensPerFile?: string;
  force?: boolean;
  exact?: boolean;
  failOverTarget?: boolean;
  stat?: boolean;
  verbose?: boolean;
  /** How many times -q was given. */
  quiet?: number;
  /** `--config FILE`, or false for `--no-config`. */
  config?: string | boolean;
  debug?: boolean;
  color?: string | boolean;
  summaryTokens?: string;
  summaryInstruction?: string;
  baseUrl?: string;
  model?: string;
  summarizeCommand?: string;
  concurrency?: string;
  cacheDir?: string;
  cache?: boolean;
  strict?: boolean;
  minRetention?: string;
}

/** The settings of `--strategy summarize`, as given (the environment is read when the summarizer is made). */
export interface SummarizeSettings {
  /** Haystack's `approximate_summary_tokens` (`--summary-tokens`, default 1024). */
  readonly summaryTokens: number;
  /** `--summary-instruction FILE`, or undefined for swc's own instruction. */
  readonly instructionFile: string | undefined;
  readonly baseUrl: string | undefined;
  readonly model: string | undefined;
  readonly command: string | undefined;
  /** Summary calls in flight at once across the run (`--concurrency`, default 4). */
  readonly concurrency: number;
  readonly cacheDir: string | undefined;
  /** false with --no-cache. */
  readonly cache: boolean;
  /** --strict: a failed round fails its file (Haystack's `raise_on_failure`). */
  readonly strict: boolean;
  /** `--min-retention F`: a summary keeping less than F of the replaced messages' identifiers fails its round. */
  readonly minRetention: number | undefined;
}

/** The summary calls in flight at once when --concurrency is not given. */
export { DEFAULT_CONCURRENCY };

export { parseFraction, type Fraction };

/** The context-window thresholds, as typed and in tokens. */
export interface WindowSettings {
  readonly tokens: number;
  readonly compactAt: Fraction;
  readonly compactTo: Fraction;
  /** Sizes from here on are compacted: ceil(window × compact-at). */
  readonly trigger: number;
  /** What they are compacted to: floor(window × compact-to). */
  readonly target: number;
}

/** A shard of the files: the `index`-th (1-based) of `count`. */
export interface Shard {
  readonly index: number;
  readonly count: number;
}

/** Validated settings of one `swc compact` run. */
export interface CompactSettings {
  readonly inputs: readonly string[];
  /** The token target: --target, or the window's target. */
  readonly target: number;
  readonly window: WindowSettings | null;
  readonly minKeepSteps: number;
  /** The strategies applied, in order (`--strategy`, default the sliding window alone). */
  readonly strategies: readonly StrategyName[];
  /** Pruning: only results of more than this many tokens are replaced (`--min-tokens`, default 200). */
  readonly minTokens: number;
  /** Pruning: the placeholder template (`--placeholder`), undefined for Haystack's. */
  readonly placeholder: string | undefined;
  /**
   * Offloading: the store directory as given (`--offload-dir`); the hook rule's threshold in characters
   * (`--offload-hook`, or its deprecated name `--offload-over`), undefined for the compactor; the preview's length
   * (`--preview-chars`).
   */
  readonly offloadDir: string | undefined;
  readonly offloadOver: number | undefined;
  readonly previewChars: number;
  /** undefined: the default note; null: no note; otherwise the template. */
  readonly note: string | null | undefined;
  readonly tokenizer: TokenizerName;
  /** --chars-per-token, --tokens-per-image, --tokens-per-file as given (Haystack's defaults for the rest). */
  readonly counter: CounterOptions;
  readonly format: string;
  /** In files of many records, the key each record holds its conversation under. */
  readonly conversationKey: string | undefined;
  /** A JSON Pointer to the conversation in each file or record (`--conversation-path`). */
  readonly conversationPath: string | undefined;
  readonly output: string | undefined;
  readonly inPlace: boolean;
  readonly outDir: string | undefined;
  /** With --in-place: where each original is copied before it is replaced. */
  readonly backupDir: string | undefined;
  readonly base: string | undefined;
  readonly check: boolean;
  readonly dryRun: boolean;
  readonly json: boolean;
  readonly report: string | undefined;
  readonly ignore: readonly string[];
  /** --skip-unrecognized: a file in which no conversation is found is counted as skipped, not failed. */
  readonly skipUnrecognized: boolean;
  readonly jobs: number;
  readonly shard: Shard | null;
  /** Replace files in the out-dir that hold something other than this run's result. */
  readonly force: boolean;
  /** Count the tokens before exactly in every file, however big (else big files show an estimate). */
  readonly exact: boolean;
  /** --fail-over-target: exit 1 naming each file left over its target. */
  readonly failOverTarget: boolean;
  /** --dry-run --stat: one line per file and a total instead of the diffs. */
  readonly stat: boolean;
  /** --dry-run --verbose: files that would not change are shown too. */
  readonly verbose: boolean;
  /** `-q`: 1, only the closing line and errors; `-qq`: 2, only errors; 0 without. */
  readonly quiet: QuietLevel;
  /** `--color` (`--no-color` is `never`; nothing said is `auto`). */
  readonly color: ColorWhen;
  /** With --strategy summarize: its settings; null otherwise. */
  readonly summarize: SummarizeSettings | null;
  /** The settings file the run read (as outputs name it), or null. */
  readonly config: string | null;
}

/** The defaults as the command line shows and parses them. */
export const DEFAULT_COMPACT_AT = String(defaultOf('compactAt'));
export const DEFAULT_COMPACT_TO = String(defaultOf('compactTo'));
export { DEFAULT_OFFLOAD_OVER };

/**
 * Checks the threshold options: `0 < compact-to < compact-at <= 1` and a positive window, each refusal
 * saying why the rule exists (the rules are the library's too: src/settings/rules.ts).
 */
export function resolveWindow(flags: CompactFlags): WindowSettings | null {
  const given = {
    target: flags.target !== undefined,
    contextWindow: flags.contextWindow !== undefined,
    compactAt: flags.compactAt !== undefined,
    compactTo: flags.compactTo !== undefined,
  };
  if (!checkBudget(CLI, given)) return null;
  const tokens = flagCount('contextWindow', flags.contextWindow as string);
  const compactAt = parseFraction('--compact-at', flags.compactAt ?? DEFAULT_COMPACT_AT);
  const compactTo = parseFraction('--compact-to', flags.compactTo ?? DEFAULT_COMPACT_TO);
  const { trigger, target } = checkWindow(CLI, tokens, compactAt, compactTo);
  return { tokens, compactAt, compactTo, trigger, target };
}

/** Parses `--shard i/n` (1-based, like jest and playwright). */
export function parseShard(raw: string): Shard {
  const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(raw);
  if (m === null) throw new UsageError(`--shard must look like 2/4 (the 2nd of 4 shards), got "${raw}"`);
  const index = Number(m[1]);
  const count = Number(m[2]);
  if (!Number.isSafeInteger(count)) throw new UsageError(`--shard is too large: "${raw}"`);
  if (count < 1) throw new UsageError(`--shard ${raw}: the number of shards must be at least 1`);
  if (index < 1 || index > count)
    throw new UsageError(`--shard ${raw}: the shard must be between 1 and ${count} (shards count from 1)`);
  return { index, count };
}

/** A number flag's value: its default when not given, else read by its kind and held to its bound (src/settings/options.ts). */
function flagCount(name: string, raw: string | undefined): number {
  return countOf(name, CLI.name(name), raw);
}

/** Whether a run writes nothing but its result to stdout (one input, no batch option): the behaviour of one file. */
export function isStreamRun(settings: CompactSettings): boolean {
  return (
    !settings.inPlace &&
    settings.outDir === undefined &&
    !settings.check &&
    !settings.dryRun &&
    settings.inputs.length === 1
  );
}

/**
 * Checks flags and turns them into settings; every problem is a UsageError that says what to do.
 * @param flags the command line's, with a settings file's under them (see config.ts)
 * @param config the settings file they came with, as outputs name it
 */
export function resolveSettings(
  inputs: readonly string[],
  flags: CompactFlags,
  config: string | null = null,
): CompactSettings {
  const budget = budgetOf(flags);
  const strategy = strategySettingsOf(flags, budget.minKeepSteps);
  const tokenizer = checkTokenizer(CLI, flags.tokenizer ?? defaultOf('tokenizer'));
  const note = noteOf(flags);
  const outputs = outputsOf(inputs, flags);
  const settings: CompactSettings = {
    inputs,
    ...budget,
    ...strategy,
    note,
    tokenizer,
    counter: counterOptionsOf(flags, tokenizer),
    format: flags.format ?? 'auto',
    conversationKey: flags.conversationKey,
    conversationPath: checkConversationPath(flags),
    ...outputs,
    json: flags.json === true,
    report: flags.report,
    ignore: flags.ignore ?? [],
    skipUnrecognized: flags.skipUnrecognized === true,
    jobs: flags.jobs === undefined ? availableParallelism() : flagCount('jobs', flags.jobs),
    shard: flags.shard === undefined ? null : parseShard(flags.shard),
    force: flags.force === true,
    exact: flags.exact === true,
    failOverTarget: flags.failOverTarget === true,
    stat: flags.stat === true,
    verbose: flags.verbose === true,
    quiet: quietLevel(flags.quiet),
    color: colorWhen(flags.color),
    summarize: summarizeSettingsOf(flags, strategy.strategies),
    config,
  };
  checkBatchOnly(settings);
  return settings;
}

/** The budget: a fixed `--target`, or the window's thresholds; and the steps always kept. */
function budgetOf(flags: CompactFlags): Pick<CompactSettings, 'target' | 'window' | 'minKeepSteps'> {
  const window = resolveWindow(flags);
  if (window === null && flags.target === undefined) {
    throw new UsageError('--target <tokens> is required (the token budget to compact to)');
  }
  const target = window?.target ?? flagCount('target', flags.target as string);
  const minKeepSteps = flagCount('minKeepSteps', flags.minKeepSteps);
  return { target, window, minKeepSteps };
}

/** The strategies and the settings that apply to some of them, each refused without its strategy. */
function strategySettingsOf(
  flags: CompactFlags,
  minKeepSteps: number,
): Pick<CompactSettings, 'strategies' | 'minTokens' | 'placeholder' | 'offloadDir' | 'offloadOver' | 'previewChars'> {
  const strategies = parseStrategies(flags.strategy);
  checkStrategySettings(CLI, strategies, { minKeepSteps, minTokens: flags.minTokens, placeholder: flags.placeholder });
  const minTokens = flagCount('minTokens', flags.minTokens);
  const offloading = strategies.includes('offload');
  const strayOffload = offloading ? undefined : givenFlagOf('compact', 'offload', flags as Record<string, unknown>);
  if (strayOffload !== undefined) onlyWith(CLI, strayOffload, 'offload');
  if (offloading && (flags.offloadDir === undefined || flags.offloadDir === ''))
    throw new UsageError('--strategy offload needs --offload-dir <dir>, where the offloaded results are written');
  // Without --offload-hook, Haystack 3.4's ToolResultOffloadCompactor; with it, its ToolResultOffloadHook's rule
  // (--offload-over, its name before swc followed 3.4, is the same).
  if (flags.offloadHook !== undefined && flags.offloadOver !== undefined)
    throw new UsageError('--offload-over is the deprecated name of --offload-hook: give one of them');
  const offloadOver =
    flags.offloadHook !== undefined
      ? parseCount('offloadHook', '--offload-hook', flags.offloadHook)
      : flags.offloadOver === undefined
        ? undefined
        : parseCount('offloadOver', '--offload-over', flags.offloadOver);
  const previewChars = flagCount('previewChars', flags.previewChars);
  if (flags.placeholder !== undefined) checkPlaceholder(CLI, flags.placeholder);
  return {
    strategies,
    minTokens,
    placeholder: flags.placeholder,
    offloadDir: flags.offloadDir,
    offloadOver,
    previewChars,
  };
}

/** `--note`: undefined for the default note, null for none (`--no-note`, or an empty template), else the template. */
function noteOf(flags: CompactFlags): string | null | undefined {
  const note =
    flags.note === false
      ? null
      : flags.note === true || flags.note === undefined
        ? undefined
        : flags.note === ''
          ? null
          : flags.note;
  if (typeof note === 'string') checkNote(CLI, note);
  return note;
}

/** Where results go, checked against the inputs: each way of writing excludes the others. */
function outputsOf(
  inputs: readonly string[],
  flags: CompactFlags,
): Pick<CompactSettings, 'output' | 'inPlace' | 'outDir' | 'backupDir' | 'base' | 'check' | 'dryRun'> {
  if (inputs.length === 0)
    throw new UsageError('no input given (a file, a directory, a quoted glob pattern, or - for standard input)');
  const inPlace = flags.inPlace === true;
  const check = flags.check === true;
  const dryRun = flags.dryRun === true;
  const outDir = flags.outDir;
  if (inPlace && outDir !== undefined)
    throw new UsageError(
      '--in-place and --out-dir cannot be used together: rewrite the inputs, or write copies under the out-dir',
    );
  if (check && (inPlace || outDir !== undefined)) {
    throw new UsageError(
      `--check writes nothing, so it cannot be used with ${inPlace ? '--in-place' : '--out-dir'}: run the check and the rewrite as two steps`,
    );
  }
  if (flags.output !== undefined) checkOutputFlag(inputs, { dryRun, check, inPlace, outDir });
  if (inputs.includes('-')) {
    if (inputs.length > 1) throw new UsageError('- (standard input) cannot be mixed with other inputs');
    if (inPlace) throw new UsageError('--in-place cannot rewrite standard input; use --output');
    if (outDir !== undefined) throw new UsageError('--out-dir needs files; for standard input use --output');
  }
  if (flags.backupDir !== undefined && !inPlace) {
    throw new UsageError('--backup-dir keeps the originals that --in-place replaces; it needs --in-place');
  }
  if (inputs.length > 1 && !inPlace && outDir === undefined && !check && !dryRun) {
    throw new UsageError(
      `${inputs.length} inputs given: add --out-dir <dir> to write the results there, --in-place to rewrite each file, --check to only report which need compaction, or --dry-run to preview`,
    );
  }
  if (!dryRun && (flags.stat === true || flags.verbose === true)) {
    throw new UsageError(`${flags.stat === true ? '--stat' : '--verbose'} is a way to show a dry run: add --dry-run`);
  }
  return { output: flags.output, inPlace, outDir, backupDir: flags.backupDir, base: flags.base, check, dryRun };
}

/** `--output` names the one place for one result: it clashes with every other way of writing, and with many inputs. */
function checkOutputFlag(
  inputs: readonly string[],
  modes: { dryRun: boolean; check: boolean; inPlace: boolean; outDir: string | undefined },
): void {
  // Name the option that clashes with --output; only then is the number of inputs the problem.
  if (modes.dryRun) throw new UsageError('--dry-run writes nothing; it cannot be combined with --output');
  if (modes.check) throw new UsageError('--check writes nothing; it cannot be combined with --output');
  if (modes.inPlace) throw new UsageError('--in-place rewrites each input itself; it cannot be combined with --output');
  if (modes.outDir !== undefined)
    throw new UsageError(
      '--out-dir and --output cannot be used together: write every result under the out-dir, or one result to --output',
    );
  if (inputs.length > 1)
    throw new UsageError(
      '--output takes the result of exactly one input; with several files use --out-dir or --in-place',
    );
}

/** Options that only mean something for a batch, refused for a run of one input written to stdout or --output. */
function checkBatchOnly(settings: CompactSettings): void {
  if (
    !isStreamRun(settings) ||
    (settings.shard === null &&
      settings.base === undefined &&
      settings.ignore.length === 0 &&
      !settings.skipUnrecognized)
  )
    return;
  const flag =
    settings.shard !== null
      ? '--shard'
      : settings.base !== undefined
        ? '--base'
        : settings.ignore.length > 0
          ? '--ignore'
          : '--skip-unrecognized';
  throw new UsageError(`${flag} only applies to batch runs: add --out-dir, --in-place, --check or --dry-run`);
}

/** The summarize flags, checked: each applies only with --strategy summarize. */
function summarizeSettingsOf(flags: CompactFlags, strategies: readonly StrategyName[]): SummarizeSettings | null {
  if (!strategies.includes('summarize')) {
    const stray = givenFlagOf('compact', 'summarize', flags as Record<string, unknown>);
    if (stray !== undefined) onlyWith(CLI, stray, 'summarize');
    return null;
  }
  if (flags.summarizeCommand !== undefined && (flags.baseUrl !== undefined || flags.model !== undefined)) {
    throw new UsageError(
      `--summarize-command and ${flags.baseUrl !== undefined ? '--base-url' : '--model'} both say where summaries come from: give a command, or an endpoint with --base-url and --model`,
    );
  }
  if (flags.summarizeCommand === '') throw new UsageError('--summarize-command must not be empty');
  if (flags.cache === false && flags.cacheDir !== undefined)
    throw new UsageError('--no-cache and --cache-dir cannot be used together');
  return {
    summaryTokens: flagCount('summaryTokens', flags.summaryTokens),
    instructionFile: flags.summaryInstruction,
    baseUrl: flags.baseUrl,
    model: flags.model,
    command: flags.summarizeCommand,
    concurrency: flagCount('concurrency', flags.concurrency),
    cacheDir: flags.cacheDir,
    cache: flags.cache !== false,
    strict: flags.strict === true,
    minRetention: flags.minRetention === undefined ? undefined : minRetentionOf(flags.minRetention),
  };
}

/** `--min-retention`, checked: a fraction from 0 to 1 or a percentage. */
function minRetentionOf(text: string): number {
  try {
    return parseRetention(text);
  } catch (error) {
    if (error instanceof RangeError) throw new UsageError(error.message);
    throw error;
  }
}

/**
 * The `--conversation-path` pointer, checked: RFC 6901 syntax, and not with --conversation-key (a path names the
 * one place; a key is one of several places tried).
 */
export function checkConversationPath(flags: {
  conversationKey?: string;
  conversationPath?: string;
}): string | undefined {
  const pointer = flags.conversationPath;
  if (pointer === undefined) return undefined;
  if (flags.conversationKey !== undefined) {
    throw new UsageError(
      '--conversation-path and --conversation-key cannot be used together: the path names the one place the conversation is (a key K is the path /K)',
    );
  }
  try {
    parsePointer(pointer);
  } catch (error) {
    if (error instanceof PointerSyntaxError) throw new UsageError(`--conversation-path: ${error.message}`);
    throw error;
  }
  return pointer;
}

/**
 * Parses `--strategy`: one name or a comma-separated chain, applied in order; each name at most once.
 * @throws UsageError for an empty, unknown or repeated name
 */
export function parseStrategies(raw: string | undefined): StrategyName[] {
  if (raw === undefined) return ['window'];
  return checkStrategies(
    CLI,
    raw.split(',').map((name) => name.trim()),
    raw,
  );
}

/** The pipeline's thresholds for settings, or undefined for a fixed target. */
export function windowThresholds(settings: CompactSettings): WindowThresholds | undefined {
  return settings.window === null ? undefined : { trigger: settings.window.trigger, target: settings.window.target };
}

/** The counter flags of any command that counts, read as token counts are (`1,000`, `1k`). */
export function counterOptionsOf(
  flags: { charsPerToken?: string; tokensPerImage?: string; tokensPerFile?: string },
  tokenizer: TokenizerName,
): CounterOptions {
  return parseCounterOptions(
    { charsPerToken: flags.charsPerToken, tokensPerImage: flags.tokensPerImage, tokensPerFile: flags.tokensPerFile },
    tokenizer,
    (flag, raw) => parseCount(nameOfFlag(flag), flag, raw),
  );
}

/**
 * The counter's settings as plans and reports record them: every value, when any differs from Haystack's defaults
 * (4 characters per token, 85 per image, 1,000 per file); null with the defaults, so those documents stay as they were.
 */
export function counterSettingsOf(settings: Pick<CompactSettings, 'tokenizer' | 'counter'>): CounterSettings | null {
  const resolved = resolveCounterOptions(settings.counter, settings.tokenizer);
  return isDefaultSettings(resolved) ? null : resolved;
}
