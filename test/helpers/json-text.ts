/**
 * JSON written by hand, so tests can hold what JSON.stringify never writes: number lexemes such as `1.0`, `1e400`,
 * `-0` and 2^53+1, `\u00e9` next to `é`, duplicate keys, and a `__proto__` member. A file style (compact or pretty,
 * indentation unit, line ending, final newline, byte-order mark) decides the layout, the way editors and SDKs write.
 */

/** A JSON value whose text is chosen exactly. Plain strings, numbers, booleans and null are written as JSON.stringify writes them. */
export type JsonNode =
  | string
  | number
  | boolean
  | null
  | { readonly raw: string }
  | { readonly list: readonly JsonNode[] }
  | { readonly members: readonly (readonly [string, JsonNode])[] };

/** A scalar written exactly as given (a number lexeme, or a string with its own escapes, quotes included). */
export function raw(text: string): JsonNode {
  return { raw: text };
}

export function list(...items: JsonNode[]): JsonNode {
  return { list: items };
}

/** An object from members in order; the same key may come twice. */
export function obj(...members: (readonly [string, JsonNode])[]): JsonNode {
  return { members };
}

/** How a file lays its JSON out. */
export interface FileStyle {
  /** `null`: every item on one line; otherwise the indentation unit of a fully pretty file (as `JSON.stringify(v, null, unit)`). */
  readonly unit: string | null;
  /**
   * JSON documents only, with `unit` null: the list's items each on a line of their own (and a container's members),
   * indented by this per level; the items themselves stay on one line.
   */
  readonly itemIndent: string | null;
  /** `": "` or `":"` and `", "` or `","` inside single-line items. */
  readonly colon: string;
  readonly comma: string;
  readonly eol: '\n' | '\r\n';
  readonly finalNewline: boolean;
  readonly bom: boolean;
}

export const PRETTY_2: FileStyle = {
  unit: '  ',
  itemIndent: null,
  colon: ': ',
  comma: ', ',
  eol: '\n',
  finalNewline: true,
  bom: false,
};

function isRawNode(node: JsonNode): node is { readonly raw: string } {
  return typeof node === 'object' && node !== null && 'raw' in node;
}

function isListNode(node: JsonNode): node is { readonly list: readonly JsonNode[] } {
  return typeof node === 'object' && node !== null && 'list' in node;
}

/** Writes a value on one line with the style's separators. */
export function writeLine(node: JsonNode, style: Pick<FileStyle, 'colon' | 'comma'>): string {
  if (node === null || typeof node !== 'object') return JSON.stringify(node);
  if (isRawNode(node)) return node.raw;
  if (isListNode(node)) return `[${node.list.map((n) => writeLine(n, style)).join(style.comma)}]`;
  return `{${node.members.map(([k, v]) => `${JSON.stringify(k)}${style.colon}${writeLine(v, style)}`).join(style.comma)}}`;
}

/** Writes a value the way `JSON.stringify(value, null, unit)` lays it out, lines joined with `eol`, nested under `indent`. */
export function writePretty(node: JsonNode, unit: string, eol: string, indent = ''): string {
  if (node === null || typeof node !== 'object') return JSON.stringify(node);
  if (isRawNode(node)) return node.raw;
  const inner = indent + unit;
  if (isListNode(node)) {
    if (node.list.length === 0) return '[]';
    return `[${eol}${node.list.map((n) => inner + writePretty(n, unit, eol, inner)).join(`,${eol}`)}${eol}${indent}]`;
  }
  if (node.members.length === 0) return '{}';
  return `{${eol}${node.members.map(([k, v]) => `${inner}${JSON.stringify(k)}: ${writePretty(v, unit, eol, inner)}`).join(`,${eol}`)}${eol}${indent}}`;
}

/** The list of items, where it sits in a document, with the style's layout. */
function writeList(items: readonly JsonNode[], style: FileStyle, indent: string): string {
  if (style.unit !== null) return writePretty({ list: items }, style.unit, style.eol, indent);
  if (style.itemIndent === null || items.length === 0)
    return `[${items.map((n) => writeLine(n, style)).join(style.comma)}]`;
  const inner = indent + style.itemIndent;
  return `[${style.eol}${items.map((n) => inner + writeLine(n, style)).join(`,${style.eol}`)}${style.eol}${indent}]`;
}

/** Where the list of items goes: a bare list, or a member of an object among other members. */
export interface Frame {
  /** null: the file is the list itself. */
  readonly key: string | null;
  readonly before: readonly (readonly [string, JsonNode])[];
  readonly after: readonly (readonly [string, JsonNode])[];
}

export const BARE: Frame = { key: null, before: [], after: [] };

/**
 * Writes a JSON document holding `items` in a frame.
 * @returns the text, without the byte-order mark (see `fileBytes`)
 */
export function writeJsonDocument(items: readonly JsonNode[], frame: Frame, style: FileStyle): string {
  let body: string;
  if (frame.key === null) body = writeList(items, style, '');
  else {
    // A pretty document indents its members by the unit; a one-line-items document by the items' indentation.
    const unit = style.unit ?? style.itemIndent;
    const member = ([k, v]: readonly [string, JsonNode]): [string, string] => [
      k,
      style.unit === null ? writeLine(v, style) : writePretty(v, style.unit, style.eol, style.unit),
    ];
    const members: [string, string][] = [
      ...frame.before.map(member),
      [frame.key, writeList(items, style, unit ?? '')],
      ...frame.after.map(member),
    ];
    body =
      unit === null
        ? `{${members.map(([k, v]) => `${JSON.stringify(k)}${style.colon}${v}`).join(style.comma)}}`
        : `{${style.eol}${members.map(([k, v]) => `${unit}${JSON.stringify(k)}: ${v}`).join(`,${style.eol}`)}${style.eol}}`;
  }
  return body + (style.finalNewline ? style.eol : '');
}

/** Writes items one per line (JSONL); items are always single-line. */
export function writeJsonLines(items: readonly JsonNode[], style: FileStyle): string {
  return (
    items.map((n) => writeLine(n, style)).join(style.eol) + (style.finalNewline && items.length > 0 ? style.eol : '')
  );
}

/** The file's bytes: UTF-8, with a byte-order mark when the style has one. */
export function fileBytes(text: string, style: Pick<FileStyle, 'bom'>): Buffer {
  return Buffer.from(style.bom ? `\ufeff${text}` : text, 'utf8');
}
