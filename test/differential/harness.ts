/**
 * End-to-end differential testing against Haystack's rules: random conversations are written as files of every
 * format (and as library arrays), compacted through swc's real entry points, and what comes out is read back in the
 * conversation's own terms and compared with the independent model in test/reference/haystack.ts.
 *
 * The reference sees each file as Haystack would hold it: one `ChatMessage` per item of the list (the results one
 * Anthropic or Gemini item carries are one message), instructions held beside the list first.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  createRng,
  listOf,
  writeAs,
  type Conversation,
  type FormatName,
  type RefCall,
  type RefMessage,
} from '../helpers/convert.js';
import { DEFAULT_OMISSION_NOTE, type HMessage } from '../reference/haystack.js';

export const ALL_FORMATS: readonly FormatName[] = ['openai', 'haystack', 'anthropic', 'responses', 'gemini'];

/** What a format can hold faithfully, item for item. */
export interface Shape {
  /** System messages after the first non-system one (Anthropic and Gemini hold instructions only beside the list). */
  readonly midSystem: boolean;
  /** Several calls in one assistant message. */
  readonly parallel: boolean;
  /**
   * Responses writes an assistant message as a run of items, and a run reads as one message until it has its
   * message item: there an assistant message follows another only when that one has text, and then has text itself.
   */
  readonly assistantAfterAssistantHasText: boolean;
}

export function shapeOf(format: FormatName, options: { parallel?: boolean } = {}): Shape {
  return {
    midSystem: format === 'openai' || format === 'haystack',
    parallel: options.parallel ?? true,
    assistantAfterAssistantHasText: format === 'responses',
  };
}

const WORDS = [
  'alpha',
  'bravo',
  'flight',
  'refund',
  'Zürich',
  'café',
  '東京',
  '😀',
  'order-123',
  'status',
  'the',
  'a',
  '42',
  'seven',
  'quote"d',
  'back\\slash',
  'tab\there',
  'line\nbreak',
];

/**
 * A random conversation with the shapes real transcripts have and the rules care about: consecutive user messages
 * (also as the run that opens a conversation, with or without instructions),
 * consecutive assistant messages, parallel and unanswered calls, earlier notes, images and files, mid-run system
 * messages; texts with and without numbers.
 */
