import type { ReplayPolicy, ReplayRun, ReplayRuns, ReplayTotal } from '../../replay/types.js';
import { formatCount } from '../result-line.js';
import { isChangedRun, runChangesLine } from './replay-changes.js';

// `swc replay --report FILE.html`: one self-contained page (no network, no script, no external style) drawn from the
// report. Every string of the report comes from untrusted transcripts, so each is escaped where it is written; the
// report itself is embedded as JSON for tools and tests. Calls are shown numbered from 1, messages by their index in
// the file (`#0` is the first), as the other views name them; the `data-` attributes hold the report's own values.

/** Text and attribute values: the five characters that can end a text run or an attribute. */
function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * The report as JSON inside `<script type="application/json">`: `<`, `>` and `&` written as `\u` escapes, so no
 * `</script>` or `<!--` in a string can end or change the block, and JSON.parse still reads the same values.
 */
function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** A cell whose figure a reader or a test can take back: the shown text, and the value in `data-value`. */
function figureCell(
  field: string,
  value: number,
  text = formatCount(Math.round(value)),
  mark: { bad?: boolean; title?: string } = {},
): string {
  const title = mark.title === undefined ? '' : ` title="${escapeHtml(mark.title)}"`;
  return `<td class="num${mark.bad === true ? ' bad' : ''}"${title} data-field="${field}" data-value="${value}">${text}</td>`;
}

/** An amount of money with the decimals a bill of that size needs. */
function moneyText(amount: number, currency: string): string {
  const digits = Math.abs(amount) >= 100 ? 2 : 4;
  return `${amount.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })} ${escapeHtml(currency)}`;
}

/** An axis label: `0`, `950`, `12k`, `1.5M`. */
function shortCount(n: number): string {
  if (n >= 1_000_000) return `${+(n / 1_000_000).toFixed(n >= 10_000_000 ? 0 : 1)}M`;
  if (n >= 1_000) return `${+(n / 1_000).toFixed(n >= 10_000 ? 0 : 1)}k`;
  return String(Math.round(n));
}

/** A step of 1, 2 or 5 times a power of ten giving at most `most` intervals up to `top`. */
function tickStep(top: number, most: number): number {
  const rough = top / most;
  const power = 10 ** Math.floor(Math.log10(rough));
  for (const factor of [1, 2, 5, 10]) if (factor * power >= rough) return factor * power;
  return 10 * power;
}

/** The colour slot of the policy at `index`: eight colours, the dash pattern changing after them. */
function seriesClass(index: number): string {
  return `s${index % 8}${index >= 8 ? ' dashed' : ''}`;
}

/** Pluralised words for the page's sentences. */
function plural(n: number, word: string): string {
  return `${formatCount(n)} ${word}${n === 1 ? '' : 's'}`;
}

/** Where a call sits on the x axis, from 0 to 1; a single call sits in the middle. */
function xOf(call: number, calls: number): number {
  return calls <= 1 ? 0.5 : call / (calls - 1);
}

/** Rounded to one decimal place, to keep a long run's point lists short. */
function round1(n: number): number {
  return Math.round(n * 10) / 10;
}

/** A percentage with two decimals: a tenth of a pixel on the widest plot, so marks sit on their line. */
function percent(fraction: number): string {
  return `${Math.round(fraction * 10_000) / 100}%`;
}

/** The plot's scale: a top a little above the highest of window and peaks, and its ticks. */
function plotScale(run: ReplayRun): { top: number; ticks: number[] } {
  const peak = run.policies.reduce(
    (m, p) => p.compactions.reduce((n, c) => Math.max(n, c.before), Math.max(m, p.peakTokens)),
    0,
  );
  const highest = Math.max(run.contextWindow, peak, 1);
  const step = tickStep(highest * 1.05, 5);
  const top = Math.ceil((highest * 1.05) / step) * step;
  const ticks: number[] = [];
  for (let t = 0; t <= top + step / 2; t += step) ticks.push(t);
  return { top, ticks };
}

