import type { Group } from '../../core/compact.js';
import { IDENTIFIER_KINDS, type IdentifierKind } from '../../core/identifiers/index.js';
import { contentOf } from '../../core/render.js';
import type { Content, Message } from '../../core/types.js';
import type { Inventory } from '../../outcome/forgotten.js';
import { formatCount } from '../result-line.js';
import { escapeControls } from './text-width.js';

// The words views name things by: counts, token figures, message ranges, a message's or group's text in one line, and
// what a compaction forgets.

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
export function plural(n: number, word: string): string {
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

/**
 * A step's preview: the tools its assistant messages call (a step holds several when their calls are answered after
 * the last of them), how many results came back, and the first message's text.
 */
export function stepText(messages: readonly Message[], indices: readonly number[]): string {
  const first = indices[0];
  if (first === undefined) return '';
  const head = contentOf(messages[first] as Message);
  let results = 0;
  const calls: string[] = [];
  for (const i of indices) {
    const content = contentOf(messages[i] as Message);
    results += content.results.length;
    if ((messages[i] as Message).role === 'assistant') for (const c of content.toolCalls) calls.push(c.name);
  }
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

/** What the kinds of identifiers are called, one and several. */
export const KIND_NAMES: Readonly<Record<IdentifierKind, readonly [string, string]>> = {
  path: ['path', 'paths'],
  url: ['URL', 'URLs'],
  hash: ['hash', 'hashes'],
  uuid: ['UUID', 'UUIDs'],
  error: ['error', 'errors'],
  symbol: ['symbol', 'symbols'],
};

/** `3 paths`, `1 URL`. */
export function kindCount(n: number, kind: IdentifierKind): string {
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
