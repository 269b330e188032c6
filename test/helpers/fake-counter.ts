/**
 * A fixed-rate fake token counter and small message builders, so core tests can assert exact numbers
 * without a tokenizer (Haystack's `FakeCounter`).
 */
import { textContent } from '../../src/core/render.js';
import { DEFAULT_NOTE_TEMPLATE, formatNote } from '../../src/core/note.js';
import { SLIDING_WINDOW, type Message, type Rendered, type TokenCounter } from '../../src/core/types.js';

/**
 * Every message costs `rate` tokens and every group `overhead` on top, whatever it says.
 * A non-zero overhead makes grouping visible: one group of two messages is cheaper than two groups of one.
 * @param rate tokens per message
 * @param overhead tokens per measured (non-empty) group
 * @returns a counter that also records every group it was asked to measure
 */
export function createFakeCounter(rate = 10, overhead = 0): TokenCounter & { readonly calls: Rendered[][] } {
  const calls: Rendered[][] = [];
  return {
    name: 'fake',
    calls,
    measure(messages) {
      calls.push([...messages]);
      return messages.length === 0 ? 0 : messages.length * rate + overhead;
    },
  };
}

/** Freezes a value and everything reachable from it, so any write by the code under test throws. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Reflect.ownKeys(value)) deepFreeze((value as Record<PropertyKey, unknown>)[key]);
  }
  return value;
}

export function system(text = 'You are a careful agent.'): Message {
  return { role: 'system', content: textContent(text) };
}

export function user(text = 'Please do the thing.'): Message {
  return { role: 'user', content: textContent(text) };
}

/** An assistant message; each name becomes one tool call (several names = parallel calls). */
export function assistant(text: string | null, ...callNames: string[]): Message {
  return {
    role: 'assistant',
    content: {
      texts: text === null ? [] : [text],
      toolCalls: callNames.map((name) => ({ name, arguments: '{"q": 1}' })),
      results: [],
      images: 0,
      files: [],
    },
  };
}

/** One tool message carrying one result per name (Haystack may put parallel results in one message). */
export function tool(...names: string[]): Message {
  return {
    role: 'tool',
    content: {
      texts: [],
      toolCalls: [],
      results: names.map((name) => ({ name, text: `result of ${name}`, error: false, images: 0, files: 0 })),
      images: 0,
      files: [],
    },
  };
}

/** A sliding-window note an earlier run left behind. */
export function earlierNote(removed: number, template = DEFAULT_NOTE_TEMPLATE): Message {
  return { role: 'user', compaction: SLIDING_WINDOW, content: textContent(formatNote(template, removed)) };
}

/** A message another compaction strategy made (for example a pruned tool result). */
export function pruned(message: Message, strategy = 'pruning'): Message {
  return { ...message, compaction: strategy };
}

/** The default note's text for a count. */
export function defaultNote(removed: number): string {
  return formatNote(DEFAULT_NOTE_TEMPLATE, removed);
}
