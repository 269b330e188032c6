/**
 * The endpoint client through real HTTP against the local OpenAI-compatible server: the request it sends, the replies
 * it reads, what it retries (and how long it waits, recorded through the sleep seam), what it refuses at once, its
 * timeout, and that the key never shows in an error.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { UsageError } from '../../../src/errors.js';
import {
  backoffMs,
  chatCompletionsUrl,
  createEndpointSummarizer,
  INITIAL_BACKOFF_MS,
  MAX_BACKOFF_MS,
  retryAfterMs,
  type EndpointOptions,
} from '../../../src/io/model/endpoint.js';
import { defaultAnswer, startOpenAiServer, type OpenAiServer } from '../../helpers/openai-server.js';
import { failureOf } from '../../helpers/processes.js';

const KEY = 'sk-test-0123456789abcdef-SECRET';
const REQUEST = {
  system: 'Summarize the conversation.',
  user: '<conversation_to_summarize>\nuser: hello\n</conversation_to_summarize>',
};

let server: OpenAiServer;
beforeAll(async () => {
  server = await startOpenAiServer({ apiKey: KEY });
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => server.reset());

/** A client of the test server whose waits are recorded, not waited. */
function client(extra: Partial<EndpointOptions> = {}): {
  summarize: ReturnType<typeof createEndpointSummarizer>;
  waits: number[];
} {
  const waits: number[] = [];
  const summarize = createEndpointSummarizer({
    baseUrl: `${server.url}/v1`,
    model: 'test-model',
    apiKey: KEY,
    timeoutMs: 5_000,
    retries: 3,
    sleep: async (ms) => {
      waits.push(ms);
    },
    random: () => 0,
    ...extra,
  });
  return { summarize, waits };
}

describe('the request', () => {
  it('posts the model and the system and user messages to {base}/chat/completions with the key as a Bearer token', async () => {
    const reply = await client().summarize(REQUEST);
    expect(server.requests).toHaveLength(1);
    const [req] = server.requests;
    expect(req?.method).toBe('POST');
    expect(req?.path).toBe('/v1/chat/completions');
    expect(req?.authorization).toBe('key');
    expect(req?.headers['content-type']).toBe('application/json');
    expect(req?.body).toEqual({
      model: 'test-model',
      messages: [
        { role: 'system', content: REQUEST.system },
        { role: 'user', content: REQUEST.user },
      ],
    });
    expect(reply.text).toBe(defaultAnswer({ model: 'test-model', ...REQUEST }));
  });

  it.each([
    ['http://h:1', 'http://h:1/chat/completions'],
    ['http://h:1/', 'http://h:1/chat/completions'],
    ['http://h:1/v1', 'http://h:1/v1/chat/completions'],
    ['http://h:1/v1/', 'http://h:1/v1/chat/completions'],
    ['http://h:1/v1//', 'http://h:1/v1/chat/completions'],
    ['http://h:1/v1/chat/completions', 'http://h:1/v1/chat/completions'],
    [
      'https://r.openai.azure.com/openai/v1/?api-version=preview',
      'https://r.openai.azure.com/openai/v1/chat/completions?api-version=preview',
    ],
  ])('resolves the base %s to %s', (base, url) => {
    expect(chatCompletionsUrl(base).href).toBe(url);
  });

  it('reaches the server with a base without /v1 and with a trailing slash', async () => {
    await client({ baseUrl: `${server.url}/` }).summarize(REQUEST);
    expect(server.requests.map((r) => r.path)).toEqual(['/chat/completions']);
  });

  it('sends no Authorization header without a key, nor with an empty one', async () => {
    const open = await startOpenAiServer();
    try {
      await client({ baseUrl: open.url, apiKey: undefined }).summarize(REQUEST);
      await client({ baseUrl: open.url, apiKey: '' }).summarize(REQUEST);
      expect(open.requests.map((r) => r.authorization)).toEqual(['none', 'none']);
    } finally {
      await open.close();
    }
  });

  it.each(['ftp://h/v1', 'not a url', 'http://user:pass@h/v1', `https://${KEY}@h/v1`])(
    'refuses the base %s before any call',
    (base) => {
      expect(() => client({ baseUrl: base })).toThrow(UsageError);
      try {
        client({ baseUrl: base });
      } catch (error) {
        expect(String((error as Error).message)).not.toContain('pass@');
      }
    },
  );
});

