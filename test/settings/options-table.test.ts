/**
 * The options table (src/settings/options.ts) is the one place an option is described: every setting it gives to the
 * command line, a settings file or the library is taken there, each help lists exactly the table's flags, and a bound
 * written once in the table is the rule each surface states in its own names.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { helpGroupOf } from '../../src/cli/help-groups.js';
import { OptionsError } from '../../src/errors.js';
import { createCompactor, type CompactorOptions } from '../../src/library/index.js';
import { HELP_ORDER, OPTIONS, longFlag, type OptionCommand, type OptionRow } from '../../src/settings/options.js';
import { ROOT, tempDir } from '../helpers/cli.js';
import { EVERY_OPTION } from '../helpers/library-options.js';
import { runSwc } from '../helpers/run-in-process.js';
import { scaled } from '../helpers/scale.js';

const CONFIG = 'transcript-compact.config.json';

/** A valid value of each kind, as a flag's text and as a settings file or the library holds it. */
const EXAMPLES: Partial<Record<OptionRow['value'], readonly [string, unknown]>> = {
  tokens: ['2k', 2000],
  whole: ['2', 2],
  share: ['0.5', 0.5],
  retention: ['50%', 0.5],
  rate: ['3.5', 3.5],
  text: ['messages', 'messages'],
  folder: ['store', 'store'],
  file: ['instruction.txt', 'Summarize the conversation.'],
  pointer: ['/messages', '/messages'],
  strategies: ['prune,window', 'prune,window'],
  placeholder: ['[gone: {tool_name}]', '[gone: {tool_name}]'],
  note: ['[{num_removed} removed]', '[{num_removed} removed]'],
  tokenizer: ['approx', 'approx'],
  format: ['openai', 'openai'],
  boolean: ['', true],
};

/** The options only the library takes, each with a value it accepts. */
const LIBRARY_EXAMPLES: Readonly<Record<string, unknown>> = {
  createNote: (text: string) => ({ role: 'user', content: text }),
  counter: { name: 'fake', measure: () => 1 },
  system: 'Be brief.',
  tools: [],
  summarize: async () => 'a summary',
  assumeUnchanged: true,
};

/** A row's example: the flag's text and the value a file or the library holds. */
function example(row: OptionRow): readonly [string, unknown] {
  if (row.value === 'library') {
    expect([row.name, Object.hasOwn(LIBRARY_EXAMPLES, row.name)]).toEqual([row.name, true]);
    return ['', LIBRARY_EXAMPLES[row.name]];
  }
  const found = EXAMPLES[row.value];
  if (found === undefined) throw new Error(`no example of a ${row.value} value (${row.name})`);
  return found;
}

/** Whether the budget of a row's run is a context window: the window's shares need one. */
function byWindow(row: OptionRow): boolean {
  return ['contextWindow', 'compactAt', 'compactTo'].includes(row.name);
}

/** A folder with one conversation, `chat.json` (`{"messages": […]}`), and a summary instruction file. */
function workspace(): string {
  const dir = tempDir();
  const messages = [
    { role: 'user', content: 'hello there' },
    { role: 'assistant', content: 'hi' },
  ];
  writeFileSync(path.join(dir, 'chat.json'), JSON.stringify({ messages }));
  writeFileSync(path.join(dir, 'instruction.txt'), 'Summarize the conversation.');
  return dir;
}

/** The flags a row's flag needs beside it: its budget, its strategy (and where summaries come from), its counter. */
function cliContext(row: OptionRow): string[] {
  const out = byWindow(row) ? (row.name === 'contextWindow' ? [] : ['--context-window', '1000']) : [];
  if (row.name !== 'target' && !byWindow(row)) out.push('--target', '100');
  if (row.strategy !== undefined) out.push('--strategy', row.strategy);
  if (row.strategy === 'offload' && row.name !== 'offloadDir') out.push('--offload-dir', 'store');
  if (row.strategy === 'summarize' && !['summarizeCommand', 'baseUrl', 'model'].includes(row.name))
    out.push('--summarize-command', 'cat');
  if (row.needs === 'approx') out.push('--tokenizer', 'approx');
  return out;
}

