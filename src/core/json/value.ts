/**
 * A JSON reader that loses nothing the renderer needs: numbers keep their lexeme (so `1.0` stays a float
 * and `12345678901234567890` stays exact), objects have no prototype (so `__proto__` is an ordinary key),
 * duplicate keys keep the first position and the last value (as Python's json does). Iterative, so deep
 * nesting cannot overflow the stack.
 */

/** A JSON number with its original lexeme. */
export class JsonNumber {
  constructor(readonly raw: string) {}
  /** The value as a JavaScript number (may be Infinity for overflowing lexemes). */
  valueOf(): number {
    return Number(this.raw);
  }
}

export type JsonValue = null | boolean | string | JsonNumber | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

/** A syntax error with the offset it was found at. */
export class JsonSyntaxError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
    this.name = 'JsonSyntaxError';
  }
}

/** True for an object value (not an array, not null). */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof JsonNumber);
}

const WS = new Uint8Array(128);
WS[0x20] = WS[0x09] = WS[0x0a] = WS[0x0d] = 1;

/** Skips JSON whitespace from `pos`. */
export function skipWhitespace(text: string, pos: number, end = text.length): number {
  while (pos < end) {
    const c = text.charCodeAt(pos);
    if (c < 128 && WS[c] === 1) pos++;
    else break;
  }
  return pos;
}

/**
 * Reads a JSON string starting at the opening quote.
 * @returns the decoded string and the offset after the closing quote
 */
export function readString(text: string, pos: number, end = text.length): [string, number] {
  let i = pos + 1;
  let out = '';
  let runStart = i;
  while (i < end) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      out += text.slice(runStart, i);
      return [out, i + 1];
    }
    if (c === 0x5c) {
      out += text.slice(runStart, i);
      const e = text.charCodeAt(i + 1);
      switch (e) {
        case 0x22:
          out += '"';
          i += 2;
          break;
        case 0x5c:
          out += '\\';
          i += 2;
          break;
        case 0x2f:
          out += '/';
          i += 2;
          break;
        case 0x62:
          out += '\b';
          i += 2;
          break;
        case 0x66:
          out += '\f';
          i += 2;
          break;
        case 0x6e:
          out += '\n';
          i += 2;
          break;
        case 0x72:
          out += '\r';
          i += 2;
          break;
        case 0x74:
          out += '\t';
          i += 2;
          break;
        case 0x75: {
          const hex = text.slice(i + 2, i + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw new JsonSyntaxError('bad \\u escape in a string', i);
          out += String.fromCharCode(parseInt(hex, 16));
          i += 6;
          break;
        }
        default:
          throw new JsonSyntaxError('bad escape in a string', i);
      }
      runStart = i;
      continue;
    }
    if (c < 0x20) throw new JsonSyntaxError('control character inside a string', i);
    i++;
  }
  throw new JsonSyntaxError('unterminated string', pos);
}

