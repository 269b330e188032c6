import type { Message } from './types.js';

// What the structure of a conversation that only grows keeps from one call to the next. A warm compactor hands the
// core the same normalized list on every step, with the new messages appended: where turns and steps begin, the task,
// and the total weight of what came before are known already, so a step reads the new messages alone, not the whole
// history again.

/** What is known of a list, up to its length when asked: each list ascending, its first elements never changing. */
export interface Known {
  /** The user messages no compaction marked: where turns begin, and the candidates for the task. */
  readonly users: readonly number[];
  /** The assistant messages: where steps begin (see `stepSpans`). */
  readonly assistants: readonly number[];
  /** The assistant messages right after an assistant message: where a run of them goes on (see `stepSpans`). */
  readonly followers: readonly number[];
  /** The messages no step holds wherever steps are looked for: neither an assistant nor a tool of the run after one. */
  readonly outsideSteps: readonly number[];
  /**
   * Total weight (`Message.weight`, 1 by default), or null when some weight is not a whole number: a sum of fractions
   * less a part of it need not be that part's complement to the last bit, so the removed are then weighed one by one.
   */
  readonly weight: number | null;
}

/** What is known of a list's first `scanned` messages. */
class GrowingIndex implements Known {
  readonly users: number[] = [];
  readonly assistants: number[] = [];
  readonly followers: number[] = [];
  readonly outsideSteps: number[] = [];
  weight: number | null = 0;
  scanned = 0;
  /** Whether the latest message that is not a tool is an assistant: a tool appended next is in its step. */
  private stepping = false;
  /** The last message scanned: a list found without it at its place was not only appended to. */
  private last: Message | undefined = undefined;

  /** Reads the messages appended since; false when the list is not what was scanned (then nothing is known). */
  extend(messages: readonly Message[]): boolean {
    const scanned = this.scanned;
    if (messages.length < scanned || (scanned > 0 && messages[scanned - 1] !== this.last)) return false;
    for (let i = scanned; i < messages.length; i++) {
      const m = messages[i] as Message;
      if (m.role === 'user' && m.compaction === undefined) this.users.push(i);
      if (m.role === 'assistant') {
        if (messages[i - 1]?.role === 'assistant') this.followers.push(i);
        this.assistants.push(i);
      }
      if (m.role !== 'tool') this.stepping = m.role === 'assistant';
      else if (!this.stepping) this.outsideSteps.push(i);
      if (m.role !== 'assistant' && m.role !== 'tool') this.outsideSteps.push(i);
      const w = m.weight ?? 1;
      this.weight = this.weight === null || !Number.isInteger(w) ? null : this.weight + w;
    }
    this.scanned = messages.length;
    this.last = messages[messages.length - 1];
    return true;
  }
}

const GROWING = new WeakMap<readonly Message[], GrowingIndex>();

/**
 * Marks a list as one its owner only appends to (never replaces, removes, reorders or edits a message of), so what
 * its structure needs is read once per message across calls. Marking it again keeps what is known.
 * @param list the list; its messages are read when it is next analyzed
 */
export function growsOnly(list: readonly Message[]): void {
  if (!GROWING.has(list)) GROWING.set(list, new GrowingIndex());
}

/**
 * What is known of a list marked by `growsOnly`, read up to its current length, or null for any other list (and
 * for one found changed other than by appending: it is then forgotten). It is read as it is now: a later call
 * appends to its lists (their first elements never change) and adds to its weight.
 */
export function knownOf(messages: readonly Message[]): Known | null {
  const index = GROWING.get(messages);
  if (index === undefined) return null;
  if (index.extend(messages)) return index;
  GROWING.delete(messages);
  return null;
}
