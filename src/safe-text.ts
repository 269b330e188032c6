/**
 * The one rule for showing untrusted text (file names, message text, quoted input) on a terminal: control characters,
 * line and paragraph separators and bidirectional marks and overrides are written as escapes, so the text stays on
 * one line and cannot move the cursor, recolour the screen or reorder what is around it.
 */

/** Characters never written as they are. */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;

/** How an unsafe character is written: `\u000a` everywhere (`code`), or `\n`, `\t`, `\r`, `\x1b`, `\u2028` (`readable`). */
export type EscapeForm = 'code' | 'readable';

const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\t': '\\t', '\r': '\\r' };

/** Whether a character (or any character of a string) must be escaped. */
export function hasUnsafe(text: string): boolean {
  return UNSAFE.test(text);
}

/** The escape of one unsafe character in a form. */
function escapeOne(ch: string, form: EscapeForm): string {
  const cp = ch.codePointAt(0) as number;
  if (form === 'code') return `\\u${cp.toString(16).padStart(4, '0')}`;
  return (
    NAMED[ch] ?? (cp < 0x100 ? `\\x${cp.toString(16).padStart(2, '0')}` : `\\u${cp.toString(16).padStart(4, '0')}`)
  );
}

/**
 * Makes untrusted text safe to print: every unsafe character escaped, everything else as it is.
 * @param form `code` for error lines (the escape JSON would write), `readable` for previews
 */
export function escapeUnsafe(text: string, form: EscapeForm): string {
  if (!UNSAFE.test(text)) return text;
  let out = '';
  for (const ch of text) out += UNSAFE.test(ch) ? escapeOne(ch, form) : ch;
  return out;
}