/** Calls up to this many get a dot each, so a short run (a single call has no line) still shows its points. */
const DOTTED_CALLS = 60;

/**
 * One policy's line (in a 1000 x 1000 box stretched to the plot) and its compactions' marks (in percentages). Lines
 * drawn earlier are wider, so a policy that runs along another (before its first compaction) still shows beneath it.
 */
function policySeries(policy: ReplayPolicy, index: number, count: number, top: number) {
  const n = policy.calls.length;
  const y = (tokens: number): number => 1000 - (Math.min(tokens, top) / top) * 1000;
  const points = policy.calls.map((c, i) => `${round1(xOf(i, n) * 1000)},${round1(y(c.tokens))}`).join(' ');
  const name = escapeHtml(policy.strategy);
  const width = 1.75 + Math.min(count - 1 - index, 3);
  const line =
    `<polyline class="line ${seriesClass(index)}" style="stroke-width:${width}px" data-strategy="${name}" data-points="${n}" points="${points}">` +
    `<title>${name}: ${plural(n, 'call')}, peak ${formatCount(policy.peakTokens)} tokens</title></polyline>`;
  const dots =
    n > DOTTED_CALLS
      ? ''
      : policy.calls
          .map(
            (c, i) =>
              `<circle class="point" cx="${percent(xOf(i, n))}" cy="${percent(y(c.tokens) / 1000)}" r="2.5"></circle>`,
          )
          .join('');
  const marks = policy.compactions
    .map((c) => {
      const x = percent(xOf(c.call, n));
      const from = percent(y(c.before) / 1000);
      const to = percent(y(c.after) / 1000);
      const label = `${name}: compacted before call ${formatCount(c.call + 1)}, ${formatCount(c.before)} → ${formatCount(c.after)} tokens`;
      return (
        `<g class="mark ${seriesClass(index)}" data-strategy="${name}" data-call="${c.call}" data-before="${c.before}" data-after="${c.after}">` +
        `<title>${label}</title><line x1="${x}" x2="${x}" y1="${from}" y2="${to}"></line>` +
        `<circle cx="${x}" cy="${to}" r="4"></circle></g>`
      );
    })
    .join('');
  return { line, marks: `<g class="${seriesClass(index)}">${dots}</g>${marks}` };
}

/** A horizontal line across the plot at `tokens` (the window, the trigger), with its label at the right. */
function levelLine(kind: string, label: string, tokens: number, top: number): { line: string; label: string } {
  const y = round1(1000 - (Math.min(tokens, top) / top) * 1000);
  return {
    line: `<line class="level ${kind}" data-level="${kind}" data-tokens="${tokens}" x1="0" x2="1000" y1="${y}" y2="${y}"></line>`,
    label: `<span class="level-label ${kind}" style="bottom:${round1(100 - y / 10)}%">${label} ${formatCount(tokens)}</span>`,
  };
}

