/**
 * An independent model of Haystack's compaction rules, transcribed from deepset-ai/haystack
 * (`haystack/hooks/compaction/utils.py`, `sliding_window.py`, `tool_result_pruning.py`, and
 * `haystack/token_counters/utils.py` with `approximate_counter.py`). It imports nothing from src/: the differential
 * tests compare swc's real entry points with it, so a rule that swc's core or its adapters bend shows up here.
 *
 * Messages are Haystack `ChatMessage`s reduced to what the rules read. Indices are positions in the list.
 */

export type HRole = 'system' | 'user' | 'assistant' | 'tool';

export interface HToolCall {
  readonly toolName: string;
  readonly id: string | null;
  /** Plain JSON data, as Haystack holds a call's arguments (a dict). */
  readonly arguments: unknown;
}

export interface HToolResult {
  readonly toolName: string;
  readonly id: string | null;
  readonly text: string;
  readonly error: boolean;
}

export interface HMeta {
  /** `meta.context_compaction.strategy`, when a compactor made or rewrote the message. */
  readonly compaction?: string;
  /** `meta.tool_result_offloaded` is present. */
  readonly offloaded?: boolean;
}

export interface HMessage {
  readonly role: HRole;
  readonly texts: readonly string[];
  readonly toolCalls: readonly HToolCall[];
  readonly results: readonly HToolResult[];
  readonly images: number;
  /** One entry per file: its filename, or null. */
  readonly files: readonly (string | null)[];
  readonly meta: HMeta;
}

export type HCounter = (messages: readonly HMessage[]) => number;

// ---------------------------------------------------------------------------------------------------------------
// Rendering and the approximate counter (haystack/token_counters)

/** Python's `json.dumps(value, default=str, sort_keys=True)`: `, ` and `: ` separators, ASCII only. */
export function pyJsonDumps(value: unknown): string {
  if (value === null) return 'null';
  if (value === true) return 'true';
  if (value === false) return 'false';
  if (typeof value === 'number') return pyNumber(value);
  if (typeof value === 'string') return pyString(value);
  if (Array.isArray(value)) return '[' + value.map(pyJsonDumps).join(', ') + ']';
  if (typeof value === 'object') {
    const keys = Object.keys(value as object).sort(byCodePoint);
    return (
      '{' + keys.map((k) => `${pyString(k)}: ${pyJsonDumps((value as Record<string, unknown>)[k])}`).join(', ') + '}'
    );
  }
  return pyString(String(value));
}

function byCodePoint(a: string, b: string): number {
  const x = [...a].map((c) => c.codePointAt(0) as number);
  const y = [...b].map((c) => c.codePointAt(0) as number);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number);
  return x.length - y.length;
}

/** Python's float and int repr as json writes them (the test data holds integers and short decimals). */
function pyNumber(n: number): string {
  if (Number.isInteger(n) && !Object.is(n, -0)) return String(n);
  const s = String(n);
  // JavaScript writes 1e21 and 1.5e-7 as Python does except for the exponent's sign and padding.
  const m = /^(-?[\d.]+)e([+-])(\d+)$/.exec(s);
  if (m !== null) return `${m[1]}e${m[2]}${(m[3] as string).padStart(2, '0')}`;
  return s;
}

function pyString(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const ch = s[i] as string;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\b') out += '\\b';
    else if (ch === '\f') out += '\\f';
    else if (c < 0x20 || c > 0x7e) out += '\\u' + c.toString(16).padStart(4, '0');
    else out += ch;
  }
  return out + '"';
}

/** `_render_message` with the counter's placeholders (`<image>`, `<file: NAME>`), without call ids. */
export function renderHMessage(message: HMessage): string {
  const role = message.role;
  if (message.results.length > 0) {
    return message.results.map((r) => `[tool:${r.toolName}${r.error ? ' (error)' : ''}] ${r.text}`).join('\n');
  }
  const lines: string[] = [];
  if (message.texts.length > 0) lines.push(`[${role}] ` + message.texts.join('\n'));
  for (const call of message.toolCalls)
    lines.push(`[${role} -> tool_call] ${call.toolName}(${pyJsonDumps(call.arguments)})`);
  for (let i = 0; i < message.images; i++) lines.push(`[${role}] <image>`);
  for (const f of message.files) lines.push(`[${role}] <file: ${f === null || f === '' ? 'unnamed' : f}>`);
  return lines.length > 0 ? lines.join('\n') : `[${role}] <no content>`;
}

