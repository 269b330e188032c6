import { binaryAsText, optionsObject, checkOptions, type CompactorOptions } from '../settings/library.js';
import { createCompactor } from './compactor.js';
import { JsonCache } from './memory.js';
import { samePrefix } from './mirror.js';
import type { Compactor, PrepareStepInput } from './types.js';

/**
 * A `prepareStep` for the Vercel AI SDK (`generateText`, `streamText`, `Agent`). The SDK hands each step the whole
 * history; once the history reaches the threshold, the step is sent a compacted view of it (`{ messages }`), and that
 * view is kept: later steps are sent the same messages with only what is new appended, so the prompt's prefix stays
 * byte for byte the same (a provider's prompt cache keeps hitting), until the view itself reaches the threshold and is
 * compacted once more. Before the first compaction it returns nothing (the step runs on its messages as they are).
 * The tokenizer is loaded on the first step, once.
 * @param options as `createCompactor`'s; the format defaults to `ai-sdk`, and `system` is the `system` you pass the SDK
 * @returns the function to pass as `prepareStep`
 * @throws OptionsError for bad options, at once (not at the first step)
 */
export function swcPrepareStep(
  options: CompactorOptions,
): <M>(step: PrepareStepInput<M>) => Promise<{ messages: M[] } | undefined> {
  const given = optionsObject(options);
  const settings: CompactorOptions = { ...given, format: given.format ?? 'ai-sdk' };
  checkOptions(settings);
  let compactor: Promise<Compactor> | null = null;
  const views = new KeptViews();
  return async <M>(step: PrepareStepInput<M>): Promise<{ messages: M[] } | undefined> => {
    compactor ??= createCompactor(settings);
    const history = step.messages;
    // Not an array: compact refuses it with its InputError.
    const viewed = Array.isArray(history) ? views.viewOf(history) : null;
    const view = viewed === null ? null : viewed.messages;
    const result = await (await compactor).compact(view ?? history);
    const sent = result.changed ? result.messages : view;
    if (sent === null) return undefined;
    views.keep(history, sent, viewed);
    return { messages: [...sent] };
  };
}

/** A history a step was handed (a copy, the views' own), and the messages it was sent instead. */
interface KeptView {
  readonly history: unknown[];
  readonly sent: readonly unknown[];
}

/** A kept view with a history's new messages appended, the view it came from, and how long that view's history was. */
interface Viewed<M> {
  readonly messages: M[];
  readonly from: KeptView;
  readonly length: number;
  /** The history's messages after the view's: what grows its history when the step is kept. */
  readonly added: readonly M[];
}

/**
 * The views sent, one per conversation, the most recent first. A step's history that extends one's history (the same
 * messages first: the same objects, or equal as JSON) is sent that view with the new messages appended; any other
 * history (a new conversation, an edited or shortened one) starts over. A few are kept, so that one `prepareStep`
 * serves several conversations at once (an `Agent` answering several requests).
 */
class KeptViews {
  private views: KeptView[] = [];
  private readonly json = new JsonCache();

  /** The kept view with the history's new messages appended, or null when no kept view's history it extends. */
  viewOf<M>(history: readonly M[]): Viewed<M> | null {
    const from = this.views.find((v) => this.extends(history, v.history));
    if (from === undefined) return null;
    const length = from.history.length;
    const added = history.slice(length);
    return { messages: [...(from.sent as readonly M[]), ...added], from, length, added };
  }

  /**
   * Remembers what a history was sent instead (copies of both: the caller's arrays may change). The history of the
   * view it extended (`viewed`) is grown by its new messages rather than copied again whole, a step costing what it
   * adds, unless another step has kept a view of it since (two requests of one conversation at once).
   */
  keep(history: readonly unknown[], sent: readonly unknown[], viewed: Viewed<unknown> | null): void {
    const grows = viewed !== null && this.views.includes(viewed.from) && viewed.from.history.length === viewed.length;
    let copy: unknown[];
    if (grows) {
      // Grown by the messages the view was sent with, as they were then.
      copy = viewed.from.history;
      for (const message of viewed.added) copy.push(message);
    } else copy = history.slice();
    const kept = { history: copy, sent: sent.slice() };
    const others = this.views.filter((v) => v !== viewed?.from && !this.extends(history, v.history));
    this.views = [kept, ...others].slice(0, KEPT_VIEWS);
  }

  /** Whether a history begins with every message of an earlier one. */
  private extends(history: readonly unknown[], earlier: readonly unknown[]): boolean {
    const m = earlier.length;
    if (history.length < m) return false;
    // The same objects, mostly (the AI SDK hands the messages it was given back): compared by identity until one is
    // not, that one by its JSON, and on.
    for (let k = samePrefix(history, earlier, m); k < m; k = samePrefix(history, earlier, m, k + 1))
      if (!this.same(history[k], earlier[k])) return false;
    return true;
  }

  /** The same message: the same object, or one written as the same JSON (what cannot be written never is the same). */
  private same(a: unknown, b: unknown): boolean {
    if (a === b) return true;
    try {
      const json = this.jsonOf(a);
      return json !== undefined && json === this.jsonOf(b);
    } catch {
      return false;
    }
  }

  /** A message's JSON, made again when the message was changed in place since (see JsonCache). */
  private jsonOf(message: unknown): string | undefined {
    if (typeof message !== 'object' || message === null) return JSON.stringify(message, binaryAsText);
    return this.json.of(message, 0).raw();
  }
}

/** The conversations one `prepareStep` keeps a view for: the most recent ones. */
const KEPT_VIEWS = 8;
