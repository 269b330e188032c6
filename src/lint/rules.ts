import type { Rule, Severity } from './types.js';

/**
 * Which rules each provider rejects a request for. A rule a provider rejects is an error in the formats sent to it; any
 * other is a warning. Each entry has its source (the provider's reference, or the error it answers with) in
 * docs/inspect-rules.md; a rule with no documented rejection is not listed.
 */

/** The providers whose rules inspect applies; `any` stands for a format that is no provider's wire format. */
export type Provider = 'openai-chat' | 'openai-responses' | 'anthropic' | 'gemini' | 'any';

/** The providers with a wire format of their own. */
export const WIRE_PROVIDERS = [
  'openai-chat',
  'openai-responses',
  'anthropic',
  'gemini',
] as const satisfies readonly Provider[];

/** Every rule, in the order docs/inspect-rules.md lists them. */
export const RULES: readonly Rule[] = [
  'missing-result',
  'unfinished-call',
  'result-not-after-call',
  'orphan-result',
  'repeated-result',
  'reused-id',
  'shared-id',
  'empty-assistant',
  'blank-assistant',
  'empty-final-assistant',
  'blank-final-assistant',
  'unknown-role',
  'format',
];

/** What each provider rejects. */
const REJECTED: Readonly<Record<(typeof WIRE_PROVIDERS)[number], ReadonlySet<Rule>>> = {
  // Accepts a call id used again in a later message (tau-bench and SWE-agent runs went on after one), and an
  // assistant message whose text is empty.
  'openai-chat': new Set<Rule>([
    'missing-result',
    'result-not-after-call',
    'orphan-result',
    'repeated-result',
    'shared-id',
    'empty-assistant',
    'empty-final-assistant',
    'unknown-role',
    'format',
  ]),
  // Pairs outputs with calls by call_id: nothing documents a rejection for where an output stands, for ids used
  // twice or for empty messages.
  'openai-responses': new Set<Rule>(['missing-result', 'orphan-result', 'unknown-role', 'format']),
  // Accepts an empty last assistant message (a prefill), and a tool_use id used again in a later message when each
  // use has its own result (a replay of another provider's history): its uniqueness error names two calls of one
  // message.
  anthropic: new Set<Rule>([
    'missing-result',
    'result-not-after-call',
    'orphan-result',
    'repeated-result',
    'shared-id',
    'empty-assistant',
    'blank-assistant',
    'unknown-role',
    'format',
  ]),
  // Call ids are optional in Gemini; a text part may be empty, a content's parts may not.
  gemini: new Set<Rule>([
    'missing-result',
    'result-not-after-call',
    'orphan-result',
    'repeated-result',
    'empty-assistant',
    'empty-final-assistant',
    'unknown-role',
    'format',
  ]),
};

/**
 * The provider each format is sent to. Claude Code sessions are what Claude Code sends to the Messages API; Haystack,
 * LangChain, AI SDK and ShareGPT files are a framework's or a data set's own shape, sent to whichever provider is
 * configured, so only what every provider rejects fails them.
 */
const PROVIDER_OF_FORMAT: Readonly<Record<string, Provider>> = {
  openai: 'openai-chat',
  responses: 'openai-responses',
  anthropic: 'anthropic',
  'claude-code': 'anthropic',
  codex: 'openai-responses',
  gemini: 'gemini',
  haystack: 'any',
  langchain: 'any',
  'ai-sdk': 'any',
  sharegpt: 'any',
};

/** How outputs name a provider. */
export const PROVIDER_NAMES: Readonly<Record<Provider, string>> = {
  'openai-chat': 'OpenAI Chat Completions',
  'openai-responses': 'OpenAI Responses',
  anthropic: 'Anthropic Messages',
  gemini: 'Gemini',
  any: 'any provider',
};

/**
 * The provider a format's conversations are judged by.
 * @param format an adapter's name
 * @returns its provider; `any` for a format this table does not name
 */
export function providerOf(format: string): Provider {
  return Object.prototype.hasOwnProperty.call(PROVIDER_OF_FORMAT, format)
    ? (PROVIDER_OF_FORMAT[format] as Provider)
    : 'any';
}

/**
 * Whether a provider rejects what a rule names.
 * @param provider a provider, or `any`: rejected only when every provider rejects it
 * @param rule the rule
 * @returns `error` when rejected, `warning` otherwise
 */
export function severityOf(provider: Provider, rule: Rule): Severity {
  const rejected =
    provider === 'any' ? WIRE_PROVIDERS.every((p) => REJECTED[p].has(rule)) : REJECTED[provider].has(rule);
  return rejected ? 'error' : 'warning';
}
