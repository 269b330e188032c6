import type { ChalkInstance } from 'chalk';
import type { Plan } from '../../core/compact.js';
import type { ConversationResult, FileResult } from '../../pipeline/index.js';
import type { TokenFigures } from '../../outcome/figures.js';
import type { Inventory, LocatedIdentifier } from '../../outcome/forgotten.js';
import { countOf, itemSpan, itemsOfAll, type Miss, type OrphanKind, type PlanTotals } from '../../outcome/outcome.js';
import type { WindowSettings } from '../settings.js';
import { figureText, formatCount, missText, percent, thresholdText } from '../result-line.js';
import { cutStartToWidth, escapeControls, padEndTo, wrapToWidth } from './text-width.js';
import {
  type Tone,
  type Piece,
  emitLine,
  type Row,
  layoutRows,
  flowItems,
  merge,
  allocate,
  markColumn,
} from './layout.js';
import {
  countLabel,
  tokensLabel,
  rangeLabel,
  OUTSIDE_LABEL,
  plural,
  toolNames,
  groupText,
  groupLabels,
  KIND_NAMES,
  forgetsText,
} from './labels.js';

/**
 * The `--dry-run` view: a diff of a conversation's structure, one line per group, in conversation order.
 * Pure: it returns text and never prints. Lines are laid out in plain text, cut to the width, then coloured,
 * so colour never changes what fits, and the markers (`-` removed, `+` kept, `~` pruned, ` ` protected) carry the meaning
 * without colour.
 */

/** How to show a dry run. */
export interface DryRunView {
  /** The run's target: --target, or context window × compact-to. */
  readonly target: number;
  readonly tokenizer: string;
  readonly minKeepSteps: number;
  /** The active note template, or null when notes are off. */
  readonly note: string | null;
  /** Terminal columns: no line is wider. */
  readonly width: number;
  readonly color: ChalkInstance;
  /** The context-window thresholds, when the run used them instead of a fixed target. */
  readonly window?: WindowSettings | null;
  /** List every identifier the compaction forgets or leaves recoverable, one a line (--verbose). */
  readonly verbose?: boolean;
  /** The settings file the run read, named in the header so a surprising setting can be traced; null without one. */
  readonly config?: string | null;
}

/** Why a message in no group goes, in words. */
function orphanReason(kind: OrphanKind, noteOn: boolean): string {
  switch (kind) {
    case 'earlier-note':
      return noteOn ? 'earlier note, the new note replaces it' : 'earlier note';
    case 'after-task':
      return 'after the task, in no step';
    case 'before-first-turn':
      return 'before the first user message, in no turn';
    case 'no-group':
      return 'in no turn or step';
  }
}

/** The line that says there is no note, and why. */
function noNoteReason(c: ConversationResult, noteOn: boolean): string {
  const { plan } = c;
  if (!noteOn) return 'no note: notes are off';
  if (c.outcome.belowThreshold) return 'no note: nothing removed (below the threshold)';
  if (plan.unchanged === 'fits')
    return plan.targetMet ? 'no note: nothing removed (fits the target)' : 'no note: nothing removed';
  if (plan.unchanged === 'only-notes') return 'no note: only earlier notes would go, so nothing changes';
  return 'no note: nothing can be removed';
}

/**
 * The rows of one conversation, the note (or its absence) where it would be inserted. Ranges are item positions
 * in the file's list (`#first-last`, inclusive), the note's the position it is written at (`@n`); leading
 * instructions held outside the list show `outside` and 0 messages.
 */
