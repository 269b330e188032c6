import { describe, expect, it } from '@jest/globals';
import { OptionsError } from '../../src/errors.js';
import { compactMessages, createCompactor, swcPrepareStep, type CompactorOptions } from '../../src/library/index.js';
import { EVERY_OPTION } from '../helpers/library-options.js';

/**
 * For every option of CompactorOptions, values of a wrong type or out of range, each with the options it is given
 * among (a budget besides, and what makes it apply) and what the error must say: the option's name first.
 */
const BAD: ReadonlyArray<readonly [keyof CompactorOptions, unknown, Record<string, unknown>, RegExp]> = [
  ['format', 42, { target: 10 }, /^unknown format 42 \(choose one of: auto, /],
  ['format', 'chatml', { target: 10 }, /^unknown format "chatml"/],
  ['target', '100', {}, /^target must be a whole number of at least 1, got "100"/],
  ['target', 0.5, {}, /^target must be a whole number of at least 1, got 0.5/],
  ['target', null, {}, /^target must be a whole number/],
  ['contextWindow', '128k', {}, /^contextWindow must be a whole number of at least 1, got "128k"/],
  ['contextWindow', -1, {}, /^contextWindow must be a whole number/],
  ['compactAt', '70%', { contextWindow: 1000 }, /^compactAt must be a number above 0 and at most 1, got "70%"/],
  ['compactAt', 1.5, { contextWindow: 1000 }, /^compactAt must be at most 1, got 1.5: /],
  ['compactTo', {}, { contextWindow: 1000 }, /^compactTo must be a number above 0 and at most 1, got an object/],
  ['compactTo', 0.4, { target: 10 }, /^compactTo needs contextWindow/],
  ['minKeepSteps', '2', { target: 10 }, /^minKeepSteps must be a whole number of at least 0, got "2"/],
  ['minKeepSteps', -1, { target: 10 }, /^minKeepSteps must be a whole number/],
  ['strategy', 7, { target: 10 }, /^strategy must be a name, a list of names or a comma-separated chain .*, got 7/],
  ['strategy', ['window', 3], { target: 10 }, /^unknown strategy 3/],
  ['strategy', 'summary', { target: 10 }, /^unknown strategy "summary"/],
  ['minTokens', '200', { target: 10, strategy: 'prune' }, /^minTokens must be a whole number of at least 0, got "200"/],
  ['minTokens', 200, { target: 10 }, /^minTokens only applies with strategy prune/],
  ['placeholder', 42, { target: 10, strategy: 'prune' }, /^placeholder must be a non-empty string .*, got 42/],
  ['placeholder', '[gone]', { target: 10 }, /^placeholder only applies with strategy prune/],
  ['note', 42, { target: 10 }, /^note must be a string, a template .*, or null or '' for no note, got 42/],
  ['note', false, { target: 10 }, /^note must be a string, .*, got false/],
  ['note', ['Dropped {num_removed}.'], { target: 10 }, /^note must be a string, .*, got an array/],
  ['note', '{num_removed}', { target: 10 }, /^note needs text besides \{num_removed\}/],
  ['createNote', 'HumanMessage', { target: 10 }, /^createNote must be a function .*, got "HumanMessage"/],
  ['tokenizer', 42, { target: 10 }, /^unknown tokenizer 42 \(choose one of: o200k_base, /],
  ['tokenizer', 'gpt-4o', { target: 10 }, /^unknown tokenizer "gpt-4o"/],
  ['charsPerToken', '4', { target: 10, tokenizer: 'approx' }, /^charsPerToken must be a number, got "4"/],
  ['charsPerToken', 0, { target: 10, tokenizer: 'approx' }, /^charsPerToken must be a positive finite number, got 0/],
  ['charsPerToken', 3.5, { target: 10 }, /^charsPerToken only applies to the approx tokenizer, not o200k_base/],
  ['tokensPerImage', '85', { target: 10 }, /^tokensPerImage must be a number, got "85"/],
  ['tokensPerImage', -1, { target: 10 }, /^tokensPerImage must be a whole number of at least 0, got -1/],
  ['tokensPerFile', 1.5, { target: 10 }, /^tokensPerFile must be a whole number of at least 0, got 1.5/],
  ['tokensPerFile', null, { target: 10 }, /^tokensPerFile must be a number, got null/],
  ['counter', 'o200k_base', { target: 10 }, /^counter must be a TokenCounter .*, got "o200k_base"/],
  ['counter', { name: 'mine' }, { target: 10 }, /^counter must be a TokenCounter/],
  [
    'counter',
    { name: 'mine', measure: () => 0 },
    { target: 10, tokenizer: 'approx' },
    /^tokenizer sets up the built-in counter, which counter replaces/,
  ],
  [
    'counter',
    { name: 'mine', measure: () => 0 },
    { target: 10, tokensPerImage: 100 },
    /^tokensPerImage sets up the built-in counter, which counter replaces/,
  ],
  ['system', 42, { target: 10 }, /^system must be the instructions as your SDK takes them .*, got 42/],
  ['system', () => 'Be brief.', { target: 10 }, /^system must be the instructions .*, got a function/],
  ['system', { text: 1n }, { target: 10 }, /^system must be the instructions as JSON: /],
  [
    'system',
    'Be brief.',
    { target: 10, format: 'openai' },
    /^system: the openai format keeps its instructions in the message list/,
  ],
  [
    'tools',
    'search',
    { contextWindow: 1000 },
    /^tools must be the JSON tool schemas sent to the model \(an array or an object\), got "search"/,
  ],
  ['tools', 3, { contextWindow: 1000 }, /^tools must be the JSON tool schemas .*, got 3/],
  ['summarize', 'gpt-4o', { target: 10 }, /^strategy summarize needs the summarize option: an async function/],
  [
    'summaryTokens',
    0,
    { target: 10, summarize: async () => 'x' },
    /^summaryTokens must be a whole number of at least 1, got 0/,
  ],
  ['summaryTokens', 5, { target: 10 }, /^summaryTokens only applies with strategy summarize/],
  [
    'summaryInstruction',
    '',
    { target: 10, summarize: async () => 'x' },
    /^summaryInstruction must be a non-empty string/,
  ],
  ['strict', 'yes', { target: 10, summarize: async () => 'x' }, /^strict must be true or false, got "yes"/],
  [
    'minRetention',
    1.5,
    { target: 10, summarize: async () => 'x' },
    /^minRetention must be a share from 0 to 1, got 1.5/,
  ],
  [
    'minRetention',
    '80%',
    { target: 10, summarize: async () => 'x' },
    /^minRetention must be a share from 0 to 1, got "80%"/,
  ],
  ['minRetention', 0.5, { target: 10 }, /^minRetention only applies with strategy summarize/],
  ['assumeUnchanged', 'yes', { target: 10 }, /^assumeUnchanged must be true or false, got "yes"/],
];

/** What each entry point does with options: createCompactor and compactMessages reject, swcPrepareStep throws at once. */
async function errorOf(options: unknown): Promise<unknown[]> {
  const errors: unknown[] = [];
  for (const make of [
    () => createCompactor(options as CompactorOptions),
    () => compactMessages([{ role: 'user', content: 'hi' }], options as CompactorOptions),
  ]) {
    try {
      await make();
      errors.push(null);
    } catch (error) {
      errors.push(error);
    }
  }
  try {
    swcPrepareStep(options as CompactorOptions);
    errors.push(null);
  } catch (error) {
    errors.push(error);
  }
  return errors;
}

describe('the options of createCompactor, compactMessages and swcPrepareStep', () => {
  it('have a row of bad values for every option', () => {
    expect([...new Set(BAD.map(([name]) => name))].sort()).toEqual([...EVERY_OPTION].sort());
  });

  it.each(
    BAD.map(
      ([name, value, rest, message]) =>
        [
          name,
          typeof value === 'function'
            ? 'a function'
            : (JSON.stringify(value, (_, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v)) ?? String(value)),
          { ...rest, [name]: value },
          message,
        ] as const,
    ),
  )('refuse %s: %s with a OptionsError that names it', async (_name, _shown, options, message) => {
    for (const error of await errorOf(options)) {
      expect(error).toBeInstanceOf(OptionsError);
      expect((error as OptionsError).message).toMatch(message);
    }
  });

  it.each([
    ['no options', undefined],
    ['null', null],
    ['an empty object', {}],
  ])('refuse %s with the OptionsError that asks for a budget', async (_, options) => {
    for (const error of await errorOf(options)) {
      expect(error).toBeInstanceOf(OptionsError);
      expect((error as OptionsError).message).toBe('give target (a token budget) or contextWindow');
    }
  });

  it.each([
    [
      'a number',
      8000,
      /^options must be an object of settings, such as \{ target: 8000 \} or \{ contextWindow: 128000 \}, got 8000$/,
    ],
    ['a string', 'target=8000', /, got "target=8000"$/],
    ['an array', [{ target: 8000 }], /, got an array$/],
  ])('refuse options that are %s', async (_, options, message) => {
    for (const error of await errorOf(options)) {
      expect(error).toBeInstanceOf(OptionsError);
      expect((error as OptionsError).message).toMatch(message);
    }
  });

  it('refuse a misspelt option instead of ignoring it, suggesting the one meant', async () => {
    for (const error of await errorOf({ contextwindow: 128_000 }))
      expect((error as Error).message).toBe('unknown option "contextwindow" (did you mean contextWindow?)');
    for (const error of await errorOf({ target: 10, budget: 5 }))
      expect((error as Error).message).toMatch(/^unknown option "budget" \(options: format, target, contextWindow, /);
  });

  it('take every option when it is right, and treat one set to undefined as not given', async () => {
    const counter = { name: 'fixed', measure: (rendered: readonly unknown[]) => rendered.length * 10 };
    const all: CompactorOptions = {
      format: 'openai',
      contextWindow: 1000,
      compactAt: 0.5,
      compactTo: 0.25,
      minKeepSteps: 1,
      strategy: 'prune,window',
      minTokens: 0,
      placeholder: '[pruned {tool_name}]',
      note: 'Dropped {num_removed}.',
      createNote: (text) => ({ role: 'user', content: text }),
      counter,
      tools: [{ type: 'function', function: { name: 'search', parameters: {} } }],
      system: undefined,
      tokenizer: undefined,
    };
    expect(await errorOf(all)).toEqual([null, null, null]);
    expect(
      await errorOf({
        target: 10,
        tokenizer: 'approx',
        charsPerToken: 3.5,
        tokensPerImage: 0,
        tokensPerFile: 0,
        system: 'Be brief.',
        format: 'anthropic',
      }),
    ).toEqual([null, null, null]);
  });
});
