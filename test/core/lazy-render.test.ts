/**
 * The decision renders (and so parses) a message only when a counter reads it: with a small target, history that
 * will be dropped is never rendered, whatever counter is used.
 */
import { describe, expect, it } from '@jest/globals';
import * as o200k from 'gpt-tokenizer/encoding/o200k_base';
import { planCompaction } from '../../src/core/compact.js';
import { textContent } from '../../src/core/render.js';
import type { Content, Message, Role, TokenCounter } from '../../src/core/types.js';
import { createApproxCounter } from '../../src/tokens/approx.js';
import { createBpeCounter } from '../../src/tokens/bpe.js';
import { createFakeCounter } from '../helpers/fake-counter.js';

/** A long session whose messages record when their lazy content is produced. */
function session(turns: number): { messages: Message[]; rendered: Set<number> } {
  const rendered = new Set<number>();
  const messages: Message[] = [];
  const add = (role: Role, text: string): void => {
    const k = messages.length;
    messages.push({
      role,
      content: (): Content => {
        rendered.add(k);
        return textContent(text);
      },
    });
  };
  add('system', 'You are careful.');
  for (let t = 0; t < turns; t++) {
    add('user', `Task ${t}: look at the logs of service ${t} and tell me what failed.`);
    add('assistant', `Service ${t} failed because its cache expired; I restarted it and the errors stopped.`);
  }
  return { messages, rendered };
}

const counters: Array<[string, () => TokenCounter]> = [
  ['approx', createApproxCounter],
  ['o200k_base', () => createBpeCounter('o200k_base', o200k)],
];

describe('planning against a small target', () => {
  it.each(counters)('renders only the newest messages it needs with the %s counter', (_name, make) => {
    const { messages, rendered } = session(5000);
    const plan = planCompaction(messages, make(), { target: 300 });
    expect(plan.changed).toBe(true);
    expect(plan.kept.length).toBeLessThan(40);
    // The instructions, the task and the kept turns, plus the turn that did not fit and the message that passed the target.
    expect(rendered.size).toBeLessThan(plan.kept.length + 6);
    for (const k of rendered) expect(k === 0 || k > messages.length - 50).toBe(true);
  });

  it('makes the same decision as when every message is rendered up front', () => {
    const lazy = session(300);
    const eager = session(300);
    for (const m of eager.messages) (m.content as () => Content)();
    const counter = createApproxCounter();
    const a = planCompaction(lazy.messages, counter, { target: 500 });
    const b = planCompaction(eager.messages, counter, { target: 500, exhaustive: true });
    expect(a.kept).toEqual(b.kept);
    expect(a.noteText).toBe(b.noteText);
    expect(a.tokensAfter).toBe(b.tokensAfter);
  });

  it('hands a counter that reads every message a list it can map, spread and index', () => {
    const { messages } = session(3);
    const fake = createFakeCounter(10);
    planCompaction(messages, fake, { target: 25 });
    expect(fake.calls[0]).toHaveLength(messages.length);
    expect(fake.calls[0]?.every((r) => typeof r.text === 'string')).toBe(true);
  });
});
