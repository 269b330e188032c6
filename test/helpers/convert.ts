/**
 * One conversation, written in every supported format: a small neutral model of a conversation, a seeded random
 * generator for it, and a writer per format that also says which item of the file each message became.
 * Parity tests compact the same conversation in all formats and compare what each kept.
 */
import { DEFAULT_NOTE_TEMPLATE, formatNote } from '../../src/core/note.js';
import { parseJson } from '../../src/core/json/value.js';
import { renderArguments } from '../../src/core/json/python.js';
import { SLIDING_WINDOW, type Message } from '../../src/core/types.js';

export interface RefCall {
  readonly id: string;
  readonly name: string;
  /** Plain JSON data (no float that JSON.stringify would shorten, such as 1.0). */
  readonly args: Record<string, unknown>;
}

export type RefMessage =
  | { readonly role: 'system'; readonly text: string }
  | {
      readonly role: 'user';
      readonly texts: readonly string[];
      readonly images: number;
      readonly files: readonly string[];
      /** A sliding-window note an earlier run left (its text is the default note's). */
      readonly note?: boolean;
    }
  | {
      readonly role: 'assistant';
      readonly text: string | null;
      readonly reasoning: string | null;
      readonly calls: readonly RefCall[];
    }
  | { readonly role: 'tool'; readonly callId: string; readonly name: string; readonly text: string };

export type Conversation = readonly RefMessage[];

export const FORMAT_NAMES = ['openai', 'haystack', 'anthropic', 'responses', 'gemini'] as const;
export type FormatName = (typeof FORMAT_NAMES)[number];

export interface WriteOptions {
  /** One item per line instead of a JSON document (formats with instructions outside the list put them in the list or drop them: see `writeAs`). */
  readonly jsonl?: boolean;
  /** Gemini only: the Python SDK's snake_case spelling. */
  readonly snake?: boolean;
  /** Responses only: typed `{"type": "message"}` items with parts instead of `{role, content: TEXT}`. */
  readonly typed?: boolean;
  /** Anthropic only: `system` as one string instead of text blocks (with one system message). */
  readonly systemString?: boolean;
}

export interface Written {
  readonly text: string;
  /** A file name with the right extension. */
  readonly name: string;
  /** For each message of the conversation, the index of the item it became, or null when held outside the list. */
  readonly itemOf: readonly (number | null)[];
}

const PNG = 'iVBORw0KGgo=';
const PDF = 'JVBERi0xLjQ=';

/** A small seeded generator (mulberry32), so every failure names a seed that reproduces it. */
export function createRng(seed: number): {
  next(): number;
  int(lo: number, hi: number): number;
  pick<T>(items: readonly T[]): T;
  chance(p: number): boolean;
} {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (lo: number, hi: number): number => lo + Math.floor(next() * (hi - lo + 1));
  return {
    next,
    int,
    pick: (items) => items[int(0, items.length - 1)] as (typeof items)[number],
    chance: (p) => next() < p,
  };
}

const WORDS = [
  'alpha',
  'bravo',
  'flight',
  'refund',
  'Zürich',
  'naïve',
  'café',
  '東京',
  '😀',
  'order-123',
  'status',
  'the',
  'a',
  'quote"d',
  'back\\slash',
  'tab\there',
];

function sentence(rng: ReturnType<typeof createRng>, min = 1, max = 40): string {
  const n = rng.int(min, max);
  return Array.from({ length: n }, () => rng.pick(WORDS)).join(rng.chance(0.1) ? '\n' : ' ');
}

function randomArgs(rng: ReturnType<typeof createRng>): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  const n = rng.int(0, 4);
  for (let i = 0; i < n; i++) {
    const key = rng.pick(['query', 'id', 'city', 'nested', 'count', 'flag', 'ratio', 'list', 'Émoji']);
    args[key] = rng.pick<unknown>([
      sentence(rng, 1, 5),
      rng.int(-5, 500),
      rng.chance(0.5),
      null,
      2.5,
      { inner: sentence(rng, 1, 3), z: 1, a: [1, 'x'] },
      [sentence(rng, 1, 2)],
    ]);
  }
  return args;
}

