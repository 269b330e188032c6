import { elementReader } from '../../core/lazy-list.js';
import { offloadedMessage, planOffload, pointerText, PREVIEW_CHARS } from '../../core/offload.js';
import { planOffloadCompaction } from '../../core/offload-compactor.js';
import { renderMessage } from '../../core/render.js';
import type { Message } from '../../core/types.js';
import {
  measureAgainstGate,
  measureAll,
  type ChainRun,
  type OffloadedResult,
  type ReferenceMaker,
  type Step,
  type StepReport,
  writableFinal,
} from './step.js';

/**
 * Offloading with a file-system store: by default Haystack 3.4's `ToolResultOffloadCompactor` (the older steps'
 * results, oldest first, until the conversation fits); with `over` its `ToolResultOffloadHook` with
 * `OffloadOverChars(over)` (every older result over that many characters, whatever the target).
 */
export const offloadStep: Step = {
  apply(run: ChainRun): StepReport {
    const { options, referenceOf } = run;
    if (options.offload === undefined || referenceOf === null)
      throw new RangeError('offloading needs a store directory');
    const measured = measureAgainstGate(run);
    if (measured.under) return measured;
    return options.offload.over === undefined
      ? applyCompactor(run, referenceOf, measured)
      : applyHook(run, referenceOf, measured, options.offload.over);
  },
};

/** The compactor: decided on the conversation the previous step left, against the run's target. */
function applyCompactor(run: ChainRun, referenceOf: ReferenceMaker, measured: StepReport): StepReport {
  const { options, counter } = run;
  const current = run.current;
  const originAt = elementReader(run.origin);
  const plan = planOffloadCompaction(current, counter, {
    target: run.target,
    minKeepSteps: options.minKeepSteps,
    minTokens: options.minTokens,
    previewChars: options.offload?.previewChars ?? PREVIEW_CHARS,
    placeholder: options.placeholder,
    reference: (part) => {
      const at = originAt(part.index);
      if (at === null || at === undefined) throw new RangeError('offloading met a message the chain made');
      return referenceOf(at, { ...part, text: part.content });
    },
  });
  if (plan === null) return measured;
  for (const o of plan.offloads) {
    const message = plan.messages[o.index] as Message;
    writableFinal(run)[originAt(o.index) as number] = message;
    const results = new Map<number, OffloadedResult>(
      [...o.results].map(([k, r]) => [
        k,
        { text: r.pointer, reference: r.stored[0]?.reference ?? '', original: r.original, stored: r.stored },
      ]),
    );
    run.offloads.push({
      message: originAt(o.index) as number,
      results,
      tokensBefore: o.tokensBefore,
      tokensAfter: o.tokensAfter,
      compacted: true,
    });
  }
  const next = plan.messages;
  run.current = next;
  return { ...measured, after: () => measureAll(counter, next) };
}

/** The hook's rule: every candidate, whatever the target. Its decision needs no count but the trigger's. */
function applyHook(run: ChainRun, referenceOf: ReferenceMaker, measured: StepReport, over: number): StepReport {
  const { options, counter } = run;
  const previewChars = options.offload?.previewChars ?? PREVIEW_CHARS;
  const current = run.current;
  const candidates = planOffload(current, {
    over,
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
      offloadedResult(c, () => referenceOf(at, c), previewChars),
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
}

/** A result's pointer, reference and text, worked out when first read: a run reads those of the results it keeps. */
function offloadedResult(
  candidate: { readonly text: string },
  referenceOf: () => string,
  previewChars: number,
): OffloadedResult {
  let reference: string | undefined;
  let text: string | undefined;
  return {
    get reference(): string {
      reference ??= referenceOf();
      return reference;
    },
    get text(): string {
      text ??= pointerText([{ reference: this.reference, text: candidate.text }], previewChars);
      return text;
    },
    get original(): string {
      return candidate.text;
    },
  };
}
