/**
 * swc's sliding window on Codex CLI sessions against Haystack's `SlidingWindowCompactor`, end to end: random sessions
 * (injected context, mirrored prompts, reasoning items, parallel calls, web searches, mirror events, Codex's own
 * `compacted` line with its dead record, earlier notes, lines of unknown types) are written as rollout files,
 * compacted by `swc compact` (in process) or by `compactMessages`, and compared line by line with what the independent
 * model of test/reference/haystack.ts keeps of the session's messages.
 *
 * The reference sees a session as docs/formats.md (Codex CLI sessions) says Haystack would hold it, built here from
 * what the generator wrote, never from src/: one message per response item of the live history, except that injected
 * context before the first prompt is a system message each, later context joins the prompt it precedes or follows
 * (the prompt's text first), context between steps is a result of no tool, an assistant's reasoning, message, calls
 * and web searches are one assistant message, each output one tool message; the session's base instructions and the
 * last `compacted` line lead as system messages. Every other line stays where it is; an event that mirrors an item
 * goes with it.
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { compactMessages } from '../../src/library/index.js';
import { compactArgs } from '../helpers/argv.js';
import { createRng } from '../helpers/convert.js';
import { runSwc } from '../helpers/run-in-process.js';
import { scaled, scaledTimeout } from '../helpers/scale.js';
import {
  applyWindow,
  approximateCounter,
  DEFAULT_OMISSION_NOTE,
  slidingWindow,
  DEFAULT_PLACEHOLDER,
  toolResultPruning,
  type HMessage,
  type HToolCall,
  type WindowResult,
} from '../reference/haystack.js';
import { scratch } from './harness.js';

const count = approximateCounter();
const tmp = scratch();
afterAll(() => tmp.remove());

const WORDS = ['alpha', 'refund', 'Zürich', 'café', '東京', '😀', 'order-123', 'the', '42', 'quote"d', 'line\nbreak'];
const CONTEXT = [
  '<environment_context>',
  '# AGENTS.md instructions for /repo',
  '<permissions instructions>',
  '<skill>',
];

/** A generated session: its lines, and the messages the reference sees with the lines each stands for. */
interface Session {
  readonly lines: string[];
  readonly view: HMessage[];
  /** For each view message, the lines it stands for (none for the base instructions). */
  readonly own: number[][];
  /** For each view message, the response items (and compacted line) it counts as in the note. */
  readonly weight: number[];
}

const empty = { texts: [], toolCalls: [], results: [], images: 0, files: [], meta: {} };

function message(role: HMessage['role'], fields: Partial<HMessage> = {}): HMessage {
  return { ...empty, role, ...fields };
}

