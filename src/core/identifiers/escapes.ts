// Escapes in a text: whether it is a JSON document whose strings are read as the text they hold, and whether it writes
// line breaks as `\n` (code with string literals), so a backslash before `n`, `r` or `t` may be an escape, not a path's.

/**
 * Whether a text is a JSON document with escapes (a tool's JSON output): its strings are read as the text they hold,
 * so `"a.ts\nb.ts"` is two names and `"src\\app"` one path. Other texts are read as written, backslashes and all.
 */
export function isJsonDocument(text: string): boolean {
  if (text.indexOf('\\') < 0) return false;
  let start = 0;
  while (start < text.length && text.charCodeAt(start) <= 0x20) start++;
  let end = text.length - 1;
  while (end > start && text.charCodeAt(end) <= 0x20) end--;
  const open = text.charCodeAt(start);
  const close = text.charCodeAt(end);
  return (open === 0x7b && close === 0x7d) || (open === 0x5b && close === 0x5d);
}

const ESCAPED: Record<string, string> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

/** JSON text with its escapes read (`\n`, `\"`, `\\`, `\u00e9`): one pass, linear; a bad escape stays as written. */
export function unescapeJson(text: string): string {
  return text.replace(/\\(?:u([0-9a-fA-F]{4})|(["\\/bfnrt]))/g, (_m, hex: string | undefined, c: string | undefined) =>
    hex !== undefined ? String.fromCharCode(parseInt(hex, 16)) : (ESCAPED[c as string] ?? (c as string)),
  );
}

/** Whether `word[start, end)` has a lone backslash before `n`, `r` or `t`: a line break or tab, in escaped text. */
export function hasLineEscape(word: string, start: number, end: number): boolean {
  for (let k = start; k < end - 1; k++) {
    if (word.charCodeAt(k) !== 0x5c) continue;
    if (word.charCodeAt(k + 1) === 0x5c) {
      k++;
      continue;
    }
    if (isLineEscapeLetter(word.charCodeAt(k + 1))) return true;
  }
  return false;
}

/** `n`, `r`, `t`: the letters of the escapes that write a line break or a tab. */
export function isLineEscapeLetter(c: number): boolean {
  return c === 0x6e || c === 0x72 || c === 0x74;
}

/**
 * Whether a text writes escapes (code with string literals, an escaped patch): an escaped quote `\"`, or a `\n`, `\r`
 * or `\t` followed by whitespace, a backslash, a quote, the end, or a character no Windows name holds (`*?:<>|`). Such
 * a text's `\n`, `\r` and `\t` are escapes, except in a word that reads whole as a path to a file
 * (`src\nodes\a.ts`); in another text they are a path's separators wherever the word reads as a path.
 */
export function writesEscapes(text: string): boolean {
  for (let k = text.indexOf('\\'); k >= 0 && k < text.length - 1; k = text.indexOf('\\', k + 1)) {
    const next = text.charCodeAt(k + 1);
    if (next === 0x5c) {
      k++;
      continue;
    }
    if (next === 0x22) return true;
    if (!isLineEscapeLetter(next)) continue;
    const after = k + 2 < text.length ? text.charCodeAt(k + 2) : 0x20;
    if (after <= 0x20 || '\\"\'*?:<>|'.includes(String.fromCharCode(after))) return true;
  }
  return false;
}

/**
 * Where `word[start, end)` ends without the line escapes written after it (`C:\a.ts\n` ends before its `\n`): a
 * backslash of its own, not the second of a doubled one, before `n`, `r` or `t`.
 */
export function endBeforeLineEscapes(word: string, start: number, end: number): number {
  let e = end;
  while (
    e - start > 2 &&
    isLineEscapeLetter(word.charCodeAt(e - 1)) &&
    word.charCodeAt(e - 2) === 0x5c &&
    word.charCodeAt(e - 3) !== 0x5c
  )
    e -= 2;
  return e;
}
