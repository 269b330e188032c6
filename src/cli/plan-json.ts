import type { Group, GroupKind } from '../core/compact.js';
import type { IdentifierKind } from '../core/identifiers/index.js';
import { countsByKind, type LocatedIdentifier } from '../outcome/forgotten.js';
import type { Saved } from '../outcome/figures.js';
import { countOf, itemSpan, itemsOfAll, type Miss, type PlanNote, type PlanTotals } from '../outcome/outcome.js';
import type { ConversationResult, FileResult } from '../pipeline/index.js';
import type { CounterSettings } from '../tokens/options.js';
import type { WindowSettings } from './settings.js';

/**
 * The JSON plan of `--dry-run --json` / `--report`: a file's outcome (src/outcome) as a document, in item positions
 * of the file's own list. It reads the outcome and measures nothing.
 */

/** Settings a plan was made with, as the plan document records them. */
export interface PlanSettings {
  /** The run's token target: --target, or context window × compact-to. */
  readonly target: number;
  readonly tokenizer: string;
  readonly minKeepSteps: number;
  /** The active note template, or null when notes are off. */
  readonly note: string | null;
  /** The format asked for (`auto` or a name). */
  readonly format: string;
  /** The context-window thresholds, when the run used them instead of a fixed target. */
  readonly window?: WindowSettings | null;
  /** The counter's settings, when they are not Haystack's defaults. */
  readonly counter?: CounterSettings | null;
  /** The strategies applied in order, and pruning's settings; left out for the sliding window alone. */
  readonly strategies?: readonly string[];
  readonly minTokens?: number;
  readonly placeholder?: string;
  readonly offloadOver?: number;
  /** The settings file the run read, or null. */
  readonly config?: string | null;
}

/** One group in the JSON plan. */
export interface PlanGroup {
  /**
   * `pruned` / `offloaded`: a tool-result message whose results pruning replaced with a placeholder, or offloading with a
   * pointer into the store; it stays in its step, which lists it too.
   */
  readonly kind: GroupKind | 'pruned' | 'offloaded';
  /**
   * Item positions in the file's list (JSONL lines, array elements), end exclusive: the group's first item and
   * its last + 1. For the note, the position it is written at in the output. A group held entirely outside the
   * list (instructions in a request's `system`) has start = end = 0.
   */
  readonly start: number;
  readonly end: number;
  /** How many messages it holds, in the file's own count (as the note counts them). */
  readonly messages: number;
  readonly tokens: number | null;
  readonly kept: boolean;
  /** Items inside [start, end) that are not this group's (an earlier note inside a turn, listed as its own orphan). */
  readonly skip?: number[];
  /** Set on leading instructions held outside the message list: they take no position in it and count no message. */
  readonly outside?: true;
  /** The note's final text. */
  readonly text?: string;
  /** Which conversation of the file (0-based); only when the file holds several. */
  readonly conversation?: number;
  /** Pruned only: the tool whose result was replaced (several, comma-separated, for parallel calls). */
  readonly tool?: string;
  /** Pruned and offloaded only: the message measured alone, before and after (`tokens` is the latter). */
  readonly tokensBefore?: number;
  readonly tokensAfter?: number;
}

/** The note as a plan lists it: where it is written, its text and its own tokens. */
type NoteFigure = PlanNote & { readonly tokens: number | null };

/** What a plan says of a file or of one of its conversations: the outcome in counts. */
interface PlanOutcome {
  readonly changed: boolean;
  readonly messagesBefore: number;
  readonly messagesAfter: number;
  readonly tokensBefore: number;
  readonly tokensBeforeExact: boolean;
  readonly tokensAfter: number;
  readonly targetMet: boolean;
  readonly removed: PlanTotals['removed'];
  /**
   * With prune or offload in the chain: what they took out of the messages the output keeps, so that
   * tokensBefore = tokensAfter + saved.pruned + saved.offloaded + removed.tokens − the note's tokens − summaryTokens.
   */
  readonly saved?: Saved;
  /** With summarize in the chain: the summaries' own tokens, part of tokensAfter, measured together alone. */
  readonly summaryTokens?: number;
}

/** One conversation's totals in the JSON plan (only listed when a file holds several). */
export interface PlanConversation extends PlanOutcome {
  readonly conversation: number;
  readonly where: string;
  readonly target: number;
  readonly toolTokens?: number;
  readonly note: NoteFigure | null;
  readonly missReason: Miss | null;
}

