import { isSummaryText, SUMMARIZATION } from './summary-text.js';
import { SLIDING_WINDOW, type Message } from './types.js';

/** The omission note: its default template, how it is filled in, and how an earlier one is recognised. */

export const NUM_REMOVED = '{num_removed}';

export const DEFAULT_NOTE_TEMPLATE =
  '[{num_removed} earlier messages were removed from this conversation to free up context and cannot be recovered.]';

/**
 * Fills in a note template. A plain replace: braces and `$` patterns of the template stay as written.
 * @param template the template, `{num_removed}` standing for the count
 * @param removed how many messages were removed
 * @returns the note's text
 */
export function formatNote(template: string, removed: number): string {
  return template.split(NUM_REMOVED).join(String(removed));
}

/**
 * Whether a text is a note written from this template, with digits where `{num_removed}` stands.
 * Matched literally, never as a regular expression.
 */
export function matchesNoteTemplate(text: string, template: string): boolean {
  if (template === '') return false;
  const pieces = piecesOf(template);
  if (pieces.length === 1) return text === template;
  const first = pieces[0] as string;
  if (!text.startsWith(first)) return false;
  // Each placeholder takes one or more digits. Track every position reachable after each literal piece, so
  // runs of digits are split every possible way in linear work per piece (no exponential backtracking).
  let reachable = new Set<number>([first.length]);
  for (let k = 1; k < pieces.length && reachable.size > 0; k++) {
    const piece = pieces[k] as string;
    const next = new Set<number>();
    for (const pos of reachable) {
      for (let end = pos; end < text.length && isAsciiDigit(text.charCodeAt(end)); end++) {
        if (text.startsWith(piece, end + 1)) next.add(end + 1 + piece.length);
      }
    }
    reachable = next;
  }
  return reachable.has(text.length);
}

/** Split templates, by placeholder: a run has a few templates (active and default), asked of every message or result. */
const pieceCaches = new Map<string, Map<string, readonly string[]>>();

/**
 * A template's literal pieces around each `placeholder` (`template.split(placeholder)`), remembered for the few
 * templates a run has.
 */
export function templatePieces(template: string, placeholder: string): readonly string[] {
  let cache = pieceCaches.get(placeholder);
  if (cache === undefined) {
    cache = new Map();
    pieceCaches.set(placeholder, cache);
  }
  let pieces = cache.get(template);
  if (pieces === undefined) {
    if (cache.size >= 8) cache.clear();
    pieces = template.split(placeholder);
    cache.set(template, pieces);
  }
  return pieces;
}

function piecesOf(template: string): readonly string[] {
  return templatePieces(template, NUM_REMOVED);
}

function isAsciiDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/**
 * Why a template cannot make notes a later run recognises, or null when it can. A note needs some text of its own
 * (letters or punctuation): a template of nothing but the number would take a user's "3" for a note. A template
 * without `{num_removed}` is used as written, as Haystack documents; its notes are recognised by their exact text
 * where a note can stand (see `notesByText` in compact.ts).
 * @param template the template, as given
 * @returns the problem in a few words, or null
 */
export function noteTemplateProblem(template: string): string | null {
  if (!hasTextOfItsOwn(template.split(NUM_REMOVED).join('')))
    return 'needs text besides {num_removed} (letters or punctuation), so a later run can tell its notes from messages people wrote';
  return null;
}

/** Whether a template is used as written: it has no `{num_removed}` to fill in. */
export function isLiteralTemplate(template: string): boolean {
  return !template.includes(NUM_REMOVED);
}

function hasTextOfItsOwn(literal: string): boolean {
  for (let i = 0; i < literal.length; i++) {
    const c = literal.charCodeAt(i);
    if (!isAsciiDigit(c) && !isSpace(c)) return true;
  }
  return false;
}

function isSpace(c: number): boolean {
  return (
    c === 0x20 ||
    (c >= 0x09 && c <= 0x0d) ||
    c === 0xa0 ||
    c === 0xfeff ||
    c === 0x2028 ||
    c === 0x2029 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x1680 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000
  );
}

const EXACT_NOTE: NoteMarks = Object.freeze({ exactNote: true });

/** How a user message's text marks it for the decision (see `noteMarks`). */
export interface NoteMarks {
  readonly compaction?: typeof SLIDING_WINDOW | typeof SUMMARIZATION;
  readonly exactNote?: true;
}

/**
 * Marks a user message by the text a note of its format would carry: an earlier note when the active or the default
 * template wrote it; an earlier summary when `<conversation_summary>` wraps it. The exact text of a template without
 * `{num_removed}` is marked `exactNote`: whether it is a note depends on where it stands (see `Message.exactNote`).
 * Nothing else marks a message: a note another template wrote reads as a user message, as Haystack recognises notes by
 * their marks alone, never by where they stand.
 * @param text that text, or null when the message has none
 * @param template the active template, or null when notes are off
 * @param noteShaped whether the message has nothing a note of its format lacks (formats that cannot tell say true)
 */
export function noteMarks(text: string | null, template: string | null, noteShaped = true): NoteMarks {
  if (text === null) return {};
  if (template !== null && text === template && isLiteralTemplate(template)) return noteShaped ? EXACT_NOTE : {};
  if (isEarlierNoteText(text, template)) return { compaction: SLIDING_WINDOW };
  // Formats without metadata recognise a summary by its wrapper (Haystack files by their meta).
  if (isSummaryText(text)) return { compaction: SUMMARIZATION };
  return {};
}

/**
 * Whether a user message's text is an earlier note, written from the active template or the default one.
 * @param text the message text
 * @param template the active template, or null when notes are off
 */
export function isEarlierNoteText(text: string, template: string | null): boolean {
  return (template !== null && matchesNoteTemplate(text, template)) || matchesNoteTemplate(text, DEFAULT_NOTE_TEMPLATE);
}

/**
 * The window's note as a message: a user message marked as a sliding-window compaction, holding the note's text. The
 * one place it is built, for the decision's count and for the messages a plan leaves.
 */
export function noteMessage(text: string): Message {
  return {
    role: 'user',
    compaction: SLIDING_WINDOW,
    content: { texts: [text], toolCalls: [], results: [], images: 0, files: [] },
  };
}
