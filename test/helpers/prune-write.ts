/** Pruning the real transcripts and reading the output again (test/formats/prune-write.test.ts, test/e2e/prune-write.test.ts). */
import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { contentOf } from '../../src/core/render.js';
import { DEFAULT_PLACEHOLDER, isPlaceholderText } from '../../src/core/prune.js';
import type { Message } from '../../src/core/types.js';
import { findFormat } from '../../src/formats/registry.js';
import { readLayout } from '../../src/io/layout.js';
import { decodeSource } from '../../src/io/source.js';
import { compactSource, normalizeSlot, type FileOptions } from '../../src/pipeline/index.js';
import { createApproxCounter } from '../../src/tokens/approx.js';

import { isBig } from './cli.js';

export const REAL = path.join(process.cwd(), 'fixtures', 'real');
/**
 * The transcripts swc compacts as they are (a saved pipeline state, say, holds none at a place it looks), past
 * BIG_FILE or not.
 */
async function transcripts(big: boolean): Promise<string[]> {
  const files = readdirSync(REAL, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .flatMap((d) => readdirSync(path.join(REAL, d.name)).map((f) => path.join(d.name, f)))
    .filter((file) => isBig(path.join(REAL, file)) === big)
    .sort();
  const compacted: string[] = [];
  for (const file of files) {
    try {
      await compactSource(decodeSource(readFileSync(path.join(REAL, file)), file), {
        target: 1,
        counter: createApproxCounter(),
      });
      compacted.push(file);
    } catch {
      // Not a transcript swc compacts as it is.
    }
  }
  return compacted;
}

export const settings = (placeholder?: string): FileOptions => ({
  target: 1,
  counter: createApproxCounter(),
  strategies: ['prune'],
  minTokens: 0,
  slimLongerThan: Infinity,
  ...(placeholder === undefined ? {} : { placeholder }),
});

/** Every path at which two parsed JSON values differ. */
function differences(a: unknown, b: unknown, at: readonly (string | number)[] = []): (string | number)[][] {
  if (a === b) return [];
  const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;
  if (!isObj(a) || !isObj(b) || Array.isArray(a) !== Array.isArray(b)) return [[...at]];
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].flatMap((k) => differences(a[k], b[k], [...at, Array.isArray(a) ? Number(k) : k]));
}

/** The keys under which a format holds a result's content (and what pruning adds beside it). */
const CONTENT_KEYS: Record<string, readonly string[]> = {
  openai: ['content'],
  anthropic: ['content'],
  'claude-code': ['content', 'toolUseResult'],
  responses: ['output'],
  gemini: ['output', 'error', 'response'],
  langchain: ['content'],
  sharegpt: ['value', 'content'],
  haystack: ['result', 'context_compaction', 'meta', 'name'],
};

/**
 * Prunes each real transcript (past BIG_FILE or not) and checks what it wrote.
 * @param big - the big transcripts (test/e2e/prune-write.test.ts) or the others (test/formats/prune-write.test.ts)
 */
export async function describePruneWrites(big: boolean): Promise<void> {
  describe.each(await transcripts(big))('pruning %s', (file) => {
    const bytes = readFileSync(path.join(REAL, file));
    const source = () => decodeSource(bytes, file);

    it('writes the placeholder into exactly the pruned results and leaves every other byte', async () => {
      const result = await compactSource(source(), settings());
      const pruned = result.conversations.flatMap((c) => c.pruned);
      if (!result.changed) {
        expect(pruned).toEqual([]);
        return;
      }
      expect(pruned.length).toBeGreaterThan(0);
      const before = readLayout(source());
      const after = readLayout(decodeSource(Buffer.from(result.output), file));
      expect(after.slots.length).toBe(before.slots.length);
      after.slots.forEach((slot, s) => {
        const old = before.slots[s]!;
        const conversation = result.conversations[s]!;
        const prunedItems = new Set(
          conversation.pruned.flatMap((p) => Array.from({ length: p.end - p.start }, (_, k) => p.start + k)),
        );
        expect(slot.raws.length).toBe(old.raws.length);
        const format = result.format.split(', ')[0] as string;
        slot.raws.forEach((raw, k) => {
          if (!prunedItems.has(k)) {
            expect(raw).toBe(old.raws[k]);
            return;
          }
          for (const diff of differences(JSON.parse(old.raws[k]!), JSON.parse(raw))) {
            expect(diff.some((key) => typeof key === 'string' && (CONTENT_KEYS[format] ?? []).includes(key))).toBe(
              true,
            );
          }
        });
        // Read again, each pruned message's results are placeholders of the tools the decision named.
        const adapter = findFormat(format)!;
        const reread = normalizeSlot(decodeSource(Buffer.from(result.output), file), slot, adapter, null);
        for (const p of conversation.pruned) {
          const results = contentOf(reread.messages[p.message] as Message).results.filter(
            (r) => r.name !== '' || p.tools.includes(''),
          );
          expect(results.slice(0, p.tools.length).every((r) => isPlaceholderText(r.text, DEFAULT_PLACEHOLDER))).toBe(
            true,
          );
          expect(results.slice(0, p.tools.length).map((r) => r.name)).toEqual(p.tools.slice(0, results.length));
        }
      });
    });

    it('changes nothing when run again on its own output', async () => {
      const first = await compactSource(source(), settings('Gone: {tool_name}.'));
      const second = await compactSource(decodeSource(Buffer.from(first.output), file), settings('Gone: {tool_name}.'));
      expect(second.changed).toBe(false);
    });
  });
}
