import { UsageError } from '../errors.js';

/** The tokenizers swc counts with. */
export const TOKENIZERS = ['o200k_base', 'cl100k_base', 'approx'] as const;
export type TokenizerName = (typeof TOKENIZERS)[number];

/** Whether a name is a tokenizer swc knows. */
export function isTokenizerName(name: string): name is TokenizerName {
  return (TOKENIZERS as readonly string[]).includes(name);
}

/**
 * A counter's settings, as Haystack's `ApproximateTokenCounter(chars_per_token, tokens_per_image, tokens_per_file)`
 * takes them: how they default, when they are valid, how the CLI reads them and how a counter is named with them.
 */

/** Haystack's defaults. */
export const CHARS_PER_TOKEN = 4;
export const TOKENS_PER_IMAGE = 85;
export const TOKENS_PER_FILE = 1000;

/** Settings of a counter; any left out take Haystack's defaults. */
export interface CounterOptions {
  /** Characters per token, a positive finite number (decimals allowed). Only the approximate counter has it. */
  readonly charsPerToken?: number;
  /** Tokens charged per image, which has no text to measure: a whole number of at least 0. */
  readonly tokensPerImage?: number;
  /** Tokens charged per file: a whole number of at least 0. */
  readonly tokensPerFile?: number;
}

/** A counter's settings with the defaults filled in, as a plan or report records them. */
export interface CounterSettings {
  /** Null for a BPE tokenizer, which counts tokens rather than characters. */
  readonly charsPerToken: number | null;
  readonly tokensPerImage: number;
  readonly tokensPerFile: number;
}

/** The options as the command line gives them: the raw text of each flag that was given. */
export interface RawCounterOptions {
  readonly charsPerToken?: string | undefined;
  readonly tokensPerImage?: string | undefined;
  readonly tokensPerFile?: string | undefined;
}

/** A counter that says what it was made with. */
export interface CounterWithSettings {
  readonly settings: CounterSettings;
}

/** Whether a value is a characters-per-token rate a count can divide by. */
function isRate(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0;
}

/** Whether a value is a flat cost: a whole number of at least 0 that sums exactly. */
function isCost(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/**
 * Fills in the defaults and checks the options for a tokenizer.
 * @param options the options, each optional
 * @param tokenizer the tokenizer they are for: `charsPerToken` is refused for a BPE tokenizer, where it means nothing
 * @returns the complete settings
 * @throws RangeError naming the first option that is not valid
 */
export function resolveCounterOptions(options: CounterOptions, tokenizer: TokenizerName): CounterSettings {
  const { charsPerToken, tokensPerImage, tokensPerFile } = options;
  if (charsPerToken !== undefined) {
    if (tokenizer !== 'approx')
      throw new RangeError(`charsPerToken only applies to the approx tokenizer, not ${tokenizer}`);
    if (!isRate(charsPerToken))
      throw new RangeError(`charsPerToken must be a positive finite number, got ${String(charsPerToken)}`);
  }
  for (const key of ['tokensPerImage', 'tokensPerFile'] as const) {
    const value = options[key];
    if (value !== undefined && !isCost(value))
      throw new RangeError(`${key} must be a whole number of at least 0, got ${String(value)}`);
  }
  return {
    charsPerToken: tokenizer === 'approx' ? (charsPerToken ?? CHARS_PER_TOKEN) : null,
    tokensPerImage: tokensPerImage ?? TOKENS_PER_IMAGE,
    tokensPerFile: tokensPerFile ?? TOKENS_PER_FILE,
  };
}

/** A decimal number as people write one: digits with an optional fraction and exponent, no hex, no words. */
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

/** A whole number, with `_` or `,` between groups of three digits allowed (as `--target` takes it). */
const GROUPED_DIGITS = /[_,](?=\d{3}(\D|$))/g;

/** Reads a `--chars-per-token` value. */
function parseRate(raw: string): number {
  const text = raw.trim();
  const value = DECIMAL.test(text) ? Number(text) : NaN;
  // 1e999 reads as Infinity and 1e-999 as 0: neither is a rate a count can divide by.
  if (!isRate(value)) throw new UsageError(`--chars-per-token must be a positive number, got "${raw}"`);
  return value;
}

/** Reads a `--tokens-per-image` or `--tokens-per-file` value. */
function parseCost(flag: string, raw: string): number {
  const text = raw.trim().replace(GROUPED_DIGITS, '');
  if (!/^[+-]?\d+$/.test(text)) throw new UsageError(`${flag} must be a whole number, got "${raw}"`);
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new UsageError(`${flag} is too large: "${raw}"`);
  if (value < 0) throw new UsageError(`${flag} must be at least 0, got ${value}`);
  return value;
}

/** Reads a whole number of tokens typed for a flag, throwing a UsageError that names the flag. */
export type ReadCost = (flag: string, raw: string) => number;

/**
 * Reads the counter flags of a command line, for the CLI: each error is one line that names the flag.
 * @param raw the text given to `--chars-per-token`, `--tokens-per-image` and `--tokens-per-file` (undefined when absent)
 * @param tokenizer the `--tokenizer` chosen
 * @param readCost reads a cost's text (by default a whole number, `_` or `,` between thousands allowed), so the CLI
 *   can take costs as it takes other token counts; whatever it returns must still be a whole number of at least 0
 * @returns the options given, as numbers (absent ones stay absent, so the defaults apply)
 * @throws UsageError for a value that is not valid, or `--chars-per-token` with a BPE tokenizer
 */
export function parseCounterOptions(
  raw: RawCounterOptions,
  tokenizer: TokenizerName,
  readCost: ReadCost = parseCost,
): CounterOptions {
  const options: { charsPerToken?: number; tokensPerImage?: number; tokensPerFile?: number } = {};
  if (raw.charsPerToken !== undefined) {
    if (tokenizer !== 'approx')
      throw new UsageError(`--chars-per-token only applies to --tokenizer approx (not ${tokenizer})`);
    options.charsPerToken = parseRate(raw.charsPerToken);
  }
  const cost = (flag: string, text: string): number => {
    const value = readCost(flag, text);
    if (!isCost(value)) throw new UsageError(`${flag} must be a whole number of at least 0, got "${text}"`);
    // -0 is 0.
    return value + 0;
  };
  if (raw.tokensPerImage !== undefined) options.tokensPerImage = cost('--tokens-per-image', raw.tokensPerImage);
  if (raw.tokensPerFile !== undefined) options.tokensPerFile = cost('--tokens-per-file', raw.tokensPerFile);
  return options;
}

/** Whether the settings are Haystack's defaults. */
export function isDefaultSettings(settings: CounterSettings): boolean {
  return (
    (settings.charsPerToken === null || settings.charsPerToken === CHARS_PER_TOKEN) &&
    settings.tokensPerImage === TOKENS_PER_IMAGE &&
    settings.tokensPerFile === TOKENS_PER_FILE
  );
}

/**
 * A counter's name as outputs show it: the tokenizer alone with the defaults, otherwise every setting it counts
 * with, so a reader never has to know a default: `approx (3.5 chars/token, 85/image, 1000/file)`,
 * `o200k_base (0/image, 1000/file)`.
 * @param tokenizer the tokenizer's name
 * @param settings the counter's settings
 */
export function counterName(tokenizer: string, settings: CounterSettings): string {
  if (isDefaultSettings(settings)) return tokenizer;
  const parts = [`${settings.tokensPerImage}/image`, `${settings.tokensPerFile}/file`];
  if (settings.charsPerToken !== null) parts.unshift(`${settings.charsPerToken} chars/token`);
  return `${tokenizer} (${parts.join(', ')})`;
}
