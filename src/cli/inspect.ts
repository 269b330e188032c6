import type { ChalkInstance } from 'chalk';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { planCompaction, noteTemplate, type Group, type GroupKind } from '../core/compact.js';
import { contentOf } from '../core/render.js';
import type { Message, TokenCounter } from '../core/types.js';
import { InputError, UsageError } from '../errors.js';
import type { FormatAdapter, Normalized, Pairing } from '../formats/types.js';
import { readLayout, type Slot } from '../io/layout.js';
import { describeFsError, readStdin } from '../io/files.js';
import { decodeSource, lineColumn, type SourceText } from '../io/source.js';
import { chooseFormat, normalizeSlot } from '../pipeline.js';
import { createCounter, isTokenizerName, TOKENIZERS } from '../tokens/index.js';
import { colorFor } from './color.js';
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
import { EXIT } from './exit-codes.js';
import { writeAll, type CliIo } from './io.js';
import { countOf, itemSpan } from '../outcome/outcome.js';
import { formatCount } from './summary.js';
import { cutStartToWidth, escapeControls, wrapToWidth } from './text-width.js';

/**
 * `swc inspect`: the structure and token cost of a transcript, and the problems a provider would reject it for.
 * Reading and checking are separate from printing: `inspectSource` builds the data, `renderInspect` and
 * `inspectDocument` show it.
 */

/** The kinds of problem inspect finds. */
export type ProblemKind = 'missing-result' | 'orphan-result' | 'duplicate-id' | 'empty-assistant' | 'unknown-role' | 'format';

/** A problem at one item of the file. */
export interface Problem {
  readonly kind: ProblemKind;
  /** The item of the conversation's list (0-based): a message, or for some formats one line of it. */
  readonly item: number;
  /** The message it belongs to (0-based, as in the groups), or null for an item that is no message. */
  readonly message: number | null;
  readonly line: number;
  readonly column: number;
  readonly text: string;
}

/** A problem before it is located in the file. */
export interface Finding {
  readonly kind: ProblemKind;
  readonly item: number;
  readonly text: string;
}

/**
 * Checks tool pairing in the terms every provider shares: each call needs a result in the tool messages right
 * after the message that makes it (or in that message itself), each result needs such a call, and call ids
 * are unique. Calls and results without ids pair by tool name, in order. An adapter may name the unit a call
 * and its results share (`turn`) where that is not the normalized message, and may let results without ids
 * answer calls with ids (`idsOptional`).
 * @param pairing the calls and results an adapter found, by item
 * @param messageOf the message an item belongs to, or null
 * @param messages the normalized messages (for their roles)
 * @param lineOf the line an item starts on, to point from one problem at the other item
 */
export function checkPairing(
  pairing: Pairing,
  messageOf: (item: number) => number | null,
  messages: readonly Message[],
  lineOf: (item: number) => number,
): Finding[] {
  const findings: Finding[] = [];
  /** The message a tool message answers: the nearest earlier message that is not a tool message. */
  const headOf = (m: number | null): number | null => {
    if (m === null) return null;
    let k = m;
    while (k >= 0 && messages[k]?.role === 'tool') k--;
    return k >= 0 ? k : null;
  };
  const calls = pairing.calls.map((c) => ({ ...c, home: messageOf(c.item), answered: false }));
  const byId = new Map<string, (typeof calls)[number]>();
  for (const call of calls) {
    if (call.id === null) continue;
    const first = byId.get(call.id);
    if (first === undefined) byId.set(call.id, call);
    else {
      findings.push({
        kind: 'duplicate-id',
        item: call.item,
        text: `call id ${JSON.stringify(call.id)} (${nameOf(call.name)}) is already used by the call on line ${lineOf(first.item)}`,
      });
    }
  }
  for (const result of pairing.results) {
    const head = headOf(messageOf(result.item));
    const match = calls.find(
      (c) =>
        !c.answered &&
        isSameTurn(c, result, head) &&
        c.item <= result.item &&
        (result.id !== null ? c.id === result.id : (c.id === null || pairing.idsOptional === true) && (result.name === '' || c.name === result.name)),
    );
    if (match !== undefined) {
      match.answered = true;
      continue;
    }
    if (result.id === null) {
      findings.push({ kind: 'orphan-result', item: result.item, text: `result of ${nameOf(result.name)} (no call id) answers no call right before it` });
      continue;
    }
    const elsewhere = calls.filter((c) => c.id === result.id);
    const id = JSON.stringify(result.id);
    let text: string;
    if (elsewhere.length === 0) text = `result for call id ${id} answers no call`;
    else if (elsewhere.every((c) => c.answered)) text = `result for call id ${id} repeats a result the call already has`;
    else text = `result for call id ${id} is not right after its call (line ${lineOf((elsewhere[0] as (typeof calls)[number]).item)})`;
    findings.push({ kind: 'orphan-result', item: result.item, text });
  }
  for (const call of calls) {
    if (call.answered) continue;
    const id = call.id === null ? 'without an id' : JSON.stringify(call.id);
    const later = call.id !== null && pairing.results.some((r) => r.id === call.id);
    findings.push({
      kind: 'missing-result',
      item: call.item,
      text: `tool call ${id} (${nameOf(call.name)}) has no result${later ? ' right after it' : ''}`,
    });
  }
  return findings;
}