/** Reads a number lexeme starting at `pos`; returns its end offset. */
export function readNumberEnd(text: string, pos: number, end = text.length): number {
  let i = pos;
  if (text.charCodeAt(i) === 0x2d) i++;
  const intStart = i;
  if (text.charCodeAt(i) === 0x30) i++;
  else {
    while (i < end && isDigit(text.charCodeAt(i))) i++;
  }
  if (i === intStart) throw new JsonSyntaxError('invalid number', pos);
  if (text.charCodeAt(i) === 0x2e) {
    i++;
    const fracStart = i;
    while (i < end && isDigit(text.charCodeAt(i))) i++;
    if (i === fracStart) throw new JsonSyntaxError('invalid number', pos);
  }
  const e = text.charCodeAt(i);
  if (e === 0x65 || e === 0x45) {
    i++;
    const s = text.charCodeAt(i);
    if (s === 0x2b || s === 0x2d) i++;
    const expStart = i;
    while (i < end && isDigit(text.charCodeAt(i))) i++;
    if (i === expStart) throw new JsonSyntaxError('invalid number', pos);
  }
  return i;
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/**
 * The deepest nesting of arrays and objects swc reads (`[[]]` is 2 levels). Each level costs a few hundred bytes
 * once parsed and rendered, so millions of levels in a few MB would exhaust the heap; no transcript comes near this
 * (Python's json, which Haystack renders with, stops at about 1,000).
 */
export const MAX_JSON_DEPTH = 10_000;

/** JSON nested deeper than MAX_JSON_DEPTH: valid, but refused. `offset` is where the level past the limit opens. */
export class JsonDepthError extends JsonSyntaxError {
  constructor(offset: number) {
    super(
      `nested deeper than ${MAX_JSON_DEPTH.toLocaleString('en-US')} levels of arrays and objects; swc refuses JSON this deep`,
      offset,
    );
    this.name = 'JsonDepthError';
  }
}

type Frame = { kind: 'array'; value: JsonValue[] } | { kind: 'object'; value: JsonObject; key: string | null };

/**
 * Parses one JSON value from `text[start, end)` losslessly; the rest of the range must be whitespace.
 * @throws JsonSyntaxError with the offset of the problem; JsonDepthError past MAX_JSON_DEPTH levels
 */
export function parseJson(text: string, start = 0, end = text.length): JsonValue {
  const stack: Frame[] = [];
  let pos = skipWhitespace(text, start, end);
  let result: JsonValue | undefined;
  for (;;) {
    // Read one value at pos.
    pos = skipWhitespace(text, pos, end);
    if (pos >= end) throw new JsonSyntaxError('unexpected end of JSON', pos);
    const c = text.charCodeAt(pos);
    let value: JsonValue;
    let opened = false;
    if ((c === 0x7b || c === 0x5b) && stack.length >= MAX_JSON_DEPTH) throw new JsonDepthError(pos);
    if (c === 0x7b) {
      const obj = Object.create(null) as JsonObject;
      pos = skipWhitespace(text, pos + 1, end);
      if (text.charCodeAt(pos) === 0x7d) {
        pos++;
        value = obj;
      } else {
        let key: string;
        [key, pos] = readKey(text, pos, end);
        stack.push({ kind: 'object', value: obj, key });
        opened = true;
        value = obj;
      }
    } else if (c === 0x5b) {
      const arr: JsonValue[] = [];
      pos = skipWhitespace(text, pos + 1, end);
      if (text.charCodeAt(pos) === 0x5d) {
        pos++;
        value = arr;
      } else {
        stack.push({ kind: 'array', value: arr });
        opened = true;
        value = arr;
      }
    } else if (c === 0x22) {
      const [s, after] = readString(text, pos, end);
      value = s;
      pos = after;
    } else if (c === 0x2d || isDigit(c)) {
      const after = readNumberEnd(text, pos, end);
      value = new JsonNumber(text.slice(pos, after));
      pos = after;
    } else if (text.startsWith('true', pos)) {
      value = true;
      pos += 4;
    } else if (text.startsWith('false', pos)) {
      value = false;
      pos += 5;
    } else if (text.startsWith('null', pos)) {
      value = null;
      pos += 4;
    } else {
      throw new JsonSyntaxError(`unexpected character ${describeChar(text, pos)}`, pos);
    }
    if (opened) continue;
    // Attach the finished value to its parent, closing containers as they end.
    let done = value;
    for (;;) {
      const top = stack[stack.length - 1];
      if (top === undefined) {
        result = done;
        break;
      }
      if (top.kind === 'array') top.value.push(done);
      else top.value[top.key as string] = done;
      pos = skipWhitespace(text, pos, end);
      const d = text.charCodeAt(pos);
      if (d === 0x2c) {
        pos++;
        if (top.kind === 'object') {
          pos = skipWhitespace(text, pos, end);
          [top.key, pos] = readKey(text, pos, end);
        }
        break;
      }
      if ((top.kind === 'array' && d === 0x5d) || (top.kind === 'object' && d === 0x7d)) {
        pos++;
        stack.pop();
        done = top.value;
        continue;
      }
      if (pos >= end) throw new JsonSyntaxError('unexpected end of JSON', pos);
      throw new JsonSyntaxError(
        `expected ',' or '${top.kind === 'array' ? ']' : '}'}' but found ${describeChar(text, pos)}`,
        pos,
      );
    }
    if (result !== undefined) break;
  }
  pos = skipWhitespace(text, pos, end);
  if (pos < end) throw new JsonSyntaxError(`unexpected ${describeChar(text, pos)} after the JSON value`, pos);
  return result;
}

/**
 * A value as `parseJson` reads the JSON text that `JSON.stringify` writes for it, made without writing or reading that
 * text: numbers with the lexeme JSON writes, objects without a prototype, keys in order. For values that JSON writes
 * as they are (what `JSON.parse` gives, or plain data: plain objects and arrays of strings, finite numbers other than
 * -0, booleans and null); anything else gives undefined, and so does a value nested deeper than the reader takes or
 * the stack allows: the text's reader then has the last word (and the error that names why).
 */
export function jsonValueOf(value: unknown): JsonValue | undefined {
  try {
    return valueAt(value, 0);
  } catch (error) {
    if (error instanceof RangeError || error === NOT_PLAIN) return undefined;
    throw error;
  }
}

const NOT_PLAIN = new Error('not plain JSON data');

/** `jsonValueOf` at a depth: throws NOT_PLAIN at what JSON would not write as it is or past MAX_JSON_DEPTH. */
function valueAt(value: unknown, depth: number): JsonValue {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      if (!Number.isFinite(value) || Object.is(value, -0)) throw NOT_PLAIN;
      return new JsonNumber(String(value));
    case 'object':
      break;
    default:
      throw NOT_PLAIN;
  }
  if (value === null) return null;
  if (depth >= MAX_JSON_DEPTH) throw NOT_PLAIN;
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) throw NOT_PLAIN;
    const out = new Array<JsonValue>(value.length);
    for (let i = 0; i < value.length; i++) out[i] = valueAt(value[i], depth + 1);
    return out;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if ((proto !== Object.prototype && proto !== null) || typeof (value as { toJSON?: unknown }).toJSON === 'function')
    throw NOT_PLAIN;
  const out = Object.create(null) as JsonObject;
  for (const key of Object.keys(value)) out[key] = valueAt((value as Record<string, unknown>)[key], depth + 1);
  return out;
}

/** A member's key and its colon, from the key's opening quote: the key and where its value starts. */
function readKey(text: string, pos: number, end: number): [string, number] {
  if (text.charCodeAt(pos) !== 0x22) throw new JsonSyntaxError('expected a key string', pos);
  const [key, after] = readString(text, pos, end);
  const colon = skipWhitespace(text, after, end);
  if (text.charCodeAt(colon) !== 0x3a) throw new JsonSyntaxError("expected ':' after a key", colon);
  return [key, colon + 1];
}

/** Names a character for an error message, control characters as escapes. */
export function describeChar(text: string, pos: number): string {
  const c = text.codePointAt(pos);
  if (c === undefined) return 'end of input';
  if (c < 0x20 || c === 0x7f) return `'\\u${c.toString(16).padStart(4, '0')}'`;
  return `'${String.fromCodePoint(c)}'`;
}
