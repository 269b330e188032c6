/**
 * Overviews of many files: `--dry-run --stat` (one line per file and a total), a plain batch dry run that shows only
 * files that would change or miss their target unless --verbose.
 */
import { describe, expect, it } from '@jest/globals';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, tempDir } from '../helpers/cli.js';
import { runSwc } from '../helpers/run-in-process.js';

const APPROX = ['--tokenizer', 'approx'];

/** A folder: the sample (compacted at 2,000), a one-line chat (unchanged), a file of three conversations, a broken file. */
function folder(): string {
  const dir = tempDir([path.join(ROOT, 'fixtures/sample.jsonl'), path.join(ROOT, 'fixtures/multi/records.json')]);
  writeFileSync(path.join(dir, 'hello.jsonl'), '{"role": "user", "content": "Hello!"}\n');
  writeFileSync(path.join(dir, 'broken.json'), '{"messages": [');
  return dir;
}

describe('swc compact --dry-run --stat', () => {
  it('prints one aligned line per file that would change or misses its target, and a total', async () => {
    const r = await runSwc(['compact', '.', '-t', '50', '--dry-run', '--stat', ...APPROX], { cwd: folder() });
    expect(r.status).toBe(2);
    expect(r.stdout).toBe(
      [
        'records.json    175 →   138 tokens  −21%   −8 messages  forgets 0  target met in 1 of 3',
        'sample.jsonl  6,609 → 1,798 tokens  −73%  −58 messages  forgets 0  target not met',
        '4 files, 2 would change, 1 unchanged (1 not shown), 1 failed: 6,787 → 1,939 tokens (−71%, approx), −66 messages; target met in 2 of 5 conversations',
        '',
      ].join('\n'),
    );
    expect(r.stderr).toMatch(/^swc: broken\.json:1:15: /);
  });

  it('shows files that would not change with --verbose', async () => {
    const r = await runSwc(['compact', '.', '-t', '50', '--dry-run', '--stat', '--verbose', ...APPROX], {
      cwd: folder(),
    });
    expect(r.stdout.split('\n')[0]).toBe(
      'hello.jsonl       3 →     3 tokens    0%     unchanged             target met',
    );
    expect(r.stdout).toContain('4 files, 2 would change, 1 unchanged, 1 failed: ');
  });

  it('gives the same figures as the batch report', async () => {
    const dir = folder();
    const stat = await runSwc(['compact', '.', '-t', '2000', '--dry-run', '--stat', ...APPROX], { cwd: dir });
    const report = JSON.parse(
      (await runSwc(['compact', '.', '-t', '2000', '--dry-run', '--json', ...APPROX], { cwd: dir })).stdout,
    ) as {
      files: Array<{
        path: string;
        tokensBefore: number;
        tokensAfter: number;
        messagesRemoved: number;
        status: string;
      }>;
    };
    for (const f of report.files.filter((x) => x.status === 'compacted')) {
      const line = stat.stdout.split('\n').find((l) => l.startsWith(`${f.path} `)) as string;
      expect(line).toMatch(
        new RegExp(
          `^\\S+ +${f.tokensBefore.toLocaleString('en-US')} → +${f.tokensAfter.toLocaleString('en-US')} tokens .* −${f.messagesRemoved} messages  `,
        ),
      );
    }
  });

  it("totals as the batch report's summary does, with what pruning saved added up over the files", async () => {
    const dir = folder();
    const flags = ['compact', '.', '-t', '5000', '--strategy', 'prune', '--dry-run', ...APPROX];
    const stat = await runSwc([...flags, '--stat'], { cwd: dir });
    const report = JSON.parse((await runSwc([...flags, '--json'], { cwd: dir })).stdout) as {
      summary: {
        tokensBefore: number;
        tokensAfter: number;
        compacted: number;
        unchanged: number;
        targetMissed: number;
      };
      files: Array<{
        status: string;
        conversations: number;
        targetMet: boolean | null;
        conversationsMet?: number;
        messagesRemoved: number | null;
        saved?: { pruned: number; offloaded: number };
      }>;
    };
    const { summary, files } = report;
    const pruned = files.reduce((a, f) => a + (f.saved?.pruned ?? 0), 0);
    expect(pruned).toBeGreaterThan(0);
    // The folder holds a file of several conversations: the verdict counts conversations, as that file's records say.
    const read = files.filter((f) => f.status !== 'failed');
    const conversations = read.reduce((a, f) => a + f.conversations, 0);
    const met = read.reduce((a, f) => a + (f.conversationsMet ?? (f.targetMet === false ? 0 : f.conversations)), 0);
    expect(read.some((f) => f.conversationsMet !== undefined)).toBe(true);
    const removed = files.reduce((a, f) => a + (f.messagesRemoved ?? 0), 0);
    const total = stat.stdout.trimEnd().split('\n').at(-1);
    expect(total).toBe(
      `4 files, ${summary.compacted} would change, ${summary.unchanged} unchanged (${summary.unchanged} not shown), 1 failed: ` +
        `${summary.tokensBefore.toLocaleString('en-US')} → ${summary.tokensAfter.toLocaleString('en-US')} tokens ` +
        `(−${Math.round((1 - summary.tokensAfter / summary.tokensBefore) * 100)}%, approx), ` +
        `${removed === 0 ? '' : '−'}${removed} messages, pruned ${pruned.toLocaleString('en-US')}; ` +
        `target met in ${met} of ${conversations} conversations`,
    );
  });

  it('says nothing would change when no file would, instead of a 0% change and 0 messages', async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'hello.jsonl'), '{"role": "user", "content": "Hello!"}\n');
    writeFileSync(path.join(dir, 'hi.jsonl'), '{"role": "user", "content": "Hi!"}\n');
    const r = await runSwc(['compact', '.', '-t', '2000', '--dry-run', '--stat', ...APPROX], { cwd: dir });
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(
      '2 files, 0 would change, 2 unchanged (2 not shown): 5 tokens (approx), nothing would change; target met in 2 of 2\n',
    );
  });

  it.each([['--stat'], ['--verbose']])('is refused without --dry-run: %s', async (flag) => {
    const r = await runSwc(['compact', '.', '-t', '50', '--check', flag], { cwd: folder() });
    expect(r).toEqual({
      status: 2,
      stdout: '',
      stderr: `swc: error: ${flag} is a way to show a dry run: add --dry-run\n`,
    });
  });
});

