import { describe, expect, it } from '@jest/globals';
import { HELP_ORDER, type OptionCommand } from '../../src/settings/options.js';
import { tempDir } from '../helpers/cli.js';
import { runSwc } from '../helpers/run-in-process.js';

/** `--help` lists options under headings, as ripgrep does (issue 57, item 8). */

/** The headings of a command's help and the long flags under each, read from the help text itself. */
async function groupsOf(command: string): Promise<Array<[string, string[]]>> {
  const r = await runSwc([command, '--help'], { cwd: tempDir() });
  const groups: Array<[string, string[]]> = [];
  for (const line of r.stdout.split('\n')) {
    const heading = /^([A-Z][\w ]*):$/.exec(line);
    if (heading !== null) groups.push([heading[1] as string, []]);
    const flag = /^ {2}(?:-\w, )?(--[\w-]+)/.exec(line);
    if (flag !== null) groups[groups.length - 1]?.[1].push(flag[1] as string);
  }
  return groups.filter(([heading]) => !['Usage', 'Arguments', 'Examples'].includes(heading));
}

describe('--help', () => {
  it('groups the compact options: target, strategies, summarize, input, output, batch and CI, display', async () => {
    const groups = await groupsOf('compact');
    expect(groups.map(([heading]) => heading)).toEqual([
      'Target',
      'Strategies',
      'Summarize',
      'Input',
      'Output',
      'Batch and CI',
      'Display',
      'Options',
    ]);
    const flags = new Map(groups);
    expect(flags.get('Target')).toEqual([
      '--target',
      '--context-window',
      '--compact-at',
      '--compact-to',
      '--min-keep-steps',
    ]);
    expect(flags.get('Output')).toEqual(['--output', '--in-place', '--backup-dir', '--out-dir', '--force', '--base']);
    expect(flags.get('Options')).toEqual(['--help']);
  });

  it.each(Object.keys(HELP_ORDER).map((c) => [c as OptionCommand]))(
    '%s: lists every option once, under a heading, the help option last',
    async (command) => {
      const groups = await groupsOf(command);
      const listed = groups.flatMap(([, flags]) => flags);
      expect(new Set(listed).size).toBe(listed.length);
      expect(listed.length).toBeGreaterThanOrEqual(HELP_ORDER[command].length + 1);
      expect(groups[groups.length - 1]).toEqual(['Options', ['--help']]);
    },
  );
});
