/**
 * fast-check generators of whole transcript files: a conversation in a small format-neutral model, written by a
 * codec into one format's items, laid out as JSON or JSONL in one of the styles people's files come in, with the
 * unusual numbers, escapes, duplicate keys and `__proto__`/`constructor`/`prototype` keys that must survive.
 *
 * A new format plugs in by adding a `FormatCodec` (how a message becomes items, how that format's note looks)
 * and listing it where the properties run; the properties themselves never look inside an item.
 */
import fc from 'fast-check';
import { DEFAULT_NOTE_TEMPLATE, formatNote } from '../../src/core/note.js';
import {
  BARE,
  fileBytes,
  list,
  obj,
  raw,
  writeJsonDocument,
  writeJsonLines,
  writeLine,
  type FileStyle,
  type Frame,
  type JsonNode,
} from './json-text.js';

type Members = readonly (readonly [string, JsonNode])[];

export interface Call {
  readonly id: string;
  readonly name: string;
  readonly args: JsonNode;
}

/** One message of the neutral model. `extras` are members a format has no use for, written after its own. */
export type ConvMessage =
  | { readonly role: 'system'; readonly text: string; readonly extras: Members }
  | { readonly role: 'user'; readonly text: string; readonly extras: Members }
  /** A sliding-window note an earlier run left (default template). */
  | { readonly role: 'note'; readonly removed: number; readonly kept: number; readonly extras: Members }
  | {
      readonly role: 'assistant';
      readonly text: string | null;
      readonly calls: readonly Call[];
      readonly extras: Members;
    }
  /** A tool result; `callId` may answer a call that is nowhere in the file. */
  | {
      readonly role: 'tool';
      readonly callId: string;
      readonly name: string;
      readonly text: string;
      readonly extras: Members;
    };

/** How one format writes the neutral model. */
export interface FormatCodec {
  /** The adapter's name, as `--format` takes it and auto-detection reports it. */
  readonly name: string;
  /** The key an object container holds the list under. */
  readonly listKey: string;
  /** Writes the messages as list items; `itemOf[m]` lists the items message m became (in order). */
  encode(messages: readonly ConvMessage[]): { items: JsonNode[]; itemOf: number[][] };
  /** The note this format writes for a compaction, member order included (it is compared as text). */
  note(text: string, removed: number, kept: number): JsonNode;
}

/** The default note's text for an earlier run's count. */
export function earlierNoteText(removed: number): string {
  return formatNote(DEFAULT_NOTE_TEMPLATE, removed);
}

/** OpenAI holds arguments as a string of JSON: the arguments written on one line, then quoted. */
function openaiArguments(args: JsonNode): string {
  return writeLine(args, { colon: ': ', comma: ', ' });
}

export const openaiCodec: FormatCodec = {
  name: 'openai',
  listKey: 'messages',
  encode(messages) {
    const items = messages.map((m): JsonNode => {
      switch (m.role) {
        case 'system':
          return obj(['role', 'system'], ['content', m.text], ...m.extras);
        case 'user':
          return obj(['role', 'user'], ['content', m.text], ...m.extras);
        case 'note':
          return obj(['role', 'user'], ['content', earlierNoteText(m.removed)], ...m.extras);
        case 'assistant': {
          const calls = m.calls.map((c) =>
            obj(
              ['id', c.id],
              ['type', 'function'],
              ['function', obj(['name', c.name], ['arguments', openaiArguments(c.args)])],
            ),
          );
          const members: [string, JsonNode][] = [
            ['role', 'assistant'],
            ['content', m.text],
          ];
          if (calls.length > 0) members.push(['tool_calls', list(...calls)]);
          return obj(...members, ...m.extras);
        }
        case 'tool':
          return obj(['role', 'tool'], ['tool_call_id', m.callId], ['content', m.text], ...m.extras);
      }
    });
    return { items, itemOf: items.map((_, k) => [k]) };
  },
  note(text) {
    return obj(['role', 'user'], ['content', text]);
  },
};

/** Haystack's `meta` of a note. */
function compactionMeta(removed: number, kept: number): JsonNode {
  return obj([
    'context_compaction',
    obj(['strategy', 'sliding_window'], ['removed_messages', removed], ['kept_messages', kept]),
  ]);
}

