import { describe, expect, it } from '@jest/globals';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { ROOT, tempDir } from '../helpers/cli.js';
import { runSwc } from '../helpers/run-in-process.js';

/** swc inspect's JSON names the settings file the run read, as the compact plan and report do. */

const CONFIG = 'transcript-compact.config.json';

/** A repository whose root holds a settings file, and `sub/` two transcripts. */
function repo(): string {
  const root = path.join(tempDir(), 'repo');
  mkdirSync(path.join(root, '.git'), { recursive: true });
  mkdirSync(path.join(root, 'sub'));
  cpSync(path.join(ROOT, 'fixtures/sample.jsonl'), path.join(root, 'sub/a.jsonl'));
  cpSync(path.join(ROOT, 'fixtures/sample.jsonl'), path.join(root, 'sub/b.jsonl'));
  writeFileSync(path.join(root, CONFIG), JSON.stringify({ tokenizer: 'approx' }));
  return path.join(root, 'sub');
}

/** A validator for one of docs/schema/*.json (which refer to each other by file name). */
function schema(name: string) {
  const ajv = new Ajv2020({ strict: false });
  for (const file of ['inspection.schema.json', 'inspect-run.schema.json'])
    ajv.addSchema(JSON.parse(readFileSync(path.join(ROOT, 'docs/schema', file), 'utf8')) as object, file);
  return ajv.getSchema(name) as (doc: unknown) => boolean;
}

describe('swc inspect with a settings file', () => {
  it('names the file in the inspection of one file, right after its version', async () => {
    const r = await runSwc(['inspect', 'a.jsonl', '--json'], { cwd: repo() });
    expect(r.status).toBe(0);
    const doc = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(Object.keys(doc).slice(0, 2)).toEqual(['version', 'config']);
    expect(doc.config).toBe(`../${CONFIG}`);
    expect(doc.tokenizer).toBe('approx');
    expect(schema('inspection.schema.json')(doc)).toBe(true);
  });

  it('names it in the run document and in each line of --json-lines', async () => {
    const cwd = repo();
    const run = await runSwc(['inspect', '.', '--json'], { cwd });
    expect(run.status).toBe(0);
    const doc = JSON.parse(run.stdout) as { config?: string; files: Array<Record<string, unknown>> };
    expect(doc.config).toBe(`../${CONFIG}`);
    expect(doc.files.map((f) => f.config)).toEqual([undefined, undefined]);
    expect(schema('inspect-run.schema.json')(doc)).toBe(true);
    const lines = await runSwc(['inspect', '.', '--json-lines'], { cwd });
    const docs = lines.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { config?: string });
    expect(docs.map((d) => d.config)).toEqual([`../${CONFIG}`, `../${CONFIG}`]);
  });

  it('says nothing of a file when none was read', async () => {
    const r = await runSwc(['inspect', 'a.jsonl', '--json', '--no-config'], { cwd: repo() });
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).not.toHaveProperty('config');
  });
});
