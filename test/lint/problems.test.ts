/**
 * A conversation's problems from what an adapter reports and the normalized messages: each kind of check, where
 * problems are placed, and their order.
 */
import { describe, expect, it } from '@jest/globals';
import { textContent } from '../../src/core/render.js';
import type { Content, Message } from '../../src/core/types.js';
import type { Pairing } from '../../src/formats/types.js';
import { checkMessages, emptinessOf, isEmptyAssistant } from '../../src/lint/messages.js';
import { findProblems, type ProblemInput } from '../../src/lint/problems.js';

const msg = (role: Message['role'], text = 'x'): Message => ({ role, content: textContent(text) });
const content = (over: Partial<Content>): Content => ({
  texts: [],
  toolCalls: [],
  results: [],
  images: 0,
  files: [],
  ...over,
});

describe('isEmptyAssistant', () => {
  it('flags an assistant message with no text, tool call, image or file', () => {
    expect(isEmptyAssistant({ role: 'assistant', content: content({}) })).toBe(true);
    expect(isEmptyAssistant({ role: 'assistant', content: content({ texts: ['', ' \n'] }) })).toBe(true);
  });

  it('accepts an assistant message with any one of them, and any message of another role', () => {
    expect(isEmptyAssistant(msg('assistant', 'Hi'))).toBe(false);
    expect(
      isEmptyAssistant({ role: 'assistant', content: content({ toolCalls: [{ name: 'f', arguments: '{}' }] }) }),
    ).toBe(false);
    expect(isEmptyAssistant({ role: 'assistant', content: content({ images: 1 }) })).toBe(false);
    expect(isEmptyAssistant({ role: 'assistant', content: content({ files: [null] }) })).toBe(false);
    expect(isEmptyAssistant({ role: 'user', content: content({}) })).toBe(false);
  });

  it('reads lazy content', () => {
    expect(isEmptyAssistant({ role: 'assistant', content: () => content({}) })).toBe(true);
  });

  it('tells a message with no text at all from one whose texts are empty or blank', () => {
    expect(emptinessOf({ role: 'assistant', content: content({}) })).toBe('empty');
    expect(emptinessOf({ role: 'assistant', content: content({ texts: ['', ' \n'] }) })).toBe('blank');
    expect(emptinessOf(msg('assistant', 'Hi'))).toBeNull();
    expect(emptinessOf({ role: 'user', content: content({}) })).toBeNull();
  });
});

describe('checkMessages', () => {
  const empty = 'assistant message has nothing in it (no text, tool call, image or file)';
  const blank = 'assistant message has only empty or blank text (no tool call, image or file)';
  const none: Message = { role: 'assistant', content: content({}) };

  it('names each empty assistant message by its index, and the rule it breaks', () => {
    expect(
      checkMessages([msg('user'), msg('assistant', ''), none, msg('assistant', 'ok'), msg('assistant', ' ')]),
    ).toEqual([
      { kind: 'empty-assistant', rule: 'blank-assistant', message: 1, text: blank },
      { kind: 'empty-assistant', rule: 'empty-assistant', message: 2, text: empty },
      { kind: 'empty-assistant', rule: 'blank-final-assistant', message: 4, text: blank },
    ]);
    expect(checkMessages([msg('user'), none])).toEqual([
      { kind: 'empty-assistant', rule: 'empty-final-assistant', message: 1, text: empty },
    ]);
  });
});

