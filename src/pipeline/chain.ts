import { keepEverything, planCompaction, type Plan } from '../core/compact.js';
import { elementReader, indexList, lazyList, overlay } from '../core/lazy-list.js';
import { renderMessage } from '../core/render.js';
import type { Message, Rendered, TokenCounter } from '../core/types.js';
import { STEPS, type StrategyName } from './steps/index.js';
import type {
  ChainOffload,
  ChainOptions,
  ChainPruning,
  ChainRun,
  OutputEntry,
  PlacedSummary,
  ReferenceMaker,
  SummarizedConversation,
  WindowThresholds,
} from './steps/step.js';

/** A conversation's decision: the window's plan (combined with the other steps' figures), the prunings and the result. */
export interface Decided {
  readonly plan: Plan;
  /** The target the plan was made against (with thresholds: the trigger or the target, less the tool schemas). */
  readonly target: number;
  /** Tokens the container's tool schemas add to the conversation (counted with thresholds only, else 0). */
  readonly toolTokens: number;
  readonly pruning: readonly ChainPruning[];
  readonly offloads: readonly ChainOffload[];
  /** The input's messages, each replaced by what pruning or offloading made of it. */
  readonly messages: Message[];
  /** A chain with thresholds whose later strategy found the conversation below the trigger, as an earlier one left it. */
  readonly leftBelowTrigger?: boolean;
  /** With summarize in the chain: what it did, and the output's messages in order when it changed the conversation. */
  readonly summarized?: SummarizedConversation;
  readonly output?: readonly OutputEntry[];
  /** The messages the window's plan was made on, in input indices, when a later strategy changed some of them. */
  readonly windowSaw?: readonly Message[];
  /** Whether the plan's group counts are exact, when that is not what `tokensBeforeExact` says (a chain). */
  readonly groupsExact?: boolean;
}

/**
 * Decides one conversation: the road every command and the library take. The sliding window alone plans directly
 * (with thresholds, against the trigger first); any other chain runs its steps in order (`runChain`).
 * @param input the normalized conversation
 * @param options the chain's settings and counter
 * @param template the note template, resolved
 * @param strategies the steps, in order
 * @param referenceOf offloading's store references, or null where nothing may be offloaded
 * @param tools the container's tool schemas as Haystack measures them (read with thresholds only), or null
 */
export async function decide(
  input: readonly Message[],
  options: ChainOptions,
  template: string | null,
  strategies: readonly StrategyName[],
  referenceOf: ReferenceMaker | null,
  tools: string | null,
): Promise<Decided> {
  if (strategies.length !== 1 || strategies[0] !== 'window')
    return runChain(input, options, template, strategies, referenceOf, tools);
  const settings = { minKeepSteps: options.minKeepSteps, note: template, exhaustive: options.exhaustive };
  const decided = options.window
    ? planWithThresholds(input, options.counter, settings, options.window, tools)
    : {
        plan: planCompaction(input, options.counter, { ...settings, target: options.target }),
        target: options.target,
        toolTokens: 0,
      };
  return { ...decided, pruning: [], offloads: [], messages: input as Message[] };
}

/** What the chain's loop gathered from its steps' reports. */
interface Figures {
  /** Some step found the conversation at or over the trigger (always, without thresholds). */
  readonly reached: boolean;
  /** The last step found it below the trigger and left it. */
  readonly lastSkipped: boolean;
  readonly tokensBefore: number | null;
  readonly tokensBeforeExact: boolean;
  readonly tokensAfter: () => number;
}

/**
 * Applies the strategies in order, each to the conversation the previous left, as Haystack runs its hooks: with
 * window thresholds each checks the trigger again, so pruning that brings the conversation under it leaves the
 * window nothing to do.
 * @returns the sliding window's plan in input indices (an unchanged one when the window is not in the chain, or did
 *   nothing), the prunings, and the input's messages with the pruned ones replaced
 */
