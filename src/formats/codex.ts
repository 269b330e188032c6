import { isJsonObject, parseJson, skipWhitespace, type JsonValue } from '../core/json/value.js';
import { lazyList } from '../core/lazy-list.js';
import { contentOf } from '../core/render.js';
import type { Content, Message, Role } from '../core/types.js';
import { findMember, objectMembers } from '../io/json-layout.js';
import { describe } from './openai.js';
import { memberSpan, writeResults } from './raw-edit.js';
import { messageParts, responses } from './responses.js';
import {
  detectedBy,
  isRecord,
  itemValue,
  itemsReader,
  own,
  type ConversationInput,
  type FormatAdapter,
  type Normalized,
  type Pairing,
  type PruneWrite,
} from './types.js';

/**
 * OpenAI Codex CLI sessions (`~/.codex/sessions/YYYY/MM/DD/rollout-….jsonl`): one `{timestamp, type, payload}` line
 * each. `response_item` payloads are Responses-API items and are read as the Responses adapter reads them; every other
 * line is no message. The rules (what the instructions and the task are, where each line goes) are in
 * docs/formats.md#codex-cli-sessions.
 */

/** Harness-made user messages: context Codex injects, never a prompt someone typed (Codex's contextual prefixes). */
const INJECTED = [
  /^# AGENTS\.md instructions/,
  /^<environment_context>/,
  /^<permissions instructions>/,
  /^<user_instructions>/,
  /^<skill>/,
  /^<user_shell_command>/,
  /^<turn_aborted>/,
  /^<subagent_notification>/,
  /^# Context from my IDE setup:/,
];

/** Events that restate a reply or a reasoning item: they go with the item they restate. */
const REPLY_MIRRORS = new Set(['agent_message', 'agent_reasoning', 'agent_reasoning_raw_content']);

/** The line types Codex writes: their payload is an object. Lines of other types Codex skips, whatever they hold. */
const KNOWN_LINES = new Set(['session_meta', 'response_item', 'compacted', 'turn_context', 'event_msg', 'world_state']);

/** A rollout line: an object with a string `type` and a `payload`, an object for the line types Codex knows. */
function isRolloutLine(item: unknown): item is Record<string, unknown> {
  if (!isRecord(item)) return false;
  const type = own(item, 'type');
  if (typeof type !== 'string') return false;
  return KNOWN_LINES.has(type) ? isRecord(own(item, 'payload')) : Object.hasOwn(item, 'payload');
}

/** The bare header of a session from CLIs before 0.34: `{id, timestamp, instructions?}`, no envelope. */
function isLegacyHeader(item: unknown): boolean {
  return (
    isRecord(item) &&
    typeof own(item, 'id') === 'string' &&
    typeof own(item, 'timestamp') === 'string' &&
    own(item, 'type') === undefined &&
    own(item, 'role') === undefined
  );
}

/** A line of such a session: the header, a `{record_type}` state line or a bare response item. */
function isLegacyLine(item: unknown): boolean {
  if (isLegacyHeader(item)) return true;
  if (!isRecord(item) || own(item, 'payload') !== undefined) return false;
  return typeof own(item, 'record_type') === 'string' || typeof own(item, 'type') === 'string';
}

const LEGACY = 'a Codex session from before CLI 0.34 (bare lines, no {timestamp, type, payload}): not read';

/** A line's `type`, or null. */
function lineType(item: unknown): string | null {
  const type = isRecord(item) ? own(item, 'type') : undefined;
  return typeof type === 'string' ? type : null;
}

/** A line's payload object, or null. */
function payloadOf(item: unknown): Record<string, unknown> | null {
  const payload = isRecord(item) ? own(item, 'payload') : undefined;
  return isRecord(payload) ? payload : null;
}

/** A line's payload `type` (a response item's or an event's), or null. */
function payloadType(item: unknown): string | null {
  const type = payloadOf(item) === null ? undefined : own(payloadOf(item) as Record<string, unknown>, 'type');
  return typeof type === 'string' ? type : null;
}

