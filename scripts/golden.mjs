#!/usr/bin/env node
// Records what every command prints and writes for every fixture, so a refactor can prove it changed no byte:
//   node scripts/golden.mjs <dist-dir> <out-dir> [<root>]        then: diff -r before/ after/
// <dist-dir> is the build whose CLI runs (its cli/program.js, in process); <root> holds the fixtures/ read (default:
// this repository), so two builds can be run on the same inputs. Each fixture gets a folder, each command one file
// in it (the command line, exit code, stdout, stderr, and the files it wrote), so `diff -rq` names the commands that
// differ. Targets are fractions of each file's size (its largest conversation, counted approx), written to
// sizes.json; GOLDEN_SIZES=<old-out>/sizes.json reuses another run's sizes, so a changed count cannot move them.
// GOLDEN_QUICK=1: one tokenizer and fewer targets, every strategy and command still. GOLDEN_BATCH_ONLY=1: only the
// batches. GOLDEN_ONLY=<regex>: only the fixtures whose path matches (and no batches). GOLDEN_JOBS=<n> (default 2):
// processes recording fixtures side by side (each runs its commands one at a time). GOLDEN_TIMES=1: each command's
// time on stderr. Deterministic: run times, temporary folders and the root are blanked; summaries are `head -c 300`.
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath, pathToFileURL } from 'node:url';

const [distDir, outDir, rootArg] = process.argv.slice(2);
if (!distDir || !outDir) throw new Error('usage: golden.mjs <dist-dir> <out-dir> [<root>]');
const { run } = await import(pathToFileURL(path.resolve(distDir, 'cli/program.js')).href);
const root = path.resolve(rootArg ?? path.join(path.dirname(fileURLToPath(import.meta.url)), '..'));
const QUICK = Boolean(process.env.GOLDEN_QUICK);
const ONLY = process.env.GOLDEN_ONLY ? new RegExp(process.env.GOLDEN_ONLY) : null;
/** A summarizer that answers the same for the same prompt, and no cache that could answer instead of it. */
const SUMMARIZE = ['--summarize-command', 'head -c 300', '--no-cache'];
/** Fixtures whose conversations are found only with a flag (each error says which): compact, inspect and replay get it. */
const READ_WITH = {
  'fixtures/inspect/records-dialog.jsonl': ['--conversation-key', 'dialog'],
  'fixtures/multi/dialog.json': ['--conversation-key', 'dialog'],
  'fixtures/real/haystack/haystack-experimental-saved_state-answer_joiner.json': [
    '--conversation-path',
    '/input_data/serialized_data/gpt-4o/messages',
  ],
};
/** A command line with the flags its fixture is read with. */
const readWith = (argv, rel) =>
  ['compact', 'inspect', 'replay'].includes(argv[0]) ? [...argv, ...(READ_WITH[rel] ?? [])] : argv;
/** The CLI sees no colour and no model endpoint; PATH only so that the summarize command's shell finds `head`. */
const ENV = { NO_COLOR: '1', PATH: process.env.PATH ?? '/usr/bin:/bin' };

/** The transcripts under a folder, sorted. */
function transcripts(dir) {
  return readdirSync(dir, { recursive: true })
    .map((p) => path.join(dir, p))
    .filter((p) => statSync(p).isFile() && /\.(jsonl?|ndjson)$/.test(p))
    .sort();
}

/** Every file under a path (dot files too), sorted, named from `base`, with its bytes as text: what a run wrote. */
function tree(dir, base = dir) {
  let names;
  try {
    if (statSync(dir).isFile()) return `--- ${path.relative(base, dir)}\n${readFileSync(dir, 'utf8')}\n`;
    names = readdirSync(dir, { recursive: true }).sort();
  } catch (error) {
    return `--- ${path.relative(base, dir)}: ${error.code}\n`;
  }
  return names
    .map((name) => path.join(dir, name))
    .filter((p) => statSync(p).isFile())
    .map((p) => `--- ${path.relative(base, p)}\n${readFileSync(p, 'utf8')}\n`)
    .join('');
}

function memory() {
  const chunks = [];
  return {
    write: (c) => (chunks.push(typeof c === 'string' ? c : Buffer.from(c).toString('utf8')), true),
    text: () => chunks.join(''),
  };
}

/** What changes from run to run and machine to machine: times, temporary folders, the root. */
function blank(text, work) {
  let s = text;
  if (work) s = s.split(work).join('<work>');
  return s
    .split(root)
    .join('<root>')
    .replace(/golden-[a-z]+-[A-Za-z0-9]{6}/g, 'golden-tmp')
    .replace(/\d+\.\d\d s\b/g, 'T s')
    .replace(/"seconds": [\d.e-]+/g, '"seconds": T');
}

