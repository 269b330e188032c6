/**
 * Slim items: what the structural pass keeps of each parsed item. Adapters read an item's roles, types, ids,
 * names and keys when they normalize it, and the text of a message only to see whether it is an earlier note;
 * the text itself is read again from the item's raw text when it is rendered, and only for messages a decision
 * counts. So after parsing, long strings under the keys where formats keep message text, tool arguments,
 * outputs and media are replaced by a short stand-in: their first characters (formats that tell a message's
 * kind by how its text begins, like Claude Code's command echoes, still can) and a marker. A 100 MB transcript
 * then keeps its structure in a few megabytes instead of a second copy of all its text.
 *
 * What is never replaced: anything under another key (ids, names, roles, types, session fields a note copies),
 * strings of at most `longerThan` characters, and texts that read as an earlier note. The parity tests compact
 * every fixture and transcript with every such string replaced and require the same decisions and bytes.
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

/** What ends a replaced string: with it, the string is never a role, type, id or note any format looks for. */
export const SLIMMED = '\u0000swc: text read only when rendered';

/** How many characters of a replaced string stay in front of the marker. */
const PREFIX = 96;

/** How to slim items. */
export interface Slimming {
  /** Strings of at most this many UTF-16 units stay. */
  readonly longerThan: number;
  /** Strings to keep whatever their length (earlier notes, which adapters recognise by their text). */
  readonly keep: (text: string) => boolean;
}

/** The default length above which bulk strings are replaced. */
export const SLIM_LONGER_THAN = 256;

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
        if (BULK_KEYS.has(key) && replaceable(child, slimming)) record[key] = standIn(child);
      } else if (typeof child === 'object' && child !== null) {
        if (Array.isArray(child) && BULK_KEYS.has(key)) {
          for (let i = 0; i < child.length; i++) {
            const element: unknown = child[i];
            if (typeof element === 'string' && replaceable(element, slimming)) child[i] = standIn(element);
          }
        }
        pending.push(child);
      }
    }
  }
  return value;
}

function replaceable(text: string, slimming: Slimming): boolean {
  return text.length > slimming.longerThan && !slimming.keep(text);
}

/**
 * The stand-in for a long string. A plain `slice` would make a view that keeps the whole original alive; slicing
 * a concatenation copies the characters into a string of their own, so the original can be collected.
 */
function standIn(text: string): string {
  // Leading whitespace does not count towards the prefix: formats trim it before they look.
  const start = text.length - text.trimStart().length;
  return (SLIMMED + text.slice(0, start + PREFIX)).slice(SLIMMED.length) + SLIMMED;
}
