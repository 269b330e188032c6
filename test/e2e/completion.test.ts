/**
 * `swc completion bash|zsh|fish` in real shells: each shell present here reads its script without a syntax error, and
 * bash completes partial words with it. A shell that is not installed is skipped with a message. (What the scripts
 * name: test/cli/completion.test.ts.)
 */
import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { SHELLS } from '../../src/cli/options.js';
import { STRATEGIES } from '../../src/pipeline/index.js';
import { PRICE_MODELS } from '../../src/replay/prices.js';
import { TOKENIZERS } from '../../src/tokens/index.js';
import { tempDir } from '../helpers/cli.js';
import { acceptedChains, accepts, completionScript as script, REPLAY_POLICIES } from '../helpers/completion.js';

/** Whether a shell can be run here. */
function has(shell: string): boolean {
  return spawnSync(shell, ['-c', 'exit 0']).status === 0;
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
