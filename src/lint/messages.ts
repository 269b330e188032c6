import { contentOf } from '../core/render.js';
import type { Message } from '../core/types.js';
import type { MessageFinding, Rule } from './types.js';

/** Checks of the normalized messages themselves, the same in every format. */

/**
 * How empty an assistant message is: `empty` when it holds no text at all (no content, an empty list, or only
 * parts nothing renders, such as thinking), `blank` when its only texts are empty or whitespace, null when it holds
 * text, a tool call, an image or a file (or is no assistant message). Providers differ on the two.
 */
export function emptinessOf(message: Message): 'empty' | 'blank' | null {
  if (message.role !== 'assistant') return null;
  const c = contentOf(message);
  if (c.toolCalls.length > 0 || c.images > 0 || c.files.length > 0 || c.texts.some((t) => t.trim() !== '')) return null;
  return c.texts.length === 0 ? 'empty' : 'blank';
}

/** Whether an assistant message carries no text, tool call, image or file (empty or blank text only). */
export function isEmptyAssistant(message: Message): boolean {
  return emptinessOf(message) !== null;
}

const TEXTS = {
  empty: 'assistant message has nothing in it (no text, tool call, image or file)',
  blank: 'assistant message has only empty or blank text (no tool call, image or file)',
} as const;

/**
 * Checks each message on its own. The last message is told apart: a provider may accept an empty one there.
 * @param messages the normalized conversation
 * @returns the findings, in message order
 */
export function checkMessages(messages: readonly Message[]): MessageFinding[] {
  const out: MessageFinding[] = [];
  messages.forEach((m, i) => {
    const emptiness = emptinessOf(m);
    if (emptiness === null) return;
    const final = i === messages.length - 1;
    const rule: Rule =
      emptiness === 'empty'
        ? final
          ? 'empty-final-assistant'
          : 'empty-assistant'
        : final
          ? 'blank-final-assistant'
          : 'blank-assistant';
    out.push({ kind: 'empty-assistant', rule, message: i, text: TEXTS[emptiness] });
  });
  return out;
}