/** Whether a line is a response item, and of which message role (null: not a message). */
function messageRole(item: unknown): string | null {
  if (lineType(item) !== 'response_item' || payloadType(item) !== 'message') return null;
  const role = own(payloadOf(item) as Record<string, unknown>, 'role');
  return typeof role === 'string' ? role : null;
}

/** Whether a line is an `event_msg` of this type. */
function isEvent(item: unknown, type: string): boolean {
  return lineType(item) === 'event_msg' && payloadType(item) === type;
}

/** The last `compacted` line: everything before it is a dead record. -1 when there is none. */
function lastCompacted(items: readonly unknown[]): number {
  for (let k = items.length - 1; k >= 0; k--) if (lineType(items[k]) === 'compacted') return k;
  return -1;
}

/** The first text part of a message line, as it starts (null when it has none). */
function firstText(item: unknown): string | null {
  const content = own(payloadOf(item) as Record<string, unknown>, 'content');
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return null;
  for (const part of content) {
    const text = isRecord(part) ? own(part, 'text') : undefined;
    if (typeof text === 'string') return text;
  }
  return null;
}

/** Whether a user message's text starts as Codex's injected context does. */
function isInjectedText(item: unknown): boolean {
  const text = firstText(item);
  if (text === null) return false;
  const start = text.trimStart();
  return INJECTED.some((pattern) => pattern.test(start));
}

/** The typed prompts after `from`: user message lines, and the event line that mirrors each. */
interface Prompts {
  /** Whether any `user_message` event follows `from` (then only mirrored user messages are prompts). */
  readonly mirrored: boolean;
  /** Each prompt line, and for a mirrored one the event that mirrors it. */
  readonly lines: ReadonlySet<number>;
  readonly mirrorOf: ReadonlyMap<number, number>;
}

/**
 * The user's typed prompts: the user message each `user_message` event mirrors (the nearest user message line before
 * it, after the event before it), since redacted files cannot be matched by text; with no such event after `from`,
 * every user message whose text is not injected context.
 */
function promptsAfter(items: readonly unknown[], from: number): Prompts {
  const lines = new Set<number>();
  const mirrorOf = new Map<number, number>();
  let mirrored = false;
  // An event looks no further back than the event before it: a prompt with no event of its own is context.
  let floor = from;
  for (let k = from + 1; k < items.length; k++) {
    if (!isEvent(items[k], 'user_message')) continue;
    mirrored = true;
    for (let j = k - 1; j > floor; j--) {
      if (messageRole(items[j]) !== 'user') continue;
      lines.add(j);
      mirrorOf.set(k, j);
      break;
    }
    floor = k;
  }
  if (!mirrored)
    for (let k = from + 1; k < items.length; k++)
      if (messageRole(items[k]) === 'user' && !isInjectedText(items[k])) lines.add(k);
  return { mirrored, lines, mirrorOf };
}

/** The text span of a line's `payload`. */
function payloadText(raw: string): string {
  const member = findMember(objectMembers(raw, skipWhitespace(raw, 0)).members, 'payload');
  return member === undefined ? 'null' : raw.slice(member.value.start, member.value.end);
}

/** The response items of some lines as a Responses input: their payloads, failures pointed at their lines. */
function responseInput(input: ConversationInput, lines: readonly number[]): ConversationInput {
  return {
    file: input.file,
    items: lines.map((k) => payloadOf(input.items[k])),
    raws: lazyList(lines.length, (j) => payloadText(input.raws[lines[j] as number] as string)),
    ...(input.whole === undefined ? {} : { whole: input.whole }),
    container: null,
    fail: (j, reason) => input.fail(lines[j] as number, reason),
  };
}

/** The lines after `from` that are response items. */
function responseLines(items: readonly unknown[], from: number): number[] {
  const out: number[] = [];
  for (let k = from + 1; k < items.length; k++) if (lineType(items[k]) === 'response_item') out.push(k);
  return out;
}

/** One message being made: its role, what it reads, and its lines. */
interface Draft {
  role: Role;
  readonly parts: Message[];
  readonly lines: number[];
  /** Lines it counts in the file's terms (response items and the compacted line). */
  counted: number;
  /** A typed prompt: injected context before it joins it. */
  prompt: boolean;
  /** Context standing in a step: read as one result of no tool, so it stays in the step as a results message does. */
  inStep?: boolean;
}

