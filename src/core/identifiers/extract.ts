import { contentOf } from '../render.js';
import type { Message } from '../types.js';
import type { Identifier } from './kinds.js';
import { endBeforeLineEscapes, hasLineEscape, isJsonDocument, unescapeJson, writesEscapes } from './escapes.js';
import {
  errorOf,
  isHash,
  isPlainWord,
  isWindowsStart,
  NAMED_FILES,
  namesFile,
  pathOf,
  singleOf,
  statusAfter,
} from './values.js';

/**
 * The identifiers a text names, found without a model: file paths, URLs, commit hashes, UUIDs, error names and codes,
 * and symbols in `inline code`. What an agent forgets when a compaction removes the text that named them. The rules
 * (with examples of what is and is not one) are in docs/strategy.md, "What a compaction forgets".
 *
 * Linear in the text: it is cut once into words at whitespace and quotes, a word longer than MAX_WORD is passed over
 * whole, and every pattern is applied to one bounded word, anchored, with no nested choice.
 */

/** Words longer than this (a base64 blob, a minified line) name nothing: they are skipped without being looked into. */
const MAX_WORD = 2048;
/** An `inline code` span is looked for this far after its opening backtick, on the same line. */
const MAX_CODE_SPAN = 200;

/**
 * Characters that end a word whatever it is. In ASCII: whitespace and controls, `"`, backticks, `<>`, `{}` and `|`.
 * Beyond ASCII: every character Unicode classes as punctuation, a space, a control or a format character (typographic
 * quotes `“”‘’«»‹›„`, CJK brackets `「」『』【】（）`, `…`, `—`, `。`, `、`, full-width `，：！？`, the no-break and
 * ideographic spaces, the invisible U+200B–U+200D, U+2060, U+FEFF and the soft hyphen), and `→` (Claude Code's
 * numbered lines). Left out: the hyphens and the en dash (U+2010–U+2013) and the middle dots `·` `・` `･`, which join
 * the parts of a word, so a Wikipedia URL keeps its `–`.
 */
function isHardStop(c: number): boolean {
  const known = STOPS[c];
  return known === 1 || (known === 0 && lookUpStop(c));
}

/** Per UTF-16 code unit: 1 ends every word, 2 does not, 0 not looked up yet (a code unit is classified once per process). */
const STOPS = new Uint8Array(0x10000);

const UNICODE_STOP = /^[\p{P}\p{Z}\p{Cc}\p{Cf}]$/u;

/** Punctuation beyond ASCII that stays inside a word: hyphens, the en dash, middle dots. */
const JOINERS = new Set([0x2010, 0x2011, 0x2012, 0x2013, 0xb7, 0x30fb, 0xff65]);

/** Classifies a code unit the first time it is met; a lone surrogate (half of an emoji) ends no word. */
function lookUpStop(c: number): boolean {
  let stop: boolean;
  if (c < 0x80)
    stop = c <= 0x20 || c === 0x22 || c === 0x60 || c === 0x3c || c === 0x3e || c === 0x7b || c === 0x7d || c === 0x7c;
  else
    stop =
      c === 0x2192 || (!(c >= 0xd800 && c <= 0xdfff) && !JOINERS.has(c) && UNICODE_STOP.test(String.fromCharCode(c)));
  STOPS[c] = stop ? 1 : 2;
  return stop;
}

// ASCII is classified at load, through isHardStop itself: its look-up branch has then run before the word loop is
// optimised, so the first character beyond ASCII a run meets does not throw the optimised loop away (a deopt that
// cost a tenth of the extraction on a 4 MB file).
for (let c = 0; c < 0x80; c++) isHardStop(c);

/** Characters that end a word that is not a URL: brackets, commas, semicolons, equals, apostrophes, backslashes. */
function isSoftStop(c: number): boolean {
  return (
    c === 0x28 ||
    c === 0x29 ||
    c === 0x5b ||
    c === 0x5d ||
    c === 0x2c ||
    c === 0x3b ||
    c === 0x3d ||
    c === 0x27 ||
    c === 0x5c
  );
}

/**
 * Every identifier a text names, each once, in the order first met.
 * @param text any text: a message, a tool call's arguments, a tool result
 */
