import { elementReader } from '../../core/lazy-list.js';
import { offloadedMessage, planOffload, pointerText } from '../../core/offload.js';
import { renderMessage } from '../../core/render.js';
import type { Message } from '../../core/types.js';
import {
  measureAgainstGate,
  measureAll,
  type ChainRun,
  type OffloadedResult,
  type Step,
  type StepReport,
  writableFinal,
} from './step.js';

/**
 * Offloading (Haystack's `ToolResultOffloadHook` with a file-system store): the older steps' long results go to the
 * store, a pointer in their place. Its decision needs no count but the trigger's.
 */
export const offloadStep: Step = {
  apply(run: ChainRun): StepReport {
    const { options, referenceOf, counter } = run;
    if (options.offload === undefined || referenceOf === null)
      throw new RangeError('offloading needs a store directory');
    const measured = measureAgainstGate(run);
    if (measured.under) return measured;
    const current = run.current;
    const candidates = planOffload(current, {
      over: options.offload.over,
      minKeepSteps: options.minKeepSteps,
      placeholder: options.placeholder,
      sketches: options.exhaustive !== true,
    });
    if (candidates.length === 0) return measured;
    const byMessage = new Map<number, Map<number, OffloadedResult>>();
    // Through the list's producer: the origin is a lazy list, and a candidate is looked up for every long result.
    const originAt = elementReader(run.origin);
    for (const c of candidates) {
      const at = originAt(c.index);
      if (at === null || at === undefined) continue;
      const entry = byMessage.get(c.index) ?? new Map<number, OffloadedResult>();
      entry.set(
        c.result,
        offloadedResult(c, () => referenceOf(at, c)),
      );
      byMessage.set(c.index, entry);
    }
    const next = current.slice();
    for (const [index, results] of byMessage) {
      // Its pointers (and the texts they are made from) are worked out when the message is read.
      const message = offloadedMessage(
        current[index] as Message,
        new Map([...results].map(([k, r]) => [k, () => r.text])),
      );
      next[index] = message;
      writableFinal(run)[originAt(index) as number] = message;
      // Counted only for the messages an output shows (those kept).
      const alone = (m: Message): (() => number) => {
        let n: number | undefined;
        return () => (n ??= counter.measure([renderMessage(m)]));
      };
      const before = alone(current[index] as Message);
      const after = alone(message);
      run.offloads.push({
        message: originAt(index) as number,
        results,
        get tokensBefore(): number {
          return before();
        },
        get tokensAfter(): number {
          return after();
        },
      });
    }
    run.current = next;
    return { ...measured, after: () => measureAll(counter, next) };
  },
};

/** A result's pointer, reference and text, worked out when first read: a run reads those of the results it keeps. */
function offloadedResult(candidate: { readonly text: string }, referenceOf: () => string): OffloadedResult {
  let reference: string | undefined;
  let text: string | undefined;
  return {
    get reference(): string {
      reference ??= referenceOf();
      return reference;
    },
    get text(): string {
      text ??= pointerText(this.reference, candidate.text);
      return text;
    },
    get original(): string {
      return candidate.text;
    },
  };
}
