import { describe, expect, it } from '@jest/globals';
import { COLOR_WHEN, SHELLS, type Shell } from '../../src/cli/options.js';
import { formatNames, STRATEGIES } from '../../src/pipeline/index.js';
import { PRICE_MODELS } from '../../src/replay/prices.js';
import { TOKENIZERS } from '../../src/tokens/index.js';
import { tempDir } from '../helpers/cli.js';
import { acceptedChains, completionScript as script, REPLAY_POLICIES } from '../helpers/completion.js';
import { runSwc } from '../helpers/run-in-process.js';

/**
 * `swc completion bash|zsh|fish`: each script names every option `--help` lists for every command, and the choices of
 * formats, tokenizers, strategies, colours and shells. test/e2e/completion.test.ts checks that each shell present
 * reads it without a syntax error and that bash completes partial words with it.
 */

const COMMANDS = ['compact', 'inspect', 'replay', 'restore', 'completion'] as const;

/** Every option name a command's --help lists (`-f`, `--format`, `--no-color`), read from the help text itself. */
async function helpOptions(command: string | null): Promise<string[]> {
  const r = await runSwc(command === null ? ['--help'] : [command, '--help'], { cwd: tempDir() });
  // Every option section, whatever its heading (--help groups them), up to the commands or examples.
  const section = r.stdout.split(/\n(?:Commands|Examples|Load it):?\n/)[0] ?? '';
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

describe('the top-level help', () => {
  it('fits a 24-line, 80-column screen', async () => {
    const r = await runSwc(['--help'], { cwd: tempDir() });
    const lines = r.stdout.replace(/\n$/, '').split('\n');
    expect(lines.length).toBeLessThanOrEqual(24);
    expect(Math.max(...lines.map((l) => [...l].length))).toBeLessThanOrEqual(80);
    expect(r.stdout).toContain('completion <shell>');
  });
});