/** One identifier a compaction forgets or leaves recoverable, and the message it came from. */
export interface PlanIdentifier {
  readonly kind: IdentifierKind;
  readonly value: string;
  /** The position in the file's list of the first message that names it. */
  readonly message: number;
  /** Which conversation of the file (0-based); only when the file holds several. */
  readonly conversation?: number;
}

/** Identifiers of one kind of fate (forgotten, recoverable): how many, how many of each kind, and each. */
export interface PlanIdentifiers {
  readonly count: number;
  readonly byKind: Partial<Record<IdentifierKind, number>>;
  readonly identifiers: PlanIdentifier[];
}

/** The settings part of a plan document. */
export interface PlanDocumentSettings {
  /** The fixed --target, or null when the context window sets it. */
  readonly target: number | null;
  readonly tokenizer: string;
  readonly minKeepSteps: number;
  readonly note: string | null;
  readonly format: string;
  /** With --context-window only: the window and its two shares. */
  readonly contextWindow?: number;
  readonly compactAt?: number;
  readonly compactTo?: number;
  /** The counter's settings, only when they are not Haystack's defaults. */
  readonly counter?: CounterSettings;
  /** Only when the run chose strategies other than the sliding window alone. */
  readonly strategies?: readonly string[];
  readonly minTokens?: number;
  readonly placeholder?: string;
  readonly offloadOver?: number;
  /** The settings file the run read, only when it read one. */
  readonly config?: string;
}

/** The version every JSON document of swc carries; it changes when a field changes meaning or goes away. */
export const DOCUMENT_VERSION = 1 as const;

/** The JSON plan of one file. */
export interface PlanDocument extends PlanOutcome {
  readonly version: typeof DOCUMENT_VERSION;
  readonly file: string;
  readonly format: string;
  readonly settings: PlanDocumentSettings;
  /**
   * The target the conversation was planned against: the fixed target, or with window thresholds window ×
   * compact-to less the tool schemas (below the compact-at threshold: the largest size that stays below it).
   */
  readonly target?: number;
  /** Tokens of the tool schemas taken off the target (window thresholds only). */
  readonly toolTokens?: number;
  /** The note of a single-conversation file; per conversation in `conversations` otherwise. */
  readonly note?: NoteFigure | null;
  readonly missReason?: Miss | null;
  readonly groups: PlanGroup[];
  readonly conversations?: PlanConversation[];
  /**
   * Identifiers named only in what the compaction removes or prunes (nowhere in what it keeps, the note included),
   * and those named only in results offloading moved to the store, where the pointer leads back to them.
   */
  readonly forgotten?: PlanIdentifiers;
  readonly recoverable?: PlanIdentifiers;
  /** With summarize: every round that succeeded (simulated in a dry run), in order. */
  readonly summaries?: PlanSummary[];
}

/** One summarize round as a plan lists it. */
export interface PlanSummary {
  readonly conversation?: number;
  readonly round: number;
  readonly tier: string;
  /** The items of the input the summary stands for, ascending (through earlier rounds' summaries it replaced). */
  readonly items: number[];
  /** Haystack's `summarized_messages`: the messages of the conversation that round replaced. */
  readonly summarizedMessages: number;
  readonly promptTokens: number | null;
  readonly tokensBefore: number;
  readonly tokensAfter: number;
  /** Whether the output holds this summary (a later round may have replaced it). */
  readonly kept: boolean;
  /** How many identifiers the messages it replaced name (an earlier summary among them counts by its text). */
  readonly identifiers: number;
  /** How many of them the summary still names; null when it was simulated (dry runs). */
  readonly identifiersKept: number | null;
  /** identifiersKept / identifiers (1 when they name none); null when simulated. */
  readonly retention: number | null;
}

/** A group as the JSON plan lists it, in item positions. */
function planGroup(
  group: Group,
  tokens: number | null,
  c: ConversationResult,
  note: { index: number | null; tokens: number | null },
  conversation: number | null,
): PlanGroup {
  const { plan, normalized } = c;
  const isNote = group.kind === 'note';
  const span = isNote ? null : itemSpan(normalized.itemsOf, group);
  const at = note.index ?? 0;
  return {
    kind: group.kind,
    start: span === null ? at : span.start,
    end: span === null ? at + 1 : span.end,
    messages: isNote ? 1 : countOf(normalized.messages, group.indices, normalized.itemsOf),
    tokens: isNote ? note.tokens : tokens,
    kept: group.kept,
    ...(span !== null && span.skip.length > 0 ? { skip: [...span.skip] } : {}),
    ...(span?.outside === true ? { outside: true as const } : {}),
    ...(isNote && plan.noteText !== null ? { text: plan.noteText } : {}),
    ...(conversation !== null ? { conversation } : {}),
  };
}