export function identifiersIn(text: string): Identifier[] {
  const seen = new Set<string>();
  const out: Identifier[] = [];
  forEachIdentifier(text, (id) => {
    const key = identifierKey(id);
    if (seen.has(key)) return;
    seen.add(key);
    out.push(id);
  });
  return out;
}

/** The key one identifier is known by in sets and maps: its kind and value. */
export function identifierKey(id: Identifier): string {
  return `${id.kind}\u0000${id.value}`;
}

/**
 * Calls `visit` for every identifier of a text, as often as it is met.
 * @param text the text
 * @param visit called with each identifier
 */
export function forEachIdentifier(text: string, visit: (id: Identifier) => void): void {
  scan(isJsonDocument(text) ? unescapeJson(text) : text, visit);
}

/** Calls `visit` for every identifier of a text read as written. */
function scan(text: string, visit: (id: Identifier) => void): void {
  const n = text.length;
  const escapes = writesEscapes(text);
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x60) {
      i = codeSpan(text, i, visit);
      continue;
    }
    if (isHardStop(c)) {
      i++;
      continue;
    }
    // A word of letters and plain punctuation (most of prose) can only be an error name or a file known by name, so
    // one with no capital E that does not end in `file` is passed over without being cut out of the text.
    let letters = isLetterOrInert(c);
    let capitalE = c === 0x45;
    let j = i + 1;
    for (; j < n; j++) {
      const d = text.charCodeAt(j);
      if (isHardStop(d)) break;
      if (d === 0x45) capitalE = true;
      else if (
        letters &&
        !isLetterOrInert(d) &&
        !(isTrailing(d) && (j + 1 === n || isHardStop(text.charCodeAt(j + 1))))
      )
        letters = false;
    }
    const skip = letters && !capitalE && !endsWithFile(text, i, j);
    if (!skip && j - i <= MAX_WORD) hardWord(text.slice(i, j), visit, escapes);
    // Two-word forms: `HTTP 404`, `HTTP/1.1 500`, `status 404`, `status code 503`.
    if (j - i <= 8) statusAfter(text, i, j, visit);
    i = j;
  }
}

/** ASCII letters and punctuation that never makes a word an identifier (`,` `;` `!` `?` `(` `)` `'`). */
function isLetterOrInert(c: number): boolean {
  return (
    (c >= 0x61 && c <= 0x7a) ||
    (c >= 0x41 && c <= 0x5a) ||
    c === 0x2c ||
    c === 0x3b ||
    c === 0x21 ||
    c === 0x3f ||
    c === 0x28 ||
    c === 0x29 ||
    c === 0x27
  );
}

/** Whether a character is an ASCII letter. */
function isAsciiLetter(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a);
}

/** Whether a word ends in `file` (`Makefile`), trailing punctuation aside. */
function endsWithFile(text: string, start: number, end: number): boolean {
  let e = end;
  while (e > start && !isAsciiLetter(text.charCodeAt(e - 1))) e--;
  return e - start >= 5 && text.startsWith('file', e - 4);
}

/** An `inline code` span at a backtick: a symbol when it looks like one; returns where scanning goes on. */
function codeSpan(text: string, at: number, visit: (id: Identifier) => void): number {
  let run = at;
  while (run < text.length && text.charCodeAt(run) === 0x60) run++;
  // Fences (```) and double backticks open code blocks, not spans of one symbol.
  if (run - at !== 1) return run;
  const limit = Math.min(text.length, at + 1 + MAX_CODE_SPAN);
  for (let k = at + 1; k < limit; k++) {
    const c = text.charCodeAt(k);
    if (c === 0x0a) break;
    if (c !== 0x60) continue;
    const inner = text.slice(at + 1, k);
    if (!hasIdentifier(inner)) {
      const symbol = symbolOf(inner);
      if (symbol !== null) visit({ kind: 'symbol', value: symbol });
    }
    break;
  }
  // The span's words are read as any others (a path in backticks is a path).
  return at + 1;
}

/** Whether a text names any identifier of another kind (a code span holding one is that, not a symbol). */
function hasIdentifier(text: string): boolean {
  let found = false;
  scan(text, () => {
    found = true;
  });
  return found;
}

