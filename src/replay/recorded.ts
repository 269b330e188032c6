import type { ReplayRecorded } from './types.js';

/**
 * The run as a file recorded it, where the format records the provider's usage of each call. Every reader turns one
 * call's usage into the same four figures: `input` is everything the call sent (uncached input, cache reads and,
 * where the provider reports them, cache writes), as a replay's calls count it; `cacheRead` and `cacheWrite` are
 * parts of it; `output` is everything the call was billed as output for.
 */

type Usage = Readonly<Record<string, unknown>>;

/** One call's usage in a replay's terms. */
interface CallUsage {
  readonly input: number;
  readonly cacheRead: number;
  readonly cacheWrite: number;
  readonly output: number;
}

const isObject = (v: unknown): v is Readonly<Record<string, unknown>> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** A token count under the first of `keys` that holds one; a missing or malformed count is 0. */
const tokens = (usage: Usage, ...keys: string[]): number => {
  for (const key of keys) {
    const v = usage[key];
    if (typeof v === 'number' && Number.isFinite(v) && v >= 0) return v;
  }
  return 0;
};

/** The object under the first of `keys` that holds one. */
const objectAt = (value: Usage, ...keys: string[]): Usage | null => {
  for (const key of keys) {
    const v = value[key];
    if (isObject(v)) return v;
  }
  return null;
};

/** The calls' figures summed, or null when the file recorded no call's usage. */
function sumCalls(calls: readonly CallUsage[]): ReplayRecorded | null {
  if (calls.length === 0) return null;
  const sum = (pick: (c: CallUsage) => number): number => calls.reduce((total, c) => total + pick(c), 0);
  return {
    calls: calls.length,
    inputTokens: sum((c) => c.input),
    cacheReadTokens: sum((c) => c.cacheRead),
    cacheWriteTokens: sum((c) => c.cacheWrite),
    outputTokens: sum((c) => c.output),
  };
}

/**
 * Claude Code writes the Messages API's `usage` on each assistant line of the main chain (sub-agents' lines,
 * `isSidechain`, are other calls' and left out); one reply split over several lines repeats its `message.id`, and
 * its last line is taken. `input_tokens` is the uncached part: reads and writes are added to it.
 */
function claudeCodeUsage(items: readonly unknown[]): ReplayRecorded | null {
  const byCall = new Map<string, Usage>();
  items.forEach((item, i) => {
    if (!isObject(item) || item.type !== 'assistant' || item.isSidechain === true) return;
    const message = item.message;
    if (!isObject(message) || !isObject(message.usage)) return;
    byCall.set(typeof message.id === 'string' ? message.id : `line ${i}`, message.usage);
  });
  return sumCalls(
    [...byCall.values()].map((usage) => {
      const cacheRead = tokens(usage, 'cache_read_input_tokens');
      const cacheWrite = tokens(usage, 'cache_creation_input_tokens');
      return {
        input: tokens(usage, 'input_tokens') + cacheRead + cacheWrite,
        cacheRead,
        cacheWrite,
        output: tokens(usage, 'output_tokens'),
      };
    }),
  );
}

/**
 * A Gemini `UsageMetadata` in the REST API's camelCase or the Python SDK's snake_case. `promptTokenCount` already
 * includes the cached content (`cachedContentTokenCount`, the cache reads); Gemini reports no cache writes.
 * `thoughtsTokenCount` is counted apart from `candidatesTokenCount` (the total is prompt + candidates + tool-use
 * prompt + thoughts) and billed as output: the Gemini API's pricing lists "Output price (including thinking
 * tokens)" (https://ai.google.dev/gemini-api/docs/pricing), so thoughts count as output here.
 * `toolUsePromptTokenCount` (what a server-side tool such as search fed the model) is not counted: the call did not
 * send it.
 */
