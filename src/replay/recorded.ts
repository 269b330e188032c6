import type { ReplayRecorded } from './types.js';

/**
 * The run as a file recorded it, where the format records the provider's usage of each call. Claude Code writes
 * the Messages API's `usage` on each assistant line of the main chain (sub-agents' lines, `isSidechain`, are other
 * calls' and left out); one reply split over several lines repeats its `message.id`, and its last line is taken.
 * `inputTokens` is everything the call sent (uncached input, cache reads and cache writes), as a replay's calls
 * count it.
 */

type Usage = Readonly<Record<string, unknown>>;

const tokens = (usage: Usage, key: string): number => {
  const v = usage[key];
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0;
};

const isObject = (v: unknown): v is Readonly<Record<string, unknown>> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** The usage a Claude Code session recorded, or null when no assistant line of the main chain holds one. */
function claudeCodeUsage(items: readonly unknown[]): ReplayRecorded | null {
  const byCall = new Map<string, Usage>();
  items.forEach((item, i) => {
    if (!isObject(item) || item.type !== 'assistant' || item.isSidechain === true) return;
    const message = item.message;
    if (!isObject(message) || !isObject(message.usage)) return;
    byCall.set(typeof message.id === 'string' ? message.id : `line ${i}`, message.usage);
  });
  if (byCall.size === 0) return null;
  let input = 0;
  let cacheRead = 0;
  let cacheWrite = 0;
  let output = 0;
  for (const usage of byCall.values()) {
    const read = tokens(usage, 'cache_read_input_tokens');
    const write = tokens(usage, 'cache_creation_input_tokens');
    input += tokens(usage, 'input_tokens') + read + write;
    cacheRead += read;
    cacheWrite += write;
    output += tokens(usage, 'output_tokens');
  }
  return {
    calls: byCall.size,
    inputTokens: input,
    cacheReadTokens: cacheRead,
    cacheWriteTokens: cacheWrite,
    outputTokens: output,
  };
}

/**
 * What the file recorded of its calls' usage, for the formats that record it.
 * @param format the adapter's name
 * @param items the conversation's items as the file holds them
 * @returns the recorded figures, or null where the format records none
 */
export function recordedUsage(format: string, items: readonly unknown[]): ReplayRecorded | null {
  return format === 'claude-code' ? claudeCodeUsage(items) : null;
}