/** The plot of context tokens per call, one line per policy, compactions marked, window and trigger drawn. */
function plot(run: ReplayRun): string {
  const { top, ticks } = plotScale(run);
  const calls = run.policies.reduce((m, p) => Math.max(m, p.calls.length), 0);
  const series = run.policies.map((p, i) => policySeries(p, i, run.policies.length, top));
  const grid = ticks
    .map((t) => {
      const y = round1(1000 - (t / top) * 1000);
      return `<line class="grid" x1="0" x2="1000" y1="${y}" y2="${y}"></line>`;
    })
    .join('');
  const yLabels = ticks
    .map((t) => `<span class="tick" style="bottom:${round1((t / top) * 100)}%">${shortCount(t)}</span>`)
    .join('');
  const window = levelLine('window', 'window', run.contextWindow, top);
  const trigger = levelLine('trigger', 'trigger', run.trigger, top);
  const legend = run.policies
    .map(
      (p, i) =>
        `<li data-strategy="${escapeHtml(p.strategy)}"><span class="swatch ${seriesClass(i)}"></span>${escapeHtml(p.strategy)}` +
        ` <span class="muted">(${plural(p.compactions.length, 'compaction')})</span></li>`,
    )
    .join('');
  const description = `Context tokens per call over ${plural(calls, 'call')} for ${run.policies.map((p) => p.strategy).join(', ')}`;
  return `<figure class="plot-figure">
<div class="plot" role="img" aria-label="${escapeHtml(description)}">
<div class="y-axis">${yLabels}</div>
<div class="area">
<svg class="lines" viewBox="0 0 1000 1000" preserveAspectRatio="none" aria-hidden="true">${grid}${window.line}${trigger.line}${series.map((s) => s.line).join('')}</svg>
<svg class="marks" aria-hidden="true">${series.map((s) => s.marks).join('')}</svg>
${window.label}${trigger.label}
</div>
</div>
<div class="x-axis"><span>call 1</span><span>context tokens per call</span><span>call ${formatCount(Math.max(calls, 1))}</span></div>
<figcaption><ul class="legend">${legend}</ul><span class="muted">Dots mark compactions, each drawn from the size before to the size after it.</span></figcaption>
</figure>`;
}

/** The calls, by their 1-based numbers, at which a policy compacted (a cell's tooltip). */
function compactionCalls(policy: ReplayPolicy): string {
  if (policy.compactions.length === 0) return 'never compacted';
  const shown = policy.compactions.slice(0, 40).map((c) => formatCount(c.call + 1));
  return `before call ${shown.join(', ')}${policy.compactions.length > 40 ? ', …' : ''}`;
}

/** One policy's row of the figures table. */
function figuresRow(policy: ReplayPolicy, index: number, currency: string): string {
  const name = escapeHtml(policy.strategy);
  return (
    `<tr data-strategy="${name}"><th scope="row"><span class="swatch ${seriesClass(index)}"></span>${name}</th>` +
    figureCell('calls', policy.calls.length) +
    figureCell('compactions', policy.compactions.length, undefined, { title: compactionCalls(policy) }) +
    figureCell('peakTokens', policy.peakTokens) +
    figureCell('meanTokens', policy.meanTokens) +
    figureCell('overflows', policy.overflows, undefined, { bad: policy.overflows > 0 }) +
    figureCell('inputTokens', policy.inputTokens) +
    figureCell('cacheReadTokens', policy.cacheReadTokens) +
    figureCell('cacheWriteTokens', policy.cacheWriteTokens) +
    figureCell('outputTokens', policy.outputTokens) +
    figureCell('cost', policy.cost.total, moneyText(policy.cost.total, currency)) +
    '</tr>'
  );
}

/** The row of the run as the file recorded it: the usage it holds, nothing replayed. */
function recordedRow(run: ReplayRun): string {
  const r = run.recorded;
  if (r === null) return '';
  const none = '<td class="num muted">—</td>';
  return (
    `<tr data-strategy="recorded" class="recorded"><th scope="row">as recorded</th>${figureCell('calls', r.calls)}` +
    `${none.repeat(4)}${figureCell('inputTokens', r.inputTokens)}${figureCell('cacheReadTokens', r.cacheReadTokens)}` +
    `${figureCell('cacheWriteTokens', r.cacheWriteTokens)}${figureCell('outputTokens', r.outputTokens)}${none}</tr>`
  );
}

const FIGURE_HEADS =
  '<th scope="col">policy</th><th scope="col">calls</th><th scope="col">compactions</th><th scope="col">peak tokens</th>' +
  '<th scope="col">mean tokens</th><th scope="col">overflows</th><th scope="col">input</th><th scope="col">cache read</th>' +
  '<th scope="col">cache write</th><th scope="col">output</th><th scope="col">cost</th>';