function conversationRows(conversation: ConversationResult, view: DryRunView, totals: PlanTotals): Row[] {
  const { plan } = conversation;
  const { messages, itemsOf } = conversation.normalized;
  const labels = groupLabels(plan.groups);
  const noteOn = view.note !== null;
  const noteAt = conversation.outcome.note?.index ?? null;
  const rows: Row[] = [];
  plan.groups.forEach((g, k) => {
    const label = labels[k] as string;
    if (g.kind === 'note') {
      rows.push({
        marker: '+',
        label,
        range: `@${noteAt ?? 0}`,
        count: countLabel(1),
        tokens: totals.noteTokens === null ? '' : tokensLabel(totals.noteTokens),
        text: plan.noteText ?? '',
        tone: 'note',
      });
      return;
    }
    const isProtected = g.kind === 'system' || g.kind === 'task';
    const span = itemSpan(itemsOf, g);
    let text = groupText(messages, g);
    const orphan = conversation.outcome.orphans[k];
    if (orphan != null) text = `${orphanReason(orphan, noteOn)} · ${text}`;
    rows.push({
      marker: isProtected ? ' ' : g.kept ? '+' : '-',
      label,
      range: span.end === span.start ? OUTSIDE_LABEL : rangeLabel(span.start, span.end),
      count: countLabel(countOf(messages, g.indices, itemsOf)),
      tokens: tokensLabel(conversation.outcome.groupTokens[k] ?? null),
      text,
      tone: isProtected ? 'protected' : g.kept ? 'kept' : 'removed',
    });
  });
  // A pruned result is its own row, right after the group that holds it (it stays there).
  const replaced = [
    ...(conversation.pruned ?? []).map((r) => ({ ...r, label: 'pruned' })),
    ...(conversation.offloaded ?? []).map((r) => ({ ...r, label: 'offloaded' })),
  ].sort((a, b) => b.message - a.message);
  for (const r of replaced) {
    const k = plan.groups.findIndex((g) => g.kind !== 'note' && g.indices.includes(r.message));
    rows.splice(k + 1, 0, {
      marker: '~',
      label: r.label,
      range: rangeLabel(r.start, r.end),
      count: countLabel(countOf(messages, [r.message], itemsOf)),
      tokens: `${formatCount(r.tokensBefore)} → ${formatCount(r.tokensAfter)}`,
      text: toolNames(r.tools),
      tone: 'kept',
    });
  }
  if (plan.noteText === null) {
    const at = plan.groups.findIndex((g) => g.kind === 'system') + 1;
    rows.splice(at, 0, {
      marker: ' ',
      label: 'note',
      range: '',
      count: '',
      tokens: '',
      text: noNoteReason(conversation, noteOn),
      tone: 'note',
    });
  }
  return rows;
}

/** One segment of the budget bar. */
interface BarPart {
  readonly key: string;
  readonly char: string;
  readonly tone: Tone;
  readonly tokens: number;
}

/** Where the bar's marker stands, and what the legend calls it. */
interface BarMarker {
  readonly at: number;
  readonly label: string;
}

/** The bar's marker: the target, or for a conversation below the window threshold, that threshold (less the tool schemas). */
function barMarker(c: ConversationResult, window: WindowSettings | null | undefined): BarMarker {
  if (!c.outcome.belowThreshold) return { at: c.target, label: `target ${formatCount(c.target)}` };
  const { trigger } = window as WindowSettings;
  const at = Math.max(trigger - c.toolTokens, 0);
  return {
    at,
    label: `threshold ${formatCount(trigger)}${c.toolTokens > 0 ? ` (${formatCount(at)} after tool schemas)` : ''}`,
  };
}

/**
 * The budget bar and its legend: what stays (protected, kept turns, kept steps, note, summaries) against the target, and what
 * goes: removed messages, and what pruning and offloading took out of the results that stay (`~`).
 */
