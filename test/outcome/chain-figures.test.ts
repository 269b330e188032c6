/**
 * The library's figures of a chain: in the input's terms, adding up (before = after + what pruning saved + what was
 * removed − the note), and the removed messages' tokens the window alone's when a chain removes the same messages.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { compactMessages, type CompactedMessages } from '../../src/index.js';
import { conversationArb, openaiCodec } from '../helpers/conversation-arbitraries.js';
import { writeLine } from '../helpers/json-text.js';
import { scaled, scaledCount } from '../helpers/scale.js';

/** A conversation as the OpenAI chat messages an SDK holds. */
const messagesArb = conversationArb.map((conversation) =>
  openaiCodec.encode(conversation).items.map((n) => JSON.parse(writeLine(n, { colon: ':', comma: ',' })) as unknown),
);

/** The groups that go: their messages and tokens. */
function removedGroups(r: CompactedMessages<unknown>): { indices: readonly number[]; tokens: number | null }[] {
  return r.plan.groups
    .filter((g) => !g.kept && g.kind !== 'note')
    .map((g) => ({ indices: g.indices, tokens: g.tokens }));
}

/** Whether the figures add up, the note's and the summaries' own tokens taken off. */
function expectAddsUp(r: CompactedMessages<unknown>): void {
  const f = r.figures;
  expect(f.before).toEqual({ tokens: r.plan.tokensBefore, exact: r.plan.tokensBeforeExact });
  expect(f.after).toBe(r.plan.tokensAfter);
  expect(f.before.tokens).toBe(f.after + f.saved.pruned + f.saved.offloaded + f.removed.tokens - f.note - f.summaries);
}

/** What some messages cost measured together, as the library counts a conversation that fits. */
async function tokensOf(messages: readonly unknown[]): Promise<number> {
  if (messages.length === 0) return 0;
  const r = await compactMessages(messages, { target: 1e9, tokenizer: 'approx', format: 'openai' });
  return r.plan.tokensBefore;
}

/** Whether an OpenAI message is a summary the chain wrote. */
const isSummary = (m: unknown): boolean =>
  typeof (m as { content?: unknown }).content === 'string' &&
  (m as { content: string }).content.startsWith('<conversation_summary>');

describe("the library's figures of a chain", () => {
  it('add up, and count the removed messages as the window alone does', async () => {
    await fc.assert(
      fc.asyncProperty(messagesArb, fc.integer({ min: 1, max: 400 }), async (messages, target) => {
        const options = { target, tokenizer: 'approx' as const, format: 'openai' as const };
        const window = await compactMessages(messages, options);
        const chain = await compactMessages(messages, {
          ...options,
          strategy: 'prune,window',
          minTokens: 0,
          placeholder: '-',
        });
        expectAddsUp(window);
        expectAddsUp(chain);
        expect(window.figures.saved).toEqual({ pruned: 0, offloaded: 0 });
        // A plain decision stops counting a group once past the budget, so the groups' counts are not compared.
        if (JSON.stringify(window.plan.removed) === JSON.stringify(chain.plan.removed)) {
          expect(removedGroups(chain).map((g) => g.indices)).toEqual(removedGroups(window).map((g) => g.indices));
          expect(chain.figures.removed).toEqual(window.figures.removed);
        }
      }),
      { numRuns: scaled(150) },
    );
  }, 120_000);

  it("add up with summarize, the summaries' tokens those of the summaries the output holds", async () => {
    let withSummaries = 0;
    await fc.assert(
      fc.asyncProperty(
        messagesArb,
        fc.integer({ min: 1, max: 400 }),
        fc.constantFrom('summarize', 'summarize,window', 'prune,summarize'),
        async (messages, target, strategy) => {
          let calls = 0;
          const r = await compactMessages(messages, {
            target,
            tokenizer: 'approx',
            format: 'openai',
            strategy,
            summaryTokens: 20,
            summarize: async () => `summary ${calls++} of what went`,
            ...(strategy.includes('prune') ? { minTokens: 0, placeholder: '-' } : {}),
          });
          expectAddsUp(r);
          const summaries = r.messages.filter(isSummary);
          if (summaries.length > 0) withSummaries++;
          expect(r.figures.summaries).toBe(await tokensOf(summaries));
        },
      ),
      { numRuns: scaled(100) },
    );
    expect(withSummaries).toBeGreaterThan(scaledCount(10, 100));
  }, 120_000);
});
