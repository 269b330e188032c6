import type { Plan } from '../core/compact.js';
import type { FileResult } from '../pipeline.js';

/** Formats a count with thousands separators, the same on every machine. */
export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}

/** Why a plan missed its target, in one phrase, or null when it met it. */
export function missReason(plan: Plan, target: number): string | null {
  if (plan.targetMet) return null;
  if (plan.protectedTokens !== null && plan.protectedTokens > target) {
    return `the instructions and the current task alone take ${formatCount(plan.protectedTokens)}`;
  }
  if (plan.heldByMinKeepSteps) return 'min_keep_steps kept steps larger than the budget';
  if (!plan.changed) return 'nothing can be removed under the rules';
  return 'the note and the newlines joining the kept groups, which the budget does not count, push it over';
}

/** The one-line summary of a file's compaction for stderr. */
export function describeOutcome(result: FileResult, target: number, tokenizer: string): string {
  const plans = result.conversations.map((c) => c.plan);
  const before = plans.reduce((a, p) => a + p.tokensBefore, 0);
  const exact = plans.every((p) => p.tokensBeforeExact);
  const after = plans.reduce((a, p) => a + p.tokensAfter, 0);
  const removed = plans.reduce((a, p) => a + p.removedCount, 0);
  const total = plans.reduce((a, p) => a + p.removedCount + p.keptCount, 0);
  const name = result.file;
  if (result.records || plans.length > 1) {
    const metCount = plans.filter((p) => p.targetMet).length;
    const miss = plans.map((p) => missReason(p, target)).find((r) => r !== null);
    return (
      `swc: ${name}: ${formatCount(plans.length)} conversations, ${formatCount(result.changedConversations)} compacted, ` +
      `${formatCount(plans.length - result.changedConversations)} unchanged; ` +
      `${exact ? '' : 'at least '}${formatCount(before)} → ${formatCount(after)} tokens (${tokenizer}); ` +
      `removed ${formatCount(removed)} of ${formatCount(total)} messages; target ${formatCount(target)} met in ` +
      (metCount === plans.length ? 'every conversation' : `${formatCount(metCount)} of ${formatCount(plans.length)} (first miss: ${miss})`)
    );
  }
  if (!result.changed) {
    const why = plans.every((p) => p.unchanged === 'fits') ? `fits the target ${formatCount(target)}` : 'nothing to remove';
    const miss = plans.map((p) => missReason(p, target)).find((r) => r !== null);
    return `swc: ${name}: unchanged, ${formatCount(after)} tokens (${tokenizer}), ${why}${miss ? `; target not met: ${miss}` : ''}`;
  }
  const met = plans.every((p) => p.targetMet);
  const miss = plans.map((p) => missReason(p, target)).find((r) => r !== null);
  return (
    `swc: ${name}: ${exact ? formatCount(before) : `more than ${formatCount(target)}`} → ${formatCount(after)} tokens (${tokenizer}), ` +
    `removed ${formatCount(removed)} of ${formatCount(total)} messages; ` +
    (met ? `target ${formatCount(target)} met` : `target ${formatCount(target)} not met: ${miss}`)
  );
}
