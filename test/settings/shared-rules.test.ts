/**
 * The command line and the library follow one set of rules (src/settings): for each setting they refuse the same
 * values, each saying the same thing in its own terms (`--compact-at` on the command line, `compactAt` in the
 * library), and they share their defaults.
 */
import { describe, expect, it } from '@jest/globals';
import { DEFAULT_COMPACT_AT, DEFAULT_COMPACT_TO, parseFraction, resolveSettings } from '../../src/cli/settings.js';
import { OptionsError, UsageError } from '../../src/errors.js';
import { createCompactor, type CompactorOptions } from '../../src/library/index.js';
import * as defaults from '../../src/settings/defaults.js';

/** What the command line says, in the library's terms: each flag by its option name. */
function inLibraryTerms(message: string): string {
  return message
    .replace(/--context-window <tokens>/g, 'contextWindow')
    .replace(/--no-note/g, 'null for none')
    .replace(/, comma-separated\)/g, ')')
    .replace(/--strategy (window|prune|offload|summarize)\b/g, 'strategy $1')
    .replace(/--([a-z]+(?:-[a-z]+)*)/g, (_, name: string) =>
      name.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase()),
    );
}

/** The command line's refusal of some flags, or null when it takes them. */
function cliError(flags: Record<string, string>): string | null {
  try {
    resolveSettings(['chat.json'], flags);
    return null;
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
}

/** The library's refusal of some options, or null when it takes them. */
async function libraryError(options: CompactorOptions): Promise<string | null> {
  try {
    await createCompactor({ tokenizer: 'approx', ...options });
    return null;
  } catch (error) {
    expect(error).toBeInstanceOf(OptionsError);
    return (error as Error).message;
  }
}

// Each row: the flags, and the same settings as library options.
const SAME: ReadonlyArray<readonly [string, Record<string, string>, CompactorOptions]> = [
  ['compact-at of 0', { contextWindow: '1000', compactAt: '0' }, { contextWindow: 1000, compactAt: 0 }],
  ['compact-at over 1', { contextWindow: '1000', compactAt: '1.5' }, { contextWindow: 1000, compactAt: 1.5 }],
  ['compact-to of 0', { contextWindow: '1000', compactTo: '0' }, { contextWindow: 1000, compactTo: 0 }],
  [
    'compact-to at compact-at',
    { contextWindow: '1000', compactAt: '0.5', compactTo: '0.5' },
    { contextWindow: 1000, compactAt: 0.5, compactTo: 0.5 },
  ],
  ['a window too small for one token', { contextWindow: '2', compactTo: '0.3' }, { contextWindow: 2, compactTo: 0.3 }],
  ['target beside a window', { target: '100', contextWindow: '1000' }, { target: 100, contextWindow: 1000 }],
  ['compact-at without a window', { target: '100', compactAt: '0.5' }, { target: 100, compactAt: 0.5 }],
  ['an unknown strategy', { target: '100', strategy: 'summary' }, { target: 100, strategy: 'summary' as never }],
  [
    'a strategy twice',
    { target: '100', strategy: 'window,window' },
    { target: 100, strategy: 'window,window' as never },
  ],
  [
    'an empty strategy name',
    { target: '100', strategy: 'prune,,window' },
    { target: 100, strategy: 'prune,,window' as never },
  ],
  [
    'no step kept with pruning',
    { target: '100', strategy: 'prune', minKeepSteps: '0' },
    { target: 100, strategy: 'prune', minKeepSteps: 0 },
  ],
  ['min-tokens without pruning', { target: '100', minTokens: '5' }, { target: 100, minTokens: 5 }],
  ['a placeholder without pruning', { target: '100', placeholder: '[gone]' }, { target: 100, placeholder: '[gone]' }],
  [
    'an empty placeholder',
    { target: '100', strategy: 'prune', placeholder: '' },
    { target: 100, strategy: 'prune', placeholder: '' },
  ],
  [
    'a bare {tool_name} placeholder',
    { target: '100', strategy: 'prune', placeholder: ' {tool_name} ' },
    { target: 100, strategy: 'prune', placeholder: ' {tool_name} ' },
  ],
  ['a note of nothing but its count', { target: '100', note: '{num_removed}' }, { target: 100, note: '{num_removed}' }],
  ['an unknown tokenizer', { target: '100', tokenizer: 'gpt-4o' }, { target: 100, tokenizer: 'gpt-4o' as never }],
  ['summary-tokens without summarize', { target: '100', summaryTokens: '5' }, { target: 100, summaryTokens: 5 }],
];

describe('the settings the command line and the library share', () => {
  it.each(SAME)('refuse %s alike, each in its own terms', async (_name, flags, options) => {
    const cli = cliError(flags);
    expect(cli).not.toBeNull();
    expect(await libraryError(options)).toBe(inLibraryTerms(cli as string));
  });

  it('take the same thresholds as valid, and compute them alike', async () => {
    const cli = resolveSettings(['chat.json'], { contextWindow: '200', compactAt: '0.55' });
    const compactor = await createCompactor({ contextWindow: 200, compactAt: 0.55, tokenizer: 'approx' });
    // Haystack's hook compacts at >= 200 * 0.55 = 110.00000000000001 tokens: the trigger is 111.
    expect(cli.window?.trigger).toBe(111);
    const at110 = await compactor.compact([{ role: 'user', content: 'x'.repeat(4 * 110 - 12) }]);
    expect(at110.changed).toBe(false);
  });

  it('have one default for each share, whichever side reads it', () => {
    expect(parseFraction('--compact-at', DEFAULT_COMPACT_AT).value).toBe(defaults.DEFAULT_COMPACT_AT);
    expect(parseFraction('--compact-to', DEFAULT_COMPACT_TO).value).toBe(defaults.DEFAULT_COMPACT_TO);
    expect(resolveSettings(['chat.json'], { target: '100' }).minTokens).toBe(defaults.DEFAULT_MIN_TOKENS);
    expect(resolveSettings(['chat.json'], { target: '100' }).minKeepSteps).toBe(defaults.DEFAULT_MIN_KEEP_STEPS);
    expect(resolveSettings(['chat.json'], { target: '100' }).tokenizer).toBe(defaults.DEFAULT_TOKENIZER);
  });
});