describe('the reply', () => {
  it('takes the text of choices[0].message.content, trimmed, and the usage figures', async () => {
    server.script({ kind: 'reply', text: '  the summary \n', usage: { prompt_tokens: 120, completion_tokens: 7 } });
    expect(await client().summarize(REQUEST)).toEqual({ text: 'the summary', usage: { input: 120, output: 7 } });
  });

  it('reads content given as an array of text parts', async () => {
    server.script({ kind: 'reply', text: 'from parts', parts: true });
    expect((await client().summarize(REQUEST)).text).toBe('from parts');
  });

  it('leaves usage out when the endpoint does not report it', async () => {
    server.script({ kind: 'reply', text: 'no usage', usage: null });
    expect(await client().summarize(REQUEST)).toEqual({ text: 'no usage' });
  });

  it.each([
    ['a fraction', { prompt_tokens: 120.5, completion_tokens: 7 }],
    ['beyond a safe integer', { prompt_tokens: 1e308, completion_tokens: 7 }],
    ['negative', { prompt_tokens: 120, completion_tokens: -1 }],
  ])('leaves usage out when a count is %s: it cannot be a number of tokens', async (_name, usage) => {
    server.script({ kind: 'reply', text: 'odd usage', usage });
    expect(await client().summarize(REQUEST)).toEqual({ text: 'odd usage' });
  });

  it('returns a reply longer than its prompt as it is (whether it helps is the decision’s business)', async () => {
    const long = 'word '.repeat(20_000).trim();
    server.script({ kind: 'reply', text: long });
    expect((await client().summarize(REQUEST)).text).toBe(long);
  });

  it('fails, without retrying, on an answer larger than the limit, reading no more of it', async () => {
    server.script({ kind: 'reply', text: 'x'.repeat(50_000) });
    const { summarize, waits } = client({ maxResponseBytes: 10_000 });
    const error = await failureOf(summarize(REQUEST));
    expect(error.reason).toMatch(/answered 200 with more than 10000 bytes$/);
    expect(waits).toEqual([]);
  });

  it.each([
    ['malformed JSON', { kind: 'malformed' } as const, /not JSON/],
    ['empty choices', { kind: 'empty-choices' } as const, /no choices/],
    ['an empty content', { kind: 'reply', text: '   ' } as const, /empty summary/],
    [
      'a null content',
      {
        kind: 'raw',
        status: 200,
        body: JSON.stringify({ choices: [{ message: { content: null }, finish_reason: 'length' }] }),
      } as const,
      /empty summary \(finish_reason length\)/,
    ],
    ['no message', { kind: 'raw', status: 200, body: JSON.stringify({ choices: [{}] }) } as const, /empty summary/],
    [
      'a refusal',
      {
        kind: 'raw',
        status: 200,
        body: JSON.stringify({ choices: [{ message: { content: null, refusal: 'I cannot help.' } }] }),
      } as const,
      /refused: I cannot help\./,
    ],
    [
      'an error object with status 200',
      { kind: 'raw', status: 200, body: JSON.stringify({ error: { message: 'quota exceeded' } }) } as const,
      /no choices \(quota exceeded\)/,
    ],
  ])('fails at once, without retrying, on %s', async (_name, behaviour, reason) => {
    server.script(behaviour);
    const { summarize, waits } = client();
    const error = await failureOf(summarize(REQUEST));
    expect(error.reason).toMatch(reason);
    expect(error.reason).not.toContain('\n');
    expect(server.requests).toHaveLength(1);
    expect(waits).toEqual([]);
  });
});