export function randomShapes(seed: number, shape: Shape): Conversation {
  const rng = createRng(seed);
  const words = (min: number, max: number): string => {
    const n = rng.int(min, max);
    return Array.from({ length: n }, () => rng.pick(WORDS)).join(' ');
  };
  const out: RefMessage[] = [];
  let calls = 0;
  const systems = rng.pick([0, 1, 1, 2]);
  for (let i = 0; i < systems; i++) out.push({ role: 'system', text: words(2, 40) });
  const note = (): void => {
    out.push({
      role: 'user',
      texts: [DEFAULT_OMISSION_NOTE.split('{num_removed}').join(String(rng.int(1, 40)))],
      images: 0,
      files: [],
      note: true,
    });
  };
  // Agents often open with several user messages before the first reply (injected context, then the prompt).
  if (rng.chance(0.25))
    for (let k = rng.int(1, 3); k > 0; k--) out.push({ role: 'user', texts: [words(1, 60)], images: 0, files: [] });
  const events = rng.int(1, 22);
  let last: RefMessage['role'] | 'none' = 'none';
  for (let e = 0; e < events; e++) {
    const r = rng.next();
    if (r < 0.3) {
      const texts = rng.chance(0.15) ? [words(1, 20), words(1, 20)] : [words(1, 60)];
      out.push({
        role: 'user',
        texts,
        images: rng.chance(0.08) ? rng.int(1, 2) : 0,
        files: rng.chance(0.06) ? [`report-${rng.int(1, 99)}.pdf`] : [],
      });
    } else if (r < 0.45) {
      const prev = out[out.length - 1];
      if (shape.assistantAfterAssistantHasText && prev?.role === 'assistant' && prev.text === null) continue;
      out.push({ role: 'assistant', text: words(1, 50), reasoning: rng.chance(0.2) ? words(1, 10) : null, calls: [] });
    } else if (r < 0.88) {
      const n = shape.parallel ? rng.pick([1, 1, 1, 2, 3]) : 1;
      const made: RefCall[] = Array.from({ length: n }, () => ({
        id: `call_${seed}_${calls++}`,
        name: rng.pick(['search', 'lookup_order', 'read_file', 'run']),
        args: rng.chance(0.7)
          ? {
              query: words(1, 6),
              n: rng.int(0, 999),
              ...(rng.chance(0.3) ? { deep: { list: [1, 'x', null, true], ratio: 2.5 } } : {}),
            }
          : {},
      }));
      const prev = out[out.length - 1];
      const needsText = shape.assistantAfterAssistantHasText && last === 'assistant';
      // A message of calls only right after one without text would read as part of it (see Shape).
      if (needsText && prev?.role === 'assistant' && prev.text === null) continue;
      out.push({
        role: 'assistant',
        text: needsText || rng.chance(0.4) ? words(1, 20) : null,
        reasoning: rng.chance(0.2) ? words(1, 10) : null,
        calls: made,
      });
      // Results follow their call in call order; now and then one is never answered.
      for (const c of made)
        if (!rng.chance(0.08))
          out.push({ role: 'tool', callId: c.id, name: c.name, text: words(1, rng.chance(0.2) ? 400 : 80) });
    } else if (r < 0.94) {
      note();
    } else if (shape.midSystem && out.some((m) => m.role !== 'system')) {
      out.push({ role: 'system', text: words(2, 20) });
    }
    last = out[out.length - 1]?.role ?? 'none';
  }
  if (!out.some((m) => m.role !== 'system')) out.push({ role: 'user', texts: [words(1, 30)], images: 0, files: [] });
  return out;
}

/**
 * The conversation with an earlier run's note of a template used as written (no `{num_removed}`) where the window
 * writes one: right after the instructions, or (`afterTask`) right after a user message that directly follows them,
 * as a run that cut steps leaves it. The note carries Haystack's meta in the reference, and only its text in files.
 */
export function withLiteralNote(conversation: Conversation, text: string, afterTask: boolean): Conversation {
  let at = 0;
  while (at < conversation.length && conversation[at]?.role === 'system') at++;
  const next = conversation[at];
  if (afterTask && next?.role === 'user' && next.note !== true) at++;
  const note: RefMessage = { role: 'user', texts: [text], images: 0, files: [], note: true };
  return [...conversation.slice(0, at), note, ...conversation.slice(at)];
}

/**
 * Whether a conversation has the one shape where a note of a template used as written is taken for the task on
 * purpose (docs/strategy.md, "notes used as written"): no user message but notes, one of them that literal text.
 */
export function isLiteralNoteCorner(messages: readonly HMessage[], template: string | null): boolean {
  if (template === null || template.includes('{num_removed}')) return false;
  const users = messages.filter((m) => m.role === 'user');
  return users.every((m) => m.meta.compaction !== undefined) && users.some((m) => m.texts.join('\n') === template);
}

/**
 * The shape for pruning and offloading: parallel results share one Anthropic or Gemini item, which Haystack's
 * pruning and offloading (one result per message) cannot hold apart.
 */
export function shapeForResults(format: FormatName): Shape {
  return shapeOf(format, { parallel: format !== 'anthropic' && format !== 'gemini' });
}

/** The note a run leaves for these removed view messages: the template with their count in the file's own items. */
export function noteTextOf(
  c: WrittenCase,
  removed: readonly number[],
  template: string = DEFAULT_OMISSION_NOTE,
): string {
  const items = removed.reduce((n, v) => n + (c.view.items[v] as readonly number[]).length, 0);
  return template.split('{num_removed}').join(String(items));
}

