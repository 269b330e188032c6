import { escapeForLine } from '../../errors.js';
import { totalsOf, type FileRecord } from '../report.js';
import { changeText, formatCount } from '../result-line.js';
import { displayWidth, padEndTo, padStartTo } from './text-width.js';

/**
 * `--dry-run --stat`: one line per file and a total, like `git diff --stat`. Pure: records in, text out. A file
 * that would not change and meets its target gets a line only when `every` is set (--verbose); failed and skipped
 * files are said on stderr and only counted here.
 */

/** `−54 messages`, `−1 message`. */
function removedText(n: number): string {
  return `${n === 0 ? '' : '−'}${formatCount(n)} message${n === 1 ? '' : 's'}`;
}

/** `≈20,878,711` for an estimate. */
function beforeText(record: FileRecord): string {
  return `${record.tokensBeforeExact ? '' : '≈'}${formatCount(record.tokensBefore ?? 0)}`;
}

/** `forgets 12`, `forgets 3, 2 in the store`: the identifiers a file's compaction forgets; empty for a file that would not change. */
function forgetsCell(record: FileRecord): string {
  if (record.status !== 'compacted' || record.identifiersForgotten === undefined) return '';
  const stored = record.identifiersRecoverable ?? 0;
  return `forgets ${formatCount(record.identifiersForgotten)}${stored > 0 ? `, ${formatCount(stored)} in the store` : ''}`;
}

/**
 * `pruned 1,982`, `offloaded 310`, `pruned 40, offloaded 310`: what pruning and offloading saved (`+12` where pointers
 * are longer than the results they replace), the parts that are not 0; empty where they saved nothing.
 */
function savedText(saved: FileRecord['saved'] | null): string {
  if (saved === undefined || saved === null) return '';
  const figure = (tokens: number): string => (tokens < 0 ? `+${formatCount(-tokens)}` : formatCount(tokens));
  return [
    ...(saved.pruned !== 0 ? [`pruned ${figure(saved.pruned)}`] : []),
    ...(saved.offloaded !== 0 ? [`offloaded ${figure(saved.offloaded)}`] : []),
  ].join(', ');
}

/** The width a stat line keeps to when it can (a terminal's usual 80 columns). */
const STAT_WIDTH = 80;

/** Whether a file gets a line: it would change, misses its target, or every file is wanted. */
export function isStatShown(record: FileRecord, every: boolean): boolean {
  if (record.status === 'failed' || record.status === 'skipped') return false;
  return every || record.status === 'compacted' || record.targetMet === false;
}

/**
 * The stat view of a dry run.
 * @param records every file of the run, in path order
 * @param tokenizer the counter's name, for the total
 * @param every show files that would not change too (--verbose)
 * @returns the lines, each ending with a newline
 */
