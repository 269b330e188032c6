import type { ChalkInstance } from 'chalk';
import type { Group } from '../../core/compact.js';
import { PROVIDER_NAMES, providerOf } from '../../lint/rules.js';
import type { Problem } from '../../lint/types.js';
import type { GroupRow, InspectedConversation, Inspection } from '../../outcome/inspection.js';
import type { ItemSpan } from '../../outcome/outcome.js';
import { countLabel, groupLabels, groupText, OUTSIDE_LABEL, rangeLabel, tokensLabel } from './labels.js';
import { emitLine, flowItems, layoutRows, type Piece, type Row, type Tone } from './layout.js';
import { DOCUMENT_VERSION } from '../plan-json.js';
import type { RecordError } from '../report.js';
import { formatCount } from '../result-line.js';
import { cutStartToWidth, escapeControls, wrapToWidth } from './text-width.js';

/**
 * What `swc inspect` shows of what it found: the text of a file, its problem lines, its JSON document, and a run's
 * totals and document. Pure: inspections in, text and values out; the reporters (reporters.ts) write them. Errors
 * (what the format's provider rejects) and warnings are counted apart everywhere: only errors fail a run.
 */

/** `1 error`, `3 warnings`. */
function plural(n: number, word: string): string {
  return `${formatCount(n)} ${word}${n === 1 ? '' : 's'}`;
}

/** How many of some problems are errors and how many warnings. */
function severityCounts(problems: readonly Problem[]): { errors: number; warnings: number } {
  let errors = 0;
  for (const p of problems) if (p.severity === 'error') errors++;
  return { errors, warnings: problems.length - errors };
}

/** `1 error, 2 warnings`, leaving out a count of none (both when `both`). */
function countsText(counts: { errors: number; warnings: number }, both = false): string {
  const parts: string[] = [];
  if (both || counts.errors > 0) parts.push(plural(counts.errors, 'error'));
  if (both || counts.warnings > 0) parts.push(plural(counts.warnings, 'warning'));
  return parts.join(', ');
}

/** The summary items of one conversation: `instructions 1,251`, `7 turns 4,592`… */
function summaryItems(c: InspectedConversation): Piece[][] {
  const t = c.totals;
  const items: Piece[][] = [
    [{ text: `${plural(c.messageCount, 'message')}, ${formatCount(c.tokens)} tokens:`, tone: 'strong' }],
    [
      {
        text: t.system.groups > 0 ? `instructions ${formatCount(t.system.tokens)}` : 'no instructions',
        tone: 'protected',
      },
    ],
    [{ text: t.turns.groups > 0 ? `${plural(t.turns.groups, 'turn')} ${formatCount(t.turns.tokens)}` : 'no turns' }],
    [{ text: t.task.groups > 0 ? `task ${formatCount(t.task.tokens)}` : 'no task', tone: 'protected' }],
    [{ text: t.steps.groups > 0 ? `${plural(t.steps.groups, 'step')} ${formatCount(t.steps.tokens)}` : 'no steps' }],
  ];
  if (t.orphans.groups > 0)
    items.push([{ text: `${plural(t.orphans.groups, 'message')} in no group ${formatCount(t.orphans.tokens)}` }]);
  return items;
}

/** A group's range in the file's own items, as the dry run shows it (`outside` for instructions outside the list). */
function rangeOf(span: ItemSpan): string {
  return span.end === span.start ? OUTSIDE_LABEL : rangeLabel(span.start, span.end);
}

/** The messages that hold a problem of one severity. */
function messagesWith(c: InspectedConversation, severity: Problem['severity']): Set<number> {
  return new Set(
    c.problems.filter((p) => p.severity === severity && p.message !== null).map((p) => p.message as number),
  );
}

/** The table rows of one conversation; groups holding an error are marked `!`, groups holding only warnings `?`. */
function inspectRows(c: InspectedConversation): Row[] {
  const withError = messagesWith(c, 'error');
  const withWarning = messagesWith(c, 'warning');
  const labels = groupLabels(c.groups);
  return c.groups.map((g, k) => {
    const bad = g.indices.some((i) => withError.has(i));
    const warned = !bad && g.indices.some((i) => withWarning.has(i));
    const isProtected = g.kind === 'system' || g.kind === 'task';
    const tone: Tone = bad ? 'bad' : warned ? 'note' : isProtected ? 'protected' : 'plain';
    const row = c.rows[k] as GroupRow;
    return {
      marker: bad ? '!' : warned ? '?' : ' ',
      label: labels[k] as string,
      range: rangeOf(row.span),
      count: countLabel(row.messages),
      tokens: tokensLabel(g.tokens),
      text: groupText(c.messages, g),
      tone,
    };
  });
}

/** Whom a conversation's warnings are accepted by, for the heading of its problems. */
function acceptedBy(c: InspectedConversation): string {
  const provider = providerOf(c.format);
  return provider === 'any' ? 'some providers' : PROVIDER_NAMES[provider];
}

/**
 * The problem lines: a heading that counts errors and warnings, then each problem as
 * `file:line:col  #message  kind` (a warning's kind followed by `(warning)`; never cut, so editors can jump to it) and
 * its text, wrapped to the width.
 */
