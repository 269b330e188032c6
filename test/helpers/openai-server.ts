/**
 * A local OpenAI-compatible chat completions server for tests and the benchmark: real HTTP on 127.0.0.1 (port 0),
 * deterministic answers, scripted failures (429 with Retry-After, 5xx, a hang, malformed JSON, empty `choices`, any
 * raw answer, a request held until the test lets it go), optional latency, and a record of every request (headers without the key, body) and of the most
 * requests it held at once.
 *
 *   const server = await startOpenAiServer({ apiKey: 'sk-test' });
 *   server.script({ kind: 'status', status: 429, retryAfter: '2' }); // the next request gets this, then answers
 *   ... createEndpointSummarizer({ baseUrl: server.url, model: 'm', apiKey: 'sk-test', ... })
 *   expect(server.requests).toHaveLength(2);
 *   await server.close();
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the server does with one request. */
export type Behaviour =
  /** A completion. `text` defaults to the server's answer; `parts` sends content as an array of text parts; `usage: null` leaves usage out. */
  | {
      readonly kind: 'reply';
      readonly text?: string;
      readonly parts?: boolean;
      readonly usage?: { readonly prompt_tokens: number; readonly completion_tokens: number } | null;
    }
  /** An error status with an OpenAI-style error body (`message`), and Retry-After / retry-after-ms when given. */
  | {
      readonly kind: 'status';
      readonly status: number;
      readonly message?: string;
      readonly retryAfter?: string;
      readonly retryAfterMs?: string;
    }
  /** Never answers (the connection stays open until the client gives up or the server closes). */
  | { readonly kind: 'hang' }
  /** Status 200 with a body that is not JSON. */
  | { readonly kind: 'malformed' }
  /** Status 200 with `choices: []`. */
  | { readonly kind: 'empty-choices' }
  /** Holds the request until `until` settles, then behaves as `then` (a reply by default): for tests of what is in flight at once. */
  | { readonly kind: 'wait'; readonly until: Promise<unknown>; readonly then?: Behaviour }
  /** Anything else, byte for byte. */
  | {
      readonly kind: 'raw';
      readonly status: number;
      readonly headers?: Readonly<Record<string, string>>;
      readonly body: string;
    };

/** The parts of a chat completions request the answers are made from. */
export interface ChatRequest {
  readonly model: string;
  readonly system: string;
  readonly user: string;
}

/** One request as the server saw it. */
export interface RecordedRequest {
  /** 0 for the first request the server received. */
  readonly index: number;
  readonly method: string;
  /** Path and query, as sent. */
  readonly path: string;
  /** Lower-case header names; `authorization` is left out. */
  readonly headers: Readonly<Record<string, string>>;
  /** `key` when Authorization was `Bearer <the server's apiKey>`, `other` for any other value, `none` without one. */
  readonly authorization: 'none' | 'key' | 'other';
  /** The body parsed as JSON, or undefined when it was not JSON. */
  readonly body: unknown;
  /** The body as text. */
  readonly raw: string;
}

export interface OpenAiServerOptions {
  /** The text of a completion not scripted otherwise; defaults to `defaultAnswer`. */
  readonly answer?: (request: ChatRequest, index: number) => string;
  /** Chooses a behaviour per request (after the script is used up); undefined falls back to a reply. */
  readonly behave?: (request: RecordedRequest, index: number) => Behaviour | undefined;
  /** Milliseconds every request waits before it is answered (not applied to hangs). */
  readonly latencyMs?: number;
  /** When set, a request without `Authorization: Bearer <apiKey>` gets 401, as OpenAI answers. */
  readonly apiKey?: string;
}

export interface OpenAiServer {
  /** `http://127.0.0.1:<port>`, without a trailing slash or /v1 (the server answers on both /chat/completions and /v1/chat/completions). */
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** Requests being handled now. */
  readonly inFlight: number;
  /** The most requests handled at once since the start (or the last reset). */
  readonly maxInFlight: number;
  /** Queues behaviours for the next requests, in order of arrival. */
  script(...behaviours: Behaviour[]): void;
  /** Forgets the requests, the script and the in-flight peak. */
  reset(): void;
  close(): Promise<void>;
}

/** The default answer: a deterministic function of the prompt, so concurrent calls get the same texts in any order. */
export function defaultAnswer(request: ChatRequest): string {
  const digest = createHash('sha256').update(`${request.system}\u0000${request.user}`).digest('hex').slice(0, 12);
  return `summary ${digest}`;
}

