/** Reading Claude Code session lines: what a line is and what its message holds. */
import { isRecord, own } from './types.js';

/** An event: an object with a `type`. */
export function isLine(item: unknown): item is Record<string, unknown> {
  return isRecord(item) && typeof own(item, 'type') === 'string';
}

/** A line's `message` object, or null when it has none. */
export function messageOf(item: Record<string, unknown>): Record<string, unknown> | null {
  const message = own(item, 'message');
  return isRecord(message) ? message : null;
}

/** A line's `message.content`: a string, a list of blocks, or null. */
export function blocksOf(item: Record<string, unknown>): unknown[] | string | null {
  const content = messageOf(item) === null ? undefined : own(messageOf(item) as Record<string, unknown>, 'content');
  return typeof content === 'string' || Array.isArray(content) ? content : null;
}

/** Whether a line's message carries `tool_result` blocks. */
export function hasToolResult(item: Record<string, unknown>): boolean {
  const blocks = blocksOf(item);
  return Array.isArray(blocks) && blocks.some((b) => isRecord(b) && own(b, 'type') === 'tool_result');
}

/** A string member of a line, or null. */
export function stringField(item: unknown, key: string): string | null {
  if (!isRecord(item)) return null;
  const value = own(item, key);
  return typeof value === 'string' ? value : null;
}

/** A user or assistant line with a message: a line the model saw (or, on a sidechain, a sub-agent saw). */
export function isMessageLine(item: unknown): item is Record<string, unknown> {
  return (
    isLine(item) && (own(item, 'type') === 'user' || own(item, 'type') === 'assistant') && messageOf(item) !== null
  );
}

/** The id of the message an assistant line is part of (split lines share it), else the line's own place. */
export function messageKey(line: Record<string, unknown>, k: number): string {
  const id = own(messageOf(line) as Record<string, unknown>, 'id');
  return typeof id === 'string' ? `message ${id}` : `line ${k}`;
}