/** Writes a random Codex session and its view, line by line. */
function randomSession(seed: number, options: { inStep?: boolean } = {}): Session {
  const rng = createRng(seed);
  const words = (min: number, max: number): string =>
    Array.from({ length: rng.int(min, max) }, () => rng.pick(WORDS)).join(' ');
  const lines: string[] = [];
  const view: HMessage[] = [];
  const own: number[][] = [];
  const weight: number[] = [];
  const put = (type: string, payload: Record<string, unknown>): number => {
    const timestamp = new Date(Date.UTC(2026, 0, 1) + lines.length * 1000).toISOString();
    lines.push(JSON.stringify({ timestamp, type, payload }));
    return lines.length - 1;
  };
  const item = (payload: Record<string, unknown>): number => put('response_item', payload);
  const event = (type: string, fields: Record<string, unknown> = {}): number => put('event_msg', { type, ...fields });
  const text = (role: string, t: string): Record<string, unknown> => ({
    type: 'message',
    role,
    content: [{ type: role === 'assistant' ? 'output_text' : 'input_text', text: t }],
  });
  const add = (h: HMessage, lineList: number[], w: number): void => {
    view.push(h);
    own.push(lineList);
    weight.push(w);
  };
  /** Lines no message holds, now and then: they stay where they are. */
  const noise = (): void => {
    if (rng.chance(0.15)) event('token_count', { info: null });
    if (rng.chance(0.05)) put('world_state', { full: true });
    if (rng.chance(0.05)) put('some_future_type', { n: rng.int(0, 9) });
  };
  let calls = 0;
  const contextText = (): string => `${rng.pick(CONTEXT)} ${words(1, 20)}`;
  const contextLine = (t: string): number => item(text(rng.pick(['developer', 'user']), t));
  /** Whether the last response item is an assistant message no output follows: a call after it would join it. */
  let replyOpen = false;

  const base = rng.chance(0.7) ? words(5, 40) : null;
  put('session_meta', { id: `s${seed}`, ...(base === null ? {} : { base_instructions: { text: base } }) });
  let compacted: HMessage | null = null;
  let compactedLine = -1;
  if (rng.chance(0.35)) {
    // A dead record Codex compacted away: messages, a call and its output, events; then the compacted line.
    const typed = words(1, 10);
    item(text('user', typed));
    event('user_message', { message: 'x' });
    item({ type: 'function_call', name: 'run', arguments: '{}', call_id: `dead_${seed}` });
    item({ type: 'function_call_output', call_id: `dead_${seed}`, output: words(1, 10) });
    item(text('assistant', words(1, 10)));
    const summary = rng.chance(0.3) ? words(1, 10) : '';
    let texts: string[];
    if (rng.chance(0.2)) {
      // CLIs before 0.42 write no replacement history: the typed user messages and the summary are the history.
      compactedLine = put('compacted', { message: summary });
      texts = [
        `Codex compacted the conversation here (line ${compactedLine + 1}): its summary and 1 user messages replace all before it`,
        typed,
        ...(summary === '' ? [] : [summary]),
      ];
    } else {
      const history = [
        text('user', words(1, 10)),
        ...(rng.chance(0.5) ? [text('assistant', words(1, 10))] : []),
        { type: 'compaction', encrypted_content: 'gAAAA' },
      ];
      // Its message repeats what the history holds: not counted.
      compactedLine = put('compacted', { message: summary, replacement_history: history });
      texts = [
        `Codex compacted the conversation here (line ${compactedLine + 1}): ${history.length} items replace all before it`,
        ...history.flatMap((h) =>
          Array.isArray(h.content) ? (h.content as { text: string }[]).map((part) => part.text) : [],
        ),
      ];
    }
    event('context_compacted');
    compacted = message('system', { texts });
  }
  if (compacted !== null) add(compacted, [compactedLine], 1);
  if (base !== null) add(message('system', { texts: [base] }), [], 0);
  for (let k = rng.int(0, 3); k > 0; k--) {
    const t = contextText();
    add(message('system', { texts: [t] }), [contextLine(t)], 1);
  }
  if (rng.chance(0.1)) {
    const note = DEFAULT_OMISSION_NOTE.split('{num_removed}').join(String(rng.int(1, 30)));
    add(message('user', { texts: [note], meta: { compaction: 'sliding_window' } }), [item(text('user', note))], 1);
  }
  /** One assistant step: reasoning, a reply or calls with their outputs, or a web search. */
  const step = (inTurn: number): void => {
    if (inTurn > 0 && options.inStep !== false && rng.chance(0.08)) {
      // Context between steps: a result of no tool, in the step before it.
      const t = contextText();
      add(message('tool', { results: [{ toolName: '', id: null, text: t, error: false }] }), [contextLine(t)], 1);
    }
    const mine: number[] = [];
    let counted = 0;
    // After a reply, a step opens with reasoning (as Codex writes it): calls right after a reply are part of it.
    if (replyOpen || rng.chance(0.4)) {
      if (rng.chance(0.5)) mine.push(event('agent_reasoning', { text: words(1, 5) }));
      mine.push(item({ type: 'reasoning', summary: [], content: null, encrypted_content: 'gAAAA' }));
      counted++;
    }
    const kind = rng.pick(['reply', 'calls', 'calls', 'search']);
    const texts: string[] = [];
    const toolCalls: HToolCall[] = [];
    const reply = (): void => {
      const t = words(1, 30);
      if (rng.chance(0.5)) mine.push(event('agent_message', { message: t }));
      mine.push(item(text('assistant', t)));
      counted++;
      texts.push(t);
    };
    if (kind === 'reply') reply();
    if (kind === 'search') {
      const action = { type: 'search', query: words(1, 4) };
      // web_search_end names the search by its ws_ item id, which no item carries: it goes with the item after it.
      if (rng.chance(0.5)) mine.push(event('web_search_end', { call_id: `ws_${seed}_${calls}`, query: action.query }));
      mine.push(item({ type: 'web_search_call', status: 'completed', action }));
      counted++;
      toolCalls.push({ toolName: 'web_search', id: null, arguments: action });
      reply();
    }
    const outputs: { id: string; name: string; text: string; parts: boolean }[] = [];
    if (kind === 'calls') {
      if (rng.chance(0.3)) reply();
      for (let n = rng.pick([1, 1, 2, 3]); n > 0; n--) {
        const id = `call_${seed}_${calls++}`;
        const args = { query: words(1, 4), n: rng.int(0, 99) };
        const custom = rng.chance(0.3);
        const name = custom ? 'apply_patch' : rng.pick(['exec_command', 'shell', 'update_plan']);
        mine.push(
          item(
            custom
              ? { type: 'custom_tool_call', status: 'completed', call_id: id, name, input: JSON.stringify(args) }
              : { type: 'function_call', name, arguments: JSON.stringify(args), call_id: id },
          ),
        );
        counted++;
        toolCalls.push({ toolName: name, id, arguments: args });
        outputs.push({ id, name, text: words(1, rng.chance(0.2) ? 300 : 40), parts: rng.chance(0.25) });
        if (rng.chance(0.3)) event('token_count', { info: null });
      }
    }
    add(message('assistant', { texts, toolCalls }), mine, counted);
    replyOpen = outputs.length === 0;
    for (const o of outputs) {
      const custom = o.name === 'apply_patch';
      const output = o.parts ? [{ type: 'input_text', text: o.text }] : o.text;
      // A call made inside this one (CLI 0.144's exec tool) has an exec- id no item carries: it goes with the output.
      const nested = rng.chance(0.2) ? [event('patch_apply_end', { call_id: `exec-${o.id}`, success: true })] : [];
      const at = item({ type: custom ? 'custom_tool_call_output' : 'function_call_output', call_id: o.id, output });
      const mirrors = rng.chance(0.5) ? [event('exec_command_end', { call_id: o.id, aggregated_output: o.text })] : [];
      add(
        message('tool', { results: [{ toolName: o.name, id: o.id, text: o.text, error: false }] }),
        [...nested, at, ...mirrors],
        1,
      );
    }
    noise();
  };
  // Codex may compact in the middle of a turn: its steps go on before the next prompt.
  if (compacted !== null && rng.chance(0.3)) for (let s = rng.int(1, 2); s > 0; s--) step(0);
  const turns = rng.int(1, 5);
  for (let t = 0; t < turns; t++) {
    if (rng.chance(0.7)) event('task_started', { turn_id: `t${t}` });
    const before: { line: number; text: string }[] = [];
    // Context before the first prompt of a live history that began with no reply is an instruction (written above).
    if (view.some((h) => h.role === 'user' || h.role === 'assistant'))
      for (let k = rng.pick([0, 0, 1, 2]); k > 0; k--) {
        const c = contextText();
        before.push({ line: contextLine(c), text: c });
      }
    if (rng.chance(0.6)) put('turn_context', { cwd: '/repo' });
    const prompt = words(1, 30);
    const at = item(text('user', prompt));
    replyOpen = false;
    const mirror = event('user_message', { message: prompt });
    const after: { line: number; text: string }[] = [];
    const steps = rng.int(0, 4);
    // Context after a prompt joins it when a reply follows; right before the next prompt, it would join that one.
    if (steps > 0 && rng.chance(0.1)) {
      const c = contextText();
      after.push({ line: contextLine(c), text: c });
    }
    const contexts = [...before, ...after];
    add(
      message('user', { texts: [prompt, ...contexts.map((c) => c.text)] }),
      [at, mirror, ...contexts.map((c) => c.line)].sort((a, b) => a - b),
      1 + contexts.length,
    );
    noise();
    for (let k = 0; k < steps; k++) step(k);
    if (rng.chance(0.7)) event('task_complete', { turn_id: `t${t}` });
  }
  return { lines, view, own, weight };
}

