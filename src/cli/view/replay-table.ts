import type { ChalkInstance } from 'chalk';
import type { ReplayPolicy, ReplayRun, ReplayRuns, ReplayTotal } from '../../replay/types.js';
import { cutStartToWidth, cutToWidth, displayWidth, wrapToWidth } from './text-width.js';

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

/** A column of a table: its header in full and shortened, and each row's cell given the chart's cells. */
interface Column {
  readonly key: Key;
  readonly full: string;
  readonly short: string;
  readonly cells: (chartCells: number) => readonly string[];
}

/** How a table is drawn: which columns, with which headers, and the chart's cells. */
interface Fit {
  readonly columns: readonly Column[];
  readonly short: boolean;
  readonly chartCells: number;
}

/**
 * The columns a narrow terminal loses first, in order, until the table fits (`git log --oneline` keeps the hash and
 * the subject): the call count is in the heading already, the cache figures are parts of the input and priced in
 * the cost, the mean follows the peak; the chart goes before the figures it draws; the policy always stays.
 */
const DROP_ORDER: readonly Key[] = [
  'calls',
  'cacheWrite',
  'cacheRead',
  'mean',
  'input',
  'usersRemoved',
  'chart',
  'lost',
  'cost',
  'overflows',
  'peak',
  'compactions',
];

/** The fewest cells a shortened chart keeps: narrower than that, columns go instead (the chart among them). */
const MIN_CHART_CELLS = 8;

/** A table's lines at the widest: every column, headers in full, the whole chart, every line as long as it is. */
const WHOLE = Number.POSITIVE_INFINITY;

/** The columns' widths, in terminal columns (colour is not counted). */
function widthsOf(fit: Fit): number[] {
  return fit.columns.map((c) =>
    Math.max(displayWidth(fit.short ? c.short : c.full), ...c.cells(fit.chartCells).map((x) => displayWidth(x))),
  );
}

/** A table's width: its columns' and the two spaces between each two. */
function widthOf(fit: Fit): number {
  const widths = widthsOf(fit);
  return widths.reduce((a, b) => a + b, 0) + 2 * Math.max(0, widths.length - 1);
}

/**
 * The widest drawing of the table that fits `width`: whole when it fits; else shortened headers, the chart shrunk
 * (to no fewer than `MIN_CHART_CELLS` cells), then columns dropped in `DROP_ORDER`. A table that does not fit with
 * the policy alone (a very long policy name) is cut when its lines are laid out.
 */
function fitTable(columns: readonly Column[], width: number): Fit {
  const whole: Fit = { columns, short: false, chartCells: CHART_CELLS };
  if (widthOf(whole) <= width) return whole;
  let shown = columns;
  for (let dropped = 0; ; dropped++) {
    for (let cells = CHART_CELLS; cells >= MIN_CHART_CELLS; cells--) {
      const fit: Fit = { columns: shown, short: true, chartCells: cells };
      if (widthOf(fit) <= width) return fit;
      // Without a chart, the cells change nothing.
      if (!shown.some((c) => c.key === 'chart')) break;
    }
    const next = DROP_ORDER[dropped];
    if (next === undefined) return { columns: shown, short: true, chartCells: MIN_CHART_CELLS };
    shown = shown.filter((c) => c.key !== next);
  }
}

/** Lays out a table fitted to `width`: names and the chart aligned left, numbers right, no line past `width`. */
function table(columns: readonly Column[], rows: number, width: number, color: ChalkInstance): string[] {
  const fit = fitTable(columns, width);
  const widths = widthsOf(fit);
  const cells = fit.columns.map((c) => c.cells(fit.chartCells));
  const line = (row: (c: number) => string): string =>
    fit.columns
      .map((_, c) => {
        const cell = row(c);
        const pad = ' '.repeat(Math.max(0, (widths[c] as number) - displayWidth(cell)));
        // Names and the chart read from the left, numbers from the right.
        const key = fit.columns[c]!.key;
        return key === 'policy' || key === 'chart' ? cell + pad : pad + cell;
      })
      .join('  ')
      .trimEnd();
  // Only a policy name wider than the terminal, in a table of nothing else, is left too wide: cut, as a dry run cuts
  // a preview.
  const cell = (c: number, r: number): string => {
    const text = cells[c]![r] ?? '';
    return displayWidth(text) > width ? cutToWidth(text, width) : text;
  };
  const header = line((c) => (fit.short ? fit.columns[c]!.short : fit.columns[c]!.full));
  return [
    color.bold(displayWidth(header) > width ? cutToWidth(header, width) : header),
    ...Array.from({ length: rows }, (_, r) => line((c) => cell(c, r))),
  ];
}