function budgetLines(
  totals: PlanTotals,
  marker: BarMarker,
  met: boolean,
  width: number,
  color: ChalkInstance,
  figures: Pick<TokenFigures, 'saved' | 'summaries'>,
): string[] {
  const { saved } = figures;
  const target = marker.at;
  const parts: BarPart[] = [
    { key: 'protected', char: '█', tone: 'protected', tokens: totals.protectedTokens ?? 0 },
    { key: 'turns', char: '▓', tone: 'kept', tokens: (totals.keptTurnTokens ?? 0) + (totals.keptOtherTokens ?? 0) },
    { key: 'steps', char: '▒', tone: 'kept', tokens: totals.keptStepTokens ?? 0 },
    { key: 'note', char: '▞', tone: 'note', tokens: totals.noteTokens ?? 0 },
    { key: 'summaries', char: '▚', tone: 'note', tokens: figures.summaries },
    { key: 'removed', char: '░', tone: 'removed', tokens: totals.removed.tokens ?? 0 },
    { key: 'pruned', char: '~', tone: 'removed', tokens: saved.pruned },
    { key: 'offloaded', char: '~', tone: 'removed', tokens: saved.offloaded },
  ];
  const total = parts.reduce((a, p) => a + Math.max(p.tokens, 0), 0);
  const scale = Math.max(total, target);
  const prefix = 'budget [';
  const cells = Math.max(width - prefix.length - 2, 0);
  const columns = allocate(
    parts.map((p) => Math.max(p.tokens, 0)),
    scale,
    cells,
  );
  // The kept parts are the first five; the rest is what goes.
  const kept = columns.slice(0, 5).reduce((a, b) => a + b, 0);
  const targetAt = markColumn(target, scale, cells, kept, met);
  const pieces: Piece[] = [{ text: prefix }];
  let at = 0;
  const put = (text: string, tone: Tone): void => {
    for (const ch of text) {
      if (at === targetAt) pieces.push({ text: '│', tone: 'strong' });
      pieces.push({ text: ch, tone });
      at++;
    }
  };
  parts.forEach((p, i) => put(p.char.repeat(columns[i] as number), p.tone));
  put(' '.repeat(Math.max(cells - at, 0)), 'plain');
  if (at === targetAt) pieces.push({ text: '│', tone: 'strong' });
  pieces.push({ text: ']' });
  const legend: Piece[][] = [];
  for (const p of parts) {
    if (p.tokens === 0 && p.key !== 'protected') continue;
    if (p.key === 'pruned' || p.key === 'offloaded') {
      // Pointers longer than the results they replace make the output bigger: said as a plus.
      const sign = p.tokens > 0 ? '−' : '+';
      legend.push([{ text: `${p.char} ${p.key} results ${sign}${formatCount(Math.abs(p.tokens))}`, tone: p.tone }]);
      continue;
    }
    legend.push([{ text: `${p.char} ${p.key} ${formatCount(p.tokens)}`, tone: p.tone }]);
  }
  legend.push([{ text: `│ ${marker.label}`, tone: 'strong' }]);
  return [emitLine(merge(pieces), width, color), ...flowItems(legend, width, color)];
}

/** The closing lines: what went, then whether the target is met (and if not, why), wrapped to the width. */
function closingLines(c: ConversationResult, totals: PlanTotals, view: DryRunView, width: number): string[] {
  const { plan } = c;
  const toolTokens = c.toolTokens;
  const target = `${formatCount(c.target)}${toolTokens > 0 ? ` (after ${formatCount(toolTokens)} tokens of tool schemas)` : ''}`;
  const after = formatCount(plan.tokensAfter);
  let verdict: string;
  if (c.outcome.belowThreshold) {
    const size = plan.tokensAfter + toolTokens;
    verdict = `${thresholdText(view.window as WindowSettings)}: ${formatCount(size)} tokens${toolTokens > 0 ? ', tool schemas included' : ''}`;
  } else {
    verdict = plan.targetMet
      ? `target ${target} met (${after} tokens)`
      : `target ${target} not met (${after} tokens): ${missText(totals.miss as Miss, c.outcome.missContext)}`;
  }
  let first: string;
  if (!plan.changed) {
    first = plan.unchanged === 'only-notes' ? 'nothing removed: only earlier notes would go' : 'nothing removed';
  } else {
    first = changedText(c, totals.removed);
  }
  const tone: Tone = plan.targetMet ? 'good' : 'bad';
  const inventory = c.outcome.inventory;
  return [
    // Wrapped, not cut: what pruning and offloading saved comes last and is one of the figures that add up.
    ...wrapToWidth(first, width, '  ').map((l) => emitLine([{ text: l, tone: 'strong' }], width, view.color)),
    ...summaryRoundLines(c, width, view),
    ...(inventory !== null && plan.changed ? inventoryLines(inventory, view, width) : []),
    ...wrapToWidth(verdict, width, '  ').map((l) => emitLine([{ text: l, tone }], width, view.color)),
  ];
}

/**
 * What a change removes, prunes and offloads, naming only the parts that happened: `removed 9 messages (1,210 tokens)
 * in 8 steps; pruned 2 tool results (900 tokens saved)`, never `in 0 turns`.
 */
