import type { Message } from '../core/types.js';
import type { PairedCall, Pairing } from '../formats/types.js';
import type { Finding } from './types.js';

/**
 * Tool pairing in the terms every provider shares: each call needs a result in the tool messages right after the
 * message that makes it (or in that message itself), each result needs such a call, and call ids are unique. Each
 * finding names the rule it breaks, which tells how far providers differ on it (rules.ts): an id used again in a
 * later message is not one used twice in one message, a result elsewhere is not a result missing.
 * Pure: the calls and results come from a format adapter, and where an item is in the file from the caller.
 */

/** A call while results are matched to it: the message it is made in, and whether a result answered it. */
interface OpenCall extends PairedCall {
  readonly home: number | null;
  answered: boolean;
}

/**
 * Checks tool pairing. Calls and results without ids pair by tool name, in order. An adapter may name the unit a
 * call and its results share (`turn`) where that is not the normalized message, and may let results without ids
 * answer calls with ids (`idsOptional`). A result answers the first call, in the adapter's order, that is still
 * open, in its unit, not after it, and of its id (or name); calls are looked up by unit and id, so a conversation
 * of a million calls is checked in one pass.
 * @param pairing the calls and results an adapter found, by item
 * @param messageOf the message an item belongs to, or null
 * @param messages the normalized messages (for their roles)
 * @param lineOf the line an item starts on, to point from one problem at the other item
 * @returns the findings: duplicate ids in call order, then results that answer nothing, then calls left without a result
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
  const calls: OpenCall[] = pairing.calls.map((c) => ({ ...c, home: messageOf(c.item), answered: false }));
  // Where results look for their calls, each list in the adapter's order: by the adapter's unit, by the message
  // that makes them (calls without a unit), and by id.
  const byTurn = new Map<string, OpenCall[]>();
  const byHome = new Map<number, OpenCall[]>();
  const byId = new Map<string, OpenCall[]>();
  for (const call of calls) {
    if (call.turn !== undefined) listIn(byTurn, call.turn).push(call);
    else if (call.home !== null) listIn(byHome, call.home).push(call);
    if (call.id === null) continue;
    const same = listIn(byId, call.id);
    const first = same[0];
    same.push(call);
    if (first !== undefined) {
      findings.push({
        kind: 'duplicate-id',
        rule: same.some((c) => c !== call && isSameUnit(c, call)) ? 'shared-id' : 'reused-id',
        item: call.item,
        text: `call id ${JSON.stringify(call.id)} (${nameOf(call.name)}) is already used by the call on line ${lineOf(first.item)}`,
      });
    }
  }
  // Ids of results that answered no call: a call of that id left unanswered has its result in the wrong place.
  const strayIds = new Set<string>();
  for (const result of pairing.results) {
    // Its unit: the adapter's turn when it names one (only calls of that turn answer it), else the nearest message at
    // or before its own that is not a tool message (calls made there without a turn).
    const head = result.turn === undefined ? headOf(messageOf(result.item)) : null;
    const unit = result.turn !== undefined ? byTurn.get(result.turn) : head !== null ? byHome.get(head) : undefined;
    const match = unit?.find(
      (c) =>
        !c.answered &&
        c.item <= result.item &&
        (result.id !== null
          ? c.id === result.id
          : (c.id === null || pairing.idsOptional === true) && (result.name === '' || c.name === result.name)),
    );
    if (match !== undefined) {
      match.answered = true;
      continue;
    }
    if (result.id === null) {
      findings.push({
        kind: 'orphan-result',
        rule: 'orphan-result',
        item: result.item,
        text: `result of ${nameOf(result.name)} (no call id) answers no call right before it`,
      });
      continue;
    }
    strayIds.add(result.id);
    const elsewhere = byId.get(result.id) ?? [];
    const id = JSON.stringify(result.id);
    if (elsewhere.length === 0)
      findings.push({
        kind: 'orphan-result',
        rule: 'orphan-result',
        item: result.item,
        text: `result for call id ${id} answers no call`,
      });
    else if (elsewhere.every((c) => c.answered)) {
      findings.push({
        kind: 'orphan-result',
        rule: 'repeated-result',
        item: result.item,
        text: `result for call id ${id} repeats a result the call already has`,
      });
    } else {
      const text = `result for call id ${id} is not right after its call (line ${lineOf((elsewhere[0] as OpenCall).item)})`;
      findings.push({ kind: 'orphan-result', rule: 'result-not-after-call', item: result.item, text });
    }
  }
  for (const call of calls) {
    if (call.answered) continue;
    const id = call.id === null ? 'without an id' : JSON.stringify(call.id);
    const elsewhere = call.id !== null && strayIds.has(call.id);
    findings.push({
      kind: 'missing-result',
      rule: elsewhere ? 'result-not-after-call' : 'missing-result',
      item: call.item,
      text: `tool call ${id} (${nameOf(call.name)}) has no result${elsewhere ? ' right after it' : ''}`,
    });
  }
  return findings;
}

/** Whether two calls are made in one unit: the adapter's turn when either names one, else the same message. */
function isSameUnit(a: OpenCall, b: OpenCall): boolean {
  if (a.turn !== undefined || b.turn !== undefined) return a.turn === b.turn;
  return a.home !== null && a.home === b.home;
}

/** The list under a key, made empty the first time. */
function listIn<K, V>(map: Map<K, V[]>, key: K): V[] {
  let list = map.get(key);
  if (list === undefined) {
    list = [];
    map.set(key, list);
  }
  return list;
}

/** A tool's name as problems show it: results without a name answer "unnamed tool". */
function nameOf(name: string): string {
  return name === '' ? 'unnamed tool' : name;
}
