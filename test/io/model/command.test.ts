/**
 * The command runner with real shells and processes: the prompt on stdin, the instruction in SWC_SUMMARY_INSTRUCTION
 * (quoted as `llm -s "$SWC_SUMMARY_INSTRUCTION"` quotes it), stdout trimmed as the summary, and every way a command
 * fails: a status, a signal, a timeout (its whole process group stopped), no output, too much output.
 */
import { describe, expect, it } from '@jest/globals';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { UsageError } from '../../../src/errors.js';
import { createCommandSummarizer, INSTRUCTION_VARIABLE } from '../../../src/io/model/command.js';
import { tempDir } from '../../helpers/cli.js';
import { failureOf, isAlive } from '../../helpers/processes.js';

/** Calls that would hang while a process the command started lives (it outlives this bound) fail by it. */
const BOUND_MS = 15_000;
const REQUEST = {
  system: 'Summarize it.',
  user: '<conversation_to_summarize>\nuser: hi\n</conversation_to_summarize>',
};

describe('a summarize command', () => {
  it('gets the user message on stdin and the instruction in SWC_SUMMARY_INSTRUCTION; its trimmed stdout is the summary', async () => {
    const summarize = createCommandSummarizer({
      command: `printf '\\n in=[%s] sys=[%s] \\n\\n' "$(cat)" "$${INSTRUCTION_VARIABLE}"`,
      timeoutMs: 10_000,
    });
    expect(await summarize(REQUEST)).toEqual({ text: `in=[${REQUEST.user}] sys=[${REQUEST.system}]` });
  });

  it('passes an instruction with quotes, dollars, backticks and new lines as one argument to `llm -s "$SWC_SUMMARY_INSTRUCTION"`', async () => {
    const dir = tempDir();
    const llm = path.join(dir, 'llm');
    // A stand-in for `llm`: it writes each argument it was given, then the input it read.
    writeFileSync(llm, '#!/bin/sh\nfor a in "$@"; do printf \'<%s>\' "$a"; done\nprintf \'|\'\ncat\n');
    chmodSync(llm, 0o755);
    const instruction = `Keep "paths", 'commands', $HOME, \`whoami\`, \\n and\nnew lines; -- --flags`;
    const summarize = createCommandSummarizer({
      command: `llm -m gpt-4o-mini -s "$${INSTRUCTION_VARIABLE}"`,
      timeoutMs: 10_000,
      env: { ...process.env, PATH: `${dir}:${process.env.PATH ?? ''}` },
    });
    const reply = await summarize({ system: instruction, user: 'the prompt' });
    expect(reply.text).toBe(`<-m><gpt-4o-mini><-s><${instruction}>|the prompt`);
  });

  it('runs with the environment given, the instruction variable set over any value it had', async () => {
    const summarize = createCommandSummarizer({
      command: `printf '%s %s' "$MY_SETTING" "$${INSTRUCTION_VARIABLE}"`,
      env: { PATH: process.env.PATH, MY_SETTING: 'on', [INSTRUCTION_VARIABLE]: 'stale' },
    });
    expect((await summarize(REQUEST)).text).toBe(`on ${REQUEST.system}`);
  });

  it('fails on a non-zero exit, quoting the first line of stderr but never the command', async () => {
    const summarize = createCommandSummarizer({
      command: `echo partial; printf '\\nmodel unknown: SECRET-IN-COMMAND\\nmore\\n' >&2; exit 3 # SECRET-IN-COMMAND`,
      timeoutMs: 10_000,
    });
    const error = await failureOf(summarize(REQUEST));
    expect(error.reason).toBe('summarize command exited with status 3: model unknown: SECRET-IN-COMMAND');
    const quiet = createCommandSummarizer({ command: 'exit 1 # token=abc' });
    expect((await failureOf(quiet(REQUEST))).reason).toBe('summarize command exited with status 1');
  });

  it('fails when the command cannot be found (the shell says so on stderr)', async () => {
    const error = await failureOf(createCommandSummarizer({ command: 'swc-no-such-command-xyz' })(REQUEST));
    expect(error.reason).toMatch(/^summarize command exited with status 127: .*not found/);
  });

  it('fails when the command is stopped by a signal', async () => {
    const error = await failureOf(createCommandSummarizer({ command: 'kill -TERM $$' })(REQUEST));
    expect(error.reason).toBe('summarize command was stopped by SIGTERM');
  });

  it('fails on an empty or blank answer', async () => {
    expect(
      (await failureOf(createCommandSummarizer({ command: 'cat >/dev/null; printf "  \\n\\t\\n"' })(REQUEST))).reason,
    ).toBe('summarize command wrote no summary');
  });

  it(
    'times out, and stops the whole process group (what the command started too)',
    async () => {
      const dir = tempDir();
      const pidFile = path.join(dir, 'pid');
      const summarize = createCommandSummarizer({ command: `sleep 60 & echo $! > '${pidFile}'; wait`, timeoutMs: 300 });
      const error = await failureOf(summarize(REQUEST));
      expect(error.reason).toBe('summarize command gave no answer within 300 ms');
      const pid = Number(readFileSync(pidFile, 'utf8'));
      // The kill is sent before the call fails; the process disappears once it is reaped.
      for (let i = 0; i < 200 && isAlive(pid); i++) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(isAlive(pid)).toBe(false);
    },
    BOUND_MS,
  );

  it(
    'does not wait for a background job the command left holding stdout',
    async () => {
      const summarize = createCommandSummarizer({ command: 'echo done; sleep 60 &', timeoutMs: 60_000 });
      expect((await summarize(REQUEST)).text).toBe('done');
    },
    BOUND_MS,
  );

  it('answers when the command does not read its input, however long the input (EPIPE is not a failure)', async () => {
    const summarize = createCommandSummarizer({ command: 'echo fixed answer', timeoutMs: 10_000 });
    expect((await summarize({ system: 's', user: 'x'.repeat(4 * 1024 * 1024) })).text).toBe('fixed answer');
  });

  it('reads a long input whole', async () => {
    const user = 'line of the transcript\n'.repeat(100_000);
    const summarize = createCommandSummarizer({ command: 'wc -c', timeoutMs: 10_000 });
    expect((await summarize({ system: 's', user })).text).toBe(String(Buffer.byteLength(user)));
  });

  it(
    'stops a command that writes more than a summary could be',
    async () => {
      const error = await failureOf(createCommandSummarizer({ command: 'yes', timeoutMs: 60_000 })(REQUEST));
      expect(error.reason).toMatch(/^summarize command wrote more than \d+ bytes$/);
    },
    BOUND_MS,
  );

  it('fails the call, not the run, for an instruction no environment can hold', async () => {
    const error = await failureOf(createCommandSummarizer({ command: 'cat' })({ system: 'a\u0000b', user: 'u' }));
    expect(error.reason).toMatch(/^summarize command could not start/);
  });

  it('refuses an empty command and a timeout that is not positive', () => {
    expect(() => createCommandSummarizer({ command: '  ' })).toThrow(UsageError);
    expect(() => createCommandSummarizer({ command: 'cat', timeoutMs: 0 })).toThrow(UsageError);
  });
});
