/** Files that hold many conversations, for test/formats/multi-conversation.test.ts and test/e2e/multi-conversation.test.ts. */
import { expect } from '@jest/globals';
import { readLayout } from '../../src/io/layout.js';
import { decodeSource } from '../../src/io/source.js';

/** The text of a file outside its conversation lists, and the text of each list. */
function split(text: string, file: string, conversationKey?: string): { outside: string[]; lists: string[] } {
  const layout = readLayout(decodeSource(Buffer.from(text), file), undefined, { conversationKey });
  const outside: string[] = [];
  const lists: string[] = [];
  let pos = 0;
  for (const slot of layout.slots) {
    outside.push(text.slice(pos, slot.region.start));
    lists.push(text.slice(slot.region.start, slot.region.end));
    pos = slot.region.end;
  }
  outside.push(text.slice(pos));
  return { outside, lists };
}

/**
 * Asserts that only conversation lists changed: every byte outside them is the input's, and a list whose
 * conversation is the same is the same text.
 * @returns how many lists changed
 */
export function expectOnlyListsChanged(input: string, output: string, file: string, conversationKey?: string): number {
  const before = split(input, file, conversationKey);
  const after = split(output, file, conversationKey);
  expect(after.outside).toEqual(before.outside);
  expect(after.lists).toHaveLength(before.lists.length);
  let changed = 0;
  after.lists.forEach((list, k) => {
    if (list !== before.lists[k]) {
      changed++;
      expect(JSON.parse(list)).not.toEqual(JSON.parse(before.lists[k] as string));
    }
  });
  return changed;
}
