import type { ChalkInstance } from 'chalk';
import type { Group, Plan } from '../core/compact.js';
import { contentOf } from '../core/render.js';
import type { Content, Message } from '../core/types.js';
import type { ConversationResult, FileResult } from '../pipeline/index.js';
import type { IdentifierKind } from '../core/identifiers/index.js';
import { IDENTIFIER_KINDS } from '../core/identifiers/index.js';
import type { Inventory, LocatedIdentifier } from '../outcome/forgotten.js';
import { countOf, itemSpan, itemsOfAll, type Miss, type OrphanKind, type PlanTotals } from '../outcome/outcome.js';
import type { WindowSettings } from './settings.js';
import { figureText, formatCount, missText, percent, thresholdText } from './summary.js';
import {
  cutStartToWidth,
  cutToWidth,
  displayWidth,
  escapeControls,
  padEndTo,
  padStartTo,
  previewOf,
  wrapToWidth,
} from './text-width.js';

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
}

/** What a piece of a line means; each meaning has one colour. */
export type Tone = 'plain' | 'removed' | 'kept' | 'protected' | 'note' | 'strong' | 'hunk' | 'bad' | 'good';

/** A piece of a line: visible text (already escaped) and its meaning. */
export interface Piece {
  readonly text: string;
  readonly tone?: Tone;
}

/** Colours a piece by its meaning. */
function paint(color: ChalkInstance, piece: Piece): string {
  switch (piece.tone) {
    case 'removed':
    case 'bad':
      return color.red(piece.text);
    case 'kept':
    case 'good':
      return color.green(piece.text);
    case 'protected':
      return color.dim(piece.text);
    case 'note':
      return color.yellow(piece.text);
    case 'strong':
      return color.bold(piece.text);
    case 'hunk':
      return color.cyan(piece.text);
    default:
      return piece.text;
  }
}

/**
 * Lays out one line: cuts its pieces to `width` columns (an ellipsis where cut), then colours them.
 * Trailing spaces are dropped so padding never shows as a coloured tail.
 */
export function emitLine(pieces: readonly Piece[], width: number, color: ChalkInstance): string {
  const out: Piece[] = [];
  let left = width;
  for (const piece of pieces) {
    if (left <= 0) break;
    const w = displayWidth(piece.text);
    if (w <= left) {
      out.push(piece);
      left -= w;
      continue;
    }
    out.push({ text: cutToWidth(piece.text, left), tone: piece.tone });
    break;
  }
  while (out.length > 0) {
    const last = out[out.length - 1] as Piece;
    let end = last.text.length;
    while (end > 0 && last.text.charCodeAt(end - 1) === 0x20) end--;
    const trimmed = last.text.slice(0, end);
    if (trimmed !== '') {
      out[out.length - 1] = { text: trimmed, tone: last.tone };
      break;
    }
    out.pop();
  }
  return out.map((p) => paint(color, p)).join('');
}

/** One table row: a group's marker, label, message range, size, cost and preview. */
export interface Row {
  readonly marker: string;
  readonly label: string;
  readonly range: string;
  readonly count: string;
  readonly tokens: string;
  /** Raw text, escaped and cut to what is left of the width. */
  readonly text: string;
  readonly tone: Tone;
}

/**
 * Lays out rows in aligned columns (widths measured in terminal columns, so CJK and emoji keep alignment).
 * @returns the lines, each at most `width` columns
 */
export function layoutRows(rows: readonly Row[], width: number, color: ChalkInstance): string[] {
  const w = (pick: (r: Row) => string): number => rows.reduce((m, r) => Math.max(m, displayWidth(pick(r))), 0);
  const label = w((r) => r.label);
  const range = w((r) => r.range);
  const count = w((r) => r.count);
  const tokens = w((r) => r.tokens);
  return rows.map((r) => {
    const fixed = `${r.marker} ${padEndTo(r.label, label)}  ${padEndTo(r.range, range)}  ${padStartTo(r.count, count)}  ${padStartTo(r.tokens, tokens)}  `;
    const left = width - displayWidth(fixed);
    const text = left > 0 ? previewOf(r.text, left) : '';
    return emitLine([{ text: fixed + text, tone: r.tone }], width, color);
  });
}

