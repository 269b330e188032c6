/**
 * The comparison processes of `npm run bench`, one per mode, each a whole Node process so that wall time and
 * peak memory compare like for like with `swc compact`:
 *
 *   floor <file.jsonl>               read the file whole, decode it, split it into lines, JSON.parse every line
 *   floor-lines <file.jsonl>         the same, reading 1 MiB at a time and decoding line by line
 *   render <file> <out.txt>          write the text swc tokenizes (every message rendered, joined by "\n")
 *   raw-count <text.txt>             gpt-tokenizer o200k `countTokens` on that text, in one call
 *   dry-run <file.jsonl> <target> <inventory|none>
 *                                    the work of `swc compact --dry-run` on one file in this thread (read, decide,
 *                                    render the diff), with or without the inventory of what the compaction forgets
 *   halves <swc bin> <tree> <out>    two `swc compact --jobs 1` processes at once, each on half of the tree's
 *                                    directories: how much two cores give this work on this machine at all
 *   langchain <file.jsonl> <target> [cached]
 *                                    LangChain.js trimMessages, strategy "last", a gpt-tokenizer o200k counter
 *                                    (with "cached": one that remembers each message's count)
 *   loop-swc <file.jsonl> <steps> <target>
 *                                    an agent's loop: before each of <steps> steps (two more messages of the file
 *                                    each), one swc compactor (createCompactor, o200k) compacts the whole history
 *   loop-langchain <file.jsonl> <steps> <target>
 *                                    the same loop with LangChain.js trimMessages (counts cached per message)
 *   steps <file.jsonl> <sizes> <target> [one-task]
 *                                    a warm step at each history size (comma-separated): one swc compactor
 *                                    (approximate counter), a drop-oldest loop with counts cached per message
 *                                    object and swcPrepareStep, one message pushed per step, interleaved; prints
 *                                    the medians as JSON
 *                                    (with "one-task": the file's user messages after the first made assistant
 *                                    replies, so the history is one task of many steps, as a coding agent's)
 *   cold <file.jsonl> <sizes> <target>
 *                                    one call at each history size (comma-separated) on fresh copies of the
 *                                    messages: swc compactMessages (approximate counter), the drop-oldest loop with
 *                                    a new count cache, and LangChain.js trimMessages with a cached approximate
 *                                    counter (up to 10,000 messages); interleaved after one warm-up call each;
 *                                    prints the medians and the kept lengths as JSON
 *
 * bench.ts compiles this file to plain JavaScript with imports of ../src pointed at the built ../dist.
 */
import { openSync, readFileSync, readSync, writeFileSync } from 'node:fs';
import { renderMessage } from '../src/core/render.js';
import type { Message } from '../src/core/types.js';
import { readSourceFile } from '../src/io/lines.js';
import { readLayout } from '../src/io/layout.js';
import { chooseFormat, normalizeSlot } from '../src/pipeline/index.js';

/** Every line of a JSONL file parsed, the way a straightforward reader does it. */
function floor(file: string): number {
  const text = new TextDecoder('utf-8', { fatal: true }).decode(readFileSync(file));
  let count = 0;
  let pos = 0;
  while (pos < text.length) {
    let nl = text.indexOf('\n', pos);
    if (nl === -1) nl = text.length;
    const line = text.slice(pos, nl);
    if (line.trim() !== '') {
      JSON.parse(line);
      count++;
    }
    pos = nl + 1;
  }
  return count;
}

/** Every line parsed, reading 1 MiB at a time and decoding each line on its own (swc's own way of reading). */
function floorLines(file: string): number {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const fd = openSync(file, 'r');
  const buffer = Buffer.allocUnsafe(1 << 20);
  let carry: Buffer | null = null;
  let count = 0;
  const line = (bytes: Buffer): void => {
    const text = decoder.decode(bytes);
    if (text.trim() !== '') {
      JSON.parse(text);
      count++;
    }
  };
  for (let n = readSync(fd, buffer, 0, buffer.length, null); n > 0; n = readSync(fd, buffer, 0, buffer.length, null)) {
    let chunk = buffer.subarray(0, n);
    if (carry !== null) {
      chunk = Buffer.concat([carry, chunk]);
      carry = null;
    }
    let pos = 0;
    for (let nl = chunk.indexOf(0x0a, pos); nl !== -1; nl = chunk.indexOf(0x0a, pos)) {
      line(chunk.subarray(pos, nl));
      pos = nl + 1;
    }
    if (pos < chunk.length) carry = Buffer.from(chunk.subarray(pos));
  }
  if (carry !== null) line(carry);
  return count;
}

