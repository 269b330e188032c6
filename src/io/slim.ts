/**
 * Slim items: what the structural pass keeps of each parsed item. Adapters read an item's roles, types, ids,
 * names and keys when they normalize it, and the text of a message only to see whether it is an earlier note;
 * the text itself is read again from the item's raw text when it is rendered, and only for messages a decision
 * counts. So after parsing, long strings under the keys where formats keep message text, tool arguments,
 * outputs and media are replaced by one shared stand-in. A 100 MB transcript then keeps its structure in a few
 * megabytes instead of a second copy of all its text.
 *
 * What is never replaced: anything under another key (ids, names, roles, types, session fields a note copies),
 * strings of at most `longerThan` characters or of only whitespace, and the texts `keep` names: earlier notes and
 * texts whose beginning a format reads to tell what a message is (Claude Code's command echoes). The parity tests
 * compact every fixture and transcript with every other such string replaced and require the same decisions and
 * bytes.
 */

/** Keys whose long string values (or strings listed directly under them) only rendering reads. */
const BULK_KEYS = new Set([
  'content',
  'text',
  'arguments',
  'output',
  'result',
  'thinking',
  'reasoning_content',
  'signature',
  'data',
  'url',
  'stdout',
  'stderr',
  'oldString',
  'newString',
  'originalFile',
  'lines',
  // ShareGPT's message text.
  'value',
]);

/** What a replaced string reads as: never a role, type, id or note any format looks for. */
export const SLIMMED = '\u0000swc: text read only when rendered';

/** How to slim items. */
export interface Slimming {
  /** Strings of at most this many UTF-16 units stay. */
  readonly longerThan: number;
  /** Strings to keep whatever their length (earlier notes, which adapters recognise by their text). */
  readonly keep: (text: string) => boolean;
}

/** The default length above which bulk strings are replaced. */
export const SLIM_LONGER_THAN = 64;

/**
 * Slims a parsed item in place and returns it.
 * @param value a value JSON.parse made (plain objects and arrays, no cycles)
 */
export function slimItem(value: unknown, slimming: Slimming): unknown {
  // Iterative: a transcript may nest values far deeper than the call stack goes.
  const pending: object[] = [];
  if (typeof value === 'object' && value !== null) pending.push(value);
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (Array.isArray(next)) {
      for (const element of next) if (typeof element === 'object' && element !== null) pending.push(element);
      continue;
    }
    const record = next as Record<string, unknown>;
    for (const key in record) {
      const child = record[key];
      if (typeof child === 'string') {
        if (BULK_KEYS.has(key) && replaceable(child, slimming)) record[key] = SLIMMED;
      } else if (typeof child === 'object' && child !== null) {
        if (Array.isArray(child) && BULK_KEYS.has(key)) {
          for (let i = 0; i < child.length; i++) {
            const element: unknown = child[i];
            if (typeof element === 'string' && replaceable(element, slimming)) child[i] = SLIMMED;
          }
        }
        pending.push(child);
      }
    }
  }
  return value;
}

function replaceable(text: string, slimming: Slimming): boolean {
  return text.length > slimming.longerThan && !slimming.keep(text) && text.trim() !== '';
}