/** The price model a run's cost is worked out with, said in one paragraph. */
function pricesText(run: ReplayRun): string {
  const p = run.prices;
  const per = (n: number): string => moneyText(n, p.currency);
  return (
    `<p class="prices" data-prices="${escapeHtml(p.name)}">Cost at <b>${escapeHtml(p.name)}</b>, per million tokens: ` +
    `input ${per(p.input)}, cache read ${per(p.cacheRead)}, cache write ${per(p.cacheWrite)}, output ${per(p.output)}; ` +
    `prefixes under ${plural(p.minCacheablePrefix, 'token')} are not cached. Source: ${escapeHtml(p.source)}.</p>`
  );
}

/** The table of the policies' figures, the cost's parts, and summarize's own calls where there were any. */
function figuresTables(run: ReplayRun): string {
  const currency = run.prices.currency;
  const rows = run.policies.map((p, i) => figuresRow(p, i, currency)).join('');
  const costRows = run.policies
    .map((p) => {
      const cell = (field: keyof ReplayPolicy['cost']): string =>
        figureCell(field, p.cost[field], moneyText(p.cost[field], currency));
      return `<tr data-strategy="${escapeHtml(p.strategy)}"><th scope="row">${escapeHtml(p.strategy)}</th>${cell('input')}${cell('cacheRead')}${cell('cacheWrite')}${cell('output')}${cell('total')}</tr>`;
    })
    .join('');
  const summarized = run.policies.filter((p) => p.summary.calls > 0);
  const summaryRows = summarized
    .map(
      (p) =>
        `<tr data-strategy="${escapeHtml(p.strategy)}"><th scope="row">${escapeHtml(p.strategy)}</th>${figureCell('summaryCalls', p.summary.calls)}` +
        `${figureCell('summaryPromptTokens', p.summary.promptTokens)}${figureCell('summaryReplyTokens', p.summary.replyTokens)}</tr>`,
    )
    .join('');
  const summary =
    summarized.length === 0
      ? ''
      : `<h3>Summary calls</h3><div class="scroll"><table class="summary"><thead><tr><th scope="col">policy</th><th scope="col">calls</th><th scope="col">prompt tokens</th><th scope="col">reply tokens</th></tr></thead><tbody>${summaryRows}</tbody></table></div>`;
  return `<h3>Figures</h3>
<div class="scroll"><table class="figures"><thead><tr>${FIGURE_HEADS}</tr></thead><tbody>${rows}${recordedRow(run)}</tbody></table></div>
<h3>Cost</h3>
<div class="scroll"><table class="cost"><thead><tr><th scope="col">policy</th><th scope="col">input</th><th scope="col">cache read</th><th scope="col">cache write</th><th scope="col">output</th><th scope="col">total</th></tr></thead><tbody>${costRows}</tbody></table></div>
${pricesText(run)}${summary}`;
}

/** The identifiers that left the context at a compaction and were named again later, per policy. */
function lostTable(run: ReplayRun): string {
  const rows = run.policies.flatMap((p) =>
    p.lost.map(
      (l) =>
        `<tr data-strategy="${escapeHtml(p.strategy)}"><td class="name">${escapeHtml(p.strategy)}</td><td class="text" data-field="identifier">${escapeHtml(l.identifier)}</td>` +
        `<td data-field="kind">${escapeHtml(l.kind)}</td>${figureCell('leftAt', l.leftAt, `call ${formatCount(l.leftAt + 1)}`)}` +
        `${figureCell('neededAt', l.neededAt, `#${l.neededAt}`)}</tr>`,
    ),
  );
  const head = `<h3>Lost, then needed <span class="muted">(${formatCount(rows.length)})</span></h3>`;
  if (rows.length === 0)
    return `${head}<p class="empty lost">No identifier left the context and was named again later.</p>`;
  return `${head}<div class="scroll"><table class="lost"><thead><tr><th scope="col">policy</th><th scope="col">identifier</th><th scope="col">kind</th><th scope="col">left before</th><th scope="col">needed at message</th></tr></thead><tbody>${rows.join('')}</tbody></table></div>`;
}