/** The settings a row's key needs beside it in a file, as `cliContext` for the flags. */
function configContext(row: OptionRow): Record<string, unknown> {
  return {
    ...(byWindow(row) ? (row.name === 'contextWindow' ? {} : { contextWindow: 1000 }) : {}),
    ...(row.name !== 'target' && !byWindow(row) ? { target: 100 } : {}),
    ...(row.strategy === undefined ? {} : { strategy: row.strategy }),
    ...(row.strategy === 'offload' && row.name !== 'offloadDir' ? { offloadDir: 'store' } : {}),
    ...(row.needs === 'approx' ? { tokenizer: 'approx' } : {}),
  };
}

/** The options a row's library option needs beside it. */
function libraryContext(row: OptionRow): CompactorOptions {
  return {
    ...(byWindow(row) ? (row.name === 'contextWindow' ? {} : { contextWindow: 1000 }) : {}),
    ...(row.name !== 'target' && !byWindow(row) ? { target: 100 } : {}),
    ...(row.strategy === undefined ? {} : { strategy: row.strategy as never }),
    ...(row.strategy === 'summarize' && row.name !== 'summarize' ? { summarize: async () => 'a summary' } : {}),
    ...(row.name === 'counter' || row.name === 'tokenizer' ? {} : { tokenizer: 'approx' as const }),
  };
}

/** What replay needs beside a row's flag: its window, and the row's strategy as a policy. */
function replayContext(command: OptionCommand, row: OptionRow): string[] {
  if (command !== 'replay') return [];
  return ['--context-window', '1000', ...(row.strategy === undefined ? [] : ['--strategy', row.strategy])];
}

/** A dry run of chat.json with these flags (and a settings file, when given). */
async function dryRun(dir: string, flags: readonly string[], settings?: Record<string, unknown>) {
  writeFileSync(path.join(dir, CONFIG), JSON.stringify(settings ?? {}));
  return runSwc(['compact', 'chat.json', '--dry-run', '--json', ...flags], { cwd: dir });
}

/** The library's refusal of some options, or null when it takes them. */
async function libraryError(options: Record<string, unknown>): Promise<string | null> {
  try {
    await createCompactor(options as CompactorOptions);
    return null;
  } catch (error) {
    expect(error).toBeInstanceOf(OptionsError);
    return (error as Error).message;
  }
}

const FLAGGED = OPTIONS.filter((row) => row.on.compact !== undefined && (row.config === true || row.library));
const KEYED = OPTIONS.filter((row) => row.config === true);
const NAMED = OPTIONS.filter((row) => row.library === true);
const BOUNDED = OPTIONS.filter((row) => row.min !== undefined);

describe('every setting of the options table', () => {
  it.each(FLAGGED.map((row) => [longFlag(row.name), row] as const))(
    'is taken as the flag %s by swc compact',
    async (flag, row) => {
      const [text] = example(row);
      const r = await dryRun(workspace(), [...cliContext(row), flag, ...(row.value === 'boolean' ? [] : [text])]);
      expect([r.status, r.stderr]).toEqual([0, expect.not.stringContaining('error')]);
    },
  );

  it.each(KEYED.map((row) => [row.name, row] as const))(
    'is taken as the key %s of a settings file',
    async (key, row) => {
      const [, value] = example(row);
      const summarizing = row.strategy === 'summarize' ? ['--summarize-command', 'cat'] : [];
      const r = await dryRun(workspace(), summarizing, { ...configContext(row), [key]: value });
      expect([r.status, r.stderr]).toEqual([0, expect.not.stringContaining('error')]);
      expect(JSON.parse(r.stdout)).toMatchObject({ settings: { config: CONFIG } });
    },
  );

  it.each(NAMED.map((row) => [row.name, row] as const))('is taken as the library option %s', async (name, row) => {
    const [, value] = example(row);
    expect(await libraryError({ ...libraryContext(row), [name]: value })).toBeNull();
  });
});