/**
 * A random conversation: leading instructions, turns of a user message and agent steps, the task and its steps.
 * Assistant messages without calls only end a turn (no two assistant messages follow each other), and every
 * call is answered right after its message, in call order.
 */
export function randomConversation(seed: number): Conversation {
  const rng = createRng(seed);
  const out: RefMessage[] = [];
  let callCount = 0;
  const systems = rng.pick([0, 1, 1, 1, 2]);
  for (let i = 0; i < systems; i++) out.push({ role: 'system', text: sentence(rng, 3, 60) });
  const user = (): void => {
    const texts = rng.chance(0.15) ? [sentence(rng), sentence(rng)] : [sentence(rng, 1, 80)];
    const images = rng.chance(0.1) ? rng.int(1, 2) : 0;
    const files = rng.chance(0.08) ? [`report-${rng.int(1, 99)}.pdf`] : [];
    out.push({ role: 'user', texts, images, files });
  };
  const steps = (final: boolean): void => {
    const n = rng.int(0, 5);
    for (let s = 0; s < n; s++) {
      const calls: RefCall[] = Array.from({ length: rng.pick([1, 1, 1, 2, 3]) }, () => ({
        id: `call_${seed}_${callCount++}`,
        name: rng.pick(['search', 'lookup_order', 'get_weather', 'run']),
        args: randomArgs(rng),
      }));
      out.push({
        role: 'assistant',
        text: rng.chance(0.5) ? sentence(rng) : null,
        reasoning: rng.chance(0.3) ? sentence(rng) : null,
        calls,
      });
      for (const call of calls)
        out.push({ role: 'tool', callId: call.id, name: call.name, text: sentence(rng, 1, 120) });
    }
    if (!final || rng.chance(0.5))
      out.push({
        role: 'assistant',
        text: sentence(rng, 1, 60),
        reasoning: rng.chance(0.2) ? sentence(rng) : null,
        calls: [],
      });
  };
  if (rng.chance(0.15))
    out.push({
      role: 'user',
      texts: [formatNote(DEFAULT_NOTE_TEMPLATE, rng.int(1, 30))],
      images: 0,
      files: [],
      note: true,
    });
  // Agents often open with user messages before the first reply (injected context, then the prompt), and a user may
  // send two messages before an answer: each real user message starts a turn.
  if (rng.chance(0.2)) for (let k = rng.int(1, 2); k > 0; k--) user();
  const turns = rng.int(0, 5);
  for (let t = 0; t < turns; t++) {
    user();
    if (rng.chance(0.1)) user();
    steps(false);
  }
  user();
  if (rng.chance(0.1))
    out.push({
      role: 'user',
      texts: [formatNote(DEFAULT_NOTE_TEMPLATE, rng.int(1, 30))],
      images: 0,
      files: [],
      note: true,
    });
  steps(true);
  return out;
}

/**
 * The conversation as the core sees it, built directly (no file, no adapter): the reference every format must match.
 * Tool results each stand alone; formats that put parallel results in one message measure the same text.
 */
export function referenceMessages(conversation: Conversation): Message[] {
  return conversation.map((m): Message => {
    const empty = { texts: [] as string[], toolCalls: [], results: [], images: 0, files: [] as (string | null)[] };
    switch (m.role) {
      case 'system':
        return { role: 'system', content: { ...empty, texts: [m.text] } };
      case 'user':
        return {
          role: 'user',
          compaction: m.note ? SLIDING_WINDOW : undefined,
          content: { ...empty, texts: [...m.texts], images: m.images, files: [...m.files] },
        };
      case 'assistant':
        return {
          role: 'assistant',
          content: {
            ...empty,
            texts: m.text === null ? [] : [m.text],
            toolCalls: m.calls.map((c) => ({
              name: c.name,
              arguments: renderArguments(parseJson(JSON.stringify(c.args))),
            })),
          },
        };
      case 'tool':
        return {
          role: 'tool',
          content: { ...empty, results: [{ name: m.name, text: m.text, error: false, images: 0, files: 0 }] },
        };
    }
  });
}