/** `1 msg`, `3 msgs`. */
export function countLabel(n: number): string {
  return `${formatCount(n)} msg${n === 1 ? '' : 's'}`;
}

/** `1,234 tok`, or `? tok` for a group the decision did not count. */
export function tokensLabel(tokens: number | null): string {
  return `${tokens === null ? '?' : formatCount(tokens)} tok`;
}

/** `#4`, or `#4-9` (inclusive) for several messages. */
export function rangeLabel(start: number, end: number): string {
  return end - start <= 1 ? `#${start}` : `#${start}-${end - 1}`;
}

/** The range column of a group held outside the message list (instructions in a request's `system`). */
export const OUTSIDE_LABEL = 'outside';

/** `2 turns`, `1 step`. */
function plural(n: number, word: string): string {
  return `${formatCount(n)} ${word}${n === 1 ? '' : 's'}`;
}

/** A message's text for a preview: its text parts, or what it carries instead. */
export function messageText(content: Content): string {
  const text = content.texts.join('\n');
  if (text.trim() !== '') return text;
  const extras: string[] = [];
  if (content.images > 0) extras.push(content.images === 1 ? '<image>' : `<${content.images} images>`);
  for (const f of content.files) extras.push(`<file: ${f ?? 'unnamed'}>`);
  return extras.join(' ');
}

/** Tool names in order of first call, repeated ones with a count: `search, read_file ×2`. */
export function toolNames(names: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const n of names) counts.set(n, (counts.get(n) ?? 0) + 1);
  return [...counts].map(([n, c]) => `${n === '' ? '(unnamed)' : n}${c > 1 ? ` ×${c}` : ''}`).join(', ');
}

/** A step's preview: the tools its assistant message calls, how many results came back, and its text. */
export function stepText(messages: readonly Message[], indices: readonly number[]): string {
  const first = indices[0];
  if (first === undefined) return '';
  const head = contentOf(messages[first] as Message);
  let results = 0;
  for (const i of indices) results += contentOf(messages[i] as Message).results.length;
  const calls = head.toolCalls.map((c) => c.name);
  const text = messageText(head).trim();
  const parts: string[] = [];
  if (calls.length > 0 || results > 0) {
    const names = calls.length > 0 ? toolNames(calls) : 'no call';
    parts.push(`${names} → ${results === 0 ? 'no result' : plural(results, 'result')}`);
  }
  if (text !== '') parts.push(text);
  return parts.length > 0 ? parts.join(' · ') : '(empty)';
}

/** The preview of a group: the opening message's text, or a step summary. */
export function groupText(messages: readonly Message[], group: Group): string {
  if (group.kind === 'step') return stepText(messages, group.indices);
  const first = group.indices[0];
  if (first === undefined) return '';
  const message = messages[first] as Message;
  const text = messageText(contentOf(message));
  if (group.kind === 'orphan') return `${message.role}: ${text === '' ? '(empty)' : text}`;
  return text === '' ? '(empty)' : text;
}