/** Each column's key, its header in full and shortened (the JSON names the same figures). */
const HEADERS = {
  policy: ['policy', 'policy'],
  calls: ['calls', 'calls'],
  compactions: ['compactions', 'compacts'],
  peak: ['peak', 'peak'],
  mean: ['mean', 'mean'],
  overflows: ['overflows', 'overflow'],
  input: ['input', 'input'],
  cacheRead: ['cache read', 'cached'],
  cacheWrite: ['cache write', 'written'],
  cost: ['cost', 'cost'],
  lost: ['lost', 'lost'],
  usersRemoved: ['users removed', 'users'],
  chart: ['context over the run', 'context'],
} as const;

type Key = keyof typeof HEADERS;

/** A column whose cells are drawn for a chart of a given number of cells (only the chart's depend on it). */
const column = (key: Key, cells: (chartCells: number) => readonly string[]): Column => ({
  key,
  full: HEADERS[key][0],
  short: HEADERS[key][1],
  cells,
});

/** Columns of figures that do not depend on the chart, one cell per row, in the order given. */
function columnsOf<T>(rows: readonly T[], picks: readonly (readonly [Key, (row: T) => string])[]): Column[] {
  return picks.map(([key, pick]) => {
    const cells = rows.map(pick);
    return column(key, () => cells);
  });
}

/** A run's columns, one row per policy. */
function policyColumns(run: ReplayRun, color: ChalkInstance): Column[] {
  const chart = (cells: number): string[] =>
    run.policies.map((p) =>
      sparkline(
        p.calls.map((c) => c.tokens),
        run.contextWindow,
        color,
        cells,
      ),
    );
  return [
    ...columnsOf<ReplayPolicy>(run.policies, [
      ['policy', (p) => p.strategy],
      ['calls', (p) => n(p.calls.length)],
      ['compactions', (p) => n(p.compactions.length)],
      ['peak', (p) => n(p.peakTokens)],
      ['mean', (p) => n(p.meanTokens)],
      ['overflows', (p) => (p.overflows > 0 ? color.red(n(p.overflows)) : '0')],
      ['input', (p) => n(p.inputTokens)],
      ['cacheRead', (p) => n(p.cacheReadTokens)],
      ['cacheWrite', (p) => n(p.cacheWriteTokens)],
      ['cost', (p) => money(p.cost.total, run.prices.currency)],
      ['lost', (p) => (p.lost.length > 0 ? color.yellow(n(p.lost.length)) : '0')],
      ['usersRemoved', (p) => n(p.removedUserMessages.length)],
    ]),
    column('chart', chart),
  ];
}

/**
 * A line of text wrapped to `width` at spaces, later lines indented by two; `lead`, the line's first words, styled
 * where it stands whole on the first line.
 */
function wrapped(text: string, width: number, lead: string, style: (x: string) => string): string[] {
  const lines = width === WHOLE ? [text] : wrapToWidth(text, width, '  ');
  const first = lines[0] as string;
  if (lead !== '' && first.startsWith(lead)) lines[0] = style(lead) + first.slice(lead.length);
  return lines;
}

/** The first lost-then-needed identifiers of a policy, for the lines under the table. */
function lostLines(run: ReplayRun, color: ChalkInstance, width: number, shown = 5): string[] {
  const out: string[] = [];
  for (const p of run.policies) {
    if (p.lost.length === 0) continue;
    const list = p.lost
      .slice(0, shown)
      .map((l) => `${l.identifier} (left before call ${l.leftAt + 1}, needed at message ${l.neededAt + 1})`);
    const more = p.lost.length > shown ? `, and ${n(p.lost.length - shown)} more` : '';
    const lead = 'lost, then needed';
    out.push(...wrapped(`${lead} with ${p.strategy}: ${list.join(', ')}${more}`, width, lead, color.yellow));
  }
  return out;
}

