/**
 * `swc inspect` calls an error only what the provider rejects: requests a provider answered are no errors, through
 * the command line in process.
 */
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../helpers/cli.js';
import { runSwc } from '../helpers/run-in-process.js';

interface InspectJson {
  readonly problems: readonly { readonly kind: string; readonly severity: string; readonly text: string }[];
}

async function inspect(file: string): Promise<{ status: number; problems: InspectJson['problems'] }> {
  const run = await runSwc(['inspect', '--tokenizer', 'approx', '--json', `fixtures/inspect/${file}`], { cwd: ROOT });
  expect(run.stderr).toBe('');
  return { status: run.status, problems: (JSON.parse(run.stdout) as InspectJson).problems };
}

describe('swc inspect: what the provider answered is no error', () => {
  it('warns of an Anthropic tool_use id used again in a later message, each use answered by its own result', async () => {
    expect(await inspect('anthropic-replayed-id.json')).toEqual({
      status: 0,
      problems: [
        {
          kind: 'duplicate-id',
          severity: 'warning',
          text: 'call id "call_refund_1" (lookup_refund_policy) is already used by the call on line 6',
        },
      ].map((p) => expect.objectContaining(p)),
    });
  });

  it('pairs the calls of consecutive Gemini model contents with the one user content answering them all', async () => {
    expect(await inspect('gemini-consecutive-model.json')).toEqual({ status: 0, problems: [] });
  });

  it('still rejects Gemini responses that do not come right after the model contents calling them', async () => {
    const contents = JSON.parse(readFileSync(path.join(ROOT, 'fixtures/inspect/gemini-consecutive-model.json'), 'utf8'))
      .contents as unknown[];
    // A user text between the calls and their responses: "function response turn comes immediately after a function
    // call turn".
    contents.splice(3, 0, { role: 'user', parts: [{ text: 'Hurry.' }] });
    const run = await runSwc(['inspect', '--tokenizer', 'approx', '-q', '-'], {
      cwd: ROOT,
      stdin: JSON.stringify({ contents }),
    });
    expect(run.status).toBe(1);
    expect(
      run.stdout
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => l.replace(/^\S+ {2}#\d+ {2}/, '')),
    ).toEqual([
      'missing-result  tool call "call_1" (get_weather) has no result right after it',
      'missing-result  tool call "call_2" (get_time) has no result right after it',
      'orphan-result  result for call id "call_1" is not right after its call (line 1)',
      'orphan-result  result for call id "call_2" is not right after its call (line 1)',
    ]);
  });
});
