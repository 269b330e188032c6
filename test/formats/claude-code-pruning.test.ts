/**
 * Pruning Claude Code sessions whose tool results have lines attached after them (a skill's `isMeta` body with
 * `sourceToolUseID`, a compact summary after a `compact_boundary`): the decision counts only what the file will show.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { decodeSource } from '../../src/io/source.js';
import { compactSource, type FileResult } from '../../src/pipeline/index.js';
import type { StrategyName } from '../../src/pipeline/index.js';
import { createApproxCounter } from '../../src/tokens/index.js';
import { ROOT, tempDir } from '../helpers/cli.js';
import { runSwc } from '../helpers/run-in-process.js';
import { scaled } from '../helpers/scale.js';

type Line = Record<string, unknown>;

const FIXTURE = path.join(ROOT, 'fixtures/claude-code/attached-after-result.jsonl');

interface PlanGroup {
  readonly kind: string;
  readonly start: number;
  readonly end: number;
}

interface PlanJson {
  readonly tokensBefore: number;
  readonly tokensAfter: number;
  readonly targetMet: boolean;
  readonly groups: readonly PlanGroup[];
}

function linesOf(text: string): string[] {
  return text.split('\n').filter((l) => l !== '');
}

/** A line with its chain references blanked, to tell a rewritten line from a relinked one. */
function withoutReferences(raw: string): string {
  return raw.replace(/"(parentUuid|leafUuid|logicalParentUuid)":(null|"[^"]*")/g, '"$1":null');
}

/** The input positions of the lines a run rewrote (not only relinked), found by their uuids. */
function rewrittenLines(input: string, output: string): number[] {
  const inLines = linesOf(input);
  const at = new Map(inLines.map((raw, k) => [(JSON.parse(raw) as Line).uuid, k]));
  const out: number[] = [];
  for (const raw of linesOf(output)) {
    const k = at.get((JSON.parse(raw) as Line).uuid);
    if (k !== undefined && withoutReferences(raw) !== withoutReferences(inLines[k] as string)) out.push(k);
  }
  return out;
}

/** Compacts a file to another through the CLI in process, and gives the plan and the file written. */
async function compactFile(
  file: string,
  args: readonly string[],
  out: string,
): Promise<{ plan: PlanJson; output: string; stderr: string }> {
  const run = await runSwc(['compact', file, '--tokenizer', 'approx', ...args, '-o', out, '--json'], { cwd: ROOT });
  expect(run.status).toBe(0);
  return { plan: JSON.parse(run.stdout) as PlanJson, output: readFileSync(out, 'utf8'), stderr: run.stderr };
}

/** The tokens of a file as swc counts them when it reads it. */
async function countOf(file: string): Promise<number> {
  const run = await runSwc(['compact', file, '--tokenizer', 'approx', '-t', '1000000000', '--dry-run', '--json'], {
    cwd: ROOT,
  });
  expect(run.status).toBe(0);
  return (JSON.parse(run.stdout) as PlanJson).tokensBefore;
}

describe('Claude Code: pruning a result with lines attached after it', () => {
  const tmp = tempDir();
  const input = readFileSync(FIXTURE, 'utf8');

  for (const strategy of ['prune', 'prune,window']) {
    for (const target of [5000, 4000, 3000, 1500]) {
      it(`--strategy ${strategy} -t ${target}: the plan's figures are the file's, and a second run changes nothing`, async () => {
        const args = ['--strategy', strategy, '-t', String(target)];
        const first = path.join(tmp, `${strategy}-${target}-1.jsonl`);
        const { plan, output } = await compactFile(FIXTURE, args, first);
        expect(await countOf(first)).toBe(plan.tokensAfter);

        // Each pruned group is a message whose lines the file rewrote, and each rewritten line is in one.
        const pruned = plan.groups.filter((g) => g.kind === 'pruned');
        const rewritten = rewrittenLines(input, output);
        const inGroup = (k: number): boolean => pruned.some((g) => g.start <= k && k < g.end);
        expect(rewritten.filter((k) => !inGroup(k))).toEqual([]);
        expect(pruned.filter((g) => !rewritten.some((k) => g.start <= k && k < g.end))).toEqual([]);

        const second = path.join(tmp, `${strategy}-${target}-2.jsonl`);
        const again = await compactFile(first, args, second);
        expect(again.output).toBe(output);
        expect(again.plan.tokensAfter).toBe(plan.tokensAfter);
      });
    }
  }
});

/** What may follow a tool result in a session. */
type Attached = 'skill' | 'compact' | 'interruption' | 'hook';

interface StepSpec {
  readonly prompt: boolean;
  readonly size: number;
  readonly besideText: boolean;
  readonly attached: readonly { readonly kind: Attached; readonly size: number }[];
}

const SESSION = '0e6f3d1a-5b2c-4d7e-8f90-a1b2c3d4e5f6';

/** A Claude Code session of these steps, each line chained to the one before it (a boundary starts a new chain). */
function sessionOf(steps: readonly StepSpec[]): string {
  const lines: Line[] = [];
  let parent: string | null = null;
  let n = 0;
  const push = (line: Line): void => {
    const uuid = `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`;
    lines.push({ parentUuid: parent, isSidechain: false, userType: 'external', sessionId: SESSION, ...line, uuid });
    parent = uuid;
  };
  const user = (content: unknown, extra: Line = {}): void =>
    push({ type: 'user', message: { role: 'user', content }, ...extra });
  const words = (size: number, seed: string): string => `${seed} ${'lorem ipsum '.repeat(size)}`.trim();
  user('Do the task.');
  steps.forEach((step, k) => {
    if (step.prompt) user(`Now do part ${k}.`);
    const id = `toolu_${k}`;
    push({
      type: 'assistant',
      message: {
        id: `msg_${k}`,
        role: 'assistant',
        content: [{ type: 'tool_use', id, name: 'Bash', input: { n: k } }],
      },
    });
    const blocks: unknown[] = [{ tool_use_id: id, type: 'tool_result', content: words(step.size, `out ${k}`) }];
    if (step.besideText) blocks.push({ type: 'text', text: words(step.size, `beside ${k}`) });
    user(blocks, { toolUseResult: { stdout: `out ${k}` } });
    for (const a of step.attached) {
      const text = words(a.size, `${a.kind} ${k}`);
      if (a.kind === 'skill') user([{ type: 'text', text }], { isMeta: true, sourceToolUseID: id });
      else if (a.kind === 'hook') user([{ type: 'text', text }], { isMeta: true });
      else if (a.kind === 'interruption') user([{ type: 'text', text: '[Request interrupted by user for tool use]' }]);
      else {
        const before = parent;
        parent = null;
        push({
          type: 'system',
          subtype: 'compact_boundary',
          content: 'Conversation compacted',
          logicalParentUuid: before,
        });
        user(`This session is being continued from a previous conversation. ${text}`, {
          isCompactSummary: true,
          isVisibleInTranscriptOnly: true,
        });
      }
    }
  });
  push({
    type: 'assistant',
    message: { id: 'msg_end', role: 'assistant', content: [{ type: 'text', text: 'Done.' }] },
  });
  return lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
}

const stepArb: fc.Arbitrary<StepSpec> = fc.record({
  prompt: fc.boolean(),
  size: fc.constantFrom(2, 150, 600),
  besideText: fc.boolean(),
  attached: fc.array(
    fc.record({
      kind: fc.constantFrom<Attached>('skill', 'compact', 'interruption', 'hook'),
      size: fc.constantFrom(2, 150, 600),
    }),
    { maxLength: 2 },
  ),
});

describe('Claude Code: pruning random sessions with lines attached after results', () => {
  const counter = createApproxCounter();
  const compact = async (text: string, target: number, strategies: readonly StrategyName[]): Promise<FileResult> =>
    await compactSource(decodeSource(Buffer.from(text), 'session.jsonl'), { target, counter, strategies });

  it('plans the tokens the written file holds, and a second run at the same settings changes nothing', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(stepArb, { minLength: 1, maxLength: 6 }),
        fc.constantFrom<readonly StrategyName[]>(['prune'], ['prune', 'window']),
        fc.integer({ min: 50, max: 4000 }),
        async (steps, strategies, target) => {
          const input = sessionOf(steps);
          const first = await compact(input, target, strategies);
          const written = first.output;
          const reread = (await compact(written, 1_000_000_000, ['window'])).conversations[0]!.plan;
          expect(reread.tokensBefore).toBe(first.conversations[0]!.plan.tokensAfter);
          const second = await compact(written, target, strategies);
          expect(second.output).toBe(written);
        },
      ),
      { numRuns: scaled(150) },
    );
  });
});
