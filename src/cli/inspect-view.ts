import type { ChalkInstance } from 'chalk';
import type { Group } from '../core/compact.js';
import type { GroupRow, InspectedConversation, Inspection } from '../outcome/inspection.js';
import type { ItemSpan } from '../outcome/outcome.js';
import {
  countLabel,
  emitLine,
  flowItems,
  groupLabels,
  groupText,
  layoutRows,
  OUTSIDE_LABEL,
  rangeLabel,
  tokensLabel,
  type Piece,
  type Row,
  type Tone,
} from './dry-run.js';
import { DOCUMENT_VERSION } from './plan-json.js';
import type { RecordError } from './report.js';
import { formatCount } from './summary.js';
import { cutStartToWidth, escapeControls, wrapToWidth } from './text-width.js';

/**
 * What `swc inspect` shows of what it found: the text of a file, its problem lines, its JSON document, and a run's
 * totals and document. Pure: inspections in, text and values out; the reporters (reporters.ts) write them.
 */

/** The summary items of one conversation: `instructions 1,251`, `7 turns 4,592`… */
function summaryItems(c: InspectedConversation): Piece[][] {
  const t = c.totals;
  const plural = (n: number, word: string): string => `${formatCount(n)} ${word}${n === 1 ? '' : 's'}`;
  const items: Piece[][] = [
    [{ text: `${plural(c.messageCount, 'message')}, ${formatCount(c.tokens)} tokens:`, tone: 'strong' }],
    [{ text: t.system.groups > 0 ? `instructions ${formatCount(t.system.tokens)}` : 'no instructions', tone: 'protected' }],
    [{ text: t.turns.groups > 0 ? `${plural(t.turns.groups, 'turn')} ${formatCount(t.turns.tokens)}` : 'no turns' }],
    [{ text: t.task.groups > 0 ? `task ${formatCount(t.task.tokens)}` : 'no task', tone: 'protected' }],
    [{ text: t.steps.groups > 0 ? `${plural(t.steps.groups, 'step')} ${formatCount(t.steps.tokens)}` : 'no steps' }],
  ];
  if (t.orphans.groups > 0) items.push([{ text: `${plural(t.orphans.groups, 'message')} in no group ${formatCount(t.orphans.tokens)}` }]);
  return items;
}

/** A group's range in the file's own items, as the dry run shows it (`outside` for instructions outside the list). */
function rangeOf(span: ItemSpan): string {
  return span.end === span.start ? OUTSIDE_LABEL : rangeLabel(span.start, span.end);
}

/** The table rows of one conversation; groups holding a problem are marked `!`. */
function inspectRows(c: InspectedConversation): Row[] {
  const troubled = new Set(c.problems.map((p) => p.message).filter((m): m is number => m !== null));
  const labels = groupLabels(c.groups);
  return c.groups.map((g, k) => {
    const bad = g.indices.some((i) => troubled.has(i));
    const isProtected = g.kind === 'system' || g.kind === 'task';
    const tone: Tone = bad ? 'bad' : isProtected ? 'protected' : 'plain';
    const row = c.rows[k] as GroupRow;
    return {
      marker: bad ? '!' : ' ',
      label: labels[k] as string,
      range: rangeOf(row.span),
      count: countLabel(row.messages),
      tokens: tokensLabel(g.tokens),
      text: groupText(c.messages, g),
      tone,
    };
  });
}

/**
 * The problem lines: `file:line:col  #message  kind` (never cut, so editors can jump to it), then the text,
 * wrapped to the width.
 */
function problemLines(file: string, c: InspectedConversation, width: number, color: ChalkInstance): string[] {
  if (c.problems.length === 0) {
    const note = c.pairingChecked ? '' : ` (tool pairing not checked: the ${c.format} format does not report call ids)`;
    return [color.green('no problems found') + note];
  }
  const lines = [color.red.bold(`${c.problems.length} problem${c.problems.length === 1 ? '' : 's'}:`)];
  for (const p of c.problems) {
    const at = `${escapeControls(file)}:${p.line}:${p.column}`;
    const message = p.message === null ? '' : `  #${p.message}`;
    lines.push(`  ${at}${message}  ${color.red(p.kind)}`);
    lines.push(...wrapToWidth(p.text, Math.max(width - 4, 20), '').map((l) => `    ${l}`));
  }
  return lines;
}

/** Adds lines one by one: a conversation can have more rows than a call takes arguments. */
function append(lines: string[], more: readonly string[]): void {
  for (const line of more) lines.push(line);
}

/**
 * The text of an inspection.
 * @param inspection what `inspectSource` found
 * @param view terminal width (table lines never exceed it; problem lines are never cut) and colour
 * @returns the text, ending with a newline
 */
export function renderInspect(inspection: Inspection, view: { width: number; color: ChalkInstance }): string {
  const width = Math.max(view.width, 1);
  const { color } = view;
  const title = 'inspect: ';
  const lines: string[] = [
    emitLine([{ text: title, tone: 'strong' }, { text: cutStartToWidth(inspection.file, width - title.length), tone: 'strong' }], width, color),
    ...flowItems(
      [`format ${inspection.format}`, `tokenizer ${inspection.tokenizer}`].map((text) => [{ text }]),
      width,
      color,
    ),
  ];
  const several = inspection.conversations.length > 1;
  inspection.conversations.forEach((c, k) => {
    lines.push('');
    if (several) {
      lines.push(
        emitLine(
          [{ text: `@@ conversation ${k + 1} of ${inspection.conversations.length} (${escapeControls(c.where)}) @@`, tone: 'hunk' }],
          width,
          color,
        ),
      );
    }
    append(lines, flowItems(summaryItems(c), width, color));
    if (c.groups.length > 0) append(lines, layoutRows(inspectRows(c), width, color));
    lines.push('');
    append(lines, problemLines(inspection.file, c, width, color));
  });
  if (several) {
    const problems = inspection.conversations.reduce((a, c) => a + c.problems.length, 0);
    const withProblems = inspection.conversations.filter((c) => c.problems.length > 0).length;
    const messages = inspection.conversations.reduce((a, c) => a + c.messageCount, 0);
    const tokens = inspection.conversations.reduce((a, c) => a + c.tokens, 0);
    lines.push('');
    lines.push(
      emitLine(
        [
          {
            text: `total: ${inspection.conversations.length} conversations, ${formatCount(messages)} messages, ${formatCount(tokens)} tokens; ${
              problems === 0
                ? 'no problems'
                : `${formatCount(problems)} problem${problems === 1 ? '' : 's'} in ${formatCount(withProblems)} conversation${withProblems === 1 ? '' : 's'}`
            }`,
            tone: problems === 0 ? 'good' : 'bad',
          },
        ],
        width,
        color,
      ),
    );
  }
  return `${lines.join('\n')}\n`;
}

