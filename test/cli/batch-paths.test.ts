/**
 * Every output of a batch run names a file the way the command line named it: a file as typed, a file found in a
 * folder as the folder was typed joined with its path inside it, a file a pattern matched in the pattern's own form.
 * Relative stays relative, absolute stays absolute, whatever the working directory: the --check list, the --stat
 * lines, the dry run's header, the report's `path` and `written`, the plan's `file`, the result and error lines, an
 * unreadable folder and a left-out offload store.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { expandHooks, nameUnder } from '../../src/io/expand.js';
import { tempDir } from '../helpers/cli.js';
import { runSwc } from '../helpers/run-in-process.js';

const APPROX = ['--tokenizer', 'approx', '-j', '1', '-t', '300'];

/** An OpenAI-chat JSONL transcript of `turns` long turns: 8 turns need compaction at -t 300, 1 does not. */
function transcript(turns: number): string {
  const messages: object[] = [{ role: 'system', content: 'You are terse.' }];
  for (let t = 0; t < turns; t++) {
    messages.push({ role: 'user', content: `question ${t}: ${'what about this '.repeat(30)}` });
    messages.push({ role: 'assistant', content: `answer ${t}: ${'it is so '.repeat(30)}` });
  }
  return `${messages.map((m) => JSON.stringify(m)).join('\n')}\n`;
}

/**
 * root/work/arch/{a/big.jsonl (compacts), small.jsonl (unchanged), bad.json (broken)} and an empty
 * root/elsewhere/deep to run from.
 */
function layout(): { root: string; work: string; arch: string; deep: string } {
  const root = tempDir();
  const arch = path.join(root, 'work', 'arch');
  mkdirSync(path.join(arch, 'a'), { recursive: true });
  writeFileSync(path.join(arch, 'a', 'big.jsonl'), transcript(8));
  writeFileSync(path.join(arch, 'small.jsonl'), transcript(1));
  writeFileSync(path.join(arch, 'bad.json'), '{"messages": [');
  const deep = path.join(root, 'elsewhere', 'deep');
  mkdirSync(deep, { recursive: true });
  return { root, work: path.join(root, 'work'), arch, deep };
}

interface Report {
  files: Array<{ path: string; status: string; written: string | null; plan?: { file: string } | null }>;
}

function readReport(file: string): Report {
  return JSON.parse(readFileSync(file, 'utf8')) as Report;
}

/** What each output called the compacted file (a/big.jsonl), the unchanged one and the broken one. */
interface Names {
  readonly big: string[];
  readonly small: string[];
  readonly bad: string[];
  /** The report's `written` of the big and the small file under --out-dir. */
  readonly written: string[];
}

/**
 * The names a --check, a --dry-run --stat --verbose, a --dry-run, an --out-dir and (last, since it rewrites the
 * tree) an --in-place run give the files: the check list, the stat rows, the diff's header, the result and error
 * lines, and every report's `path`, `written` and plan `file`.
 */
