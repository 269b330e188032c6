import { aiSdk } from './ai-sdk.js';
import { anthropic } from './anthropic.js';
import { claudeCode } from './claude-code.js';
import { codex } from './codex.js';
import { gemini } from './gemini.js';
import { haystack } from './haystack.js';
import { langchain } from './langchain.js';
import { openai } from './openai.js';
import { responses } from './responses.js';
import { sharegpt } from './sharegpt.js';
import type { FormatAdapter } from './types.js';

/**
 * Every format, in the order auto-detection tries them (more specific shapes first).
 * Adding a format means adding it here.
 */
/** Whether some format reads how this text begins to tell what its message is (so it must stay whole in slim items). */
export function isTellingText(text: string): boolean {
  // One pattern for all (asked of every long string a file holds); `\s` is exactly what `trimStart` removes.
  if (TELLING !== null) return TELLING.test(text);
  const start = text.trimStart();
  return TELLING_STARTS.some((pattern) => pattern.test(start));
}

export const FORMATS: readonly FormatAdapter[] = [
  haystack,
  // Session logs, LangChain dicts and ShareGPT rows have shapes of their own (an event `type` with a `message`,
  // `{type, data}` / `{lc, kwargs}`, `from`/`value` or `{type, value}` parts): they go before the role-based formats.
  claudeCode,
  // Codex rollout lines are `{timestamp, type, payload}`: no other format has a `payload` on every item.
  codex,
  langchain,
  sharegpt,
  // AI SDK messages say every part's `type` (UI messages' `parts` would otherwise pass for Gemini contents).
  aiSdk,
  gemini,
  // Anthropic messages can look like OpenAI chat ones: Anthropic claims a list only when a block type or a
  // request key of its own is present. Plain `{role, content}` messages are OpenAI's; Responses gets what
  // OpenAI refuses (items such as `function_call` and `reasoning`), and every list under `input`.
  anthropic,
  openai,
  responses,
];

/** The names `--format` accepts. */
export function formatNames(): string[] {
  return FORMATS.map((f) => f.name);
}

/** Looks a format up by name. */
export function findFormat(name: string): FormatAdapter | undefined {
  return FORMATS.find((f) => f.name === name);
}

const TELLING_STARTS: readonly RegExp[] = FORMATS.flatMap((f) => f.readsTextStarting ?? []);

/** The telling patterns as one, where each is a plain anchored pattern (else each is tried in turn). */
const TELLING: RegExp | null = TELLING_STARTS.every((p) => p.flags === '' && p.source.startsWith('^'))
  ? new RegExp(`^\\s*(?:${TELLING_STARTS.map((p) => `(?:${p.source.slice(1)})`).join('|')})`)
  : null;

const SKETCHES_IN = FORMATS.flatMap((f) => (f.sketchesIn === undefined ? [] : [f.sketchesIn]));

/** Whether some format sketches the long strings of this object of an item (`FormatAdapter.sketchesIn`). */
export function isSketchedRecord(record: Readonly<Record<string, unknown>>): boolean {
  return SKETCHES_IN.some((test) => test(record));
}
