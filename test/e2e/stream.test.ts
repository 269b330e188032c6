/**
 * A JSONL file normalized while its lines are parsed, on files past the default block and past the calls a
 * normalization holds: compacted exactly as when every item is kept (the rest: test/pipeline/stream.test.ts).
 */
import { describe, expect, it } from '@jest/globals';
import { gzipSync } from 'node:zlib';
import type { Content } from '../../src/core/types.js';
import { CALL_GENERATION } from '../../src/formats/openai.js';
import type { FileOptions } from '../../src/pipeline/index.js';
import { ROOT } from '../helpers/cli.js';
import {
  counter,
  BLOCKS,
  CHAINS,
  STORE,
  compareRoads,
  fileRoad,
  bytesRoad,
  line,
  SWITCHES,
  REFUSED,
} from '../helpers/stream-roads.js';

describe('a file past the default block', () => {
  /** A long OpenAI chat whose calls and results fall on both sides of block boundaries. */
  function longChat(steps: number): string[] {
    const lines = [line({ role: 'system', content: 'Work carefully.' }), line({ role: 'user', content: 'Fix it.' })];
    for (let k = 0; lines.length < steps; k++) {
      const calls = Array.from({ length: 1 + (k % 3) }, (_, c) => ({
        id: `call_${k}_${c}`,
        type: 'function',
        function: { name: ['read', 'grep', 'test'][c], arguments: line({ step: k }) },
      }));
      lines.push(line({ role: 'assistant', content: k % 4 === 0 ? null : `step ${k}`, tool_calls: calls }));
      for (const c of calls)
        lines.push(line({ role: 'tool', tool_call_id: c.id, content: `result ${k} ${'output '.repeat(k % 40)}` }));
      if (k % 25 === 24) lines.push(line({ role: 'user', content: `Now part ${k}.` }));
    }
    return lines;
  }

  it('streams it whole and compacts it as keeping every item does, compressed too', async () => {
    const text = `${longChat(1060).join('\n')}\n`;
    for (const [make, chains] of [
      [bytesRoad(text, 'long.jsonl'), [CHAINS[3]]],
      [fileRoad(text, 'long.jsonl', 1 << 12), [CHAINS[0]]],
      [bytesRoad(gzipSync(text), 'long.jsonl.gz'), [CHAINS[0]]],
    ] as const) {
      for (const strategies of chains) {
        const options: FileOptions = {
          counter,
          target: 4000,
          strategies,
          minKeepSteps: 1,
          minTokens: 10,
          offload: { dir: STORE, over: 40, home: ROOT },
        };
        const { runs } = await compareRoads(strategies, make, options);
        expect(runs.every((r) => r.streamed)).toBe(true);
      }
    }
  });

  it('gives up past the first default block, for a change of format or a refused message', async () => {
    const lines = longChat(1060);
    for (const late of [SWITCHES.anthropic?.[0], SWITCHES.number?.[0], REFUSED[0], REFUSED[1]]) {
      const text = [...lines.slice(0, 1040), late, ...lines.slice(1040)].join('\n');
      const { base, runs } = await compareRoads(late, bytesRoad(text, 'late.jsonl'), { counter, target: 3000 });
      expect(base.failed).toBe(true);
      expect(runs.map((r) => [r.started, r.streamed])).toEqual(BLOCKS.map(() => [true, false]));
    }
  });
});

describe('a result that answers a call the stream let go', () => {
  it('gives up, and names the result after its call as the old road does', async () => {
    // More calls than the two generations a normalization holds (CALL_GENERATION each), then a result answering the
    // first: its call is found by reading the earlier items again, which a stream cannot.
    const calls = 2 * CALL_GENERATION + 1;
    const lines = [line({ role: 'user', content: 'Go.' })];
    for (let k = 0; k < calls; k++) {
      const name = k === 0 ? 'first_tool' : 'later_tool';
      lines.push(
        line({
          role: 'assistant',
          content: null,
          tool_calls: [{ id: `c${k}`, type: 'function', function: { name, arguments: '{}' } }],
        }),
      );
      lines.push(line({ role: 'tool', tool_call_id: `c${k}`, content: `result ${k}` }));
    }
    lines.push(line({ role: 'tool', tool_call_id: 'c0', content: 'the first, late' }));
    const { base, runs } = await compareRoads('late', bytesRoad(`${lines.join('\n')}\n`, 'late.jsonl'), {
      counter,
      target: 200,
    });
    expect(base.failed).toBe(false);
    expect(runs.map((r) => [r.started, r.streamed])).toEqual(BLOCKS.map(() => [true, false]));
    const shown = base.shown as { conversations: Array<{ normalized: { messages: Array<{ content: Content }> } }> };
    const last = shown.conversations[0]?.normalized.messages.at(-1);
    expect(last?.content.results.map((r) => [r.name, r.text])).toEqual([['first_tool', 'the first, late']]);
  });
});