/** Python's `len` of a str: code points. */
function pyLen(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/** `ApproximateTokenCounter(chars_per_token, tokens_per_image, tokens_per_file).count(messages)`. */
export function approximateCounter(charsPerToken = 4, tokensPerImage = 85, tokensPerFile = 1000): HCounter {
  return (messages) => {
    if (messages.length === 0) return 0;
    const text = messages.map(renderHMessage).join('\n');
    let images = 0;
    let files = 0;
    for (const m of messages) {
      images += m.images;
      files += m.files.length;
    }
    return Math.floor(pyLen(text) / charsPerToken) + images * tokensPerImage + files * tokensPerFile;
  };
}

// ---------------------------------------------------------------------------------------------------------------
// utils.py

const hasCompactionMeta = (m: HMessage): boolean => m.meta.compaction !== undefined;

export function leadingSystemEnd(messages: readonly HMessage[]): number {
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i] as HMessage;
    if (m.role !== 'system' || hasCompactionMeta(m)) return i;
  }
  return messages.length;
}

export function latestUserIndex(messages: readonly HMessage[]): number | null {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as HMessage;
    if (m.role === 'user' && !hasCompactionMeta(m)) return i;
  }
  return null;
}

function isCompactionMessage(m: HMessage, strategy: string, role?: HRole): boolean {
  return (role === undefined || m.role === role) && m.meta.compaction === strategy;
}

/** A call or a result as steps pair them: its tool's name, and its id (null or empty when it has none). */
export interface StepLink {
  readonly name: string;
  readonly id: string | null;
}

/** A message as steps read it. */
export interface StepMessage {
  readonly role: string;
  readonly calls: readonly StepLink[];
  readonly results: readonly StepLink[];
}

/** An `HMessage` as steps read it. */
export function stepMessageOf(m: HMessage): StepMessage {
  return {
    role: m.role,
    calls: m.toolCalls.map((c) => ({ name: c.toolName, id: c.id })),
    results: m.results.map((r) => ({ name: r.toolName, id: r.id })),
  };
}

/**
 * Haystack's `_agent_step_spans` (utils.py), with swc's one deviation (docs/strategy.md, "Steps"): when a step is an
 * assistant message alone and the next begins right after it, and a call of it is answered by a result of the first
 * later step that has results, reached through such lone steps only, the steps from it to that one are one step.
 * For any message with a role, calls and results (the summarization reference shares it).
 */
export function agentStepSpans(messages: readonly StepMessage[], start: number): Array<[number, number]> {
  const spans = haystackStepSpans(messages, start);
  const out: Array<[number, number]> = [];
  for (let k = 0; k < spans.length; k++) {
    const [s, e] = spans[k] as [number, number];
    // The step with results this lone assistant message runs into, through lone assistant messages only.
    let last = k;
    while (
      last + 1 < spans.length &&
      (spans[last] as [number, number])[1] === (spans[last] as [number, number])[0] + 1 &&
      (spans[last + 1] as [number, number])[0] === (spans[last] as [number, number])[1]
    )
      last++;
    const [ls, le] = spans[last] as [number, number];
    const answers = messages.slice(ls + 1, le).flatMap((m) => m.results);
    const answered = (m: StepMessage | undefined): boolean =>
      (m?.calls ?? []).some((c) =>
        answers.some((r) => (hasId(r) ? r.id === c.id : r.name === '' || r.name === c.name)),
      );
    if (last > k && e === s + 1 && answered(messages[s])) {
      out.push([s, le]);
      k = last;
    } else out.push([s, e]);
  }
  return out;
}

const hasId = (link: StepLink): boolean => link.id !== null && link.id !== '';

/** `_agent_step_spans` as Haystack has it: an assistant message and the messages with results right after it. */
function haystackStepSpans(messages: readonly StepMessage[], start: number): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  let index = start;
  while (index < messages.length) {
    if (messages[index]?.role !== 'assistant') {
      index++;
      continue;
    }
    let end = index + 1;
    while (end < messages.length && (messages[end]?.results.length ?? 0) > 0) end++;
    spans.push([index, end]);
    index = end;
  }
  return spans;
}

function range(start: number, end: number): number[] {
  const out: number[] = [];
  for (let i = start; i < end; i++) out.push(i);
  return out;
}

