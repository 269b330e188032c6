/** Hand-made replay reports for the tests of the replay page (test/cli/replay-page.test.ts, test/e2e/replay-page.test.ts). */
import type {
  ReplayCall,
  ReplayCompaction,
  ReplayPolicy,
  ReplayPrices,
  ReplayRun,
  ReplayRuns,
  ReplayTotal,
} from '../../src/replay/types.js';

// ---------------------------------------------------------------------------------------------------------------
// Hand-made reports: a few policies replayed by a small model of the hook, so the figures hang together.

const HOSTILE = '</script><img src=x onerror="document.title=\'pwned\'">';

const PRICES: ReplayPrices = {
  name: 'example prices & <co>',
  currency: 'USD',
  input: 3,
  cacheRead: 0.3,
  cacheWrite: 3.75,
  output: 15,
  minCacheablePrefix: 1024,
  source: 'https://example.com/pricing, read 2026-01-01',
};

/** A policy's replay of a run whose history grows by `growth[i]` after call i, compacting to `target` at `trigger`. */
function replayed(growth: readonly number[], hook: { trigger: number; target: number; keep: number } | null) {
  const calls: ReplayCall[] = [];
  const compactions: ReplayCompaction[] = [];
  let history = 400;
  let previous = 0;
  growth.forEach((g, i) => {
    const compacted = hook !== null && history >= hook.trigger;
    if (compacted) {
      const after = Math.min(hook.target, Math.floor(history * hook.keep));
      compactions.push({ call: i, before: history, after, removed: 3 + (i % 4) });
      history = after;
    }
    const cacheRead = compacted || i === 0 ? 0 : previous;
    calls.push({
      message: 2 * i + 1,
      compacted,
      tokens: history,
      cacheRead,
      cacheWrite: history - cacheRead,
      output: 40 + (i % 7),
      overflow: history > 2000,
    });
    previous = history + 40 + (i % 7);
    history += g;
  });
  return { calls, compactions };
}

function policyOf(
  strategy: string,
  growth: readonly number[],
  hook: { trigger: number; target: number; keep: number } | null,
) {
  const { calls, compactions } = replayed(growth, hook);
  const sum = (pick: (c: ReplayCall) => number): number => calls.reduce((s, c) => s + pick(c), 0);
  const inputTokens = sum((c) => c.tokens);
  const cacheReadTokens = sum((c) => c.cacheRead);
  const cacheWriteTokens = sum((c) => c.cacheWrite);
  const outputTokens = sum((c) => c.output);
  const part = (tokens: number, price: number): number => (tokens * price) / 1_000_000;
  const cost = {
    input: part(inputTokens - cacheReadTokens - cacheWriteTokens, PRICES.input),
    cacheRead: part(cacheReadTokens, PRICES.cacheRead),
    cacheWrite: part(cacheWriteTokens, PRICES.cacheWrite),
    output: part(outputTokens, PRICES.output),
    total: 0,
  };
  cost.total = cost.input + cost.cacheRead + cost.cacheWrite + cost.output;
  const first = compactions[0];
  const policy: ReplayPolicy = {
    strategy,
    calls,
    compactions,
    peakTokens: Math.max(...calls.map((c) => c.tokens)),
    meanTokens: inputTokens / calls.length,
    overflows: calls.filter((c) => c.overflow).length,
    inputTokens,
    cacheReadTokens,
    cacheWriteTokens,
    outputTokens,
    summary: strategy.startsWith('summarize')
      ? { calls: compactions.length, promptTokens: 900 * compactions.length, replyTokens: 120 * compactions.length }
      : { calls: 0, promptTokens: 0, replyTokens: 0 },
    cost,
    lost:
      first === undefined
        ? []
        : [
            {
              identifier: 'src/cli/view/replay-page.ts',
              kind: 'path',
              leftAt: first.call,
              neededAt: 2 * first.call + 5,
            },
            { identifier: HOSTILE, kind: 'url', leftAt: first.call, neededAt: 2 * first.call + 9 },
          ],
    removedUserMessages:
      first === undefined
        ? []
        : [{ message: 2, call: first.call, preview: `Please keep the tests green ${HOSTILE} & don't "push"` }],
  };
  return policy;
}

export function runOf(
  file: string,
  growth: readonly number[],
  strategies: readonly string[],
  recorded = false,
): ReplayRun {
  const hook = { trigger: 1500, target: 1000 };
  return {
    file,
    format: 'openai',
    tokenizer: 'o200k_base',
    contextWindow: 2000,
    compactAt: 0.75,
    compactTo: 0.5,
    trigger: hook.trigger,
    target: hook.target,
    prices: PRICES,
    recorded: recorded
      ? {
          calls: growth.length,
          inputTokens: 51_234,
          cacheReadTokens: 40_000,
          cacheWriteTokens: 9_000,
          outputTokens: 1_234,
        }
      : null,
    // Each policy keeps its own share of the history at a compaction, so their lines part.
    policies: strategies.map((s, i) => policyOf(s, growth, s === 'none' ? null : { ...hook, keep: 0.75 - 0.06 * i })),
    notes: [
      'The recorded replies are taken as they were: a model may have answered a shorter history otherwise.',
      `A note naming ${HOSTILE}.`,
    ],
  };
}