/** Labels groups `system`, `turn 3`, `task`, `step 2`, `orphan`, `note`, numbering turns and steps from 1. */
export function groupLabels(groups: readonly Group[]): string[] {
  let turn = 0;
  let step = 0;
  return groups.map((g) => (g.kind === 'turn' ? `turn ${++turn}` : g.kind === 'step' ? `step ${++step}` : g.kind));
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
      tokens: tokensLabel(g.tokens),
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

/**
 * Splits `cells` columns among parts in proportion to their tokens: each part ends at its cumulative share of
 * `scale`, rounded, so the bar is proportional as a whole and a boundary is never more than half a column off (a
 * part too small for half a column gets none; the legend still names it).
 * @returns the columns of each part; together at most `cells`
 */
export function allocate(tokens: readonly number[], scale: number, cells: number): number[] {
  if (scale <= 0 || cells <= 0) return tokens.map(() => 0);
  let sum = 0;
  let previous = 0;
  return tokens.map((t) => {
    sum += Math.max(t, 0);
    const boundary = Math.min(cells, Math.round((sum / scale) * cells));
    const columns = boundary - previous;
    previous = boundary;
    return columns;
  });
}

/** The column the target mark stands before: its true position, and when the target is met never inside the kept part. */
export function markColumn(target: number, scale: number, cells: number, keptColumns: number, met: boolean): number {
  const at = scale <= 0 ? 0 : Math.min(cells, Math.max(0, Math.round((target / scale) * cells)));
  return met ? Math.max(at, keptColumns) : at;
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

/** What pruning and offloading saved on the results the output keeps: their tokens before less their placeholders'. */
function shrunk(c: ConversationResult): { pruned: number; offloaded: number } {
  const saved = (list: readonly { tokensBefore: number; tokensAfter: number }[] | undefined): number =>
    (list ?? []).reduce((a, p) => a + Math.max(p.tokensBefore - p.tokensAfter, 0), 0);
  return { pruned: saved(c.pruned), offloaded: saved(c.offloaded) };
}

/**
 * The budget bar and its legend: what stays (protected, kept turns, kept steps, note) against the target, and what
 * goes: removed messages, and what pruning and offloading took out of the results that stay (`~`).
 */
function budgetLines(
  totals: PlanTotals,
  marker: BarMarker,
  met: boolean,
  width: number,
  color: ChalkInstance,
  saved = { pruned: 0, offloaded: 0 },
): string[] {
  const target = marker.at;
  const parts: BarPart[] = [
    { key: 'protected', char: '█', tone: 'protected', tokens: totals.protectedTokens ?? 0 },
    { key: 'turns', char: '▓', tone: 'kept', tokens: (totals.keptTurnTokens ?? 0) + (totals.keptOtherTokens ?? 0) },
    { key: 'steps', char: '▒', tone: 'kept', tokens: totals.keptStepTokens ?? 0 },
    { key: 'note', char: '▞', tone: 'note', tokens: totals.noteTokens ?? 0 },
    { key: 'removed', char: '░', tone: 'removed', tokens: totals.removed.tokens ?? 0 },
    { key: 'pruned', char: '~', tone: 'removed', tokens: saved.pruned },
    { key: 'offloaded', char: '~', tone: 'removed', tokens: saved.offloaded },
  ];
  const total = parts.reduce((a, p) => a + p.tokens, 0);
  const scale = Math.max(total, target);
  const prefix = 'budget [';
  const cells = Math.max(width - prefix.length - 2, 0);
  const columns = allocate(
    parts.map((p) => p.tokens),
    scale,
    cells,
  );
  // The kept parts are the first four; the rest is what goes.
  const kept = columns.slice(0, 4).reduce((a, b) => a + b, 0);
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
      legend.push([{ text: `${p.char} ${p.key} results −${formatCount(p.tokens)}`, tone: p.tone }]);
      continue;
    }
    legend.push([{ text: `${p.char} ${p.key} ${formatCount(p.tokens)}`, tone: p.tone }]);
  }
  legend.push([{ text: `│ ${marker.label}`, tone: 'strong' }]);
  return [emitLine(merge(pieces), width, color), ...flowItems(legend, width, color)];
}

/** Places items side by side, two spaces apart, starting a new line when the next one does not fit. */
export function flowItems(items: readonly (readonly Piece[])[], width: number, color: ChalkInstance): string[] {
  const lines: string[] = [];
  let line: Piece[] = [];
  let used = 0;
  for (const item of items) {
    const w = item.reduce((a, p) => a + displayWidth(p.text), 0);
    if (line.length > 0 && used + 2 + w > width) {
      lines.push(emitLine(line, width, color));
      line = [];
      used = 0;
    }
    if (line.length > 0) {
      line.push({ text: '  ' });
      used += 2;
    }
    line.push(...item);
    used += w;
  }
  if (line.length > 0) lines.push(emitLine(line, width, color));
  return lines;
}