/**
 * Whether a result sits where its call's answers belong: by the adapter's own `turn` when either side names one,
 * else in the tool messages right after the call's message (`head`) or in that message itself.
 */
function isSameTurn(call: { home: number | null; turn?: string }, result: { turn?: string }, head: number | null): boolean {
  if (call.turn !== undefined || result.turn !== undefined) return call.turn === result.turn;
  return call.home !== null && call.home === head;
}

function nameOf(name: string): string {
  return name === '' ? 'unnamed tool' : name;
}

/** Whether an assistant message carries nothing a provider accepts: no text, tool call, image or file. */
export function isEmptyAssistant(message: Message): boolean {
  if (message.role !== 'assistant') return false;
  const c = contentOf(message);
  return c.toolCalls.length === 0 && c.images === 0 && c.files.length === 0 && c.texts.every((t) => t.trim() === '');
}

/** Format-independent checks of the messages themselves. */
export function checkMessages(messages: readonly Message[]): { kind: ProblemKind; message: number; text: string }[] {
  const out: { kind: ProblemKind; message: number; text: string }[] = [];
  messages.forEach((m, i) => {
    if (isEmptyAssistant(m)) out.push({ kind: 'empty-assistant', message: i, text: 'assistant message has nothing in it (no text, tool call, image or file)' });
  });
  return out;
}

/** One conversation as inspect sees it. */
export interface InspectedConversation {
  readonly where: string;
  readonly format: string;
  readonly messages: readonly Message[];
  /** The file items each message stands for: ranges and counts are in the file's own terms, as in the dry run. */
  readonly itemsOf: Normalized['itemsOf'];
  /** Every group in conversation order, each counted. */
  readonly groups: readonly Group[];
  readonly tokens: number;
  readonly problems: readonly Problem[];
  /** False when the format cannot report call ids, so pairing was not checked. */
  readonly pairingChecked: boolean;
}

/** One file as inspect sees it. */
export interface Inspection {
  readonly file: string;
  readonly format: string;
  readonly tokenizer: string;
  readonly conversations: readonly InspectedConversation[];
}

/** A slot without the items that are no messages of a known role, and where each remaining item came from. */
function withoutItems(slot: Slot, drop: ReadonlySet<number>): { slot: Slot; original: number[] } {
  if (drop.size === 0) return { slot, original: slot.items.map((_, k) => k) };
  const original = slot.items.map((_, k) => k).filter((k) => !drop.has(k));
  return {
    slot: {
      ...slot,
      items: original.map((k) => slot.items[k]),
      raws: original.map((k) => slot.raws[k] as string),
      offsets: original.map((k) => slot.offsets[k] as number),
    },
    original,
  };
}

