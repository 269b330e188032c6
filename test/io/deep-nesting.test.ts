/**
 * JSON nested deeper than MAX_JSON_DEPTH (10,000 levels of arrays and objects) is refused before it is parsed, with
 * one line and exit 2, nothing written: millions of levels in a few MB would otherwise exhaust the heap (each level
 * parsed and rendered costs a few hundred bytes). Exactly the limit is still read. The huge shapes are measured in
 * the benchmark (scripts/bench.ts); these inputs are small enough to run in process.
 */
import { describe, expect, it } from '@jest/globals';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { MAX_JSON_DEPTH } from '../../src/core/json/value.js';
import { tempDir } from '../helpers/cli.js';
import { runSwc } from '../helpers/run-in-process.js';

const APPROX = ['--tokenizer', 'approx'];

/** An Anthropic tool_use line whose input holds lists nested so that the whole line is `depth` levels deep. */
function deepLine(depth: number): string {
  // The line's object, its content list, the tool_use block and its input object are 4 levels.
  const lists = '['.repeat(depth - 4) + ']'.repeat(depth - 4);
  return `{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"walk","input":{"a":${lists}}}]}`;
}

const FIRST = '{"role":"user","content":"Walk the tree."}';
const RESULT = '{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"walked"}]}';

function jsonl(depth: number): string {
  return `${FIRST}\n${deepLine(depth)}\n${RESULT}\n`;
}

/** The same conversation as one JSON list (one level more than its deepest message). */
function json(depth: number): string {
  return `[${FIRST},\n${deepLine(depth - 1)},\n${RESULT}]\n`;
}

const REFUSED = `nested deeper than ${MAX_JSON_DEPTH.toLocaleString('en-US')} levels of arrays and objects; swc refuses JSON this deep`;

describe('JSON nested past the depth limit', () => {
  it('reads a JSONL line exactly MAX_JSON_DEPTH levels deep', async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'a.jsonl'), jsonl(MAX_JSON_DEPTH));
    const r = await runSwc(['compact', 'a.jsonl', '-t', '10', '--check', ...APPROX], { cwd: dir });
    expect(r.stderr).not.toContain('nested deeper');
    expect(r.status).toBe(0);
  });

  it('refuses a JSONL line one level deeper with one line naming the line and column, exit 2, nothing written', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'a.jsonl');
    const text = jsonl(MAX_JSON_DEPTH + 1);
    writeFileSync(file, text);
    const r = await runSwc(['compact', 'a.jsonl', '-t', '10', '--in-place', ...APPROX], { cwd: dir });
    // The column of the bracket that opens level 10,001 (the line's strings hold no brackets).
    const line = deepLine(MAX_JSON_DEPTH + 1);
    let opened = 0;
    let column = 0;
    while (opened <= MAX_JSON_DEPTH) if ('[{'.includes(line[column++] as string)) opened++;
    expect(r).toEqual({ status: 2, stdout: '', stderr: `swc: a.jsonl:2:${column}: line 2 is ${REFUSED}\n` });
    expect(readFileSync(file, 'utf8')).toBe(text);
  });

  it('refuses a whole JSON file past the limit, and writes no output file', async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'a.json'), json(MAX_JSON_DEPTH + 1));
    const r = await runSwc(['compact', 'a.json', '-t', '10', '-o', 'out.json', ...APPROX], { cwd: dir });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(
      new RegExp(`^swc: a\\.json:2:\\d+: the JSON is ${REFUSED.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\n$`),
    );
    expect(() => readFileSync(path.join(dir, 'out.json'))).toThrow();
  });

  it('refuses a million levels (2 MB) at once, as inspect and in a batch where the other files go on', async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'deep.jsonl'), jsonl(1_000_000));
    writeFileSync(path.join(dir, 'deep.json'), json(1_000_000));
    writeFileSync(path.join(dir, 'ok.jsonl'), `${FIRST}\n`);
    const inspect = await runSwc(['inspect', 'deep.json', ...APPROX], { cwd: dir });
    expect(inspect.status).toBe(2);
    expect(inspect.stderr).toMatch(/^swc: deep\.json:2:\d+: the JSON is nested deeper than 10,000 levels/);
    const batch = await runSwc(['compact', '.', '-t', '10', '--check', ...APPROX], { cwd: dir });
    expect(batch.status).toBe(2);
    expect(batch.stderr).toMatch(/^swc: deep\.jsonl:2:\d+: line 2 is nested deeper than 10,000 levels/m);
    expect(batch.stderr).toMatch(/3 files scanned: 0 would be compacted, 1 unchanged, 2 failed/);
  });
});
