import type { ReplayPrices } from './types.js';

/**
 * The price models a replay is costed with: a few built-ins, each with its source and the date it was read, and a
 * file of one's own (`--prices FILE.json`). Prices are per million tokens.
 */

/** Anthropic's Sonnet class (Sonnet 4 and 4.5): 5-minute cache writes at 1.25× input, hits at 0.1×. */
const ANTHROPIC_SONNET: ReplayPrices = {
  name: 'anthropic-sonnet',
  currency: 'USD',
  input: 3,
  cacheRead: 0.3,
  cacheWrite: 3.75,
  output: 15,
  minCacheablePrefix: 1024,
  source:
    'https://docs.anthropic.com/en/docs/about-claude/pricing (Claude Sonnet 4: base input, 5m cache writes, cache hits, output) and https://platform.claude.com/docs/en/docs/build-with-claude/prompt-caching (minimum cacheable prompt 1,024 tokens for Sonnet 4 and 4.5), read 2026-12-03',
};

/** OpenAI's GPT-4.1: caching is automatic, writes cost the input price, cached input a quarter of it. */
const OPENAI_GPT_41: ReplayPrices = {
  name: 'openai-gpt-4.1',
  currency: 'USD',
  input: 2,
  cacheRead: 0.5,
  cacheWrite: 2,
  output: 8,
  minCacheablePrefix: 1024,
  source:
    'https://platform.openai.com/docs/pricing/ (gpt-4.1: input, cached input, output) and https://openai.com/index/api-prompt-caching/ (prompts of 1,024 tokens or more, longest previously computed prefix), read 2026-12-03',
};

/** The built-in price models, the first the default. */
export const PRICE_MODELS: readonly ReplayPrices[] = [ANTHROPIC_SONNET, OPENAI_GPT_41];

/** The default price model. */
export const DEFAULT_PRICES: ReplayPrices = ANTHROPIC_SONNET;

/** A built-in price model by name, or undefined. */
export function findPrices(name: string): ReplayPrices | undefined {
  return PRICE_MODELS.find((p) => p.name === name);
}

const PRICE_KEYS = ['input', 'cacheRead', 'cacheWrite', 'output'] as const;

/**
 * The highest price per million tokens: a cost of any whole count of tokens up to 2^53 - 1 at it stays below 1e298,
 * so the sum of billions of such costs is still a finite number (a price of 1e308 would cost `Infinity`).
 */
export const MAX_PRICE = 1e288;

/**
 * A price model read from JSON: `input`, `cacheRead`, `cacheWrite` and `output` per million tokens (numbers from 0 to
 * `MAX_PRICE`) and `minCacheablePrefix` (a whole number of tokens) are required; `name`, `currency` and `source` are
 * optional strings.
 * @param value the parsed JSON
 * @param where how errors name it
 * @returns the price model, or the reason it is refused
 */
export function pricesOf(value: unknown, where: string): ReplayPrices | string {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return `${where} must hold a JSON object of prices per million tokens`;
  const v = value as Record<string, unknown>;
  const known = new Set<string>([...PRICE_KEYS, 'minCacheablePrefix', 'name', 'currency', 'source']);
  const stray = Object.keys(v).find((k) => !known.has(k));
  if (stray !== undefined) return `${where}: unknown key "${stray}" (expected ${[...known].join(', ')})`;
  for (const key of PRICE_KEYS) {
    const x = v[key];
    if (typeof x !== 'number' || !Number.isFinite(x) || x < 0 || x > MAX_PRICE)
      return `${where}: "${key}" must be a price per million tokens (a number from 0 to ${MAX_PRICE}), not ${typeof x === 'number' ? String(x) : (JSON.stringify(x) ?? typeof x)}`;
  }
  const min = v.minCacheablePrefix;
  if (typeof min !== 'number' || !Number.isSafeInteger(min) || min < 0)
    return `${where}: "minCacheablePrefix" must be a whole number of tokens`;
  for (const key of ['name', 'currency', 'source'] as const)
    if (v[key] !== undefined && typeof v[key] !== 'string') return `${where}: "${key}" must be a string`;
  return {
    name: (v.name as string | undefined) ?? where,
    currency: (v.currency as string | undefined) ?? 'USD',
    input: v.input as number,
    cacheRead: v.cacheRead as number,
    cacheWrite: v.cacheWrite as number,
    output: v.output as number,
    minCacheablePrefix: min,
    source: (v.source as string | undefined) ?? where,
  };
}