describe('retries', () => {
  it('retries a 429 after the seconds Retry-After gives, then returns the answer', async () => {
    server.script(
      { kind: 'status', status: 429, retryAfter: '2' },
      { kind: 'status', status: 429, retryAfter: '0.25' },
    );
    const { summarize, waits } = client();
    expect((await summarize(REQUEST)).text).toMatch(/^summary /);
    expect(waits).toEqual([2000, 250]);
    expect(server.requests).toHaveLength(3);
  });

  it('honours a Retry-After given as an HTTP date', async () => {
    const now = Date.UTC(2026, 0, 1, 12, 0, 0);
    server.script({ kind: 'status', status: 503, retryAfter: new Date(now + 7_000).toUTCString() });
    const { summarize, waits } = client({ now: () => now });
    await summarize(REQUEST);
    expect(waits).toEqual([7000]);
  });

  it('prefers retry-after-ms when the server sends it', async () => {
    server.script({ kind: 'status', status: 429, retryAfter: '3', retryAfterMs: '1500' });
    const { summarize, waits } = client();
    await summarize(REQUEST);
    expect(waits).toEqual([1500]);
  });

  it('backs off exponentially on a 5xx without Retry-After and gives up after the retries, saying how many attempts', async () => {
    server.script(
      ...Array.from({ length: 4 }, () => ({ kind: 'status', status: 500, message: 'upstream broke' }) as const),
    );
    const { summarize, waits } = client();
    const error = await failureOf(summarize(REQUEST));
    expect(waits).toEqual([INITIAL_BACKOFF_MS, 2 * INITIAL_BACKOFF_MS, 4 * INITIAL_BACKOFF_MS]);
    expect(server.requests).toHaveLength(4);
    expect(error.reason).toBe(
      `model endpoint ${server.url}/v1/chat/completions answered 500: upstream broke (4 attempts)`,
    );
  });

  it('makes exactly 1 + retries attempts', async () => {
    for (const retries of [0, 1, 5]) {
      server.reset();
      server.script(...Array.from({ length: retries + 1 }, () => ({ kind: 'status', status: 502 }) as const));
      const { summarize, waits } = client({ retries });
      await failureOf(summarize(REQUEST));
      expect(server.requests).toHaveLength(retries + 1);
      expect(waits).toHaveLength(retries);
    }
  });

  it('does not wait for a server that asks for more than a minute', async () => {
    server.script({ kind: 'status', status: 429, retryAfter: '3600', message: 'rate limited' });
    const { summarize, waits } = client();
    const error = await failureOf(summarize(REQUEST));
    expect(waits).toEqual([]);
    expect(server.requests).toHaveLength(1);
    expect(error.reason).toMatch(/answered 429: rate limited \(1 attempt; it asked to retry after 3600 s/);
  });

  it.each([400, 401, 403, 404, 422])('does not retry a %i', async (status) => {
    server.script({ kind: 'status', status, message: 'model not found' });
    const { summarize, waits } = client();
    const error = await failureOf(summarize(REQUEST));
    expect(error.reason).toBe(`model endpoint ${server.url}/v1/chat/completions answered ${status}: model not found`);
    expect(server.requests).toHaveLength(1);
    expect(waits).toEqual([]);
  });

  it('quotes a long server message only in part, on one line', async () => {
    server.script({ kind: 'status', status: 400, message: `bad\nrequest ${'x'.repeat(1000)}` });
    const error = await failureOf(client().summarize(REQUEST));
    expect(error.reason).toMatch(/answered 400: bad request x+…$/);
    expect(error.reason.length).toBeLessThan(320);
  });

  it('retries a connection refused, and names it', async () => {
    const gone = await startOpenAiServer();
    const url = gone.url;
    await gone.close();
    const { summarize, waits } = client({ baseUrl: url, retries: 2 });
    const error = await failureOf(summarize(REQUEST));
    expect(error.reason).toMatch(/could not be reached: .*ECONNREFUSED.* \(3 attempts\)$/);
    expect(waits).toHaveLength(2);
  });

  it('does not follow a redirect (it would carry the key elsewhere)', async () => {
    const elsewhere = await startOpenAiServer();
    try {
      server.script({
        kind: 'raw',
        status: 307,
        headers: { location: `${elsewhere.url}/v1/chat/completions` },
        body: '',
      });
      const error = await failureOf(client().summarize(REQUEST));
      expect(error.reason).toMatch(/answered 307 \(a redirect, not followed/);
      expect(elsewhere.requests).toHaveLength(0);
    } finally {
      await elsewhere.close();
    }
  });

  it('waits within [75 %, 100 %] of an exponential step capped at 8 s', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 30 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (retry, r) => {
          const full = Math.min(MAX_BACKOFF_MS, INITIAL_BACKOFF_MS * 2 ** (retry - 1));
          const wait = backoffMs(retry, r);
          return wait <= full && wait >= Math.floor(full * 0.75);
        },
      ),
    );
  });

  it('reads Retry-After as seconds, an HTTP date or retry-after-ms, and ignores anything else', () => {
    const now = Date.UTC(2026, 0, 1);
    const h = (entries: Record<string, string>): Headers => new Headers(entries);
    expect(retryAfterMs(h({ 'retry-after': '5' }), now)).toBe(5000);
    expect(retryAfterMs(h({ 'retry-after': '0' }), now)).toBe(0);
    expect(retryAfterMs(h({ 'retry-after': new Date(now - 5000).toUTCString() }), now)).toBe(0);
    expect(retryAfterMs(h({ 'retry-after': 'soon' }), now)).toBeUndefined();
    expect(retryAfterMs(h({ 'retry-after': '-3' }), now)).toBeUndefined();
    expect(retryAfterMs(h({ 'retry-after-ms': 'x', 'retry-after': '1' }), now)).toBe(1000);
    expect(retryAfterMs(h({}), now)).toBeUndefined();
  });
});

