import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { COLOR_WHEN, SHELLS, type Shell } from '../../src/cli/options.js';
import { parseStrategies } from '../../src/cli/settings.js';
import { formatNames, STRATEGIES } from '../../src/pipeline/index.js';
import { PRICE_MODELS } from '../../src/replay/prices.js';
import { TOKENIZERS } from '../../src/tokens/index.js';
import { tempDir } from '../helpers/cli.js';
import { runSwc } from '../helpers/run-in-process.js';

/**
 * `swc completion bash|zsh|fish`: each script names every option `--help` lists for every command, and the choices of
 * formats, tokenizers, strategies, colours and shells; each shell present here reads it without a syntax error, and
 * bash completes partial words with it. A shell that is not installed is skipped with a message.
 */

const COMMANDS = ['compact', 'inspect', 'replay', 'restore', 'completion'] as const;

/** Whether a shell can be run here. */
function has(shell: string): boolean {
  return spawnSync(shell, ['-c', 'exit 0']).status === 0;
}

/** The script a shell gets. */
async function script(shell: Shell): Promise<string> {
  const r = await runSwc(['completion', shell], { cwd: tempDir() });
  expect([r.status, r.stderr]).toEqual([0, '']);
  return r.stdout;
}

/** Every option name a command's --help lists (`-f`, `--format`, `--no-color`), read from the help text itself. */
async function helpOptions(command: string | null): Promise<string[]> {
  const r = await runSwc(command === null ? ['--help'] : [command, '--help'], { cwd: tempDir() });
  const section = r.stdout.split('\nOptions:\n')[1]?.split(/\n(?:Commands|Examples|Load it):?\n/)[0] ?? '';
  return [...section.matchAll(/^ {2}(-\w)?(?:, )?(--[\w-]+)/gm)]
    .flatMap((m) => [m[1], m[2]])
    .filter((n) => n !== undefined) as string[];
}

/** How a script writes an option's name: as it is, or fish's `-s x` / `-l name`. */
function written(shell: Shell, name: string): string {
  if (shell !== 'fish') return name;
  return name.startsWith('--') ? `-l ${name.slice(2)}` : `-s ${name.slice(1)}`;
}

describe('the completion scripts', () => {
  it.each(SHELLS.map((s) => [s]))('%s: name every option of every command, as --help lists them', async (shell) => {
    const text = await script(shell);
    for (const command of [null, ...COMMANDS]) {
      const names = await helpOptions(command);
      expect(names.length).toBeGreaterThan(command === 'compact' ? 40 : 1);
      for (const name of names)
        expect([command, name, text.includes(written(shell, name))]).toEqual([command, name, true]);
    }
    for (const command of [...COMMANDS, 'help']) expect(text).toContain(command);
  });

  it.each(SHELLS.map((s) => [s]))(
    '%s: offer the formats, tokenizers, strategies, colours and shells',
    async (shell) => {
      const text = await script(shell);
      for (const list of [['auto', ...formatNames()], TOKENIZERS, STRATEGIES, COLOR_WHEN, SHELLS])
        expect(text).toContain(list.join(' '));
    },
  );

  it.each(SHELLS.map((s) => [s]))('%s: offer the price models by name for --prices', async (shell) => {
    const text = await script(shell);
    expect(text).toContain(PRICE_MODELS.map((p) => p.name).join(' '));
  });

  it.each(SHELLS.map((s) => [s]))('%s: offer every chain the strategy parser accepts, and no other', async (shell) => {
    const text = await script(shell);
    expect(text).toContain(acceptedChains(STRATEGIES).join(' '));
    expect(text).toContain(acceptedChains(REPLAY_POLICIES).join(' '));
    for (const refused of ['prune,prune', 'prune,none', 'none,window', 'window,window'])
      expect(text).not.toContain(refused);
  });

  it('refuses a shell it writes no script for', async () => {
    const r = await runSwc(['completion', 'tcsh'], { cwd: tempDir() });
    expect(r).toEqual({
      status: 2,
      stdout: '',
      stderr:
        "swc: error: command-argument value 'tcsh' is invalid for argument 'shell'. Allowed choices are bash, zsh, fish.\n",
    });
  });
});

/** replay's policies: `none` (alone) and every strategy but offload. */
const REPLAY_POLICIES = ['none', ...STRATEGIES.filter((s) => s !== 'offload')];

/** Whether `swc compact --strategy` accepts a chain: the parser itself is the model. */
function accepts(chain: readonly string[]): boolean {
  try {
    parseStrategies(chain.join(','));
    return true;
  } catch {
    return false;
  }
}

/** Every name alone, then every chain of two or more of them the parser accepts, shortest first. */
function acceptedChains(names: readonly string[]): string[] {
  const out: string[][] = names.map((n) => [n]);
  for (let k = 2; k <= names.length; k++) {
    const longer = out.filter((c) => c.length === k - 1).flatMap((c) => names.map((n) => [...c, n]));
    out.push(...longer.filter(accepts));
  }
  return out.map((c) => c.join(','));
}

describe('each shell reads its script', () => {
  for (const shell of SHELLS) {
    const present = has(shell);
    (present ? it : it.skip)(
      present
        ? `${shell} -n finds no syntax error`
        : `${shell} -n finds no syntax error (skipped: ${shell} is not installed here)`,
      async () => {
        const file = path.join(tempDir(), `swc.${shell}`);
        writeFileSync(file, await script(shell));
        const r = spawnSync(shell, ['-n', file], { encoding: 'utf8' });
        expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
      },
    );
  }
});

