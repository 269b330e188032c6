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
  const pieces = template.split(NUM_REMOVED);
  if (pieces.length === 1) return text === template;
  const first = pieces[0] as string;
  if (!text.startsWith(first)) return false;
  // Each placeholder takes one or more digits; the literal pieces between them must follow exactly.
  // Backtracking over digit runs is only needed when a literal piece itself starts with a digit.
  return matchFrom(text, first.length, pieces, 1);
}

function matchFrom(text: string, pos: number, pieces: string[], k: number): boolean {
  if (k === pieces.length) return pos === text.length;
  const piece = pieces[k] as string;
  let end = pos;
  while (end < text.length && isAsciiDigit(text.charCodeAt(end))) end++;
  for (let cut = end; cut > pos; cut--) {
    if (text.startsWith(piece, cut) && matchFrom(text, cut + piece.length, pieces, k + 1)) return true;
    if (!startsWithDigit(piece)) break;
  }
  return false;
}

function isAsciiDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

function startsWithDigit(s: string): boolean {
  return s.length > 0 && isAsciiDigit(s.charCodeAt(0));
}

/**
 * Whether a user message's text is an earlier note, written from the active template or the default one.
 * @param text the message text
 * @param template the active template, or null when notes are off
 */
export function isEarlierNoteText(text: string, template: string | null): boolean {
  return (template !== null && matchesNoteTemplate(text, template)) || matchesNoteTemplate(text, DEFAULT_NOTE_TEMPLATE);
}
