/**
 * An independent model of Haystack's SummarizationCompactor: a plain transcription of
 * haystack/hooks/compaction/summarization.py and utils.py (and `_render_message` of haystack/token_counters/utils.py),
 * written against its own small message shape. It imports nothing from src/: the counter is handed in as a function
 * of rendered messages, and tool arguments come already rendered (json.dumps(sort_keys=True) is not what is tested).
 * The step spans of utils.py are the other reference's transcription, shared.
 */
import { agentStepSpans, type StepMessage } from './haystack.js';

export interface RMessage {
  readonly role: 'system' | 'user' | 'assistant' | 'tool';
  /** Haystack's meta `context_compaction.strategy`, or undefined. */
  readonly strategy?: string;
  readonly texts: readonly string[];
  readonly calls: readonly { readonly id: string; readonly name: string; readonly args: string }[];
  readonly results: readonly {
    readonly id: string;
    readonly name: string;
    readonly text: string;
    readonly error: boolean;
  }[];
  /** `<image: …>` / `<file: …>` descriptions, images first; `images` and `files` are the counting placeholders' counts. */
  readonly attachments: readonly string[];
  readonly images: number;
  readonly files: readonly string[];
}

/** What the counter is given: one entry per message (its text for counting, and its images and files). */
export type Count = (rendered: readonly { text: string; images: number; files: number }[]) => number;

const hasMarker = (m: RMessage): boolean => m.strategy !== undefined;
const isSummary = (m: RMessage): boolean => m.strategy === 'summarization';
const isUser = (m: RMessage): boolean => m.role === 'user';

/** `_render_message` with the default placeholder: what the counter measures. */
function renderCounting(m: RMessage): { text: string; images: number; files: number } {
  if (m.results.length > 0)
    return {
      text: m.results.map((r) => `[tool:${r.name}${r.error ? ' (error)' : ''}] ${r.text}`).join('\n'),
      images: 0,
      files: 0,
    };
  const lines: string[] = [];
  if (m.texts.length > 0) lines.push(`[${m.role}] ${m.texts.join('\n')}`);
  for (const c of m.calls) lines.push(`[${m.role} -> tool_call] ${c.name}(${c.args})`);
  for (let i = 0; i < m.images; i++) lines.push(`[${m.role}] <image>`);
  for (const f of m.files) lines.push(`[${m.role}] <file: ${f}>`);
  return {
    text: lines.length > 0 ? lines.join('\n') : `[${m.role}] <no content>`,
    images: m.images,
    files: m.files.length,
  };
}

/** `_render_message(include_tool_call_ids=True, placeholder=_attachment_placeholder)`. */
function renderPrompt(m: RMessage): string {
  if (m.results.length > 0)
    return m.results
      .map((r) => `[tool:${r.name}${r.id ? ` id=${r.id}` : ''}${r.error ? ' (error)' : ''}] ${r.text}`)
      .join('\n');
  const lines: string[] = [];
  if (m.texts.length > 0) lines.push(`[${m.role}] ${m.texts.join('\n')}`);
  for (const c of m.calls) lines.push(`[${m.role} -> tool_call${c.id ? ` id=${c.id}` : ''}] ${c.name}(${c.args})`);
  for (const a of m.attachments) lines.push(`[${m.role}] ${a}`);
  return lines.length > 0 ? lines.join('\n') : `[${m.role}] <no content>`;
}

/** A message as steps read it (an empty id is none). */
const stepMessageOf = (m: RMessage): StepMessage => ({
  role: m.role,
  calls: m.calls.map((c) => ({ name: c.name, id: c.id })),
  results: m.results.map((r) => ({ name: r.name, id: r.id })),
});

const count = (messages: readonly RMessage[], counter: Count): number =>
  messages.length === 0 ? 0 : counter(messages.map(renderCounting));

function leadingSystemEnd(ms: readonly RMessage[]): number {
  for (let i = 0; i < ms.length; i++)
    if ((ms[i] as RMessage).role !== 'system' || hasMarker(ms[i] as RMessage)) return i;
  return ms.length;
}
function latestUserIndex(ms: readonly RMessage[]): number | null {
  for (let i = ms.length - 1; i >= 0; i--) if (isUser(ms[i] as RMessage) && !hasMarker(ms[i] as RMessage)) return i;
  return null;
}
const range = (s: number, e: number): number[] => Array.from({ length: e - s }, (_, k) => s + k);
function historicalTurnSpans(ms: readonly RMessage[], start: number, end: number): [number, number][] {
  const users = range(start, end).filter((i) => isUser(ms[i] as RMessage) && !hasMarker(ms[i] as RMessage));
  return users.map((i, p) => [i, users[p + 1] ?? end]);
}
function groupsToSummarize(
  ms: readonly RMessage[],
  groups: number[][],
  target: number,
  summaryTokens: number,
  counter: Count,
): number[] {
  const selected: number[] = [];
  for (const g of groups) {
    selected.push(...g);
    const left = new Set(selected);
    const remaining = count(
      ms.filter((_, i) => !left.has(i)),
      counter,
    );
    if (remaining + summaryTokens <= target) break;
  }
  return selected;
}
const previousSummaryIndices = (ms: readonly RMessage[], s: number, e: number): number[] =>
  range(s, e).filter((i) => isSummary(ms[i] as RMessage));

