/**
 * The suite needs nothing beside the clone: no test, script or source reads transcripts from a folder outside the
 * repository (the real transcripts live in fixtures/real, with their sources and licences).
 */
import { describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { REAL_DATA, ROOT } from './helpers/cli.js';

const SELF = fileURLToPath(import.meta.url);

/** References to a data folder beside the clone: `../shared`, `shared/data`, or `'..', 'shared'` as path pieces. */
const OUTSIDE = [/\.\.[\\/]shared\b/, /\bshared[\\/]data\b/, /['"`]\.\.['"`]\s*,\s*['"`]shared['"`]/];

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules') out.push(...filesUnder(full));
    } else out.push(full);
  }
  return out.sort();
}

describe('the repository is self-contained', () => {
  const scanned = [
    ...['test', 'scripts', 'src'].flatMap((dir) => filesUnder(path.join(ROOT, dir))),
    ...['jest.config.js', 'package.json'].map((file) => path.join(ROOT, file)),
  ].filter((file) => file !== SELF);

  it('scans the tests, scripts, sources and configuration', () => {
    expect(scanned.length).toBeGreaterThan(50);
    expect(scanned.every((file) => existsSync(file))).toBe(true);
  });

  it('has no reference to a data folder outside the repository', () => {
    const found: string[] = [];
    for (const file of scanned) {
      const lines = readFileSync(file, 'utf8').split('\n');
      lines.forEach((line, i) => {
        if (OUTSIDE.some((re) => re.test(line))) found.push(`${path.relative(ROOT, file)}:${i + 1}: ${line.trim()}`);
      });
    }
    expect(found).toEqual([]);
  });

  it('keeps the real transcripts inside the repository, each with its provenance, and licence texts beside them', () => {
    expect(path.relative(ROOT, REAL_DATA).startsWith('..')).toBe(false);
    const provenance = readFileSync(path.join(REAL_DATA, 'PROVENANCE.md'), 'utf8');
    expect(existsSync(path.join(REAL_DATA, 'LICENSES.md'))).toBe(true);
    const transcripts = filesUnder(REAL_DATA).filter((file) => /\.jsonl?$/.test(file));
    expect(transcripts.length).toBeGreaterThan(20);
    const unlisted = transcripts
      .filter((file) => !provenance.includes(`| ${path.basename(file)} |`))
      .map((file) => path.relative(ROOT, file));
    expect(unlisted).toEqual([]);
  });

  it('does not ship the fixtures in the npm package', () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { files?: string[] };
    expect(pkg.files).toBeDefined();
    expect((pkg.files ?? []).filter((entry) => entry.replace(/^\.\//, '').startsWith('fixtures'))).toEqual([]);
  });
});