/** Inspects one slot: normalizes it (leaving out items of unknown role), counts every group, checks it. */
function inspectSlot(source: SourceText, slot: Slot, adapter: FormatAdapter, counter: TokenCounter): InspectedConversation {
  const template = noteTemplate(undefined);
  const locate = (item: number): { line: number; column: number } => lineColumn(source.text, slot.offsets[item] ?? 0);
  const pairing =
    adapter.pairing?.({
      file: source.file,
      items: slot.items,
      raws: slot.raws,
      container: slot.container,
      fail(item, reason): never {
        const { line, column } = locate(item);
        throw new InputError(`message ${item + 1}: ${reason}`, source.file, line, column);
      },
    }) ?? null;
  const unknown = pairing?.unknownRoles ?? [];
  const { slot: known, original } = withoutItems(slot, new Set(unknown.map((u) => u.item)));
  const normalized: Normalized = normalizeSlot(source, known, adapter, template);
  const messageOfItem = new Map<number, number>();
  normalized.itemsOf.forEach((items, m) => {
    for (const item of items) messageOfItem.set(original[item] as number, m);
  });
  const messageOf = (item: number): number | null => messageOfItem.get(item) ?? null;
  const firstItemOf = (m: number): number | null => {
    const item = normalized.itemsOf[m]?.[0];
    return item === undefined ? null : (original[item] as number);
  };
  const plan = planCompaction(normalized.messages, counter, { target: Number.MAX_SAFE_INTEGER, exhaustive: true, note: null });
  const findings: Finding[] = [];
  for (const u of unknown) {
    findings.push({
      kind: 'unknown-role',
      item: u.item,
      text: u.role === null ? 'not a message with a role (left out of the structure above)' : `unknown role ${JSON.stringify(u.role)} (left out of the structure above)`,
    });
  }
  if (pairing !== null) {
    findings.push(...checkPairing(pairing, messageOf, normalized.messages, (item) => locate(item).line));
    for (const p of pairing.problems ?? []) findings.push({ kind: 'format', item: p.item, text: p.text });
  }
  const problems: Problem[] = findings.map((f) => ({ ...f, message: messageOf(f.item), ...locate(f.item) }));
  for (const p of checkMessages(normalized.messages)) {
    const item = firstItemOf(p.message);
    const at = item === null ? { line: 1, column: 1 } : locate(item);
    problems.push({ kind: p.kind, item: item ?? -1, message: p.message, ...at, text: p.text });
  }
  problems.sort((a, b) => a.line - b.line || a.column - b.column || a.kind.localeCompare(b.kind));
  return {
    where: slot.where,
    format: adapter.name,
    messages: normalized.messages,
    itemsOf: normalized.itemsOf,
    groups: plan.groups,
    tokens: plan.tokensBefore,
    problems,
    pairingChecked: pairing !== null,
  };
}

/**
 * Reads a decoded file's structure and problems.
 * @param source the decoded input
 * @param options the format (`auto` or a name), the token counter, and the key records hold their conversation under
 * @throws InputError when the file cannot be laid out or placed in a format
 */
export function inspectSource(source: SourceText, options: { format: string; counter: TokenCounter; conversationKey?: string | undefined }): Inspection {
  const layout = readLayout(source, undefined, { conversationKey: options.conversationKey });
  const conversations: InspectedConversation[] = [];
  let previous: FormatAdapter | null = null;
  for (const slot of layout.slots) {
    const adapter: FormatAdapter =
      slot.items.length === 0 && previous !== null ? previous : chooseFormat(slot, options.format, source.file);
    previous = adapter;
    conversations.push(inspectSlot(source, slot, adapter, options.counter));
  }
  const formats = [...new Set(conversations.map((c) => c.format))];
  return { file: source.file, format: formats.join(', '), tokenizer: options.counter.name, conversations };
}

/** Messages and tokens per kind of group. */
interface KindTotals {
  readonly groups: number;
  readonly messages: number;
  readonly tokens: number;
}

function totalsOf(messages: readonly Message[], groups: readonly Group[], kind: GroupKind, itemsOf?: Normalized['itemsOf']): KindTotals {
  const of = groups.filter((g) => g.kind === kind);
  return {
    groups: of.length,
    messages: of.reduce((a, g) => a + countOf(messages, g.indices, itemsOf), 0),
    tokens: of.reduce((a, g) => a + (g.tokens ?? 0), 0),
  };
}

