// The rules this module decides by, numbered and explained: docs/strategy.md#tool-result-offloading.
import { codePointLength } from './code-points.js';
import { isPointerText, POINTER_START } from './pointer.js';
import { isPlaceholderSketch, isPlaceholderText, protectedResults, resultSteps } from './prune.js';
import { contentOf, marksOf } from './render.js';
import { longerThanCodePoints, sketchedResults, startsWith } from './sketch.js';
import type { Content, Message, ResultSketch } from './types.js';

/** Haystack's meta key on an offloaded result; its value is the store reference. */
export const OFFLOADED_META_KEY = 'tool_result_offloaded';

/** Characters of the original result the pointer shows by default (Haystack's `preview_chars`). */
export const PREVIEW_CHARS = 200;

export {
  isPointerLike,
  isPointerText,
  oldPointerText,
  parsePointer,
  parsePointers,
  pointerText,
  quoteReference,
  type ParsedPointer,
  type StoredPart,
} from './pointer.js';

/** Settings of one offloading. */
export interface OffloadOptions {
  /** Results of more than this many characters (code points) are offloaded (`OffloadOverChars`). At least 1. */
  readonly over: number;
  /** The newest tool-calling steps whose results stay. At least 1; default 1. */
  readonly minKeepSteps?: number;
  /** The active pruning placeholder, so a pruned result is never offloaded (default: Haystack's). */
  readonly placeholder?: string;
  /**
   * Whether results are told from their messages' sketches where those can tell (default true); false reads every
   * text, which decides alike (the lazy-chains tests run both ways).
   */
  readonly sketches?: boolean;
}

/** One result to offload. */
export interface OffloadCandidate {
  /** The message's index in the conversation, and the result's position in it. */
  readonly index: number;
  readonly result: number;
  /** The tool-calling step it belongs to, from 1 (0 for a result in no step). */
  readonly step: number;
  readonly tool: string;
  /** The result's text: what the store file holds (read when first asked for, where a sketch decided). */
  readonly text: string;
}

/**
 * The results `ToolResultOffloadHook` with `OffloadOverChars(over)` would offload, applied to every result outside the
 * newest `minKeepSteps` tool-calling steps: text results (no image or file) that are no error, not already offloaded
 * or made by compaction, and longer than `over` characters. Pure.
 * @returns the candidates, oldest first
 */
export function planOffload(messages: readonly Message[], options: OffloadOptions): OffloadCandidate[] {
  const minKeepSteps = options.minKeepSteps ?? 1;
  if (!Number.isInteger(options.over) || options.over < 1)
    throw new RangeError(`the offload threshold must be a whole number of at least 1, got ${options.over}`);
  if (!Number.isInteger(minKeepSteps) || minKeepSteps < 1)
    throw new RangeError(`min_keep_steps must be at least 1 for offloading, got ${minKeepSteps}`);
  // Each result's step (1-based, among the steps that have results), and the results of the newest steps, kept.
  const withResults = resultSteps(messages);
  const kept = protectedResults(messages, minKeepSteps, withResults);
  const stepOf = new Map<number, number>();
  withResults.forEach(([start, end], k) => {
    for (let i = start + 1; i < end; i++) stepOf.set(i, k + 1);
  });
  const out: OffloadCandidate[] = [];
  const placeholder = options.placeholder ?? '';
  messages.forEach((message, index) => {
    if (
      message.role !== 'tool' ||
      kept.has(index) ||
      message.offloaded === true ||
      message.fixed === true ||
      message.compaction !== undefined
    )
      return;
    // From the sketches when every result's answer is known without its text; its text is then read only if wanted.
    const sketched = sketchedResults(message, options.sketches !== false);
    const verdicts = sketched?.map((r) => offloadable(r, options.over, placeholder));
    if (sketched !== undefined && verdicts !== undefined && verdicts.every((v) => v !== undefined)) {
      verdicts.forEach((v, result) => {
        if (v)
          out.push(
            deferredCandidate(message, index, result, stepOf.get(index) ?? 0, (sketched[result] as ResultSketch).name),
          );
      });
      return;
    }
    contentOf(message).results.forEach((r, result) => {
      if (r.error || r.images > 0 || r.files > 0 || isPointerText(r.text) || isPlaceholderText(r.text, placeholder))
        return;
      if (codePointLength(r.text) <= options.over) return;
      out.push({ index, result, step: stepOf.get(index) ?? 0, tool: r.name, text: r.text });
    });
  });
  return out;
}