/** The messages of a transcript as swc normalizes them. */
function messagesOf(file: string): Message[] {
  const source = readSourceFile(file);
  const layout = readLayout(source);
  const out: Message[] = [];
  for (const slot of layout.slots) {
    const adapter = chooseFormat(slot, 'auto', file);
    out.push(...normalizeSlot(source, slot, adapter, null).messages);
  }
  return out;
}

/** The text swc's counter sees for the whole conversation. */
function render(file: string, out: string): number {
  const text = messagesOf(file)
    .map((m) => renderMessage(m).text)
    .join('\n');
  writeFileSync(out, text);
  return text.length;
}

/** Two independent single-threaded swc runs at once, each on half of the tree's subdirectories. */
async function halves(swc: string, tree: string, out: string): Promise<number> {
  const { spawn } = await import('node:child_process');
  const { readdirSync: list } = await import('node:fs');
  const path = await import('node:path');
  const dirs = list(tree, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => path.join(tree, d.name))
    .sort();
  const half = Math.ceil(dirs.length / 2);
  const run = (part: string[], name: string): Promise<number> =>
    new Promise((resolve, reject) => {
      const child = spawn(
        process.execPath,
        [
          swc,
          'compact',
          '--target',
          '2000',
          '-q',
          '--out-dir',
          path.join(out, name),
          '--base',
          tree,
          '--jobs',
          '1',
          ...part,
        ],
        { stdio: 'ignore' },
      );
      child.on('error', reject);
      child.on('exit', (code) => (code === 0 ? resolve(part.length) : reject(new Error(`swc exited with ${code}`))));
    });
  const done = await Promise.all([run(dirs.slice(0, half), 'a'), run(dirs.slice(half), 'b')]);
  return done[0] + done[1];
}

async function rawCount(file: string): Promise<number> {
  const { countTokens } = await import('gpt-tokenizer/encoding/o200k_base');
  const text = readFileSync(file, 'utf8');
  return countTokens(text, { disallowedSpecial: new Set(), allowedSpecial: new Set() });
}

interface ChatLine {
  role: string;
  content?: unknown;
  tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
}

/** LangChain's trimMessages on the transcript, counting with gpt-tokenizer as its docs suggest for OpenAI models. */
async function langchain(file: string, target: number, cached: boolean): Promise<number> {
  const { countTokens } = await import('gpt-tokenizer/encoding/o200k_base');
  const lc = await import('@langchain/core/messages');
  const { trimMessages, isAIMessage } = lc;
  type Base = import('@langchain/core/messages').BaseMessage;
  const lines = readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '');
  const messages: Base[] = lines.map((l) => toLangchain(JSON.parse(l) as ChatLine, lc));
  const plain = { disallowedSpecial: new Set<string>(), allowedSpecial: new Set<string>() };
  const textOf = (m: Base): string => {
    const calls = isAIMessage(m) ? (m.tool_calls ?? []) : [];
    const content = typeof m.content === 'string' ? m.content : JSON.stringify(m.content);
    return calls.length === 0
      ? content
      : `${content}\n${calls.map((c) => `${c.name}(${JSON.stringify(c.args)})`).join('\n')}`;
  };
  const memo = new WeakMap<Base, number>();
  const tokensOf = (m: Base): number => {
    if (!cached) return countTokens(textOf(m), plain);
    let n = memo.get(m);
    if (n === undefined) {
      n = countTokens(textOf(m), plain);
      memo.set(m, n);
    }
    return n;
  };
  const kept = await trimMessages(messages, {
    maxTokens: target,
    strategy: 'last',
    includeSystem: true,
    startOn: 'human',
    tokenCounter: (list: Base[]) => list.reduce((sum, m) => sum + tokensOf(m), 0),
  });
  return kept.length;
}

/** The file's first `count` lines, parsed: the chat messages an agent holds. */
function chatLines(file: string, count: number): ChatLine[] {
  const lines = readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '');
  return lines.slice(0, count).map((l) => JSON.parse(l) as ChatLine);
}

