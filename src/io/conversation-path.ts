import { InputError, NoConversationError } from '../errors.js';
import { arrayElements, findMember, objectMembers } from './json-layout.js';
import { isIndexToken, parsePointer, pointerOf, PointerSyntaxError } from './json-pointer.js';
import { arraySlot, lineCol, parseMembers, type Slot } from './slot.js';
import type { Slimming } from './slim.js';
import type { SourceText } from './source.js';

/** `--conversation-path`: the list a JSON Pointer leads to, and the hint of one for a file whose list is deeper. */

/** The tokens of a pointer given to the layout (already checked by the command line). */
export function pointerTokens(pointer: string, source: SourceText): string[] {
  try {
    return parsePointer(pointer);
  } catch (error) {
    if (error instanceof PointerSyntaxError) throw new InputError(`--conversation-path: ${error.message}`, source.file);
    throw error;
  }
}

/**
 * The slot of the list a pointer leads to from the value at `pos` (a record, or the whole file); the object holding
 * the list is its container, and everything outside the list stays as it is.
 * @param label the record's name in messages ("line 3", "record 2"), or null for the whole file
 * @throws InputError naming the first token that leads nowhere, or the value found when it is not a list
 */
export function pointerSlot(
  source: SourceText,
  pos: number,
  tokens: readonly string[],
  label: string | null,
  record: number | undefined,
  slimming?: Slimming,
): Slot {
  const text = source.text;
  const what = label === null ? '' : `${label}: `;
  // Leading nowhere in the whole file or its first record (which sets the file's shape, as for records without a
  // pointer), it finds no conversation in the file; in a later record, that record is broken.
  const Fail = label === null || record === 0 ? NoConversationError : InputError;
  const pointer = pointerOf(tokens);
  let at = pos;
  let container: Record<string, unknown> | null = null;
  let key: string | null = null;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i] as string;
    const above = pointerOf(tokens, i) || 'the top level';
    const c = text.charCodeAt(at);
    if (c === 0x7b) {
      const { members } = objectMembers(text, at);
      const member = findMember(members, token);
      if (member === undefined) {
        const keys = members
          .map((m) => JSON.stringify(m.key))
          .slice(0, 8)
          .join(', ');
        throw new Fail(
          `${what}no key ${JSON.stringify(token)} at ${above} (found keys: ${keys || 'none'}), so --conversation-path ${pointer} leads nowhere`,
          source.file,
          ...lineCol(source, at),
        );
      }
      if (i === tokens.length - 1) {
        container = parseMembers(text, members, token);
        key = token;
      }
      at = member.value.start;
    } else if (c === 0x5b) {
      const { elements } = arrayElements(text, at);
      const element = isIndexToken(token) ? elements[Number(token)] : undefined;
      if (element === undefined) {
        throw new Fail(
          `${what}${above} is a list of ${elements.length} items, with no item ${JSON.stringify(token)}, so --conversation-path ${pointer} leads nowhere`,
          source.file,
          ...lineCol(source, at),
        );
      }
      container = null;
      key = null;
      at = element.start;
    } else {
      throw new Fail(
        `${what}${above} is ${describeJsonValue(text, at)}, not an object or a list, so --conversation-path ${pointer} leads nowhere`,
        source.file,
        ...lineCol(source, at),
      );
    }
  }
  if (text.charCodeAt(at) !== 0x5b) {
    throw new Fail(
      `${what}${pointer || 'the top level'} is ${describeJsonValue(text, at)}, not a list of messages (--conversation-path)`,
      source.file,
      ...lineCol(source, at),
    );
  }
  const where = `${label === null ? '' : `${label} `}${JSON.stringify(pointer)}`;
  const slot = arraySlot(source, at, where, container, key, slimming);
  return record === undefined ? slot : { ...slot, record };
}

/**
 * The pointer of the first list of messages (objects with a string `role` or `from`) found below a value, depth
 * first in key order, at most 8 levels down: a hint for a file whose conversation is deeper than the keys tried.
 */
export function messageListPath(value: unknown, tokens: string[] = []): string | null {
  if (tokens.length > 8 || typeof value !== 'object' || value === null) return null;
  if (Array.isArray(value)) {
    const first: unknown = value[0];
    if (tokens.length > 0 && typeof first === 'object' && first !== null && !Array.isArray(first)) {
      const item = first as Record<string, unknown>;
      if (typeof item.role === 'string' || typeof item.from === 'string') return pointerOf(tokens);
    }
    return null;
  }
  for (const key of Object.keys(value)) {
    const found = messageListPath((value as Record<string, unknown>)[key], [...tokens, key]);
    if (found !== null) return found;
  }
  return null;
}

/** What a JSON value at `pos` is, for messages: "an object", "a string", … */
function describeJsonValue(text: string, pos: number): string {
  const c = text.charCodeAt(pos);
  if (c === 0x7b) return 'an object';
  if (c === 0x5b) return 'a list';
  if (c === 0x22) return 'a string';
  if (c === 0x74 || c === 0x66) return 'a boolean';
  if (c === 0x6e) return 'null';
  return 'a number';
}