/** Whether a sketched result is offloaded (the tests of `planOffload`), or undefined when its sketch cannot tell. */
function offloadable(r: ResultSketch, over: number, placeholder: string): boolean | undefined {
  if (r.error || r.images > 0 || r.files > 0) return false;
  // Offloaded when it is no pointer, no placeholder and long enough: any test known to fail decides; any unknown
  // leaves the answer unknown.
  const pointer = startsWith(r.text, POINTER_START);
  if (pointer === true) return false;
  const held = isPlaceholderSketch(r.text, placeholder);
  if (held === true) return false;
  const longer = longerThanCodePoints(r.text, over, codePointLength);
  if (longer === false) return false;
  return pointer === undefined || held === undefined || longer === undefined ? undefined : true;
}

/** A candidate whose text is read from its message when first asked for. */
function deferredCandidate(
  message: Message,
  index: number,
  result: number,
  step: number,
  tool: string,
): OffloadCandidate {
  let text: string | undefined;
  return {
    index,
    result,
    step,
    tool,
    get text(): string {
      text ??= (contentOf(message).results[result] as { text: string }).text;
      return text;
    },
  };
}

/**
 * The message with some results replaced by their pointers; it is then marked offloaded. Its content, and each
 * pointer, are worked out when first read: a run reads the messages it keeps.
 */
export function offloadedMessage(message: Message, pointers: ReadonlyMap<number, () => string>): Message {
  let content: Content | undefined;
  const pointer = (k: number): string => (pointers.get(k) as () => string)();
  return {
    ...marksOf(message),
    offloaded: true,
    content: () => {
      if (content === undefined) {
        const was = contentOf(message);
        content = {
          ...was,
          results: was.results.map((r, k) => (pointers.has(k) ? { ...r, text: pointer(k), images: 0, files: 0 } : r)),
        };
      }
      return content;
    },
  };
}

/** The most UTF-8 bytes of a store name taken from a tool name or a call id (file names end at 255 bytes). */
export const NAME_PART_BYTES = 48;

/** The most UTF-8 bytes of a folder name in the store: the smallest limit of the common file systems. */
export const NAME_BYTES = 255;

/**
 * A store key as Haystack names it, `{step}_{tool}_{call id}`, `call{position}` standing in for a missing id, then
 * `-{hash}.txt`: the hash (of the stored bytes) makes the same result stored twice one file, and keeps results of
 * other bytes apart whose names read alike (`{tool}_{call id}` split two ways). The tool name and id are written with
 * `portablePart`, so the name holds on any file system.
 */
export function storeKey(
  step: number,
  tool: string,
  callId: string | null,
  position: number,
  hash: string,
  part: { readonly position: number | null; readonly extension: string } = { position: null, extension: '.txt' },
): string {
  // One part of a result of several adds Haystack's `_{position}`; an image's or file's extension is its own.
  const suffix = part.position === null ? '' : `_${part.position}`;
  const extension = part.extension === '.txt' ? '.txt' : `.${portablePart(part.extension.slice(1), 16)}`;
  return `${step}_${portablePart(tool, NAME_PART_BYTES)}_${portablePart(callId ?? `call${position}`, NAME_PART_BYTES)}${suffix}-${hash}${extension}`;
}

/**
 * Characters that Windows, macOS, Linux and the common sync tools hold in a name: ASCII printable but for the ones
 * Windows reserves (`<>:"/\|?*`) and the two this escaping uses (`%` and `~`); beyond ASCII, letters, digits,
 * punctuation and symbols that every Unicode normalization leaves as they are (a sync tool that rewrites names to
 * NFC or NFD would otherwise rename the file under its pointer). Controls, format characters (bidirectional marks),
 * separators, private use, unassigned code points and lone surrogates are escaped.
 */
function isPortableChar(c: string): boolean {
  const point = c.codePointAt(0) as number;
  if (point < 0x80) return point >= 0x20 && point < 0x7f && !'<>:"/\\|?*%~'.includes(c);
  return /^[\p{L}\p{N}\p{P}\p{S}]$/u.test(c) && c.normalize('NFC') === c && c.normalize('NFD') === c;
}