/** Runs one command in process; returns its exit code, stdout and stderr. */
async function swc(argv, cwd) {
  const stdout = memory();
  const stderr = memory();
  const code = await run(argv, { stdout, stderr, stdin: Readable.from([]), env: ENV, cwd });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

function show(argv, { code, stdout, stderr }) {
  const quoted = argv.map((a) => (/^[\w.,/=:<>-]+$/.test(a) ? a : `'${a}'`)).join(' ');
  return `$ swc ${quoted}\nexit ${code}\n--- stdout\n${stdout}\n--- stderr\n${stderr}\n`;
}

/** A short file name for a command line (the file itself holds the whole line). */
function nameOf(line, work) {
  return line
    .split(SUMMARIZE.join(' '))
    .join('cmd')
    .split(work ?? '\0')
    .join('')
    .replace(/--tokenizer |--min-tokens 20 |--offload-over 40 |--offload-dir \S+ /g, '')
    .replace(/--strategy /g, 's=')
    .replace(/--context-window /g, 'cw=')
    .replace(/[^\w.,=-]+/g, '_')
    .slice(0, 100);
}

/** One folder of golden files, one file per command, numbered in the order they ran. */
function recorder(dir, rel) {
  mkdirSync(dir, { recursive: true });
  let n = 0;
  return {
    /** Runs a command and records it, with whatever `extra` adds (files written); returns the result. */
    async add(given, { cwd = root, work, skip = 0, extra } = {}) {
      const argv = readWith(given, rel);
      const t0 = Date.now();
      const result = await swc(argv, cwd);
      if (process.env.GOLDEN_TIMES) console.error(`${Date.now() - t0} ms  ${argv.join(' ')}`);
      const more = extra ? await extra(result) : '';
      const slug = nameOf([argv[0], ...argv.slice(Math.max(1, skip))].join(' '), work);
      n++;
      writeFileSync(
        path.join(dir, `${String(n).padStart(3, '0')}-${slug}.txt`),
        blank(show(argv, result) + more, work),
      );
      return result;
    },
  };
}

/** A whole number with two significant digits: targets that a small change of count does not move. */
const round2 = (x) => Math.max(1, Math.round(Number(x.toPrecision(2))));

/**
 * A file's size for choosing targets: the tokens of its largest conversation, counted approx (null when it cannot
 * be compacted at all: the broken fixtures).
 */
async function sizeOf(rel) {
  const argv = readWith(['compact', rel, '-t', '1000', '--tokenizer', 'approx', '--dry-run', '--json'], rel);
  const { code, stdout } = await swc(argv, root);
  if (code === 2) return null;
  try {
    const plan = JSON.parse(stdout);
    const counts = (plan.conversations ?? [plan]).map((c) => c.tokensBefore);
    return Math.max(...counts);
  } catch {
    return null;
  }
}

/** Targets and window for a size: a tenth, two fifths and four fifths of it; the window half of it. */
function budgets(size) {
  if (size === null) return { targets: ['600'], window: '4000' };
  const targets = [0.1, 0.4, 0.8].map((f) => String(round2(f * size)));
  return { targets: QUICK ? targets.slice(0, 2) : targets, window: String(round2(size / 2)) };
}

/** Plain compaction and every view of it, per tokenizer: transcript, plan, diff, stat, check, inspect. */
async function recordViews(rec, rel, tok, { targets, window }) {
  const o = { skip: 2 };
  for (const t of targets) {
    const base = ['compact', rel, '-t', t, '--tokenizer', tok];
    await rec.add(base, o);
    await rec.add([...base, '--json', '-o', '/dev/null'], o);
    await rec.add([...base, '--dry-run'], o);
    await rec.add([...base, '--dry-run', '--json'], o);
    await rec.add([...base, '--dry-run', '--stat'], o);
    await rec.add([...base, '--check'], o);
    if (!QUICK) await rec.add([...base, '-k', '0', '--no-note', '--json'], o);
  }
  const byWindow = ['compact', rel, '--context-window', window, '--tokenizer', tok];
  await rec.add([...byWindow, '--json'], o);
  await rec.add([...byWindow, '--dry-run'], o);
  await rec.add(['inspect', rel, '--tokenizer', tok], o);
  await rec.add(['inspect', rel, '--tokenizer', tok, '--json'], o);
}

/** prune and summarize, alone and in chains: the transcript with its plan (--json), and the dry runs. */
async function recordStrategies(rec, rel, t) {
  const o = { skip: 2 };
  const base = ['compact', rel, '-t', t, '--tokenizer', 'approx'];
  await rec.add([...base, '--strategy', 'prune', '--min-tokens', '20', '--json'], o);
  await rec.add([...base, '--strategy', 'prune,window', '--min-tokens', '20', '--json'], o);
  await rec.add([...base, '--strategy', 'prune,window', '--min-tokens', '20', '--dry-run'], o);
  await rec.add([...base, '--strategy', 'window,prune', '--min-tokens', '20', '--json'], o);
  await rec.add([...base, '--strategy', 'summarize', ...SUMMARIZE, '--json'], o);
  await rec.add([...base, '--strategy', 'summarize', '--summary-tokens', '20', '--dry-run'], o);
  await rec.add([...base, '--strategy', 'summarize', '--summary-tokens', '20', '--dry-run', '--json'], o);
  if (QUICK) return;
  await rec.add([...base, '--strategy', 'prune,summarize', '--min-tokens', '20', ...SUMMARIZE, '--json'], o);
  await rec.add([...base, '--strategy', 'summarize,window', ...SUMMARIZE, '--dry-run', '--stat'], o);
}

/**
 * Offloading into a store in a temporary folder: the run, the transcript and store it wrote (names and bytes), then
 * restore of that transcript, and whether it gave back the input byte for byte.
 */
async function recordOffload(rec, rel, t, strategy) {
  const work = mkdtempSync(path.join(tmpdir(), 'golden-work-'));
  const out = path.join(work, 'out', path.basename(rel));
  const store = path.join(work, 'store');
  mkdirSync(path.dirname(out));
  const o = { skip: 2, work };
  const base = ['compact', rel, '-t', t, '--tokenizer', 'approx', '--strategy', strategy, '--offload-over', '40'];
  await rec.add([...base, '--offload-dir', store, '--dry-run', '--json'], o);
  await rec.add([...base, '--offload-dir', store, '-o', out, '--json'], { ...o, extra: () => tree(work) });
  const input = readFileSync(path.join(root, rel), 'utf8');
  const same = (r) => `--- restored equals the input: ${r.code === 0 && r.stdout === input}\n`;
  await rec.add(['restore', out, '--offload-dir', store], { work, extra: same });
  if (!QUICK) await rec.add(['restore', out], { work, extra: same });
  rmSync(work, { recursive: true, force: true });
}

/** `swc replay` under every policy that may replay: summaries from the command, and (full run) assumed ones. */
async function recordReplay(rec, rel, window) {
  const policies = ['none', 'window', 'prune', 'prune,window', 'summarize'].flatMap((p) => ['--strategy', p]);
  const base = ['replay', rel, '--context-window', window, '--tokenizer', 'approx', ...policies, '--min-tokens', '20'];
  await rec.add([...base, ...SUMMARIZE, '--json'], { skip: 2 });
  if (!QUICK) await rec.add([...base, '--dry-run', '--summary-tokens', '20', '--json'], { skip: 2 });
}

/** A file no command can read (fixtures/bad): each command's error once. */
async function recordBroken(rec, rel) {
  const o = { skip: 2 };
  const base = ['compact', rel, '-t', '600', '--tokenizer', 'approx'];
  for (const more of [[], ['--json'], ['--dry-run'], ['--dry-run', '--json'], ['--check']])
    await rec.add([...base, ...more], o);
  await rec.add(['inspect', rel, '--tokenizer', 'approx'], o);
  await rec.add(['inspect', rel, '--tokenizer', 'approx', '--json'], o);
  await rec.add(['replay', rel, '--context-window', '4000', '--tokenizer', 'approx', '--json'], o);
  await rec.add(['restore', rel], o);
}

async function recordFile(rel, size) {
  const rec = recorder(path.join(outDir, rel.replace(/[\\/]/g, '__')), rel);
  if (size === null) return recordBroken(rec, rel);
  const b = budgets(size);
  for (const tok of QUICK ? ['approx'] : ['approx', 'o200k_base']) await recordViews(rec, rel, tok, b);
  for (const t of b.targets) await recordStrategies(rec, rel, t);
  for (const t of b.targets) await recordOffload(rec, rel, t, 'offload,window');
  if (!QUICK) await recordOffload(rec, rel, b.targets[0], 'offload');
  await recordReplay(rec, rel, b.window);
}

/** Batches over a fixture folder: check, dry runs, stat, JSON, out-dirs with reports and a store, inspect, replay. */
async function recordBatch(dir) {
  const work = mkdtempSync(path.join(tmpdir(), 'golden-batch-'));
  cpSync(path.join(root, dir), path.join(work, 'in'), { recursive: true });
  const rec = recorder(path.join(outDir, `batch-${dir.replace(/[\\/]/g, '__')}`));
  const o = { cwd: work, work };
  const base = ['compact', 'in', '-t', '600', '--tokenizer', 'approx'];
  for (const more of [
    ['--check'],
    ['--check', '--json'],
    ['--dry-run'],
    ['--dry-run', '--stat'],
    ['--dry-run', '--json'],
  ])
    await rec.add([...base, ...more, '--jobs', '1'], o);
  await rec.add([...base, '--out-dir', 'out', '--report', 'r.json', '--jobs', '2'], {
    ...o,
    extra: () => tree(path.join(work, 'out'), work) + tree(path.join(work, 'r.json'), work),
  });
  const chain = ['--strategy', 'prune,window', '--min-tokens', '20', '--stat'];
  await rec.add([...base, ...chain, '--out-dir', 'pruned', '--jobs', '2'], {
    ...o,
    extra: () => tree(path.join(work, 'pruned'), work),
  });
  const offload = ['--strategy', 'offload,window', '--offload-over', '40', '--offload-dir', 'store'];
  await rec.add([...base, ...offload, '--out-dir', 'offloaded', '--jobs', '2'], {
    ...o,
    extra: () => tree(path.join(work, 'offloaded'), work) + tree(path.join(work, 'store'), work),
  });
  await rec.add(['inspect', 'in', '--tokenizer', 'approx'], o);
  await rec.add(['inspect', 'in', '--tokenizer', 'approx', '--json'], o);
  await rec.add(['replay', 'in', '--context-window', '4000', '--tokenizer', 'approx', '--json'], o);
  rmSync(work, { recursive: true, force: true });
}

/** Runs this script once per shard, in child processes, and waits for all of them. */
function shards(jobs) {
  const children = Array.from({ length: jobs }, (_, i) =>
    spawn(process.execPath, process.argv.slice(1), {
      env: { ...process.env, GOLDEN_SHARD: `${i}/${jobs}` },
      stdio: ['ignore', 'ignore', 'inherit'],
    }),
  );
  return Promise.all(
    children.map(
      (child, i) =>
        new Promise((resolve, reject) =>
          child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`shard ${i} exited with ${code}`)))),
        ),
    ),
  );
}