/** The content of several messages read as one: their texts, calls, results and attachments in order. */
function joined(parts: readonly Message[]): Content {
  if (parts.length === 1) return contentOf(parts[0] as Message);
  const contents = parts.map(contentOf);
  return {
    texts: contents.flatMap((c) => c.texts),
    toolCalls: contents.flatMap((c) => c.toolCalls),
    results: contents.flatMap((c) => c.results),
    images: contents.reduce((n, c) => n + c.images, 0),
    files: contents.flatMap((c) => c.files),
  };
}

/** A draft as a message: one part as it is (its role set), several read as one. */
function messageOfDraft(d: Draft): Message {
  const first = d.parts[0] as Message;
  const weight = d.counted === 1 ? undefined : d.counted;
  // Context standing in a step is one result of no tool, which pruning leaves alone (no output item holds it).
  if (d.inStep === true) return { role: 'tool', fixed: true, content: () => asResult(joined(d.parts)), weight };
  if (d.parts.length === 1) return { ...first, role: d.role, weight };
  return { role: d.role, content: () => joined(d.parts), weight };
}

/** A context's texts as the one result of a results message (the way other formats read text beside results). */
function asResult(content: Content): Content {
  const result = {
    name: '',
    text: content.texts.join('\n'),
    error: false,
    images: content.images,
    files: content.files.length,
  };
  return { texts: [], toolCalls: [], results: [result], images: 0, files: [] };
}

/**
 * The messages of the live history (the response items after `cut`, read by the Responses adapter): injected context
 * before the first typed prompt or reply is instructions; later context joins the prompt it comes right before, else
 * the prompt it follows, else stands as a results message in the step before it (so no rule parts it from there).
 */
function draftsOf(
  input: ConversationInput,
  cut: number,
  prompts: Prompts,
  noteTemplate: string | null,
): { drafts: Draft[]; pinned: number[] } {
  const lines = responseLines(input.items, cut);
  const inner = responses.normalize(responseInput(input, lines), noteTemplate);
  const itemsAt = itemsReader(inner.itemsOf);
  const drafts: Draft[] = [];
  let waiting: Draft[] = [];
  let leading = true;
  const place = (d: Draft): void => {
    const last = drafts[drafts.length - 1];
    if (last !== undefined && last.prompt) absorb(last, d);
    else drafts.push({ ...d, role: 'tool', inStep: true });
  };
  inner.messages.forEach((message, m) => {
    const own = itemsAt(m).map((j) => lines[j] as number);
    const d: Draft = { role: message.role, parts: [message], lines: own, counted: own.length, prompt: false };
    const head = own[0];
    const isContext =
      message.compaction === undefined &&
      message.exactNote !== true &&
      head !== undefined &&
      (message.role === 'system' || (message.role === 'user' && !prompts.lines.has(head)));
    if (isContext) {
      if (leading) drafts.push({ ...d, role: 'system' });
      else waiting.push(d);
      return;
    }
    leading = false;
    if (message.role === 'user' && message.compaction === undefined && message.exactNote !== true) {
      d.prompt = true;
      const prompt: Draft = { ...d, parts: [], lines: [], counted: 0 };
      // The prompt reads first, so a turn is shown by what the user typed; its lines are sorted when done.
      absorb(prompt, d);
      for (const w of waiting) absorb(prompt, w);
      waiting = [];
      drafts.push(prompt);
      return;
    }
    for (const w of waiting) place(w);
    waiting = [];
    drafts.push(d);
  });
  for (const w of waiting) place(w);
  return { drafts, pinned: (inner.pinned ?? []).map((j) => lines[j] as number) };
}

/** Moves a draft's parts and lines into another. */
function absorb(into: Draft, from: Draft): void {
  into.parts.push(...from.parts);
  into.lines.push(...from.lines);
  into.counted += from.counted;
}