/** How a conversation's tokens split among its kinds of groups. */
export function conversationTotals(
  messages: readonly Message[],
  groups: readonly Group[],
  itemsOf?: Normalized['itemsOf'],
): Record<'system' | 'turns' | 'task' | 'steps' | 'orphans', KindTotals> {
  return {
    system: totalsOf(messages, groups, 'system', itemsOf),
    turns: totalsOf(messages, groups, 'turn', itemsOf),
    task: totalsOf(messages, groups, 'task', itemsOf),
    steps: totalsOf(messages, groups, 'step', itemsOf),
    orphans: totalsOf(messages, groups, 'orphan', itemsOf),
  };
}

/** How many messages a conversation has, in the file's own count. */
function messageCount(c: InspectedConversation): number {
  return c.messages.reduce((a, m) => a + (m.weight ?? 1), 0);
}

/** The summary items of one conversation: `instructions 1,251`, `7 turns 4,592`… */
function summaryItems(c: InspectedConversation): Piece[][] {
  const t = conversationTotals(c.messages, c.groups, c.itemsOf);
  const plural = (n: number, word: string): string => `${formatCount(n)} ${word}${n === 1 ? '' : 's'}`;
  const items: Piece[][] = [
    [{ text: `${plural(messageCount(c), 'message')}, ${formatCount(c.tokens)} tokens:`, tone: 'strong' }],
    [{ text: t.system.groups > 0 ? `instructions ${formatCount(t.system.tokens)}` : 'no instructions', tone: 'protected' }],
    [{ text: t.turns.groups > 0 ? `${plural(t.turns.groups, 'turn')} ${formatCount(t.turns.tokens)}` : 'no turns' }],
    [{ text: t.task.groups > 0 ? `task ${formatCount(t.task.tokens)}` : 'no task', tone: 'protected' }],
    [{ text: t.steps.groups > 0 ? `${plural(t.steps.groups, 'step')} ${formatCount(t.steps.tokens)}` : 'no steps' }],
  ];
  if (t.orphans.groups > 0) items.push([{ text: `${plural(t.orphans.groups, 'message')} in no group ${formatCount(t.orphans.tokens)}` }]);
  return items;
}

/** A group's range in the file's own items, as the dry run shows it (`outside` for instructions outside the list). */
function rangeOf(itemsOf: Normalized['itemsOf'], g: Group): string {
  const span = itemSpan(itemsOf, g);
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
    return {
      marker: bad ? '!' : ' ',
      label: labels[k] as string,
      range: rangeOf(c.itemsOf, g),
      count: countLabel(countOf(c.messages, g.indices, c.itemsOf)),
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
    lines.push(...flowItems(summaryItems(c), width, color));
    if (c.groups.length > 0) lines.push(...layoutRows(inspectRows(c), width, color));
    lines.push('', ...problemLines(inspection.file, c, width, color));
  });
  if (several) {
    const problems = inspection.conversations.reduce((a, c) => a + c.problems.length, 0);
    const withProblems = inspection.conversations.filter((c) => c.problems.length > 0).length;
    const messages = inspection.conversations.reduce((a, c) => a + messageCount(c), 0);
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
function groupData(c: InspectedConversation, g: Group, conversation: number | null) {
  const span = itemSpan(c.itemsOf, g);
  return {
    kind: g.kind,
    start: span.start,
    end: span.end,
    messages: countOf(c.messages, g.indices, c.itemsOf),
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
    messages: messageCount(c),
    tokens: c.tokens,
    totals: conversationTotals(c.messages, c.groups, c.itemsOf),
    problems: c.problems.length,
    pairingChecked: c.pairingChecked,
  }));
  const only = perConversation[0];
  return {
    file: inspection.file,
    format: inspection.format,
    tokenizer: inspection.tokenizer,
    messages: perConversation.reduce((a, c) => a + c.messages, 0),
    tokens: perConversation.reduce((a, c) => a + c.tokens, 0),
    ...(several || only === undefined ? {} : { totals: only.totals, pairingChecked: only.pairingChecked }),
    ok: inspection.conversations.every((c) => c.problems.length === 0),
    groups: inspection.conversations.flatMap((c, k) => c.groups.map((g) => groupData(c, g, several ? k : null))),
    problems: inspection.conversations.flatMap((c, k) => c.problems.map((p) => ({ ...p, ...tag(k) }))),
    ...(several ? { conversations: perConversation } : {}),
  };
}

