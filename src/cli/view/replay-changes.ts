import type { ReplayPolicy, ReplayRun } from '../../replay/types.js';
import { formatCount } from '../result-line.js';

// What each policy did to a recorded run, in words, for skimming many runs (issue 57: a 200-record file's report
// listed 200 links that looked the same). One wording for the HTML index and the text views.

/** `1 compaction`, `2 compactions`. */
function counted(n: number, word: string, many = `${word}s`): string {
  return `${formatCount(n)} ${n === 1 ? word : many}`;
}

/**
 * What a policy did that a reader looks for: its compactions, its calls over the window, the identifiers it lost
 * that were needed again, the user messages it removed, and a summarizer's calls. Empty when it did none of these.
 */
export function policyChanges(policy: ReplayPolicy): string[] {
  const out: string[] = [];
  if (policy.compactions.length > 0) out.push(counted(policy.compactions.length, 'compaction'));
  if (policy.overflows > 0) out.push(counted(policy.overflows, 'overflow'));
  if (policy.lost.length > 0) out.push(`${formatCount(policy.lost.length)} lost, then needed`);
  if (policy.removedUserMessages.length > 0)
    out.push(counted(policy.removedUserMessages.length, 'user message removed', 'user messages removed'));
  if (policy.summary.calls > 0) out.push(counted(policy.summary.calls, 'summary call'));
  return out;
}

/** Whether some policy changed the run: compacted it, called a summarizer, or went over the window. */
export function isChangedRun(run: ReplayRun): boolean {
  return run.policies.some((p) => p.compactions.length > 0 || p.overflows > 0 || p.summary.calls > 0);
}

/**
 * The run in one line: each policy that did something and what (`window: 2 compactions, 1 lost, then needed`), or
 * that none did.
 */
export function runChangesLine(run: ReplayRun): string {
  const parts = run.policies.flatMap((p) => {
    const changes = policyChanges(p);
    return changes.length === 0 ? [] : [`${p.strategy}: ${changes.join(', ')}`];
  });
  return parts.length === 0 ? 'no policy compacted, none went over the window' : parts.join('; ');
}
