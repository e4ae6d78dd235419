/**
 * Small formatting helpers of the dashboard's pages: times, durations, statuses, errors.
 *
 * @module
 */
import { html } from 'hono/html';
import type { ErrorJSON } from '../../errors.js';
import { isoTime } from '../../ops/time.js';

/** An HTML fragment (what `html` returns). */
export type Fragment = ReturnType<typeof html>;

/** A UTC timestamp, to the millisecond. */
export function time(ms: number | undefined): string {
  if (ms === undefined || Number.isNaN(ms)) return '—';
  return isoTime(ms).replace('T', ' ').replace('Z', ' UTC');
}

/** A duration: `850 ms`, `12.3 s`, `4 min 5 s`, `2 h 10 min`. */
export function duration(ms: number | undefined): string {
  if (ms === undefined || !Number.isFinite(ms)) return '—';
  if (ms < 1_000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)} s`;
  if (ms < 3_600_000) return `${Math.floor(ms / 60_000)} min ${Math.floor((ms % 60_000) / 1_000)} s`;
  return `${Math.floor(ms / 3_600_000)} h ${Math.floor((ms % 3_600_000) / 60_000)} min`;
}

/** Seconds to the millisecond, without trailing zeros: `2.5`, `16`, `0.042`. */
const seconds = (ms: number): string => (ms / 1_000).toFixed(3).replace(/\.?0+$/, '');

/**
 * An offset from a reference time, exact to the millisecond: `+0 ms`, `+850 ms`, `+2.5 s`,
 * `+4 min 5.25 s`, `+2 h 10 min 5 s`. How the timeline and the trace place an entry.
 */
export function offset(ms: number): string {
  if (!Number.isFinite(ms)) return '—';
  const sign = ms < 0 ? '−' : '+';
  const abs = Math.round(Math.abs(ms));
  if (abs < 1_000) return `${sign}${abs} ms`;
  if (abs < 60_000) return `${sign}${seconds(abs)} s`;
  if (abs < 3_600_000) return `${sign}${Math.floor(abs / 60_000)} min ${seconds(abs % 60_000)} s`;
  return `${sign}${Math.floor(abs / 3_600_000)} h ${Math.floor((abs % 3_600_000) / 60_000)} min ${Math.floor((abs % 60_000) / 1_000)} s`;
}

/** A status badge (the CSS colours it by status). */
export function badge(status: string): Fragment {
  return html`<span class="badge s-${status}">${status}</span>`;
}

/** JSON, pretty-printed, in a `<pre>`. */
export function json(value: unknown): Fragment {
  let text: string;
  try {
    text = JSON.stringify(value, null, 2) ?? 'undefined';
  } catch {
    text = String(value);
  }
  return html`<pre class="json">${text}</pre>`;
}

/** An error with its code, details and its chain of causes. */
export function errorBlock(error: ErrorJSON | undefined, depth = 0): Fragment | string {
  if (!error) return '';
  const details = error.details && Object.keys(error.details).length > 0 ? json(error.details) : '';
  const cause =
    error.cause && depth < 8
      ? html`<div class="cause"><span class="muted">caused by</span> ${errorBlock(error.cause, depth + 1)}</div>`
      : '';
  return html`<div class="error"><strong>${error.name}</strong>${error.code === undefined ? '' : html` <code>${error.code}</code>`}: ${error.message}${details}${cause}</div>`;
}
