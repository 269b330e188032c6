import type { Content, Message, Role } from '../core/types.js';
import { isRecord, own, type ConversationInput, type Normalized } from './types.js';

/**
 * Builds a normalized conversation for formats whose messages do not map one to one onto items:
 * instructions held outside the list, several items standing for one message, items with no message.
 */

/** One message under construction and the items it stands for. */
export interface Entry {
  readonly role: Role;
  readonly compaction?: string | undefined;
  readonly exactNote?: boolean | undefined;
  /** Results that cannot be rewritten on their own (see Message.fixed). */
  readonly fixed?: boolean | undefined;
  readonly content: Content | (() => Content);
  readonly items: number[];
}

export class ConversationBuilder {
  private readonly entries: Entry[] = [];
  private readonly pinned: number[] = [];

  /**
   * Instructions held outside the list (Anthropic `system`, Responses `instructions`, Gemini `systemInstruction`):
   * one leading system message per text, standing for no item, so they are never removed and never written.
   */
  instructions(texts: readonly string[]): void {
    for (const text of texts) {
      this.entries.push({
        role: 'system',
        content: { texts: [text], toolCalls: [], results: [], images: 0, files: [] },
        items: [],
      });
    }
  }

  add(entry: Entry): void {
    this.entries.push(entry);
  }

  /** An item with no message of its own goes with the message before it; before any, it is always kept. */
  attach(item: number): void {
    const last = this.entries[this.entries.length - 1];
    if (last !== undefined && last.items.length > 0) last.items.push(item);
    else this.pinned.push(item);
  }

  /** The conversation; each message weighs as many items as it stands for (instructions weigh nothing). */
  finish(): Normalized {
    const messages: Message[] = this.entries.map(messageOf);
    return { messages, itemsOf: this.entries.map((e) => e.items), pinned: this.pinned };
  }

  private readonly grownMessages: Message[] = [];
  private readonly grownItems: number[][] = [];

  /**
   * As `finish`, for a normalization that goes on (`Normalized.more`, made by `continueWith` when called): only the
   * entries added since the last call are made messages, and the lists are handed over as they are until a
   * continuation grows them (then copied once, as OpenAI chat's are). A continuation must not `attach` an item before
   * it adds a message of its own: the item would change a message made already.
   */
  grown(continueWith: (input: ConversationInput) => Normalized): Normalized {
    const messages = this.grownMessages;
    const itemsOf = this.grownItems;
    for (let k = messages.length; k < this.entries.length; k++) {
      const entry = this.entries[k] as Entry;
      messages.push(messageOf(entry));
      itemsOf.push(entry.items);
    }
    const n = messages.length;
    const pinned = this.pinned;
    let continued = false;
    let own: { messages: Message[]; itemsOf: number[][] } | null = null;
    const mine = (): { messages: Message[]; itemsOf: number[][] } =>
      continued ? (own ??= { messages: messages.slice(0, n), itemsOf: itemsOf.slice(0, n) }) : { messages, itemsOf };
    return {
      get messages(): Message[] {
        return mine().messages;
      },
      get itemsOf(): number[][] {
        return mine().itemsOf;
      },
      pinned,
      more(next) {
        if (continued) throw new Error('a normalization is continued once');
        continued = true;
        return continueWith(next);
      },
    };
  }
}

/** An entry as a message, weighing as many items as it stands for. */
function messageOf(e: Entry): Message {
  return {
    role: e.role,
    compaction: e.compaction,
    ...(e.exactNote === true ? { exactNote: true } : {}),
    ...(e.fixed === true ? { fixed: true } : {}),
    content: e.content,
    weight: e.items.length === 1 ? undefined : e.items.length,
  };
}

/**
 * The texts of instructions given as a string, a list of text blocks/parts or strings, or a content with `parts`.
 * @param value the container's instructions value
 * @returns one text per block; empty when there are none
 */
export function instructionTexts(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (isRecord(value)) {
    const parts = own(value, 'parts');
    if (Array.isArray(parts)) return instructionTexts(parts);
    const content = own(value, 'content');
    if (content !== undefined) return instructionTexts(content);
    const text = own(value, 'text');
    return typeof text === 'string' && own(value, 'thought') !== true ? [text] : [];
  }
  if (!Array.isArray(value)) return [];
  return value.flatMap((block) =>
    typeof block === 'string' ? [block] : isRecord(block) ? instructionTexts(block) : [],
  );
}

/** A content with nothing in it but the given texts. */
export function textsOnly(texts: string[]): Content {
  return { texts, toolCalls: [], results: [], images: 0, files: [] };
}
