import { lazyList } from './lazy-list.js';
import { renderMessage } from './render.js';
import type { Message, Rendered, TokenCounter } from './types.js';

/** Renders each message at most once and measures groups of them. */
export class Meter {
  private readonly rendered: Array<Rendered | undefined>;
  constructor(
    private readonly messages: readonly Message[],
    private readonly counter: TokenCounter,
  ) {
    this.rendered = new Array<Rendered | undefined>(messages.length);
  }

  render(i: number): Rendered {
    let r = this.rendered[i];
    if (r === undefined) {
      r = renderMessage(this.messages[i] as Message);
      this.rendered[i] = r;
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