describe('findProblems', () => {
  // Items 0..4 on lines 1..5 at column 3; item 2 is of unknown role, so the messages are items 0, 1, 3, 4.
  const items = [0, 1, 3, 4];
  const base: ProblemInput = {
    format: 'openai',
    pairing: null,
    messages: [msg('user'), msg('assistant'), msg('tool'), msg('assistant')],
    messageOf: (item) => (items.includes(item) ? items.indexOf(item) : null),
    firstItemOf: (m) => items[m] ?? null,
    locate: (item) => ({ line: item + 1, column: 3 }),
  };

  it('finds nothing in a clean conversation, with or without pairing', () => {
    expect(findProblems(base)).toEqual([]);
    expect(
      findProblems({
        ...base,
        pairing: { calls: [{ item: 1, id: 'a', name: 'f' }], results: [{ item: 3, id: 'a', name: '' }] },
      }),
    ).toEqual([]);
  });

  it('places every kind of problem at its item, in file order', () => {
    const pairing: Pairing = {
      calls: [{ item: 1, id: 'a', name: 'f' }],
      results: [{ item: 4, id: 'b', name: '' }],
      unknownRoles: [
        { item: 2, role: 'narrator' },
        { item: 0, role: null },
      ],
      problems: [{ item: 3, text: 'a block the provider refuses' }],
    };
    const messages = [msg('user'), msg('assistant'), msg('tool'), msg('assistant', '')];
    const error = 'error' as const;
    expect(findProblems({ ...base, pairing, messages })).toEqual([
      {
        kind: 'unknown-role',
        severity: error,
        item: 0,
        text: 'not a message with a role (left out of the structure above)',
        message: 0,
        line: 1,
        column: 3,
      },
      {
        kind: 'missing-result',
        severity: error,
        item: 1,
        text: 'tool call "a" (f) has no result',
        message: 1,
        line: 2,
        column: 3,
      },
      {
        kind: 'unknown-role',
        severity: error,
        item: 2,
        text: 'unknown role "narrator" (left out of the structure above)',
        message: null,
        line: 3,
        column: 3,
      },
      {
        kind: 'format',
        severity: error,
        item: 3,
        text: 'a block the provider refuses',
        message: 2,
        line: 4,
        column: 3,
      },
      // OpenAI Chat Completions accepts an assistant message whose text is empty.
      {
        kind: 'empty-assistant',
        severity: 'warning',
        item: 4,
        message: 3,
        line: 5,
        column: 3,
        text: 'assistant message has only empty or blank text (no tool call, image or file)',
      },
      {
        kind: 'orphan-result',
        severity: error,
        item: 4,
        text: 'result for call id "b" answers no call',
        message: 3,
        line: 5,
        column: 3,
      },
    ]);
  });

  it('places a problem of a message held outside the list at the start of the file, at no item', () => {
    const messages = [{ role: 'assistant', content: content({}) } as Message, msg('user')];
    const problems = findProblems({ ...base, messages, firstItemOf: (m) => (m === 0 ? null : 0) });
    expect(problems).toEqual([
      {
        kind: 'empty-assistant',
        severity: 'error',
        item: -1,
        message: 0,
        line: 1,
        column: 1,
        text: 'assistant message has nothing in it (no text, tool call, image or file)',
      },
    ]);
  });

  it('points a duplicate id at the line of the call that first used it', () => {
    const pairing: Pairing = {
      calls: [
        { item: 1, id: 'a', name: 'f' },
        { item: 4, id: 'a', name: 'f' },
      ],
      results: [{ item: 3, id: 'a', name: '' }],
    };
    expect(findProblems({ ...base, pairing }).filter((p) => p.kind === 'duplicate-id')).toEqual([
      {
        kind: 'duplicate-id',
        severity: 'warning',
        item: 4,
        text: 'call id "a" (f) is already used by the call on line 2',
        message: 3,
        line: 5,
        column: 3,
      },
    ]);
  });

  it('judges the same problems by the provider of the format', () => {
    const pairing: Pairing = {
      calls: [
        { item: 1, id: 'a', name: 'f' },
        { item: 4, id: 'a', name: 'f' },
      ],
      results: [{ item: 3, id: 'a', name: '' }],
    };
    const severities = (format: string, of: Pairing = pairing) =>
      findProblems({ ...base, format, pairing: of }).map((p) => `${p.kind} ${p.severity}`);
    // The id used again in a later message: no provider rejects it; the call left without a result: every provider does.
    for (const format of ['openai', 'anthropic', 'claude-code', 'gemini', 'haystack', 'a format no table names'])
      expect(severities(format)).toEqual(['duplicate-id warning', 'missing-result error']);
    // Two calls of one message sharing an id: OpenAI Chat and Anthropic reject it, Gemini and Responses do not.
    const shared: Pairing = {
      calls: [
        { item: 1, id: 'a', name: 'f' },
        { item: 1, id: 'a', name: 'g' },
      ],
      results: [
        { item: 3, id: 'a', name: '' },
        { item: 3, id: 'a', name: '' },
      ],
    };
    expect(severities('openai', shared)).toEqual(['duplicate-id error']);
    expect(severities('anthropic', shared)).toEqual(['duplicate-id error']);
    expect(severities('claude-code', shared)).toEqual(['duplicate-id error']);
    expect(severities('gemini', shared)).toEqual(['duplicate-id warning']);
    expect(severities('haystack', shared)).toEqual(['duplicate-id warning']);
  });
});