/** Approximate token figures for usage: 4 characters a token, rounded up. */
const tokensOf = (text: string): number => Math.ceil(text.length / 4);

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The system and user texts of a request body (empty when absent). */
function chatRequestOf(body: unknown): ChatRequest {
  const b = (typeof body === 'object' && body !== null ? body : {}) as { model?: unknown; messages?: unknown };
  const messages = Array.isArray(b.messages) ? (b.messages as Array<{ role?: unknown; content?: unknown }>) : [];
  const textOf = (role: string): string => {
    const m = messages.find((x) => x.role === role);
    return typeof m?.content === 'string' ? m.content : '';
  };
  return { model: typeof b.model === 'string' ? b.model : '', system: textOf('system'), user: textOf('user') };
}

/**
 * Starts the server on 127.0.0.1 at a free port.
 * @param options answers, per-request behaviours, latency and the key it requires
 * @returns the running server; close it in afterAll / afterEach
 */
export async function startOpenAiServer(options: OpenAiServerOptions = {}): Promise<OpenAiServer> {
  const requests: RecordedRequest[] = [];
  let queue: Behaviour[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const answer = options.answer ?? defaultAnswer;

  const send = (
    res: ServerResponse,
    status: number,
    body: string,
    headers: Record<string, string> = { 'content-type': 'application/json' },
  ): void => {
    if (res.destroyed) return;
    res.writeHead(status, headers);
    res.end(body);
  };

  const respond = (res: ServerResponse, behaviour: Behaviour, chat: ChatRequest, index: number): void => {
    switch (behaviour.kind) {
      case 'hang':
        return;
      case 'wait': {
        const go = (): void => respond(res, behaviour.then ?? { kind: 'reply' }, chat, index);
        void behaviour.until.then(go, go);
        return;
      }
      case 'malformed':
        return send(res, 200, '{"id": "chatcmpl-x", "choices": [');
      case 'empty-choices':
        return send(res, 200, JSON.stringify({ id: `chatcmpl-${index}`, object: 'chat.completion', choices: [] }));
      case 'raw':
        return send(res, behaviour.status, behaviour.body, { ...behaviour.headers });
      case 'status': {
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (behaviour.retryAfter !== undefined) headers['retry-after'] = behaviour.retryAfter;
        if (behaviour.retryAfterMs !== undefined) headers['retry-after-ms'] = behaviour.retryAfterMs;
        const message = behaviour.message ?? `status ${behaviour.status}`;
        return send(
          res,
          behaviour.status,
          JSON.stringify({ error: { message, type: 'test_error', code: null } }),
          headers,
        );
      }
      case 'reply': {
        const text = behaviour.text ?? answer(chat, index);
        const content = behaviour.parts === true ? [{ type: 'text', text }] : text;
        const usage =
          behaviour.usage === null
            ? undefined
            : (behaviour.usage ?? {
                prompt_tokens: tokensOf(chat.system) + tokensOf(chat.user),
                completion_tokens: tokensOf(text),
              });
        const body = {
          id: `chatcmpl-${index}`,
          object: 'chat.completion',
          created: 0,
          model: chat.model,
          choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
          ...(usage === undefined
            ? {}
            : { usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } }),
        };
        return send(res, 200, JSON.stringify(body));
      }
    }
  };

  const server = createServer((req, res) => {
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    res.on('close', () => {
      inFlight -= 1;
    });
    void readBody(req).then((raw) => {
      const index = requests.length;
      const { authorization, ...rest } = req.headers;
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(rest))
        if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
      const auth: RecordedRequest['authorization'] =
        authorization === undefined
          ? 'none'
          : options.apiKey !== undefined && authorization === `Bearer ${options.apiKey}`
            ? 'key'
            : 'other';
      const body = parseJson(raw);
      const recorded: RecordedRequest = {
        index,
        method: req.method ?? '',
        path: req.url ?? '',
        headers,
        authorization: auth,
        body,
        raw,
      };
      requests.push(recorded);
      const pathname = (req.url ?? '').split('?')[0] ?? '';
      let behaviour: Behaviour;
      if (req.method !== 'POST' || !/^(\/v1)?\/chat\/completions$/.test(pathname)) {
        behaviour = { kind: 'status', status: 404, message: `no route ${req.method ?? ''} ${pathname}` };
      } else if (options.apiKey !== undefined && auth !== 'key') {
        behaviour = { kind: 'status', status: 401, message: 'Incorrect API key provided.' };
      } else {
        behaviour = queue.shift() ?? options.behave?.(recorded, index) ?? { kind: 'reply' };
      }
      const chat = chatRequestOf(body);
      const latency = behaviour.kind === 'hang' || behaviour.kind === 'wait' ? 0 : (options.latencyMs ?? 0);
      if (latency > 0) setTimeout(() => respond(res, behaviour, chat, index), latency);
      else respond(res, behaviour, chat, index);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    get inFlight() {
      return inFlight;
    },
    get maxInFlight() {
      return maxInFlight;
    },
    script(...behaviours) {
      queue.push(...behaviours);
    },
    reset() {
      requests.length = 0;
      queue = [];
      maxInFlight = inFlight;
    },
    close() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
