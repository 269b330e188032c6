import { isJsonObject, parseJson, type JsonValue } from '../core/json/value.js';
import { noteMarks } from '../core/note.js';
import { renderArguments, renderArgumentsString } from '../core/json/python.js';
import type { Content, Message, Role, ToolCall } from '../core/types.js';
import { describe } from './openai.js';
import {
  isRecord,
  own,
  type ConversationInput,
  type FormatAdapter,
  type PruneWrite,
  type Normalized,
  type PairedCall,
  type PairedResult,
  type Pairing,
  detectedBy,
} from './types.js';
import { memberSpan, writeResults } from './raw-edit.js';

/**
 * ShareGPT-style training data: `{"conversations": [{"from", "value"}]}` with human/gpt/system/function_call/
 * observation, and the `{role, content}` variants LLaMA-Factory reads (content a string, or typed parts
 * `[{type, value}]`). Calls and observations carry no ids: they link by position.
 */

/** What a speaker tag is: a call is an assistant turn that only calls tools. */
type Part = Role | 'call';

const SPEAKERS: Record<string, Part> = {
  human: 'user',
  user: 'user',
  gpt: 'assistant',
  chatgpt: 'assistant',
  bing: 'assistant',
  bard: 'assistant',
  assistant: 'assistant',
  system: 'system',
  function_call: 'call',
  observation: 'tool',
  tool: 'tool',
};

/** Tags only ShareGPT uses; a `{role, content}` list with one of them is not OpenAI chat. */
const SHAREGPT_ONLY = new Set(['human', 'gpt', 'chatgpt', 'bing', 'bard', 'function_call', 'observation']);

function speakerOf(item: Record<string, unknown>): unknown {
  return own(item, 'from') ?? own(item, 'role');
}

function bodyOf(item: Record<string, unknown>): unknown {
  return own(item, 'from') !== undefined ? own(item, 'value') : own(item, 'content');
}

/** Typed content as LLaMA-Factory writes it: parts with a `value`, never an OpenAI `text`. */
function isTypedParts(content: unknown): boolean {
  return (
    Array.isArray(content) &&
    content.every(
      (p) =>
        isRecord(p) &&
        typeof own(p, 'type') === 'string' &&
        own(p, 'value') !== undefined &&
        own(p, 'text') === undefined,
    )
  );
}

function isClassic(item: unknown): boolean {
  return isRecord(item) && typeof own(item, 'from') === 'string' && own(item, 'value') !== undefined;
}

function isRoleShaped(item: unknown): boolean {
  if (!isRecord(item)) return false;
  const role = own(item, 'role');
  const content = own(item, 'content');
  return (
    typeof role === 'string' &&
    own(SPEAKERS, role) !== undefined &&
    (typeof content === 'string' || isTypedParts(content))
  );
}

/** The calls a function_call value or tool_call part holds: `{name, arguments}` or a list of them, as JSON text. */
function parseCalls(value: unknown): ToolCall[] {
  if (typeof value !== 'string')
    return isJsonObject(value) || Array.isArray(value) ? callsFrom(value as JsonValue) : [];
  let parsed: JsonValue;
  try {
    parsed = parseJson(value);
  } catch {
    return [{ name: '', arguments: value }];
  }
  return callsFrom(parsed);
}

function callsFrom(parsed: JsonValue): ToolCall[] {
  const list = Array.isArray(parsed) ? parsed : [parsed];
  return list.map((call) => {
    if (!isJsonObject(call)) return { name: '', arguments: renderArguments(call) };
    const args = call.arguments ?? call.parameters ?? null;
    return {
      name: typeof call.name === 'string' ? call.name : '',
      arguments: typeof args === 'string' ? renderArgumentsString(args) : renderArguments(args),
    };
  });
}

/** A message's texts, calls and images, read from a fresh lossless parse of its raw text. */
function partsOf(raw: string): { texts: string[]; calls: ToolCall[]; images: number } {
  const value = parseJson(raw);
  const out = { texts: [] as string[], calls: [] as ToolCall[], images: 0 };
  if (!isJsonObject(value)) return out;
  const body = value.from !== undefined ? value.value : value.content;
  const speaker = value.from ?? value.role;
  if (typeof body === 'string') {
    if (speaker === 'function_call') out.calls.push(...parseCalls(body));
    else out.texts.push(body);
    return out;
  }
  if (!Array.isArray(body)) return out;
  for (const part of body) {
    if (!isJsonObject(part)) continue;
    if (part.type === 'text' && typeof part.value === 'string') out.texts.push(part.value);
    else if (part.type === 'tool_call') out.calls.push(...parseCalls(part.value));
    else if (part.type === 'image' || part.type === 'image_url') out.images++;
  }
  return out;
}