describe('bash completes with the script', () => {
  const present = has('bash');
  /** What bash offers for the words typed so far (the last one is the word being completed), from `dir`. */
  async function offered(dir: string, ...words: string[]): Promise<string[]> {
    const file = path.join(tempDir(), 'swc.bash');
    writeFileSync(file, await script('bash'));
    const program = [
      `source ${JSON.stringify(file)}`,
      `COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}`,
      '_swc',
      'printf "%s\\n" "${COMPREPLY[@]}"',
    ].join('\n');
    const r = spawnSync('bash', ['-c', program], { cwd: dir, encoding: 'utf8' });
    expect(r.stderr).toBe('');
    return r.stdout.split('\n').filter((l) => l !== '');
  }

  (present ? it : it.skip)(
    present
      ? 'completes commands, options, choices, lists and files'
      : 'completes (skipped: bash is not installed here)',
    async () => {
      const dir = tempDir();
      mkdirSync(path.join(dir, 'archive'));
      writeFileSync(path.join(dir, 'archive.jsonl'), '');
      expect(await offered(dir, 'swc', 'co')).toEqual(['compact', 'completion']);
      expect(await offered(dir, 'swc', 'compact', '--tok')).toEqual([
        '--tokenizer',
        '--tokens-per-image',
        '--tokens-per-file',
      ]);
      expect(await offered(dir, 'swc', 'compact', '--tokenizer', '')).toEqual([...TOKENIZERS]);
      expect(await offered(dir, 'swc', 'compact', '-f', 'cl')).toEqual(['claude-code']);
      expect(await offered(dir, 'swc', 'compact', '--strategy', 'prune,w')).toEqual(['prune,window']);
      expect(await offered(dir, 'swc', 'replay', '--strategy', 'n')).toEqual(['none']);
      expect(await offered(dir, 'swc', 'inspect', '--color', '=', 'n')).toEqual(['never']);
      expect(await offered(dir, 'transcript-compact', 'completion', 'f')).toEqual(['fish']);
      expect((await offered(dir, 'swc', 'compact', 'arch')).sort()).toEqual(['archive', 'archive.jsonl']);
      expect(await offered(dir, 'swc', 'compact', '--out-dir', 'arch')).toEqual(['archive']);
      expect(await offered(dir, 'swc', 'compact', '-t', '')).toEqual([]);
    },
  );

  (present ? it : it.skip)(
    present ? "completes replay's --report and --prices" : 'completes replay (skipped: bash is not installed here)',
    async () => {
      const dir = tempDir();
      mkdirSync(path.join(dir, 'archive'));
      writeFileSync(path.join(dir, 'archive.html'), '');
      writeFileSync(path.join(dir, 'openai.json'), '');
      expect((await offered(dir, 'swc', 'replay', '--report', 'arch')).sort()).toEqual(['archive', 'archive.html']);
      expect((await offered(dir, 'swc', 'replay', '--prices', 'op')).sort()).toEqual(['openai-gpt-4.1', 'openai.json']);
      expect((await offered(dir, 'swc', 'replay', '--prices', '')).sort()).toEqual(
        [...PRICE_MODELS.map((p) => p.name), 'archive', 'archive.html', 'openai.json'].sort(),
      );
      expect((await offered(dir, 'swc', 'replay', '--prices', '=', 'anth')).sort()).toEqual(['anthropic-sonnet']);
    },
  );

  (present ? it : it.skip)(
    present
      ? '--strategy: offers after each typed chain exactly the next names the parser accepts'
      : '--strategy (skipped: bash is not installed here)',
    async () => {
      for (const [command, names] of [
        ['compact', STRATEGIES],
        ['replay', REPLAY_POLICIES],
      ] as const) {
        // Every chain typed so far, accepted or not, with a comma after it: what follows must make an accepted chain.
        const heads = [...acceptedChains(names), 'none', 'prune,prune', 'nope'];
        for (const head of heads) {
          const expected = names.filter((n) => accepts([...head.split(','), n])).map((n) => `${head},${n}`);
          expect([command, head, (await offered(tempDir(), 'swc', command, '--strategy', `${head},`)).sort()]).toEqual([
            command,
            head,
            expected.sort(),
          ]);
        }
        expect((await offered(tempDir(), 'swc', command, '--strategy', '')).sort()).toEqual([...names].sort());
      }
    },
  );

  (present ? it : it.skip)(
    present
      ? 'registers itself for both names (complete -p)'
      : 'registers itself (skipped: bash is not installed here)',
    async () => {
      const file = path.join(tempDir(), 'swc.bash');
      writeFileSync(file, await script('bash'));
      const r = spawnSync('bash', ['-c', `source ${JSON.stringify(file)}; complete -p swc transcript-compact`], {
        encoding: 'utf8',
      });
      expect(r.stdout).toBe('complete -o filenames -F _swc swc\ncomplete -o filenames -F _swc transcript-compact\n');
    },
  );
});

describe('the top-level help', () => {
  it('fits a 24-line, 80-column screen', async () => {
    const r = await runSwc(['--help'], { cwd: tempDir() });
    const lines = r.stdout.replace(/\n$/, '').split('\n');
    expect(lines.length).toBeLessThanOrEqual(24);
    expect(Math.max(...lines.map((l) => [...l].length))).toBeLessThanOrEqual(80);
    expect(r.stdout).toContain('completion <shell>');
  });
});