/** A `meta` whose `__proto__` member holds what a note's meta holds: data, never a note marker. */
const DECOY_META = obj(['__proto__', compactionMeta(1, 1)]);

export const haystackCodec: FormatCodec = {
  name: 'haystack',
  listKey: 'messages',
  encode(messages) {
    const items = messages.map((m): JsonNode => {
      const item = (role: string, meta: JsonNode, content: JsonNode[]): JsonNode =>
        obj(['role', role], ['meta', meta], ['name', null], ['content', list(...content)], ...m.extras);
      const plainMeta = m.extras.length > 0 ? DECOY_META : obj();
      switch (m.role) {
        case 'system':
        case 'user':
          return item(m.role, plainMeta, [obj(['text', m.text])]);
        case 'note':
          return item('user', compactionMeta(m.removed, m.kept), [obj(['text', earlierNoteText(m.removed)])]);
        case 'assistant':
          return item('assistant', plainMeta, [
            ...(m.text === null ? [] : [obj(['text', m.text])]),
            ...m.calls.map((c) => obj(['tool_call', obj(['tool_name', c.name], ['arguments', c.args], ['id', c.id])])),
          ]);
        case 'tool':
          return item('tool', plainMeta, [
            obj([
              'tool_call_result',
              obj(
                ['result', m.text],
                ['origin', obj(['tool_name', m.name], ['arguments', obj()], ['id', m.callId])],
                ['error', false],
              ),
            ]),
          ]);
      }
    });
    return { items, itemOf: items.map((_, k) => [k]) };
  },
  note(text, removed, kept) {
    return obj(
      ['role', 'user'],
      ['meta', compactionMeta(removed, kept)],
      ['name', null],
      ['content', list(obj(['text', text]))],
    );
  },
};

/** Words that stress escaping, rendering and literal matching: quotes, backslashes, regex and `$` patterns, astral characters. */
const WORDS = [
  'alpha',
  'bravo',
  'flight',
  'refund',
  'the',
  'a',
  'café',
  'caf\u00e9',
  'Zürich',
  '東京',
  '😀',
  'quote"d',
  'back\\slash',
  'tab\there',
  'line\nbreak',
  '\u2028',
  '$&',
  '$1',
  '$$',
  '{num_removed}',
  '(.*)',
  '[^a]',
  '\\d+',
  '__proto__',
  'constructor',
  '<|endoftext|>',
  '',
];

const textArb = fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 30 }).map((words) => words.join(' '));

/** Members no format reads, and that must not change what any format reads. */
const EXTRA_POOL: readonly (readonly [string, JsonNode])[] = [
  ['__proto__', obj(['role', 'system'])],
  ['constructor', raw('1.0')],
  ['prototype', raw('-0')],
  ['n', raw('1e400')],
  ['seq', raw('9007199254740993')],
  ['esc', raw('"caf\\u00e9 \\ud83d\\ude00 \\/"')],
  ['dup', 1],
  ['dup', 2],
  ['toString', null],
  ['hasOwnProperty', 'x'],
  ['valueOf', list()],
];

const extrasArb: fc.Arbitrary<Members> = fc.oneof(
  { weight: 3, arbitrary: fc.constant([] as Members) },
  { weight: 2, arbitrary: fc.subarray([...EXTRA_POOL], { minLength: 1 }) },
);

/** Tool arguments: plain values and lexemes a re-serializer would change. */
const argsArb: fc.Arbitrary<JsonNode> = fc.constantFrom<JsonNode>(
  obj(),
  obj(['city', 'Oslo']),
  obj(['x', raw('1.0')], ['big', raw('9007199254740993')], ['huge', raw('1e400')], ['z', raw('-0')]),
  obj(['q', raw('"caf\\u00e9"')], ['__proto__', obj(['polluted', true])], ['nested', obj(['a', list(1, 'x', null)])]),
  obj(['dup', 1], ['dup', 2]),
);

/** The shape of a conversation before ids and texts are numbered. */
interface StepShape {
  readonly text: string | null;
  readonly calls: readonly { readonly name: string; readonly args: JsonNode }[];
  /** Results come back in another order than the calls (they still follow the message). */
  readonly shuffled: boolean;
  /** One more result that answers a call made nowhere in the file. */
  readonly orphan: boolean;
  readonly extras: Members;
}