/** The conversation as Haystack's messages of one written file: one per item, instructions beside the list first. */
export interface View {
  readonly messages: HMessage[];
  /** For each view message, the input items it stands for (empty for instructions beside the list). */
  readonly items: readonly (readonly number[])[];
  /** For each input item, its view message. */
  readonly viewOfItem: readonly number[];
}

export function viewOf(conversation: Conversation, itemOf: readonly (number | null)[], itemCount: number): View {
  const messages: HMessage[] = [];
  const firsts: (number | null)[] = [];
  const besides: HMessage[] = [];
  conversation.forEach((m, k) => {
    const item = itemOf[k] ?? null;
    const h = toHaystack(m);
    if (item === null) {
      besides.push(h);
      return;
    }
    const prev = firsts[firsts.length - 1];
    if (prev === item) {
      // Results carried by the same item are one message.
      const last = messages[messages.length - 1] as HMessage;
      messages[messages.length - 1] = { ...last, results: [...last.results, ...h.results] };
      return;
    }
    messages.push(h);
    firsts.push(item);
  });
  const items: number[][] = [];
  const viewOfItem = new Array<number>(itemCount).fill(-1);
  firsts.forEach((first, v) => {
    const next = firsts[v + 1] ?? itemCount;
    const own: number[] = [];
    for (let i = first as number; i < (next as number); i++) {
      own.push(i);
      viewOfItem[i] = v + besides.length;
    }
    items.push(own);
  });
  return { messages: [...besides, ...messages], items: [...besides.map(() => []), ...items], viewOfItem };
}

function toHaystack(m: RefMessage): HMessage {
  const empty = {
    texts: [] as string[],
    toolCalls: [],
    results: [],
    images: 0,
    files: [] as (string | null)[],
    meta: {},
  };
  switch (m.role) {
    case 'system':
      return { ...empty, role: 'system', texts: [m.text] };
    case 'user':
      return {
        ...empty,
        role: 'user',
        texts: [...m.texts],
        images: m.images,
        files: [...m.files],
        meta: m.note === true ? { compaction: 'sliding_window' } : {},
      };
    case 'assistant':
      return {
        ...empty,
        role: 'assistant',
        texts: m.text === null ? [] : [m.text],
        toolCalls: m.calls.map((c) => ({ toolName: c.name, id: c.id, arguments: c.args })),
      };
    case 'tool':
      return { ...empty, role: 'tool', results: [{ toolName: m.name, id: m.callId, text: m.text, error: false }] };
  }
}

/** One written case: the file, its items and its view. */
export interface WrittenCase {
  readonly format: FormatName;
  readonly name: string;
  readonly text: string;
  readonly items: unknown[];
  readonly view: View;
}

export function writeCase(format: FormatName, conversation: Conversation, jsonl: boolean): WrittenCase {
  // JSONL holds no instructions beside the list: Anthropic and Gemini lose them, so they are left out there.
  const conv =
    jsonl && (format === 'anthropic' || format === 'gemini')
      ? conversation.filter((m) => m.role !== 'system')
      : conversation;
  const written = writeAs(format, conv, { jsonl });
  const items = jsonl
    ? written.text
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as unknown)
    : listOf(format, JSON.parse(written.text)).items;
  return { format, name: written.name, text: written.text, items, view: viewOf(conv, written.itemOf, items.length) };
}

/**
 * A compacted list read back in the view's terms: the view messages it keeps in order, 'NOTE' where the note is, and
 * which came back rewritten (a pruned result, found by the call ids it names). Items are matched to the input in
 * order; after a window that changed the list no earlier note is kept (it is folded into the new note), so a new note
 * that reads as an earlier one is still the note.
 *
 * Equal items (two user messages that both say "ok") can be matched more than one way. Their bytes are the same, so
 * which of them a writer kept is not a property of the output: with `expected`, the matching that reads as it is
 * taken when there is one; otherwise (and without it) each item takes its first match.
 */