/** Joins neighbouring pieces of the same tone, so a bar is a few colour codes, not one per column. */
function merge(pieces: readonly Piece[]): Piece[] {
  const out: Piece[] = [];
  for (const p of pieces) {
    const last = out[out.length - 1];
    if (last !== undefined && last.tone === p.tone) out[out.length - 1] = { text: last.text + p.text, tone: p.tone };
    else out.push(p);
  }
  return out;
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
    const r = totals.removed;
    const where = [plural(r.turns, 'turn'), plural(r.steps, 'step')];
    if (r.orphans > 0) where.push(plural(r.orphans, 'other message'));
    const tokens = r.tokens === null ? '' : ` (${formatCount(r.tokens)} tokens)`;
    const list =
      where.length === 2 ? where.join(' and ') : `${where.slice(0, -1).join(', ')} and ${where[where.length - 1]}`;
    first = `removed ${plural(r.messages, 'message')}${tokens} in ${list}`;
    const pruned = (c.pruned ?? []).reduce((a, p) => a + p.tools.length, 0);
    if (pruned > 0) {
      const saved = (c.pruned ?? []).reduce((a, p) => a + p.tokensBefore - p.tokensAfter, 0);
      const phrase = `pruned ${plural(pruned, 'tool result')} (${formatCount(saved)} tokens saved)`;
      first = r.messages === 0 ? phrase : `${first}; ${phrase}`;
    }
    const offloaded = (c.offloaded ?? []).reduce((a, p) => a + p.tools.length, 0);
    if (offloaded > 0) {
      const phrase = `offloaded ${plural(offloaded, 'tool result')} to the store`;
      first = r.messages === 0 && pruned === 0 ? phrase : `${first}; ${phrase}`;
    }
  }
  const tone: Tone = plan.targetMet ? 'good' : 'bad';
  const inventory = c.outcome.inventory;
  return [
    emitLine([{ text: first, tone: 'strong' }], width, view.color),
    ...summaryRoundLines(c, width, view),
    ...(inventory !== null && plan.changed ? inventoryLines(inventory, view, width) : []),
    ...wrapToWidth(verdict, width, '  ').map((l) => emitLine([{ text: l, tone }], width, view.color)),
  ];
}

/** What the kinds of identifiers are called, one and several. */
const KIND_NAMES: Readonly<Record<IdentifierKind, readonly [string, string]>> = {
  path: ['path', 'paths'],
  url: ['URL', 'URLs'],
  hash: ['hash', 'hashes'],
  uuid: ['UUID', 'UUIDs'],
  error: ['error', 'errors'],
  symbol: ['symbol', 'symbols'],
};

/** `3 paths`, `1 URL`. */
function kindCount(n: number, kind: IdentifierKind): string {
  const [one, many] = KIND_NAMES[kind];
  return `${formatCount(n)} ${n === 1 ? one : many}`;
}

/**
 * `forgets 12 identifiers: 7 paths (src/auth/login.ts, …), 3 URLs (https://a.example/x, …), 2 errors (ENOENT, TypeError);
 * 4 recoverable from the store`: each kind with its first identifier (both when there are two).
 */
export function forgetsText(inventory: Inventory): string {
  const { forgotten, recoverable } = inventory;
  const kinds: string[] = [];
  for (const kind of IDENTIFIER_KINDS) {
    const of = forgotten.filter((id) => id.kind === kind);
    if (of.length === 0) continue;
    const shown = of.slice(0, of.length === 2 ? 2 : 1).map((id) => escapeControls(id.value));
    kinds.push(`${kindCount(of.length, kind)} (${shown.join(', ')}${of.length > 2 ? ', …' : ''})`);
  }
  const head =
    forgotten.length === 0
      ? 'forgets no identifiers'
      : `forgets ${plural(forgotten.length, 'identifier')}: ${kinds.join(', ')}`;
  return recoverable.length === 0 ? head : `${head}; ${formatCount(recoverable.length)} recoverable from the store`;
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
      r.retention === null
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
    lines.push(...budgetLines(totals, barMarker(c, view.window), plan.targetMet, width, view.color, shrunk(c)));
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
            text: `removed ${plural(removed, 'message')}; target met in ${formatCount(met)} of ${formatCount(all.length)}`,
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