interface TurnShape {
  readonly user: string;
  readonly steps: readonly StepShape[];
  readonly userExtras: Members;
}

interface ConversationShape {
  readonly systems: readonly { readonly text: string; readonly extras: Members }[];
  /** An assistant message before the first user message (in no turn). */
  readonly preamble: boolean;
  readonly earlierNote: 'none' | 'history' | 'after-task';
  readonly history: readonly TurnShape[];
  readonly task: { readonly text: string; readonly extras: Members } | null;
  readonly steps: readonly StepShape[];
}

const stepArb: fc.Arbitrary<StepShape> = fc
  .record({
    text: fc.option(textArb, { freq: 3 }),
    calls: fc.array(fc.record({ name: fc.constantFrom('search', 'get_weather', 'run', '__proto__'), args: argsArb }), {
      maxLength: 3,
    }),
    shuffled: fc.boolean(),
    orphan: fc.boolean(),
    extras: extrasArb,
  })
  .filter((s) => s.text !== null || s.calls.length > 0);

const turnArb: fc.Arbitrary<TurnShape> = fc.record({
  user: textArb,
  steps: fc.array(stepArb, { maxLength: 3 }),
  userExtras: extrasArb,
});

const shapeArb: fc.Arbitrary<ConversationShape> = fc.record({
  systems: fc.array(fc.record({ text: textArb, extras: extrasArb }), { maxLength: 2 }),
  preamble: fc.boolean(),
  earlierNote: fc.constantFrom<'none' | 'history' | 'after-task'>('none', 'none', 'history', 'after-task'),
  history: fc.array(turnArb, { maxLength: 4 }),
  task: fc.option(fc.record({ text: textArb, extras: extrasArb }), { freq: 8 }),
  steps: fc.array(stepArb, { maxLength: 4 }),
});

/** Numbers every text and id, so each item's text is unique in its file. */
function buildConversation(shape: ConversationShape): ConvMessage[] {
  const out: ConvMessage[] = [];
  let serial = 0;
  const label = (text: string): string => `#${++serial} ${text}`;
  const note = (): void => {
    out.push({ role: 'note', removed: 1000 + serial, kept: 3, extras: [] });
    serial++;
  };
  const step = (s: StepShape): void => {
    const calls = s.calls.map((c) => ({ id: `call_${++serial}`, name: c.name, args: c.args }));
    out.push({ role: 'assistant', text: s.text === null ? null : label(s.text), calls, extras: s.extras });
    const order = s.shuffled ? [...calls].reverse() : calls;
    for (const c of order)
      out.push({ role: 'tool', callId: c.id, name: c.name, text: label(`result of ${c.name}`), extras: [] });
    if (s.orphan)
      out.push({
        role: 'tool',
        callId: `call_missing_${++serial}`,
        name: 'lost',
        text: label('a result whose call is not in the file'),
        extras: [],
      });
  };
  for (const s of shape.systems) out.push({ role: 'system', text: label(s.text), extras: s.extras });
  if (shape.earlierNote === 'history') note();
  if (shape.preamble) out.push({ role: 'assistant', text: label('Hello, how can I help?'), calls: [], extras: [] });
  for (const t of shape.history) {
    out.push({ role: 'user', text: label(t.user), extras: t.userExtras });
    t.steps.forEach(step);
  }
  if (shape.task !== null) out.push({ role: 'user', text: label(shape.task.text), extras: shape.task.extras });
  if (shape.earlierNote === 'after-task') note();
  shape.steps.forEach(step);
  if (out.length === 0) out.push({ role: 'user', text: label('hello'), extras: [] });
  return out;
}

export const conversationArb: fc.Arbitrary<ConvMessage[]> = shapeArb.map(buildConversation);

/** File styles: JSONL is always one item per line; JSON documents come compact, with items on lines, or pretty. */
const separatorsArb = fc.constantFrom(
  { colon: ': ', comma: ', ' },
  { colon: ':', comma: ',' },
  { colon: ':', comma: ', ' },
);