async function namesIn(cwd: string, inputs: readonly string[], outDir: string): Promise<Names> {
  const names: Names = { big: [], small: [], bad: [], written: [] };
  const reportFile = path.join(tempDir(), 'r.json');
  const report = (): Report['files'] => readReport(reportFile).files;

  const check = await runSwc(['compact', ...inputs, '--check', ...APPROX, '--report', reportFile], { cwd });
  expect(check.status).toBe(2);
  names.big.push(...check.stdout.trimEnd().split('\n'));
  names.bad.push(/^swc: (.*?)(?::\d+)+: invalid JSON/m.exec(check.stderr)?.[1] ?? '(no error line)');
  const checked = report();
  expect(checked.map((f) => f.status)).toEqual(['compacted', 'failed', 'unchanged']);
  names.big.push(checked[0]?.path as string);
  names.bad.push(checked[1]?.path as string);
  names.small.push(checked[2]?.path as string);

  const stat = await runSwc(
    ['compact', ...inputs, '--dry-run', '--stat', '--verbose', ...APPROX, '--report', reportFile],
    { cwd },
  );
  const rows = stat.stdout.trimEnd().split('\n').slice(0, -1);
  expect(rows).toHaveLength(2);
  names.big.push((rows[0] as string).split(/\s{2,}/)[0] as string);
  names.small.push((rows[1] as string).split(/\s{2,}/)[0] as string);
  const planned = report();
  names.big.push(planned[0]?.path as string, planned[0]?.plan?.file as string);
  names.small.push(planned[2]?.path as string, planned[2]?.plan?.file as string);

  const diff = await runSwc(['compact', ...inputs, '--dry-run', ...APPROX], { cwd });
  names.big.push(/^dry run: (.*)$/m.exec(diff.stdout)?.[1] ?? '(no header)');

  const out = await runSwc(['compact', ...inputs, '--out-dir', outDir, ...APPROX, '--report', reportFile], { cwd });
  names.big.push(/^swc: (.*): [\d,]+ → [\d,]+ tokens/m.exec(out.stderr)?.[1] ?? '(no result line)');
  const mirrored = report();
  names.written.push(mirrored[0]?.written as string, mirrored[2]?.written as string);

  const inPlace = await runSwc(['compact', ...inputs, '--in-place', ...APPROX, '--report', reportFile], { cwd });
  names.big.push(/^swc: (.*): [\d,]+ → [\d,]+ tokens/m.exec(inPlace.stderr)?.[1] ?? '(no result line)');
  const rewritten = report();
  names.big.push(rewritten[0]?.path as string, rewritten[0]?.written as string);
  return names;
}

/**
 * What every output must have said, when the files are named from `prefix` and the out-dir from `outPrefix`: the
 * big file 10 times (check list, 5 report fields, stat row, diff header, 2 result lines), the small one 4 times
 * (3 report fields, stat row), the broken one twice (error line, report).
 */
function expected(prefix: string, outPrefix: string): Names {
  return {
    big: Array(10).fill(`${prefix}a/big.jsonl`),
    small: Array(4).fill(`${prefix}small.jsonl`),
    bad: Array(2).fill(`${prefix}bad.json`),
    written: [`${outPrefix}a/big.jsonl`, `${outPrefix}small.jsonl`],
  };
}

describe('names in batch outputs', () => {
  it('names the files of a folder given as an absolute path absolutely, from any working directory', async () => {
    for (const from of ['deep', 'parent'] as const) {
      const { arch, deep, root } = layout();
      const names = await namesIn(from === 'deep' ? deep : path.dirname(arch), [arch], path.join(root, 'out'));
      expect(names).toEqual(expected(`${arch}/`, `${root}/out/`));
    }
  });

  it('names the files of a folder given relatively in the form it was typed: dir, dir/, ./dir, ../../dir, .', async () => {
    const cases: Array<[(l: ReturnType<typeof layout>) => string, string, string, string, string]> = [
      // [working directory, the folder as typed, the prefix its files get, the out-dir, its prefix]
      [(l) => l.work, 'arch', 'arch/', 'out', 'out/'],
      [(l) => l.work, 'arch/', 'arch/', 'out/', 'out/'],
      [(l) => l.work, './arch', './arch/', './out', './out/'],
      [(l) => l.work, './arch/', './arch/', 'out', 'out/'],
      [(l) => l.deep, '../../work/arch', '../../work/arch/', 'out', 'out/'],
      [(l) => l.arch, '.', '', '../out', '../out/'],
    ];
    for (const [cwdOf, typed, prefix, outDir, outPrefix] of cases) {
      const names = await namesIn(cwdOf(layout()), [typed], outDir);
      expect({ typed, names }).toEqual({ typed, names: expected(prefix, outPrefix) });
    }
  });

  it('names files named outright exactly as typed, absolute or relative', async () => {
    const forms: Array<[(l: ReturnType<typeof layout>) => string, (l: ReturnType<typeof layout>) => string]> = [
      // [working directory, the folder the files are typed from]
      [(l) => l.deep, (l) => `${l.arch}/`],
      [(l) => l.deep, () => '../../work/arch/'],
      [(l) => l.work, () => './arch/'],
    ];
    for (const [cwdOf, prefixOf] of forms) {
      const l = layout();
      const prefix = prefixOf(l);
      const names = await namesIn(
        cwdOf(l),
        [`${prefix}a/big.jsonl`, `${prefix}bad.json`, `${prefix}small.jsonl`],
        path.join(l.root, 'out'),
      );
      expect({ prefix, names }).toEqual({ prefix, names: expected(prefix, `${l.root}/out/`) });
    }
  });

  it("names the files a pattern matched in the pattern's own form", async () => {
    const cases: Array<[(l: ReturnType<typeof layout>) => string, (l: ReturnType<typeof layout>) => string, string]> = [
      [(l) => l.work, () => 'arch', 'arch/'],
      [(l) => l.work, () => './arch', './arch/'],
      [(l) => l.deep, (l) => l.arch, ''],
      [(l) => l.deep, () => '../../work/arch', '../../work/arch/'],
      [(l) => l.arch, () => '.', ''],
    ];
    for (const [cwdOf, folderOf, given] of cases) {
      const l = layout();
      const folder = folderOf(l);
      const prefix = given === '' && folder !== '.' ? `${folder}/` : given;
      const names = await namesIn(cwdOf(l), [`${folder}/**/*.json*`], path.join(l.root, 'out'));
      expect({ folder, names }).toEqual({ folder, names: expected(prefix, `${l.root}/out/`) });
    }
  });

  it('names a one-file --check and its plan as typed', async () => {
    const { arch, deep } = layout();
    const file = path.join(arch, 'a/big.jsonl');
    const check = await runSwc(['compact', file, '--check', ...APPROX], { cwd: deep });
    expect(check.status).toBe(1);
    expect(check.stdout).toBe(`${file}\n`);
    expect(check.stderr).toMatch(new RegExp(`^swc: ${file}: [\\d,]+ → [\\d,]+ tokens`));
    const plan = JSON.parse(
      (await runSwc(['compact', file, '--dry-run', '--json', ...APPROX], { cwd: deep })).stdout,
    ) as { file: string };
    expect(plan.file).toBe(file);
  });
});