async function runChain(
  input: readonly Message[],
  options: ChainOptions,
  template: string | null,
  strategies: readonly StrategyName[],
  referenceOf: ReferenceMaker | null,
  tools: string | null,
): Promise<Decided> {
  const counter = sharingCounter(options.counter);
  const toolTokens = options.window ? schemaTokens(input, counter, tools) : 0;
  // Below the trigger means a size of at most trigger - 1 tokens.
  const gate = options.window ? Math.max(options.window.trigger - 1 - toolTokens, 0) : null;
  const target = options.window ? Math.max(options.window.target - toolTokens, 0) : options.target;
  const run: ChainRun = {
    options,
    counter,
    template,
    gate,
    target,
    referenceOf,
    current: input,
    // Every message at its own index until a step moves them.
    origin: indexList(input.length),
    // Not written to: `writableFinal` copies it first.
    final: input as Message[],
    finalOwned: false,
    windowPlan: null,
    windowSaw: undefined,
    pruning: [],
    offloads: [],
    summarizing: null,
    inserted: new Map(),
  };
  // Each strategy counts only what its decision needs, as the window alone does; the outcome counts the rest of the
  // conversation as it was read when an exact "before" is wanted (see Planned.input).
  let figures: Figures = {
    reached: gate === null,
    lastSkipped: false,
    tokensBefore: null,
    tokensBeforeExact: true,
    tokensAfter: () => 0,
  };
  for (const strategy of strategies) {
    const report = await STEPS[strategy].apply(run);
    figures = {
      reached: figures.reached || !report.under,
      lastSkipped: report.under,
      tokensBefore: figures.tokensBefore ?? report.before,
      tokensBeforeExact: figures.tokensBefore === null ? report.beforeExact : figures.tokensBeforeExact,
      tokensAfter: report.after,
    };
  }
  return finishChain(run, figures, toolTokens);
}

/**
 * The chain's decision from what its steps left: the window's plan (or the input's, everything kept) with the
 * chain's figures, and with summarize, the output's messages in order and a plan in input terms.
 */
function finishChain(run: ChainRun, figures: Figures, toolTokens: number): Decided {
  const { final, counter, options } = run;
  // The window's plan is made on the list it saw; when pruning went first, that list has the input's indices.
  // The input's groups with everything kept. Outside plans and dry runs only their structure: the strategies that
  // ran give the figures, so nothing is counted for it.
  const planOfInput = (): Plan =>
    options.exhaustive === true
      ? planCompaction(final, counter, {
          target: Number.MAX_SAFE_INTEGER,
          minKeepSteps: options.minKeepSteps,
          note: null,
          exhaustive: true,
        })
      : keepEverything(final, counter, options.minKeepSteps);
  const windowPlan = run.windowPlan;
  const base = windowPlan ?? planOfInput();
  const pruned = run.pruning.length > 0 || run.offloads.length > 0;
  const changed = base.changed || pruned;
  // Below the trigger, the conversation is measured against it, as the window alone does.
  const planned = figures.reached ? run.target : (run.gate as number);
  // Every strategy leaves what it measured (the window its plan's; pruning and offloading theirs, even unchanged).
  // Measured when an output asks (pruning alone keeps every message: its count after is the whole output's).
  let after: number | undefined;
  const afterOf = (): number => (after ??= figures.tokensAfter());
  // Laid over the base's own properties, not spread: a spread would call its getters, listing every group and every
  // removed index of a long conversation that no output may read.
  const plan: Plan = overlay(base, {
    changed,
    unchanged: changed ? null : base.unchanged,
    tokensBefore: figures.tokensBefore ?? base.tokensBefore,
    tokensBeforeExact: figures.tokensBefore === null ? base.tokensBeforeExact : figures.tokensBeforeExact,
    get tokensAfter(): number {
      return afterOf();
    },
    get targetMet(): boolean {
      return afterOf() <= planned;
    },
  });
  const decided: Decided = {
    plan,
    target: planned,
    toolTokens,
    pruning: run.pruning,
    offloads: run.offloads,
    messages: final,
    leftBelowTrigger: figures.reached && figures.lastSkipped && !plan.targetMet,
    ...(run.windowSaw === undefined ? {} : { windowSaw: run.windowSaw }),
    groupsExact: base.tokensBeforeExact,
  };
  const done = run.summarizing;
  if (done === null) return decided;
  // Without a round, the list the window saw is the input's. With one, it is the summarized list even when the window
  // then dropped every summary and note: its plan's indices are that list's, so they are mapped back to the input's.
  if (!done.rounds.length) return { ...decided, summarized: done };
  return summarizedDecision(run, decided, done, windowPlan === null ? base : planOfInput());
}

/**
 * A summarized chain's decision: the output is the chain's last list (input messages, the summaries and a note the
 * chain made), and the plan keeps the input messages it holds, with the groups in input terms.
 * @param groupsFrom a plan of the input whose groups the plan reports (a window after summarize planned on the
 *   summarized list)
 */
