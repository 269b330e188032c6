import type { Message } from '../core/types.js';

/** One conversation as an adapter receives it: parsed items, their raw text, and the object around them. */
export interface ConversationInput {
  readonly file: string;
  /** Each item parsed natively (cheap; numbers may have lost their lexeme, which only `raws` keeps). */
  readonly items: readonly unknown[];
  /** Each item's exact text in the input. */
  readonly raws: readonly string[];
  /** The object that holds the item list (request body, record), or null for a bare list or JSONL. */
  readonly container: Readonly<Record<string, unknown>> | null;
  /** Throws an InputError that points at an item. */
  fail(item: number, reason: string): never;
}

/** A conversation in the core's terms, with the link back to the items each message came from. */
export interface Normalized {
  readonly messages: Message[];
  /** For each message, the indices of the items it stands for (empty for instructions held outside the list). */
  readonly itemsOf: readonly (readonly number[])[];
  /** Items that belong to no message and are always kept where they are (e.g. leading non-message lines). */
  readonly pinned?: readonly number[];
}

/** What a note is made from. */
export interface NoteRequest {
  readonly text: string;
  readonly removed: number;
  readonly kept: number;
  /** The parsed items, so a note can copy the file's own conventions. */
  readonly items: readonly unknown[];
}

/** A transcript format: recognises its items, normalizes them, and writes its note. Adapters never decide. */
export interface FormatAdapter {
  readonly name: string;
  /** Keys under which an object container holds this format's list, in order of preference. */
  readonly listKeys: readonly string[];
  /** Whether these items (and container) are in this format. */
  detect(items: readonly unknown[], container: Readonly<Record<string, unknown>> | null): boolean;
  /** @param noteTemplate the active note template, to recognise earlier notes in formats without metadata */
  normalize(input: ConversationInput, noteTemplate: string | null): Normalized;
  /** The note as a value of this format. */
  makeNote(request: NoteRequest): unknown;
}

/** A plain-object guard that does not trust prototypes. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Reads an own property only (a `__proto__` or `constructor` key in the input is data, not behaviour). */
export function own(value: Record<string, unknown>, key: string): unknown {
  return Object.prototype.hasOwnProperty.call(value, key) ? value[key] : undefined;
}
