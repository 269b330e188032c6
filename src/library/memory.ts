import { elementReader, lazyList } from '../core/lazy-list.js';
import type { Rendered, TokenCounter } from '../core/types.js';
import { InputError } from '../errors.js';
import { binaryAsText } from '../settings/library.js';

/** A message as the adapters read it: its JSON text and that text parsed, as a file of the messages would give them. */
export interface AsJson {
  readonly raw: string;
  readonly item: unknown;
}

export function toJson(message: unknown, k: number): AsJson {
  let raw: string | undefined;
  try {
    raw = JSON.stringify(message, binaryAsText);
  } catch (error) {
    const cyclic = error instanceof TypeError && /circular/i.test(error.message);
    throw new InputError(
      cyclic
        ? 'a message that refers to itself (a cycle) cannot be compacted'
        : `cannot be written as JSON (${(error as Error).message})`,
      `messages[${k}]`,
    );
  }
  if (raw === undefined) throw new InputError(`expected a message, found ${typeof message}`, `messages[${k}]`);
  return { raw, item: JSON.parse(raw) as unknown };
}

/**
 * Remembers, from one call to the next, one rendered object per rendered text: counters keep counts per rendered
 * object, so a message already counted in the previous call is not counted again. Two generations are kept, so
 * what it holds is at most the texts of the last two conversations.
 */
export class RenderedMemory {
  private current = new Map<string, Rendered>();
  private previous = new Map<string, Rendered>();

  /** A counter that hands `inner` the remembered object for each text it has seen. */
  counter(inner: TokenCounter): TokenCounter {
    const canonical = (r: Rendered): Rendered => {
      const known = this.current.get(r.text) ?? this.previous.get(r.text);
      if (known !== undefined && known.images === r.images && known.files === r.files) {
        this.current.set(r.text, known);
        return known;
      }
      this.current.set(r.text, r);
      return r;
    };
    const view = (messages: readonly Rendered[]): readonly Rendered[] => {
      const at = elementReader(messages);
      return lazyList(messages.length, (k) => canonical(at(k)));
    };
    const apart = inner.measureApart;
    return {
      name: inner.name,
      measure: (messages, limit) => inner.measure(view(messages), limit),
      // Passed on, so chains decide lazily here as on the command line.
      ...(apart === undefined
        ? {}
        : {
            measureApart: (messages: readonly Rendered[], set: ReadonlySet<number>, limit?: number) =>
              apart.call(inner, view(messages), set, limit),
          }),
    };
  }

  /** Starts the next call: what the last one did not see is forgotten. */
  nextCall(): void {
    this.previous = this.current;
    this.current = new Map();
  }
}