export interface Settings {
  readonly target: number;
  readonly minKeepSteps: number;
  readonly summaryTokens: number;
  readonly instruction: string;
}

/** `_next_summary`. */
export function nextSummary(ms: readonly RMessage[], s: Settings, counter: Count): number[] | null {
  const systemEnd = leadingSystemEnd(ms);
  const task = latestUserIndex(ms);
  const historyEnd = task !== null ? task : systemEnd;
  const taskStart = task !== null ? task + 1 : systemEnd;
  const turns = historicalTurnSpans(ms, systemEnd, historyEnd).map(([a, b]) => range(a, b));
  if (turns.length > 0) return groupsToSummarize(ms, turns, s.target, s.summaryTokens, counter);
  const hs = previousSummaryIndices(ms, systemEnd, historyEnd);
  if (hs.length > 1)
    return hs.slice(
      0,
      Math.max(
        groupsToSummarize(
          ms,
          hs.map((i) => [i]),
          s.target,
          s.summaryTokens,
          counter,
        ).length,
        2,
      ),
    );
  const steps = agentStepSpans(ms.map(stepMessageOf), taskStart).map(([a, b]) => range(a, b));
  const eligible = steps.slice(0, Math.max(steps.length - s.minKeepSteps, 0));
  if (eligible.length > 0) return groupsToSummarize(ms, eligible, s.target, s.summaryTokens, counter);
  const ts = previousSummaryIndices(ms, taskStart, ms.length);
  if (ts.length > 1)
    return ts.slice(
      0,
      Math.max(
        groupsToSummarize(
          ms,
          ts.map((i) => [i]),
          s.target,
          s.summaryTokens,
          counter,
        ).length,
        2,
      ),
    );
  return null;
}

/** `_summary_transcript` and `_prompt`. */
export function prompt(
  ms: readonly RMessage[],
  indices: readonly number[],
  instruction: string,
): { system: string; user: string } {
  const transcript = indices
    .map((i) => {
      const m = ms[i] as RMessage;
      if (!isSummary(m)) return renderPrompt(m);
      let text = m.texts[0] ?? '';
      if (text.startsWith('<conversation_summary>') && text.endsWith('</conversation_summary>'))
        text = text.slice('<conversation_summary>'.length, -'</conversation_summary>'.length).trim();
      return `[conversation_summary]\n${text}`;
    })
    .join('\n');
  return { system: instruction, user: `<conversation_to_summarize>\n${transcript}\n</conversation_to_summarize>` };
}

/** A message of the result: an input message by index, or a summary with its text and `summarized_messages`. */
export type Out = { readonly input: number } | { readonly summary: string; readonly summarized: number };

/**
 * `compact`: rounds until the target is met, the floor is reached, or a reply fails (empty, or not smaller).
 * @param reply round k's reply to its prompt, or null for a failed call
 * @returns the output (null when nothing was summarized) and every prompt sent
 */
export function compact(
  input: readonly RMessage[],
  s: Settings,
  counter: Count,
  reply: (k: number, p: { system: string; user: string }) => string | null,
): { out: Out[] | null; prompts: { system: string; user: string }[] } {
  let ms: RMessage[] = [...input];
  let origin: Out[] = input.map((_, i) => ({ input: i }));
  let tokens = count(ms, counter);
  const prompts: { system: string; user: string }[] = [];
  let summarized = false;
  while (tokens > s.target) {
    const plan = nextSummary(ms, s, counter);
    if (plan === null) break;
    const p = prompt(ms, plan, s.instruction);
    prompts.push(p);
    const text = reply(prompts.length - 1, p);
    if (text === null || text.trim() === '') break;
    const summaryText = `<conversation_summary>\n${text.trim()}\n</conversation_summary>`;
    const summary: RMessage = {
      role: 'user',
      strategy: 'summarization',
      texts: [summaryText],
      calls: [],
      results: [],
      attachments: [],
      images: 0,
      files: [],
    };
    const selected = new Set(plan);
    const at = Math.min(...plan);
    const next: RMessage[] = [];
    const nextOrigin: Out[] = [];
    ms.forEach((m, i) => {
      if (i === at) {
        next.push(summary);
        nextOrigin.push({ summary: summaryText, summarized: plan.length });
      }
      if (!selected.has(i)) {
        next.push(m);
        nextOrigin.push(origin[i] as Out);
      }
    });
    const after = count(next, counter);
    if (after >= tokens) break;
    ms = next;
    origin = nextOrigin;
    tokens = after;
    summarized = true;
  }
  return { out: summarized ? origin : null, prompts };
}