/** The run as the file recorded it, beside the replays. */
function recordedLines(run: ReplayRun, width: number): string[] {
  const r = run.recorded;
  if (r === null) return [];
  const text = `as recorded: ${n(r.calls)} calls, ${n(r.inputTokens)} input tokens (${n(r.cacheReadTokens)} cache read, ${n(r.cacheWriteTokens)} cache write), ${n(r.outputTokens)} output (the provider's own counts)`;
  return wrapped(text, width, '', (x) => x);
}

/**
 * One run's block: a heading, the table, what was recorded, what was lost and needed again, fitted to `width`
 * terminal columns (the heading and the lines under the table wrap; the table drops columns, see `fitTable`).
 */
export function renderReplayRun(
  run: ReplayRun,
  color: ChalkInstance,
  width: number = WHOLE,
  notes: readonly string[] = [],
): string {
  const calls = run.policies[0]?.calls.length ?? 0;
  // A path wider than the terminal keeps its end, which tells runs apart.
  const file = displayWidth(run.file) > width ? cutStartToWidth(run.file, width) : run.file;
  const heading = `${file} (${run.format}): ${n(calls)} LLM call${calls === 1 ? '' : 's'}, window ${n(run.contextWindow)}, compacts from ${n(run.trigger)} to ${n(run.target)} tokens (${run.tokenizer}), priced as ${run.prices.name}`;
  return [
    ...wrapped(heading, width, file, color.bold),
    ...table(policyColumns(run, color), run.policies.length, width, color),
    ...recordedLines(run, width),
    ...lostLines(run, color, width),
    ...notes.flatMap((x) => wrapped(`note: ${x}`, width, '', (l) => l)).map((l) => color.dim(l)),
  ]
    .join('\n')
    .concat('\n');
}

/** The totals' columns, one row per policy. */
function totalColumns(totals: readonly ReplayTotal[], currency: string, color: ChalkInstance): Column[] {
  return columnsOf<ReplayTotal>(totals, [
    ['policy', (t) => t.strategy],
    ['calls', (t) => n(t.calls)],
    ['compactions', (t) => n(t.compactions)],
    ['overflows', (t) => (t.overflows > 0 ? color.red(n(t.overflows)) : '0')],
    ['input', (t) => n(t.inputTokens)],
    ['cacheRead', (t) => n(t.cacheReadTokens)],
    ['cacheWrite', (t) => n(t.cacheWriteTokens)],
    ['cost', (t) => money(t.cost.total, currency)],
    ['lost', (t) => n(t.lost)],
    ['usersRemoved', (t) => n(t.removedUserMessages)],
  ]);
}

/**
 * Every run's block, then the totals across runs (several runs) and the notes.
 * @param report one run or several
 * @param color the colour instance (plain when the stream is not a terminal)
 * @param width the terminal's columns: no line is wider; omitted, the whole table with lines as long as they are
 * @param shown which runs get a block (`--changed-only`); the totals are over every run
 * @returns the text, ending in a newline
 */
export function renderReplay(
  report: ReplayRun | ReplayRuns,
  color: ChalkInstance,
  width: number = WHOLE,
  shown: (run: ReplayRun) => boolean = () => true,
): string {
  const all = 'runs' in report ? report.runs : [report];
  const runs = all.filter(shown);
  // Notes every run has are said once at the end; a run's own (why summarize compacted nothing) under its table.
  const common = (all[0]?.notes ?? []).filter((x) => all.every((r) => r.notes.includes(x)));
  const blocks = runs.map((r) =>
    renderReplayRun(
      r,
      color,
      width,
      r.notes.filter((x) => !common.includes(x)),
    ),
  );
  if ('runs' in report && all.length > 1) {
    const currency = all[0]?.prices.currency ?? 'USD';
    const hidden = all.length - runs.length;
    const heading = `total over ${n(all.length)} runs${hidden > 0 ? ` (${n(hidden)} that no policy changed not shown)` : ''}`;
    blocks.push(
      [
        ...wrapped(heading, width, heading, color.bold),
        ...table(totalColumns(report.totals, currency, color), report.totals.length, width, color),
      ].join('\n') + '\n',
    );
  }
  const notes = common.flatMap((x) => wrapped(`note: ${x}`, width, '', (l) => l));
  return blocks.join('\n') + (notes.length > 0 ? `\n${notes.map((l) => color.dim(l)).join('\n')}\n` : '');
}