export function readBack(
  input: WrittenCase,
  outputItems: readonly unknown[],
  windowed = true,
  expected?: readonly (number | 'NOTE')[],
): { sequence: (number | 'NOTE')[]; rewritten: number[] } {
  const keys = input.items.map((i) => JSON.stringify(i));
  const outKeys = outputItems.map((item) => JSON.stringify(item));
  const viewAt = (i: number): number => input.view.viewOfItem[i] as number;
  const isEarlierNote = (i: number): boolean =>
    windowed && input.view.messages[viewAt(i)]?.meta.compaction === 'sliding_window';
  /** The input items an output item can be, in order: equal ones, else results that name its calls, else none. */
  const candidates = (key: string, from: number): { at: number; rewritten: boolean }[] => {
    const equal: { at: number; rewritten: boolean }[] = [];
    for (let i = from; i < keys.length; i++)
      if (keys[i] === key && !isEarlierNote(i)) equal.push({ at: i, rewritten: false });
    if (equal.length > 0) return equal;
    for (let i = from; i < keys.length; i++) {
      const ids = (input.view.messages[viewAt(i)] as HMessage).results
        .map((r) => r.id)
        .filter((id): id is string => id !== null);
      if (ids.length > 0 && ids.every((id) => key.includes(JSON.stringify(id)))) return [{ at: i, rewritten: true }];
    }
    return [];
  };
  const start: (number | 'NOTE')[] = input.view.items.flatMap((own, v) => (own.length === 0 ? [v] : []));
  const isPrefix = (sequence: readonly (number | 'NOTE')[]): boolean =>
    expected === undefined || sequence.every((s, k) => expected[k] === s);
  /** Matches output items from `k` on; with `expected`, only along matchings whose sequence stays a prefix of it. */
  const match = (
    k: number,
    from: number,
    sequence: (number | 'NOTE')[],
    rewritten: readonly number[],
    strict: boolean,
  ): { sequence: (number | 'NOTE')[]; rewritten: number[] } | null => {
    if (strict && !isPrefix(sequence)) return null;
    if (k === outKeys.length) {
      if (strict && sequence.length !== (expected as readonly unknown[]).length) return null;
      return { sequence, rewritten: [...new Set(rewritten)].sort((a, b) => a - b) };
    }
    const options = candidates(outKeys[k] as string, from);
    if (options.length === 0) return match(k + 1, from, [...sequence, 'NOTE'], rewritten, strict);
    for (const { at, rewritten: isRewritten } of strict ? options : options.slice(0, 1)) {
      const v = viewAt(at);
      const next = sequence[sequence.length - 1] === v ? sequence : [...sequence, v];
      const found = match(k + 1, at + 1, next, isRewritten ? [...rewritten, v] : rewritten, strict);
      if (found !== null) return found;
    }
    return null;
  };
  return (
    (expected === undefined ? null : match(0, 0, start, [], true)) ??
    (match(0, 0, start, [], false) as { sequence: (number | 'NOTE')[]; rewritten: number[] })
  );
}

/** The output file's items. */
export function itemsOfOutput(format: FormatName, text: string, jsonl: boolean): unknown[] {
  if (jsonl)
    return text.trimEnd() === ''
      ? []
      : text
          .trimEnd()
          .split('\n')
          .map((l) => JSON.parse(l) as unknown);
  return listOf(format, JSON.parse(text)).items;
}

/** A scratch folder for one test file's cases. */
export function scratch(): {
  dir: string;
  write(name: string, text: string): string;
  read(file: string): string;
  remove(): void;
} {
  const dir = mkdtempSync(path.join(tmpdir(), 'swc-diff-'));
  return {
    dir,
    write(name, text) {
      const file = path.join(dir, name);
      writeFileSync(file, text);
      return file;
    },
    read: (file) => readFileSync(file, 'utf8'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** The scale of test/helpers/scale.ts, under the name test/replay/differential.test.ts imports. */
export { scaled as runs } from '../helpers/scale.js';
