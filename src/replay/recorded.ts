import { InputError } from '../errors.js';
import type { ReplayRecorded } from './types.js';

/**
 * The run as a file recorded it, where the format records the provider's usage of each call. Every reader turns one
 * call's usage into the same four figures: `input` is everything the call sent (uncached input, cache reads and,
 * where the provider reports them, cache writes), as a replay's calls count it; `cacheRead` and `cacheWrite` are
 * parts of it; `output` is everything the call was billed as output for.
 *
 * A count the file holds must be a whole number of tokens from 0 to 2^53 - 1 (absent or null counts 0): anything else
 * (a fraction, a negative count, 1e308, a string) is refused with an InputError naming the item and the field, rather
 * than clamped, since a replay's figures and costs would be made of it; so are sums past 2^53 - 1.
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

/** Says which count of which item is not a count: `(field, value)` of the item being read. */
type Refuse = (field: string, value: unknown) => never;

/** A token count under the first of `keys` present (not null); absent, it is 0; anything but a whole count is refused. */
const tokens = (usage: Usage, refuse: Refuse, ...keys: string[]): number => {
  for (const key of keys) {
    const v = usage[key];
    if (v === undefined || v === null) continue;
    if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return v;
    return refuse(key, v);
  }
  return 0;
};

/** How a refused value reads in an error: a number or a (short) string as it is, any other value by its type. */
function shownValue(value: unknown): string {
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  return Array.isArray(value) ? 'a list' : typeof value === 'object' ? 'an object' : typeof value;
}

/**
 * A refusal for item `item`'s counts under `path` (`message.usage`), as an InputError naming the file, the item (from
 * 1, as every command names messages) and the field.
 */
function refuser(file: string, where: string, path: string): Refuse {
  return (field, value) => {
    throw new InputError(
      `${where}: ${path}.${field} is ${shownValue(value)}, not a whole number of tokens (0 to 2^53 - 1)`,
      file,
    );
  };
}

/** The object under the first of `keys` that holds one. */
const objectAt = (value: Usage, ...keys: string[]): Usage | null => entryAt(value, ...keys)?.[1] ?? null;

/** The first of `keys` that holds an object, and that object. */
const entryAt = (value: Usage, ...keys: string[]): readonly [string, Usage] | null => {
  for (const key of keys) {
    const v = value[key];
    if (isObject(v)) return [key, v];
  }
  return null;
};

/** The calls' figures summed, or null when the file recorded no call's usage; a sum past 2^53 - 1 is refused. */
function sumCalls(calls: readonly CallUsage[], file: string): ReplayRecorded | null {
  if (calls.length === 0) return null;
  const sum = (pick: (c: CallUsage) => number, name: string): number => {
    const total = calls.reduce((t, c) => t + pick(c), 0);
    if (!Number.isSafeInteger(total))
      throw new InputError(`the recorded ${name} tokens add up past 2^53 - 1, more than any run sends`, file);
    return total;
  };
  return {
    calls: calls.length,
    inputTokens: sum((c) => c.input, 'input'),
    cacheReadTokens: sum((c) => c.cacheRead, 'cache read'),
    cacheWriteTokens: sum((c) => c.cacheWrite, 'cache write'),
    outputTokens: sum((c) => c.output, 'output'),
  };
}

/**
 * Claude Code writes the Messages API's `usage` on each assistant line of the main chain (sub-agents' lines,
 * `isSidechain`, are other calls' and left out, unless the file is a sub-agent's own, `subagents/agent-*.jsonl`,
 * every line of which is one: then they are its calls, as the format reads its chain); one reply split over several
 * lines repeats its `message.id`, and its last line is taken. `input_tokens` is the uncached part: reads and writes
 * are added to it.
 */