/** Serializes a list as a JSON document under `key` (with `extra` keys first) or as JSONL. */
function frame(
  items: unknown[],
  options: WriteOptions,
  container: Record<string, unknown> | null,
  key: string,
  base: string,
): { text: string; name: string } {
  if (options.jsonl) return { text: items.map((i) => JSON.stringify(i)).join('\n') + '\n', name: `${base}.jsonl` };
  const doc = container === null ? items : { ...container, [key]: items };
  return { text: JSON.stringify(doc, null, 2) + '\n', name: `${base}.json` };
}

function noteText(m: RefMessage): string | null {
  return m.role === 'user' && m.note ? (m.texts[0] as string) : null;
}

function writeOpenAi(conv: Conversation, options: WriteOptions): Written {
  const items: unknown[] = [];
  const itemOf = conv.map((m) => {
    items.push(
      m.role === 'system'
        ? { role: 'system', content: m.text }
        : m.role === 'user'
          ? {
              role: 'user',
              content:
                m.texts.length === 1 && m.images === 0 && m.files.length === 0
                  ? m.texts[0]
                  : [
                      ...m.texts.map((text) => ({ type: 'text', text })),
                      ...Array.from({ length: m.images }, () => ({
                        type: 'image_url',
                        image_url: { url: `data:image/png;base64,${PNG}` },
                      })),
                      ...m.files.map((filename) => ({
                        type: 'file',
                        file: { filename, file_data: `data:application/pdf;base64,${PDF}` },
                      })),
                    ],
            }
          : m.role === 'assistant'
            ? {
                role: 'assistant',
                content: m.text,
                ...(m.reasoning === null ? {} : { reasoning_content: m.reasoning }),
                ...(m.calls.length === 0
                  ? {}
                  : {
                      tool_calls: m.calls.map((c) => ({
                        id: c.id,
                        type: 'function',
                        function: { name: c.name, arguments: JSON.stringify(c.args) },
                      })),
                    }),
              }
            : { role: 'tool', tool_call_id: m.callId, content: m.text },
    );
    return items.length - 1;
  });
  return { ...frame(items, options, { model: 'gpt-4o' }, 'messages', 'openai'), itemOf };
}

function writeHaystack(conv: Conversation, options: WriteOptions): Written {
  const items: unknown[] = [];
  const itemOf = conv.map((m) => {
    const note = noteText(m);
    const meta =
      note === null
        ? {}
        : { context_compaction: { strategy: 'sliding_window', removed_messages: 1, kept_messages: 1 } };
    const content =
      m.role === 'system'
        ? [{ text: m.text }]
        : m.role === 'user'
          ? [
              ...m.texts.map((text) => ({ text })),
              ...Array.from({ length: m.images }, () => ({
                image: { base64_image: PNG, mime_type: 'image/png', detail: null, meta: {}, validation: true },
              })),
              ...m.files.map((filename) => ({
                file: { base64_data: PDF, mime_type: 'application/pdf', filename, extra: {} },
              })),
            ]
          : m.role === 'assistant'
            ? [
                ...(m.reasoning === null ? [] : [{ reasoning: { reasoning_text: m.reasoning, extra: {} } }]),
                ...(m.text === null ? [] : [{ text: m.text }]),
                ...m.calls.map((c) => ({ tool_call: { tool_name: c.name, arguments: c.args, id: c.id } })),
              ]
            : [
                {
                  tool_call_result: {
                    result: m.text,
                    origin: { tool_name: m.name, arguments: {}, id: m.callId },
                    error: false,
                  },
                },
              ];
    items.push({ role: m.role, meta, name: null, content });
    return items.length - 1;
  });
  return { ...frame(items, options, null, 'messages', 'haystack'), itemOf };
}