/** `%XX` for each byte of a code point's UTF-8 (a lone surrogate as the three bytes it would take, so no two meet). */
function percentEscape(point: number): string {
  const bytes =
    point < 0x80
      ? [point]
      : point < 0x800
        ? [0xc0 | (point >> 6), 0x80 | (point & 0x3f)]
        : point < 0x10000
          ? [0xe0 | (point >> 12), 0x80 | ((point >> 6) & 0x3f), 0x80 | (point & 0x3f)]
          : [0xf0 | (point >> 18), 0x80 | ((point >> 12) & 0x3f), 0x80 | ((point >> 6) & 0x3f), 0x80 | (point & 0x3f)];
  return bytes.map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');
}

/** A text as the pieces of its escaped form: each portable character as it is, each other one as its `%XX` escape. */
function escapedPieces(text: string): string[] {
  const out: string[] = [];
  for (const c of text) out.push(isPortableChar(c) ? c : percentEscape(c.codePointAt(0) as number));
  return out;
}

/** UTF-8 bytes of a piece (a portable character or an escape). */
function pieceBytes(piece: string): number {
  const point = piece.codePointAt(0) as number;
  return point < 0x80 ? piece.length : point < 0x800 ? 2 : point < 0x10000 ? 3 : 4;
}

/**
 * Eight hex digits of a text (FNV-1a over its UTF-16 units): what tells apart two long names cut to the same
 * beginning. A name's digest, never a check of content (that is the SHA-256 of the bytes in a result's name).
 */
function nameDigest(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(16).padStart(8, '0');
}

/**
 * A tool name or call id as it is written in a store name: every character `isPortableChar` refuses becomes `%XX`
 * per UTF-8 byte (`functions.get_weather:0` -> `functions.get_weather%3A0`), so two texts never give one name; one
 * longer than `maxBytes` bytes of UTF-8 is cut (never inside a character or an escape) and ends `~` and eight hex
 * digits of the whole text, which keeps cut names apart.
 * @param text the text, any string
 * @param maxBytes the most UTF-8 bytes of the result (at least 9)
 * @returns the part, at most `maxBytes` bytes of portable characters
 */
export function portablePart(text: string, maxBytes: number): string {
  const pieces = escapedPieces(text);
  return fitted(pieces, maxBytes, text);
}

/** Pieces joined when they fit in `maxBytes`, else cut to leave room for `~` and the digest of `text`. */
function fitted(pieces: readonly string[], maxBytes: number, text: string): string {
  let total = 0;
  for (const p of pieces) total += pieceBytes(p);
  if (total <= maxBytes) return pieces.join('');
  let bytes = 0;
  let out = '';
  for (const p of pieces) {
    if (bytes + pieceBytes(p) > maxBytes - 9) break;
    bytes += pieceBytes(p);
    out += p;
  }
  return `${out}~${nameDigest(text)}`;
}

/** Windows' device names, reserved with any extension (`CON`, `nul.txt`, `COM1.json`), in any case. */
const RESERVED_NAME =
  /^(?:CON|PRN|AUX|NUL|COM[0-9\u00b9\u00b2\u00b3]|LPT[0-9\u00b9\u00b2\u00b3]|CONIN\$|CONOUT\$|CLOCK\$)(?:[. ].*)?$/i;

/**
 * A whole file or folder name of the store, from a segment of the input's path: written as `portablePart` writes it,
 * and then also no Windows device name (its first character escaped: `CON` -> `%43ON`), no leading space nor trailing
 * space or dot (escaped: `..` -> `.%2E`), never empty (`~`), at most `NAME_BYTES` bytes. Two segments never give one
 * name (but past the cap, where the digest keeps them apart).
 * @param text a segment of a path, any string
 * @returns a name every common file system and sync tool holds
 */
export function portableName(text: string): string {
  if (text === '') return '~';
  const pieces = escapedPieces(text);
  const escape = (k: number): void => {
    const p = pieces[k] as string;
    if (p.length === 1) pieces[k] = percentEscape(p.charCodeAt(0));
  };
  if (RESERVED_NAME.test(pieces.join(''))) escape(0);
  if (pieces[0] === ' ') escape(0);
  const last = pieces.length - 1;
  if (pieces[last] === '.' || pieces[last] === ' ') escape(last);
  return fitted(pieces, NAME_BYTES, text);
}
