import {
  JsonDepthError,
  JsonSyntaxError,
  MAX_JSON_DEPTH,
  describeChar,
  parseJson,
  readNumberEnd,
  skipWhitespace,
} from '../core/json/value.js';

/**
 * Finds where values start and end in JSON text without building them, so kept items can be copied from the
 * input byte for byte. Iterative: nesting depth costs no stack.
 */

export interface Span {
  readonly start: number;
  readonly end: number;
}

export interface Member {
  readonly key: string;
  readonly value: Span;
}

/** Skips a string starting at its opening quote; returns the offset after the closing quote. */
function skipString(text: string, pos: number, end: number): number {
  let i = pos + 1;
  for (;;) {
    const q = text.indexOf('"', i);
    if (q === -1 || q >= end)
      throw new JsonSyntaxError(
        `unterminated string${end === text.length ? ' (the file ends inside it: truncated?)' : ''}`,
        pos,
      );
    // Count the backslashes right before the quote: an odd number escapes it.
    let b = q - 1;
    while (b > pos && text.charCodeAt(b) === 0x5c) b--;
    if ((q - 1 - b) % 2 === 0) return q + 1;
    i = q + 1;
  }
}

/** Decodes a key string (keys are short; JSON.parse handles the escapes). */
function readKey(text: string, pos: number, end: number): [string, number] {
  const after = skipString(text, pos, end);
  try {
    return [JSON.parse(text.slice(pos, after)) as string, after];
  } catch {
    throw new JsonSyntaxError('invalid key string', pos);
  }
}

/**
 * Skips one JSON value starting at `pos` (no leading whitespace). Brackets, strings and scalar lexemes are
 * checked here; the contents of the value are checked when it is parsed.
 * @returns the offset just after the value
 * @throws JsonSyntaxError for a bracket or string that does not close; JsonDepthError past MAX_JSON_DEPTH levels
 */
export function skipValue(text: string, pos: number, end = text.length): number {
  const first = text.charCodeAt(pos);
  if (first !== 0x7b && first !== 0x5b) return skipScalar(text, pos, end);
  const closers: number[] = [];
  let i = pos;
  while (i < end) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      i = skipString(text, i, end);
      continue;
    }
    if (c === 0x7b || c === 0x5b) {
      // Refused here, before anything is parsed: each level parsed would cost memory (see MAX_JSON_DEPTH).
      if (closers.push(c + 2) > MAX_JSON_DEPTH) throw new JsonDepthError(i);
    } else if (c === 0x7d || c === 0x5d) {
      if (closers.pop() !== c) throw new JsonSyntaxError(`unexpected ${describeChar(text, i)}`, i);
      if (closers.length === 0) return i + 1;
    }
    i++;
  }
  throw new JsonSyntaxError('unexpected end of JSON (truncated?)', end);
}

/**
 * Where a JSON text opens a level past MAX_JSON_DEPTH, or -1. Checks nesting only (a text that is not JSON is
 * left to the parser to explain); a text too short to hold that many levels is not scanned.
 */
export function depthOverflow(text: string, start = 0, end = text.length): number {
  if (end - start <= 2 * MAX_JSON_DEPTH) return -1;
  let depth = 0;
  try {
    for (let i = start; i < end; i++) {
      const c = text.charCodeAt(i);
      if (c === 0x22) i = skipString(text, i, end) - 1;
      else if (c === 0x7b || c === 0x5b) {
        if (++depth > MAX_JSON_DEPTH) return i;
      } else if (c === 0x7d || c === 0x5d) depth--;
    }
  } catch {
    // An unterminated string: the parser says so.
  }
  return -1;
}

function skipScalar(text: string, pos: number, end: number): number {
  const c = text.charCodeAt(pos);
  if (c === 0x22) return skipString(text, pos, end);
  if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return readNumberEnd(text, pos, end);
  for (const word of ['true', 'false', 'null']) if (text.startsWith(word, pos)) return pos + word.length;
  if (pos >= end) throw new JsonSyntaxError('unexpected end of JSON (truncated?)', pos);
  throw new JsonSyntaxError(`unexpected ${describeChar(text, pos)}`, pos);
}

/**
 * Lists the elements of the array whose `[` is at `pos`.
 * @returns element spans and the offset after `]`
 */