/**
 * Where an event line goes: with the message whose item it mirrors (a prompt, a reply, a reasoning item, a call's
 * output by `call_id`), or null to keep it where it is.
 */
function mirrorTarget(
  items: readonly unknown[],
  k: number,
  cut: number,
  prompts: Prompts,
  calls: CallLines,
): number | null {
  const type = payloadType(items[k]);
  if (type === 'user_message') return prompts.mirrorOf.get(k) ?? null;
  if (type !== null && REPLY_MIRRORS.has(type)) {
    // The reply it restates: the next assistant-side item of the turn (Codex writes such events before their items,
    // old CLIs a request's events before all its items), else, in a turn cut short, the item before it.
    for (let j = k + 1; j < items.length; j++) {
      if (lineType(items[j]) !== 'response_item') continue;
      const role = messageRole(items[j]);
      if (role === null || role === 'assistant') return j;
      break;
    }
    for (let j = k - 1; j > cut; j--) if (lineType(items[j]) === 'response_item') return j;
    return null;
  }
  const id = own(payloadOf(items[k]) as Record<string, unknown>, 'call_id');
  if (typeof id !== 'string') return null;
  const held = calls.lines.get(id);
  if (held !== undefined) return held;
  // No item carries the id (a web search's `ws_` id, a nested call's `exec-` id): the item written next restates it.
  return calls.known.has(id) ? null : nearestItem(items, k, cut);
}

/** The response item written right after line `k`, else the one before it (a turn cut short), or null. */
function nearestItem(items: readonly unknown[], k: number, cut: number): number | null {
  for (let j = k + 1; j < items.length; j++) if (lineType(items[j]) === 'response_item') return j;
  for (let j = k - 1; j > cut; j--) if (lineType(items[j]) === 'response_item') return j;
  return null;
}

/** Where calls are: the line of each call id's output, else of its call, after `cut`; and every id an item holds. */
interface CallLines {
  readonly lines: ReadonlyMap<string, number>;
  /** Call ids of response items anywhere, dead record included: an event of one of those is never re-homed. */
  readonly known: ReadonlySet<string>;
}

/** The calls of a session (see {@link CallLines}). */
function callLines(items: readonly unknown[], cut: number): CallLines {
  const calls = new Map<string, number>();
  const outputs = new Map<string, number>();
  const known = new Set<string>();
  for (let k = 0; k < items.length; k++) {
    if (lineType(items[k]) !== 'response_item') continue;
    const id = own(payloadOf(items[k]) as Record<string, unknown>, 'call_id');
    if (typeof id !== 'string') continue;
    known.add(id);
    if (k > cut) (/_output$/.test(payloadType(items[k]) ?? '') ? outputs : calls).set(id, k);
  }
  for (const [id, k] of calls) if (!outputs.has(id)) outputs.set(id, k);
  return { lines: outputs, known };
}

/**
 * The compacted line as the first instruction: the replacement history Codex put in the place of all before it. A line
 * without `replacement_history` (CLIs before 0.42) stands for the typed user messages since the compaction before it
 * and its `message`, the summary, as Codex rebuilt such a history.
 */
function compactedMessage(input: ConversationInput, k: number): Message {
  return {
    role: 'system',
    content: () => {
      const value = itemValue(input, k);
      const payload = isJsonObject(value) ? value.payload : undefined;
      const replaced = isJsonObject(payload) && Array.isArray(payload.replacement_history);
      const history = replaced ? (payload.replacement_history as JsonValue[]) : earlierUserItems(input, k);
      const texts = [
        replaced
          ? `Codex compacted the conversation here (line ${k + 1}): ${history.length} items replace all before it`
          : `Codex compacted the conversation here (line ${k + 1}): its summary and ${history.length} user messages replace all before it`,
      ];
      let images = 0;
      const files: (string | null)[] = [];
      for (const item of history) {
        if (!isJsonObject(item) || item.type !== 'message') continue;
        const parts = messageParts(item.content);
        texts.push(...parts.texts);
        images += parts.images;
        files.push(...parts.files);
      }
      // With a replacement history, `message` repeats what it holds (local compaction's summary is one of its items).
      if (!replaced && isJsonObject(payload) && typeof payload.message === 'string' && payload.message !== '')
        texts.push(payload.message);
      return { texts, toolCalls: [], results: [], images, files };
    },
  };
}