describe('a bound written once in the options table', () => {
  it.each(BOUNDED.map((row) => [row.name, row.min as number, row] as const))(
    '%s below %i is refused by the same rule on the command line, in a settings file and in the library',
    async (name, min, row) => {
      const below = min - 1;
      const rule = `at least ${min}, got ${below}`;
      const dir = workspace();
      const flag = longFlag(name);
      for (const command of Object.keys(row.on) as OptionCommand[]) {
        if (command === 'restore') continue;
        const r =
          command === 'compact'
            ? await dryRun(dir, [...cliContext(row), flag, String(below)])
            : await runSwc([command, 'chat.json', ...replayContext(command, row), flag, String(below)], { cwd: dir });
        expect([command, r.status, r.stderr]).toEqual([command, 2, `swc: error: ${flag} must be ${rule}\n`]);
      }
      if (row.config === true) {
        const r = await dryRun(dir, [], { ...configContext(row), [name]: below });
        expect(r.stderr).toBe(`swc: error: ${CONFIG}: ${name} must be ${rule}\n`);
      }
      if (row.library === true)
        expect(await libraryError({ ...libraryContext(row), [name]: below })).toBe(
          `${name} must be a whole number of ${rule}`,
        );
    },
  );
});

describe('a bound, for any whole number', () => {
  const rows = BOUNDED.filter((row) => row.on.compact !== undefined);

  it('refuses it on every surface exactly when it is below the bound, saying the bound', async () => {
    const dir = workspace();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...rows),
        fc.oneof(fc.integer({ min: -3, max: 4 }), fc.integer({ min: -1_000_000, max: 1_000_000 })),
        async (row, n) => {
          // The model: a bound is broken by exactly the numbers below it, and each surface says so in its names.
          const min = row.min as number;
          const broken = n < min;
          const rule = `at least ${min}, got ${n}`;
          const cli = await dryRun(dir, [...cliContext(row), longFlag(row.name), String(n)]);
          expect(cli.stderr.includes(`${longFlag(row.name)} must be ${rule}`)).toBe(broken);
          if (row.config === true) {
            const file = await dryRun(dir, [], { ...configContext(row), [row.name]: n });
            expect(file.stderr.includes(`${CONFIG}: ${row.name} must be ${rule}`)).toBe(broken);
          }
          if (row.library === true) {
            const library = await libraryError({ ...libraryContext(row), [row.name]: n });
            expect(library === `${row.name} must be a whole number of ${rule}`).toBe(broken);
          }
        },
      ),
      { numRuns: scaled(100) },
    );
  });
});

describe('a default written once in the options table', () => {
  const uses = OPTIONS.flatMap((row) =>
    row.default === undefined
      ? []
      : Object.entries(row.on).map(([command, use]) => [row.name, command, row.default, use] as const),
  );

  it.each(uses)('%s: the help of %s shows %s where it shows a default', (_name, _command, value, use) => {
    const shown = typeof value === 'number' ? value.toLocaleString('en-US') : String(value);
    // A preset is shown by commander as `(default: <the row's default>)`; "detected" is how restore says auto.
    if (use?.preset === true || !use?.help.includes('(default: ')) return;
    expect(use.help).toMatch(new RegExp(`\\(default: (${shown.replace('.', '\\.')}|detected)\\b`));
  });

  it('is what swc compact runs with when no flag gives one', async () => {
    const r = await dryRun(workspace(), ['--target', '100', '--strategy', 'prune', '--tokenizer', 'approx']);
    const { settings } = JSON.parse(r.stdout) as { settings: Record<string, unknown> };
    expect(settings).toMatchObject({
      minKeepSteps: OPTIONS.find((row) => row.name === 'minKeepSteps')?.default,
      minTokens: OPTIONS.find((row) => row.name === 'minTokens')?.default,
      format: OPTIONS.find((row) => row.name === 'format')?.default,
    });
  });
});

