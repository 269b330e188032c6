/**
 * What the lint checks report: problems at an item of the conversation's list, then placed in the file, each an
 * error (the format's provider rejects it) or a warning (it does not, or not every provider does).
 */

/** The kinds of problem the checks find. */
export type ProblemKind =
  'missing-result' | 'orphan-result' | 'duplicate-id' | 'empty-assistant' | 'unknown-role' | 'format';

/**
 * The rules behind the kinds, fine enough that each provider either rejects what one names or accepts it
 * (docs/inspect-rules.md has each with its source):
 * - `missing-result`: a call that no result after it answers;
 * - `unfinished-call`: a call without a result at the end of a session that was still running (Codex);
 * - `result-not-after-call`: a call whose result is elsewhere, or that result (its call is not right before it);
 * - `orphan-result`: a result whose id (or, without one, name) no call has;
 * - `repeated-result`: a second result for a call that already has one;
 * - `reused-id`: a call id that a call of an earlier message already used;
 * - `shared-id`: a call id that another call of the same message has;
 * - `empty-assistant` / `blank-assistant`: an assistant message with no content at all / only empty or blank text;
 * - `empty-final-assistant` / `blank-final-assistant`: the same as the conversation's last message;
 * - `unknown-role`: an item of no role the format knows;
 * - `format`: anything else the adapter reports (a tool block on the wrong side, a call without its id).
 */
export type Rule =
  | 'missing-result'
  | 'unfinished-call'
  | 'result-not-after-call'
  | 'orphan-result'
  | 'repeated-result'
  | 'reused-id'
  | 'shared-id'
  | 'empty-assistant'
  | 'blank-assistant'
  | 'empty-final-assistant'
  | 'blank-final-assistant'
  | 'unknown-role'
  | 'format';

/** An error fails the run (exit 1): the provider rejects it. A warning is shown and leaves the exit code alone. */
export type Severity = 'error' | 'warning';

/** A problem at one item of the conversation's list, before it is placed in the file. */
export interface Finding {
  readonly kind: ProblemKind;
  readonly rule: Rule;
  /** The item of the conversation's list (0-based): a message, or for some formats one line of it. */
  readonly item: number;
  readonly text: string;
}

/** A problem found in a message of the normalized conversation, before it is placed in the file. */
export interface MessageFinding {
  readonly kind: ProblemKind;
  readonly rule: Rule;
  /** The message (0-based, as in the groups). */
  readonly message: number;
  readonly text: string;
}

/** A problem placed in the file. */
export interface Problem {
  readonly kind: ProblemKind;
  /** Whether the provider of the conversation's format rejects it (see rules.ts). */
  readonly severity: Severity;
  /** The item of the conversation's list (0-based), or -1 for a message that stands for no item. */
  readonly item: number;
  /** The message it belongs to (0-based, as in the groups), or null for an item that is no message. */
  readonly message: number | null;
  readonly line: number;
  readonly column: number;
  readonly text: string;
}