/** The user messages (instructions, corrections) a compaction removed, per policy. */
function removedTable(run: ReplayRun): string {
  const rows = run.policies.flatMap((p) =>
    p.removedUserMessages.map(
      (m) =>
        `<tr data-strategy="${escapeHtml(p.strategy)}"><td class="name">${escapeHtml(p.strategy)}</td>${figureCell('message', m.message, `#${m.message}`)}` +
        `${figureCell('call', m.call, `call ${formatCount(m.call + 1)}`)}<td class="text" data-field="preview">${escapeHtml(m.preview)}</td></tr>`,
    ),
  );
  const head = `<h3>User messages removed <span class="muted">(${formatCount(rows.length)})</span></h3>`;
  if (rows.length === 0) return `${head}<p class="empty removed">No compaction removed a user message.</p>`;
  return `${head}<div class="scroll"><table class="removed"><thead><tr><th scope="col">policy</th><th scope="col">message</th><th scope="col">removed before</th><th scope="col">text</th></tr></thead><tbody>${rows.join('')}</tbody></table></div>`;
}

/** What a run's settings were: format, tokenizer, window and thresholds. */
function runMeta(run: ReplayRun): string {
  return (
    `<p class="meta">${escapeHtml(run.format)}, counted with ${escapeHtml(run.tokenizer)}. Context window ` +
    `<b>${formatCount(run.contextWindow)}</b> tokens; the hook compacts at <b>${formatCount(run.trigger)}</b> ` +
    `(${run.compactAt} of the window) down to <b>${formatCount(run.target)}</b> (${run.compactTo}).</p>`
  );
}

/** One run's section: its settings, plot, figures, losses and notes. */
function runSection(run: ReplayRun, index: number): string {
  const notes = run.notes.map((n) => `<li>${escapeHtml(n)}</li>`).join('');
  return `<section class="run" id="run-${index + 1}" data-run="${index}" data-file="${escapeHtml(run.file)}" data-changed="${isChangedRun(run)}">
<h2>${escapeHtml(run.file)}</h2>${runMeta(run)}
<p class="meta">${escapeHtml(runChangesLine(run))}.</p>
${plot(run)}
${figuresTables(run)}
${lostTable(run)}
${removedTable(run)}
<h3>Notes</h3><ul class="notes">${notes}</ul>
</section>`;
}

/** One policy's row of the totals across runs. */
function totalRow(total: ReplayTotal, index: number, currency: string): string {
  const name = escapeHtml(total.strategy);
  return (
    `<tr data-strategy="${name}"><th scope="row"><span class="swatch ${seriesClass(index)}"></span>${name}</th>` +
    figureCell('calls', total.calls) +
    figureCell('compactions', total.compactions) +
    figureCell('overflows', total.overflows, undefined, { bad: total.overflows > 0 }) +
    figureCell('inputTokens', total.inputTokens) +
    figureCell('cacheReadTokens', total.cacheReadTokens) +
    figureCell('cacheWriteTokens', total.cacheWriteTokens) +
    figureCell('outputTokens', total.outputTokens) +
    figureCell('cost', total.cost.total, moneyText(total.cost.total, currency)) +
    figureCell('lost', total.lost) +
    figureCell('removedUserMessages', total.removedUserMessages) +
    '</tr>'
  );
}