function writeAnthropic(conv: Conversation, options: WriteOptions): Written {
  const items: Record<string, unknown>[] = [];
  const system: string[] = [];
  const itemOf = conv.map((m): number | null => {
    if (m.role === 'system') {
      system.push(m.text);
      return null;
    }
    if (m.role === 'tool') {
      const block = { type: 'tool_result', tool_use_id: m.callId, content: m.text };
      const last = items[items.length - 1];
      // Results of one assistant message go together in the next user message, as the API requires.
      if (
        last !== undefined &&
        last.role === 'user' &&
        Array.isArray(last.content) &&
        (last.content as { type: string }[])[0]?.type === 'tool_result'
      ) {
        (last.content as unknown[]).push(block);
      } else items.push({ role: 'user', content: [block] });
      return items.length - 1;
    }
    if (m.role === 'user') {
      const plain = m.texts.length === 1 && m.images === 0 && m.files.length === 0;
      items.push({
        role: 'user',
        content: plain
          ? m.texts[0]
          : [
              ...m.texts.map((text) => ({ type: 'text', text })),
              ...Array.from({ length: m.images }, () => ({
                type: 'image',
                source: { type: 'base64', media_type: 'image/png', data: PNG },
              })),
              ...m.files.map((title) => ({
                type: 'document',
                source: { type: 'base64', media_type: 'application/pdf', data: PDF },
                title,
              })),
            ],
      });
      return items.length - 1;
    }
    items.push({
      role: 'assistant',
      content: [
        ...(m.reasoning === null ? [] : [{ type: 'thinking', thinking: m.reasoning, signature: 'c2ln' }]),
        ...(m.text === null ? [] : [{ type: 'text', text: m.text }]),
        ...m.calls.map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: c.args })),
      ],
    });
    return items.length - 1;
  });
  const container: Record<string, unknown> = { model: 'claude-sonnet-4-5', max_tokens: 1024 };
  if (system.length > 0)
    container.system =
      options.systemString && system.length === 1 ? system[0] : system.map((text) => ({ type: 'text', text }));
  return { ...frame(items, options, container, 'messages', 'anthropic'), itemOf };
}

function writeResponses(conv: Conversation, options: WriteOptions): Written {
  const items: unknown[] = [];
  let instructions: string | undefined;
  const message = (role: string, text: string, part: string): unknown =>
    options.typed ? { type: 'message', role, content: [{ type: part, text }] } : { role, content: text };
  const itemOf = conv.map((m, k): number | null => {
    if (m.role === 'system') {
      if (k === 0 && !options.jsonl) {
        instructions = m.text;
        return null;
      }
      items.push(message('developer', m.text, 'input_text'));
    } else if (m.role === 'user') {
      const plain = m.texts.length === 1 && m.images === 0 && m.files.length === 0;
      // An earlier note is written as swc writes it: one string, typed or not.
      if (m.note)
        items.push(
          options.typed
            ? { type: 'message', role: 'user', content: m.texts[0] }
            : { role: 'user', content: m.texts[0] },
        );
      else if (plain) items.push(message('user', m.texts[0] as string, 'input_text'));
      else {
        const content = [
          ...m.texts.map((text) => ({ type: 'input_text', text })),
          ...Array.from({ length: m.images }, () => ({
            type: 'input_image',
            image_url: `data:image/png;base64,${PNG}`,
            detail: 'auto',
          })),
          ...m.files.map((filename) => ({
            type: 'input_file',
            filename,
            file_data: `data:application/pdf;base64,${PDF}`,
          })),
        ];
        items.push(options.typed ? { type: 'message', role: 'user', content } : { role: 'user', content });
      }
    } else if (m.role === 'assistant') {
      const first = items.length;
      if (m.reasoning !== null)
        items.push({ type: 'reasoning', id: `rs_${k}`, summary: [{ type: 'summary_text', text: m.reasoning }] });
      if (m.text !== null)
        items.push(
          options.typed
            ? { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: m.text, annotations: [] }] }
            : { role: 'assistant', content: m.text },
        );
      for (const c of m.calls)
        items.push({ type: 'function_call', call_id: c.id, name: c.name, arguments: JSON.stringify(c.args) });
      return first;
    } else items.push({ type: 'function_call_output', call_id: m.callId, output: m.text });
    return items.length - 1;
  });
  const container: Record<string, unknown> = { model: 'gpt-5' };
  if (instructions !== undefined) container.instructions = instructions;
  return { ...frame(items, options, container, 'input', 'responses'), itemOf };
}