function conversationSummary(c: ConversationResult, k: number) {
  const { totals, note } = c.outcome;
  return {
    k,
    c,
    plan: c.plan,
    totals,
    // With its own tokens, one of the figures that add up (a summarizing chain's note has no group of its own).
    note: note === null ? null : { ...note, tokens: totals.noteTokens },
    index: note?.index ?? null,
    where: c.slot.where,
    target: c.target,
    toolTokens: c.toolTokens,
  };
}

/** The settings a plan records: the command line's meaning, the window's shares when it was used. */
function documentSettings(settings: PlanSettings): PlanDocumentSettings {
  const window = settings.window ?? null;
  const base = {
    target: window === null ? settings.target : null,
    tokenizer: settings.tokenizer,
    minKeepSteps: settings.minKeepSteps,
    note: settings.note,
    format: settings.format,
    ...(settings.counter != null ? { counter: settings.counter } : {}),
    ...(settings.config != null ? { config: settings.config } : {}),
    ...(settings.strategies !== undefined && settings.strategies.join(',') !== 'window'
      ? {
          strategies: settings.strategies,
          ...(settings.strategies.includes('prune')
            ? { minTokens: settings.minTokens, placeholder: settings.placeholder }
            : {}),
          ...(settings.strategies.includes('offload') ? { offloadOver: settings.offloadOver } : {}),
        }
      : {}),
  };
  return window === null
    ? base
    : { ...base, contextWindow: window.tokens, compactAt: window.compactAt.value, compactTo: window.compactTo.value };
}

/**
 * The JSON plan of one file: settings, tokens before and after, whether the target is met, and every group
 * in conversation order as `{kind, start, end, messages, tokens, kept}` in item positions of the file's list.
 * A file holding several conversations lists the groups of all of them, each tagged with `conversation`, plus
 * per-conversation totals in `conversations`.
 * @param result a compaction of the file (made with `exhaustive: true`, so every group is counted)
 * @param settings the settings it was made with
 * @returns a plain object, ready for JSON.stringify
 */
export function planDocument(result: FileResult, settings: PlanSettings): PlanDocument {
  const several = result.conversations.length > 1;
  const parts = result.conversations.map((c, k) => conversationSummary(c, k));
  const groups: PlanGroup[] = [];
  for (const p of parts) {
    const tokens = p.c.outcome.groupTokens;
    p.plan.groups.forEach((g, k) =>
      groups.push(
        planGroup(g, tokens[k] ?? null, p.c, { index: p.index, tokens: p.totals.noteTokens }, several ? p.k : null),
      ),
    );
    const replaced = [
      ...(p.c.pruned ?? []).map((r) => ({ r, kind: 'pruned' as const })),
      ...(p.c.offloaded ?? []).map((r) => ({ r, kind: 'offloaded' as const })),
    ];
    for (const { r, kind } of replaced) {
      groups.push({
        kind,
        start: r.start,
        end: r.end,
        messages: countOf(p.c.normalized.messages, [r.message], p.c.normalized.itemsOf),
        tokens: r.tokensAfter,
        kept: true,
        tool: r.tools.join(', '),
        tokensBefore: r.tokensBefore,
        tokensAfter: r.tokensAfter,
        ...(several ? { conversation: p.k } : {}),
      });
    }
  }
  const summaries = planSummaries(parts, several);
  const withSummaries = result.conversations.some((c) => c.summarized !== undefined) ? { summaries } : {};
  const sumOf = (f: (p: (typeof parts)[number]) => number): number => parts.reduce((a, p) => a + f(p), 0);
  const removedTokens = parts.every((p) => p.totals.removed.tokens !== null)
    ? sumOf((p) => p.totals.removed.tokens ?? 0)
    : null;
  const base = {
    version: DOCUMENT_VERSION,
    file: result.file,
    format: result.format,
    settings: documentSettings(settings),
    changed: result.changed,
    messagesBefore: sumOf((p) => p.totals.messagesBefore),
    messagesAfter: sumOf((p) => p.totals.messagesAfter),
    tokensBefore: sumOf((p) => p.c.outcome.before.tokens),
    tokensBeforeExact: parts.every((p) => p.c.outcome.before.exact),
    tokensAfter: sumOf((p) => p.plan.tokensAfter),
    targetMet: parts.every((p) => p.plan.targetMet),
    removed: {
      messages: sumOf((p) => p.totals.removed.messages),
      tokens: removedTokens,
      turns: sumOf((p) => p.totals.removed.turns),
      steps: sumOf((p) => p.totals.removed.steps),
      orphans: sumOf((p) => p.totals.removed.orphans),
    },
    ...savedPart(result.conversations),
    ...summaryPart(result.conversations),
  };
  const inventory = inventoryPart(result);
  if (!several) {
    const only = parts[0];
    return {
      ...base,
      ...inventory,
      target: only?.target ?? settings.target,
      ...(only !== undefined && only.toolTokens > 0 ? { toolTokens: only.toolTokens } : {}),
      note: only?.note ?? null,
      missReason: only?.totals.miss ?? null,
      groups,
      ...withSummaries,
    };
  }
  return {
    ...base,
    ...inventory,
    groups,
    ...withSummaries,
    conversations: parts.map((p) => ({
      conversation: p.k,
      where: p.where,
      target: p.target,
      ...(p.toolTokens > 0 ? { toolTokens: p.toolTokens } : {}),
      changed: p.plan.changed,
      messagesBefore: p.totals.messagesBefore,
      messagesAfter: p.totals.messagesAfter,
      tokensBefore: p.c.outcome.before.tokens,
      tokensBeforeExact: p.c.outcome.before.exact,
      tokensAfter: p.plan.tokensAfter,
      targetMet: p.plan.targetMet,
      removed: p.totals.removed,
      ...savedPart([p.c]),
      ...summaryPart([p.c]),
      note: p.note,
      missReason: p.totals.miss,
    })),
  };
}