export function currentAgentStepGroups(
  messages: readonly HMessage[],
  systemEnd: number,
  taskIndex: number | null,
): number[][] {
  const stepStart = taskIndex !== null ? taskIndex + 1 : systemEnd;
  return agentStepSpans(messages.map(stepMessageOf), stepStart).map(([s, e]) => range(s, e));
}

export function historicalTurnSpans(
  messages: readonly HMessage[],
  start: number,
  end: number,
): Array<[number, number]> {
  const users = range(start, end).filter(
    (i) => (messages[i] as HMessage).role === 'user' && !hasCompactionMeta(messages[i] as HMessage),
  );
  return users.map((s, k) => [s, users[k + 1] ?? end]);
}

export function historicalTurnGroups(
  messages: readonly HMessage[],
  systemEnd: number,
  taskIndex: number | null,
): number[][] {
  const historicalEnd = taskIndex !== null ? taskIndex : systemEnd;
  return historicalTurnSpans(messages, systemEnd, historicalEnd).map(([s, e]) => range(s, e));
}

const at = (messages: readonly HMessage[], indices: readonly number[]): HMessage[] =>
  indices.map((i) => messages[i] as HMessage);

// ---------------------------------------------------------------------------------------------------------------
// sliding_window.py

export const DEFAULT_OMISSION_NOTE =
  '[{num_removed} earlier messages were removed from this conversation to free up context and cannot be recovered.]';

const isCompactionNote = (m: HMessage): boolean => isCompactionMessage(m, 'sliding_window', 'user');

function firstGroupToKeep(
  messages: readonly HMessage[],
  groups: number[][],
  available: number,
  count: HCounter,
): number {
  let firstKept = groups.length;
  while (firstKept > 0) {
    const tokens = count(at(messages, groups[firstKept - 1] as number[]));
    if (tokens > available) break;
    available -= tokens;
    firstKept--;
  }
  return firstKept;
}

/** What `SlidingWindowCompactor.compact` returns, by index: null for None. */
export interface WindowResult {
  /** Indices kept, in order. */
  readonly kept: number[];
  /** Indices of the messages Haystack counts as removed (`removable`). */
  readonly removed: number[];
  /** Where the note goes among the kept messages, or null when notes are off. */
  readonly noteIndex: number | null;
  readonly noteText: string | null;
}

export function slidingWindow(
  messages: readonly HMessage[],
  target: number,
  count: HCounter,
  options: { minKeepSteps: number; note: string | null },
): WindowResult | null {
  if (count(messages) <= target) return null;
  const systemEnd = leadingSystemEnd(messages);
  const taskIndex = latestUserIndex(messages);
  const taskIndices = taskIndex !== null ? [taskIndex] : [];
  const historical = historicalTurnGroups(messages, systemEnd, taskIndex).map((g) =>
    g.filter((i) => !isCompactionNote(messages[i] as HMessage)),
  );
  const steps = currentAgentStepGroups(messages, systemEnd, taskIndex);
  const protectedMessages = at(messages, [...range(0, systemEnd), ...taskIndices]);
  const available = target - count(protectedMessages);

  let firstTurn: number;
  let firstStep: number;
  const taskTokens = count(at(messages, steps.flat()));
  if (taskTokens > available) {
    const first = firstGroupToKeep(messages, steps, available, count);
    firstTurn = historical.length;
    firstStep = Math.min(first, Math.max(steps.length - options.minKeepSteps, 0));
  } else {
    firstTurn = firstGroupToKeep(messages, historical, available - taskTokens, count);
    firstStep = 0;
  }
  const keptTurns = historical.slice(firstTurn).flat();
  const keptSteps = steps.slice(firstStep).flat();
  const kept = [...range(0, systemEnd), ...keptTurns, ...taskIndices, ...keptSteps];
  const keptSet = new Set(kept);
  const removed = range(0, messages.length).filter((i) => !keptSet.has(i));
  const noteIndex = firstStep === 0 ? systemEnd : systemEnd + keptTurns.length + taskIndices.length;
  if (removed.length === 0) return null;
  if (options.note === null || options.note === '') return { kept, removed, noteIndex: null, noteText: null };
  if (removed.every((i) => isCompactionNote(messages[i] as HMessage))) return null;
  return { kept, removed, noteIndex, noteText: options.note.split('{num_removed}').join(String(removed.length)) };
}

