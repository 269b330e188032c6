import type { Plan } from '../core/compact.js';
import { OFFLOADED_META_KEY } from '../core/offload.js';
import { TOOL_RESULT_OFFLOADING } from '../core/offload-compactor.js';
import type { PrunedMessage, PrunePlan } from '../core/prune.js';
import { elementReader } from '../core/lazy-list.js';
import { contentOf } from '../core/render.js';
import type { Message } from '../core/types.js';
import { itemsReader, type FormatAdapter, type Normalized } from '../formats/types.js';
import type { Slot } from '../io/layout.js';
import type { ChainOffload, ChainPruning } from './steps/step.js';
import type { PrunedItems } from './types.js';

// The items pruning and offloading rewrite: which messages of the output hold replaced results, in the file's item
// positions, and their new texts as each format writes them.

/** Each entry's range narrowed to the items really rewritten (left as it is when none of its items is). */
export function narrowedTo(entries: readonly PrunedItems[], edits: ReadonlyMap<number, string>): PrunedItems[] {
  return entries.map((e) => {
    let start = Infinity;
    let end = -Infinity;
    for (let k = e.start; k < e.end; k++) {
      if (!edits.has(k)) continue;
      start = Math.min(start, k);
      end = Math.max(end, k + 1);
    }
    return start === Infinity ? e : rangedItems(e, start, end);
  });
}

/**
 * Pruned or offloaded items over another range, their counts read from the entry when asked for (a spread would
 * count every message's tokens before now: pruning alone on a big file keeps thousands of pruned results).
 */
function rangedItems(e: PrunedItems, start: number, end: number): PrunedItems {
  return {
    message: e.message,
    start,
    end,
    tools: e.tools,
    get tokensBefore(): number {
      return e.tokensBefore;
    },
    get tokensAfter(): number {
      return e.tokensAfter;
    },
  };
}

/** The offloaded messages the output holds, in the file's item positions. */
export function offloadedItems(offloads: readonly ChainOffload[], normalized: Normalized, plan: Plan): PrunedItems[] {
  const kept = new Set(plan.kept);
  const itemsAt = itemsReader(normalized.itemsOf);
  const out: PrunedItems[] = [];
  for (const o of offloads) {
    if (!kept.has(o.message)) continue;
    const items = itemsAt(o.message);
    if (items.length === 0) continue;
    out.push({
      message: o.message,
      start: Math.min(...items),
      end: Math.max(...items) + 1,
      tools: [...o.results.keys()].map((k) =>
        normalized.messages[o.message] === undefined ? '' : toolOf(normalized.messages[o.message] as Message, k),
      ),
      tokensBefore: o.tokensBefore,
      tokensAfter: o.tokensAfter,
    });
  }
  return out.sort((a, b) => a.message - b.message);
}

/** The tool name of a message's result. */
function toolOf(message: Message, result: number): string {
  const content = typeof message.content === 'function' ? message.content() : message.content;
  return content.results[result]?.name ?? '';
}

/** The new texts of the offloaded items, written by the format with Haystack's `tool_result_offloaded` marker. */
export function offloadRaws(
  slot: Slot,
  adapter: FormatAdapter,
  normalized: Normalized,
  offloaded: readonly PrunedItems[],
  offloads: readonly ChainOffload[],
): Map<number, string> {
  const out = new Map<number, string>();
  if (offloaded.length === 0 || adapter.writePruned === undefined) return out;
  const byMessage = new Map(offloads.map((o) => [o.message, o]));
  for (const r of offloaded) {
    const o = byMessage.get(r.message) as ChainOffload;
    // Every result of the message has its slot in the items: the ones not offloaded are left as they are (null).
    const count = Math.max(
      contentOf(normalized.messages[r.message] as Message).results.length,
      Math.max(...o.results.keys()) + 1,
    );
    const texts = Array.from({ length: count }, (_, k) => o.results.get(k)?.text ?? null);
    // Every store entry written, one per part of a result of several.
    const references = [...o.results.values()].flatMap((x) => x.stored?.map((e) => e.reference) ?? [x.reference]);
    const written = adapter.writePruned({
      raws: slot.raws,
      items: (normalized.contentItemsOf ?? normalized.itemsOf)[r.message] ?? [],
      texts,
      originalTokens: o.compacted === true ? o.tokensBefore : 0,
      // Haystack 3.4 (PR #12534): the references always as a list; the compactor's mark first.
      markers: [
        ...(o.compacted === true
          ? [
              {
                key: 'context_compaction',
                value: { strategy: TOOL_RESULT_OFFLOADING, original_tokens: o.tokensBefore },
              },
            ]
          : []),
        { key: OFFLOADED_META_KEY, value: references },
      ],
    });
    for (const [item, raw] of written) out.set(item, raw);
  }
  return out;
}

/**
 * The messages a pruning replaced whose input index is among `kept`, each with that index: of a plan made without
 * counting, only those are worked out.
 */
function keptPrunings(
  p: PrunePlan,
  origin: readonly (number | null)[],
  kept: ReadonlySet<number>,
): { message: number; pruned: PrunedMessage }[] {
  // Through the list's producer: a chain's origin is a lazy list, and a candidate is looked up for every tool result.
  const originAt = elementReader(origin);
  const isKept = (index: number): boolean => {
    const at = originAt(index);
    return at !== null && at !== undefined && kept.has(at);
  };
  const lazy = p.lazy;
  const pruned =
    lazy === undefined
      ? p.pruned.filter((r) => isKept(r.index))
      : lazy.candidates.filter(isKept).flatMap((index) => lazy.prunedAt(index) ?? []);
  return pruned.map((r) => ({ message: originAt(r.index) as number, pruned: r }));
}

/** The pruned messages the output holds, in the file's item positions. */
export function prunedItems(pruning: readonly ChainPruning[], normalized: Normalized, plan: Plan): PrunedItems[] {
  const kept = new Set(plan.kept);
  const itemsAt = itemsReader(normalized.itemsOf);
  const out: PrunedItems[] = [];
  for (const { plan: p, origin } of pruning) {
    for (const { message, pruned: r } of keptPrunings(p, origin, kept)) {
      const items = itemsAt(message);
      if (items.length === 0) continue;
      out.push({
        message,
        start: Math.min(...items),
        end: Math.max(...items) + 1,
        tools: r.tools,
        // Counted when an output shows it.
        get tokensBefore(): number {
          return r.tokensBefore;
        },
        tokensAfter: r.tokensAfter,
      });
    }
  }
  return out.sort((a, b) => a.message - b.message);
}

/** The new texts of the pruned items, written by the format. */
export function prunedRaws(
  raws: readonly string[],
  adapter: FormatAdapter,
  normalized: Normalized,
  pruned: readonly PrunedItems[],
  pruning: readonly ChainPruning[],
): Map<number, string> {
  const out = new Map<number, string>();
  if (pruned.length === 0 || adapter.writePruned === undefined) return out;
  const texts = new Map<number, readonly string[]>();
  const wanted = new Set(pruned.map((r) => r.message));
  for (const { plan: p, origin } of pruning) {
    for (const { message, pruned: r } of keptPrunings(p, origin, wanted)) texts.set(message, r.texts);
  }
  for (const r of pruned) {
    // The count before is read only by formats that record it (Haystack's meta `original_tokens`).
    const written = adapter.writePruned({
      raws,
      items: (normalized.contentItemsOf ?? normalized.itemsOf)[r.message] ?? [],
      texts: texts.get(r.message) ?? [],
      get originalTokens(): number {
        return r.tokensBefore;
      },
    });
    for (const [item, raw] of written) out.set(item, raw);
  }
  return out;
}
