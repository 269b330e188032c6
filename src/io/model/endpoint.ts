/**
 * Summaries from an OpenAI-compatible chat completions endpoint (OpenAI, Azure's v1 API, OpenRouter, LiteLLM, vLLM,
 * llama.cpp's server, Ollama, LM Studio): one POST `{base}/chat/completions` with the system and user messages, the
 * key as a Bearer token when there is one. 429, 408, 5xx, network errors and timeouts are retried a bounded number of
 * times with exponential backoff and jitter, honouring Retry-After; anything else is a SummaryCallError at once.
 * The key never appears in an error: every reason is scrubbed of it before it leaves this module.
 */
import { SummaryCallError, UsageError } from '../../errors.js';
import { realSleep, type Sleep, type SummaryReply, type Summarizer } from './types.js';

export interface EndpointOptions {
  /** The API base, as OPENAI_BASE_URL holds it (`https://api.openai.com/v1`, `http://localhost:11434/v1`); a trailing slash or a full `…/chat/completions` URL also work. */
  readonly baseUrl: string;
  readonly model: string;
  /** Sent as `Authorization: Bearer <apiKey>` when given (the CLI reads OPENAI_API_KEY). */
  readonly apiKey?: string;
  /** Each attempt's limit, from sending the request to the last byte of the answer. Default 60 s. */
  readonly timeoutMs?: number;
  /** Retries after the first attempt, for 408, 429, 5xx, network errors and timeouts. Default 3. */
  readonly retries?: number;
  /** Stops the call (and its waits between attempts); the call then fails with "stopped". */
  readonly signal?: AbortSignal;
  readonly fetchImpl?: typeof fetch;
  readonly sleep?: Sleep;
  /** Jitter's source, in [0, 1). */
  readonly random?: () => number;
  /** The clock a Retry-After date is compared with. */
  readonly now?: () => number;
  /** A longer answer is no summary: the call fails instead of holding it all in memory. Default 32 MB. */
  readonly maxResponseBytes?: number;
}

export const DEFAULT_TIMEOUT_MS = 60_000;
export const DEFAULT_RETRIES = 3;
/** The first retry waits about this long, each next one twice as long, up to MAX_BACKOFF_MS (openai-python's figures). */
export const INITIAL_BACKOFF_MS = 500;
export const MAX_BACKOFF_MS = 8_000;
/** A wait is shortened by up to this share at random, so many clients told to slow down do not come back together. */
export const JITTER = 0.25;
/** A server asking to wait longer than this is not waited for: the call fails and says how long it asked for. */
export const MAX_RETRY_AFTER_MS = 60_000;
export const MAX_RESPONSE_BYTES = 32 * 1024 * 1024;
/** How much of a server's error message a reason quotes. */
const MAX_MESSAGE_CHARS = 200;

/** Statuses worth another attempt: the server is busy, overloaded or failed on its side. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || (status >= 500 && status <= 599);
}

/**
 * The chat completions URL of a base: `{base}/chat/completions`, the base's trailing slashes dropped and its query kept
 * (Azure's `?api-version=`); a base that already ends in `/chat/completions` is used as it is.
 * @throws UsageError for anything but an http(s) URL, or one holding a user name or password
 */
export function chatCompletionsUrl(baseUrl: string): URL {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new UsageError(`the model base URL is not a URL: ${JSON.stringify(baseUrl)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`the model base URL must start with http:// or https://, not ${JSON.stringify(url.protocol)}`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new UsageError(
      'the model base URL must not hold a user name or password (the key is read from OPENAI_API_KEY)',
    );
  }
  const trimmed = url.pathname.replace(/\/+$/, '');
  url.pathname = /\/chat\/completions$/.test(trimmed) ? trimmed : `${trimmed}/chat/completions`;
  url.hash = '';
  return url;
}

