import type { Content, Message, Rendered } from './types.js';

/** Resolves a message's lazy content. */
export function contentOf(message: Message): Content {
  return typeof message.content === 'function' ? message.content() : message.content;
}

/**
 * Renders one message the way Haystack's approximate counter does, so token decisions match it.
 * A message with tool results renders only its results, one `[tool:NAME] RESULT` line each.
 * @param message the message to render
 * @returns its text and the images and files it carries
 */
export function renderMessage(message: Message): Rendered {
  const content = contentOf(message);
  if (content.results.length > 0) {
    let images = 0;
    let files = 0;
    const lines = content.results.map((result) => {
      images += result.images;
      files += result.files;
      return `[tool:${result.name}${result.error ? ' (error)' : ''}] ${result.text}`;
    });
    return { text: lines.join('\n'), images: images + content.images, files: files + content.files.length };
  }
  const role = message.role;
  const lines: string[] = [];
  if (content.texts.length > 0) lines.push(`[${role}] ${content.texts.join('\n')}`);
  for (const call of content.toolCalls) lines.push(`[${role} -> tool_call] ${call.name}(${call.arguments})`);
  for (let i = 0; i < content.images; i++) lines.push(`[${role}] <image>`);
  for (const file of content.files) lines.push(`[${role}] <file: ${file === null || file === '' ? 'unnamed' : file}>`);
  return {
    text: lines.length > 0 ? lines.join('\n') : `[${role}] <no content>`,
    images: content.images,
    files: content.files.length,
  };
}

/** An empty content, for building messages. */
export const EMPTY_CONTENT: Content = Object.freeze({ texts: [], toolCalls: [], results: [], images: 0, files: [] });

/** A content that is just text parts. */
export function textContent(...texts: string[]): Content {
  return { texts, toolCalls: [], results: [], images: 0, files: [] };
}
