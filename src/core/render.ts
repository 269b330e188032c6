import type { Content, Message, Rendered } from './types.js';

/** Resolves a message's lazy content. */
export function contentOf(message: Message): Content {
  return typeof message.content === 'function' ? message.content() : message.content;
}

/**
 * A message's role and marks, without its content or sketch: what a strategy keeps of a message it rewrites (read
 * through getters where a message has them, so a class instance gives them as a plain object would).
 */
export function marksOf(
  message: Message,
): Pick<Message, 'role' | 'weight' | 'exactNote' | 'compaction' | 'offloaded' | 'fixed'> {
  return {
    role: message.role,
    ...(message.weight === undefined ? {} : { weight: message.weight }),
    ...(message.exactNote === undefined ? {} : { exactNote: message.exactNote }),
    ...(message.compaction === undefined ? {} : { compaction: message.compaction }),
    ...(message.offloaded === undefined ? {} : { offloaded: message.offloaded }),
    ...(message.fixed === undefined ? {} : { fixed: message.fixed }),
  };
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
  for (const file of content.files) lines.push(`[${role}] ${filePlaceholder(file)}`);
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

/** The stand-in for a file in rendered text. */
export function filePlaceholder(name: string | null): string {
  return `<file: ${name === null || name === '' ? 'unnamed' : name}>`;
}

/** A part of a tool result as an adapter classifies it: text, an image, a file (its name or null), or nothing shown. */
export type ResultPart = { readonly text: string } | 'image' | { readonly file: string | null } | null;

/**
 * Joins a tool result's parts as Haystack renders them: texts with nothing between them, `<image>` and
 * `<file: NAME>` standing for images and files (which also cost their flat token amounts).
 * @param parts the result's parts, in order
 * @param classify says what each part is, in the adapter's own terms
 */
export function joinResultParts<T>(
  parts: Iterable<T>,
  classify: (part: T) => ResultPart,
): { text: string; images: number; files: number } {
  let text = '';
  let images = 0;
  let files = 0;
  for (const part of parts) {
    const kind = classify(part);
    if (kind === null) continue;
    if (kind === 'image') {
      text += '<image>';
      images++;
    } else if ('text' in kind) text += kind.text;
    else {
      text += filePlaceholder(kind.file);
      files++;
    }
  }
  return { text, images, files };
}
