import type { ChalkInstance } from 'chalk';
import type { ReplayPolicy, ReplayRun, ReplayRuns, ReplayTotal } from '../../replay/types.js';
import { displayWidth } from './text-width.js';

/** `swc replay`'s table: one row per policy with a chart of context size over the run, then the totals of many runs. */

const BARS = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'] as const;

/** Columns of the chart. */
const CHART_CELLS = 24;

const n = (x: number): string => Math.round(x).toLocaleString('en-US');

/** Money with enough digits to tell small runs apart. */
function money(x: number, currency: string): string {
  const sign = currency === 'USD' ? '$' : `${currency} `;
  return `${sign}${x < 1 ? x.toFixed(4) : x.toFixed(2)}`;
}

/**
 * The context size over the run as a sparkline: each cell the largest call it covers, the full block the window;
 * a cell that holds an overflowing call is painted as bad.
 */
export function sparkline(
  tokens: readonly number[],
  window: number,
  color: ChalkInstance,
  cells = CHART_CELLS,
): string {
  if (tokens.length === 0) return '';
  const width = Math.min(cells, tokens.length);
  let out = '';
  for (let c = 0; c < width; c++) {
    const from = Math.floor((c * tokens.length) / width);
    const to = Math.max(from + 1, Math.floor(((c + 1) * tokens.length) / width));
    let peak = 0;
    for (let i = from; i < to; i++) peak = Math.max(peak, tokens[i] as number);
    const level = Math.min(BARS.length - 1, Math.max(0, Math.ceil((peak / window) * BARS.length) - 1));
    const bar = BARS[level] as string;
    out += peak > window ? color.red(bar) : bar;
  }
  return out;
}

/** Lays out rows of cells, numbers right-aligned, the last column left as it is. */
function table(header: readonly string[], rows: readonly (readonly string[])[], color: ChalkInstance): string[] {
  const widths = header.map((h, c) => Math.max(displayWidth(h), ...rows.map((r) => displayWidth(r[c] ?? ''))));
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, c) => {
        const pad = ' '.repeat(Math.max(0, (widths[c] as number) - displayWidth(cell)));
        if (c === cells.length - 1) return cell;
        return c === 0 ? cell + pad : pad + cell;
      })
      .join('  ')
      .trimEnd();
  return [color.bold(line(header)), ...rows.map(line)];
}

/** One policy's row. */
function policyRow(p: ReplayPolicy, run: ReplayRun, color: ChalkInstance): string[] {
  return [
    p.strategy,
    n(p.calls.length),
    n(p.compactions.length),
    n(p.peakTokens),
    n(p.meanTokens),
    p.overflows > 0 ? color.red(n(p.overflows)) : '0',
    n(p.inputTokens),
    n(p.cacheReadTokens),
    n(p.cacheWriteTokens),
    money(p.cost.total, run.prices.currency),
    p.lost.length > 0 ? color.yellow(n(p.lost.length)) : '0',
    n(p.removedUserMessages.length),
    sparkline(
      p.calls.map((c) => c.tokens),
      run.contextWindow,
      color,
    ),
  ];
}

const HEADER = [
  'policy',
  'calls',
  'compactions',
  'peak',
  'mean',
  'overflows',
  'input',
  'cache read',
  'cache write',
  'cost',
  'lost',
  'users removed',
  'context over the run',
];

/** The first lost-then-needed identifiers of a policy, for the lines under the table. */
function lostLines(run: ReplayRun, color: ChalkInstance, shown = 5): string[] {
  const out: string[] = [];
  for (const p of run.policies) {
    if (p.lost.length === 0) continue;
    const list = p.lost
      .slice(0, shown)
      .map((l) => `${l.identifier} (left before call ${l.leftAt + 1}, needed at message ${l.neededAt + 1})`);
    const more = p.lost.length > shown ? `, and ${n(p.lost.length - shown)} more` : '';
    out.push(`${color.yellow('lost, then needed')} with ${p.strategy}: ${list.join(', ')}${more}`);
  }
  return out;
}

/** The run as the file recorded it, beside the replays. */
function recordedLines(run: ReplayRun): string[] {
  const r = run.recorded;
  if (r === null) return [];
  return [
    `as recorded: ${n(r.calls)} calls, ${n(r.inputTokens)} input tokens (${n(r.cacheReadTokens)} cache read, ${n(r.cacheWriteTokens)} cache write), ${n(r.outputTokens)} output (the provider's own counts)`,
  ];
}

/** One run's block: a heading, the table, what was lost and needed again. */
export function renderReplayRun(run: ReplayRun, color: ChalkInstance): string {
  const calls = run.policies[0]?.calls.length ?? 0;
  const heading = `${color.bold(run.file)} (${run.format}): ${n(calls)} LLM call${calls === 1 ? '' : 's'}, window ${n(run.contextWindow)}, compacts from ${n(run.trigger)} to ${n(run.target)} tokens (${run.tokenizer}), priced as ${run.prices.name}`;
  return [
    heading,
    ...table(
      HEADER,
      run.policies.map((p) => policyRow(p, run, color)),
      color,
    ),
    ...recordedLines(run),
    ...lostLines(run, color),
  ]
    .join('\n')
    .concat('\n');
}

/** The totals' row of one policy. */
function totalRow(t: ReplayTotal, currency: string, color: ChalkInstance): string[] {
  return [
    t.strategy,
    n(t.calls),
    n(t.compactions),
    t.overflows > 0 ? color.red(n(t.overflows)) : '0',
    n(t.inputTokens),
    n(t.cacheReadTokens),
    n(t.cacheWriteTokens),
    money(t.cost.total, currency),
    n(t.lost),
    n(t.removedUserMessages),
  ];
}

/** Every run's block, then the totals across runs (several runs) and the notes. */
export function renderReplay(report: ReplayRun | ReplayRuns, color: ChalkInstance): string {
  const runs = 'runs' in report ? report.runs : [report];
  const blocks = runs.map((r) => renderReplayRun(r, color));
  if ('runs' in report && runs.length > 1) {
    const currency = runs[0]?.prices.currency ?? 'USD';
    const header = [
      'policy',
      'calls',
      'compactions',
      'overflows',
      'input',
      'cache read',
      'cache write',
      'cost',
      'lost',
      'users removed',
    ];
    blocks.push(
      [
        color.bold(`total over ${n(runs.length)} runs`),
        ...table(
          header,
          report.totals.map((t) => totalRow(t, currency, color)),
          color,
        ),
      ].join('\n') + '\n',
    );
  }
  const notes = runs[0]?.notes ?? [];
  return blocks.join('\n') + (notes.length > 0 ? `\n${notes.map((x) => color.dim(`note: ${x}`)).join('\n')}\n` : '');
}