describe('a plain batch dry run', () => {
  it('shows only files that would change or miss their target', async () => {
    const r = await runSwc(['compact', '.', '-t', '2000', '--dry-run', ...APPROX], { cwd: folder() });
    expect(r.stdout.match(/^dry run: .*$/gm)).toEqual(['dry run: sample.jsonl']);
  });

  it('shows every file with --verbose, a blank line between them', async () => {
    const r = await runSwc(['compact', '.', '-t', '2000', '--dry-run', '--verbose', ...APPROX], { cwd: folder() });
    expect(r.stdout.match(/^dry run: .*$/gm)).toEqual([
      'dry run: hello.jsonl',
      'dry run: records.json',
      'dry run: sample.jsonl',
    ]);
    expect(r.stdout).toMatch(/\n\ndry run: records\.json\n/);
  });

  it('shows a named file that would not change', async () => {
    const r = await runSwc(['compact', 'hello.jsonl', '-t', '2000', '--dry-run', ...APPROX], { cwd: folder() });
    expect(r.stdout).toMatch(/^dry run: hello\.jsonl\n/);
  });
});

describe('the dry run of a file of many conversations', () => {
  const RECORDS = path.join(ROOT, 'fixtures/multi/records.json');

  it('judges the target conversation by conversation in its header, never by the file total', async () => {
    const r = await runSwc(['compact', 'records.json', '-t', '50', '--dry-run', ...APPROX], {
      cwd: tempDir([RECORDS]),
    });
    const header = r.stdout.split('\n').slice(2, 5);
    expect(header[1]).toMatch(/^\+\+\+ after +\d+ messages +[\d,]+ tokens$/);
    expect(header[2]).toMatch(/^target 50 met in 1 of 3 conversations; largest after: \d+ tokens \(conversation \d\)$/);
  });

  it('shows every conversation that misses its target, even one where nothing could change', async () => {
    const r = await runSwc(['compact', 'records.json', '-t', '5', '--dry-run', ...APPROX], { cwd: tempDir([RECORDS]) });
    expect(r.stdout.match(/^@@ conversation \d of 3 .*$/gm)).toHaveLength(3);
    expect(r.stdout).toMatch(/^total: 3 conversations, 2 would change, 1 unchanged$/m);
    expect(r.stdout).toMatch(/^nothing removed$/m);
  });

  it('leaves out, and counts, conversations that would not change and meet their target', async () => {
    const r = await runSwc(['compact', 'records.json', '-t', '50', '--dry-run', ...APPROX], {
      cwd: tempDir([RECORDS]),
    });
    const sections = r.stdout.match(/^@@ conversation \d of 3 .*$/gm) ?? [];
    expect(sections).toHaveLength(2);
    expect(r.stdout).toMatch(/^total: 3 conversations, 2 would change, 1 unchanged \(not shown\)$/m);
  });

  it('gives a file of several conversations the verdict compact gives it, by conversation, in its line and the total', async () => {
    const file = path.join(ROOT, 'fixtures/multi/records.jsonl');
    const partly: number[] = [];
    for (const target of ['20', '40', '60']) {
      const flags = ['compact', file, '-t', target, ...APPROX];
      const compact = (await runSwc([...flags, '-o', path.join(tempDir(), 'out.jsonl')], { cwd: ROOT })).stderr;
      const counted = /met in (\d+) of (\d+)/.exec(compact);
      const [met, of] = counted === null ? [3, 3] : [Number(counted[1]), Number(counted[2])];
      if (counted === null) expect(compact).toContain('met in every conversation');
      if (met > 0 && met < of) partly.push(met);
      const stat = (await runSwc([...flags, '--dry-run', '--stat'], { cwd: ROOT })).stdout.split('\n');
      expect({ target, line: stat[0]?.endsWith(`target met in ${met} of ${of}`) }).toEqual({ target, line: true });
      expect({ target, total: stat[1]?.endsWith(`target met in ${met} of ${of} conversations`) }).toEqual({
        target,
        total: true,
      });
    }
    // Not vacuous: some target is met in part of the file.
    expect(partly.length).toBeGreaterThan(0);
  });
});
