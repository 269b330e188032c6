/**
 * The headings `--help` lists options under, as ripgrep groups its flags: what to compact to, how, with which
 * summarizer, how the input is read, where the output goes, batch and CI gates, and what is shown. A command's help
 * lists its groups in the order their first option appears in the options table's help order.
 */
const GROUPS: ReadonlyArray<readonly [heading: string, names: string]> = [
  ['Target:', 'target contextWindow compactAt compactTo minKeepSteps'],
  ['Strategies:', 'strategy minTokens placeholder offloadDir offloadHook offloadOver previewChars note'],
  [
    'Summarize:',
    'summaryTokens summaryInstruction baseUrl model summarizeCommand concurrency cacheDir cache strict minRetention',
  ],
  [
    'Input:',
    'tokenizer format charsPerToken tokensPerImage tokensPerFile conversationKey conversationPath config ignore skipUnrecognized',
  ],
  ['Output:', 'output inPlace backupDir outDir force base'],
  ['Batch and CI:', 'check failOverTarget failOnOverflow maxLost jobs shard'],
  ['Display:', 'dryRun stat verbose json jsonLines report changedOnly exact prices quiet color debug'],
];

const HEADING: ReadonlyMap<string, string> = new Map(
  GROUPS.flatMap(([heading, names]) => names.split(' ').map((name) => [name, heading] as const)),
);

/**
 * The heading an option is listed under in `--help`.
 * @throws Error for an option no group names (a mistake in the code: every option belongs somewhere)
 */
export function helpGroupOf(option: string): string {
  const heading = HEADING.get(option);
  if (heading === undefined) throw new Error(`option ${option} has no --help group (src/cli/help-groups.ts)`);
  return heading;
}