/** The user messages before line `k` since the `compacted` line before it that are not injected context, as items. */
function earlierUserItems(input: ConversationInput, k: number): JsonValue[] {
  let from = 0;
  for (let j = k - 1; j >= 0; j--)
    if (lineType(input.items[j]) === 'compacted') {
      from = j + 1;
      break;
    }
  const out: JsonValue[] = [];
  for (let j = from; j < k; j++) {
    if (messageRole(input.items[j]) !== 'user' || isInjectedText(input.items[j])) continue;
    const line = itemValue(input, j);
    if (isJsonObject(line) && line.payload !== undefined) out.push(line.payload);
  }
  return out;
}

/**
 * The base instructions of the session's first `session_meta` line (the system prompt Codex sends), as a system message
 * standing for no line (the line itself is kept where it is), or null when the line has none. Older CLIs' `instructions`
 * are AGENTS.md text, which Codex also sends as a user message: not counted twice.
 */
function baseInstructions(input: ConversationInput): Message | null {
  const k = input.items.findIndex((item) => lineType(item) === 'session_meta');
  const payload = payloadOf(input.items[k]);
  const base = payload === null ? undefined : own(payload, 'base_instructions');
  if (!isRecord(base) || typeof own(base, 'text') !== 'string') return null;
  return {
    role: 'system',
    weight: 0,
    content: () => {
      // Read from the line's text: a big file's items are slim, their long texts left out.
      const value = itemValue(input, k);
      const meta = isJsonObject(value) ? value.payload : undefined;
      const instructions = isJsonObject(meta) ? meta.base_instructions : undefined;
      const text = isJsonObject(instructions) ? instructions.text : undefined;
      return { texts: typeof text === 'string' ? [text] : [], toolCalls: [], results: [], images: 0, files: [] };
    },
  };
}

function normalizeCodex(input: ConversationInput, noteTemplate: string | null): Normalized {
  const { items } = input;
  const legacy = items.findIndex(isLegacyHeader);
  if (legacy >= 0 && !items.some(isRolloutLine)) input.fail(legacy, LEGACY);
  items.forEach((item, k) => {
    if (!isRecord(item)) input.fail(k, `expected a rollout line object, found ${describe(item)}`);
    if (!isRolloutLine(item)) input.fail(k, 'rollout line has no string "type" and "payload" (an object for its type)');
  });
  const cut = lastCompacted(items);
  const messages: Message[] = [];
  const itemsOf: number[][] = [];
  const pinned: number[] = [];
  for (let k = 0; k < cut; k++) pinned.push(k);
  if (cut >= 0) {
    messages.push(compactedMessage(input, cut));
    itemsOf.push([cut]);
  }
  const base = baseInstructions(input);
  if (base !== null) {
    messages.push(base);
    itemsOf.push([]);
  }
  const prompts = promptsAfter(items, cut);
  const { drafts, pinned: loose } = draftsOf(input, cut, prompts, noteTemplate);
  const owner = new Map<number, number>();
  for (const d of drafts) {
    for (const k of d.lines) owner.set(k, messages.length);
    messages.push(messageOfDraft(d));
    itemsOf.push(d.lines);
  }
  pinned.push(...loose);
  const calls = callLines(items, cut);
  const looseSet = new Set(loose);
  for (let k = cut + 1; k < items.length; k++) {
    if (owner.has(k) || looseSet.has(k)) continue;
    const target = lineType(items[k]) === 'event_msg' ? mirrorTarget(items, k, cut, prompts, calls) : null;
    const m = target === null ? undefined : owner.get(target);
    if (m === undefined) pinned.push(k);
    else (itemsOf[m] as number[]).push(k);
  }
  for (const list of itemsOf) list.sort((a, b) => a - b);
  return { messages, itemsOf, pinned: pinned.sort((a, b) => a - b) };
}

