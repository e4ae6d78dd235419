/**
 * The timeline (a Gantt chart) of one execution as a server-rendered SVG: one row for the
 * execution (queue time, parks, rollback) and one per step (attempts, backoffs, sleeps, pauses,
 * waits, undo and compensation marks), on one time axis: this execution's own, from its first
 * entry. Times read as offsets from that entry; hovering shows the absolute time.
 *
 * @module
 */
import { html } from 'hono/html';
import type { ReactorEvent } from '../../engine/model/events.js';
import { duration, offset, time, type Fragment } from './format.js';
import { timelineOf, type Bar, type BarKind, type Lane } from './timeline-model.js';

const LABEL_W = 170;
const CHART_W = 760;
const ROW_H = 24;
const BAR_H = 14;
const AXIS_H = 22;
/** The narrowest bar drawn (px); a mark (undo, compensate) is a little wider. */
const MIN_W = 3;

const LEGEND: readonly [BarKind, string][] = [
  ['queued', 'queued (waiting for a worker)'],
  ['attempt', 'attempt'],
  ['failed', 'failed attempt'],
  ['backoff', 'retry backoff'],
  ['park', 'parked'],
  ['wait', 'waiting for a key'],
  ['sleep', 'sleeping'],
  ['pause', 'paused at an interrupt'],
  ['rollback', 'rollback'],
  ['undo', 'undone / compensated'],
];

const clip = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** Options of {@link timelineSvg}. */
export interface TimelineOptions {
  /** The link to another execution's page (a retry of this one). */
  readonly href?: (executionId: string) => string;
}

/** The timeline of `trace`; `now` ends the bars of an execution that has not finished. */
export function timelineSvg(trace: readonly ReactorEvent[], now: number, options: TimelineOptions = {}): Fragment {
  const timeline = timelineOf(trace, now);
  if (!timeline) return html`<p class="empty">No trace recorded, so no timeline.</p>`;
  const { from } = timeline;
  const span = timeline.to - from;
  const x = (t: number): number => LABEL_W + ((t - from) / span) * CHART_W;
  const height = AXIS_H + timeline.lanes.length * ROW_H + 4;
  const width = LABEL_W + CHART_W + 12;
  const ticks = tickTimes(span).map((ms) => {
    const at = x(from + ms);
    const anchor = ms === 0 ? 'start' : at > LABEL_W + CHART_W - 30 ? 'end' : 'middle';
    return html`<g class="tick"><line x1="${at.toFixed(1)}" y1="${AXIS_H - 4}" x2="${at.toFixed(1)}" y2="${height}" stroke="#e3e6ee"></line><text x="${at.toFixed(1)}" y="${AXIS_H - 8}" text-anchor="${anchor}" fill="#6b7385">${offset(ms)}<title>${time(from + ms)}</title></text></g>`;
  });
  const rows = timeline.lanes.map((lane, i) => {
    const y = AXIS_H + i * ROW_H;
    const name = lane.lane === '' ? 'execution' : lane.lane;
    return html`<g class="lane" data-lane="${name}"><text x="4" y="${y + ROW_H / 2 + 4}"${lane.lane === '' ? html` font-style="italic"` : ''}>${clip(name, 22)}<title>${name}</title></text>${lane.bars.map((bar) => barSvg(bar, x, y, from))}${queueLabels(lane.bars, x, y)}</g>`;
  });
  const legend = LEGEND.map(([kind, label]) => html`<span class="key"><i class="b-${kind}"></i>${label}</span>`);
  return html`<svg class="timeline" role="img" aria-label="timeline" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" data-span-ms="${span}" data-chart-x="${LABEL_W}" data-chart-width="${CHART_W}" xmlns="http://www.w3.org/2000/svg">${ticks}${rows}</svg><p class="legend">${legend}</p>${caption(trace, timeline.lanes, from, options)}`;
}

/** Round offsets for the axis (1, 2 or 5 times a power of ten apart), four to ten of them over `span` ms. */
function tickTimes(span: number): number[] {
  const rough = span / 5;
  const power = 10 ** Math.floor(Math.log10(Math.max(1, rough)));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= rough) ?? 10 * power;
  const out: number[] = [];
  for (let ms = 0; ms <= span; ms += step) out.push(ms);
  return out;
}

/** What the chart does not say by itself: where its axis starts, the queue time, and the retries drawn elsewhere. */
function caption(
  trace: readonly ReactorEvent[],
  lanes: readonly Lane[],
  from: number,
  options: TimelineOptions,
): Fragment {
  const queued = lanes.find((l) => l.lane === '')?.bars.find((b) => b.kind === 'queued');
  const queue = queued
    ? html` <span data-queue-ms="${queued.end - queued.start}">Queue time: ${duration(queued.end - queued.start)}${queued.open ? ' so far' : ''} from queued to its first start.</span>`
    : '';
  const retries = trace.flatMap((e) => (e.type === 'run.retried' ? [e] : []));
  const retried = retries.map(
    (e) =>
      html` <span class="retried">Retried as ${options.href ? html`<a class="mono" href="${options.href(e.retryExecutionId)}">${e.retryExecutionId}</a>` : html`<code>${e.retryExecutionId}</code>`} at ${time(e.at)}: a retry is an execution of its own, with its own timeline.</span>`,
  );
  return html`<p class="muted timeline-axis">Times from the first entry, ${time(from)}; hover a bar for its absolute times.${queue}${retried}</p>`;
}

function barSvg(bar: Bar, x: (t: number) => number, y: number, from: number): Fragment {
  const left = x(bar.start);
  const w = Math.max(bar.kind === 'undo' || bar.kind === 'compensate' ? MIN_W + 1 : MIN_W, x(bar.end) - left);
  const length = bar.end - bar.start;
  const title = `${bar.label} · ${offset(bar.start - from)} for ${duration(length)}${bar.open ? ' (still going)' : ''} · ${time(bar.start)} → ${time(bar.end)}`;
  return html`<rect class="bar b-${bar.kind}${bar.open ? ' open' : ''}" data-bar="${bar.kind}" data-offset-ms="${bar.start - from}" data-duration-ms="${length}" x="${left.toFixed(1)}" y="${y + (ROW_H - BAR_H) / 2}" width="${w.toFixed(1)}" height="${BAR_H}" rx="3"><title>${title}</title></rect>`;
}

/** Room the word "queued" takes at 11 px, with a little air. */
const LABEL_ROOM = 44;

/** The word "queued" on each queue-time bar: inside it, else just after it when the lane is free there, else only in its tooltip. */
function queueLabels(bars: readonly Bar[], x: (t: number) => number, y: number): Fragment[] {
  return bars.flatMap((bar) => {
    if (bar.kind !== 'queued') return [];
    const left = x(bar.start);
    const right = Math.max(left + MIN_W, x(bar.end));
    const next = Math.min(...bars.filter((b) => b !== bar && x(b.start) >= right).map((b) => x(b.start)));
    const at = right - left >= LABEL_ROOM ? left + 4 : next - right >= LABEL_ROOM + 4 ? right + 4 : undefined;
    if (at === undefined) return [];
    return [
      html`<text class="bar-label" x="${at.toFixed(1)}" y="${y + ROW_H / 2 + 4}" fill="#1d2330" pointer-events="none">queued</text>`,
    ];
  });
}