interface Case {
  readonly seed: number;
  readonly minKeepSteps: number;
  readonly perMille: number;
  readonly library: boolean;
}

const caseArb: fc.Arbitrary<Case> = fc.record({
  seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
  minKeepSteps: fc.constantFrom(0, 1, 1, 2, 3),
  perMille: fc.oneof(fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 300, max: 1000 })),
  library: fc.boolean(),
});

/** The lines the reference's decision leaves, with the note where it goes (null: the session stays as it is). */
function expectedLines(s: Session, target: number, minKeepSteps: number): { lines: string[]; note: string } | null {
  const ref = slidingWindow(s.view, target, count, { minKeepSteps, note: DEFAULT_OMISSION_NOTE });
  return ref === null ? null : windowed(s, s.lines, ref);
}

/** The lines a window result leaves of `lines` (the session's, some rewritten), with its note where it goes. */
function windowed(s: Session, lines: readonly string[], ref: WindowResult): { lines: string[]; note: string } {
  const removedLines = new Set(ref.removed.flatMap((v) => s.own[v] as number[]));
  const removedWeight = ref.removed.reduce((n, v) => n + (s.weight[v] as number), 0);
  const noteText = DEFAULT_OMISSION_NOTE.split('{num_removed}').join(String(removedWeight));
  const keptLines = lines.map((_, k) => k).filter((k) => !removedLines.has(k));
  // The note goes before the first line of the first kept message from its place on that has lines, else last.
  let before: number | null = null;
  for (const v of ref.kept.slice(ref.noteIndex as number)) {
    const first = (s.own[v] as number[])[0];
    if (first !== undefined) {
      before = first;
      break;
    }
  }
  // It takes the timestamp of the line written right before it (the line after it when none is).
  const previous = keptLines.filter((k) => before === null || k < before).pop();
  const neighbour = previous ?? (before as number);
  const { timestamp } = JSON.parse(lines[neighbour] as string) as { timestamp: string };
  const note = JSON.stringify({
    timestamp,
    type: 'response_item',
    payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: noteText }] },
  });
  const out: string[] = [];
  for (const k of keptLines) {
    if (before !== null && k >= before && !out.includes(note)) out.push(note);
    out.push(lines[k] as string);
  }
  if (!out.includes(note)) out.push(note);
  return { lines: out, note: noteText };
}

