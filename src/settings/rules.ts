import { hookThresholds } from '../core/hook.js';
import { noteTemplateProblem } from '../core/note.js';
import type { WindowThresholds } from '../pipeline/index.js';
import { formatNames, STRATEGIES, type StrategyName } from '../pipeline/index.js';
import { TOKENIZERS, isTokenizerName, type TokenizerName } from '../tokens/index.js';
import type { Surface } from './surface.js';

/**
 * The rules every compaction setting follows, written once for the command line and the library: each takes the
 * value already read in its surface's terms (a number, a string) and says what is wrong in that surface's names.
 */

/** A share of the context window as given: its value, and how the user wrote it (`70%`, `0.7`). */
export interface Share {
  readonly value: number;
  readonly text: string;
}

/** A window and its shares, checked: Haystack's hook thresholds, in tokens, computed in doubles as the hook does. */
export interface CheckedWindow extends WindowThresholds {
  readonly tokens: number;
}

/**
 * Checks the thresholds: `0 < compact-to < compact-at <= 1`, each refusal saying why the rule exists, and a target
 * of at least one token.
 */
export function checkWindow(s: Surface, tokens: number, compactAt: Share, compactTo: Share): CheckedWindow {
  const at = s.name('compactAt');
  const to = s.name('compactTo');
  if (compactAt.value <= 0)
    s.fail(`${at} must be above 0, got ${compactAt.text}: at 0 every file, even an empty one, would be compacted`);
  if (compactAt.value > 1) {
    s.fail(
      `${at} must be at most 1, got ${compactAt.text}: a transcript larger than its context window no longer fits it, so waiting that long is too late`,
    );
  }
  if (compactTo.value <= 0)
    s.fail(`${to} must be above 0, got ${compactTo.text}: nothing of a conversation fits in 0 tokens`);
  if (!(compactTo.value < compactAt.value)) {
    s.fail(
      `${to} (${compactTo.text}) must be below ${at} (${compactAt.text}): a compacted file has to end smaller than the size that triggers compaction, or the next run compacts it again`,
    );
  }
  const { trigger, target } = hookThresholds(tokens, compactAt.value, compactTo.value);
  if (target < 1) {
    s.fail(
      `${to} ${compactTo.text} of a ${tokens}-token window is less than one token: nothing would fit; raise ${to} or ${s.name('contextWindow')}`,
    );
  }
  return { tokens, trigger, target };
}

/**
 * Which budget is given: a fixed target, or a context window (whose shares need it).
 * @returns whether the window sets the budget
 */
export function checkBudget(
  s: Surface,
  given: { target: boolean; contextWindow: boolean; compactAt: boolean; compactTo: boolean },
): boolean {
  if (!given.contextWindow) {
    const stray = given.compactAt ? 'compactAt' : given.compactTo ? 'compactTo' : null;
    if (stray !== null)
      s.fail(`${s.name(stray)} needs ${s.ask('contextWindow', '<tokens>')}: its fraction is a share of that window`);
    return false;
  }
  if (given.target) {
    const [target, window] = [s.name('target'), s.name('contextWindow')];
    s.fail(
      `${target} and ${window} both set the budget: give ${target} for a fixed budget, or ${window} with ${s.name('compactAt')}/${s.name('compactTo')}`,
    );
  }
  return true;
}

/**
 * The strategies of a chain, named in order, each at most once.
 * @param names the names as given (a list, or a comma-separated text split at its commas)
 * @param raw the text they were split from, for the error about an empty name
 */
export function checkStrategies(s: Surface, names: readonly unknown[], raw: string): StrategyName[] {
  const choices = `choose from: ${STRATEGIES.join(', ')}${s.chainHint}`;
  if (names.length === 0) s.fail(`${s.name('strategy')} names no strategy (${choices})`);
  const out: StrategyName[] = [];
  for (const name of names) {
    if (name === '') s.fail(`${s.name('strategy')} has an empty name in ${JSON.stringify(raw)} (${choices})`);
    if (typeof name !== 'string' || !(STRATEGIES as readonly string[]).includes(name))
      s.fail(`unknown strategy ${shown(name)} (${choices})`);
    if (out.includes(name as StrategyName))
      s.fail(`${s.name('strategy')} names "${name}" twice: each strategy runs once in a chain`);
    out.push(name as StrategyName);
  }
  return out;
}

/** The settings that depend on the strategies, as given (undefined where not given). */
export interface StrategySettings {
  readonly minKeepSteps: number;
  readonly minTokens: unknown;
  readonly placeholder: unknown;
}

/**
 * Checks the settings that apply to some strategies only: each is refused without its strategy, and pruning and
 * offloading keep at least the newest step.
 */
export function checkStrategySettings(s: Surface, strategies: readonly StrategyName[], given: StrategySettings): void {
  for (const strategy of ['prune', 'offload'] as const) {
    if (strategies.includes(strategy) && given.minKeepSteps < 1) {
      s.fail(
        `${s.name('minKeepSteps')} must be at least 1 with ${s.strategy(strategy)}: the newest results are the ones the model is about to act on`,
      );
    }
  }
  const pruning = strategies.includes('prune');
  // min_tokens is a setting of both ToolResultPruningCompactor and ToolResultOffloadCompactor.
  if (!pruning && !strategies.includes('offload') && given.minTokens !== undefined)
    onlyWith(s, s.name('minTokens'), 'prune');
  if (!pruning && given.placeholder !== undefined) onlyWith(s, s.name('placeholder'), 'prune');
}

/** Refuses a setting given without the strategy it applies to. */
export function onlyWith(s: Surface, shownName: string, strategy: StrategyName): never {
  return s.fail(`${shownName} only applies with ${s.strategy(strategy)}`);
}

/** Checks a pruning placeholder's text: what the model sees in place of a result, told apart by its own text. */
export function checkPlaceholder(s: Surface, placeholder: string): void {
  const name = s.name('placeholder');
  if (placeholder === '') s.fail(`${name} must not be empty (it is what the model sees in place of a pruned result)`);
  if (placeholder.replaceAll('{tool_name}', '').trim() === '') {
    s.fail(
      `${name} needs text besides {tool_name}: earlier placeholders are recognised by that text, and a bare {tool_name} would match every result, so nothing would be pruned`,
    );
  }
}

/** Checks a note template: it needs text of its own, by which a later run knows its notes. */
export function checkNote(s: Surface, note: string): void {
  const problem = noteTemplateProblem(note);
  if (problem !== null)
    s.fail(`${s.name('note')} ${problem} (as in '[{num_removed} earlier messages were removed.]'), or ${s.noNote}`);
}

/** The format named, checked: `auto`, or a format of the registry. */
export function checkFormat(s: Surface, format: unknown): string {
  if (format !== 'auto' && !formatNames().includes(format as string))
    s.fail(`unknown format ${shown(format)} (choose one of: auto, ${formatNames().join(', ')})`);
  return format as string;
}

/** The tokenizer named, checked. */
export function checkTokenizer(s: Surface, tokenizer: unknown): TokenizerName {
  if (!isTokenizerName(tokenizer as string))
    s.fail(`unknown tokenizer ${shown(tokenizer)} (choose one of: ${TOKENIZERS.join(', ')})`);
  return tokenizer as TokenizerName;
}

/** A value as an error message shows it: a string quoted, a number as itself, anything else by what it is. */
export function shown(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === undefined || value === null)
    return String(value);
  if (typeof value === 'bigint') return `${value}n`;
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