/** How a URL is named in a reason: scheme, host and path, never the query (it may carry a key). */
function displayOf(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

/**
 * The wait a response asks for: `retry-after-ms` (OpenAI's), else `Retry-After` in seconds or as an HTTP date.
 * @returns milliseconds (0 for a date already past), or undefined when there is no usable header
 */
export function retryAfterMs(headers: Headers, now: number): number | undefined {
  const ms = headers.get('retry-after-ms');
  if (ms !== null && /^\s*\d+(\.\d+)?\s*$/.test(ms)) return Math.ceil(Number(ms));
  const value = headers.get('retry-after');
  if (value === null) return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(value)) return Math.ceil(Number(value) * 1000);
  // An HTTP date names its day and month; without a letter the value is no date (Date.parse reads '-3' as a year).
  if (!/[a-z]/i.test(value)) return undefined;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * The wait before retry number `retry` (1 for the first) when the server did not say: exponential, capped, jittered.
 * @param random a number in [0, 1)
 */
export function backoffMs(retry: number, random: number): number {
  const full = Math.min(MAX_BACKOFF_MS, INITIAL_BACKOFF_MS * 2 ** (retry - 1));
  return Math.round(full * (1 - JITTER * random));
}

/** Whitespace collapsed to one line and cut at MAX_MESSAGE_CHARS, for quoting a server's words. */
function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > MAX_MESSAGE_CHARS ? `${line.slice(0, MAX_MESSAGE_CHARS)}…` : line;
}

/** The message of an error body (`{error: {message}}`, `{error: "…"}`, `{message}`, `{detail}`), or a short plain-text body. */
function serverMessage(body: string): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    const text = body.trim();
    return text === '' || text.startsWith('<') ? undefined : oneLine(text);
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const p = parsed as { error?: unknown; message?: unknown; detail?: unknown };
  const inner = typeof p.error === 'object' && p.error !== null ? (p.error as { message?: unknown }).message : p.error;
  for (const candidate of [inner, p.message, p.detail])
    if (typeof candidate === 'string' && candidate.trim() !== '') return oneLine(candidate);
  return undefined;
}

/** The reply's text: `content` as a string, or the text parts of a content array joined. */
function contentText(content: unknown): string | undefined {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  const texts = content
    .filter(
      (part): part is { text: string } =>
        typeof part === 'object' &&
        part !== null &&
        typeof (part as { text?: unknown }).text === 'string' &&
        ((part as { type?: unknown }).type ?? 'text') === 'text',
    )
    .map((part) => part.text);
  return texts.length === 0 ? undefined : texts.join('');
}

/** The body as text, or undefined once it passes `limit` bytes (the rest is not read). */
async function readCapped(response: Response, limit: number): Promise<string | undefined> {
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** A token count: a whole number a sum of them can still hold exactly (a fraction or 1e308 is no count). */
const isCount = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0 && (v as number) < 2 ** 40;

type Attempt =
  | { readonly kind: 'ok'; readonly reply: SummaryReply }
  | { readonly kind: 'retry'; readonly reason: string; readonly waitMs?: number }
  | { readonly kind: 'fail'; readonly reason: string };

/** What a 2xx body says: the reply, or why it is not one (never retried: the same request would get the same). */
function readCompletion(body: string): Attempt {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { kind: 'fail', reason: 'answered with a body that is not JSON' };
  }
  const p = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as { choices?: unknown; usage?: unknown };
  const first: unknown = Array.isArray(p.choices) ? p.choices[0] : undefined;
  if (typeof first !== 'object' || first === null) {
    const said = serverMessage(body);
    return {
      kind: 'fail',
      reason: `answered no choices${said !== undefined && !Array.isArray(p.choices) ? ` (${said})` : ''}`,
    };
  }
  const choice = first as { message?: { content?: unknown; refusal?: unknown }; finish_reason?: unknown };
  const text = contentText(choice.message?.content)?.trim();
  if (text === undefined || text === '') {
    const refusal = choice.message?.refusal;
    if (typeof refusal === 'string' && refusal.trim() !== '')
      return { kind: 'fail', reason: `refused: ${oneLine(refusal)}` };
    const finish = typeof choice.finish_reason === 'string' ? ` (finish_reason ${oneLine(choice.finish_reason)})` : '';
    return { kind: 'fail', reason: `answered an empty summary${finish}` };
  }
  const usage = (typeof p.usage === 'object' && p.usage !== null ? p.usage : {}) as {
    prompt_tokens?: unknown;
    completion_tokens?: unknown;
  };
  return isCount(usage.prompt_tokens) && isCount(usage.completion_tokens)
    ? { kind: 'ok', reply: { text, usage: { input: usage.prompt_tokens, output: usage.completion_tokens } } }
    : { kind: 'ok', reply: { text } };
}

/** The code or message of a network error (undici's `fetch failed` hides it in `cause`). */
function networkReason(error: unknown): string {
  const cause = (error as { cause?: unknown } | null)?.cause ?? error;
  const c = cause as { code?: unknown; message?: unknown } | null;
  const code = typeof c?.code === 'string' ? c.code : undefined;
  const message = typeof c?.message === 'string' ? oneLine(c.message) : String(cause);
  return `could not be reached: ${code !== undefined && !message.includes(code) ? `${code} ` : ''}${message}`;
}