function claudeCodeUsage(items: readonly unknown[], file: string): ReplayRecorded | null {
  const byCall = new Map<string, { readonly usage: Usage; readonly refuse: Refuse }>();
  const chained = (item: unknown): item is Record<string, unknown> =>
    isObject(item) && (item.type === 'assistant' || item.type === 'user');
  const subAgent = items.some(chained) && items.every((item) => !chained(item) || item.isSidechain === true);
  items.forEach((item, i) => {
    if (!isObject(item) || item.type !== 'assistant' || (item.isSidechain === true && !subAgent)) return;
    const message = item.message;
    if (!isObject(message) || !isObject(message.usage)) return;
    byCall.set(typeof message.id === 'string' ? message.id : `line ${i}`, {
      usage: message.usage,
      refuse: refuser(file, `message ${i + 1}`, 'message.usage'),
    });
  });
  return sumCalls(
    [...byCall.values()].map(({ usage, refuse }) => {
      const cacheRead = tokens(usage, refuse, 'cache_read_input_tokens');
      const cacheWrite = tokens(usage, refuse, 'cache_creation_input_tokens');
      return {
        input: tokens(usage, refuse, 'input_tokens') + cacheRead + cacheWrite,
        cacheRead,
        cacheWrite,
        output: tokens(usage, refuse, 'output_tokens'),
      };
    }),
    file,
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
function geminiCall(usage: Usage, refuse: Refuse): CallUsage {
  return {
    input: tokens(usage, refuse, 'promptTokenCount', 'prompt_token_count'),
    cacheRead: tokens(usage, refuse, 'cachedContentTokenCount', 'cached_content_token_count'),
    cacheWrite: 0,
    output:
      tokens(usage, refuse, 'candidatesTokenCount', 'candidates_token_count') +
      tokens(usage, refuse, 'thoughtsTokenCount', 'thoughts_token_count'),
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
  file: string,
): ReplayRecorded | null {
  const fromEvents: CallUsage[] = [];
  items.forEach((item, i) => {
    if (!isObject(item) || typeof item.author !== 'string' || item.partial === true) return;
    const found = entryAt(item, 'usageMetadata', 'usage_metadata');
    if (found !== null) fromEvents.push(geminiCall(found[1], refuser(file, `message ${i + 1}`, found[0])));
  });
  if (fromEvents.length > 0) return sumCalls(fromEvents, file);
  const logs = container?.event_logs;
  if (!Array.isArray(logs)) return null;
  const fromLogs: CallUsage[] = [];
  logs.forEach((log, i) => {
    const response = isObject(log) ? entryAt(log, 'model_response', 'modelResponse') : null;
    const found = response === null ? null : entryAt(response[1], 'usage_metadata', 'usageMetadata');
    if (response !== null && found !== null)
      fromLogs.push(geminiCall(found[1], refuser(file, `event_logs[${i}]`, `${response[0]}.${found[0]}`)));
  });
  return sumCalls(fromLogs, file);
}

/**
 * LangChain's `AIMessage.usage_metadata`, in `data` (`messages_to_dict`) or `kwargs` (`dumpd`); only AI messages
 * have the field. It is LangChain's provider-neutral count: `input_tokens` is the sum of all input token types
 * (cache reads and cache creation included), with `input_token_details.cache_read` and `.cache_creation` as parts;
 * `output_tokens` the sum of all output types (reasoning included).
 */
function langchainUsage(items: readonly unknown[], file: string): ReplayRecorded | null {
  const calls: CallUsage[] = [];
  items.forEach((item, i) => {
    const fields = isObject(item) ? entryAt(item, 'data', 'kwargs') : null;
    const usage = fields === null ? null : objectAt(fields[1], 'usage_metadata');
    if (fields === null || usage === null) return;
    const at = `${fields[0]}.usage_metadata`;
    const refuse = refuser(file, `message ${i + 1}`, at);
    const details = objectAt(usage, 'input_token_details') ?? {};
    const refuseDetail = refuser(file, `message ${i + 1}`, `${at}.input_token_details`);
    calls.push({
      input: tokens(usage, refuse, 'input_tokens'),
      cacheRead: tokens(details, refuseDetail, 'cache_read'),
      cacheWrite: tokens(details, refuseDetail, 'cache_creation'),
      output: tokens(usage, refuse, 'output_tokens'),
    });
  });
  return sumCalls(calls, file);
}

/**
 * Codex writes an `event_msg` `token_count` after each model call, its `info.last_token_usage` that call's usage in
 * the Responses API's terms: `input_tokens` includes the cached part (`cached_input_tokens`, the reads; OpenAI reports
 * no cache writes), `output_tokens` includes the reasoning tokens (`total_tokens` is their sum). Codex repeats the
 * event without a new call (its `total_token_usage`, cumulative for the session, is then unchanged): a repeat is left
 * out, and so is an event of no tokens (the marker written after a compaction). Only the calls after the last
 * `compacted` line are read: the replay replays the live history from there, the lines before it being a dead record.
 */
function codexUsage(items: readonly unknown[], file: string): ReplayRecorded | null {
  const calls: CallUsage[] = [];
  let previous: string | null = null;
  let from = 0;
  items.forEach((item, i) => {
    if (isObject(item) && item.type === 'compacted') from = i + 1;
  });
  items.forEach((item, i) => {
    if (i < from) return;
    const payload = isObject(item) && item.type === 'event_msg' ? item.payload : null;
    if (!isObject(payload) || payload.type !== 'token_count' || !isObject(payload.info)) return;
    const last = objectAt(payload.info, 'last_token_usage');
    const total = JSON.stringify(payload.info.total_token_usage ?? null);
    if (last === null || total === previous) return;
    previous = total;
    const refuse = refuser(file, `line ${i + 1}`, 'payload.info.last_token_usage');
    const input = tokens(last, refuse, 'input_tokens');
    const output = tokens(last, refuse, 'output_tokens');
    if (input === 0 && output === 0) return;
    calls.push({ input, cacheRead: tokens(last, refuse, 'cached_input_tokens'), cacheWrite: 0, output });
  });
  return sumCalls(calls, file);
}

/**
 * What the file recorded of its calls' usage, for the formats that record it: Claude Code and Codex sessions, Gemini
 * ADK sessions and LangChain messages. Request bodies and a Responses `input` hold what was sent and no response (a
 * response object is not a Responses input item); an AI SDK message has no usage field (a UI message's `metadata`
 * is the app's own); a Haystack message's `meta.usage` is what its generator copied from its provider, in that
 * provider's field names, so it is not read.
 * @param format the adapter's name
 * @param items the conversation's items as the file holds them
 * @param container the object around the list (an ADK session), or null for a bare list
 * @param file how errors name the file
 * @returns the recorded figures, or null where the file records none
 * @throws InputError for a count that is not a whole number of tokens, or sums past 2^53 - 1
 */
export function recordedUsage(
  format: string,
  items: readonly unknown[],
  container: Readonly<Record<string, unknown>> | null = null,
  file = 'messages',
): ReplayRecorded | null {
  switch (format) {
    case 'claude-code':
      return claudeCodeUsage(items, file);
    case 'codex':
      return codexUsage(items, file);
    case 'gemini':
      return geminiUsage(items, container, file);
    case 'langchain':
      return langchainUsage(items, file);
    default:
      return null;
  }
}