function geminiCall(usage: Usage): CallUsage {
  return {
    input: tokens(usage, 'promptTokenCount', 'prompt_token_count'),
    cacheRead: tokens(usage, 'cachedContentTokenCount', 'cached_content_token_count'),
    cacheWrite: 0,
    output:
      tokens(usage, 'candidatesTokenCount', 'candidates_token_count') +
      tokens(usage, 'thoughtsTokenCount', 'thoughts_token_count'),
  };
}

/**
 * An ADK session records usage in one of two places. An ADK event is an `LlmResponse`: the event a model call
 * produced carries that call's `usageMetadata` (`usage_metadata` when dumped without aliases); a streamed partial
 * event (`partial: true`) repeats a call that its final event records, and sessions do not store them. Early ADK
 * sessions keep their events without usage and log each call in the session's `event_logs` instead, with the
 * response's `usage_metadata`. A plain contents list (a request body) records none.
 */
function geminiUsage(
  items: readonly unknown[],
  container: Readonly<Record<string, unknown>> | null,
): ReplayRecorded | null {
  const fromEvents: CallUsage[] = [];
  for (const item of items) {
    if (!isObject(item) || typeof item.author !== 'string' || item.partial === true) continue;
    const usage = objectAt(item, 'usageMetadata', 'usage_metadata');
    if (usage !== null) fromEvents.push(geminiCall(usage));
  }
  if (fromEvents.length > 0) return sumCalls(fromEvents);
  const logs = container?.event_logs;
  if (!Array.isArray(logs)) return null;
  const fromLogs: CallUsage[] = [];
  for (const log of logs) {
    const response = isObject(log) ? objectAt(log, 'model_response', 'modelResponse') : null;
    const usage = response === null ? null : objectAt(response, 'usage_metadata', 'usageMetadata');
    if (usage !== null) fromLogs.push(geminiCall(usage));
  }
  return sumCalls(fromLogs);
}

/**
 * LangChain's `AIMessage.usage_metadata`, in `data` (`messages_to_dict`) or `kwargs` (`dumpd`); only AI messages
 * have the field. It is LangChain's provider-neutral count: `input_tokens` is the sum of all input token types
 * (cache reads and cache creation included), with `input_token_details.cache_read` and `.cache_creation` as parts;
 * `output_tokens` the sum of all output types (reasoning included).
 */
function langchainUsage(items: readonly unknown[]): ReplayRecorded | null {
  const calls: CallUsage[] = [];
  for (const item of items) {
    const fields = isObject(item) ? objectAt(item, 'data', 'kwargs') : null;
    const usage = fields === null ? null : objectAt(fields, 'usage_metadata');
    if (usage === null) continue;
    const details = objectAt(usage, 'input_token_details') ?? {};
    calls.push({
      input: tokens(usage, 'input_tokens'),
      cacheRead: tokens(details, 'cache_read'),
      cacheWrite: tokens(details, 'cache_creation'),
      output: tokens(usage, 'output_tokens'),
    });
  }
  return sumCalls(calls);
}

/**
 * What the file recorded of its calls' usage, for the formats that record it: Claude Code sessions, Gemini ADK
 * sessions and LangChain messages. Request bodies and a Responses `input` hold what was sent and no response (a
 * response object is not a Responses input item); an AI SDK message has no usage field (a UI message's `metadata`
 * is the app's own); a Haystack message's `meta.usage` is what its generator copied from its provider, in that
 * provider's field names, so it is not read.
 * @param format the adapter's name
 * @param items the conversation's items as the file holds them
 * @param container the object around the list (an ADK session), or null for a bare list
 * @returns the recorded figures, or null where the file records none
 */
export function recordedUsage(
  format: string,
  items: readonly unknown[],
  container: Readonly<Record<string, unknown>> | null = null,
): ReplayRecorded | null {
  switch (format) {
    case 'claude-code':
      return claudeCodeUsage(items);
    case 'gemini':
      return geminiUsage(items, container);
    case 'langchain':
      return langchainUsage(items);
    default:
      return null;
  }
}
