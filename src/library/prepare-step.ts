import { binaryAsText, optionsObject, checkOptions, type CompactorOptions } from '../settings/library.js';
import { createCompactor } from './compactor.js';
import { JsonCache } from './memory.js';
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
    const view = Array.isArray(history) ? views.viewOf(history) : null;
    const result = await (await compactor).compactAsync(view ?? history);
    const sent = result.changed ? result.messages : view;
    if (sent === null) return undefined;
    views.keep(history, sent);
    return { messages: [...sent] };
  };
}

/** A history a step was handed, and the messages it was sent instead. */
interface KeptView {
  readonly history: readonly unknown[];
  readonly sent: readonly unknown[];
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
  viewOf<M>(history: readonly M[]): M[] | null {
    const at = this.views.findIndex((v) => this.extends(history, v.history));
    if (at === -1) return null;
    const { history: before, sent } = this.views[at] as KeptView;
    return [...(sent as readonly M[]), ...history.slice(before.length)];
  }

  /** Remembers what a history was sent instead (copies of both: the caller's arrays may change). */
  keep(history: readonly unknown[], sent: readonly unknown[]): void {
    const kept = { history: [...history], sent: [...sent] };
    this.views = [kept, ...this.views.filter((v) => !this.extends(history, v.history))].slice(0, KEPT_VIEWS);
  }

  /** Whether a history begins with every message of an earlier one. */
  private extends(history: readonly unknown[], earlier: readonly unknown[]): boolean {
    if (history.length < earlier.length) return false;
    for (let k = 0; k < earlier.length; k++) if (!this.same(history[k], earlier[k])) return false;
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
