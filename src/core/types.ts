/**
 * The normalized conversation model the compaction decision works on.
 * Adapters translate each transcript format into it; the core never sees raw JSON.
 */

/** The four roles the strategy distinguishes. A message that carries tool results has role `tool`. */
export type Role = 'system' | 'user' | 'assistant' | 'tool';

/** One tool call, with its arguments already rendered as ARGS (see `renderArguments`). */
export interface ToolCall {
  readonly name: string;
  readonly arguments: string;
  /** The call's id, where the format gives one (a summary prompt names it, as Haystack's does). */
  readonly id?: string;
}

/** One tool result, its parts already joined into text (images as `<image>`, files as `<file: NAME>`). */
export interface ToolResult {
  readonly name: string;
  readonly text: string;
  readonly error: boolean;
  /** Images and files inside the result: they cost flat token amounts on top of the text. */
  readonly images: number;
  readonly files: number;
  /** The id of the call it answers, where the format gives one (for summary prompts). */
  readonly id?: string;
  /** The text with images and files described (`<image: image/png, …>`), for summary prompts; default `text`. */
  readonly described?: string;
  /**
   * The result's content blocks, where the format holds them whole (a Haystack result given as a list): offloading
   * then writes each to its own store entry, images and files as their bytes. Undefined: the result is `text` alone.
   */
  readonly parts?: readonly StorablePart[];
}

/** One content block of a tool result: a text, or an image or file with its base64 payload. */
export type StorablePart =
  | { readonly kind: 'text'; readonly text: string }
  | {
      readonly kind: 'image' | 'file';
      readonly base64: string;
      readonly mimeType: string | null;
      readonly filename: string | null;
    };

/** What a message says, in the terms the renderer needs. Reasoning/thinking is deliberately absent. */
export interface Content {
  readonly texts: readonly string[];
  readonly toolCalls: readonly ToolCall[];
  readonly results: readonly ToolResult[];
  readonly images: number;
  /** One entry per attached file: its file name, or null when it has none. */
  readonly files: readonly (string | null)[];
  /**
   * The message's images then files described as a summary prompt shows them (`<image: image/png, file_path=…>`,
   * `<file: q3.pdf, application/pdf>`), where the format knows their details. Default: from `images` and `files`.
   */
  readonly attachments?: readonly string[];
}

/** One message of a conversation. */
export interface Message {
  readonly role: Role;
  /**
   * Set when a compaction made this message: `sliding_window` for an omission note of this strategy,
   * any other strategy name otherwise. Undefined for messages people and agents wrote.
   */
  readonly compaction?: string | undefined;
  /** The content, or a function that produces it on demand (adapters parse lazily so unread history costs nothing). */
  readonly content: Content | (() => Content);
  /**
   * How many items of the file this message stands for (default 1): `{num_removed}` counts items in the
   * file's own terms, e.g. the several lines of one split Claude Code message.
   */
  readonly weight?: number;
  /**
   * Set by an adapter on a user message whose text is exactly the active note template when that template has no
   * `{num_removed}` (Haystack's custom note "used as written"): such a text carries no count to tell it by, so the
   * structure takes it for an earlier note only where a note can stand (`notesByText`), never for the current task.
   */
  readonly exactNote?: boolean;
  /**
   * Set on a tool result an offloading hook replaced with a reference to stored content (Haystack meta
   * `tool_result_offloaded`): pruning it would destroy the reference the model needs to read it back.
   */
  readonly offloaded?: boolean;
  /**
   * Set on results the format cannot rewrite on their own (an AI SDK UI message holds its tool outputs inside the
   * assistant message, which has no item for them alone): they are never pruned or offloaded, so a decision never
   * counts a saving the file would not show.
   */
  readonly fixed?: boolean;
  /**
   * What pruning and offloading can read of a tool message's results without reading their texts again: each
   * result as `content` would give it, its text as a sketch (length and ends). Given by adapters of files read slim
   * (see src/io/slim.ts) where they can tell; undefined otherwise, and then `content` is read.
   */
  sketch?(): readonly ResultSketch[] | undefined;
}

/** A text known by its length and its ends (a long text read slim). */
export interface TextSketch {
  /** The text's length in UTF-16 units. */
  readonly length: number;
  /** Its first few dozen units (never half a surrogate pair); the whole text when `head.length === length`. */
  readonly head: string;
  /** Its last few dozen units, after `head` and never overlapping it; empty when `head` is the whole text. */
  readonly tail: string;
}

/** A tool result as `content` gives it, its text sketched. */
export interface ResultSketch {
  readonly name: string;
  readonly error: boolean;
  readonly images: number;
  readonly files: number;
  readonly text: TextSketch;
}

/** A message as the token counter sees it. */
export interface Rendered {
  readonly text: string;
  readonly images: number;
  readonly files: number;
}

/**
 * Measures groups of rendered messages: the tokens of their texts joined with a newline,
 * plus the flat costs of images and files.
 */
export interface TokenCounter {
  readonly name: string;
  /**
   * @param messages the group, in conversation order
   * @param limit when given, counting may stop once the total passes it; the result is then some number above `limit`
   * @returns the group's tokens (exact when at or under `limit`)
   */
  measure(messages: readonly Rendered[], limit?: number): number;
  /**
   * Optional: a lower bound of the group's tokens less what the messages at `apart` cost measured alone, that is
   * `measure(messages) - Σ measure([messages[k]])` over `apart`, without counting those messages' texts. It lets a
   * strategy that replaces many messages know it will never reach its target before it counts any of them.
   * A message at `apart` may be given by the end of its text only, from its last letter or digit on (`letterEnd` in
   * src/core/sketch.ts): a counter reads no more of it than that.
   * @param messages the group, in conversation order
   * @param apart positions in the group
   * @param limit when given, counting may stop once the bound passes it
   * @returns a number never above the exact difference
   */
  measureApart?(messages: readonly Rendered[], apart: ReadonlySet<number>, limit?: number): number;
}

/** The strategy name written into and recognised from notes. */
export const SLIDING_WINDOW = 'sliding_window';
