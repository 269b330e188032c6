import type { Group, GroupKind } from '../core/compact.js';
import type { Message } from '../core/types.js';
import type { Normalized } from '../formats/types.js';
import type { Problem } from '../lint/types.js';
import { countOf, itemSpan, type ItemSpan } from './outcome.js';

/**
 * What `swc inspect` shows of a file: each conversation's groups, counted, with message counts and item ranges in
 * the file's own terms, token sums by kind of group, and its problems. Worked out once, while the counter is at
 * hand; the text and JSON outputs read it and never measure.
 */

/** Messages and tokens of one kind of group. */
export interface KindTotals {
  readonly groups: number;
  readonly messages: number;
  readonly tokens: number;
}

/** How a conversation's tokens split among its kinds of groups. */
export type ConversationTotals = Record<'system' | 'turns' | 'task' | 'steps' | 'orphans', KindTotals>;

/** One group as inspect lists it: its items in the file's list, and how many messages it holds in the file's count. */
export interface GroupRow {
  readonly span: ItemSpan;
  readonly messages: number;
}

/** One conversation as inspect sees it. */
export interface InspectedConversation {
  readonly where: string;
  readonly format: string;
  readonly messages: readonly Message[];
  /** The file items each message stands for: ranges and counts are in the file's own terms, as in the dry run. */
  readonly itemsOf: Normalized['itemsOf'];
  /** Every group in conversation order, each counted. */
  readonly groups: readonly Group[];
  /** For each group, in the same order: its items and message count. */
  readonly rows: readonly GroupRow[];
  readonly tokens: number;
  /** How many messages it has, in the file's own count. */
  readonly messageCount: number;
  readonly totals: ConversationTotals;
  readonly problems: readonly Problem[];
  /** False when the format cannot report call ids, so pairing was not checked. */
  readonly pairingChecked: boolean;
}

/** One file as inspect sees it. */
export interface Inspection {
  readonly file: string;
  /** The formats of its conversations, in order of first use, joined with ", ". */
  readonly format: string;
  readonly tokenizer: string;
  readonly conversations: readonly InspectedConversation[];
}

/** What a conversation's inspection is worked out from. */
export type InspectedParts = Omit<InspectedConversation, 'rows' | 'messageCount' | 'totals'>;

/**
 * Completes a conversation's inspection with what its outputs show: per-group rows, the message count and totals.
 * @param parts the conversation, its counted groups and its problems
 */
export function inspectedConversation(parts: InspectedParts): InspectedConversation {
  const { messages, groups, itemsOf } = parts;
  return {
    ...parts,
    rows: groups.map((g) => ({ span: itemSpan(itemsOf, g), messages: countOf(messages, g.indices, itemsOf) })),
    messageCount: messages.reduce((a, m) => a + (m.weight ?? 1), 0),
    totals: conversationTotals(messages, groups, itemsOf),
  };
}

/**
 * How a conversation's tokens split among its kinds of groups.
 * @param messages the normalized conversation
 * @param groups its groups, each counted
 * @param itemsOf the file items each message stands for, so counts are in the file's own terms
 */
export function conversationTotals(
  messages: readonly Message[],
  groups: readonly Group[],
  itemsOf?: Normalized['itemsOf'],
): ConversationTotals {
  return {
    system: totalsOf(messages, groups, 'system', itemsOf),
    turns: totalsOf(messages, groups, 'turn', itemsOf),
    task: totalsOf(messages, groups, 'task', itemsOf),
    steps: totalsOf(messages, groups, 'step', itemsOf),
    orphans: totalsOf(messages, groups, 'orphan', itemsOf),
  };
}

function totalsOf(
  messages: readonly Message[],
  groups: readonly Group[],
  kind: GroupKind,
  itemsOf?: Normalized['itemsOf'],
): KindTotals {
  const of = groups.filter((g) => g.kind === kind);
  return {
    groups: of.length,
    messages: of.reduce((a, g) => a + countOf(messages, g.indices, itemsOf), 0),
    tokens: of.reduce((a, g) => a + (g.tokens ?? 0), 0),
  };
}
