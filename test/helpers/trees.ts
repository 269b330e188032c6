/** Trees of transcripts on disk, for the tests of batch runs and `swc compact --in-place`. */
import { cpSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, tempDir } from './cli.js';

/** A deterministic pseudo-random source, so a failing tree can be rebuilt. */
export function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

/** An OpenAI-chat JSONL transcript of a few turns with tool calls; `size` scales the texts. */
function transcript(seed: number, size: number): string {
  const r = random(seed);
  const lines = [{ role: 'system', content: `You are agent ${seed}.` }];
  const turns = 2 + Math.floor(r() * 6);
  for (let t = 0; t < turns; t++) {
    const id = `call_${seed}_${t}`;
    lines.push({
      role: 'user',
      content: `Question ${t}: ${'please look this up '.repeat(1 + Math.floor(r() * size))}`,
    });
    lines.push({
      role: 'assistant',
      content: null,
      tool_calls: [{ id, type: 'function', function: { name: 'search', arguments: `{"q": "${t}"}` } }],
    } as never);
    lines.push({
      role: 'tool',
      tool_call_id: id,
      content: 'found it '.repeat(1 + Math.floor(r() * size * 2)),
    } as never);
    lines.push({ role: 'assistant', content: `Answer ${t}: ${'here it is '.repeat(1 + Math.floor(r() * size))}` });
  }
  return `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`;
}

/** Writes `count` transcripts under `dir`, in nested folders, some small enough to stay unchanged. */
export function writeTree(dir: string, count: number, seed = 1): void {
  for (let i = 0; i < count; i++) {
    const sub = path.join(dir, `group-${i % 5}`, i % 2 === 0 ? 'even' : 'odd');
    mkdirSync(sub, { recursive: true });
    writeFileSync(
      path.join(sub, `t${String(i).padStart(4, '0')}.jsonl`),
      transcript(seed * 100_000 + i, i % 4 === 0 ? 1 : 30),
    );
  }
}

/** Every file under `dir` (relative paths), temporary ones included. */
export function listFiles(dir: string): string[] {
  return (readdirSync(dir, { recursive: true }) as string[]).filter((p) => statSync(path.join(dir, p)).isFile()).sort();
}

/** Every file under `dir` with its text. */
export function readTree(dir: string): Map<string, string> {
  return new Map(listFiles(dir).map((p) => [p, readFileSync(path.join(dir, p), 'utf8')]));
}

export const isTemporary = (p: string): boolean => path.basename(p).startsWith('.') && p.endsWith('.tmp');

/** A fresh temporary directory holding a copy of fixtures/sample.jsonl at each of the given relative paths. */
export function sampleTree(...files: string[]): string {
  const dir = tempDir();
  for (const f of files) {
    mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    cpSync(path.join(ROOT, 'fixtures/sample.jsonl'), path.join(dir, f));
  }
  return dir;
}