const GROWTH = Array.from({ length: 48 }, (_, i) => 60 + ((i * 37) % 90));
export const RUN: ReplayRun = runOf(`runs/${HOSTILE}.jsonl`, GROWTH, ['none', 'window', 'prune', 'summarize'], true);

function totalsOf(runs: readonly ReplayRun[]): ReplayTotal[] {
  const strategies = runs[0]?.policies.map((p) => p.strategy) ?? [];
  return strategies.map((strategy) => {
    const ps = runs.map((r) => r.policies.find((p) => p.strategy === strategy) as ReplayPolicy);
    const sum = (pick: (p: ReplayPolicy) => number): number => ps.reduce((s, p) => s + pick(p), 0);
    return {
      strategy,
      calls: sum((p) => p.calls.length),
      compactions: sum((p) => p.compactions.length),
      overflows: sum((p) => p.overflows),
      inputTokens: sum((p) => p.inputTokens),
      cacheReadTokens: sum((p) => p.cacheReadTokens),
      cacheWriteTokens: sum((p) => p.cacheWriteTokens),
      outputTokens: sum((p) => p.outputTokens),
      cost: {
        input: sum((p) => p.cost.input),
        cacheRead: sum((p) => p.cost.cacheRead),
        cacheWrite: sum((p) => p.cost.cacheWrite),
        output: sum((p) => p.cost.output),
        total: sum((p) => p.cost.total),
      },
      lost: sum((p) => p.lost.length),
      removedUserMessages: sum((p) => p.removedUserMessages.length),
    };
  });
}

const SEVERAL_RUNS = [
  runOf('runs/a.jsonl', GROWTH.slice(0, 30), ['none', 'window']),
  runOf('runs/one-call.json', [100], ['none', 'window']),
  runOf('runs/c.jsonl', GROWTH, ['none', 'window'], true),
];
export const RUNS: ReplayRuns = { runs: SEVERAL_RUNS, totals: totalsOf(SEVERAL_RUNS) };
/** Nine policies: every series colour, and the first one again, dashed. */
export const MANY_POLICIES = runOf(
  'runs/many.jsonl',
  GROWTH,
  Array.from({ length: 9 }, (_, i) => `policy-${i}`),
);

// ---------------------------------------------------------------------------------------------------------------
// Reading the page as a string.

/** The one JSON block, parsed. */
export function embeddedReport(html: string): unknown {
  const m = /<script type="application\/json" id="replay-data">([\s\S]*?)<\/script>/.exec(html);
  expect(m).not.toBeNull();
  return JSON.parse((m as RegExpExecArray)[1] as string);
}

/** Character references back to characters: the decoder of an HTML reader, for the references the page writes. */
export function decodeText(text: string): string {
  return text
    .replace(/&#(\d+);/g, (_, n: string) => String.fromCodePoint(Number(n)))
    .replace(/&#x([0-9a-f]+);/gi, (_, n: string) => String.fromCodePoint(parseInt(n, 16)));
}

/** The cells of one table (by class) of one run's section: each row's strategy and its `data-field` values. */
export function tableFigures(html: string, table: string): Array<{ strategy: string; values: Record<string, number> }> {
  const body = new RegExp(`<table class="${table}">[\\s\\S]*?</table>`).exec(html)?.[0] ?? '';
  return [...body.matchAll(/<tr data-strategy="([^"]*)"[^>]*>([\s\S]*?)<\/tr>/g)].map((row) => ({
    strategy: decodeText(row[1] as string),
    values: Object.fromEntries(
      [...(row[2] as string).matchAll(/data-field="(\w+)" data-value="([^"]*)"/g)].map((c) => [c[1], Number(c[2])]),
    ),
  }));
}

export function expectedFigures(policy: ReplayPolicy): Record<string, number> {
  return {
    calls: policy.calls.length,
    compactions: policy.compactions.length,
    peakTokens: policy.peakTokens,
    meanTokens: policy.meanTokens,
    overflows: policy.overflows,
    inputTokens: policy.inputTokens,
    cacheReadTokens: policy.cacheReadTokens,
    cacheWriteTokens: policy.cacheWriteTokens,
    outputTokens: policy.outputTokens,
    cost: policy.cost.total,
  };
}
