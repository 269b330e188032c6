/**
 * The declarations the package ships, as a TypeScript project without Node's types reads them: the `.d.ts` files of
 * `npm pack`'s file list (the build already there, as test/docs/package.test.ts reads it) are copied into a
 * project outside the clone, where no `@types/node` can be found, and checked with the repository's own compiler
 * (`types: []`, no DOM, `skipLibCheck: false`).
 */
import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ROOT } from '../helpers/cli.js';

/** The declaration files and the manifest `npm pack` would ship. */
function shippedDeclarations(): string[] {
  const r = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8' });
  expect(r.status).toBe(0);
  const [entry] = JSON.parse(r.stdout) as Array<{ files: Array<{ path: string }> }>;
  return (entry?.files ?? []).map((f) => f.path).filter((f) => f === 'package.json' || f.endsWith('.d.ts'));
}

/** A consumer that touches the library's main entry points and types, byte arrays included. */
const CONSUMER = `
import {
  compactMessages, compactSource, createCompactor, createCounter, decodeSource, swcPrepareStep, InputError, OptionsError, UsageError,
  type CompactedMessages, type CompactorOptions, type FileResult, type Plan, type PrepareStepInput, type TokenCounter,
} from 'transcript-compact';

type Message = { role: 'user' | 'assistant'; content: string };
const history: Message[] = [{ role: 'user', content: 'hi' }];
const options: CompactorOptions<Message> = { target: 100, createNote: (text) => ({ role: 'user', content: text }) };
const once: CompactedMessages<Message> = await compactMessages(history, options);
const plan: Plan = once.plan;
const compactor = await createCompactor({ contextWindow: 1000 });
const kept: Message[] = (await compactor.compact(history)).messages;
const step = swcPrepareStep({ contextWindow: 1000 });
const input: PrepareStepInput<Message> = { messages: history, stepNumber: 0 };
const next: { messages: Message[] } | undefined = await step(input);
const counter: TokenCounter = await createCounter('approx');
const bytes = new Uint8Array([...'{"messages": []}'].map((c) => c.charCodeAt(0)));
const result: FileResult = await compactSource(decodeSource(bytes, 'chat.json'), { target: 100, counter });
const errors: Error[] = [new InputError('bad', 'chat.json'), new OptionsError('bad'), new UsageError('bad')];
export { plan, kept, next, result, errors };
`;

/**
 * The snippet and its kin, under `strict`: options typed without the messages' type (`CompactorOptions`
 * alone) leave every entry point returning the messages' own type, and a note builder of another type is refused.
 * Each `@ts-expect-error` line must be an error, or tsc reports the directive as unused.
 */
const INFERENCE = `
import {
  compactMessages, createCompactor, swcPrepareStep,
  type CompactedMessages, type CompactorOptions, type CreateNote, type PlacedSummary, type SummarizeCallback,
  type SummarizedConversation, type SummaryFailure, type SummaryRequest, type SummaryRound, type SummaryTier,
  type StrategyChain,
} from 'transcript-compact';

type Msg = { role: 'user' | 'assistant'; content: string };
declare const history: Msg[];

const opts: CompactorOptions = { target: 2000 };
const r: CompactedMessages<Msg> = await compactMessages(history, opts);

const compactor = await createCompactor(opts);
const awaited: CompactedMessages<Msg> = await compactor.compact(history);
const step = swcPrepareStep(opts);
const next: { messages: Msg[] } | undefined = await step({ messages: history, stepNumber: 1 });

const createNote: CreateNote<Msg> = (text) => ({ role: 'user', content: text });
const typed: CompactorOptions<Msg> = { target: 2000, createNote };
const r2: CompactedMessages<Msg> = await compactMessages(history, typed);
const warm2: CompactedMessages<Msg> = await (await createCompactor(typed)).compact(history);
const next2: { messages: Msg[] } | undefined = await swcPrepareStep(typed)({ messages: history });
const inline: CompactedMessages<Msg> = await compactMessages(history, {
  target: 2000,
  createNote: (text) => ({ role: 'user', content: text }),
});

// @ts-expect-error a note of a role the messages do not have
await compactMessages(history, { target: 2000, createNote: (text) => ({ role: 'wizard', content: text }) });
const notes: CompactorOptions<{ kind: 'note'; text: string }> = { target: 2000, createNote: (text) => ({ kind: 'note', text }) };
// @ts-expect-error options whose notes are not messages of this list
await compactMessages(history, notes);
const chain: StrategyChain = 'prune,summarize,window';
// @ts-expect-error a strategy that does not exist (the library's strategy is a union of the known names and chains)
await compactMessages(history, { target: 2000, strategy: 'summary' });
// @ts-expect-error a name given twice in a chain
await compactMessages(history, { target: 2000, strategy: 'window,window' });

const summarize: SummarizeCallback = async ({ system, user }: SummaryRequest) => system + user;
const summarizing: CompactorOptions = { target: 2000, summarize };
const done: CompactedMessages<Msg> = await compactMessages(history, summarizing);
const summarized: SummarizedConversation | undefined = done.summarized;
const round: SummaryRound | undefined = summarized?.rounds[0];
const tier: SummaryTier | undefined = round?.tier;
const placed: PlacedSummary | undefined = summarized?.summaries[0];
const failure: SummaryFailure | null | undefined = summarized?.failure;
export { r, awaited, next, r2, warm2, next2, inline, tier, placed, failure, chain };
`;

/**
 * Copies the shipped declarations into a project outside the clone and type-checks `consumer` there.
 * @returns tsc's output and status
 */
function typeCheck(consumer: string): { output: string; status: number | null } {
  const dir = mkdtempSync(path.join(tmpdir(), 'swc-types-'));
  try {
    const pkg = path.join(dir, 'node_modules', 'transcript-compact');
    const files = shippedDeclarations();
    expect(files).toContain('dist/index.d.ts');
    for (const file of files) {
      mkdirSync(path.dirname(path.join(pkg, file)), { recursive: true });
      copyFileSync(path.join(ROOT, file), path.join(pkg, file));
    }
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    writeFileSync(path.join(dir, 'index.ts'), consumer);
    const compilerOptions = {
      strict: true,
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      target: 'ES2022',
      // Neither Node's globals nor the DOM's (which declare some of the same names: ReadableStream, URL).
      lib: ['ES2022'],
      types: [],
      skipLibCheck: false,
      noEmit: true,
    };
    writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['index.ts'] }));
    const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const r = spawnSync(process.execPath, [tsc, '-p', dir, '--pretty', 'false'], { cwd: dir, encoding: 'utf8' });
    return { output: r.stdout + r.stderr, status: r.status };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('the shipped type declarations', () => {
  it('type-check in a project without Node’s types (no Buffer or other Node globals in them)', () => {
    // TS2591/TS2580 (a Node name such as Buffer or process), TS2307 (a `node:` module): any error fails.
    expect(typeCheck(CONSUMER)).toEqual({ output: '', status: 0 });
  });

  it('give back the messages’ own type under strict, whatever the options were typed as', () => {
    expect(typeCheck(INFERENCE)).toEqual({ output: '', status: 0 });
  });
});