function problemLines(file: string, c: InspectedConversation, width: number, color: ChalkInstance): string[] {
  if (c.problems.length === 0) {
    const note = c.pairingChecked ? '' : ` (tool pairing not checked: the ${c.format} format does not report call ids)`;
    return [color.green('no problems found') + note];
  }
  const counts = severityCounts(c.problems);
  const accepted =
    counts.warnings === 0 ? '' : ` (${counts.errors > 0 ? 'warnings: ' : ''}accepted by ${acceptedBy(c)})`;
  const heading = `${countsText(counts)}${accepted}:`;
  const lines = [counts.errors > 0 ? color.red.bold(heading) : color.yellow.bold(heading)];
  for (const p of c.problems) {
    const at = `${escapeControls(file)}:${p.line}:${p.column}`;
    const message = p.message === null ? '' : `  #${p.message}`;
    lines.push(
      `  ${at}${message}  ${p.severity === 'error' ? color.red(p.kind) : color.yellow(`${p.kind} (warning)`)}`,
    );
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
    emitLine(
      [
        { text: title, tone: 'strong' },
        { text: cutStartToWidth(inspection.file, width - title.length), tone: 'strong' },
      ],
      width,
      color,
    ),
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
          [
            {
              text: `@@ conversation ${k + 1} of ${inspection.conversations.length} (${escapeControls(c.where)}) @@`,
              tone: 'hunk',
            },
          ],
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
    const counts = severityCounts(inspection.conversations.flatMap((c) => c.problems));
    const withProblems = inspection.conversations.filter((c) => c.problems.length > 0).length;
    const messages = inspection.conversations.reduce((a, c) => a + c.messageCount, 0);
    const tokens = inspection.conversations.reduce((a, c) => a + c.tokens, 0);
    const found =
      counts.errors + counts.warnings === 0
        ? 'no problems'
        : `${countsText(counts)} in ${plural(withProblems, 'conversation')}`;
    const tone: Tone = counts.errors > 0 ? 'bad' : counts.warnings > 0 ? 'note' : 'good';
    lines.push('');
    lines.push(
      emitLine(
        [
          {
            text: `total: ${inspection.conversations.length} conversations, ${formatCount(messages)} messages, ${formatCount(tokens)} tokens; ${found}`,
            tone,
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
 * The inspection as data (`--json`): totals, every group, every problem with its severity; `ok` when none is an
 * error. A file of several conversations tags groups and problems with `conversation` and lists each conversation's
 * totals in `conversations`.
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
    ...severityCounts(c.problems),
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
    ok: !hasErrors(inspection),
    groups: inspection.conversations.flatMap((c, k) =>
      c.groups.map((g, j) => groupData(g, c.rows[j] as GroupRow, several ? k : null)),
    ),
    problems: inspection.conversations.flatMap((c, k) => c.problems.map((p) => ({ ...p, ...tag(k) }))),
    ...(several ? { conversations: perConversation } : {}),
  };
}

/** The errors of an inspection, one line each: `file:line:col  #message  kind  text` (--quiet: what fails the run). */
export function renderProblems(inspection: Inspection, color: ChalkInstance): string {
  const lines: string[] = [];
  for (const c of inspection.conversations) {
    for (const p of c.problems) {
      if (p.severity !== 'error') continue;
      const message = p.message === null ? '' : `  #${p.message}`;
      lines.push(
        `${escapeControls(inspection.file)}:${p.line}:${p.column}${message}  ${color.red(p.kind)}  ${escapeControls(p.text)}`,
      );
    }
  }
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}

/** What a run of `swc inspect` found in each file: its inspection, or why it could not be read. */
export type Inspected =
  { readonly file: string; readonly inspection: Inspection } | { readonly file: string; readonly error: RecordError };

/** Totals of an inspect run: files, files that could not be read, problems (errors and warnings), messages and tokens. */
export interface InspectTotals {
  readonly files: number;
  readonly failed: number;
  readonly problems: number;
  readonly errors: number;
  readonly warnings: number;
  readonly messages: number;
  readonly tokens: number;
}

/** Adds up what a run found. */
export function inspectTotals(found: readonly Inspected[]): InspectTotals {
  let failed = 0;
  let errors = 0;
  let warnings = 0;
  let messages = 0;
  let tokens = 0;
  for (const f of found) {
    if (!('inspection' in f)) {
      failed++;
      continue;
    }
    for (const c of f.inspection.conversations) {
      const counts = severityCounts(c.problems);
      errors += counts.errors;
      warnings += counts.warnings;
      messages += c.messageCount;
      tokens += c.tokens;
    }
  }
  return { files: found.length, failed, problems: errors + warnings, errors, warnings, messages, tokens };
}

/**
 * `3 files, 2 errors, 5 warnings, 12,345 tokens` (and `, 1 failed` when some file could not be read, `, 2 skipped`
 * when --skip-unrecognized left some out): the close of a run over several files.
 */
export function inspectTotalLine(totals: InspectTotals, skipped = 0): string {
  const failed = totals.failed > 0 ? `, ${formatCount(totals.failed)} failed` : '';
  const left = skipped > 0 ? `, ${formatCount(skipped)} skipped` : '';
  return `${plural(totals.files, 'file')}, ${countsText(totals, true)}, ${plural(totals.tokens, 'token')}${failed}${left}`;
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

/** Whether any conversation of an inspection has an error: what its provider rejects, which fails the run. */
export function hasErrors(inspection: Inspection): boolean {
  return inspection.conversations.some((c) => c.problems.some((p) => p.severity === 'error'));
}