/** Literals that look like names. */
const LITERALS = new Set(['True', 'False', 'None', 'NaN', 'Infinity', 'Null', 'Nil']);

const SYMBOL = /^[A-Za-z_$][\w$]*(?:(?:\.|::|#|->)[A-Za-z_$][\w$]*)*(?:\(\))?$/;

/**
 * The symbol an `inline code` span names, or null: an identifier, possibly qualified (`a.b`, `A::b`, `A#b`), possibly
 * called (`f()`, shown without the parentheses). A plain lowercase word (`npm`, `true`) or an all-capitals word
 * without an underscore (`JSON`, `GET`) is prose in code font, not a symbol.
 */
function symbolOf(span: string): string | null {
  if (span.length < 2 || !SYMBOL.test(span)) return null;
  const value = span.endsWith('()') ? span.slice(0, -2) : span;
  if (/^[a-z][a-z0-9]*$/.test(value) || /^[A-Z][A-Z0-9]*$/.test(value) || LITERALS.has(value)) return null;
  return value;
}

/**
 * A word cut at hard stops: a URL, or words cut again at soft stops.
 * @param escapes whether the text writes line breaks as `\n` (see `writesEscapes`)
 */
function hardWord(word: string, visit: (id: Identifier) => void, escapes: boolean): void {
  const scheme = word.indexOf('://');
  if (scheme > 0) {
    let start = scheme;
    while (start > 0 && isSchemeChar(word.charCodeAt(start - 1))) start--;
    let markup = start;
    while (markup > 0 && isEmphasis(word.charCodeAt(markup - 1))) markup--;
    const url = urlOf(word.slice(start), word.slice(markup, start));
    if (start < scheme && url !== null) {
      if (start > 0) softWords(word.slice(0, start), visit, escapes);
      visit({ kind: 'url', value: url.value });
      if (url.end < word.length - start) softWords(word.slice(start + url.end), visit, escapes);
      return;
    }
  }
  softWords(word, visit, escapes);
}

/** Whether a character can be part of a URL's scheme (letters, digits, `+`, `-`, `.`). */
function isSchemeChar(c: number): boolean {
  return (
    (c >= 0x61 && c <= 0x7a) ||
    (c >= 0x41 && c <= 0x5a) ||
    (c >= 0x30 && c <= 0x39) ||
    c === 0x2b ||
    c === 0x2d ||
    c === 0x2e
  );
}

/** The schemes whose URLs are identifiers. */
const SCHEMES = new Set(['http', 'https', 'ftp', 'ftps', 'ws', 'wss', 'file', 'git', 'ssh', 's3', 'gs']);

/** Markdown's emphasis and strikethrough marks: `*`, `_`, `~`. */
function isEmphasis(c: number): boolean {
  return c === 0x2a || c === 0x5f || c === 0x7e;
}

/**
 * The URL at the start of a word and where it ends, or null: the scheme lowercased, trailing punctuation and an
 * unbalanced closing bracket left out (`(see https://a.example/x).` gives `https://a.example/x`), the host lowercased.
 * The `_` and `~` that close the emphasis opened just before the URL are left out too (`_https://a.example/x_`);
 * elsewhere they are the URL's own.
 * @param opened the emphasis marks right before the URL
 */
function urlOf(word: string, opened: string): { value: string; end: number } | null {
  const colon = word.indexOf('://');
  const scheme = word.slice(0, colon).toLowerCase();
  if (!SCHEMES.has(scheme)) return null;
  let end = colon + 3;
  // Stops: backslashes (JSON escapes) and apostrophes; everything else a hard stop did not end is the URL's.
  while (end < word.length && word.charCodeAt(end) !== 0x5c && word.charCodeAt(end) !== 0x27) end++;
  let open = 0;
  for (let k = colon + 3; k < end; k++) {
    const c = word.charCodeAt(k);
    if (c === 0x28 || c === 0x5b) open++;
    else if (c === 0x29 || c === 0x5d) {
      if (open === 0) {
        end = k;
        break;
      }
      open--;
    }
  }
  let underscores = 0;
  let tildes = 0;
  for (let k = 0; k < opened.length; k++) {
    if (opened.charCodeAt(k) === 0x5f) underscores++;
    else if (opened.charCodeAt(k) === 0x7e) tildes++;
  }
  while (end > colon + 3) {
    const c = word.charCodeAt(end - 1);
    if (c === 0x5f && underscores > 0) underscores--;
    else if (c === 0x7e && tildes > 0) tildes--;
    else if (!'.,;:!?*'.includes(word.charAt(end - 1))) break;
    end--;
  }
  const rest = word.slice(colon + 3, end);
  if (rest === '' || (rest.startsWith('/') && scheme !== 'file')) return null;
  const slash = rest.search(/[/?#]/);
  const host = (slash < 0 ? rest : rest.slice(0, slash)).toLowerCase();
  const tail = slash < 0 ? '' : rest.slice(slash);
  if (scheme !== 'file' && !/[a-z0-9]/.test(host)) return null;
  // A trailing slash names the same page (`https://a.example/docs/` is `https://a.example/docs`).
  return { value: `${scheme}://${host}${tail.endsWith('/') ? tail.slice(0, -1) : tail}`, end };
}

/**
 * Cuts a word at soft stops. A part with backslashes is a path when it reads as one (`src\app\Main.cs`,
 * `**C:\a.txt**`, JSON's doubled `src\\app`); in a text that writes escapes, a part with a `\n`, `\r` or `\t` only
 * when that path names a file (`src\tests\a.cs`, but not `a\nsrc`). Otherwise its backslashes are escapes (`\n`,
 * `\"`), each dropped with what it escapes, and only a Windows path inside it keeps its own.
 */
function softWords(word: string, visit: (id: Identifier) => void, escapes: boolean): void {
  const n = word.length;
  let i = 0;
  while (i < n) {
    const c = word.charCodeAt(i);
    if (c !== 0x5c && isSoftStop(c)) {
      i++;
      continue;
    }
    let j = i;
    let backslash = false;
    for (; j < n; j++) {
      const d = word.charCodeAt(j);
      if (d === 0x5c) backslash = true;
      else if (isSoftStop(d)) break;
    }
    if (!backslash) classify(word.slice(i, j), visit);
    else {
      const path = pathIn(word.slice(i, j));
      // In a text that writes escapes, only a path to a file (`src\tests\a.cs`) outweighs its `\t`.
      if (path !== null && (!escapes || !hasLineEscape(word, i, j) || namesFile(path.value))) visit(path);
      else escapedWords(word, i, j, visit);
    }
    i = j;
  }
}

/** The path a part with backslashes reads as, or null (nothing but a path has a backslash). */
function pathIn(part: string): Identifier | null {
  let found: Identifier | null = null;
  classify(part, (id) => {
    found = id;
  });
  return found;
}

/** The words of `word[start, end)` read as JSON-escaped text: a backslash and what it escapes end a word. */
function escapedWords(word: string, start: number, end: number, visit: (id: Identifier) => void): void {
  let i = start;
  while (i < end) {
    // Every place this looks at starts a word: the part's start, or right after an escape (`\nC:\a.ts`).
    if (isWindowsStart(word, i, i)) {
      classify(word.slice(i, endBeforeLineEscapes(word, i, end)), visit);
      return;
    }
    if (word.charCodeAt(i) === 0x5c) {
      // `\n`, `\"`, `\u00e9`: the escape goes with the backslash.
      i += word.charAt(i + 1) === 'u' ? 6 : 2;
      continue;
    }
    let j = i + 1;
    while (j < end && word.charCodeAt(j) !== 0x5c) j++;
    classify(word.slice(i, j), visit);
    i = j;
  }
}

/** Punctuation trimmed off the start of a word: `*` `:` `!` `?` `&` `+` `#` `~`. */
function isLeading(c: number): boolean {
  return c === 0x2a || c === 0x3a || c === 0x21 || c === 0x3f || c === 0x26 || c === 0x2b || c === 0x23 || c === 0x7e;
}

/** Punctuation trimmed off the end of a word: `.` `,` `:` `;` `!` `?` `*`. */
function isTrailing(c: number): boolean {
  return c === 0x2e || c === 0x2c || c === 0x3a || c === 0x3b || c === 0x21 || c === 0x3f || c === 0x2a;
}

/** Rounds of trimming a word gets at most: each takes one closing run of `_` or `~` (`**_~~a.ts~~_**` needs two). */
const MAX_WRAPS = 6;

/** One word, its wrapping punctuation and markdown emphasis trimmed, as the one identifier it is, if any. */
function classify(raw: string, visit: (id: Identifier) => void): void {
  let start = 0;
  let end = raw.length;
  // `~` opened and closed so far, over all the layers.
  let opened = 0;
  let closed = 0;
  // `_` trimmed as opening emphasis that no `_` has closed yet.
  let underscores = 0;
  // Trimmed until nothing more comes off (`**_a.ts_**`, `_a.ts._`), one layer of marks a round. Each round reads the
  // word a few times, so the rounds are bounded: a word of nothing but alternating marks stays linear to read.
  for (let round = 0; round < MAX_WRAPS && end > start; round++) {
    // `~` starts home paths: only trimmed when no slash follows. An `_` right before `*` or `~` opens emphasis (a
    // name does not start `_*`); other leading `_` wait for the `_` that closes them.
    while (start < end) {
      const c = raw.charCodeAt(start);
      if (c === 0x5f) {
        const next = raw.charCodeAt(start + 1);
        if (next !== 0x2a && next !== 0x7e) break;
        underscores++;
      } else if (c === 0x7e) {
        if (raw.charCodeAt(start + 1) === 0x2f) break;
        opened++;
      } else if (!isLeading(c)) break;
      start++;
    }
    while (end > start && isTrailing(raw.charCodeAt(end - 1))) end--;
    const last = end > start ? raw.charCodeAt(end - 1) : 0;
    if (last === 0x7e) {
      // `~~a.ts~~` is struck through; one `~` that opened nothing is an editor's backup file (`a.ts~`).
      const closing = runBefore(raw, start, end, 0x7e);
      if (opened === 0 && closing < 2) break;
      end -= closing;
      closed += closing;
      // As many `~` close as opened: `~~/etc/hosts~~` is `/etc/hosts` struck through, `~~~/notes~~` is `~/notes`.
      if (opened < closed && raw.charCodeAt(start) === 0x7e && raw.charCodeAt(start + 1) === 0x2f) {
        opened++;
        start++;
      }
    } else if (last === 0x5f) {
      const closing = closingUnderscores(raw, start, end);
      if (closing === 0) break;
      const owed = Math.min(closing, underscores);
      underscores -= owed;
      start += Math.min(closing - owed, openingUnderscores(raw, start, end));
      end -= closing;
    } else break;
  }
  if (end - start < 2) return;
  const word = start === 0 && end === raw.length ? raw : raw.slice(start, end);
  // Emacs's lock and autosave files (`#a.ts#`) are not the file.
  if (start > 0 && raw.charCodeAt(start - 1) === 0x23 && raw.charCodeAt(end - 1) === 0x23) return;
  if (isPlainWord(word)) {
    // Most words are prose: only an error name or a file known by name can be one of those.
    const error = errorOf(word);
    if (error !== null) visit({ kind: 'error', value: error });
    else if (NAMED_FILES.has(word)) visit({ kind: 'path', value: word });
    return;
  }
  const single = singleOf(word);
  if (single !== null) {
    visit(single);
    return;
  }
  const range = /^([0-9a-f]{7,40})\.\.\.?([0-9a-f]{7,40})$/.exec(word);
  if (range !== null) {
    for (const h of [range[1] as string, range[2] as string]) if (isHash(h)) visit({ kind: 'hash', value: h });
    return;
  }
  // A Claude Code file mention (`@Makefile`) is read as a path.
  if (word.indexOf('/') < 0 && word.indexOf('.') < 0 && word.indexOf('\\') < 0 && word.charCodeAt(0) !== 0x40) return;
  const path = pathOf(word);
  if (path !== null) visit({ kind: 'path', value: path });
}

/** The length of the run of `c` at the start of `text[start, end)`. */
function runAt(text: string, start: number, end: number, c: number): number {
  let k = start;
  while (k < end && text.charCodeAt(k) === c) k++;
  return k - start;
}

/** The length of the run of `c` that ends `text[start, end)`. */
function runBefore(text: string, start: number, end: number, c: number): number {
  let k = end;
  while (k > start && text.charCodeAt(k - 1) === c) k--;
  return end - k;
}

/** Whether a character separates the parts of a path: `/` or `\`. */
function isSeparator(c: number): boolean {
  return c === 0x2f || c === 0x5c;
}

/** Where the word `text[start, end)` has its first separator, or -1. */
function firstSeparator(text: string, start: number, end: number): number {
  for (let k = start; k < end; k++) if (isSeparator(text.charCodeAt(k))) return k;
  return -1;
}

/** Where the word `text[start, end)` has its last separator, or -1. */
function lastSeparator(text: string, start: number, end: number): number {
  for (let k = end - 1; k >= start; k--) if (isSeparator(text.charCodeAt(k))) return k;
  return -1;
}

/**
 * How many `_` at the end of a word close markdown emphasis (`_a.ts_`, `see src/a.ts_`, `_src/_app.tsx_`): all of
 * them, except those of a last folder whose name is wrapped in them (`src/__tests__` keeps its `__`). A name with an
 * extension does not end in `_`, so after one every `_` closes. A word of one part keeps none of its own: `__init__`
 * alone names nothing, whatever is trimmed.
 */
function closingUnderscores(text: string, start: number, end: number): number {
  const trailing = runBefore(text, start, end, 0x5f);
  if (trailing === 0 || trailing === end - start) return 0;
  const slash = lastSeparator(text, start, end);
  if (slash < 0) return trailing;
  const own = runAt(text, slash + 1, end, 0x5f);
  if (own === 0 || trailing < own || text.lastIndexOf('.', end - trailing - 1) > slash) return trailing;
  return trailing - own;
}

/**
 * How many `_` at the start of a word may open emphasis (`_src/a.ts_`, `_/etc/hosts_`): all of them, except those of a
 * first folder wrapped in them (`__tests__/a.ts`). Only as many as close it are trimmed, so `_config.yml` keeps its `_`.
 */
function openingUnderscores(text: string, start: number, end: number): number {
  const leading = runAt(text, start, end, 0x5f);
  if (leading === 0) return 0;
  const slash = firstSeparator(text, start, end);
  // No folder, or one of nothing but the marks (`_/etc/hosts_`): every `_` may open.
  if (slash < 0 || slash === start + leading) return leading;
  return leading - Math.min(leading, runBefore(text, start, slash, 0x5f));
}

/**
 * Every identifier of a message: in its text, its tool calls' arguments, its tool results and its files' names.
 * Tool names are not identifiers (they stay with the tool schemas).
 */
export function identifiersOfMessage(message: Message, visit: (id: Identifier) => void): void {
  forEachIdentifierText(message, (text, isArguments) => identifiersOfText(text, isArguments, visit));
}

/**
 * Each text of a message that `identifiersOfMessage` reads, in its order: a message's identifiers are those of its
 * texts, so a caller may remember each text's (a text is read the same wherever it comes from).
 * @param message the message
 * @param visit called with each text, and whether it is a tool call's arguments (read as JSON text)
 */
export function forEachIdentifierText(message: Message, visit: (text: string, isArguments: boolean) => void): void {
  const content = contentOf(message);
  for (const text of content.texts) visit(text, false);
  for (const call of content.toolCalls) visit(call.arguments, true);
  for (const result of content.results) visit(result.text, false);
  for (const file of content.files) if (file !== null) visit(file, false);
}

/** Calls `visit` for every identifier of one text of a message (`isArguments`: a tool call's arguments). */
export function identifiersOfText(text: string, isArguments: boolean, visit: (id: Identifier) => void): void {
  // Arguments are JSON text (ASCII, as Python writes it): `src/caf\u00e9.ts` is read as `src/café.ts`.
  if (isArguments) scan(unescapeJson(text), visit);
  else forEachIdentifier(text, visit);
}