function writeGemini(conv: Conversation, options: WriteOptions): Written {
  const s = options.snake === true;
  const items: Record<string, unknown>[] = [];
  const system: { text: string }[] = [];
  const itemOf = conv.map((m): number | null => {
    if (m.role === 'system') {
      system.push({ text: m.text });
      return null;
    }
    if (m.role === 'tool') {
      const part = {
        [s ? 'function_response' : 'functionResponse']: { id: m.callId, name: m.name, response: { output: m.text } },
      };
      const last = items[items.length - 1];
      const parts = last?.parts as Record<string, unknown>[] | undefined;
      if (
        last !== undefined &&
        last.role === 'user' &&
        parts?.[0]?.[s ? 'function_response' : 'functionResponse'] !== undefined
      )
        parts.push(part);
      else items.push({ role: 'user', parts: [part] });
      return items.length - 1;
    }
    if (m.role === 'user') {
      items.push({
        role: 'user',
        parts: [
          ...m.texts.map((text) => ({ text })),
          ...Array.from({ length: m.images }, () => ({
            [s ? 'inline_data' : 'inlineData']: { [s ? 'mime_type' : 'mimeType']: 'image/png', data: PNG },
          })),
          ...m.files.map((name) => ({
            [s ? 'file_data' : 'fileData']: {
              [s ? 'mime_type' : 'mimeType']: 'application/pdf',
              [s ? 'file_uri' : 'fileUri']: `https://example.com/files/${name}`,
            },
          })),
        ],
      });
      return items.length - 1;
    }
    items.push({
      role: 'model',
      parts: [
        ...(m.reasoning === null ? [] : [{ text: m.reasoning, thought: true }]),
        ...(m.text === null ? [] : [{ text: m.text }]),
        ...m.calls.map((c, i) => ({
          [s ? 'function_call' : 'functionCall']: { id: c.id, name: c.name, args: c.args },
          ...(i === 0 ? { [s ? 'thought_signature' : 'thoughtSignature']: 'c2ln' } : {}),
        })),
      ],
    });
    return items.length - 1;
  });
  const container: Record<string, unknown> = {};
  if (system.length > 0) container[s ? 'system_instruction' : 'systemInstruction'] = { parts: system };
  container[s ? 'generation_config' : 'generationConfig'] = { temperature: 0 };
  return { ...frame(items, options, container, 'contents', 'gemini'), itemOf };
}

/**
 * Writes a conversation in one format.
 * In JSONL, instructions held outside the list cannot be written: Anthropic and Gemini drop them (so use
 * conversations without system messages there), Responses writes them as developer messages.
 * @param format the format
 * @param conversation the conversation
 * @param options framing and spelling variants
 * @returns the file's text, a file name, and where each message went
 */
export function writeAs(format: FormatName, conversation: Conversation, options: WriteOptions = {}): Written {
  switch (format) {
    case 'openai':
      return writeOpenAi(conversation, options);
    case 'haystack':
      return writeHaystack(conversation, options);
    case 'anthropic':
      return writeAnthropic(conversation, options);
    case 'responses':
      return writeResponses(conversation, options);
    case 'gemini':
      return writeGemini(conversation, options);
  }
}

