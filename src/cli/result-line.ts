import { escapeForLine } from '../errors.js';
import type { Miss, MissContext, TokenFigure } from '../outcome/outcome.js';
import type { ConversationResult, FileResult } from '../pipeline/index.js';
import type { WindowSettings } from './settings.js';

/**
 * What swc says about one file in words: the one-line outcome on stderr (the same line for -o, --in-place,
 * --out-dir and --check), and the phrases for a missed target and a file below the window threshold, which the
 * dry run uses too. The numbers come from the outcome (src/outcome), so every mode says the same.
 */

/** Formats a count with thousands separators, the same on every machine. */
export function formatCount(n: number): string {
  // Whole numbers by hand: Intl formatting costs a large batch's summary lines more than their files' counting.
  if (!Number.isSafeInteger(n) || Object.is(n, -0)) return n.toLocaleString('en-US');
  const digits = String(Math.abs(n));
  let out = digits.slice(0, ((digits.length - 1) % 3) + 1);
  for (let i = out.length; i < digits.length; i += 3) out += `,${digits.slice(i, i + 3)}`;
  return n < 0 ? `-${out}` : out;
}

/** `70%` for 0.7: a share as a percentage, without binary-float noise. */
export function percent(share: number): string {
  return `${Number((share * 100).toPrecision(12))}%`;
}

/** `below the threshold 211 (70% of 300)`: the compact-at threshold a file stayed under. */
export function thresholdText(window: WindowSettings): string {
  return `below the threshold ${formatCount(window.trigger)} (${percent(window.compactAt.value)} of ${formatCount(window.tokens)})`;
}

/** `7,632`, or `≈9,870,000` for an estimate. */
export function figureText(figure: TokenFigure): string {
  return `${figure.exact ? '' : '≈'}${formatCount(figure.tokens)}`;
}

/**
 * The change from before to after in percent with a true minus sign: `−74%`, `+3%`, `0%`. Whole percentages, except
 * that a change that would round to 0% or −100% gets one decimal, rounded towards zero (`−0.4%`, `−99.8%`), so only
 * no change reads 0% and only nothing left reads −100%. `≈` leads when "before" is an estimate; null when before is 0.
 */
export function changeText(before: TokenFigure, after: number): string | null {
  if (before.tokens <= 0) return null;
  const share = ((after - before.tokens) / before.tokens) * 100;
  const size = Math.abs(share);
  const sign = share < 0 ? '−' : '+';
  let body: string;
  if (after === before.tokens) body = '0%';
  else if (after === 0) body = '−100%';
  else if (Math.round(size) === 0 || Math.round(size) === 100)
    body = `${sign}${Math.max(Math.trunc(size * 10) / 10, 0.1)}%`;
  else body = `${sign}${Math.round(size)}%`;
  return `${before.exact ? '' : '≈'}${body}`;
}

/** A file's tokens before and after, tool schemas included (window thresholds count them). */
export function fileTokens(result: FileResult): { before: TokenFigure; after: number } {
  let before = 0;
  let after = 0;
  let exact = true;
  for (const c of result.conversations) {
    before += c.outcome.before.tokens + c.toolTokens;
    after += c.plan.tokensAfter + c.toolTokens;
    exact &&= c.outcome.before.exact;
  }
  return { before: { tokens: before, exact }, after };
}

/** `7,632 → 1,952 tokens (−74%, o200k_base)`: the figures of one file. */
function tokensText(result: FileResult, tokenizer: string): string {
  const { before, after } = fileTokens(result);
  const change = changeText(before, after);
  return `${figureText(before)} → ${formatCount(after)} tokens (${change === null ? '' : `${change}, `}${tokenizer})`;
}

/** `2 tokens`, `1 token`. */
function tokens(n: number): string {
  return `${formatCount(n)} token${n === 1 ? '' : 's'}`;
}

/** Who the protected part is: the instructions, the current task, or both. */
function protectedWho(context: MissContext): { who: string; verb: string } {
  if (context.instructions && context.task) return { who: 'the instructions and the current task', verb: 'take' };
  if (context.task) return { who: 'the current task', verb: 'takes' };
  return { who: 'the instructions', verb: 'take' };
}

/**
 * Why a target is missed, in one phrase with its units: the one wording of every summary line, batch line and dry run.
 * @param miss the reason plan-json.ts found
 * @param context min_keep_steps, the protected part's make-up, the target and the tool schemas
 */