/** The first timestamp of the session, for a note made before its place is known. */
function firstTimestamp(items: readonly unknown[]): string {
  for (const item of items) {
    const t = isRecord(item) ? own(item, 'timestamp') : undefined;
    if (typeof t === 'string') return t;
  }
  return new Date(0).toISOString();
}

/** A user message line, which Codex loads on resume as part of the history. */
function userLine(text: string, timestamp: string): Record<string, unknown> {
  return {
    timestamp,
    type: 'response_item',
    payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] },
  };
}

/** A note or summary line takes the timestamp of the line written right before it (else right after it). */
function placeCodex(value: unknown, neighbour: unknown): unknown {
  const t = isRecord(neighbour) ? own(neighbour, 'timestamp') : undefined;
  return typeof t === 'string' && isRecord(value) ? { ...value, timestamp: t } : value;
}

/**
 * Tool calls and outputs of the live history, for `swc inspect`, as the Responses adapter pairs them. A call left
 * without an output when no message follows it was still running when the file was copied: reported apart.
 */
function codexPairing(input: ConversationInput): Pairing {
  const { items } = input;
  // Said once, as normalizing says it, not as an unknown role on every line.
  if (items.some(isLegacyHeader) && !items.some(isRolloutLine))
    return { calls: [], results: [], problems: [{ item: items.findIndex(isLegacyHeader), text: LEGACY }] };
  const unknownRoles: { item: number; role: string | null }[] = [];
  items.forEach((item, k) => {
    if (!isRolloutLine(item)) unknownRoles.push({ item: k, role: null });
  });
  const cut = lastCompacted(items);
  const lines = responseLines(items, cut);
  const inner = (responses.pairing as (i: ConversationInput) => Pairing)(responseInput(input, lines));
  const at = (j: number): number => lines[j] as number;
  const answered = new Set(inner.results.map((r) => r.id));
  const lastMessage = lines.reduce((last, k) => (messageRole(items[k]) !== null ? k : last), -1);
  const calls = inner.calls.map((c) => ({ ...c, item: at(c.item) }));
  const running = calls.filter((c) => !answered.has(c.id) && c.item > lastMessage);
  return {
    calls: calls.filter((c) => !running.includes(c)),
    results: inner.results.map((r) => ({ ...r, item: at(r.item) })),
    unknownRoles: [...unknownRoles, ...(inner.unknownRoles ?? []).map((u) => ({ ...u, item: at(u.item) }))],
    problems: (inner.problems ?? []).map((p) => ({ ...p, item: at(p.item) })),
    running: running.map((c) => ({
      item: c.item,
      text: `tool call ${JSON.stringify(c.id)} (${c.name}) has no output yet: the session was still running`,
    })),
  };
}

/** A pruned output line: its payload's `output` becomes the placeholder; every other byte stays. */
function writePrunedCodex(request: PruneWrite): ReadonlyMap<number, string> {
  return writeResults(request, (raw, root) => {
    const payload = memberSpan(raw, root, 'payload');
    if (payload === undefined) return [];
    const type = parseJsonType(raw, payload);
    return type !== null && type.endsWith('_output') ? [{ object: payload, key: 'output' }] : [];
  });
}

/** A payload's `type`, read without parsing the rest. */
function parseJsonType(raw: string, payload: { start: number; end: number }): string | null {
  const span = memberSpan(raw, payload, 'type');
  if (span === undefined) return null;
  const value: JsonValue = parseJson(raw, span.start, span.end);
  return typeof value === 'string' ? value : null;
}

export const codex: FormatAdapter = {
  name: 'codex',
  readsTextStarting: INJECTED,
  listKeys: [],
  ...detectedBy([
    {
      each: isRolloutLine,
      some: (item) => lineType(item) === 'session_meta' || lineType(item) === 'response_item',
    },
    // Read only to say so: taken for Responses items, its header would fail as an item.
    { each: isLegacyLine, some: isLegacyHeader },
  ]),
  normalize: normalizeCodex,
  makeNote({ text, items }) {
    return userLine(text, firstTimestamp(items));
  },
  placeNew: placeCodex,
  pairing: codexPairing,
  writePruned: writePrunedCodex,
};
