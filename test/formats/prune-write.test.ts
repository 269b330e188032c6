/**
 * Writing pruned results in every format: pruning the real transcripts of fixtures/real, then reading the output
 * again, must give the placeholder in each pruned result and every other byte as it was; a second run changes
 * nothing.
 */
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

const REAL = path.join(process.cwd(), 'fixtures', 'real');
/** The transcripts swc compacts as they are (a saved pipeline state, say, holds none at a place it looks). */
const files = readdirSync(REAL, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .flatMap((d) => readdirSync(path.join(REAL, d.name)).map((f) => path.join(d.name, f)))
  .filter((file) => {
    try {
      compactSource(decodeSource(readFileSync(path.join(REAL, file)), file), {
        target: 1,
        counter: createApproxCounter(),
      });
      return true;
    } catch {
      return false;
    }
  })
  .sort();

const settings = (placeholder?: string): FileOptions => ({
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

describe.each(files)('pruning %s', (file) => {
  const bytes = readFileSync(path.join(REAL, file));
  const source = () => decodeSource(bytes, file);

  it('writes the placeholder into exactly the pruned results and leaves every other byte', () => {
    const result = compactSource(source(), settings());
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
          expect(diff.some((key) => typeof key === 'string' && (CONTENT_KEYS[format] ?? []).includes(key))).toBe(true);
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

  it('changes nothing when run again on its own output', () => {
    const first = compactSource(source(), settings('Gone: {tool_name}.'));
    const second = compactSource(decodeSource(Buffer.from(first.output), file), settings('Gone: {tool_name}.'));
    expect(second.changed).toBe(false);
  });
});

describe('Haystack: a pruned message is what ChatMessage.from_tool(...).to_dict() gives', () => {
  it('keeps origin, error and meta, adds the context_compaction marker last, and sets name to null', () => {
    const message = (result: string, meta: Record<string, unknown>, error = false) => ({
      role: 'tool',
      meta,
      name: null,
      content: [
        { tool_call_result: { result, origin: { tool_name: 'search', arguments: { q: 1.0 }, id: 'c1' }, error } },
      ],
    });
    const call = {
      role: 'assistant',
      meta: {},
      name: null,
      content: [{ tool_call: { tool_name: 'search', arguments: {}, id: 'c1' } }],
    };
    const items = [
      { role: 'user', meta: {}, name: null, content: [{ text: 'task' }] },
      call,
      message('x'.repeat(400), { custom: 'value' }, true),
      call,
      message('newest', {}),
    ];
    const text = JSON.stringify(items, null, 2).replace('"q": 1', '"q": 1.0');
    const result = compactSource(decodeSource(Buffer.from(text), 'h.json'), settings());
    const out = JSON.parse(result.output) as unknown[];
    expect(out[2]).toEqual({
      role: 'tool',
      meta: {
        custom: 'value',
        context_compaction: {
          strategy: 'tool_result_pruning',
          original_tokens: Math.floor(('[tool:search (error)] '.length + 400) / 4),
        },
      },
      name: null,
      content: [
        {
          tool_call_result: {
            result: DEFAULT_PLACEHOLDER.replace('{tool_name}', 'search'),
            origin: { tool_name: 'search', arguments: { q: 1 }, id: 'c1' },
            error: true,
          },
        },
      ],
    });
    // Written in the file's own style, the number's lexeme kept.
    expect(result.output).toContain('"q": 1.0');
    expect(result.output).toContain(
      '"custom": "value",\n      "context_compaction": {\n        "strategy": "tool_result_pruning",',
    );
    expect(result.output.split('\n').slice(0, 20)).toEqual(text.split('\n').slice(0, 20));
  });
});

describe('Claude Code: the toolUseResult copy of a pruned result is pruned too', () => {
  it('gives the toolUseResult of each pruned line the placeholder its tool_result block holds', () => {
    const file = 'claude-code/claude-reliability-coverage-test-fix.jsonl';
    const result = compactSource(decodeSource(readFileSync(path.join(REAL, file)), file), settings());
    const lines = result.output
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as { toolUseResult?: unknown; message?: { content?: unknown } });
    const pruned = result.conversations.flatMap((c) => c.pruned);
    expect(pruned.length).toBeGreaterThan(2);
    for (const p of pruned) {
      const line = lines[p.start] as {
        toolUseResult?: unknown;
        message: { content: { type: string; content: unknown }[] };
      };
      const block = line.message.content.find((b) => b.type === 'tool_result');
      expect(block?.content).toBe(DEFAULT_PLACEHOLDER.replace('{tool_name}', p.tools[0] as string));
      if (line.toolUseResult !== undefined) expect(line.toolUseResult).toBe(block?.content);
    }
  });
});
