import { describe, expect, it } from '@jest/globals';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { HELP_EXAMPLES } from '../../src/cli/program.js';
import { expectSameBytes } from '../helpers/bytes.js';
import { ROOT, tempDir } from '../helpers/cli.js';
import { runSwc } from '../helpers/run-in-process.js';

/** Every example the help shows runs as written, on a project laid out as the examples assume. */

// A real agent session of ~45,000 tokens, so an 8k target compacts it.
const SAMPLE = path.join(ROOT, 'fixtures/real/claude-code/claude-reliability-python-to-rust-port.jsonl');

/** Splits an example as a POSIX shell would: words, with single quotes kept together. */
function words(line: string): string[] {
  return [...line.matchAll(/'([^']*)'|(\S+)/g)].map((m) => (m[1] ?? m[2]) as string);
}

function project(): string {
  const dir = tempDir();
  copyFileSync(SAMPLE, path.join(dir, 'log.jsonl'));
  writeFileSync(path.join(dir, 'log.jsonl.gz'), gzipSync(readFileSync(SAMPLE)));
  mkdirSync(path.join(dir, 'archive', '2026'), { recursive: true });
  copyFileSync(SAMPLE, path.join(dir, 'archive', 'a.jsonl'));
  copyFileSync(SAMPLE, path.join(dir, 'archive', '2026', 'b.jsonl'));
  return dir;
}

describe('the help examples', () => {
  it("are shown by each command's help", async () => {
    for (const command of ['compact', 'inspect', 'replay', 'restore'] as const) {
      const help = (await runSwc([command, '--help'], { cwd: os.tmpdir() })).stdout;
      expect(help).toContain('Examples:');
      for (const [line, what] of HELP_EXAMPLES[command]) {
        expect(help).toContain(`  # ${what}\n  ${line}\n`);
      }
    }
  });

  it.each(HELP_EXAMPLES.compact.map(([line]) => [line]))('%s runs without a usage error', async (line) => {
    const dir = project();
    const argv = words(line).slice(1);
    const r = await runSwc(argv, { cwd: dir });
    expect(r.stderr).not.toMatch(/error:/);
    // 0, or 1 for --check finding files to compact; 2 would be a mistake in the example.
    expect([0, 1]).toContain(r.status);
    const out = argv[argv.indexOf('-o') + 1];
    if (argv.includes('-o') && out !== undefined) {
      const written = readFileSync(path.join(dir, out));
      const text = out.endsWith('.gz') ? gunzipSync(written).toString('utf8') : written.toString('utf8');
      expect(text.length).toBeGreaterThan(0);
      expect(text.length).toBeLessThan(readFileSync(SAMPLE).length);
    }
    if (argv.includes('--backup-dir')) {
      expectSameBytes(readFileSync(path.join(dir, 'backup', 'a.jsonl')), readFileSync(SAMPLE));
      expectSameBytes(readFileSync(path.join(dir, 'backup', '2026', 'b.jsonl')), readFileSync(SAMPLE));
    }
  });

  it.each(HELP_EXAMPLES.replay.map(([line]) => [line]))('%s runs without a usage error', async (line) => {
    const r = await runSwc(words(line).slice(1), { cwd: project() });
    expect(r.stderr).toBe('');
    // 0, or 1 for a policy that fails the run; 2 would be a mistake in the example.
    expect([0, 1]).toContain(r.status);
    expect(r.stdout).toMatch(/^policy +compacts/m);
  });

  it('say the defaults the command has: the --check example lists a file from the share of the window it names', async () => {
    const examples = HELP_EXAMPLES.compact.filter(
      ([line, what]) =>
        line.includes('--context-window') && !line.includes('--compact-at') && /% of the window/.test(what),
    );
    expect(examples).toHaveLength(1);
    const [[line, what]] = examples as [[string, string]];
    const share = Number((/(\d+(?:\.\d+)?)% of the window/.exec(what) as RegExpExecArray)[1]) / 100;
    const dir = project();
    const argv = words(line).slice(1);
    const window = argv.indexOf('--context-window') + 1;
    const withWindow = (tokens: number): string[] => argv.map((word, k) => (k === window ? String(tokens) : word));
    // Each file's size as the thresholds count it, from a window so large that nothing is compacted.
    const measured = await runSwc([...withWindow(100_000_000), '--report', 'r.json'], { cwd: dir });
    expect(measured.status).toBe(0);
    const { files } = JSON.parse(readFileSync(path.join(dir, 'r.json'), 'utf8')) as {
      files: Array<{ tokensBefore: number }>;
    };
    const size = Math.max(...files.map((f) => f.tokensBefore));
    // A window the files fill to 2 points over the stated share makes the example exit 1; 2 points under, 0.
    expect((await runSwc(withWindow(Math.floor(size / (share + 0.02))), { cwd: dir })).status).toBe(1);
    expect((await runSwc(withWindow(Math.ceil(size / (share - 0.02))), { cwd: dir })).status).toBe(0);
  });

  it.each(HELP_EXAMPLES.inspect.map(([line]) => [line]))('%s runs without a usage error', async (line) => {
    const argv = words(line).slice(1);
    const r = await runSwc(argv, { cwd: project() });
    expect(r.stderr).not.toMatch(/error:/);
    expect([0, 1]).toContain(r.status);
    // -q prints the problems and the total only, so only the total when there are none (exit 0); the full view always
    // prints.
    const problems = r.stdout.split('\n').filter((l) => l !== '' && !l.startsWith('total: '));
    if (argv.includes('-q')) expect(problems.length === 0).toBe(r.status === 0);
    else expect(r.stdout).toContain('inspect: ');
  });

  it('restore gives back the file an offloading run wrote, byte for byte', async () => {
    const dir = project();
    const offload = await runSwc(
      [
        'compact',
        'log.jsonl',
        '-t',
        '8k',
        '--strategy',
        'offload',
        '--offload-dir',
        'store',
        '--offload-over',
        '200',
        '-o',
        'small.jsonl',
      ],
      { cwd: dir },
    );
    expect(offload.status).toBe(0);
    expect(readFileSync(path.join(dir, 'small.jsonl')).equals(readFileSync(SAMPLE))).toBe(false);
    const [[line]] = HELP_EXAMPLES.restore as [[string, string]];
    const r = await runSwc(words(line).slice(1), { cwd: dir });
    expect(r.stderr).not.toMatch(/error:/);
    expect(r.status).toBe(0);
    expect(existsSync(path.join(dir, 'full.jsonl'))).toBe(true);
    expectSameBytes(readFileSync(path.join(dir, 'full.jsonl')), readFileSync(SAMPLE));
  });
});