/**
 * An agent's loop with swc: the history grows by two messages a step, and before each step one compactor (the
 * tokenizer loaded once, its memory of counted messages kept) compacts all of it to the target, as a `prepareStep`
 * does. Returns the messages the last step was sent.
 */
async function loopSwc(file: string, steps: number, target: number): Promise<number> {
  const { createCompactor } = await import('../src/library/index.js');
  const all = chatLines(file, 2 * steps);
  const compactor = await createCompactor({ format: 'openai', target });
  let sent = 0;
  for (let step = 1; step <= steps; step++) sent = (await compactor.compact(all.slice(0, 2 * step))).messages.length;
  return sent;
}

/** The same loop with LangChain's trimMessages, the messages built once and counted once each (a cached counter). */
async function loopLangchain(file: string, steps: number, target: number): Promise<number> {
  const { countTokens } = await import('gpt-tokenizer/encoding/o200k_base');
  const lc = await import('@langchain/core/messages');
  const { trimMessages, isAIMessage } = lc;
  type Base = import('@langchain/core/messages').BaseMessage;
  const all: Base[] = chatLines(file, 2 * steps).map((m) => toLangchain(m, lc));
  const plain = { disallowedSpecial: new Set<string>(), allowedSpecial: new Set<string>() };
  const memo = new WeakMap<Base, number>();
  const tokensOf = (m: Base): number => {
    let n = memo.get(m);
    if (n === undefined) {
      const calls = isAIMessage(m) ? (m.tool_calls ?? []) : [];
      const content = typeof m.content === 'string' ? m.content : JSON.stringify(m.content);
      n = countTokens(
        calls.length === 0
          ? content
          : `${content}\n${calls.map((c) => `${c.name}(${JSON.stringify(c.args)})`).join('\n')}`,
        plain,
      );
      memo.set(m, n);
    }
    return n;
  };
  let sent = 0;
  for (let step = 1; step <= steps; step++) {
    const kept = await trimMessages(all.slice(0, 2 * step), {
      maxTokens: target,
      strategy: 'last',
      includeSystem: true,
      startOn: 'human',
      tokenCounter: (list: Base[]) => list.reduce((sum, m) => sum + tokensOf(m), 0),
    });
    sent = kept.length;
  }
  return sent;
}

/** The middle of an odd number of timings (five rounds). */
function median(xs: readonly number[]): number {
  return [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)] as number;
}

/**
 * The simplest compactor an agent writes: the first messages dropped until the rest fits, each message object's
 * count (its JSON's length / 4) cached, so a warm step counts only what is new.
 */
function dropOldest(target: number): { compact(h: readonly unknown[]): unknown[] } {
  const counts = new WeakMap<object, number>();
  const count = (m: object): number => {
    let c = counts.get(m);
    if (c === undefined) counts.set(m, (c = Math.ceil(JSON.stringify(m).length / 4)));
    return c;
  };
  return {
    compact(h) {
      let total = 0;
      for (const m of h) total += count(m as object);
      let i = 0;
      while (total > target && i < h.length) total -= count(h[i++] as object);
      return h.slice(i);
    },
  };
}

/**
 * Warm steps at each history size: the history is the file's first `size - STEP_COUNT` messages, then one message is
 * pushed per step and compacted again. One swc compactor, and a drop-oldest loop with each message object's count
 * cached (the first messages dropped until the rest fits), both with the same character-based count; five rounds,
 * interleaved, the median step of each round, the median of the rounds. Returns `{swc, swcAssumeUnchanged,
 * dropOldest}`: ms by size (the second with `assumeUnchanged`).
 */