export function missText(miss: Miss, context: MissContext): string {
  switch (miss.kind) {
    case 'tools':
      return `the tool schemas alone take ${tokens(miss.toolTokens)}, ${miss.toolTokens > miss.target ? 'more than' : 'all of'} the ${formatCount(miss.target)}-token target`;
    case 'protected': {
      const { who, verb } = protectedWho(context);
      const tools =
        context.toolTokens > 0
          ? `, more than the ${tokens(context.target)} the tool schemas (${tokens(context.toolTokens)}) leave of the target`
          : '';
      return `${who} alone ${verb} ${tokens(miss.protectedTokens)}${tools}`;
    }
    case 'min-keep-steps': {
      const which = miss.steps === 1 ? 'the newest step' : `the ${formatCount(miss.steps)} newest steps`;
      return `min_keep_steps ${context.minKeepSteps} held ${which} (${tokens(miss.stepTokens)}), more than the ${tokens(miss.budget)} left`;
    }
    case 'earlier-notes':
      return `only earlier notes could go, and a new note would take their place (${tokens(miss.tokensAfter)})`;
    case 'note':
      return miss.noteTokens === null
        ? `the kept messages fit, but with the note they come to ${tokens(miss.tokensAfter)}`
        : `the kept messages fit, but the note (${tokens(miss.noteTokens)}) brings them to ${tokens(miss.tokensAfter)}`;
    case 'joined':
      return `the kept groups fit one by one, but counted together they come to ${tokens(miss.tokensAfter)}`;
    case 'below-trigger':
      return 'pruning brought it below the compact-at threshold, where the window leaves a conversation alone';
    case 'nothing-to-prune':
      return 'no other tool result may be pruned (the newest steps, small results and earlier placeholders stay)';
    case 'nothing-to-offload':
      return 'no other tool result may be offloaded (the newest steps, short results, errors and non-text results stay)';
    case 'summary-floor':
      return 'nothing else may be summarized (the instructions, the task, one summary each side of it and the newest steps stay)';
    case 'summary-failed':
      return 'a summary round failed; the last good result is kept';
  }
}

/**
 * What a compaction did to a file's messages, naming only what happened: `removed 54 of 62 messages, pruned 1 tool
 * result`, `offloaded 5 tool results` (no `removed 0 of 24 messages` beside it), and `kept all 24 messages` when none
 * of them is more than zero.
 * @param lookOnly nothing is written: `would remove`, `would prune`, `would offload`
 */
export function doneText(
  counts: { removed: number; total: number; pruned: number; offloaded: number },
  lookOnly: boolean,
): string {
  const verb = (done: string, would: string): string => (lookOnly ? `would ${would}` : done);
  const results = (n: number): string => `${formatCount(n)} tool result${n === 1 ? '' : 's'}`;
  const parts = [
    ...(counts.removed > 0
      ? [`${verb('removed', 'remove')} ${formatCount(counts.removed)} of ${formatCount(counts.total)} messages`]
      : []),
    ...(counts.pruned > 0 ? [`${verb('pruned', 'prune')} ${results(counts.pruned)}`] : []),
    ...(counts.offloaded > 0 ? [`${verb('offloaded', 'offload')} ${results(counts.offloaded)}`] : []),
  ];
  if (parts.length > 0) return parts.join(', ');
  const all = counts.total === 1 ? 'the one message' : `all ${formatCount(counts.total)} messages`;
  return `${verb('kept', 'keep')} ${all}`;
}

/** What the outcome line needs besides the result. */
export interface LineContext {
  readonly tokenizer: string;
  /** The run's target: --target, or context window × compact-to. */
  readonly target: number;
  readonly minKeepSteps: number;
  readonly window?: WindowSettings | null | undefined;
  /** Nothing is written (--check, --dry-run): the line says what would happen. */
  readonly lookOnly?: boolean;
}

/** Why a conversation misses its target, phrased, or null when it meets it. */
export function missReason(c: ConversationResult): string | null {
  const { miss } = c.outcome;
  return miss === null ? null : missText(miss, c.outcome.missContext);
}

/**
 * Why a file is over its target, for `--fail-over-target`, or null when every conversation meets it: the reason, and
 * in a file of several conversations how many miss and where the first does.
 */
