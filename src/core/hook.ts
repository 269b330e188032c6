/** Haystack's `CompactionHook`: when a conversation is compacted, and to what size. */

/**
 * The trigger and the target of a context window as the hook computes them, in doubles: it compacts when the count
 * is `>= window * compact_at` (so from the product rounded up) and aims at `int(window * compact_to)`. 200 × 0.55 is
 * 110.00000000000001 there, so 110 tokens do not compact; 1,500 × 0.29 is 434.99999999999994, so the target is 434.
 * JavaScript numbers are the same doubles as Python's floats.
 * @param window the context window in tokens
 * @param compactAt the share of the window that triggers compaction
 * @param compactTo the share compaction aims at
 * @returns the smallest count that compacts, and the target before any overhead (tool schemas) is taken off
 */
export function hookThresholds(
  window: number,
  compactAt: number,
  compactTo: number,
): { trigger: number; target: number } {
  return { trigger: Math.ceil(window * compactAt), target: Math.trunc(window * compactTo) };
}
