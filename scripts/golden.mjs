#!/usr/bin/env node
// Records what every output mode prints for the fixtures, so a refactor can prove it changed no byte:
//   node scripts/golden.mjs <dist-dir> <out-dir>     (then: diff -r before/ after/)
// GOLDEN_BATCH_ONLY=1 records only the batch runs (a minute instead of half an hour); GOLDEN_QUICK=1 every strategy
// on fewer targets (about ten minutes).
// Run times are blanked; everything else (stdout, stderr, exit code, files written) is kept.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, cpSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pathToFileURL } from 'node:url';

const [distDir, outDir] = process.argv.slice(2);
if (!distDir || !outDir) throw new Error('usage: golden.mjs <dist-dir> <out-dir>');
const { run } = await import(pathToFileURL(path.resolve(distDir, 'cli/program.js')).href);
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');

function files(dir) {
  return readdirSync(dir, { recursive: true })
    .map((p) => path.join(dir, p))
    .filter((p) => statSync(p).isFile() && /\.(jsonl?|ndjson)$/.test(p))
    .sort();
}
const inputs = [...files(path.join(root, 'fixtures'))];

function memory() {
  const chunks = [];
  return {
    write: (c) => (chunks.push(typeof c === 'string' ? c : Buffer.from(c).toString('utf8')), true),
    text: () => chunks.join(''),
  };
}
const blank = (s) => s.replace(/\d+\.\d\d s\b/g, 'T s');

async function record(name, argv, cwd) {
  const stdout = memory();
  const stderr = memory();
  const code = await run(argv, { stdout, stderr, stdin: Readable.from([]), env: { NO_COLOR: '1' }, cwd });
  return `$ swc ${argv.join(' ')}\nexit ${code}\n--- stdout\n${blank(stdout.text())}\n--- stderr\n${blank(stderr.text())}\n`;
}

/** GOLDEN_QUICK=1: fewer targets and one tokenizer, but every strategy (about ten minutes). */
async function quick(rel) {
  const parts = [];
  const store = mkdtempSync(path.join(tmpdir(), 'golden-store-'));
  for (const t of ['150', '3000']) {
    const base = ['compact', rel, '-t', t, '--tokenizer', 'approx'];
    parts.push(await record(rel, base, root));
    parts.push(await record(rel, [...base, '--dry-run'], root));
    parts.push(await record(rel, [...base, '--dry-run', '--json'], root));
    parts.push(await record(rel, [...base, '--check'], root));
    parts.push(
      await record(rel, [...base, '--strategy', 'prune,window', '--min-tokens', '20', '--dry-run', '--json'], root),
    );
    parts.push(await record(rel, [...base, '--strategy', 'window,prune', '--min-tokens', '20'], root));
    parts.push(
      await record(rel, [...base, '--strategy', 'summarize', '--summary-tokens', '20', '--dry-run', '--json'], root),
    );
    parts.push(
      await record(
        rel,
        [
          ...base,
          '--strategy',
          'offload,window',
          '--offload-over',
          '200',
          '--offload-dir',
          store,
          '--json',
          '-o',
          '/dev/null',
        ],
        root,
      ),
    );
  }
  parts.push(
    await record(rel, ['compact', rel, '--context-window', '4000', '--tokenizer', 'approx', '--dry-run'], root),
  );
  parts.push(await record(rel, ['inspect', rel, '--tokenizer', 'approx'], root));
  parts.push(await record(rel, ['inspect', rel, '--tokenizer', 'approx', '--json'], root));
  rmSync(store, { recursive: true, force: true });
  return parts.map((p) => p.split(store).join('<store>'));
}

mkdirSync(outDir, { recursive: true });
let n = 0;
for (const file of process.env.GOLDEN_QUICK && !process.env.GOLDEN_BATCH_ONLY ? inputs : []) {
  const rel = path.relative(root, file);
  writeFileSync(path.join(outDir, `${rel.replace(/[\\/]/g, '__')}.txt`), (await quick(rel)).join('\n'));
  n++;
}
for (const file of process.env.GOLDEN_BATCH_ONLY || process.env.GOLDEN_QUICK ? [] : inputs) {
  const rel = path.relative(root, file);
  const parts = [];
  for (const tok of ['approx', 'o200k_base']) {
    for (const t of ['150', '600', '3000']) {
      const base = ['compact', rel, '-t', t, '--tokenizer', tok];
      parts.push(await record(rel, base, root));
      parts.push(await record(rel, [...base, '--dry-run'], root));
      parts.push(await record(rel, [...base, '--dry-run', '--json'], root));
      parts.push(await record(rel, [...base, '--json', '-o', '/dev/null'], root));
      parts.push(await record(rel, [...base, '--check'], root));
      parts.push(await record(rel, [...base, '-k', '0', '--no-note', '--dry-run'], root));
    }
    parts.push(await record(rel, ['compact', rel, '--context-window', '4000', '--tokenizer', tok, '--dry-run'], root));
    parts.push(
      await record(
        rel,
        ['compact', rel, '--context-window', '4000', '--tokenizer', tok, '--json', '-o', '/dev/null'],
        root,
      ),
    );
    parts.push(await record(rel, ['inspect', rel, '--tokenizer', tok], root));
    parts.push(await record(rel, ['inspect', rel, '--tokenizer', tok, '--json'], root));
  }
  writeFileSync(path.join(outDir, `${rel.replace(/[\\/]/g, '__')}.txt`), parts.join('\n'));
  n++;
}
// Batches over the fixture folders, with reports and out-dirs.
for (const dir of ['fixtures', 'fixtures/multi', 'fixtures/claude-code']) {
  const work = mkdtempSync(path.join(tmpdir(), 'golden-'));
  cpSync(path.join(root, dir), path.join(work, 'in'), { recursive: true });
  const parts = [];
  for (const argv of [
    ['compact', 'in', '--check', '-t', '600', '--tokenizer', 'approx', '--jobs', '1'],
    ['compact', 'in', '--dry-run', '-t', '600', '--tokenizer', 'approx', '--jobs', '1'],
    ['compact', 'in', '--dry-run', '--json', '-t', '600', '--tokenizer', 'approx', '--jobs', '1'],
    ['compact', 'in', '--check', '--json', '-t', '600', '--tokenizer', 'approx', '--jobs', '1'],
    ['compact', 'in', '--out-dir', 'out', '--report', 'r.json', '-t', '600', '--tokenizer', 'approx', '--jobs', '2'],
    ['inspect', 'in', '--tokenizer', 'approx'],
  ]) {
    parts.push(await record(dir, argv, work));
  }
  try {
    parts.push(
      `--- r.json\n${readFileSync(path.join(work, 'r.json'), 'utf8').replace(/"seconds": [\d.]+/g, '"seconds": T')}`,
    );
    for (const f of files(path.join(work, 'out')))
      parts.push(`--- ${path.relative(work, f)}\n${readFileSync(f, 'utf8')}`);
  } catch (error) {
    parts.push(String(error));
  }
  writeFileSync(
    path.join(outDir, `batch-${dir.replace(/[\\/]/g, '__')}.txt`),
    parts.join('\n').split(work).join('<work>'),
  );
  rmSync(work, { recursive: true, force: true });
  n++;
}
console.log(`${n} golden files in ${outDir}`);
