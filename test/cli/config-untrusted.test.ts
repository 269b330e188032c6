import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { ROOT, tempDir } from '../helpers/cli.js';
import { runSwc } from '../helpers/run-in-process.js';
import { scaled } from '../helpers/scale.js';

/**
 * A settings file in a repository someone cloned is written by whoever wrote the repository. It may tune the
 * compaction; it may not send data where the user did not ask (a folder outside its own), quote another file back
 * through an error, crash the run, or hide behind something that is not a file so that a parent's settings apply.
 */

const SAMPLE = path.join(ROOT, 'fixtures/sample.jsonl');
const CONFIG = 'transcript-compact.config.json';
const SHOWN = `../${CONFIG}`;

/** A repository (a folder with .git) holding sample.jsonl in `sub/`, and files given by path. */
function repo(files: Record<string, unknown> = {}): { root: string; sub: string; outside: string } {
  const base = tempDir();
  const root = path.join(base, 'repo');
  mkdirSync(path.join(root, '.git'), { recursive: true });
  mkdirSync(path.join(root, 'sub'));
  cpSync(SAMPLE, path.join(root, 'sub/sample.jsonl'));
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), typeof content === 'string' ? content : JSON.stringify(content));
  }
  const outside = path.join(base, 'outside');
  mkdirSync(outside);
  return { root, sub: path.join(root, 'sub'), outside };
}

