/**
 * How a Responses history reads back, for the reference replay: the format's rule (docs/formats.md), written from
 * the Responses item list, not from src/. An assistant message there is a run of items that its message item
 * completes: a reasoning or message item starts a new assistant message only once the current one has its message
 * item and no call of it still waits for an output further down; a call item never starts one. A written run never
 * puts two assistant messages so that they would join (the harness's shape), but a compaction can remove what stood
 * between them (an earlier note between a call with no text and the next reply): the history sent after it holds
 * them as one message, and so does the next call's hook.
 */
import type { HMessage } from '../reference/haystack.js';
import type { WrittenCase } from '../differential/harness.js';

const isRecord = (v: unknown): v is Readonly<Record<string, unknown>> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** Whether an assistant message's first item is a reasoning or an assistant message item (it may start a message). */
function opensMessage(item: unknown): boolean {
  return isRecord(item) && (item.type === 'reasoning' || (item.role === 'assistant' && item.type !== 'function_call'));
}

/**
 * The reread of a written Responses case's histories.
 * @param c the written case (its items tell which assistant messages open with reasoning or a message item)
 * @param weights each view message's items, which a merged message adds up (a note counts the items it replaced)
 * @returns a history as the format reads it back
 */
export function responsesReread(
  c: WrittenCase,
  weights: WeakMap<HMessage, number>,
): (history: readonly HMessage[]) => readonly HMessage[] {
  const opens = new WeakMap<HMessage, boolean>();
  c.view.messages.forEach((m, v) => {
    const first = c.view.items[v]?.[0];
    if (m.role === 'assistant' && first !== undefined) opens.set(m, opensMessage(c.items[first]));
  });
  return (history) => {
    const out: HMessage[] = [];
    history.forEach((next, k) => {
      const previous = out[out.length - 1];
      if (previous === undefined || previous.role !== 'assistant' || next.role !== 'assistant') {
        out.push(next);
        return;
      }
      const complete = previous.texts.length > 0 && !waitsPast(previous, history, k);
      if (complete && opens.get(next) === true) {
        out.push(next);
        return;
      }
      const merged: HMessage = {
        ...previous,
        texts: [...previous.texts, ...next.texts],
        toolCalls: [...previous.toolCalls, ...next.toolCalls],
        images: previous.images + next.images,
        files: [...previous.files, ...next.files],
      };
      opens.set(merged, opens.get(previous) === true);
      weights.set(merged, (weights.get(previous) ?? 1) + (weights.get(next) ?? 1));
      out[out.length - 1] = merged;
    });
    return out;
  };
}

/** Whether a call of `message` has its output after position `k` of the history. */
function waitsPast(message: HMessage, history: readonly HMessage[], k: number): boolean {
  const ids = new Set(message.toolCalls.map((c) => c.id).filter((id) => id !== null && id !== ''));
  return history.slice(k + 1).some((m) => m.results.some((r) => r.id !== null && ids.has(r.id)));
}