/** Options of `swc inspect` as commander hands them over. */
export interface InspectFlags {
  tokenizer?: string;
  format?: string;
  conversationKey?: string;
  json?: boolean;
  ignore?: string[];
  quiet?: boolean;
  color?: boolean;
  debug?: boolean;
}

/** Reads a file (or, for -, standard input) as bytes. */
async function readBytes(file: string, shown: string, io: CliIo): Promise<Uint8Array> {
  if (file === '-') return readStdin(io.stdin);
  try {
    return await fs.readFile(file);
  } catch (error) {
    throw new InputError(`cannot read: ${describeFsError(error)}`, shown);
  }
}

/** One file to inspect: where it is, and the name to show for it. */
interface Target {
  readonly file: string;
  readonly shown: string;
}

/**
 * The files the inputs stand for, expanded as `swc compact` expands them (directories, glob patterns,
 * `--ignore`), sorted; a file named outright keeps the name it was typed with.
 */
async function findTargets(inputs: readonly string[], flags: InspectFlags, io: CliIo): Promise<Target[]> {
  if (inputs.includes('-')) {
    if (inputs.length > 1) throw new UsageError('- (standard input) cannot be mixed with other inputs');
    if ((flags.ignore ?? []).length > 0) throw new UsageError('--ignore needs files; standard input is a single stream');
    return [{ file: '-', shown: '<stdin>' }];
  }
  // Loaded here, not at the top: every command imports this module, and fast-glob is slow to load.
  const { expandInputs } = await import('../io/expand.js');
  const { files } = await expandInputs(inputs, { cwd: io.cwd, ignore: flags.ignore ?? [] });
  const typed = new Map(inputs.map((input) => [path.resolve(io.cwd, input), input]));
  return files.map((f) => ({ file: f.absolute, shown: typed.get(f.absolute) ?? f.display }));
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

/** Exit codes of inspect. */

/**
 * Runs `swc inspect` over its inputs.
 * @param inputs files, directories and quoted glob patterns, or - for standard input
 * @returns 0 when no problem was found, 1 when some were, 2 when an input could not be read (the highest wins)
 * @throws UsageError for a bad flag, or an input that matches no file
 */
export async function runInspect(inputs: readonly string[], flags: InspectFlags, io: CliIo, report: (line: string) => void): Promise<number> {
  const tokenizer = flags.tokenizer ?? 'o200k_base';
  if (!isTokenizerName(tokenizer)) throw new UsageError(`unknown tokenizer "${tokenizer}" (choose one of: ${TOKENIZERS.join(', ')})`);
  if (inputs.length === 0) throw new UsageError('no input given (a file path, or - for standard input)');
  const targets = await findTargets(inputs, flags, io);
  const counter = await createCounter(tokenizer);
  // Commander sets `color` to true unless --no-color is given: only `false` is a request.
  const color = colorFor(io.stdout, io.env, flags.color === false ? false : undefined);
  const width = io.stdout.isTTY && typeof io.stdout.columns === 'number' && io.stdout.columns > 0 ? io.stdout.columns : 80;
  const quiet = flags.quiet === true;
  let code: number = EXIT.ok;
  let shown = 0;
  for (const target of targets) {
    let inspection: Inspection;
    try {
      const bytes = await readBytes(target.file, target.shown, io);
      const source = decodeSource(bytes, target.shown);
      inspection = inspectSource(source, { format: flags.format ?? 'auto', counter, conversationKey: flags.conversationKey });
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      report(`swc: ${error.message}`);
      code = EXIT.error;
      continue;
    }
    const troubled = inspection.conversations.some((c) => c.problems.length > 0);
    if (troubled) code = Math.max(code, EXIT.problems);
    if (quiet && !troubled) continue;
    let out: string;
    if (flags.json) out = `${JSON.stringify(inspectDocument(inspection), null, targets.length > 1 ? undefined : 2)}\n`;
    else if (quiet) out = renderProblems(inspection, color);
    // Texts of several files are a blank line apart; JSON and problem lines are one line per document or problem.
    else out = shown > 0 ? `\n${renderInspect(inspection, { width, color })}` : renderInspect(inspection, { width, color });
    await writeAll(io.stdout, out);
    shown++;
  }
  return code;
}