/** The conversation a window result stands for. */
export function applyWindow(messages: readonly HMessage[], result: WindowResult): HMessage[] {
  const out = at(messages, result.kept);
  if (result.noteText !== null && result.noteIndex !== null) {
    out.splice(result.noteIndex, 0, {
      role: 'user',
      texts: [result.noteText],
      toolCalls: [],
      results: [],
      images: 0,
      files: [],
      meta: { compaction: 'sliding_window' },
    });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// tool_result_pruning.py

export const DEFAULT_PLACEHOLDER = '[Tool result removed to free up context. Call `{tool_name}` again if you need it.]';

export interface PruneResult {
  /** Indices of the results replaced, oldest first. */
  readonly pruned: number[];
  readonly messages: HMessage[];
}

export function toolResultPruning(
  messages: readonly HMessage[],
  target: number,
  count: HCounter,
  options: { minKeepSteps: number; minTokens: number; placeholder: string },
): PruneResult | null {
  let current = count(messages);
  if (current <= target) return null;
  const resultSteps = agentStepSpans(messages.map(stepMessageOf), 0)
    .filter(([s, e]) => e > s + 1)
    .map(([s, e]) => range(s + 1, e));
  const protectedPositions = new Set(resultSteps.slice(Math.max(resultSteps.length - options.minKeepSteps, 0)).flat());
  const compacted = [...messages];
  const pruned: number[] = [];
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index] as HMessage;
    const result = message.results[0];
    if (result === undefined || protectedPositions.has(index)) continue;
    if (hasCompactionMeta(message) || message.meta.offloaded === true) continue;
    const original = count([message]);
    if (original <= options.minTokens) continue;
    const replacement: HMessage = {
      role: 'tool',
      texts: [],
      toolCalls: [],
      results: [
        {
          toolName: result.toolName,
          id: result.id,
          text: options.placeholder.split('{tool_name}').join(result.toolName),
          error: result.error,
        },
      ],
      images: 0,
      files: [],
      meta: { ...message.meta, compaction: 'tool_result_pruning' },
    };
    const saved = original - count([replacement]);
    if (saved <= 0) continue;
    compacted[index] = replacement;
    pruned.push(index);
    current -= saved;
    if (current <= target) break;
  }
  return pruned.length > 0 ? { pruned, messages: compacted } : null;
}

// ---------------------------------------------------------------------------------------------------------------
// tool_result_offloading/hooks.py with the OffloadOverChars policy (swc's --offload-over), applied to a whole
// transcript as swc documents it: every result outside the newest `minKeepSteps` tool-calling steps (pruning's protection) is looked at, not
// only the freshest batch.

/** The results `_maybe_offload` would replace: no error, not offloaded or compacted, text, longer than `over`. */
export function offloadCandidates(
  messages: readonly HMessage[],
  options: { minKeepSteps: number; over: number },
): number[] {
  const resultSteps = agentStepSpans(messages.map(stepMessageOf), 0)
    .filter(([s, e]) => e > s + 1)
    .map(([s, e]) => range(s + 1, e));
  const protectedPositions = new Set(resultSteps.slice(Math.max(resultSteps.length - options.minKeepSteps, 0)).flat());
  const out: number[] = [];
  messages.forEach((message, index) => {
    const result = message.results[0];
    if (result === undefined || protectedPositions.has(index) || result.error) return;
    if (message.meta.offloaded === true || hasCompactionMeta(message)) return;
    // Text only: swc's hook rule leaves a result with an image or a file in context (docs/strategy.md).
    if (message.images > 0 || message.files.length > 0) return;
    if (pyLen(result.text) > options.over) out.push(index);
  });
  return out;
}

/** The hook's pointer for one text since Haystack 3.4 (`_offload_content_blocks`, PR #12534). */
export function offloadPointer(reference: string, text: string, previewChars = 200): string {
  const points = [...text];
  const preview = points.slice(0, previewChars).join('');
  return `Tool result offloaded to text (${points.length} characters) at '${reference}'. Preview: ${preview}${points.length > previewChars ? '...' : ''}`;
}

/** The tool-calling step (from 1) each result message belongs to, as `_result_store_key` numbers steps in a run. */
export function resultStepOf(messages: readonly HMessage[]): Map<number, number> {
  const stepOf = new Map<number, number>();
  agentStepSpans(messages.map(stepMessageOf), 0)
    .filter(([s, e]) => e > s + 1)
    .forEach(([s, e], k) => {
      for (let i = s + 1; i < e; i++) stepOf.set(i, k + 1);
    });
  return stepOf;
}
