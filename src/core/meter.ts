import { lazyList } from './lazy-list.js';
import { renderMessage } from './render.js';
import type { Message, Rendered, TokenCounter } from './types.js';

/** Renders each message at most once and measures groups of them. */
export class Meter {
  // A map, not an array of the conversation's length: a decision renders the newest messages and few others, and
  // a long array made for each decision costs more than the renderings it holds.
  private readonly rendered = new Map<number, Rendered>();
  constructor(
    private readonly messages: readonly Message[],
    private readonly counter: TokenCounter,
  ) {}

  render(i: number): Rendered {
    let r = this.rendered.get(i);
    if (r === undefined) {
      r = renderMessage(this.messages[i] as Message);
      this.rendered.set(i, r);
    }
    return r;
  }

  measure(indices: readonly number[], limit?: number): number {
    if (indices.length === 0) return 0;
    // Rendered only as the counter reads them: one that stops at its limit never renders the older messages.
    return this.counter.measure(
      lazyList(indices.length, (k) => this.render(indices[k] as number)),
      limit,
    );
  }

  /** `measure` of every message, oldest first. */
  measureAll(limit?: number): number {
    const n = this.messages.length;
    return n === 0
      ? 0
      : this.counter.measure(
          lazyList(n, (k) => this.render(k)),
          limit,
        );
  }

  measureRendered(items: readonly Rendered[]): number {
    return items.length === 0 ? 0 : this.counter.measure(items);
  }
}

/** The indices from `start` to `end` (exclusive), ascending. */
export function range(start: number, end: number): number[] {
  const out = new Array<number>(Math.max(0, end - start));
  for (let i = start; i < end; i++) out[i - start] = i;
  return out;
}

/** Total weight of the messages at these indices. */
export function weightOf(messages: readonly Message[], indices: readonly number[]): number {
  let total = 0;
  for (const i of indices) total += (messages[i] as Message).weight ?? 1;
  return total;
}