async function steps(file: string, sizes: readonly number[], target: number, oneTask: boolean): Promise<string> {
  const { createCompactor, swcPrepareStep } = await import('../src/library/index.js');
  const lines = chatLines(file, Math.max(...sizes));
  const all = oneTask ? oneTaskOf(lines) : lines;
  const STEP_COUNT = 15;
  const makers: Record<string, () => Promise<{ compact(h: readonly unknown[]): unknown }>> = {
    swc: async () => createCompactor({ format: 'openai', target, tokenizer: 'approx' }),
    swcAssumeUnchanged: async () =>
      createCompactor({ format: 'openai', target, tokenizer: 'approx', assumeUnchanged: true }),
    dropOldest: async () => dropOldest(target),
    // The AI SDK's hook on the same messages: it sends the view it kept with the new messages appended.
    prepareStep: async () => {
      const prepare = swcPrepareStep({ format: 'openai', target, tokenizer: 'approx' });
      return { compact: (h) => prepare({ messages: h }) };
    },
  };
  const medians: Record<string, Record<number, number[]>> = {
    swc: {},
    swcAssumeUnchanged: {},
    dropOldest: {},
    prepareStep: {},
  };
  for (let round = 0; round < 5; round++)
    for (const size of sizes)
      for (const [name, make] of Object.entries(makers)) {
        const compactor = await make();
        const history = all.slice(0, size - STEP_COUNT);
        await compactor.compact(history);
        const times: number[] = [];
        for (let k = 0; k < STEP_COUNT; k++) {
          history.push(all[size - STEP_COUNT + k] as ChatLine);
          const t = process.hrtime.bigint();
          // Awaited only where it is a promise (the hook's), so the others' steps take no extra turn.
          const done = compactor.compact(history);
          if (done instanceof Promise) await done;
          times.push(Number(process.hrtime.bigint() - t) / 1e6);
        }
        ((medians[name] as Record<number, number[]>)[size] ??= []).push(median(times));
      }
  const out = Object.fromEntries(
    Object.entries(medians).map(([name, bySize]) => [
      name,
      Object.fromEntries(Object.entries(bySize).map(([size, xs]) => [size, median(xs)])),
    ]),
  );
  return JSON.stringify(out);
}

/** The lines with every user message after the first an assistant's reply: one task of many steps. */
function oneTaskOf(lines: readonly ChatLine[]): ChatLine[] {
  const first = lines.findIndex((m) => m.role === 'user');
  return lines.map((m, k) => (m.role === 'user' && k !== first ? { ...m, role: 'assistant' } : m));
}

/** LangChain's trimMessages is quadratic in the history: past this many messages one call takes too long. */
const COLD_LANGCHAIN_MAX = 10_000;

/**
 * One call at each history size, as a caller holding its messages makes it: `compactMessages` (its compactor made
 * inside), the drop-oldest loop with a new count cache, LangChain's trimMessages with a new cached counter (the
 * character count / 4 of the text the o200k modes count, so no tokenizer is timed). Every call gets its own deep
 * copy of the messages, made before its timer starts (for LangChain, converted from it), so no call finds counts
 * keyed on objects another call saw. One untimed warm-up call per contender and size (the process is warm, as a
 * second call in an agent's process is), then five rounds interleaved round by round, size by size. Returns
 * `{swc, dropOldest, langchain, kept}`: median ms by size (LangChain null past COLD_LANGCHAIN_MAX) and the
 * messages each kept (the rules differ: swc keeps whole turns and steps, the loop single messages).
 */
async function cold(file: string, sizes: readonly number[], target: number): Promise<string> {
  const { compactMessages } = await import('../src/library/index.js');
  const lc = await import('@langchain/core/messages');
  const { trimMessages, isAIMessage } = lc;
  type Base = import('@langchain/core/messages').BaseMessage;
  const all = chatLines(file, Math.max(...sizes));
  const copies = (size: number): ChatLine[] => all.slice(0, size).map((m) => structuredClone(m));
  const langchainCall = (size: number): (() => Promise<number>) => {
    const history = copies(size).map((m) => toLangchain(m, lc));
    const counts = new WeakMap<Base, number>();
    const tokensOf = (m: Base): number => {
      let n = counts.get(m);
      if (n === undefined) {
        const calls = isAIMessage(m) ? (m.tool_calls ?? []) : [];
        const content = typeof m.content === 'string' ? m.content : JSON.stringify(m.content);
        const text =
          calls.length === 0
            ? content
            : `${content}\n${calls.map((c) => `${c.name}(${JSON.stringify(c.args)})`).join('\n')}`;
        counts.set(m, (n = Math.ceil(text.length / 4)));
      }
      return n;
    };
    return async () =>
      (
        await trimMessages(history, {
          maxTokens: target,
          strategy: 'last',
          includeSystem: true,
          startOn: 'human',
          tokenCounter: (list: Base[]) => list.reduce((sum, m) => sum + tokensOf(m), 0),
        })
      ).length;
  };
  /** Each contender's call on fresh copies, set up untimed; null where it does not run. */
  const contenders: Record<string, (size: number) => (() => Promise<number>) | null> = {
    swc: (size) => {
      const history = copies(size);
      return async () =>
        (await compactMessages(history, { format: 'openai', target, tokenizer: 'approx' })).messages.length;
    },
    dropOldest: (size) => {
      const history = copies(size);
      const loop = dropOldest(target);
      return async () => loop.compact(history).length;
    },
    langchain: (size) => (size <= COLD_LANGCHAIN_MAX ? langchainCall(size) : null),
  };
  const times: Record<string, Record<number, number[]>> = {};
  const kept: Record<string, Record<number, number | null>> = {};
  for (const size of sizes)
    for (const [name, setUp] of Object.entries(contenders)) {
      const call = setUp(size);
      (kept[name] ??= {})[size] = call === null ? null : await call();
    }
  for (let round = 0; round < 5; round++)
    for (const size of sizes)
      for (const [name, setUp] of Object.entries(contenders)) {
        const call = setUp(size);
        if (call === null) continue;
        // The copies of earlier calls are garbage: collected here (with --expose-gc), not inside this call's time.
        (globalThis as { gc?: () => void }).gc?.();
        const t = process.hrtime.bigint();
        await call();
        ((times[name] ??= {})[size] ??= []).push(Number(process.hrtime.bigint() - t) / 1e6);
      }
  const out: Record<string, unknown> = Object.fromEntries(
    Object.keys(contenders).map((name) => [
      name,
      Object.fromEntries(sizes.map((size) => [size, times[name]?.[size] ? median(times[name][size]) : null])),
    ]),
  );
  out.kept = kept;
  return JSON.stringify(out);
}