afterEach(() => {
  delete expandHooks.readdirError;
});

describe('names of folders a search met', () => {
  it('names an unreadable folder and a left-out offload store from the folder as typed', async () => {
    const { arch, deep } = layout();
    mkdirSync(path.join(arch, 'locked'));
    writeFileSync(path.join(arch, 'locked', 'x.jsonl'), transcript(1));
    mkdirSync(path.join(arch, 'store'));
    writeFileSync(path.join(arch, 'store', '.swc-store'), '{"swc":"offload-store","version":2}\n');
    writeFileSync(path.join(arch, 'store', 'r.json'), '{}\n');
    expandHooks.readdirError = (dir) =>
      path.basename(dir) === 'locked'
        ? Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' })
        : undefined;
    for (const [typed, prefix] of [
      [arch, `${arch}/`],
      [path.relative(deep, arch), `${path.relative(deep, arch)}/`],
    ] as const) {
      const r = await runSwc(['compact', typed, '--check', ...APPROX], { cwd: deep });
      expect(r.status).toBe(2);
      expect(r.stderr).toContain(
        `swc: left out 1 file of the offload store ${prefix}store (its results and records are not transcripts)\n`,
      );
      expect(r.stderr).toContain(
        `swc: ${prefix}locked/: cannot read this folder: permission denied; the files in it were not searched\n`,
      );
    }
  });
});

describe('nameUnder', () => {
  it.each([
    ['archive', 'a/x.jsonl', 'archive/a/x.jsonl'],
    ['archive/', 'a/x.jsonl', 'archive/a/x.jsonl'],
    ['archive//', 'x.jsonl', 'archive/x.jsonl'],
    ['./archive', 'x.jsonl', './archive/x.jsonl'],
    ['.', 'x.jsonl', 'x.jsonl'],
    ['./', 'x.jsonl', 'x.jsonl'],
    ['..', 'x.jsonl', '../x.jsonl'],
    ['/', 'data/x.jsonl', '/data/x.jsonl'],
    ['/data/archive/', 'x.jsonl', '/data/archive/x.jsonl'],
    ['archive', '', 'archive'],
  ])('names %s + %s as %s', (typed, rest, expected) => {
    expect(nameUnder(typed, rest)).toBe(expected);
  });
});