type Obj = Record<string, unknown>;

function isObj(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function blocks(value: unknown, key: string): Obj[] {
  const list = isObj(value) ? value[key] : undefined;
  return Array.isArray(list) ? list.filter(isObj) : [];
}

/** A Gemini item's content: the item, or an ADK event's `content`. */
function geminiContentOf(item: unknown): Obj | null {
  if (isObj(item) && Array.isArray(item.parts)) return item;
  return isObj(item) && isObj(item.content) && Array.isArray(item.content.parts) ? item.content : null;
}

/**
 * Which item answers which: [call item, result item] for every call that has a result in the list, in any format.
 * Gemini calls without ids are answered by name, in order.
 * @param format the format of the items
 * @param items the parsed items of one list
 */
export function toolPairs(format: FormatName, items: readonly unknown[]): Array<[number, number]> {
  const callAt = new Map<string, number>();
  const pairs: Array<[number, number]> = [];
  const answer = (id: unknown, k: number): void => {
    const at = typeof id === 'string' ? callAt.get(id) : undefined;
    if (at !== undefined) pairs.push([at, k]);
  };
  const unnamed = new Map<string, number[]>();
  items.forEach((item, k) => {
    switch (format) {
      case 'openai':
        for (const call of blocks(item, 'tool_calls')) if (typeof call.id === 'string') callAt.set(call.id, k);
        if (isObj(item)) answer(item.tool_call_id, k);
        break;
      case 'haystack':
        for (const part of blocks(item, 'content')) {
          if (isObj(part.tool_call) && typeof part.tool_call.id === 'string') callAt.set(part.tool_call.id, k);
          if (isObj(part.tool_call_result) && isObj(part.tool_call_result.origin))
            answer(part.tool_call_result.origin.id, k);
        }
        break;
      case 'anthropic':
        for (const block of blocks(item, 'content')) {
          const type = String(block.type);
          if (
            (type === 'tool_use' || type === 'server_tool_use' || type === 'mcp_tool_use') &&
            typeof block.id === 'string'
          )
            callAt.set(block.id, k);
          if (type.endsWith('_tool_result') || type === 'tool_result') answer(block.tool_use_id, k);
        }
        break;
      case 'responses': {
        if (!isObj(item)) break;
        const type = String(item.type);
        if (type.endsWith('_call') && typeof item.call_id === 'string') callAt.set(item.call_id, k);
        if (type === 'mcp_approval_request' && typeof item.id === 'string') callAt.set(item.id, k);
        if (type.endsWith('_output')) answer(item.call_id, k);
        if (type === 'mcp_approval_response') answer(item.approval_request_id, k);
        break;
      }
      case 'gemini':
        for (const part of blocks(geminiContentOf(item), 'parts')) {
          const call = part.functionCall ?? part.function_call;
          const response = part.functionResponse ?? part.function_response;
          if (isObj(call)) {
            if (typeof call.id === 'string') callAt.set(call.id, k);
            else unnamed.set(String(call.name), [...(unnamed.get(String(call.name)) ?? []), k]);
          }
          if (isObj(response)) {
            if (typeof response.id === 'string') answer(response.id, k);
            else {
              const queue = unnamed.get(String(response.name)) ?? [];
              const at = queue.shift();
              if (at !== undefined) pairs.push([at, k]);
            }
          }
        }
        break;
    }
  });
  return pairs;
}

/** Whether an item is a user message people wrote (not tool results, not a note), in any format. */
export function isRealUserItem(format: FormatName, item: unknown, isNote: (text: string) => boolean): boolean {
  if (!isObj(item)) return format === 'responses' && typeof item === 'string';
  const text = (content: unknown): string | null =>
    typeof content === 'string'
      ? content
      : Array.isArray(content) && content.length === 1 && isObj(content[0]) && typeof content[0].text === 'string'
        ? content[0].text
        : null;
  switch (format) {
    case 'openai':
      return item.role === 'user' && !isNote(text(item.content) ?? '');
    case 'haystack':
      return item.role === 'user' && !(isObj(item.meta) && item.meta.context_compaction !== undefined);
    case 'anthropic':
      return (
        item.role === 'user' &&
        !blocks(item, 'content').some((b) => b.type === 'tool_result') &&
        !isNote(text(item.content) ?? '')
      );
    case 'responses':
      return (
        item.role === 'user' &&
        (item.type === undefined || item.type === 'message') &&
        !isNote(text(item.content) ?? '')
      );
    case 'gemini': {
      const content = geminiContentOf(item);
      if (content === null || (content.role !== 'user' && content.role !== undefined)) return false;
      const parts = blocks(content, 'parts');
      return (
        !parts.some((p) => p.functionResponse !== undefined || p.function_response !== undefined) &&
        !isNote(text(parts) ?? '')
      );
    }
  }
}

/** The list of a parsed document: the document itself, or its value under the format's list key. */
export function listOf(format: FormatName, doc: unknown): { items: unknown[]; container: Obj | null } {
  if (Array.isArray(doc)) return { items: doc, container: null };
  if (!isObj(doc)) throw new Error('not a list or an object');
  const key = {
    openai: 'messages',
    haystack: 'messages',
    anthropic: 'messages',
    responses: 'input',
    gemini: Array.isArray(doc.events) ? 'events' : 'contents',
  }[format];
  const { [key]: list, ...container } = doc;
  return { items: typeof list === 'string' ? [list] : (list as unknown[]), container };
}

/**
 * For each item of a compacted list, the index of the input item it is a copy of (null for the note):
 * kept items are copies, in input order.
 */
export function keptIndices(input: readonly unknown[], output: readonly unknown[]): (number | null)[] {
  const keys = input.map((i) => JSON.stringify(i));
  let from = 0;
  return output.map((item) => {
    const at = keys.indexOf(JSON.stringify(item), from);
    if (at === -1) return null;
    from = at + 1;
    return at;
  });
}

/**
 * Checks the promises of a compaction on one file: the output parses, everything around the list is unchanged,
 * every item is a copy of an input item in input order or the note (at most one), no kept call lost a result it
 * had and no kept result lost its call, and the task (the latest real user message) is kept.
 * @param format the file's format
 * @param input the input document's text (JSON)
 * @param output the output document's text
 * @param isNote whether a text is a note (the active template's or the default)
 * @returns the problems found (empty when all hold)
 */
export function compactionProblems(
  format: FormatName,
  input: string,
  output: string,
  isNote: (text: string) => boolean,
): string[] {
  const before = listOf(format, JSON.parse(input));
  let after: ReturnType<typeof listOf>;
  try {
    after = listOf(format, JSON.parse(output));
  } catch (error) {
    return [`output does not parse: ${String(error)}`];
  }
  const problems: string[] = [];
  if (JSON.stringify(after.container) !== JSON.stringify(before.container))
    problems.push('the object around the list changed');
  const origin = keptIndices(before.items, after.items);
  const notes = origin.filter((o) => o === null).length;
  if (notes > 1) problems.push(`${notes} items are not copies of input items`);
  const kept = new Set(origin.filter((o): o is number => o !== null));
  for (const [call, result] of toolPairs(format, before.items)) {
    if (kept.has(call) && !kept.has(result))
      problems.push(`item ${call} kept a call whose result (item ${result}) was removed`);
    if (kept.has(result) && !kept.has(call))
      problems.push(`item ${result} kept a result whose call (item ${call}) was removed`);
  }
  let task = -1;
  before.items.forEach((item, k) => {
    if (isRealUserItem(format, item, isNote)) task = k;
  });
  if (task !== -1 && !kept.has(task)) problems.push(`the task (item ${task}) was removed`);
  return problems;
}