export function renderStat(records: readonly FileRecord[], tokenizer: string, every: boolean): string {
  const shown = records.filter((r) => isStatShown(r, every));
  const cells = shown.map((r) => {
    const change = changeText({ tokens: r.tokensBefore ?? 0, exact: r.tokensBeforeExact }, r.tokensAfter ?? 0) ?? '';
    return {
      path: escapeForLine(r.path),
      before: beforeText(r),
      after: formatCount(r.tokensAfter ?? 0),
      change,
      removed: r.status === 'compacted' ? removedText(r.messagesRemoved ?? 0) : 'unchanged',
      saved: savedText(r.saved),
      forgets: forgetsCell(r),
      verdict: verdictOf(r),
    };
  });
  const width = (pick: (c: (typeof cells)[number]) => string): number =>
    cells.reduce((m, c) => Math.max(m, displayWidth(pick(c))), 0);
  const w = {
    path: width((c) => c.path),
    before: width((c) => c.before),
    after: width((c) => c.after),
    change: width((c) => c.change),
    removed: width((c) => c.removed),
    saved: width((c) => c.saved),
    forgets: width((c) => c.forgets),
  };
  const line = (c: (typeof cells)[number], saved: boolean): string =>
    `${padEndTo(c.path, w.path)}  ${padStartTo(c.before, w.before)} → ${padStartTo(c.after, w.after)} tokens  ${padStartTo(c.change, w.change)}  ` +
    `${padStartTo(c.removed, w.removed)}  ${saved && w.saved > 0 ? `${padEndTo(c.saved, w.saved)}  ` : ''}` +
    `${w.forgets > 0 ? `${padEndTo(c.forgets, w.forgets)}  ` : ''}${c.verdict}`;
  const widest = (saved: boolean): number => cells.reduce((m, c) => Math.max(m, displayWidth(line(c, saved))), 0);
  // What pruning and offloading saved is a column where it fits; lines that fit in 80 columns without it keep to them,
  // the savings then on a line of their own below.
  const inColumn = widest(true) <= STAT_WIDTH || widest(false) > STAT_WIDTH;
  const lines = cells.flatMap((c) =>
    inColumn || c.saved === '' ? [line(c, true)] : [line(c, false), `${' '.repeat(w.path + 2)}${c.saved}`],
  );
  lines.push(totalLine(records, tokenizer, shown.length));
  return `${lines.join('\n')}\n`;
}

/** A file's verdict: met or not, and for a file of several conversations, in how many of them. */
function verdictOf(r: FileRecord): string {
  if (r.conversationsMet !== undefined)
    return `target met in ${formatCount(r.conversationsMet)} of ${formatCount(r.conversations)}`;
  return r.targetMet === false ? 'target not met' : 'target met';
}

/**
 * `3 files, 2 would change, 1 unchanged: 7,836 → 2,084 tokens (−73%, o200k_base), −62 messages; target met in 2 of 3`;
 * `2 files, 0 would change, 2 unchanged (2 not shown): 5 tokens (o200k_base), nothing would change; target met in 2 of 2`.
 */
function totalLine(records: readonly FileRecord[], tokenizer: string, shown: number): string {
  const t = totalsOf(records);
  const counted = t.compacted + t.unchanged;
  const hidden = counted - shown;
  const exact = t.tokensBeforeExact;
  const before = `${exact ? '' : '≈'}${formatCount(t.tokensBefore)}`;
  // Counted by conversation where a file holds several, as compact's own line counts them.
  const several = records.some((r) => r.conversationsMet !== undefined);
  const met = several
    ? `target met in ${formatCount(t.conversationsMet)} of ${formatCount(t.conversations)} conversations`
    : `target met in ${formatCount(counted - t.targetMissed)} of ${formatCount(counted)}`;
  const parts = [
    `${formatCount(t.files)} file${t.files === 1 ? '' : 's'}`,
    `${formatCount(t.compacted)} would change`,
    `${formatCount(t.unchanged)} unchanged${hidden > 0 ? ` (${formatCount(hidden)} not shown)` : ''}`,
    ...(t.skipped > 0 ? [`${formatCount(t.skipped)} skipped`] : []),
    ...(t.failed > 0 ? [`${formatCount(t.failed)} failed`] : []),
  ];
  if (t.compacted === 0) {
    // Nothing would change: a 0% change and "0 messages" would read as a result; say what is true instead.
    return `${parts.join(', ')}: ${before} tokens (${tokenizer}${exact ? '' : '; includes estimates'}), nothing would change; ${met}`;
  }
  const change = changeText({ tokens: t.tokensBefore, exact }, t.tokensAfter);
  const saved = savedText(t.saved);
  return (
    `${parts.join(', ')}: ${before} → ${formatCount(t.tokensAfter)} tokens (${change === null ? '' : `${change}, `}${tokenizer}` +
    `${exact ? '' : '; before includes estimates'}), ${removedText(t.messagesRemoved)}${saved === '' ? '' : `, ${saved}`}; ${met}`
  );
}
