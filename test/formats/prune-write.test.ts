/**
 * Writing pruned results in every format: pruning the real transcripts of fixtures/real, then reading the output
 * again, must give the placeholder in each pruned result and every other byte as it was; a second run changes
 * nothing.
 */
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { DEFAULT_PLACEHOLDER } from '../../src/core/prune.js';
import { decodeSource } from '../../src/io/source.js';
import { compactSource } from '../../src/pipeline/index.js';
import { describePruneWrites, REAL, settings } from '../helpers/prune-write.js';

// The transcripts past BIG_FILE: test/e2e/prune-write.test.ts.
await describePruneWrites(false);

describe('Haystack: a pruned message is what ChatMessage.from_tool(...).to_dict() gives', () => {
  it('keeps origin, error and meta, adds the context_compaction marker last, and sets name to null', async () => {
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
    const result = await compactSource(decodeSource(Buffer.from(text), 'h.json'), settings());
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
  it('gives the toolUseResult of each pruned line the placeholder its tool_result block holds', async () => {
    const file = 'claude-code/claude-reliability-coverage-test-fix.jsonl';
    const result = await compactSource(decodeSource(readFileSync(path.join(REAL, file)), file), settings());
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
