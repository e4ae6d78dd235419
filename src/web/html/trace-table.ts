/**
 * An execution's trace as rows: when (an offset from the first entry, the absolute time on
 * hover), the event, the step, a one-line reading of its fields, and its JSON folded. Times in
 * the fields (`wakeAt`, `timeoutAt`, `deadlineAt`, …) read as dates, never as epoch milliseconds.
 *
 * @module
 */
import { html } from 'hono/html';
import type { ReactorEvent } from '../../engine/model/events.js';
import { json, offset, time, type Fragment } from './format.js';
import { isoTime } from '../../ops/time.js';

/** Fields that hold a time (engine clock, ms since the epoch): every `…At`, and a summary entry's `from` / `to`. */
const isTimeField = (event: ReactorEvent, name: string): boolean =>
  /At$/.test(name) || (event.type === 'trace.summarized' && (name === 'from' || name === 'to'));

/** The fields of an event beyond those every event has. */
function eventFields(event: ReactorEvent): Record<string, unknown> {
  const { type: _t, executionId: _e, rootExecutionId: _r, reactor: _re, at: _a, ...rest } = event;
  const { step: _s, ...others } = rest as Record<string, unknown>;
  return others;
}

/** `value` with every time field (at any depth) as an ISO 8601 date. */
function readable(event: ReactorEvent, value: unknown, name = ''): unknown {
  if (typeof value === 'number' && isTimeField(event, name) && Number.isFinite(value)) return isoTime(value);
  if (Array.isArray(value)) return value.map((v) => readable(event, v));
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, readable(event, v, k)]));
  return value;
}

/** A one-line reading of an event's fields: scalars as `name value` (times as dates), an error by its message. */
function eventSummary(event: ReactorEvent, fields: Record<string, unknown>): string {
  const parts: string[] = [];
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    if (typeof value === 'number' && isTimeField(event, name)) parts.push(`${name} ${time(value)}`);
    else if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
      parts.push(`${name} ${typeof value === 'string' ? value : String(value)}`);
    else if (name === 'error' && typeof value === 'object' && value !== null && 'message' in value)
      parts.push(`error: ${String(value.message)}`);
  }
  const text = parts.join(' · ');
  return text.length > 160 ? `${text.slice(0, 159)}…` : text;
}

/** The trace as rows; an empty trace says why there is none. */
export function traceTable(trace: readonly ReactorEvent[]): Fragment {
  if (trace.length === 0)
    return html`<p class="empty">No trace recorded (an execution run inline keeps its trace in its result).</p>`;
  const t0 = trace[0]?.at ?? 0;
  return html`<p class="muted">Times from the first entry, ${time(t0)}; hover a time for the date.</p><table class="trace"><thead><tr><th>Time</th><th>Event</th><th>Step</th><th>Details</th></tr></thead><tbody>${trace.map(
    (e) => {
      const fields = eventFields(e);
      const folded =
        Object.keys(fields).length === 0
          ? ''
          : html`<details><summary>JSON</summary>${json(readable(e, fields))}</details>`;
      return html`<tr data-event="${e.type}" data-at="${isoTime(e.at)}"${'step' in e && e.step !== undefined ? html` data-event-step="${e.step}"` : ''}><td class="mono"><time datetime="${isoTime(e.at)}" title="${time(e.at)}">${offset(e.at - t0)}</time></td><td><code>${e.type}</code></td><td>${'step' in e && e.step !== undefined ? html`<code>${e.step}</code>` : ''}</td><td><span class="summary">${eventSummary(e, fields)}</span>${folded}</td></tr>`;
    },
  )}</tbody></table>`;
}
