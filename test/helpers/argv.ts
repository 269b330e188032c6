/**
 * Command lines the CLI tests repeat, built from their parts, so that a test's argv names only what the test varies.
 * Commander takes options in any order, so the parts may come in any order too.
 */

/**
 * `compact FILE -t TARGET --tokenizer approx`, then the flags given: a compaction counted by the approximate counter,
 * whose numbers a test can work out by hand.
 * @param file - the input, as typed
 * @param target - the target, as typed (`100`, `8k`)
 * @param flags - any further flags and values
 * @returns the argv for `runSwc`
 */
export function compactArgs(file: string, target: number | string, ...flags: string[]): string[] {
  return ['compact', file, '-t', String(target), '--tokenizer', 'approx', ...flags];
}

/**
 * Offloading into the folder `store` of the run's working directory.
 * @param over - the smallest result offloaded, in tokens
 * @param strategy - the chain that holds `offload`
 * @returns the flags
 */
export function offloadFlags(over: number | string, strategy = 'offload'): string[] {
  return ['--strategy', strategy, '--offload-dir', 'store', '--offload-over', String(over)];
}

/**
 * Summarizing with summaries of at most 10 tokens, short enough that every round saves tokens.
 * @param strategy - the chain that holds `summarize`
 * @returns the flags
 */
export function summarizeFlags(strategy = 'summarize'): string[] {
  return ['--strategy', strategy, '--summary-tokens', '10'];
}
