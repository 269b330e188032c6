import type { Message } from '../core/types.js';
import type { Pairing } from '../formats/types.js';
import { checkMessages } from './messages.js';
import { checkPairing } from './pairing.js';
import { providerOf, severityOf } from './rules.js';
import type { Finding, Problem } from './types.js';

/**
 * All of a conversation's problems, placed in the file and in file order, each an error or a warning by what the
 * format's provider rejects. Pure: the pairing comes from the format adapter, and where items are (in the file and in
 * the normalized messages) from the caller.
 */

/** What the checks of one conversation need. */
export interface ProblemInput {
  /** The format's name (an adapter's `name`): it tells whose rules make a problem an error (rules.ts). */
  readonly format: string;
  /** The calls, results, items of unknown role and format problems the adapter found, or null when it reports none. */
  readonly pairing: Pairing | null;
  /** The normalized messages (without the items of unknown role). */
  readonly messages: readonly Message[];
  /** The message an item of the list belongs to, or null for an item that is no message. */
  messageOf(item: number): number | null;
  /** The first item of the list a message stands for, or null for one held outside the list. */
  firstItemOf(message: number): number | null;
  /** Where an item of the list starts in the file (1-based line and column). */
  locate(item: number): { line: number; column: number };
}

/**
 * Finds every problem of a conversation: items of unknown role, tool pairing, the adapter's own format problems and
 * the checks of each message, each an error when the format's provider rejects it and a warning otherwise.
 * @param input the conversation, its format and how to place its items
 * @returns the problems, by line, then column, then kind
 */
export function findProblems(input: ProblemInput): Problem[] {
  const { pairing, messages, messageOf, firstItemOf, locate } = input;
  const provider = providerOf(input.format);
  const findings: Finding[] = [];
  for (const u of pairing?.unknownRoles ?? []) {
    findings.push({
      kind: 'unknown-role',
      rule: 'unknown-role',
      item: u.item,
      text:
        u.role === null
          ? 'not a message with a role (left out of the structure above)'
          : `unknown role ${JSON.stringify(u.role)} (left out of the structure above)`,
    });
  }
  if (pairing !== null) {
    // One by one: a long conversation can have more findings than a call takes arguments.
    for (const f of checkPairing(pairing, messageOf, messages, (item) => locate(item).line)) findings.push(f);
    for (const p of pairing.problems ?? [])
      findings.push({ kind: 'format', rule: 'format', item: p.item, text: p.text });
    for (const r of pairing.running ?? [])
      findings.push({ kind: 'missing-result', rule: 'unfinished-call', item: r.item, text: r.text });
  }
  const problems: Problem[] = findings.map((f) => ({
    kind: f.kind,
    severity: severityOf(provider, f.rule),
    item: f.item,
    message: messageOf(f.item),
    ...locate(f.item),
    text: f.text,
  }));
  for (const p of checkMessages(messages)) {
    const item = firstItemOf(p.message);
    // Instructions held outside the list stand for no item: they are placed at the file's start.
    const at = item === null ? { line: 1, column: 1 } : locate(item);
    problems.push({
      kind: p.kind,
      severity: severityOf(provider, p.rule),
      item: item ?? -1,
      message: p.message,
      ...at,
      text: p.text,
    });
  }
  problems.sort((a, b) => a.line - b.line || a.column - b.column || a.kind.localeCompare(b.kind));
  return problems;
}