/** The totals across runs, and a list of the runs linking to their sections. */
function totalsSection(report: ReplayRuns): string {
  const names = [...new Set(report.runs.map((r) => r.prices.name))];
  const currencies = [...new Set(report.runs.map((r) => r.prices.currency))];
  const currency = currencies.length === 1 ? (currencies[0] as string) : '';
  const rows = report.totals.map((t, i) => totalRow(t, i, currency)).join('');
  const priced =
    names.length === 1
      ? `Cost at ${escapeHtml(names[0] as string)}.`
      : `Cost at each run's own prices (${names.map(escapeHtml).join(', ')}).`;
  const runs = report.runs
    .map((r, i) => {
      const calls = r.policies.reduce((m, p) => Math.max(m, p.calls.length), 0);
      const what = `${plural(calls, 'call')}; ${escapeHtml(runChangesLine(r))}`;
      return `<li class="${isChangedRun(r) ? 'changed' : 'same'}" value="${i + 1}"><a href="#run-${i + 1}">${escapeHtml(r.file)}</a> <span class="muted">${what}</span></li>`;
    })
    .join('');
  const changed = report.runs.filter(isChangedRun).length;
  // A checkbox and CSS alone (the page runs no script): checked, the runs no policy changed are hidden.
  const filter = `<input type="checkbox" id="only-changed" class="filter"><label for="only-changed">Only the runs a policy changed (${formatCount(changed)} of ${formatCount(report.runs.length)})</label>`;
  return `<section class="totals" id="totals">
<h2>Totals across ${plural(report.runs.length, 'run')}</h2>
<div class="scroll"><table class="totals"><thead><tr><th scope="col">policy</th><th scope="col">calls</th><th scope="col">compactions</th><th scope="col">overflows</th><th scope="col">input</th><th scope="col">cache read</th><th scope="col">cache write</th><th scope="col">output</th><th scope="col">cost</th><th scope="col">lost, then needed</th><th scope="col">user messages removed</th></tr></thead><tbody>${rows}</tbody></table></div>
<p class="prices">${priced}</p>
<h3>Runs</h3>${filter}<ol class="runs">${runs}</ol>
</section>`;
}

/** Whether the report holds several runs. */
function isReplayRuns(report: ReplayRun | ReplayRuns): report is ReplayRuns {
  return 'runs' in report;
}

/**
 * The HTML report of `swc replay`.
 * @param report one run's replay, or several runs with their totals
 * @returns a self-contained page: no network, no script, styles inline; readable in light and dark and 400 px wide
 */
