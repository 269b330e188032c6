/**
 * What the lint checks report: problems a provider would reject a transcript for, first at an item of the
 * conversation's list, then placed in the file.
 */

/** The kinds of problem the checks find. */
export type ProblemKind = 'missing-result' | 'orphan-result' | 'duplicate-id' | 'empty-assistant' | 'unknown-role' | 'format';

/** A problem at one item of the conversation's list, before it is placed in the file. */
export interface Finding {
  readonly kind: ProblemKind;
  /** The item of the conversation's list (0-based): a message, or for some formats one line of it. */
  readonly item: number;
  readonly text: string;
}

/** A problem found in a message of the normalized conversation, before it is placed in the file. */
export interface MessageFinding {
  readonly kind: ProblemKind;
  /** The message (0-based, as in the groups). */
  readonly message: number;
  readonly text: string;
}

/** A problem placed in the file. */
export interface Problem {
  readonly kind: ProblemKind;
  /** The item of the conversation's list (0-based), or -1 for a message that stands for no item. */
  readonly item: number;
  /** The message it belongs to (0-based, as in the groups), or null for an item that is no message. */
  readonly message: number | null;
  readonly line: number;
  readonly column: number;
  readonly text: string;
}
