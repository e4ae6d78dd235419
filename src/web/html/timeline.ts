/**
 * The timeline (a Gantt chart) of one execution as a server-rendered SVG: one row for the
 * execution (parks, rollback) and one per step (attempts, backoffs, sleeps, pauses, waits,
 * undo and compensation marks), on one time axis.
 *
 * @module
 */
import { html } from 'hono/html';
import type { ReactorEvent } from '../../engine/model/events.js';
import { duration, type Fragment } from './format.js';
import { timelineOf, type Bar, type BarKind } from './timeline-model.js';

const LABEL_W = 170;
const CHART_W = 760;
const ROW_H = 24;
const BAR_H = 14;
const AXIS_H = 22;

const LEGEND: readonly [BarKind, string][] = [
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

/** The timeline of `trace`; `now` ends the bars of an execution that has not finished. */
export function timelineSvg(trace: readonly ReactorEvent[], now: number): Fragment | string {
  const timeline = timelineOf(trace, now);
  if (!timeline) return html`<p class="empty">No trace recorded, so no timeline.</p>`;
  const span = timeline.to - timeline.from;
  const x = (t: number): number => LABEL_W + ((t - timeline.from) / span) * CHART_W;
  const height = AXIS_H + timeline.lanes.length * ROW_H + 4;
  const width = LABEL_W + CHART_W + 12;
  const ticks = [0, 0.25, 0.5, 0.75, 1].map(
    (f) =>
      html`<g class="tick"><line x1="${LABEL_W + f * CHART_W}" y1="${AXIS_H - 4}" x2="${LABEL_W + f * CHART_W}" y2="${height}" stroke="#e3e6ee"></line><text x="${LABEL_W + f * CHART_W}" y="${AXIS_H - 8}" text-anchor="${f === 0 ? 'start' : f === 1 ? 'end' : 'middle'}" fill="#6b7385">+${duration(f * span)}</text></g>`,
  );
  const rows = timeline.lanes.map((lane, i) => {
    const y = AXIS_H + i * ROW_H;
    const name = lane.lane === '' ? 'execution' : lane.lane;
    return html`<g class="lane" data-lane="${name}"><text x="4" y="${y + ROW_H / 2 + 4}"${lane.lane === '' ? html` font-style="italic"` : ''}>${clip(name, 22)}<title>${name}</title></text>${lane.bars.map((bar) => barSvg(bar, x, y, timeline.from))}</g>`;
  });
  const legend = LEGEND.map(([kind, label]) => html`<span class="key"><i class="b-${kind}"></i>${label}</span>`);
  return html`<svg class="timeline" role="img" aria-label="timeline" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" xmlns="http://www.w3.org/2000/svg">${ticks}${rows}</svg><p class="legend">${legend}</p>`;
}

function barSvg(bar: Bar, x: (t: number) => number, y: number, from: number): Fragment {
  const left = x(bar.start);
  const w = Math.max(bar.kind === 'undo' || bar.kind === 'compensate' ? 4 : 3, x(bar.end) - left);
  const title = `${bar.label} · +${duration(bar.start - from)} for ${duration(bar.end - bar.start)}${bar.open ? ' (still going)' : ''}`;
  return html`<rect class="bar b-${bar.kind}${bar.open ? ' open' : ''}" data-bar="${bar.kind}" x="${left.toFixed(1)}" y="${y + (ROW_H - BAR_H) / 2}" width="${w.toFixed(1)}" height="${BAR_H}" rx="3"><title>${title}</title></rect>`;
}