describe('the timeout', () => {
  it('gives up on a server that hangs past the timeout, and retries it like a busy one', async () => {
    server.script({ kind: 'hang' }, { kind: 'hang' });
    const { summarize, waits } = client({ timeoutMs: 150, retries: 1 });
    const error = await failureOf(summarize(REQUEST));
    expect(error.reason).toMatch(/gave no answer within 150 ms \(2 attempts\)$/);
    expect(server.requests).toHaveLength(2);
    expect(waits).toHaveLength(1);
  });

  it('answers from the next attempt after one that hung', async () => {
    server.script({ kind: 'hang' });
    const { summarize } = client({ timeoutMs: 150, retries: 1 });
    expect((await summarize(REQUEST)).text).toMatch(/^summary /);
  });

  it('stops when the run is stopped, without more attempts', async () => {
    server.script({ kind: 'hang' });
    const controller = new AbortController();
    const { summarize, waits } = client({ signal: controller.signal });
    const call = summarize(REQUEST);
    while (server.requests.length === 0) await new Promise((resolve) => setImmediate(resolve));
    controller.abort();
    const error = await failureOf(call);
    expect(error.reason).toMatch(/call stopped$/);
    expect(waits).toEqual([]);
  });
});

describe('the key', () => {
  it('never appears in an error, even when the server quotes it back', async () => {
    const echo = `Incorrect API key provided: ${KEY}. You can find your API key at https://example.com.`;
    const cases = [
      { kind: 'status', status: 401, message: echo },
      { kind: 'raw', status: 400, body: `plain text error mentioning Bearer ${KEY}` },
      { kind: 'raw', status: 200, body: JSON.stringify({ error: { message: echo } }) },
      { kind: 'raw', status: 200, body: JSON.stringify({ choices: [{ message: { content: '', refusal: echo } }] }) },
    ] as const;
    for (const behaviour of cases) {
      server.script(behaviour);
      const error = await failureOf(client().summarize(REQUEST));
      for (const text of [error.reason, error.message, String(error), error.stack ?? '', JSON.stringify(error)]) {
        expect(text).not.toContain(KEY);
      }
      expect(error.reason).toContain('***');
    }
  });

  it('is not sent to a server when the URL would put it in the query or user info', () => {
    expect(() => client({ baseUrl: `http://${KEY}:x@127.0.0.1:1/v1` })).toThrow(UsageError);
  });
});