function changedText(c: ConversationResult, r: PlanTotals['removed']): string {
  const phrases: string[] = [];
  if (r.messages > 0) {
    const where = [
      ...(r.turns > 0 ? [plural(r.turns, 'turn')] : []),
      ...(r.steps > 0 ? [plural(r.steps, 'step')] : []),
      ...(r.orphans > 0 ? [plural(r.orphans, 'other message')] : []),
    ];
    const tokens = r.tokens === null ? '' : ` (${formatCount(r.tokens)} tokens)`;
    phrases.push(
      `removed ${plural(r.messages, 'message')}${tokens}${where.length === 0 ? '' : ` in ${listText(where)}`}`,
    );
  }
  const pruned = (c.pruned ?? []).reduce((a, p) => a + p.tools.length, 0);
  if (pruned > 0) {
    phrases.push(`pruned ${plural(pruned, 'tool result')} (${savedText(c.outcome.figures.saved.pruned)})`);
  }
  const offloaded = (c.offloaded ?? []).reduce((a, p) => a + p.tools.length, 0);
  if (offloaded > 0)
    phrases.push(
      `offloaded ${plural(offloaded, 'tool result')} to the store (${savedText(c.outcome.figures.saved.offloaded)})`,
    );
  return phrases.length === 0 ? 'nothing removed' : phrases.join('; ');
}

/** `900 tokens saved`; `12 tokens added` where replacements are longer than what they replace. */
function savedText(tokens: number): string {
  return tokens >= 0 ? `${formatCount(tokens)} tokens saved` : `${formatCount(-tokens)} tokens added`;
}