/** A dry run's work on one file, as `swc compact --dry-run` does it for each file, with or without the inventory. */
async function dryRun(file: string, target: number, inventory: boolean): Promise<number> {
  const { compactorFor, processFile } = await import('../src/cli/worker.js');
  const settings = {
    tokenizer: 'o200k_base' as const,
    counter: {},
    target,
    window: null,
    minKeepSteps: 1,
    note: undefined,
    format: 'auto',
    conversationKey: undefined,
    exhaustive: true,
    diff: { level: 0 as const, width: 80 },
    plan: false,
    bytes: 'none' as const,
    everyLine: true,
    inventory,
  };
  const result = await processFile({ index: 0, file, display: file }, settings, await compactorFor(settings));
  return result.diff?.length ?? 0;
}

const [mode, a, b, c, d] = process.argv.slice(2);
let result: number | string;
switch (mode) {
  case 'floor':
    result = floor(a as string);
    break;
  case 'floor-lines':
    result = floorLines(a as string);
    break;
  case 'render':
    result = render(a as string, b as string);
    break;
  case 'raw-count':
    result = await rawCount(a as string);
    break;
  case 'langchain':
    result = await langchain(a as string, Number(b), c === 'cached');
    break;
  case 'loop-swc':
    result = await loopSwc(a as string, Number(b), Number(c));
    break;
  case 'loop-langchain':
    result = await loopLangchain(a as string, Number(b), Number(c));
    break;
  case 'steps':
    result = await steps(a as string, (b as string).split(',').map(Number), Number(c), d === 'one-task');
    break;
  case 'cold':
    result = await cold(a as string, (b as string).split(',').map(Number), Number(c));
    break;
  case 'halves':
    result = await halves(a as string, b as string, c as string);
    break;
  case 'dry-run':
    result = await dryRun(a as string, Number(b), c === 'inventory');
    break;
  default:
    throw new Error(`unknown mode ${mode}`);
}
process.stdout.write(`${result}\n`);

/** A chat line as LangChain.js holds it: the message class of its role, tool calls with parsed arguments. */
function toLangchain(
  m: ChatLine,
  lc: typeof import('@langchain/core/messages'),
): import('@langchain/core/messages').BaseMessage {
  const content = typeof m.content === 'string' ? m.content : '';
  if (m.role === 'system') return new lc.SystemMessage(content);
  if (m.role === 'user') return new lc.HumanMessage(content);
  if (m.role === 'tool') return new lc.ToolMessage({ content, tool_call_id: m.tool_call_id ?? '' });
  return new lc.AIMessage({
    content,
    tool_calls: (m.tool_calls ?? []).map((c) => ({
      id: c.id,
      name: c.function.name,
      args: JSON.parse(c.function.arguments) as Record<string, unknown>,
      type: 'tool_call' as const,
    })),
  });
}