/**
 * A Summarizer that asks an OpenAI-compatible endpoint.
 * @param options the endpoint, model, key, limits and test seams
 * @returns the summarizer; a failed call throws SummaryCallError with a one-line reason
 * @throws UsageError at once for a base URL that cannot be used, or limits that are not numbers in range
 */
export function createEndpointSummarizer(options: EndpointOptions): Summarizer {
  const url = chatCompletionsUrl(options.baseUrl);
  const display = displayOf(url);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const retries = options.retries ?? DEFAULT_RETRIES;
  if (!(Number.isFinite(timeoutMs) && timeoutMs > 0))
    throw new UsageError(`the model timeout must be a positive number of milliseconds, not ${String(timeoutMs)}`);
  if (!(Number.isInteger(retries) && retries >= 0))
    throw new UsageError(`the model retries must be a whole number from 0, not ${String(retries)}`);
  if (options.model.trim() === '') throw new UsageError('the model name is empty');
  const fetchImpl = options.fetchImpl ?? fetch;
  const sleep = options.sleep ?? realSleep;
  const random = options.random ?? Math.random;
  const now = options.now ?? Date.now;
  const maxResponseBytes = options.maxResponseBytes ?? MAX_RESPONSE_BYTES;
  const key = options.apiKey !== undefined && options.apiKey !== '' ? options.apiKey : undefined;
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (key !== undefined) headers.authorization = `Bearer ${key}`;

  /** Every reason passes here: the key, should a server or a library echo it, becomes `***`. */
  const scrub = (reason: string): string => (key === undefined ? reason : reason.split(key).join('***'));
  const fail = (reason: string): SummaryCallError => new SummaryCallError(scrub(`model endpoint ${display} ${reason}`));

  const attempt = async (body: string): Promise<Attempt> => {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const stop = (): void => controller.abort();
    options.signal?.addEventListener('abort', stop, { once: true });
    try {
      const response = await fetchImpl(url, {
        method: 'POST',
        headers,
        body,
        signal: controller.signal,
        redirect: 'manual',
      });
      const text = await readCapped(response, maxResponseBytes);
      if (text === undefined)
        return { kind: 'fail', reason: `answered ${response.status} with more than ${maxResponseBytes} bytes` };
      if (response.status >= 200 && response.status <= 299) return readCompletion(text);
      const said = serverMessage(text);
      const reason = `answered ${response.status}${said !== undefined ? `: ${said}` : ''}`;
      if (response.status >= 300 && response.status <= 399) {
        return { kind: 'fail', reason: `${reason} (a redirect, not followed: give the URL it points to)` };
      }
      if (!isRetryableStatus(response.status)) return { kind: 'fail', reason };
      const wait = retryAfterMs(response.headers, now());
      return wait === undefined ? { kind: 'retry', reason } : { kind: 'retry', reason, waitMs: wait };
    } catch (error) {
      if (options.signal?.aborted === true) return { kind: 'fail', reason: 'call stopped' };
      if (timedOut) return { kind: 'retry', reason: `gave no answer within ${timeoutMs} ms` };
      return { kind: 'retry', reason: networkReason(error) };
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', stop);
    }
  };

  return async ({ system, user }) => {
    const body = JSON.stringify({
      model: options.model,
      messages: [
        { role: 'system', content: system },
        { role: 'user', content: user },
      ],
    });
    for (let retry = 0; ; retry++) {
      if (options.signal?.aborted === true) throw fail('call stopped');
      const outcome = await attempt(body);
      if (outcome.kind === 'ok') return outcome.reply;
      if (outcome.kind === 'fail') throw fail(outcome.reason);
      const attempts = `${retry + 1} attempt${retry === 0 ? '' : 's'}`;
      if (retry >= retries) throw fail(`${outcome.reason} (${attempts})`);
      if (outcome.waitMs !== undefined && outcome.waitMs > MAX_RETRY_AFTER_MS) {
        throw fail(
          `${outcome.reason} (${attempts}; it asked to retry after ${Math.ceil(outcome.waitMs / 1000)} s, longer than the ${MAX_RETRY_AFTER_MS / 1000} s swc waits)`,
        );
      }
      await sleep(outcome.waitMs ?? backoffMs(retry + 1, random()));
    }
  };
}
