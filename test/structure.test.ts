import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// The shape of src/: no import cycles; the command line presents what the pipeline decided and never measures.

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'src');

interface Import {
  readonly target: string;
  readonly typeOnly: boolean;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(full);
    return e.name.endsWith('.ts') ? [full] : [];
  });
}

/** Relative imports and re-exports of a module, resolved to the .ts files under src/. */
function importsOf(file: string): Import[] {
  const text = readFileSync(file, 'utf8');
  const found: Import[] = [];
  const pattern = /^\s*(import|export)\s+(type\s+)?(?:[^'";]*?\sfrom\s+)?['"](\.{1,2}\/[^'"]+)['"]/gm;
  for (const m of text.matchAll(pattern)) {
    const spec = m[3] as string;
    found.push({
      target: path.resolve(path.dirname(file), spec.replace(/\.js$/, '.ts')),
      typeOnly: m[2] !== undefined,
    });
  }
  // `import { type A, type B } from` is type-only too.
  const braces = /^\s*import\s+\{([^}]*)\}\s+from\s+['"](\.{1,2}\/[^'"]+)['"]/gm;
  for (const m of text.matchAll(braces)) {
    const names = (m[1] as string)
      .split(',')
      .map((n) => n.trim())
      .filter((n) => n !== '');
    if (names.length > 0 && names.every((n) => n.startsWith('type '))) {
      const target = path.resolve(path.dirname(file), (m[2] as string).replace(/\.js$/, '.ts'));
      const entry = found.find((i) => i.target === target && !i.typeOnly);
      if (entry !== undefined) found[found.indexOf(entry)] = { target, typeOnly: true };
    }
  }
  return found;
}

const files = sourceFiles(SRC);
const graph = new Map(files.map((f) => [f, importsOf(f)]));
const rel = (f: string): string => path.relative(SRC, f);

describe('the structure of src/', () => {
  test('the import scanner sees the imports (it finds the pipeline imported by the command line)', () => {
    const cli = graph.get(path.join(SRC, 'cli', 'stream.ts')) ?? [];
    expect(cli.map((i) => rel(i.target))).toContain(path.join('pipeline', 'index.ts'));
    for (const [, imports] of graph) for (const i of imports) expect(files).toContain(i.target);
  });

  test('no import cycle, type-only imports included', () => {
    const state = new Map<string, 'open' | 'done'>();
    const cycles: string[] = [];
    const visit = (f: string, trail: string[]): void => {
      if (state.get(f) === 'done') return;
      if (state.get(f) === 'open') {
        cycles.push([...trail.slice(trail.indexOf(f)), f].map(rel).join(' → '));
        return;
      }
      state.set(f, 'open');
      for (const i of graph.get(f) ?? []) visit(i.target, [...trail, f]);
      state.set(f, 'done');
    };
    for (const f of files) visit(f, []);
    expect(cycles).toEqual([]);
  });

  test('the command line reaches formats and the core only through the pipeline (types aside)', () => {
    const offenders: string[] = [];
    for (const [f, imports] of graph) {
      if (!rel(f).startsWith(`cli${path.sep}`)) continue;
      for (const i of imports) {
        const target = rel(i.target);
        const reaches = target.startsWith(`formats${path.sep}`) || target === path.join('core', 'compact.ts');
        if (reaches && !i.typeOnly) offenders.push(`${rel(f)} imports ${target}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  test('a strategy step reads only the core and the steps beside it (the chain does the rest)', () => {
    const steps = path.join('pipeline', 'steps');
    const offenders: string[] = [];
    for (const [f, imports] of graph) {
      if (!rel(f).startsWith(`${steps}${path.sep}`)) continue;
      for (const i of imports) {
        const target = rel(i.target);
        if (!target.startsWith(`core${path.sep}`) && !target.startsWith(`${steps}${path.sep}`))
          offenders.push(`${rel(f)} imports ${target}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  test('the library decides only through the pipeline: it names no strategy planner of the core', () => {
    const planners = /\b(planCompaction|planPruning|planOffload|summarizeRounds|planWithThresholds)\b/;
    const offenders = files
      .filter((f) => rel(f).startsWith(`library${path.sep}`))
      .filter((f) => planners.test(readFileSync(f, 'utf8')))
      .map(rel);
    expect(offenders).toEqual([]);
  });

  test('the settings sit below the command line and the library: they import neither', () => {
    const offenders: string[] = [];
    for (const [f, imports] of graph) {
      if (!rel(f).startsWith(`settings${path.sep}`)) continue;
      for (const i of imports) {
        const target = rel(i.target);
        if (target.startsWith(`cli${path.sep}`) || target.startsWith(`library${path.sep}`))
          offenders.push(`${rel(f)} imports ${target}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  test('the core is pure: it imports only the core (no node: module, no package, no tokenizer)', () => {
    const inCore = (f: string): boolean => rel(f).startsWith(`core${path.sep}`);
    const offenders: string[] = [];
    for (const [f, imports] of graph) {
      if (!inCore(f)) continue;
      for (const i of imports) if (!inCore(i.target)) offenders.push(`${rel(f)} imports ${rel(i.target)}`);
      const bare = /^\s*(?:import|export)\s(?:[^'";]*?\sfrom\s+)?['"]([^.'"][^'"]*)['"]/gm;
      for (const m of readFileSync(f, 'utf8').matchAll(bare)) offenders.push(`${rel(f)} imports ${m[1] as string}`);
    }
    expect(offenders).toEqual([]);
  });

  test('outside the formats, itemsOf is read through itemsReader (indexing a lazy one is a proxy trap per message)', () => {
    const offenders = files
      .filter((f) => !rel(f).startsWith(`formats${path.sep}`))
      .filter((f) =>
        /itemsOf\??\.?\[|itemsOf\.(?:forEach|map|flatMap|some|every|reduce|filter|find)\(/.test(
          readFileSync(f, 'utf8'),
        ),
      )
      .map(rel);
    expect(offenders).toEqual([]);
  });

  test('no file under src/cli makes or holds a token counter', () => {
    const offenders = files
      .filter((f) => rel(f).startsWith(`cli${path.sep}`))
      .filter((f) =>
        /\bTokenCounter\b|\bcreateCounter\b|\bcreateApproxCounter\b|\bcountTokens\b/.test(readFileSync(f, 'utf8')),
      )
      .map(rel);
    expect(offenders).toEqual([]);
  });
});