export function replayPage(report: ReplayRun | ReplayRuns): string {
  const runs = isReplayRuns(report) ? report.runs : [report];
  const several = isReplayRuns(report);
  const title = several ? `swc replay: ${plural(runs.length, 'run')}` : `swc replay: ${runs[0]?.file ?? ''}`;
  const body = [several ? totalsSection(report) : '', ...runs.map((r, i) => runSection(r, i))].join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<header><h1>swc replay</h1><p class="muted">What each compaction policy would have done to ${several ? plural(runs.length, 'recorded run') : 'this recorded run'}, had Haystack's CompactionHook run before every LLM call. Calls are numbered from 1; messages are shown by their index in the file (#0 is the first).</p></header>
<main>
${body}
</main>
<script type="application/json" id="replay-data">${jsonForScript(report)}</script>
</body>
</html>
`;
}

/** Light and dark colours, eight series colours told apart by colour-blind readers too (Okabe and Ito's palette). */
const STYLE = `
:root{--bg:#fff;--fg:#1d1f23;--muted:#5d6470;--rule:#d8dce2;--grid:#eceef1;--panel:#f6f7f9;--bad:#b3261e;
--s0:#0072b2;--s1:#d55e00;--s2:#009e73;--s3:#cc79a7;--s4:#b07d00;--s5:#00838f;--s6:#8a6bbf;--s7:#a0522d;
--window:var(--fg);--trigger:var(--muted);color-scheme:light dark}
@media (prefers-color-scheme:dark){:root{--bg:#15171a;--fg:#e6e8eb;--muted:#9aa2ad;--rule:#33373d;--grid:#24272c;
--panel:#1d2024;--bad:#ff8a80;--s0:#56b4e9;--s1:#ff8c42;--s2:#3fd0a0;--s3:#e8a0c8;--s4:#f0c040;--s5:#4fd1d9;
--s6:#b9a3e8;--s7:#e0a070}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif}
header,main{max-width:1100px;margin:0 auto;padding:0 16px}
header{padding-top:12px}
h1{font-size:1.5rem;margin:.4em 0 .2em}
h2{font-size:1.2rem;margin:1.6em 0 .3em;overflow-wrap:anywhere;border-top:1px solid var(--rule);padding-top:.8em}
h3{font-size:1rem;margin:1.3em 0 .4em}
.muted{color:var(--muted)}
.meta,.prices{margin:.3em 0;overflow-wrap:anywhere}
.prices{font-size:.9em;color:var(--muted)}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;font-size:.9em}
th,td{padding:4px 8px;border-bottom:1px solid var(--rule);text-align:left;vertical-align:top}
thead th{background:var(--panel);font-weight:600;vertical-align:bottom}
tbody th{font-weight:600;white-space:nowrap;position:sticky;left:0;background:var(--bg)}
td.name{white-space:nowrap}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.text{overflow-wrap:anywhere;min-width:12em;max-width:40em}
td.bad{color:var(--bad);font-weight:600}
tr.recorded th,tr.recorded td{font-style:italic}
.plot-figure{margin:12px 0}
.plot{display:flex;height:260px}
.y-axis{position:relative;width:44px;flex:none;font-size:12px;color:var(--muted)}
.tick{position:absolute;right:6px;transform:translateY(50%);white-space:nowrap}
.area{position:relative;flex:1;min-width:0;border-left:1px solid var(--rule);border-bottom:1px solid var(--rule)}
.area svg{position:absolute;inset:0;width:100%;height:100%;overflow:visible}
.grid{stroke:var(--grid);stroke-width:1;vector-effect:non-scaling-stroke}
.level{stroke-width:1.5;vector-effect:non-scaling-stroke}
.level.window{stroke:var(--window)}
.level.trigger{stroke:var(--trigger);stroke-dasharray:6 4}
.level-label{position:absolute;left:4px;font-size:12px;padding:0 3px;background:var(--bg);white-space:nowrap;opacity:.9}
.level-label.window{color:var(--window);transform:translateY(-2px)}
.level-label.trigger{color:var(--trigger);transform:translateY(100%)}
.line{fill:none;stroke:var(--c);vector-effect:non-scaling-stroke;stroke-linejoin:round;stroke-linecap:round}
.line.dashed{stroke-dasharray:5 3}
.mark line{stroke:var(--c);stroke-width:1.5;stroke-dasharray:2 2}
.point{fill:var(--c)}
.mark circle{fill:var(--bg);stroke:var(--c);stroke-width:2}
.s0{--c:var(--s0)}.s1{--c:var(--s1)}.s2{--c:var(--s2)}.s3{--c:var(--s3)}.s4{--c:var(--s4)}.s5{--c:var(--s5)}.s6{--c:var(--s6)}.s7{--c:var(--s7)}
.x-axis{display:flex;justify-content:space-between;margin-left:44px;font-size:12px;color:var(--muted);gap:8px}
figcaption{margin-top:6px;font-size:.9em}
.legend{list-style:none;margin:0 0 4px;padding:0;display:flex;flex-wrap:wrap;gap:4px 16px}
.legend li{overflow-wrap:anywhere}
.swatch{display:inline-block;width:14px;height:3px;background:var(--c);vertical-align:middle;margin-right:6px}
.notes{padding-left:1.2em}
.notes li{margin:.2em 0;overflow-wrap:anywhere}
.runs li{overflow-wrap:anywhere}
.filter{margin:0 6px 0 0}
#only-changed:checked~ol.runs li.same{display:none}
body:has(#only-changed:checked) section.run[data-changed=false]{display:none}
a{color:var(--s0)}
`;
