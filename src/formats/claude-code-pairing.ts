/** `swc inspect`'s view of a Claude Code session: its tool calls and results with their ids. */
import { blockPairing, serverResultIds } from './anthropic.js';
import { blocksOf, hasToolResult, isLine, isMessageLine, messageKey, stringField } from './claude-code-lines.js';
import { own, type ConversationInput, type PairedCall, type PairedResult, type Pairing } from './types.js';

/**
 * The sub-agent message a sidechain line's calls or results belong to, as a pairing `turn`: an assistant
 * line's own message; for a user line, the assistant line up its `parentUuid` chain, passing only lines
 * holding other results and lines that are no messages. Results whose chain reaches anything else (a prompt,
 * the main chain, a missing parent) get a turn of their own, which no call has.
 */
function sidechainTurn(items: readonly unknown[], k: number, indexOf: ReadonlyMap<string, number>): string {
  const line = items[k] as Record<string, unknown>;
  if (own(line, 'type') === 'assistant') return `side ${messageKey(line, k)}`;
  const seen = new Set<number>();
  let parent = stringField(line, 'parentUuid');
  while (parent !== null) {
    const p = indexOf.get(parent);
    if (p === undefined || seen.has(p)) break;
    seen.add(p);
    const above = items[p] as Record<string, unknown>;
    if (isMessageLine(above)) {
      if (own(above, 'isSidechain') !== true) break;
      if (own(above, 'type') === 'assistant') return `side ${messageKey(above, p)}`;
      if (!hasToolResult(above)) break;
    }
    parent = stringField(above, 'parentUuid');
  }
  return `side result at line ${k}`;
}

/**
 * Tool calls and results with their ids, and lines that are no events, for `swc inspect`. Main-chain lines
 * pair as `normalize` groups them (split assistant lines are one message, attached lines sit in it);
 * sidechain lines pair among themselves along their `parentUuid` chain. A server tool call left unanswered
 * in the session's last message is still running and left out.
 */
export function claudeCodePairing(input: ConversationInput): Pairing {
  const { items } = input;
  const calls: PairedCall[] = [];
  const results: PairedResult[] = [];
  const problems: { item: number; text: string }[] = [];
  const unknownRoles: { item: number; role: string | null }[] = [];
  const indexOf = new Map<string, number>();
  const answered = new Set<string | null>();
  items.forEach((item, k) => {
    const uuid = stringField(item, 'uuid');
    if (uuid !== null && !indexOf.has(uuid)) indexOf.set(uuid, k);
    const blocks = isMessageLine(item) ? blocksOf(item) : null;
    if (Array.isArray(blocks)) for (const id of serverResultIds(blocks)) answered.add(id);
  });
  // The session's last message: the trailing message lines that share one assistant message id.
  let lastStart = items.length;
  let lastKey: string | null = null;
  for (let k = items.length - 1; k >= 0; k--) {
    const item = items[k];
    if (!isMessageLine(item)) continue;
    const key = own(item, 'type') === 'assistant' ? messageKey(item, k) : `line ${k}`;
    if (lastKey !== null && key !== lastKey) break;
    lastKey = key;
    lastStart = k;
  }
  items.forEach((item, k) => {
    if (!isLine(item)) {
      unknownRoles.push({ item: k, role: null });
      return;
    }
    const blocks = isMessageLine(item) ? blocksOf(item) : null;
    if (!Array.isArray(blocks)) return;
    const side = own(item, 'isSidechain') === true;
    const found = blockPairing(
      blocks,
      own(item, 'type') as 'user' | 'assistant',
      k,
      (id) => k >= lastStart && !answered.has(id),
      side ? sidechainTurn(items, k, indexOf) : undefined,
    );
    calls.push(...found.calls);
    results.push(...found.results);
    problems.push(...found.problems);
  });
  return { calls, results, unknownRoles, problems };
}