/** What pruning and offloading saved in these conversations, when one of them is in the chain; else nothing. */
function savedPart(cs: readonly ConversationResult[]): { saved?: Saved } {
  if (!cs.some((c) => c.strategies.includes('prune') || c.strategies.includes('offload'))) return {};
  const sum = (pick: (s: Saved) => number): number => cs.reduce((a, c) => a + pick(c.outcome.figures.saved), 0);
  return { saved: { pruned: sum((s) => s.pruned), offloaded: sum((s) => s.offloaded) } };
}

/** What the summaries the output holds cost, when summarize is in the chain; else nothing. */
function summaryPart(cs: readonly ConversationResult[]): { summaryTokens?: number } {
  if (!cs.some((c) => c.strategies.includes('summarize'))) return {};
  return { summaryTokens: cs.reduce((a, c) => a + c.outcome.figures.summaries, 0) };
}

/** Every summarize round of the file's conversations, in order, as the plan lists them. */
function planSummaries(parts: readonly ReturnType<typeof conversationSummary>[], several: boolean): PlanSummary[] {
  return parts.flatMap((p) =>
    (p.c.summarized?.rounds ?? []).map((r, round) => ({
      ...(several ? { conversation: p.k } : {}),
      round,
      tier: r.tier,
      items: itemsOfAll(p.c.normalized.itemsOf, r.replaced),
      summarizedMessages: r.summarized,
      promptTokens: r.promptTokens,
      tokensBefore: r.tokensBefore,
      tokensAfter: r.tokensAfter,
      kept: (p.c.output ?? []).some((e) => 'summary' in e && e.summary === round),
      identifiers: r.identifiers,
      identifiersKept: r.retention === null ? null : r.retention.kept,
      retention: r.retention === null ? null : r.retention.fraction,
    })),
  );
}

/** The forgotten and recoverable identifiers of a file's conversations, when the outcome worked them out. */
function inventoryPart(result: FileResult): { forgotten?: PlanIdentifiers; recoverable?: PlanIdentifiers } {
  const inventories = result.conversations.map((c) => c.outcome.inventory);
  if (inventories.some((i) => i === null)) return {};
  const several = result.conversations.length > 1;
  const listOf = (pick: 'forgotten' | 'recoverable'): PlanIdentifiers => {
    const identifiers: PlanIdentifier[] = [];
    inventories.forEach((inventory, k) => {
      for (const id of (inventory?.[pick] ?? []) as readonly LocatedIdentifier[]) {
        identifiers.push({
          kind: id.kind,
          value: id.value,
          message: id.message,
          ...(several ? { conversation: k } : {}),
        });
      }
    });
    return { count: identifiers.length, byKind: countsByKind(identifiers), identifiers };
  };
  return { forgotten: listOf('forgotten'), recoverable: listOf('recoverable') };
}
