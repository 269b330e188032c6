import { JsonNumber, isJsonObject, parseJson, type JsonObject, type JsonValue } from './value.js';

/**
 * Writes a JSON value exactly as Python's `json.dumps(value, sort_keys=True)` does, because tool-call
 * arguments are measured in that form: keys sorted by code point at every level, `", "` and `": "`
 * separators, everything outside printable ASCII escaped, floats in Python's repr. Iterative, so any depth
 * the parser accepts is written in full (a deep value must cost what it says, never a stand-in).
 * @param value a value from `parseJson` (numbers keep their lexeme)
 * @returns the Python rendering
 */
export function pythonJsonDumps(value: JsonValue): string {
  const open: DumpFrame[] = [];
  let out = '';
  let next: JsonValue = value;
  for (;;) {
    if (next === null) out += 'null';
    else if (next === true) out += 'true';
    else if (next === false) out += 'false';
    else if (typeof next === 'string') out += pythonString(next);
    else if (next instanceof JsonNumber) out += pythonNumber(next.raw);
    else if (Array.isArray(next)) {
      if (next.length === 0) out += '[]';
      else {
        out += '[';
        open.push({ items: next, keys: null, at: 0 });
      }
    } else {
      const keys = Object.keys(next).sort(compareCodePoints);
      if (keys.length === 0) out += '{}';
      else {
        out += '{';
        open.push({ items: next, keys, at: 0 });
      }
    }
    // Find the next value to write, closing every container that has none left.
    let found = false;
    while (!found) {
      const top = open[open.length - 1];
      if (top === undefined) return out;
      const count = top.keys === null ? (top.items as JsonValue[]).length : top.keys.length;
      if (top.at === count) {
        out += top.keys === null ? ']' : '}';
        open.pop();
        continue;
      }
      if (top.at > 0) out += ', ';
      if (top.keys === null) next = (top.items as JsonValue[])[top.at] as JsonValue;
      else {
        const key = top.keys[top.at] as string;
        out += `${pythonString(key)}: `;
        next = (top.items as JsonObject)[key] as JsonValue;
      }
      top.at++;
      found = true;
    }
  }
}

/** A list or object being written: its items, its keys in writing order (null for a list), and the next position. */
interface DumpFrame {
  readonly items: JsonValue[] | JsonObject;
  readonly keys: string[] | null;
  at: number;
}

/**
 * Renders tool-call arguments held as a JSON string (OpenAI's `arguments`): parsed first, and left as
 * written when it is not valid JSON.
 */
export function renderArgumentsString(raw: string): string {
  let parsed: JsonValue;
  try {
    parsed = parseJson(raw);
  } catch {
    return raw;
  }
  return renderArguments(parsed);
}

/** Renders a parsed arguments value as Python writes it, at any depth. */
export function renderArguments(value: JsonValue): string {
  return pythonJsonDumps(value);
}

/** Compares strings by Unicode code point, as Python sorts them (JavaScript's default compares UTF-16 units). */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // Surrogates (astral characters) sort above every BMP character in code point order.
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs !== ys) return xs ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}

const SHORT_ESCAPES: Record<number, string> = {
  0x22: '\\"',
  0x5c: '\\\\',
  0x0a: '\\n',
  0x0d: '\\r',
  0x09: '\\t',
  0x08: '\\b',
  0x0c: '\\f',
};

/** A string as Python's ensure_ascii JSON encoder writes it. */
export function pythonString(s: string): string {
  let out = '"';
  let runStart = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x20 && c <= 0x7e && c !== 0x22 && c !== 0x5c) continue;
    out += s.slice(runStart, i);
    out += SHORT_ESCAPES[c] ?? `\\u${c.toString(16).padStart(4, '0')}`;
    runStart = i + 1;
  }
  return out + s.slice(runStart) + '"';
}

/** A JSON number lexeme as Python prints the value json.loads makes of it (int or float repr). */
export function pythonNumber(raw: string): string {
  if (!/[.eE]/.test(raw)) return BigInt(raw).toString();
  const x = Number(raw);
  if (x === Infinity) return 'Infinity';
  if (x === -Infinity) return '-Infinity';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const [mantissa = '', expText = '0'] = x.toExponential().split('e');
  const negative = mantissa.startsWith('-');
  const digits = mantissa.replace('-', '').replace('.', '');
  const exp = Number(expText);
  let body: string;
  if (exp >= -4 && exp < 16) {
    if (exp >= 0) {
      const intPart = digits.slice(0, exp + 1).padEnd(exp + 1, '0');
      const frac = digits.slice(exp + 1);
      body = `${intPart}.${frac === '' ? '0' : frac}`;
    } else {
      body = `0.${'0'.repeat(-exp - 1)}${digits}`;
    }
  } else {
    const rest = digits.slice(1);
    const abs = Math.abs(exp);
    body = `${digits[0]}${rest === '' ? '' : `.${rest}`}e${exp < 0 ? '-' : '+'}${abs < 10 ? `0${abs}` : abs}`;
  }
  return negative ? `-${body}` : body;
}

export { isJsonObject };