/** The text of an item, for recognising an earlier note. */
function plainText(item: Record<string, unknown>): string | null {
  const body = bodyOf(item);
  if (typeof body === 'string') return body;
  if (!Array.isArray(body)) return null;
  const texts = body
    .filter((p) => isRecord(p) && own(p, 'type') === 'text' && typeof own(p, 'value') === 'string')
    .map((p) => own(p as Record<string, unknown>, 'value') as string);
  return texts.length === 1 ? (texts[0] as string) : null;
}

/** The names of the calls a function_call value or tool_call part holds, read as `parseCalls` reads them. */
function callNamesIn(value: unknown): string[] {
  let parsed = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value) as unknown;
    } catch {
      return [''];
    }
  } else if (!isRecord(value) && !Array.isArray(value)) return [];
  return (Array.isArray(parsed) ? parsed : [parsed]).map((call) => {
    const name = isRecord(call) ? own(call, 'name') : undefined;
    return typeof name === 'string' ? name : '';
  });
}

/** The names of the calls an item makes, from the same places `partsOf` reads them. */
function callNamesOf(item: Record<string, unknown>): string[] {
  const body = bodyOf(item);
  if (typeof body === 'string') return speakerOf(item) === 'function_call' ? callNamesIn(body) : [];
  if (!Array.isArray(body)) return [];
  return body.flatMap((part) =>
    isRecord(part) && own(part, 'type') === 'tool_call' ? callNamesIn(own(part, 'value')) : [],
  );
}

/**
 * Calls and observations for `swc inspect`. Neither has an id: the observations right after an assistant run
 * answer its calls by position, the last one answering every call left (LLaMA-Factory puts the results of
 * parallel calls in one observation). A run of calls that ends the conversation is the sample's target, not
 * a call waiting for its result, so it is left out.
 */
function sharegptPairing(input: ConversationInput): Pairing {
  const calls: PairedCall[] = [];
  const results: PairedResult[] = [];
  const unknownRoles: { item: number; role: string | null }[] = [];
  /** Each run of assistant items and the observations right after it (a run of none for observations after anything else). */
  const runs: { calls: PairedCall[]; observations: number[] }[] = [];
  let open = false;
  input.items.forEach((item, k) => {
    const speaker = isRecord(item) ? speakerOf(item) : undefined;
    const part = typeof speaker === 'string' ? (own(SPEAKERS, speaker) as Part | undefined) : undefined;
    if (part === undefined) {
      unknownRoles.push({ item: k, role: typeof speaker === 'string' ? speaker : null });
      return;
    }
    const record = item as Record<string, unknown>;
    if (part === 'assistant' || part === 'call') {
      if (!open) runs.push({ calls: [], observations: [] });
      open = true;
      (runs[runs.length - 1] as (typeof runs)[number]).calls.push(
        ...callNamesOf(record).map((name) => ({ item: k, id: null, name })),
      );
      return;
    }
    open = false;
    if (part === 'tool') {
      if (runs.length === 0) runs.push({ calls: [], observations: [] });
      (runs[runs.length - 1] as (typeof runs)[number]).observations.push(k);
    } else {
      // Anything else ends the run: observations after it answer nothing.
      runs.push({ calls: [], observations: [] });
    }
  });
  runs.forEach((run, r) => {
    const n = run.observations.length;
    if (n === 0 && r === runs.length - 1) return;
    calls.push(...run.calls);
    run.observations.forEach((k, i) => {
      const answers = i === n - 1 && run.calls.length > n ? run.calls.length - n + 1 : 1;
      for (let a = 0; a < answers; a++) results.push({ item: k, id: null, name: '' });
    });
  });
  return { calls, results, unknownRoles };
}

