import type { Message } from './types.js';

// What the structure of a conversation that only grows keeps from one call to the next. A warm compactor hands the
// core the same normalized list on every step, with the new messages appended: the real user messages (where turns
// begin, and the task) and the total weight of what came before are known already, so a step reads the new messages
// alone, not the whole history again.

/** What is known of a list's first `scanned` messages. */
class GrowingIndex {
  /** Indices of the user messages no compaction marked (turn starts and task candidates), ascending. */
  readonly users: number[] = [];
  /** Total weight of the first `scanned` messages (`Message.weight`, 1 by default). */
  weight = 0;
  scanned = 0;
  /** The last message scanned: a list found without it at its place was not only appended to. */
  private last: Message | undefined = undefined;

  /** Reads the messages appended since; false when the list is not what was scanned (then nothing is known). */
  extend(messages: readonly Message[]): boolean {
    const scanned = this.scanned;
    if (messages.length < scanned || (scanned > 0 && messages[scanned - 1] !== this.last)) return false;
    for (let i = scanned; i < messages.length; i++) {
      const m = messages[i] as Message;
      if (m.role === 'user' && m.compaction === undefined) this.users.push(i);
      this.weight += m.weight ?? 1;
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
 * for one found changed other than by appending: it is then forgotten). `users` may grow after (later calls append
 * to it), its first elements never change.
 */
export function knownOf(
  messages: readonly Message[],
): { readonly users: readonly number[]; readonly weight: number } | null {
  const index = GROWING.get(messages);
  if (index === undefined) return null;
  if (index.extend(messages)) return { users: index.users, weight: index.weight };
  GROWING.delete(messages);
  return null;
}

/** The position of the first element of an ascending list that is at least `value`. */
export function lowerBound(sorted: readonly number[], value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid] as number) < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
