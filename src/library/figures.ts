import { withFields, type Plan } from '../core/compact.js';
import { lazyList } from '../core/lazy-list.js';
import { renderMessage } from '../core/render.js';
import type { Message, TokenCounter } from '../core/types.js';
import type { Normalized } from '../formats/types.js';
import { groupTokens, noteTokensOf, tokenFigures, type TokenFigures } from '../outcome/figures.js';
import type { Planned } from '../outcome/outcome.js';

/**
 * The plan with `tokensBefore` an estimate of the whole conversation where the decision stopped counting early, as
 * the command line's `≈`: the kept messages' exact tokens as they were read plus an estimate of the removed ones, never below the decision's own lower bound. Worked out the first time it is read: a loop that never
 * reads it never pays for it.
 */
export function withEstimatedBefore(
  plan: Plan,
  normalized: Normalized,
  counter: TokenCounter,
  small: () => boolean,
): Plan {
  if (plan.tokensBeforeExact) return plan;
  let tokensBefore: number | null = null;
  let exact: boolean | null = null;
  return withFields(plan, {
    // Counted exactly up to the size the command line counts exactly (EXACT_COUNT_UP_TO), estimated above.
    get tokensBeforeExact(): boolean {
      exact ??= small();
      return exact;
    },
    get tokensBefore(): number {
      if (tokensBefore === null && this.tokensBeforeExact) {
        // Read now, not when the plan was made: a warm compactor's list may have grown since (see Normalized).
        const { messages } = normalized;
        tokensBefore = counter.measure(lazyList(messages.length, (k) => renderMessage(messages[k] as Message)));
      }
      if (tokensBefore === null) {
        // The kept messages as they were read (a chain may have pruned or offloaded some of them), counted exactly.
        const kept =
          plan.kept.length === 0
            ? 0
            : counter.measure(
                lazyList(plan.kept.length, (k) =>
                  renderMessage(normalized.messages[plan.kept[k] as number] as Message),
                ),
              );
        tokensBefore = Math.max(plan.tokensBefore, kept + removedTokens(plan.removed, normalized.messages, counter));
      }
      return tokensBefore;
    },
  });
}

/** Whether texts add up to at most `limit` characters. */
export function isWithin(texts: readonly string[], limit: number): boolean {
  let total = 0;
  for (const t of texts) if ((total += t.length) > limit) return false;
  return true;
}

/** Rendered characters of removed messages counted exactly for an estimate: about 16,000 tokens. */
const SAMPLE_CHARS = 64_000;

/**
 * An estimate of the removed messages' tokens: their rendered text (what is counted: not a Claude Code line's
 * metadata, nor JSON's escapes) at the tokens per character of an exactly counted sample of them, every k-th message,
 * so that tool results and prose weigh in as often as they occur; their images and files at the counter's flat
 * costs. All of them are counted when their text is within the sample's size.
 */
function removedTokens(removed: readonly number[], messages: readonly Message[], counter: TokenCounter): number {
  const texts: string[] = [];
  const media = { text: '', images: 0, files: 0 };
  let length = 0;
  for (const i of removed) {
    const r = renderMessage(messages[i] as Message);
    texts.push(r.text);
    length += r.text.length;
    media.images += r.images;
    media.files += r.files;
  }
  const mediaTokens = media.images + media.files > 0 ? counter.measure([media]) : 0;
  if (length === 0) return mediaTokens;
  const stride = Math.max(1, Math.round(length / SAMPLE_CHARS));
  let sampleTokens = 0;
  let sampleLength = 0;
  for (let k = 0; k < texts.length; k += stride) {
    const text = texts[k] as string;
    if (text === '') continue;
    sampleTokens += counter.measure([{ text, images: 0, files: 0 }]);
    sampleLength += text.length;
  }
  const rate = sampleLength > 0 ? sampleTokens / sampleLength : 1 / FALLBACK_CHARS_PER_TOKEN;
  return sampleTokens + Math.round((length - sampleLength) * rate) + mediaTokens;
}

/** Characters per token an estimate assumes when no sampled message has text (Haystack's 4). */
const FALLBACK_CHARS_PER_TOKEN = 4;

/**
 * The plan with its groups' tokens as every output shows them (a removed group as it was read, a kept one as the
 * output holds it), and the compaction's figures (src/outcome/figures.ts), which add up as the command line's do:
 * before = after + what pruning saved + what was removed − the note − the summaries. Each is worked out when first read.
 * @param plan the chain's plan, its tokens before already the whole's (see `withEstimatedBefore`)
 * @param read the conversation as it was read
 * @param decided the conversation as decided (pruned results hold their placeholders)
 * @param chain with summarize, the output's messages and the summaries it holds
 */
export function withChainFigures(
  plan: Plan,
  read: Normalized,
  decided: Normalized,
  counter: TokenCounter,
  chain: Pick<Planned, 'output' | 'summarized'>,
): { plan: Plan; figures: () => TokenFigures } {
  const planned: Planned = { plan, normalized: decided, target: 0, toolTokens: 0, input: read.messages, ...chain };
  let figures: TokenFigures | undefined;
  const figuresOf = (): TokenFigures =>
    (figures ??= tokenFigures(
      planned,
      { tokens: plan.tokensBefore, exact: plan.tokensBeforeExact },
      noteTokensOf(plan, counter, chain.output),
      counter,
    ));
  if (read.messages === decided.messages) return { plan, figures: figuresOf };
  let groups: Plan['groups'] | undefined;
  const shown = withFields(plan, {
    get groups(): Plan['groups'] {
      if (groups === undefined) {
        const tokens = groupTokens(planned, counter);
        groups = plan.groups.map((g, k) => ({ ...g, tokens: tokens[k] ?? null }));
      }
      return groups;
    },
  });
  return { plan: shown, figures: figuresOf };
}

/** A result with `figures` as a getter: worked out when first read, and never by a spread of the result. */
export function withFigures<T extends object>(result: T, figures: () => TokenFigures): T & { figures: TokenFigures } {
  return Object.defineProperty(result, 'figures', { get: figures, enumerable: true }) as T & { figures: TokenFigures };
}