export function arrayElements(text: string, pos: number, end = text.length): { elements: Span[]; end: number } {
  const elements: Span[] = [];
  let i = skipWhitespace(text, pos + 1, end);
  if (text.charCodeAt(i) === 0x5d) return { elements, end: i + 1 };
  for (;;) {
    if (i >= end) throw new JsonSyntaxError('unexpected end of JSON (truncated?)', i);
    const after = skipValue(text, i, end);
    elements.push({ start: i, end: after });
    i = skipWhitespace(text, after, end);
    const c = text.charCodeAt(i);
    if (c === 0x2c) {
      i = skipWhitespace(text, i + 1, end);
      continue;
    }
    if (c === 0x5d) return { elements, end: i + 1 };
    if (i >= end) throw new JsonSyntaxError('unexpected end of JSON (truncated?)', i);
    throw new JsonSyntaxError(`expected ',' or ']' but found ${describeChar(text, i)}`, i);
  }
}

/**
 * Lists the members of the object whose `{` is at `pos`, keys decoded.
 * @returns members in order (duplicates kept) and the offset after `}`
 */
export function objectMembers(text: string, pos: number, end = text.length): { members: Member[]; end: number } {
  const members: Member[] = [];
  let i = skipWhitespace(text, pos + 1, end);
  if (text.charCodeAt(i) === 0x7d) return { members, end: i + 1 };
  for (;;) {
    if (text.charCodeAt(i) !== 0x22) {
      if (i >= end) throw new JsonSyntaxError('unexpected end of JSON (truncated?)', i);
      throw new JsonSyntaxError(`expected a key string but found ${describeChar(text, i)}`, i);
    }
    const [key, afterKey] = readKey(text, i, end);
    i = skipWhitespace(text, afterKey, end);
    if (text.charCodeAt(i) !== 0x3a) throw new JsonSyntaxError(`expected ':' but found ${describeChar(text, i)}`, i);
    i = skipWhitespace(text, i + 1, end);
    const after = skipValue(text, i, end);
    members.push({ key, value: { start: i, end: after } });
    i = skipWhitespace(text, after, end);
    const c = text.charCodeAt(i);
    if (c === 0x2c) {
      i = skipWhitespace(text, i + 1, end);
      continue;
    }
    if (c === 0x7d) return { members, end: i + 1 };
    if (i >= end) throw new JsonSyntaxError('unexpected end of JSON (truncated?)', i);
    throw new JsonSyntaxError(`expected ',' or '}' but found ${describeChar(text, i)}`, i);
  }
}

/** The member that JSON.parse would take for a key (the last of duplicates). */
export function findMember(members: readonly Member[], key: string): Member | undefined {
  for (let k = members.length - 1; k >= 0; k--) if (members[k]?.key === key) return members[k];
  return undefined;
}

/**
 * Parses a slice natively (fast; `__proto__` becomes an own key), turning its error into a JsonSyntaxError
 * with an offset in `text`.
 */
export function parseSlice(text: string, span: Span): unknown {
  try {
    return JSON.parse(text.slice(span.start, span.end));
  } catch (error) {
    throw explainJsonError(text, span, error);
  }
}

/**
 * Says why JSON.parse refused a slice, in swc's own words: the slice is parsed again with swc's parser, so the
 * message and its offset are the same on every Node version (V8's wording changes, and some of it echoes input).
 * @param error what JSON.parse threw, used only if swc's parser finds nothing wrong
 * @returns a JsonSyntaxError with an offset in `text`
 */
export function explainJsonError(text: string, span: Span, error: unknown): JsonSyntaxError {
  try {
    parseJson(text, span.start, span.end);
  } catch (found) {
    if (found instanceof JsonSyntaxError) return found;
  }
  const message = error instanceof Error ? error.message : String(error);
  return new JsonSyntaxError(plainJsonMessage(message), span.start);
}

/** V8's messages without the position suffix and the echoed input. */
function plainJsonMessage(message: string): string {
  const cut = message
    .replace(/ in JSON at position \d+.*$/s, '')
    .replace(/^Unexpected token .*?, ".*$/s, 'unexpected token');
  return cut.charAt(0).toLowerCase() + cut.slice(1);
}