describe("swc compact decides on Codex sessions as Haystack's SlidingWindowCompactor", () => {
  it(
    'on random sessions, through the command line and the library',
    async () => {
      const property = fc.asyncProperty(caseArb, async (k) => {
        const s = randomSession(k.seed);
        const whole = count(s.view);
        const target = Math.max(1, Math.floor((whole * k.perMille) / 1000));
        const expected = expectedLines(s, target, k.minKeepSteps);
        const ref = slidingWindow(s.view, target, count, { minKeepSteps: k.minKeepSteps, note: DEFAULT_OMISSION_NOTE });
        const after = ref === null ? whole : count(applyWindow(s.view, { ...ref, noteText: expected?.note ?? null }));
        const label = { ...k, target };
        const text = `${s.lines.join('\n')}\n`;
        if (k.library) {
          const items = s.lines.map((l) => JSON.parse(l) as unknown);
          const result = await compactMessages(items, {
            format: 'codex',
            tokenizer: 'approx',
            target,
            minKeepSteps: k.minKeepSteps,
          });
          const lines = result.messages.map((m) => {
            const at = items.indexOf(m);
            return at === -1 ? JSON.stringify(m) : (s.lines[at] as string);
          });
          expect({ ...label, lines }).toEqual({ ...label, lines: expected?.lines ?? s.lines });
          expect({ ...label, after: result.plan.tokensAfter }).toEqual({ ...label, after });
          return;
        }
        const file = tmp.write(`${k.seed}-rollout.jsonl`, text);
        const out = `${file}.out`;
        const r = await runSwc(compactArgs(file, target, '-k', String(k.minKeepSteps), '-o', out, '--json'), {
          cwd: tmp.dir,
        });
        expect({ ...label, status: r.status, stderr: r.status === 0 ? '' : r.stderr }).toEqual({
          ...label,
          status: 0,
          stderr: '',
        });
        const report = JSON.parse(r.stdout) as {
          tokensBefore: number;
          tokensAfter: number;
          note: { text: string } | null;
        };
        const output = tmp.read(out);
        expect({ ...label, lines: output.split('\n').filter((l) => l !== '') }).toEqual({
          ...label,
          lines: expected?.lines ?? s.lines,
        });
        expect({ ...label, before: report.tokensBefore, after: report.tokensAfter }).toEqual({
          ...label,
          before: whole,
          after,
        });
        expect({ ...label, note: report.note?.text ?? null }).toEqual({ ...label, note: expected?.note ?? null });
      });
      await fc.assert(property, { numRuns: scaled(500) });
    },
    scaledTimeout(60_000),
  );
});