export const sharegpt: FormatAdapter = {
  name: 'sharegpt',
  listKeys: ['conversations', 'messages'],
  ...detectedBy([
    { each: isClassic },
    {
      each: isRoleShaped,
      some: (item) =>
        SHAREGPT_ONLY.has(own(item as Record<string, unknown>, 'role') as string) ||
        Array.isArray(own(item as Record<string, unknown>, 'content')),
    },
  ]),
  normalize(input, noteTemplate): Normalized {
    const messages: Message[] = [];
    const itemsOf: number[][] = [];
    const system = input.container === null ? undefined : own(input.container, 'system');
    if (typeof system === 'string' && system !== '') {
      // The record's system prompt sits beside the list: instructions that stand for no item.
      messages.push({
        role: 'system',
        weight: 0,
        content: { texts: [system], toolCalls: [], results: [], images: 0, files: [] },
      });
      itemsOf.push([]);
    }
    /** The items of the assistant run the next observations answer, and how many answered it so far. */
    let run: number[] = [];
    let answered = 0;
    let runOpen = false;
    input.items.forEach((item, k) => {
      if (!isRecord(item)) return input.fail(k, `expected a message object, found ${describe(item)}`);
      const speaker = speakerOf(item);
      const part = typeof speaker === 'string' ? (own(SPEAKERS, speaker) as Part | undefined) : undefined;
      if (part === undefined) {
        return input.fail(
          k,
          `unknown speaker ${JSON.stringify(speaker)} (expected human, gpt, system, function_call or observation)`,
        );
      }
      const body = bodyOf(item);
      if (typeof body !== 'string' && !isTypedParts(body)) {
        return input.fail(
          k,
          `the message text must be a string or a list of {type, value} parts, found ${describe(body)}`,
        );
      }
      // Raw texts are read when a message is rendered: a source held as lines decodes them only then.
      const raw = (i: number = k): string => input.raws[i] as string;
      if (part === 'assistant' || part === 'call') {
        if (runOpen) {
          // A gpt message and the function_call after it are one assistant turn.
          const m = messages.length - 1;
          (itemsOf[m] as number[]).push(k);
          const joined = [...(itemsOf[m] as number[])];
          messages[m] = {
            role: 'assistant',
            weight: joined.length,
            content: () => assistantContent(joined.map((i) => raw(i))),
          };
          run.push(k);
          return;
        }
        runOpen = true;
        run = [k];
        answered = 0;
        messages.push({ role: 'assistant', content: () => assistantContent([raw()]) });
        itemsOf.push([k]);
        return;
      }
      runOpen = false;
      if (part === 'tool') {
        const calls = [...run];
        const position = answered++;
        messages.push({
          role: 'tool',
          content: () =>
            observationContent(
              raw(),
              calls.map((i) => raw(i)),
              position,
            ),
        });
        itemsOf.push([k]);
        return;
      }
      if (part === 'user') run = [];
      const text = plainText(item);
      messages.push({
        role: part,
        ...noteMarks(part === 'user' ? text : null, noteTemplate),
        content: () => textContent(raw()),
      });
      itemsOf.push([k]);
    });
    return { messages, itemsOf };
  },
  makeNote({ text, items }) {
    const first = items.find((item) => isRecord(item) && own(SPEAKERS, speakerOf(item) as string) === 'user') as
      Record<string, unknown> | undefined;
    const sample = (first ?? items[0]) as Record<string, unknown> | undefined;
    const userTag = first === undefined ? undefined : (speakerOf(first) as string);
    if (sample === undefined || isClassic(sample)) return { from: userTag ?? 'human', value: text };
    const typed = items.some((item) => isRecord(item) && Array.isArray(own(item, 'content')));
    return { role: userTag ?? 'user', content: typed ? [{ type: 'text', value: text }] : text };
  },
  pairing: sharegptPairing,
  writePruned: writePrunedSharegpt,
};

function textContent(raw: string): Content {
  const { texts, images } = partsOf(raw);
  return { texts, toolCalls: [], results: [], images, files: [] };
}

function assistantContent(raws: readonly string[]): Content {
  const texts: string[] = [];
  const toolCalls: ToolCall[] = [];
  let images = 0;
  for (const raw of raws) {
    const parts = partsOf(raw);
    texts.push(...parts.texts);
    toolCalls.push(...parts.calls);
    images += parts.images;
  }
  return { texts, toolCalls, results: [], images, files: [] };
}

/** An observation answers the call at its position in the run before it (the last call when there are fewer). */
function observationContent(raw: string, runRaws: readonly string[], position: number): Content {
  const calls = assistantContent(runRaws).toolCalls;
  const call = calls[Math.min(position, calls.length - 1)];
  const { texts, images } = partsOf(raw);
  return {
    texts: [],
    toolCalls: [],
    results: [{ name: call?.name ?? '', text: texts.join(''), error: false, images, files: 0 }],
    images: 0,
    files: [],
  };
}

/** A pruned observation: its body (`value` beside `from`, else `content`) becomes the placeholder. */
function writePrunedSharegpt(request: PruneWrite): ReadonlyMap<number, string> {
  return writeResults(request, (raw, root) => [
    { object: root, key: memberSpan(raw, root, 'from') !== undefined ? 'value' : 'content' },
  ]);
}