describe('a flag that displaces a settings-file key', () => {
  const pairs = OPTIONS.flatMap((row) => (row.displaces ?? []).map((key) => [longFlag(row.name), key, row] as const));

  it.each(pairs)("%s leaves the file's %s unused", async (flag, key, row) => {
    const other = OPTIONS.find((r) => r.name === key) as OptionRow;
    expect(other.config).toBe(true);
    // Well-formed, the file's key would contradict the flag; the flag says the same thing another way and replaces it.
    const broken: Record<string, unknown> = {
      contextWindow: 1,
      compactAt: 0.5,
      compactTo: 0.5,
      target: 100,
      conversationPath: '/nowhere',
      conversationKey: 'nowhere',
      cache: false,
      cacheDir: 'cache',
      model: 'unused',
    };
    const [text] = example(row);
    const summarizing = row.strategy === 'summarize' ? ['--strategy', 'summarize'] : [];
    const flags = [flag, ...(row.value === 'boolean' ? [] : [row.name === 'summarizeCommand' ? 'cat' : text])];
    const base = ['target', 'contextWindow'].includes(row.name) ? [] : ['--target', '100'];
    const r = await dryRun(workspace(), [...base, ...summarizing, ...flags], { [key]: broken[key] });
    expect([r.status, r.stderr]).toEqual([0, expect.not.stringContaining('error')]);
  });
});

describe('docs/cli.md', () => {
  it("lists every key of a settings file, beside one of the key's flags", () => {
    const doc = readFileSync(path.join(ROOT, 'docs/cli.md'), 'utf8');
    const table = doc.split('\n| key | flag |\n|---|---|\n')[1]?.split('\n\n')[0] ?? '';
    const listed = new Map<string, string>();
    for (const line of table.split('\n')) {
      const [, keys = '', flags = ''] = line.split('|');
      for (const key of keys.matchAll(/`([a-z][A-Za-z]+)`/g)) listed.set(key[1] as string, flags);
    }
    for (const word of ['null', 'prune', 'offload', 'summarize', 'false', 'approx']) listed.delete(word);
    expect([...listed.keys()].sort()).toEqual(KEYED.map((row) => row.name).sort());
    for (const row of KEYED) {
      const names = (row.flags as string).split(/,\s*/);
      expect([row.name, names.some((flag) => (listed.get(row.name) as string).includes(`\`${flag}\``))]).toEqual([
        row.name,
        true,
      ]);
    }
  });
});

describe("each command's help", () => {
  it.each((Object.keys(HELP_ORDER) as OptionCommand[]).map((command) => [command]))(
    '%s lists the flags of the table that it has, in the order of HELP_ORDER within each --help group',
    async (command) => {
      const r = await runSwc([command, '--help'], { cwd: tempDir() });
      // Every option section, whatever its heading, up to the examples.
      const section = r.stdout.split(/\nExamples:\n/)[0] ?? '';
      const listed = [...section.matchAll(/^ {2}(?:-\w, )?(--[\w-]+)/gm)].map((m) => m[1]);
      const rows = OPTIONS.filter((row) => row.on[command] !== undefined);
      expect(HELP_ORDER[command].slice().sort()).toEqual(rows.map((row) => row.name).sort());
      // The groups in the order their first option comes in HELP_ORDER, each option in that order within its group.
      const groups = [...new Set(HELP_ORDER[command].map(helpGroupOf))];
      const grouped = groups.flatMap((g) => HELP_ORDER[command].filter((name) => helpGroupOf(name) === g));
      const flags = grouped.flatMap((name) => {
        const row = OPTIONS.find((r) => r.name === name) as OptionRow;
        return [longFlag(name), ...(row.negated === undefined ? [] : [row.negated.flag])];
      });
      expect(listed).toEqual([...flags, '--help']);
    },
  );
});

describe('the library option names', () => {
  it("are CompactorOptions' own, every one", () => {
    // EVERY_OPTION is typed against CompactorOptions: an option added there and not in it does not compile.
    expect(NAMED.map((row) => row.name).sort()).toEqual([...EVERY_OPTION].sort());
  });
});