/** A group as inspect's JSON lists it. */
function groupData(g: Group, row: GroupRow, conversation: number | null) {
  const { span } = row;
  return {
    kind: g.kind,
    start: span.start,
    end: span.end,
    messages: row.messages,
    tokens: g.tokens,
    ...(span.skip.length > 0 ? { skip: span.skip } : {}),
    ...(span.outside ? { outside: true } : {}),
    ...(conversation !== null ? { conversation } : {}),
  };
}

/**
 * The inspection as data (`--json`): totals, every group, every problem. A file of several conversations
 * tags groups and problems with `conversation` and lists each conversation's totals in `conversations`.
 */
export function inspectDocument(inspection: Inspection) {
  const several = inspection.conversations.length > 1;
  const tag = (k: number): { conversation: number } | Record<string, never> => (several ? { conversation: k } : {});
  const perConversation = inspection.conversations.map((c, k) => ({
    conversation: k,
    where: c.where,
    format: c.format,
    messages: c.messageCount,
    tokens: c.tokens,
    totals: c.totals,
    problems: c.problems.length,
    pairingChecked: c.pairingChecked,
  }));
  const only = perConversation[0];
  return {
    version: DOCUMENT_VERSION,
    file: inspection.file,
    format: inspection.format,
    tokenizer: inspection.tokenizer,
    messages: perConversation.reduce((a, c) => a + c.messages, 0),
    tokens: perConversation.reduce((a, c) => a + c.tokens, 0),
    ...(several || only === undefined ? {} : { totals: only.totals, pairingChecked: only.pairingChecked }),
    ok: inspection.conversations.every((c) => c.problems.length === 0),
    groups: inspection.conversations.flatMap((c, k) => c.groups.map((g, j) => groupData(g, c.rows[j] as GroupRow, several ? k : null))),
    problems: inspection.conversations.flatMap((c, k) => c.problems.map((p) => ({ ...p, ...tag(k) }))),
    ...(several ? { conversations: perConversation } : {}),
  };
}

/** The problems of an inspection, one line each: `file:line:col  #message  kind  text` (--quiet). */
export function renderProblems(inspection: Inspection, color: ChalkInstance): string {
  const lines: string[] = [];
  for (const c of inspection.conversations) {
    for (const p of c.problems) {
      const message = p.message === null ? '' : `  #${p.message}`;
      lines.push(`${escapeControls(inspection.file)}:${p.line}:${p.column}${message}  ${color.red(p.kind)}  ${escapeControls(p.text)}`);
    }
  }
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}

/** What a run of `swc inspect` found in each file: its inspection, or why it could not be read. */
export type Inspected = { readonly file: string; readonly inspection: Inspection } | { readonly file: string; readonly error: RecordError };

/** Totals of an inspect run: files, files that could not be read, problems, messages and tokens. */
export interface InspectTotals {
  readonly files: number;
  readonly failed: number;
  readonly problems: number;
  readonly messages: number;
  readonly tokens: number;
}

/** Adds up what a run found. */
export function inspectTotals(found: readonly Inspected[]): InspectTotals {
  let failed = 0;
  let problems = 0;
  let messages = 0;
  let tokens = 0;
  for (const f of found) {
    if (!('inspection' in f)) {
      failed++;
      continue;
    }
    for (const c of f.inspection.conversations) {
      problems += c.problems.length;
      messages += c.messageCount;
      tokens += c.tokens;
    }
  }
  return { files: found.length, failed, problems, messages, tokens };
}

/** `3 files, 2 problems, 12,345 tokens` (and `, 1 failed` when some file could not be read): the close of a run over several files. */
export function inspectTotalLine(totals: InspectTotals): string {
  const plural = (n: number, word: string): string => `${formatCount(n)} ${word}${n === 1 ? '' : 's'}`;
  const failed = totals.failed > 0 ? `, ${formatCount(totals.failed)} failed` : '';
  return `${plural(totals.files, 'file')}, ${plural(totals.problems, 'problem')}, ${plural(totals.tokens, 'token')}${failed}`;
}

/**
 * The one JSON document of an inspect run over several files (`--json`): the tokenizer, the totals and each file's
 * document in path order, a file that could not be read as `{file, error}`.
 */
export function inspectRunDocument(tokenizer: string, found: readonly Inspected[]) {
  return {
    version: DOCUMENT_VERSION,
    tokenizer,
    summary: inspectTotals(found),
    files: found.map((f) => ('inspection' in f ? inspectDocument(f.inspection) : { file: f.file, error: f.error })),
  };
}


/** Whether any conversation of an inspection has a problem. */
export function hasProblems(inspection: Inspection): boolean {
  return inspection.conversations.some((c) => c.problems.length > 0);
}