/** The one line a refused settings file prints, with the reason after the file's name. */
function reasonOf(stderr: string, shown = SHOWN): string | undefined {
  const escaped = shown.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^swc: error: ${escaped}: ([^\\n]*)\\n$`).exec(stderr)?.[1];
}

describe('a folder a settings file names', () => {
  const offloading = { target: 1000, strategy: 'offload', offloadOver: 100 };

  it.each([
    ['an absolute path outside the repository', (outside: string) => path.join(outside, 'store')],
    ['a path that climbs out with ..', () => '../../outside/store'],
  ])(
    'is refused as offloadDir when it is %s: --in-place leaves the transcript and writes nothing there',
    async (_, dir) => {
      const { root, sub, outside } = repo();
      writeFileSync(path.join(root, CONFIG), JSON.stringify({ ...offloading, offloadDir: dir(outside) }));
      const before = readFileSync(path.join(sub, 'sample.jsonl'));
      const r = await runSwc(['compact', 'sample.jsonl', '--in-place'], { cwd: sub });
      expect(r.status).toBe(2);
      expect(r.stdout).toBe('');
      expect(reasonOf(r.stderr)).toMatch(
        /^offloadDir .* is outside .*: a settings file keeps its folders inside its own folder; give --offload-dir on the command line to use it$/,
      );
      expect(readdirSync(outside)).toEqual([]);
      expect(readFileSync(path.join(sub, 'sample.jsonl'))).toEqual(before);
    },
  );

  it('is refused when a link inside the repository leads outside it', async () => {
    const { root, sub, outside } = repo();
    symlinkSync(outside, path.join(root, 'store'));
    writeFileSync(path.join(root, CONFIG), JSON.stringify({ ...offloading, offloadDir: 'store/results' }));
    const r = await runSwc(['compact', 'sample.jsonl', '--in-place'], { cwd: sub });
    expect(r.status).toBe(2);
    expect(reasonOf(r.stderr)).toMatch(/^offloadDir "store\/results" is outside /);
    expect(readdirSync(outside)).toEqual([]);
  });

  it('is refused as cacheDir the same way, whatever the run', async () => {
    for (const cacheDir of ['../../outside/cache', '/var/tmp/swc-cache']) {
      const { root, sub } = repo();
      writeFileSync(path.join(root, CONFIG), JSON.stringify({ target: 1000, strategy: 'summarize', cacheDir }));
      const r = await runSwc(['compact', 'sample.jsonl', '--dry-run'], { cwd: sub });
      expect(r.status).toBe(2);
      expect(reasonOf(r.stderr)).toBe(
        `cacheDir ${JSON.stringify(cacheDir)} is outside ${root}: a settings file keeps its folders inside its own folder; give --cache-dir on the command line to use it`,
      );
    }
  });

  it('is taken inside the folder the file is in, through a link that stays inside', async () => {
    const { root, sub } = repo();
    mkdirSync(path.join(root, 'real-store'));
    symlinkSync(path.join(root, 'real-store'), path.join(root, 'store'));
    writeFileSync(path.join(root, CONFIG), JSON.stringify({ ...offloading, offloadDir: `${root}/store` }));
    const r = await runSwc(['compact', 'sample.jsonl', '--in-place', '-q'], { cwd: sub });
    expect(r).toEqual({ status: 0, stdout: '', stderr: '' });
    expect(existsSync(path.join(root, 'real-store/.swc-store'))).toBe(true);
  });

  it('does not limit --offload-dir given on the command line', async () => {
    const { root, sub, outside } = repo();
    writeFileSync(path.join(root, CONFIG), JSON.stringify(offloading));
    const store = path.join(outside, 'store');
    const r = await runSwc(['compact', 'sample.jsonl', '--in-place', '-q', '--offload-dir', store], { cwd: sub });
    expect(r).toEqual({ status: 0, stdout: '', stderr: '' });
    expect(readFileSync(path.join(store, '.swc-store'), 'utf8')).toContain('offload-store');
  });
});

describe('a settings file that is not JSON', () => {
  it('names the file and the position, and quotes none of what it holds (a link to a secret)', async () => {
    const { root, sub, outside } = repo();
    const secret = path.join(outside, 'credentials');
    writeFileSync(secret, 'user=ci\ntoken=hunter2-very-secret\n');
    symlinkSync(secret, path.join(root, CONFIG));
    const r = await runSwc(['compact', 'sample.jsonl', '-t', '1000', '-o', 'out.jsonl'], { cwd: sub });
    expect(r).toEqual({ status: 2, stdout: '', stderr: `swc: error: ${SHOWN}:1:1: not valid JSON\n` });
  });

  it('gives the line and column of the first error, for any text after a valid beginning', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ minLength: 1, maxLength: 12 }), fc.nat({ max: 3 }), async (junk, lines) => {
        const head = `{\n${'  "target": 1000,\n'.repeat(lines)}  "note": null`;
        const text = `${head} ${junk.replace(/[\s,}]/g, 'x')}}`;
        const { root, sub } = repo({ [CONFIG]: text });
        const r = await runSwc(['compact', 'sample.jsonl', '-o', 'out.jsonl'], { cwd: sub });
        expect(r.stderr).toBe(`swc: error: ${SHOWN}:${lines + 2}:${'  "note": null'.length + 2}: not valid JSON\n`);
        expect(existsSync(path.join(root, 'sub/out.jsonl'))).toBe(false);
      }),
      { numRuns: scaled(15) },
    );
  });

  it('names the position in a package.json too', async () => {
    const { sub } = repo({ 'package.json': '{"name": "x",\n "version": secret}' });
    const r = await runSwc(['compact', 'sample.jsonl', '-t', '1000', '-o', 'out.jsonl'], { cwd: sub });
    expect(r.stderr).toBe('swc: error: ../package.json:2:13: not valid JSON\n');
  });
});

describe("keys named as an object's own methods", () => {
  const names = [
    'constructor',
    'toString',
    '__proto__',
    'hasOwnProperty',
    'valueOf',
    'isPrototypeOf',
    'propertyIsEnumerable',
    'toLocaleString',
    '__defineGetter__',
    '__lookupSetter__',
  ];

  it.each(names)('%s is an unknown key, one line, exit 2', async (key) => {
    const { sub } = repo({ [CONFIG]: `{"target": 1000, ${JSON.stringify(key)}: {"read": 1}}` });
    const r = await runSwc(['compact', 'sample.jsonl', '-o', 'out.jsonl'], { cwd: sub });
    expect(r.status).toBe(2);
    expect(reasonOf(r.stderr)).toMatch(
      new RegExp(`^unknown key ${JSON.stringify(key)} \\(keys: target, contextWindow`),
    );
  });

  it('any key the documentation does not list is refused in one line naming it', async () => {
    const docs = readFileSync(path.join(ROOT, 'docs/cli.md'), 'utf8');
    const table = docs.slice(docs.indexOf('| key | flag |'), docs.indexOf('\n\n', docs.indexOf('| key | flag |')));
    const known = new Set([...table.matchAll(/`([a-zA-Z]+)`/g)].map((m) => m[1]));
    expect(known).toContain('skipUnrecognized');
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.constantFrom(...names), fc.string({ maxLength: 8 })).filter((key) => !known.has(key)),
        async (key) => {
          const { sub } = repo({ [CONFIG]: `{${JSON.stringify(key)}: 1}` });
          const r = await runSwc(['compact', 'sample.jsonl', '-t', '1000', '-o', 'out.jsonl'], { cwd: sub });
          expect(r.status).toBe(2);
          expect(reasonOf(r.stderr)).toMatch(/^(unknown key |.* cannot be set in a settings file: )/);
        },
      ),
      { numRuns: scaled(25) },
    );
  });
});

describe('a settings file that is not a file', () => {
  it('is one line naming it when it is a link that loops', async () => {
    const { root, sub } = repo();
    symlinkSync(CONFIG, path.join(root, CONFIG));
    const r = await runSwc(['compact', 'sample.jsonl', '-t', '1000', '-o', 'out.jsonl'], { cwd: sub });
    expect(r).toEqual({
      status: 2,
      stdout: '',
      stderr: `swc: error: ${SHOWN}: not a settings file: a symbolic link that loops (remove it, or give --no-config)\n`,
    });
  });

  it.each([
    ['a link to nothing', (file: string) => symlinkSync('missing.json', file), 'a symbolic link to nothing'],
    ['a directory', (file: string) => mkdirSync(file), 'a directory'],
    ['a link to a device', (file: string) => symlinkSync('/dev/zero', file), 'a device'],
    ['a FIFO', (file: string) => execFileSync('mkfifo', [file]), 'a FIFO'],
    [
      'a link to a FIFO',
      (file: string) => {
        execFileSync('mkfifo', [`${file}.fifo`]);
        symlinkSync(`${path.basename(file)}.fifo`, file);
      },
      'a FIFO',
    ],
  ])("is refused when it is %s, rather than a parent's settings used", async (_, make, what) => {
    for (const name of [CONFIG, 'package.json']) {
      const { root, sub } = repo({ [CONFIG]: { target: 1500 } });
      make(path.join(sub, name));
      const r = await runSwc(['compact', 'sample.jsonl', '-o', 'out.jsonl'], { cwd: sub });
      expect(r).toEqual({
        status: 2,
        stdout: '',
        stderr: `swc: error: ${name}: not a settings file: ${what} (remove it, or give --no-config)\n`,
      });
      expect(existsSync(path.join(root, 'sub/out.jsonl'))).toBe(false);
    }
  });

  it('is refused past 8 MiB, which no settings file needs (a link to a log or a disk image)', async () => {
    const { root, sub } = repo({ [CONFIG]: { target: 1500 } });
    writeFileSync(path.join(root, 'big.json'), '');
    truncateSync(path.join(root, 'big.json'), 8 * 1024 * 1024 + 1);
    symlinkSync('../big.json', path.join(sub, CONFIG));
    const r = await runSwc(['compact', 'sample.jsonl', '-o', 'out.jsonl'], { cwd: sub });
    expect(r).toEqual({
      status: 2,
      stdout: '',
      stderr: `swc: error: ${CONFIG}: not a settings file: larger than 8 MiB\n`,
    });
  });

  it('is refused by name when --config names one', async () => {
    const { root, sub } = repo();
    execFileSync('mkfifo', [path.join(root, 'fifo.json')]);
    symlinkSync('loop.json', path.join(root, 'loop.json'));
    for (const [file, what] of [
      ['../fifo.json', 'a FIFO'],
      ['../loop.json', 'a symbolic link that loops'],
      ['..', 'a directory'],
    ]) {
      const r = await runSwc(['compact', 'sample.jsonl', '-t', '1000', '--config', file as string], { cwd: sub });
      expect(r).toEqual({
        status: 2,
        stdout: '',
        stderr: `swc: error: --config ${file}: not a settings file: ${what}\n`,
      });
    }
  });
});
