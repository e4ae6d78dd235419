/**
 * The queue and its workers: jobs by state, the age of the oldest waiting job, the delayed jobs
 * due first, the active jobs, the oldest waiting ones, and the workers online with their
 * concurrency.
 *
 * @module
 */
import { html } from 'hono/html';
import type { QueueJobView, QueueSnapshot } from '../../ports/queue-inspector.js';
import { duration, time, type Fragment } from './format.js';
import { page, type PageContext } from './layout.js';

const ORDER = ['waiting', 'prioritized', 'delayed', 'active', 'completed', 'failed', 'finished', 'paused'];

function jobsTable(
  ctx: PageContext,
  kind: 'delayed' | 'active' | 'waiting',
  jobs: readonly QueueJobView[],
  now: number,
): Fragment {
  if (jobs.length === 0) return html`<p class="empty">No ${kind} job.</p>`;
  const when = (j: QueueJobView): string =>
    kind === 'delayed'
      ? `due ${time(j.dueAt)} (in ${duration((j.dueAt ?? now) - now)})`
      : kind === 'active'
        ? `started ${time(j.startedAt)} (${duration(now - (j.startedAt ?? now))} ago)`
        : `added ${time(j.addedAt)} (${duration(now - (j.addedAt ?? now))} ago)`;
  return html`<table class="jobs ${kind}"><thead><tr><th>Job</th><th>Execution</th><th>Reactor</th><th>When</th><th>Deliveries</th><th>Priority</th></tr></thead><tbody>${jobs.map(
    (j) =>
      html`<tr data-job="${j.jobId}" data-job-state="${kind}"><td class="mono">${j.jobId}</td><td><a class="mono" href="${ctx.base}/executions/${encodeURIComponent(j.executionId)}">${j.executionId}</a></td><td>${j.reactor}</td><td>${when(j)}</td><td>${j.deliveries ?? '—'}</td><td>${j.priority ?? '—'}</td></tr>`,
  )}</tbody></table>`;
}

/** The whole queue page; without a queue inspector, a note says how to give one. */
export function queuePage(ctx: PageContext, snapshot: QueueSnapshot | undefined): Fragment {
  if (!snapshot) {
    const body = html`<h1>Queue</h1><p class="empty">This dashboard was not given the queue: pass <code>createDashboard({ queue: runtime.queueInspector })</code> (the embedded engine's is read by itself).</p>`;
    return page(ctx, { title: 'Queue', nav: 'queue' }, body);
  }
  const now = snapshot.at;
  const states = [
    ...ORDER.filter((s) => s in snapshot.counts),
    ...Object.keys(snapshot.counts).filter((s) => !ORDER.includes(s)),
  ];
  const oldest = snapshot.oldestWaitingAt === undefined ? 'none waiting' : duration(now - snapshot.oldestWaitingAt);
  const body = html`<h1>Queue <code>${snapshot.name}</code></h1>
<p class="muted">read at ${time(now)}</p>
<div class="counts">${states.map((s) => html`<div class="count" data-count="${s}"><span class="n">${snapshot.counts[s] ?? 0}</span><span class="muted">${s}</span></div>`)}<div class="count" data-count="oldest-waiting"><span class="n">${oldest}</span><span class="muted">oldest waiting job</span></div></div>
<h2>Workers online <span class="muted">(${snapshot.workers.length})</span></h2>
${snapshot.workers.length === 0 ? html`<p class="empty">No worker takes jobs from this queue.</p>` : html`<table class="workers"><thead><tr><th>Worker</th><th>Concurrency</th><th>Address</th><th>Connected for</th></tr></thead><tbody>${snapshot.workers.map((w) => html`<tr data-worker="${w.name}"><td class="mono">${w.name}</td><td>${w.concurrency ?? '—'}</td><td class="mono">${w.address ?? '—'}</td><td>${duration(w.ageMs)}</td></tr>`)}</tbody></table>`}
<h2>Active <span class="muted">(${snapshot.counts['active'] ?? snapshot.active.length})</span></h2>${jobsTable(ctx, 'active', snapshot.active, now)}
<h2>Delayed, due first <span class="muted">(${snapshot.counts['delayed'] ?? snapshot.delayed.length})</span></h2>${jobsTable(ctx, 'delayed', snapshot.delayed, now)}
<h2>Waiting, oldest first</h2>${jobsTable(ctx, 'waiting', snapshot.waiting, now)}`;
  return page(ctx, { title: 'Queue', nav: 'queue' }, body);
}