export function overTargetText(result: FileResult, target: number): string | null {
  const cs = result.conversations;
  const missed = cs.filter((c) => !c.plan.targetMet);
  const first = missed[0];
  if (first === undefined) return null;
  const reason = missReason(first) ?? 'no compaction brings it under';
  const over = `over its target ${formatCount(target)}`;
  if (!result.records && cs.length === 1) return `${over}: ${reason}`;
  return `${over} in ${formatCount(missed.length)} of ${formatCount(cs.length)} conversations (first, ${escapeForLine(first.slot.where)}: ${reason})`;
}

/** Why an unchanged conversation stayed as it was. */
function unchangedWhy(c: ConversationResult, context: LineContext): string {
  if (c.outcome.belowThreshold) return thresholdText(context.window as WindowSettings);
  // A chain without the window leaves a conversation it could not shrink "fitting" a target it may still miss.
  if (c.plan.unchanged === 'fits')
    return c.plan.targetMet ? `fits the target ${formatCount(context.target)}` : 'nothing could be changed';
  if (c.plan.unchanged === 'only-notes') return 'only earlier notes would go';
  return 'nothing can be removed';
}

/**
 * The one-line outcome of a file, the same in every mode. Tokens include the tool schemas when window thresholds
 * count them; messages are counted in the file's own terms (see `messageCounts`).
 * @param result the pipeline's outcome
 * @param path the name to show
 * @param context tokenizer, target, min_keep_steps, counter, window
 * @param every give a file that did not change and meets its target a line too (a run on one named file)
 * @returns the line, or null when the file is not worth one
 */
export function outcomeLine(result: FileResult, path: string, context: LineContext, every = true): string | null {
  const cs = result.conversations;
  const sum = (f: (c: (typeof cs)[number]) => number): number => cs.reduce((a, c) => a + f(c), 0);
  const { after } = fileTokens(result);
  const counts = cs.map((c) => c.outcome.counts);
  const removed = counts.reduce((a, n) => a + n.removed, 0);
  const total = counts.reduce((a, n) => a + n.before, 0);
  const met = cs.filter((c) => c.plan.targetMet).length;
  const prunedCount = sum((c) => c.pruned?.reduce((a, p) => a + p.tools.length, 0) ?? 0);
  const offloadedCount = sum((c) => c.offloaded?.reduce((a, p) => a + p.tools.length, 0) ?? 0);
  if (!result.changed && met === cs.length && !every) return null;
  const name = escapeForLine(path);
  const target = formatCount(context.target);
  const compactedWord = context.lookOnly === true ? 'would be compacted' : 'compacted';
  const done = doneText({ removed, total, pruned: prunedCount, offloaded: offloadedCount }, context.lookOnly === true);
  const firstMiss = cs.find((c) => !c.plan.targetMet);
  const reason = firstMiss === undefined ? null : missReason(firstMiss);
  if (result.records || cs.length > 1) {
    const where = firstMiss === undefined ? '' : ` (first miss, ${escapeForLine(firstMiss.slot.where)}: ${reason})`;
    return (
      `swc: ${name}: ${formatCount(cs.length)} conversations, ${formatCount(result.changedConversations)} ${compactedWord}, ` +
      `${formatCount(cs.length - result.changedConversations)} unchanged; ` +
      `${tokensText(result, context.tokenizer)}; ` +
      `${done}; target ${target} met in ` +
      (met === cs.length ? 'every conversation' : `${formatCount(met)} of ${formatCount(cs.length)}${where}`)
    );
  }
  const verdict = firstMiss === undefined ? `target ${target} met` : `target ${target} not met: ${reason}`;
  const only = cs[0];
  if (!result.changed) {
    const why = only === undefined ? 'nothing to compact' : unchangedWhy(only, context);
    return `swc: ${name}: unchanged, ${formatCount(after)} tokens (${context.tokenizer}), ${why}${firstMiss === undefined ? '' : `; ${verdict}`}`;
  }
  return `swc: ${name}: ${tokensText(result, context.tokenizer)}, ` + `${done}; ${verdict}`;
}

/** The one-line summary of a file's compaction for stderr (a run on one file to stdout or --output). */
export function describeOutcome(result: FileResult, context: LineContext): string {
  return outcomeLine(result, result.file, context) as string;
}