const commonArb = fc.record({
  eol: fc.constantFrom<'\n' | '\r\n'>('\n', '\r\n'),
  finalNewline: fc.boolean(),
  bom: fc.boolean(),
});

export const jsonlStyleArb: fc.Arbitrary<FileStyle> = fc
  .tuple(separatorsArb, commonArb)
  .map(([sep, common]) => ({ unit: null, itemIndent: null, ...sep, ...common }));

export const jsonStyleArb: fc.Arbitrary<FileStyle> = fc
  .tuple(
    fc.oneof(
      fc.constantFrom('  ', '    ', '\t').map((unit) => ({ unit, itemIndent: null })),
      fc.constantFrom(null, '  ', '\t').map((itemIndent) => ({ unit: null, itemIndent })),
    ),
    separatorsArb,
    commonArb,
  )
  .map(([layout, sep, common]) => ({
    ...layout,
    ...(layout.unit === null ? sep : { colon: ': ', comma: ', ' }),
    ...common,
  }));

/** Containers around the list: a bare list, or a request body with keys before and after it. */
export function frameArb(listKey: string): fc.Arbitrary<Frame> {
  return fc.constantFrom<Frame>(BARE, {
    key: listKey,
    before: [
      ['model', 'gpt-4o'],
      ['__proto__', obj(['polluted', true])],
      ['temperature', raw('1.0')],
    ],
    after: [
      ['seed', raw('9007199254740993')],
      ['constructor', obj(['prototype', obj()])],
      ['max', raw('1e400')],
      ['seed', raw('-0')],
    ],
  });
}

/** One generated transcript file. */
export interface TranscriptFile {
  readonly codec: FormatCodec;
  readonly messages: readonly ConvMessage[];
  readonly framing: 'json' | 'jsonl';
  readonly frame: Frame;
  readonly style: FileStyle;
  readonly items: readonly JsonNode[];
  readonly itemOf: readonly (readonly number[])[];
  /** The file's text without the byte-order mark, and its bytes. */
  readonly text: string;
  readonly bytes: Buffer;
  /** A name whose extension says the framing. */
  readonly name: string;
}

/** Writes items as a file of the given framing, frame and style (the text, without the byte-order mark). */
export function writeItems(
  items: readonly JsonNode[],
  framing: 'json' | 'jsonl',
  frame: Frame,
  style: FileStyle,
): string {
  return framing === 'jsonl' ? writeJsonLines(items, style) : writeJsonDocument(items, frame, style);
}

/** Lays a conversation out as a file. */
export function transcriptFile(
  codec: FormatCodec,
  messages: readonly ConvMessage[],
  framing: 'json' | 'jsonl',
  frame: Frame,
  style: FileStyle,
): TranscriptFile {
  const { items, itemOf } = codec.encode(messages);
  const text = writeItems(items, framing, frame, style);
  return {
    codec,
    messages,
    framing,
    frame,
    style,
    items,
    itemOf,
    text,
    bytes: fileBytes(text, style),
    name: `${codec.name}.${framing}`,
  };
}

/** Transcript files of the given codecs, in every framing and style. */
export function transcriptFileArb(codecs: readonly FormatCodec[]): fc.Arbitrary<TranscriptFile> {
  return fc
    .tuple(fc.constantFrom(...codecs), conversationArb, fc.constantFrom<'json' | 'jsonl'>('json', 'jsonl'))
    .chain(([codec, messages, framing]) =>
      (framing === 'jsonl'
        ? fc.tuple(fc.constant(BARE), jsonlStyleArb)
        : fc.tuple(frameArb(codec.listKey), jsonStyleArb)
      ).map(([frame, style]) => transcriptFile(codec, messages, framing, frame, style)),
    );
}

/** Note settings: the default, none, or templates full of regex and replacement patterns, matched literally. */
export const noteArb: fc.Arbitrary<string | null | undefined> = fc.constantFrom<string | null | undefined>(
  undefined,
  null,
  'Dropped {num_removed} earlier messages ⟦swc⟧ $& $1 $$ $` (.*) [^x] \\d+ {num_removed}?',
  '⟦swc⟧ no count here: ^$ .* (a|b)+ \\',
  '⟦swc⟧ 1{num_removed}0 messages gone',
);