/** `a`, `a and b`, `a, b and c`. */
function listText(items: readonly string[]): string {
  return items.length <= 2 ? items.join(' and ') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

/** The forgets line, wrapped; with --verbose every identifier after it: `- path src/a.ts #3`, `~` for recoverable ones. */
function inventoryLines(inventory: Inventory, view: DryRunView, width: number): string[] {
  const lines = wrapToWidth(forgetsText(inventory), width, '  ').map((l) =>
    emitLine([{ text: l, tone: 'removed' }], width, view.color),
  );
  if (view.verbose !== true) return lines;
  const all: { id: LocatedIdentifier; marker: string; tone: Tone; label: string }[] = [
    ...inventory.forgotten.map((id) => ({ id, marker: '-', tone: 'removed' as const, label: '' })),
    ...inventory.recoverable.map((id) => ({ id, marker: '~', tone: 'kept' as const, label: ' (in the store)' })),
  ];
  const kindWidth = Math.max(0, ...all.map((x) => KIND_NAMES[x.id.kind][0].length));
  for (const { id, marker, tone, label } of all) {
    const text = `  ${marker} ${padEndTo(KIND_NAMES[id.kind][0], kindWidth)}  #${id.message}  ${escapeControls(id.value)}${label}`;
    lines.push(emitLine([{ text, tone }], width, view.color));
  }
  return lines;
}

/** With summarize: one line per round, what it would replace (in item positions) and what its call would send. */
function summaryRoundLines(c: ConversationResult, width: number, view: DryRunView): string[] {
  const rounds = c.summarized?.rounds ?? [];
  return rounds.flatMap((r, k) => {
    const items = itemsOfAll(c.normalized.itemsOf, r.replaced);
    const span = items.length === 0 ? 'nothing' : items.length === 1 ? `item ${items[0]}` : `items ${spans(items)}`;
    const prompt = r.promptTokens === null ? '' : `, a call of ${formatCount(r.promptTokens)} prompt tokens`;
    // A simulated summary keeps nothing worth counting: the line says what a real one would have to keep.
    const names =
      r.identifiers === 0
        ? ''
        : r.retention === null
          ? ` (naming ${plural(r.identifiers, 'identifier')})`
          : ` (its summary keeps ${formatCount(r.retention.kept)} of ${plural(r.identifiers, 'identifier')})`;
    const text = `round ${k + 1} (${r.tier.replaceAll('_', ' ')}): a summary would replace ${span}${names}${prompt}`;
    return wrapToWidth(text, width, '  ').map((l) => emitLine([{ text: l }], width, view.color));
  });
}

/** Ascending numbers as ranges: 1–4, 7, 9–10. */
function spans(sorted: readonly number[]): string {
  const out: string[] = [];
  for (let i = 0; i < sorted.length;) {
    let j = i;
    while (j + 1 < sorted.length && (sorted[j + 1] as number) === (sorted[j] as number) + 1) j++;
    out.push(i === j ? String(sorted[i]) : `${sorted[i]}–${sorted[j]}`);
    i = j + 1;
  }
  return out.join(', ');
}

/** One conversation, its plan and totals, as the view draws them. */
interface Drawn {
  readonly c: ConversationResult;
  readonly plan: Plan;
  readonly totals: PlanTotals;
}

/** The settings the header lists: with window thresholds the window and its two shares instead of a target. */
function settingsItems(result: FileResult, view: DryRunView): string[] {
  const window = view.window ?? null;
  const budget =
    window === null
      ? [`target ${formatCount(view.target)}`]
      : [
          `context window ${formatCount(window.tokens)}`,
          `compact at ${percent(window.compactAt.value)} (${formatCount(window.trigger)})`,
          `compact to ${percent(window.compactTo.value)} (${formatCount(window.target)})`,
        ];
  return [
    `format ${result.format}`,
    `tokenizer ${view.tokenizer}`,
    ...budget,
    `min_keep_steps ${view.minKeepSteps}`,
    view.note === null ? 'no note' : 'note on',
    ...(view.config != null ? [`config ${escapeControls(view.config)}`] : []),
  ];
}

/**
 * The file header: name, format, settings, then `--- before` and `+++ after` lines. Tokens are the conversation's;
 * the tool schemas a window counts are named beside them. A file below the window's threshold says so.
 */
function headerLines(result: FileResult, view: DryRunView, all: readonly Drawn[]): string[] {
  const { width, color } = view;
  const sum = (f: (x: Drawn) => number): number => all.reduce((a, x) => a + f(x), 0);
  const exact = all.every((x) => x.c.outcome.before.exact);
  const before = {
    count: sum((x) => x.totals.messagesBefore),
    messages: formatCount(sum((x) => x.totals.messagesBefore)),
    tokens: figureText({ tokens: sum((x) => x.c.outcome.before.tokens), exact }),
  };
  const after = {
    count: sum((x) => x.totals.messagesAfter),
    messages: formatCount(sum((x) => x.totals.messagesAfter)),
    tokens: formatCount(sum((x) => x.plan.tokensAfter)),
  };
  const mw = Math.max(before.messages.length, after.messages.length);
  const tw = Math.max(before.tokens.length, after.tokens.length);
  const met = all.every((x) => x.plan.targetMet);
  const tools = sum((x) => x.c.toolTokens);
  const targets = new Set(all.map((x) => x.c.target));
  const window = view.window ?? null;
  const targetName = `target${targets.size === 1 ? ` ${formatCount([...targets][0] as number)}` : ''}`;
  const verdict =
    window !== null && all.length > 0 && all.every((x) => x.c.outcome.belowThreshold)
      ? thresholdText(window)
      : `${targetName} ${met ? 'met' : 'not met'}`;
  // A target applies to each conversation, so a file of several is judged conversation by conversation.
  const several = all.length > 1;
  const title = 'dry run: ';
  return [
    emitLine(
      [
        { text: title, tone: 'strong' },
        { text: cutStartToWidth(result.file, width - title.length), tone: 'strong' },
      ],
      width,
      color,
    ),
    ...flowItems(
      settingsItems(result, view).map((text) => [{ text }]),
      width,
      color,
    ),
    emitLine(
      [
        {
          text: `--- before  ${before.messages.padStart(mw)} ${before.count === 1 ? 'message ' : 'messages'}  ${before.tokens.padStart(tw)} tokens${tools > 0 ? `  (+ ${formatCount(tools)} tokens of tool schemas)` : ''}`,
          tone: 'removed',
        },
      ],
      width,
      color,
    ),
    emitLine(
      [
        {
          text: `+++ after   ${after.messages.padStart(mw)} ${after.count === 1 ? 'message ' : 'messages'}  ${after.tokens.padStart(tw)} tokens`,
          tone: 'kept',
        },
        ...(several ? [] : [{ text: `  ${verdict}`, tone: met ? ('good' as const) : ('bad' as const) }]),
      ],
      width,
      color,
    ),
    ...(several
      ? wrapToWidth(perConversationText(all, targetName), width, '  ').map((l) =>
          emitLine([{ text: l, tone: met ? 'good' : 'bad' }], width, color),
        )
      : []),
  ];
}

/**
 * `target 50 met in 1 of 3 conversations; largest after: 53 tokens (conversation 2)`: a file of several conversations
 * is judged as each is, never by its total.
 */
function perConversationText(all: readonly Drawn[], targetName: string): string {
  const met = all.filter((x) => x.plan.targetMet).length;
  let largest = 0;
  all.forEach((x, k) => {
    if (x.plan.tokensAfter > (all[largest] as Drawn).plan.tokensAfter) largest = k;
  });
  const biggest = all[largest] as Drawn;
  return (
    `${targetName} met in ${met === all.length ? 'every' : `${formatCount(met)} of ${formatCount(all.length)}`} conversation${met === all.length ? '' : 's'}; ` +
    `largest after: ${formatCount(biggest.plan.tokensAfter)} tokens (conversation ${largest + 1})`
  );
}

/** Whether a conversation of a file of several gets its own section: it would change, or it misses its target. */
function isShown(plan: Plan): boolean {
  return plan.changed || !plan.targetMet;
}

/**
 * The whole dry-run text for one file: header, then per conversation the groups (marked `-` removed,
 * `+` kept, ` ` protected), the note where it goes, the budget bar and a closing line.
 * @param result a compaction of the file, made with `exhaustive: true` so every group is counted
 * @param view settings to show, terminal width and a chalk instance (level 0 for no colour)
 * @returns the text, ending with a newline; no line is wider than `view.width`
 */
export function renderDryRun(result: FileResult, view: DryRunView): string {
  const width = Math.max(view.width, 1);
  const all: Drawn[] = result.conversations.map((c) => ({
    c,
    plan: c.plan,
    totals: c.outcome.totals,
  }));
  const lines = headerLines(result, { ...view, width }, all);
  const several = result.conversations.length > 1;
  all.forEach(({ c, plan, totals }, k) => {
    // In a file of many conversations only those that change or miss their target get a section; the rest are
    // counted at the end.
    if (several && !isShown(plan)) return;
    lines.push('');
    if (several) {
      lines.push(
        emitLine(
          [
            {
              text: `@@ conversation ${k + 1} of ${result.conversations.length} (${escapeControls(c.slot.where)}) @@`,
              tone: 'hunk',
            },
          ],
          width,
          view.color,
        ),
      );
    }
    if (c.normalized.messages.length === 0) {
      lines.push(emitLine([{ text: '  (no messages)' }], width, view.color));
    } else {
      lines.push(...layoutRows(conversationRows(c, view, totals), width, view.color));
    }
    lines.push('');
    lines.push(...budgetLines(totals, barMarker(c, view.window), plan.targetMet, width, view.color, c.outcome.figures));
    lines.push(...closingLines(c, totals, view, width));
  });
  if (several) {
    const changed = all.filter((x) => x.plan.changed).length;
    const met = all.filter((x) => x.plan.targetMet).length;
    const hidden = all.filter((x) => !isShown(x.plan)).length;
    const removed = all.reduce((a, x) => a + x.totals.removed.messages, 0);
    const unchanged = all.length - changed;
    lines.push('');
    lines.push(
      emitLine(
        [
          {
            text:
              `total: ${plural(all.length, 'conversation')}, ${formatCount(changed)} would change` +
              (unchanged > 0
                ? `, ${formatCount(unchanged)} unchanged${hidden > 0 ? ` (${hidden === unchanged ? '' : `${formatCount(hidden)} `}not shown)` : ''}`
                : ''),
          },
        ],
        width,
        view.color,
      ),
      emitLine(
        [
          {
            text: `${removed === 0 ? 'nothing removed' : `removed ${plural(removed, 'message')}`}; target met in ${formatCount(met)} of ${formatCount(all.length)}`,
            tone: met === all.length ? 'good' : 'bad',
          },
        ],
        width,
        view.color,
      ),
    );
  }
  return `${lines.join('\n')}\n`;
}