/** This shard's fixtures, each recorded; returns the sizes measured. */
async function recordFiles(shard, sizes) {
  const [index, count] = shard.split('/').map(Number);
  const measured = {};
  const files = transcripts(path.join(root, 'fixtures'))
    .map((file) => path.relative(root, file))
    .filter((rel) => !ONLY || ONLY.test(rel));
  for (const [i, rel] of files.entries()) {
    if (i % count !== index) continue;
    measured[rel] = rel in sizes ? sizes[rel] : await sizeOf(rel);
    await recordFile(rel, measured[rel]);
    console.error(`${rel}: ${Math.round((Date.now() - started) / 1000)} s`);
  }
  return measured;
}

mkdirSync(outDir, { recursive: true });
const started = Date.now();
const sizes = process.env.GOLDEN_SIZES ? JSON.parse(readFileSync(process.env.GOLDEN_SIZES, 'utf8')) : {};
const shard = process.env.GOLDEN_SHARD;
if (shard) {
  // A shard records its part of the fixtures and leaves its sizes for the parent to merge.
  const measured = await recordFiles(shard, sizes);
  writeFileSync(path.join(outDir, `.sizes-${shard.replace('/', '-of-')}.json`), JSON.stringify(measured));
} else {
  const jobs = Math.max(1, Number(process.env.GOLDEN_JOBS ?? 2));
  const files = process.env.GOLDEN_BATCH_ONLY ? Promise.resolve() : shards(jobs);
  for (const dir of ONLY ? [] : ['fixtures', 'fixtures/multi', 'fixtures/claude-code']) await recordBatch(dir);
  await files;
  const all = { ...sizes };
  for (const name of readdirSync(outDir).filter((f) => f.startsWith('.sizes-'))) {
    Object.assign(all, JSON.parse(readFileSync(path.join(outDir, name), 'utf8')));
    rmSync(path.join(outDir, name));
  }
  const sorted = Object.fromEntries(Object.entries(all).sort(([a], [b]) => (a < b ? -1 : 1)));
  if (!process.env.GOLDEN_BATCH_ONLY)
    writeFileSync(path.join(outDir, 'sizes.json'), `${JSON.stringify(sorted, null, 2)}\n`);
  console.log(`golden files in ${outDir} (${Math.round((Date.now() - started) / 1000)} s)`);
}
