/**
 * Compacting with slim items against compacting with whole ones, for test/io/slim.test.ts and test/e2e/slim.test.ts.
 */
import { expectEqual } from './bytes.js';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { sourceFromBytes } from '../../src/io/lines.js';
import { SLIMMED } from '../../src/io/slim.js';
import type { SourceText } from '../../src/io/source.js';
import { compactSource, type FileOptions, type FileResult } from '../../src/pipeline/index.js';
import { createApproxCounter } from '../../src/tokens/approx.js';
import { createCounter } from '../../src/tokens/index.js';

export const counter = createApproxCounter();
const o200k = await createCounter('o200k_base');

/** Every transcript-like file under a directory. */
export function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(full));
    else if (/\.(json|jsonl)$/.test(entry.name)) out.push(full);
  }
  return out.sort();
}

/** What a compaction decided and wrote, or the error it stopped with. */
export async function outcome(run: () => Promise<FileResult>): Promise<unknown> {
  let result: FileResult;
  try {
    result = await run();
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
  return {
    changed: result.changed,
    output: result.output,
    plans: result.conversations.map((c) => c.plan),
    formats: result.format,
  };
}

/** Whether some item of a result holds a stand-in (so a comparison really compared slim items). */
export async function slimmed(run: () => Promise<FileResult>): Promise<boolean> {
  try {
    return (await run()).conversations.some((c) =>
      c.slot.items.some((item) => JSON.stringify(item).includes(JSON.stringify(SLIMMED).slice(1, -1))),
    );
  } catch {
    return false;
  }
}

/** A note template longer than any string kept whole, so earlier notes must be recognised by the keep rule. */
const LONG_NOTE = `${'Earlier history was summarised away. '.repeat(9)}{num_removed} messages went.`;

const TARGETS = [1, 300, 3000, 30_000, 1e9];

export async function compare(file: string, bytes: Buffer): Promise<void> {
  const make = (): SourceText => sourceFromBytes(bytes, path.basename(file));
  for (const target of TARGETS) {
    for (const note of [undefined, LONG_NOTE]) {
      const options: FileOptions = { target, note, counter, exhaustive: target === 3000 };
      const slim = await outcome(async () => await compactSource(make(), { ...options, slimLongerThan: 0 }));
      const full = await outcome(async () => await compactSource(make(), { ...options, slimLongerThan: Infinity }));
      expectEqual({ file, target, note, ...(slim as object) }, { file, target, note, ...(full as object) });
      // Compacting the result again recognises the note it wrote either way.
      const first = full as { output?: string; changed?: boolean };
      if (first.changed === true && typeof first.output === 'string') {
        const again = Buffer.from(first.output);
        const slimAgain = await outcome(
          async () =>
            await compactSource(sourceFromBytes(again, path.basename(file)), { ...options, slimLongerThan: 0 }),
        );
        const fullAgain = await outcome(
          async () =>
            await compactSource(sourceFromBytes(again, path.basename(file)), { ...options, slimLongerThan: Infinity }),
        );
        expectEqual(
          { file, target, note, again: true, ...(slimAgain as object) },
          {
            file,
            target,
            note,
            again: true,
            ...(fullAgain as object),
          },
        );
      }
    }
  }
}

/**
 * Pruning and offloading read slim files' tool results by their sketches (src/core/sketch.ts): the same chains with
 * whole items (no sketches, every text read) must decide and write the same, with a BPE counter (whose pruning bound
 * reads each result's end) and the approximate one.
 */
export async function compareChains(file: string, bytes: Buffer): Promise<void> {
  const make = (): SourceText => sourceFromBytes(bytes, path.basename(file));
  for (const [strategies, target, count] of [
    [['prune', 'window'], 300, o200k],
    [['prune', 'window'], 3000, o200k],
    [['offload', 'window'], 300, counter],
    [['prune', 'offload', 'window'], 3000, o200k],
  ] as const) {
    const options: FileOptions = {
      target,
      counter: count,
      strategies,
      minTokens: 20,
      offload: { dir: '/tmp/swc-slim-store', over: 200 },
    };
    const run = async (slimLongerThan: number): Promise<unknown> => {
      try {
        const result = await compactSource(make(), { ...options, slimLongerThan });
        return {
          ...((await outcome(async () => result)) as object),
          stored: result.stored,
          pruned: result.conversations.map((c) => c.pruned),
          offloaded: result.conversations.map((c) => c.offloaded),
        };
      } catch (error) {
        return { error: error instanceof Error ? error.message : String(error) };
      }
    };
    expectEqual(
      { file, strategies, target, ...((await run(64)) as object) },
      {
        file,
        strategies,
        target,
        ...((await run(Infinity)) as object),
      },
    );
  }
}
