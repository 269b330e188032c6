// The rules this module decides by, numbered and explained: docs/strategy.md#tool-result-offloading.
import { isPointerText, POINTER_START } from './pointer.js';
import { isPlaceholderSketch, isPlaceholderText, protectedResults, resultSteps } from './prune.js';
import { contentOf, marksOf } from './render.js';
import { longerThanCodePoints, sketchedResults, startsWith } from './sketch.js';
import type { Content, Message, ResultSketch } from './types.js';

/** Haystack's meta key on an offloaded result; its value is the store reference. */
export const OFFLOADED_META_KEY = 'tool_result_offloaded';

/** Characters of the original result the pointer shows (Haystack's `preview_chars`). */
export const PREVIEW_CHARS = 200;


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

/** The length of a text as Python's `len` counts it: code points. */
export function codePoints(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/**
 * Haystack's pointer: `Tool result offloaded to 'REF' (N characters). Preview: …`, the preview the first 200 code points
 * and `...` when the text is longer.
 */
export function pointerText(reference: string, text: string): string {
  const length = codePoints(text);
  // The first PREVIEW_CHARS code points, found without splitting the whole text.
  let end = 0;
  for (let n = 0; n < PREVIEW_CHARS && end < text.length; n++) end += (text.codePointAt(end) as number) > 0xffff ? 2 : 1;
  const preview = text.slice(0, end);
  return `${POINTER_START}${quoteReference(reference)}' (${length} characters). Preview: ${preview}${length > PREVIEW_CHARS ? '...' : ''}`;
}

/**
 * A reference as the pointer quotes it: `\` and `'` escaped with a backslash, so a path holding `'` (`O'Brien.jsonl`)
 * still ends where its quote does. A reference with neither reads exactly as Haystack writes it.
 */
export function quoteReference(reference: string): string {
  return reference.replace(/[\\']/g, '\\$&');
}

export { isPointerText };

/** The store reference and length a pointer text gives. */
export interface ParsedPointer {
  readonly reference: string;
  readonly characters: number;
}

/**
 * Reads a pointer back: the reference (unescaped as `quoteReference` escaped it) and the length it states.
 * @returns null when the text is not a whole pointer's beginning (`Tool result offloaded to '…' (N characters). Preview: `)
 */
export function parsePointer(text: string): ParsedPointer | null {
  if (!text.startsWith(POINTER_START)) return null;
  let reference = '';
  let i = POINTER_START.length;
  for (; i < text.length; i++) {
    const c = text[i] as string;
    if (c === "'") break;
    if (c === '\\' && i + 1 < text.length) {
      i++;
      reference += text[i];
    } else reference += c;
  }
  if (i >= text.length || reference === '') return null;
  const tail = /^' \((\d+) characters\)\. Preview: /.exec(text.slice(i, i + 64));
  return tail === null ? null : { reference, characters: Number(tail[1]) };
}

/**
 * The results `ToolResultOffloadHook` with `OffloadOverChars(over)` would offload, applied to every result outside the
 * newest `minKeepSteps` tool-calling steps: text results (no image or file) that are no error, not already offloaded
 * or made by compaction, and longer than `over` characters. Pure.
 * @returns the candidates, oldest first
 */
export function planOffload(messages: readonly Message[], options: OffloadOptions): OffloadCandidate[] {
  const minKeepSteps = options.minKeepSteps ?? 1;
  if (!Number.isInteger(options.over) || options.over < 1) throw new RangeError(`the offload threshold must be a whole number of at least 1, got ${options.over}`);
  if (!Number.isInteger(minKeepSteps) || minKeepSteps < 1) throw new RangeError(`min_keep_steps must be at least 1 for offloading, got ${minKeepSteps}`);
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
    if (message.role !== 'tool' || kept.has(index) || message.offloaded === true || message.fixed === true || message.compaction !== undefined) return;
    // From the sketches when every result's answer is known without its text; its text is then read only if wanted.
    const sketched = sketchedResults(message, options.sketches !== false);
    const verdicts = sketched?.map((r) => offloadable(r, options.over, placeholder));
    if (sketched !== undefined && verdicts !== undefined && verdicts.every((v) => v !== undefined)) {
      verdicts.forEach((v, result) => {
        if (v) out.push(deferredCandidate(message, index, result, stepOf.get(index) ?? 0, (sketched[result] as ResultSketch).name));
      });
      return;
    }
    contentOf(message).results.forEach((r, result) => {
      if (r.error || r.images > 0 || r.files > 0 || isPointerText(r.text) || isPlaceholderText(r.text, placeholder)) return;
      if (codePoints(r.text) <= options.over) return;
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
  const longer = longerThanCodePoints(r.text, over, codePoints);
  if (longer === false) return false;
  return pointer === undefined || held === undefined || longer === undefined ? undefined : true;
}

/** A candidate whose text is read from its message when first asked for. */
function deferredCandidate(message: Message, index: number, result: number, step: number, tool: string): OffloadCandidate {
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
        content = { ...was, results: was.results.map((r, k) => (pointers.has(k) ? { ...r, text: pointer(k), images: 0, files: 0 } : r)) };
      }
      return content;
    },
  };
}

/** The most UTF-8 bytes of a store name taken from a tool name or a call id (file names end at 255 bytes). */
export const NAME_PART_BYTES = 48;

/**
 * A store key as Haystack names it, `{step}_{tool}_{call id}`, `call{position}` standing in for a missing id, then
 * `-{hash}.txt`: the hash (of the stored bytes) keeps names apart that the capped tool name and id no longer do, and
 * makes the same result stored twice one file.
 */
export function storeKey(step: number, tool: string, callId: string | null, position: number, hash: string): string {
  return `${step}_${capName(safeName(tool))}_${capName(safeName(callId ?? `call${position}`))}-${hash}.txt`;
}

/** A name cut to at most `NAME_PART_BYTES` bytes of UTF-8, never inside a character. */
export function capName(name: string): string {
  let bytes = 0;
  let out = '';
  for (const c of name) {
    const point = c.codePointAt(0) as number;
    const size = point < 0x80 ? 1 : point < 0x800 ? 2 : point < 0x10000 ? 3 : 4;
    if (bytes + size > NAME_PART_BYTES) break;
    bytes += size;
    out += c;
  }
  return out;
}

/** A name that stays one file name: separators, `..` and control characters become `_`. */
export function safeName(name: string): string {
  const cleaned = name.replace(/[/\\\u0000-\u001f]/g, '_');
  return cleaned === '' || cleaned === '.' || cleaned === '..' ? `_${cleaned}` : cleaned;
}
