/** How a file writes its JSON, so a note written into it looks like its neighbours. */
export interface JsonStyle {
  /** Indentation unit for pretty output, or null for single-line values. */
  readonly unit: string | null;
  /** The indentation of the line the value starts on. */
  readonly baseIndent: string;
  readonly eol: '\n' | '\r\n';
  /** `": "` or `":"`, and `", "` or `","` for single-line values. */
  readonly colon: string;
  readonly comma: string;
}

/**
 * Guesses a style from one item's raw text and the indentation it sits at.
 * @param raw an item of the same list, as written
 * @param baseIndent the whitespace before the item on its line
 * @param eol the file's line ending
 */
export function detectStyle(raw: string, baseIndent: string, eol: '\n' | '\r\n'): JsonStyle {
  const colonMatch = /"\s*:( ?)/.exec(raw);
  const colon = colonMatch && colonMatch[1] === ' ' ? ': ' : ':';
  const nl = raw.indexOf('\n');
  if (nl === -1) {
    const commaMatch = /[}\]"\d el],( ?)["{[\d tfn-]/.exec(raw);
    const comma = commaMatch ? (commaMatch[1] === ' ' ? ', ' : ',') : colon === ': ' ? ', ' : ',';
    return { unit: null, baseIndent, eol, colon, comma };
  }
  const nextLine = raw.slice(nl + 1);
  const indent = /^[ \t]*/.exec(nextLine)?.[0] ?? '';
  const unit =
    indent.startsWith(baseIndent) && indent.length > baseIndent.length ? indent.slice(baseIndent.length) : '  ';
  return { unit, baseIndent, eol, colon: ': ', comma: ',' };
}

/**
 * Writes a JSON value (plain data: objects, arrays, strings, numbers, booleans, null) in a style.
 * Used only for notes, which swc builds itself; input items are never re-serialized.
 */
export function writeJson(value: unknown, style: JsonStyle): string {
  if (style.unit === null) return writeCompact(value, style.colon, style.comma);
  const text = JSON.stringify(value, null, style.unit);
  return text.split('\n').join(style.eol + style.baseIndent);
}

function writeCompact(value: unknown, colon: string, comma: string): string {
  if (Array.isArray(value)) return `[${value.map((v) => writeCompact(v, colon, comma)).join(comma)}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}${colon}${writeCompact(v, colon, comma)}`).join(comma)}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
