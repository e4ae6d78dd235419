/**
 * The schedules page: each schedule's id, reactor, cron or interval, missed policy, next runs and
 * the failure of its latest tick when that one started nothing, with a remove button (unless
 * read-only).
 *
 * @module
 */
import { html } from 'hono/html';
import type { ScheduleInfo } from '../../schedules/types.js';
import { json, time, type Fragment } from './format.js';
import { page, type PageContext } from './layout.js';

/** A schedule's timing as text. */
export function scheduleSpec(s: Pick<ScheduleInfo, 'cron' | 'everyMs'>): string {
  return s.cron ? `cron ${s.cron.pattern} (${s.cron.tz})` : `every ${s.everyMs} ms`;
}

function row(ctx: PageContext, s: ScheduleInfo): Fragment {
  const input = s.inputFrom === undefined ? json(s.input ?? {}) : html`computed: <code>${s.inputFrom}</code>`;
  const remove = ctx.readOnly
    ? ''
    : html`<a class="button secondary" data-action="remove-schedule" href="${ctx.base}/schedules/${encodeURIComponent(s.id)}/remove">Remove…</a>`;
  return html`<tr data-schedule="${s.id}"><td><code>${s.id}</code></td><td>${s.reactor}</td><td class="spec"><code>${scheduleSpec(s)}</code></td><td>${s.missed}</td><td>${input}</td><td class="next-runs">${s.nextRuns.length === 0 ? html`<span class="muted">none left</span>` : s.nextRuns.map((d) => html`<div>${time(d.getTime())}</div>`)}</td>${lastFailure(s)}<td class="actions">${remove}</td></tr>`;
}

/** The failure of the latest tick, when it started nothing (`schedule.failed`). */
function lastFailure(s: ScheduleInfo): Fragment {
  const f = s.lastFailure;
  if (f === undefined) return html`<td class="last-failure"></td>`;
  return html`<td class="last-failure" data-failed="${f.code ?? 'error'}"><span class="badge s-failed">failed</span> tick ${time(f.tickAt)}${f.code === undefined ? '' : html` <code>${f.code}</code>`}<div class="error">${f.message}</div></td>`;
}

/** The whole schedules page. */
export function schedulesPage(
  ctx: PageContext,
  schedules: readonly ScheduleInfo[],
  notice: string | undefined,
): Fragment {
  const body = html`${notice ? html`<div class="notice">${notice}</div>` : ''}
<h1>Schedules <span class="muted">(${schedules.length})</span></h1>
${schedules.length === 0 ? html`<p class="empty">No schedule.</p>` : html`<table class="schedules"><thead><tr><th>Id</th><th>Reactor</th><th>When</th><th>Missed ticks</th><th>Input</th><th>Next runs</th><th>Latest tick</th><th></th></tr></thead><tbody>${schedules.map((s) => row(ctx, s))}</tbody></table>`}`;
  return page(ctx, { title: 'Schedules', nav: 'schedules' }, body);
}
