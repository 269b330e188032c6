/**
 * The neutral conversations of convert.ts written as Vercel AI SDK messages: `ModelMessage`s (AI SDK 5, or 4's
 * `args`/`result`/`mimeType` spelling) and `UIMessage`s, where an assistant message holds its calls' results.
 */
import type { Conversation } from './convert.js';

const PNG = 'iVBORw0KGgo=';
const PDF = 'JVBERi0xLjQ=';

export type AiSdkStyle = 'model' | 'model-v4' | 'ui';

export interface AiSdkWritten {
  readonly items: unknown[];
  /** For each message of the conversation, the item it became (a UI tool result: its assistant message). */
  readonly itemOf: readonly number[];
}

/**
 * Writes a conversation as AI SDK messages.
 * @param conversation the conversation
 * @param style ModelMessages of AI SDK 5 or 4, or UIMessages
 * @param dynamic for UI messages: which calls (by running number) are `dynamic-tool` parts
 */
export function writeAiSdk(
  conversation: Conversation,
  style: AiSdkStyle,
  dynamic: (n: number) => boolean = () => false,
): AiSdkWritten {
  const v4 = style === 'model-v4';
  const items: Record<string, unknown>[] = [];
  const uiParts = new Map<string, Record<string, unknown>>();
  const uiItemOfCall = new Map<string, number>();
  let calls = 0;
  const itemOf = conversation.map((m, k): number => {
    const id = `msg-${k}`;
    if (m.role === 'system') {
      items.push(
        style === 'ui'
          ? { id, role: 'system', parts: [{ type: 'text', text: m.text }] }
          : { role: 'system', content: m.text },
      );
      return items.length - 1;
    }
    if (m.role === 'user') {
      if (style === 'ui') {
        items.push({
          id,
          role: 'user',
          parts: [
            ...m.texts.map((text) => ({ type: 'text', text })),
            ...Array.from({ length: m.images }, () => ({
              type: 'file',
              mediaType: 'image/png',
              url: `data:image/png;base64,${PNG}`,
            })),
            ...m.files.map((filename) => ({
              type: 'file',
              mediaType: 'application/pdf',
              filename,
              url: `https://example.com/${filename}`,
            })),
          ],
        });
      } else {
        const media = v4 ? 'mimeType' : 'mediaType';
        items.push({
          role: 'user',
          content:
            m.texts.length === 1 && m.images === 0 && m.files.length === 0
              ? m.texts[0]
              : [
                  ...m.texts.map((text) => ({ type: 'text', text })),
                  ...Array.from({ length: m.images }, () => ({ type: 'image', image: PNG, [media]: 'image/png' })),
                  ...m.files.map((filename) => ({ type: 'file', data: PDF, [media]: 'application/pdf', filename })),
                ],
        });
      }
      return items.length - 1;
    }
    if (m.role === 'assistant') {
      if (style === 'ui') {
        const parts: Record<string, unknown>[] = [{ type: 'step-start' }];
        if (m.reasoning !== null) parts.push({ type: 'reasoning', text: m.reasoning, state: 'done' });
        if (m.text !== null) parts.push({ type: 'text', text: m.text, state: 'done' });
        for (const c of m.calls) {
          const part = dynamic(calls++)
            ? { type: 'dynamic-tool', toolName: c.name, toolCallId: c.id, state: 'input-available', input: c.args }
            : { type: `tool-${c.name}`, toolCallId: c.id, state: 'input-available', input: c.args };
          parts.push(part);
          uiParts.set(c.id, part);
          uiItemOfCall.set(c.id, items.length);
        }
        items.push({ id, role: 'assistant', parts });
      } else {
        items.push({
          role: 'assistant',
          content: [
            ...(m.reasoning === null ? [] : [{ type: 'reasoning', text: m.reasoning }]),
            ...(m.text === null ? [] : [{ type: 'text', text: m.text }]),
            ...m.calls.map((c) => ({
              type: 'tool-call',
              toolCallId: c.id,
              toolName: c.name,
              [v4 ? 'args' : 'input']: c.args,
            })),
          ],
        });
      }
      return items.length - 1;
    }
    if (style === 'ui') {
      const part = uiParts.get(m.callId);
      const at = uiItemOfCall.get(m.callId);
      if (part === undefined || at === undefined) throw new Error(`no call ${m.callId}`);
      part.state = 'output-available';
      part.output = m.text;
      return at;
    }
    const result = v4 ? { result: m.text } : { output: { type: 'text', value: m.text } };
    items.push({ role: 'tool', content: [{ type: 'tool-result', toolCallId: m.callId, toolName: m.name, ...result }] });
    return items.length - 1;
  });
  return { items, itemOf };
}
