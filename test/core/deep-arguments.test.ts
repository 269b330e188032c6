/**
 * Tool-call arguments nested deeper than a recursive walk can go are still measured as what the model is sent:
 * a count never below the arguments' own text, so a target below it is never met by accident.
 */
import { describe, expect, it } from '@jest/globals';
import { JsonDepthError, MAX_JSON_DEPTH, parseJson } from '../../src/core/json/value.js';
import { pythonJsonDumps, renderArguments, renderArgumentsString } from '../../src/core/json/python.js';
import { decodeSource } from '../../src/io/source.js';
import { compactSource } from '../../src/pipeline/index.js';
import { createApproxCounter } from '../../src/tokens/approx.js';

/** As deep as swc reads, less the levels a file puts around a tool call's arguments. */
const DEPTH = MAX_JSON_DEPTH - 8;

/** `[[[...[]...]]]`, `depth` lists deep. */
function nestedLists(depth: number): string {
  return '['.repeat(depth) + ']'.repeat(depth);
}

/** `{"a":{"a":...{"a":1}...}}` as written compactly, and as Python's `json.dumps(sort_keys=True)` writes it. */
function nestedObjects(depth: number): { compact: string; python: string } {
  return {
    compact: '{"a":'.repeat(depth) + '1' + '}'.repeat(depth),
    python: '{"a": '.repeat(depth) + '1' + '}'.repeat(depth),
  };
}

/** Where two long texts first differ, with a little of each around it (a whole 200 KB text makes no useful failure). */
function firstDifference(actual: string, expected: string): { at: number; actual: string; expected: string } | null {
  if (actual === expected) return null;
  let at = 0;
  while (at < actual.length && at < expected.length && actual[at] === expected[at]) at++;
  return {
    at,
    actual: actual.slice(Math.max(0, at - 20), at + 40),
    expected: expected.slice(Math.max(0, at - 20), at + 40),
  };
}

/** The approximate counter's count of one text on its own. */
function approxTokens(text: string): number {
  return createApproxCounter().measure([{ text, images: 0, files: 0 }]);
}

function compactText(name: string, text: string, target: number): ReturnType<typeof compactSource> {
  return compactSource(decodeSource(Buffer.from(text, 'utf8'), name), {
    target,
    counter: createApproxCounter(),
    exhaustive: true,
  });
}

describe('deeply nested tool-call arguments', () => {
  it('render as Python writes them, however deep the nesting', () => {
    const lists = nestedLists(DEPTH);
    expect(firstDifference(renderArgumentsString(lists), lists)).toBeNull();
    const objects = nestedObjects(DEPTH);
    expect(firstDifference(renderArgumentsString(objects.compact), objects.python)).toBeNull();
    expect(firstDifference(renderArguments(parseJson(objects.compact)), objects.python)).toBeNull();
  });

  it('are parsed to MAX_JSON_DEPTH levels and refused past it; an arguments string deeper still is counted as its text', () => {
    expect(() => parseJson(nestedLists(MAX_JSON_DEPTH))).not.toThrow();
    expect(() => parseJson(nestedLists(MAX_JSON_DEPTH + 1))).toThrow(JsonDepthError);
    const { compact } = nestedObjects(MAX_JSON_DEPTH + 1);
    expect(renderArgumentsString(compact)).toBe(compact);
  });

  it('render mixed deep values with sorted keys, separators, escapes and Python numbers', () => {
    const inner = '{"z": [1.0, "é", {"b": true, "a": null}], "a": 1E2}';
    const half = DEPTH / 2 - 2;
    const raw = '[{"k":'.repeat(half) + inner + '}]'.repeat(half);
    const expected = '[{"k": '.repeat(half) + pythonJsonDumps(parseJson(inner)) + '}]'.repeat(half);
    expect(pythonJsonDumps(parseJson(inner))).toBe('{"a": 100.0, "z": [1.0, "\\u00e9", {"a": null, "b": true}]}');
    expect(firstDifference(renderArgumentsString(raw), expected)).toBeNull();
  });

  it('are counted at least as their raw text in an OpenAI chat file, and a target below that compacts', async () => {
    const args = nestedLists(DEPTH);
    const lines = [
      { role: 'system', content: 'You are a careful agent.' },
      { role: 'user', content: 'Walk the tree.' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'walk', arguments: args } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'walked' },
      { role: 'assistant', content: 'Done.' },
    ];
    const text = lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
    const rawTokens = approxTokens(args);
    const result = await compactText('deep.jsonl', text, rawTokens - 1);
    const plan = result.conversations[0]?.plan;
    expect(plan?.tokensBefore).toBeGreaterThanOrEqual(rawTokens);
    expect(result.changed).toBe(true);
    expect(result.output).not.toContain(args);
  });

  it('are counted at least as their raw text in an Anthropic tool_use input object, and a target below that compacts', async () => {
    const { compact: input, python } = nestedObjects(DEPTH);
    const text =
      '{"system": "You are a careful agent.", "messages": [' +
      '{"role": "user", "content": "Walk the tree."}, ' +
      `{"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "walk", "input": ${input}}]}, ` +
      '{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "walked"}]}, ' +
      '{"role": "assistant", "content": [{"type": "text", "text": "Done."}]}]}';
    const rawTokens = approxTokens(input);
    const result = await compactText('deep.json', text, rawTokens - 1);
    expect(result.format).toBe('anthropic');
    const plan = result.conversations[0]?.plan;
    expect(plan?.tokensBefore).toBeGreaterThanOrEqual(approxTokens(python));
    expect(result.changed).toBe(true);
    expect(result.output).not.toContain(input);
  });
});
