import { contentOf } from '../core/render.js';
import type { Message } from '../core/types.js';
import type { MessageFinding } from './types.js';

/** Checks of the normalized messages themselves, the same in every format. */

/** Whether an assistant message carries nothing a provider accepts: no text, tool call, image or file. */
export function isEmptyAssistant(message: Message): boolean {
  if (message.role !== 'assistant') return false;
  const c = contentOf(message);
  return c.toolCalls.length === 0 && c.images === 0 && c.files.length === 0 && c.texts.every((t) => t.trim() === '');
}

/**
 * Checks each message on its own.
 * @param messages the normalized conversation
 * @returns the findings, in message order
 */
export function checkMessages(messages: readonly Message[]): MessageFinding[] {
  const out: MessageFinding[] = [];
  messages.forEach((m, i) => {
    if (isEmptyAssistant(m)) out.push({ kind: 'empty-assistant', message: i, text: 'assistant message has nothing in it (no text, tool call, image or file)' });
  });
  return out;
}