interface PruneCase {
  readonly seed: number;
  readonly minKeepSteps: number;
  readonly perMille: number;
  readonly minTokens: number;
  readonly chain: 'prune' | 'prune,window';
}

const pruneCaseArb: fc.Arbitrary<PruneCase> = fc.record({
  seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
  minKeepSteps: fc.constantFrom(1, 1, 2, 3),
  perMille: fc.integer({ min: 0, max: 1000 }),
  minTokens: fc.constantFrom(0, 0, 20, 100),
  chain: fc.constantFrom<PruneCase['chain']>('prune', 'prune,window'),
});

describe("swc compact --strategy prune decides on Codex sessions as Haystack's ToolResultPruningCompactor", () => {
  it(
    'on random sessions (string and list outputs), then its window, through the command line',
    async () => {
      let pruning = 0;
      const property = fc.asyncProperty(pruneCaseArb, async (k) => {
        // Context between steps is a result of no tool that swc never prunes (no output line holds it): left out.
        const s = randomSession(k.seed, { inStep: false });
        const whole = count(s.view);
        const target = Math.max(1, Math.floor((whole * k.perMille) / 1000));
        const pruned = toolResultPruning(s.view, target, count, {
          minKeepSteps: k.minKeepSteps,
          minTokens: k.minTokens,
          placeholder: DEFAULT_PLACEHOLDER,
        });
        const view = pruned?.messages ?? s.view;
        // A pruned output line: its payload's output becomes the placeholder, every other byte as it was.
        const lines = [...s.lines];
        for (const v of pruned?.pruned ?? []) {
          const isOutput = (k: number): boolean =>
            /_output$/.test(String((JSON.parse(lines[k] as string) as { payload: { type?: unknown } }).payload.type));
          const at = (s.own[v] as number[]).find(isOutput) as number;
          const line = JSON.parse(lines[at] as string) as { payload: Record<string, unknown> };
          const name = (s.view[v] as HMessage).results[0]!.toolName;
          line.payload.output = DEFAULT_PLACEHOLDER.split('{tool_name}').join(name);
          lines[at] = JSON.stringify(line);
        }
        if ((pruned?.pruned.length ?? 0) > 0) pruning++;
        const window =
          k.chain === 'prune,window'
            ? slidingWindow(view, target, count, { minKeepSteps: k.minKeepSteps, note: DEFAULT_OMISSION_NOTE })
            : null;
        const expected = window === null ? { lines, note: null } : windowed({ ...s, view }, lines, window);
        const after = window === null ? count(view) : count(applyWindow(view, { ...window, noteText: expected.note }));
        const file = tmp.write(`${k.seed}-prune-rollout.jsonl`, `${s.lines.join('\n')}\n`);
        const out = `${file}.out`;
        const flags = ['-k', String(k.minKeepSteps), '--strategy', k.chain, '--min-tokens', String(k.minTokens)];
        const r = await runSwc(compactArgs(file, target, ...flags, '-o', out, '--json'), { cwd: tmp.dir });
        const label = { ...k, target };
        expect({ ...label, status: r.status, stderr: r.status === 0 ? '' : r.stderr }).toEqual({
          ...label,
          status: 0,
          stderr: '',
        });
        const report = JSON.parse(r.stdout) as { tokensBefore: number; tokensAfter: number };
        expect({
          ...label,
          lines: tmp
            .read(out)
            .split('\n')
            .filter((l) => l !== ''),
        }).toEqual({
          ...label,
          lines: expected.lines,
        });
        expect({ ...label, before: report.tokensBefore, after: report.tokensAfter }).toEqual({
          ...label,
          before: whole,
          after,
        });
      });
      await fc.assert(property, { numRuns: scaled(300) });
      // The cases really prune (a generator that stopped making long outputs would pass vacuously).
      expect(pruning).toBeGreaterThan(scaled(300) / 10);
    },
    scaledTimeout(60_000),
  );
});