function summarizedDecision(run: ChainRun, decided: Decided, done: SummarizedConversation, groupsFrom: Plan): Decided {
  const { final } = run;
  const output: OutputEntry[] = run.current.map((m, k) => {
    const at = run.origin[k];
    if (at !== null && at !== undefined) return { input: at };
    return run.inserted.get(m) ?? { note: '', removed: 0, kept: 0 };
  });
  const summaries: PlacedSummary[] = output.flatMap((e, position) => {
    if (!('summary' in e)) return [];
    const r = done.rounds[e.summary] as SummarizedConversation['rounds'][number];
    return [
      { position, text: r.text, summarized: r.summarized, tier: r.tier, replaced: r.replaced, request: r.request },
    ];
  });
  const keptSet = new Set(output.flatMap((e) => ('input' in e ? [e.input] : [])));
  const kept = final.map((_, i) => i).filter((i) => keptSet.has(i));
  const removed = final.map((_, i) => i).filter((i) => !keptSet.has(i));
  const weight = (list: readonly number[]): number => list.reduce((a, i) => a + ((final[i] as Message).weight ?? 1), 0);
  const summarizedPlan: Plan = overlay(decided.plan, {
    changed: true,
    unchanged: null,
    kept,
    removed,
    removedCount: weight(removed),
    keptCount: weight(kept),
    noteIndex: null,
    noteText: null,
    groups: groupsFrom.groups.map((g) => ({
      ...g,
      kept: g.indices.every((i) => keptSet.has(i)),
    })),
  });
  return { ...decided, plan: summarizedPlan, summarized: { ...done, summaries }, output };
}

/**
 * The plan against window thresholds for a conversation whose tool schemas (as Haystack measures them) are known:
 * the file pipeline's and the in-memory library's one way of deciding with `--context-window`.
 * @param messages the normalized conversation
 * @param inner the counter
 * @param settings the decision's settings besides the target (`note` is the resolved template)
 * @param window the trigger and the target
 * @param tools the schemas' text, or null without any
 */
export function planWithThresholds(
  messages: readonly Message[],
  inner: TokenCounter,
  settings: {
    readonly minKeepSteps?: number | undefined;
    readonly note: string | null;
    readonly exhaustive?: boolean | undefined;
  },
  window: WindowThresholds,
  tools: string | null,
): { plan: Plan; target: number; toolTokens: number } {
  const counter = sharingCounter(inner);
  const toolTokens = schemaTokens(messages, counter, tools);
  // Below the trigger means a size of at most trigger - 1 tokens.
  const gate = Math.max(window.trigger - 1 - toolTokens, 0);
  const below = planCompaction(messages, counter, { ...settings, target: gate });
  if (below.unchanged === 'fits') return { plan: below, target: gate, toolTokens };
  const target = Math.max(window.target - toolTokens, 0);
  return { plan: planCompaction(messages, counter, { ...settings, target }), target, toolTokens };
}

/** What tool schemas' text adds to a conversation's size: Haystack appends it after the last message. */
function schemaTokens(messages: readonly Message[], counter: TokenCounter, tools: string | null): number {
  if (tools === null) return 0;
  const toolsRendered: Rendered = { text: tools, images: 0, files: 0 };
  const last = messages.length > 0 ? renderMessage(messages[messages.length - 1] as Message) : null;
  return last === null
    ? counter.measure([toolsRendered])
    : counter.measure([last, toolsRendered]) - counter.measure([last]);
}

/** A counter that passes one object per distinct text to `inner`, whose per-object caches then serve a second plan. */
function sharingCounter(inner: TokenCounter): TokenCounter {
  const seen = new Map<string, Rendered>();
  const canonical = (r: Rendered): Rendered => {
    const known = seen.get(r.text);
    if (known === undefined) {
      seen.set(r.text, r);
      return r;
    }
    return known.images === r.images && known.files === r.files ? known : r;
  };
  // Mapped lazily: a counter that stops at its limit never renders the older messages.
  const mapped = (messages: readonly Rendered[]): readonly Rendered[] => {
    const at = elementReader(messages);
    return lazyList(messages.length, (k) => canonical(at(k)));
  };
  const apart = inner.measureApart?.bind(inner);
  return {
    name: inner.name,
    measure: (messages, limit) => inner.measure(mapped(messages), limit),
    // The messages apart are read for their last characters only: not worth remembering.
    ...(apart === undefined
      ? {}
      : {
          measureApart: (messages: readonly Rendered[], at: ReadonlySet<number>, limit?: number) => {
            const read = elementReader(messages);
            return apart(
              lazyList(messages.length, (k) => (at.has(k) ? read(k) : canonical(read(k)))),
              at,
              limit,
            );
          },
        }),
  };
}
