/**
 * The live coordination view: lock holds with their waiters, semaphores, rate windows, period
 * markers and ordered-lock cursors (with skip / reset).
 *
 * @module
 */
import { html } from 'hono/html';
import type { CoordinationView, HolderView, WaiterView } from '../../ops/types.js';
import type { OrderedLockAction } from '../actions.js';
import { duration, time, type Fragment } from './format.js';
import { page, type PageContext } from './layout.js';

const exec = (ctx: PageContext, id: string): Fragment =>
  html`<a class="mono" href="${ctx.base}/executions/${encodeURIComponent(id)}">${id}</a>`;

function holder(ctx: PageContext, h: HolderView): Fragment {
  return html`${h.executionId ? exec(ctx, h.executionId) : html`<code>${h.owner}</code>`}${h.reactor ? html` <span class="muted">${h.reactor}</span>` : ''}`;
}

function level(h: HolderView): Fragment {
  return h.level === 'step' ? html`step <code>${h.step ?? ''}</code>` : html`<span class="muted">reactor</span>`;
}

function waiters(ctx: PageContext, list: readonly WaiterView[]): Fragment | string {
  if (list.length === 0) return html`<span class="muted">none</span>`;
  return html`${list.map((w) => html`<div class="waiter" data-waiter="${w.executionId}">${exec(ctx, w.executionId)} <span class="muted">${w.reactor}${w.step ? ` · step ${w.step}` : ''} · attempt ${w.attempt}</span></div>`)}`;
}

const section = (title: string, count: number, table: Fragment, emptyText: string): Fragment =>
  html`<h2>${title} <span class="muted">(${count})</span></h2>${count === 0 ? html`<p class="empty">${emptyText}</p>` : table}`;

/** The whole coordination page. */
export function coordinationPage(
  ctx: PageContext,
  view: CoordinationView,
  query: { readonly pattern: string; readonly internal: boolean },
  actions: readonly OrderedLockAction[],
  notice: string | undefined,
): Fragment {
  const locks = view.locks.filter((l) => query.internal || !l.internal);
  const periods = view.periods.filter((p) => query.internal || !p.internal);
  const body = html`${notice ? html`<div class="notice">${notice}</div>` : ''}
<h1>Coordination</h1>
<form class="filters" method="get" action="${ctx.base}/coordination">
  <label>Key pattern (* and ?) <input name="pattern" value="${query.pattern}"></label>
  <label><span>Engine-internal keys</span><select name="internal"><option value="">hidden</option><option value="1"${query.internal ? html` selected` : ''}>shown</option></select></label>
  <button type="submit">Show</button> <span class="muted">read at ${time(view.at)}</span>
</form>
${section('Locks', locks.length, html`<table class="locks"><thead><tr><th>Key</th><th>Holder</th><th>Held at</th><th>Nesting</th><th>TTL left</th><th>Fencing token</th><th>Waiting</th></tr></thead><tbody>${locks.map((l) => html`<tr data-lock="${l.key}"><td><code>${l.key}</code>${l.internal ? html` <span class="muted">(liveness)</span>` : ''}</td><td>${holder(ctx, l)}</td><td>${level(l)}</td><td>${l.nesting}</td><td>${duration(l.ttlMs)}</td><td class="mono">${l.token}</td><td>${waiters(ctx, l.waiting)}</td></tr>`)}</tbody></table>`, 'No lock is held.')}
${section('Semaphores', view.semaphores.length, html`<table class="semaphores"><thead><tr><th>Key</th><th>Slots</th><th>Holders</th><th>Waiting</th></tr></thead><tbody>${view.semaphores.map((s) => html`<tr data-semaphore="${s.key}"><td><code>${s.key}</code></td><td>${s.holders.length} held / ${s.limit} · <strong>${s.free} free</strong></td><td>${s.holders.map((h) => html`<div>${holder(ctx, h)} · ${level(h)} · nesting ${h.nesting} · TTL ${duration(h.ttlMs)}</div>`)}</td><td>${waiters(ctx, s.waiting)}</td></tr>`)}</tbody></table>`, 'No semaphore has a live lease.')}
${section('Rate-limit windows', view.rates.length, html`<table class="rates"><thead><tr><th>Key</th><th>Window</th><th>Starts in window</th><th>Oldest leaves in</th><th>Waiting</th></tr></thead><tbody>${view.rates.map((r) => html`<tr data-rate="${r.key}"><td><code>${r.key}</code></td><td>${duration(r.periodMs)}</td><td>${r.count}</td><td>${duration(r.resetInMs)}</td><td>${waiters(ctx, r.waiting)}</td></tr>`)}</tbody></table>`, 'No rate-limit window has starts in it.')}
${section('Period markers', periods.length, html`<table class="periods"><thead><tr><th>Key</th><th>Bucket</th><th>Expires in</th></tr></thead><tbody>${periods.map((p) => html`<tr data-period="${p.key}"><td><code>${p.key}</code>${p.internal ? html` <span class="muted">(cancel request)</span>` : ''}</td><td><code>${p.bucket}</code></td><td>${duration(p.ttlMs)}</td></tr>`)}</tbody></table>`, 'No period bucket is marked.')}
${section('Ordered locks', view.ordered.length, html`<table class="ordered"><thead><tr><th>Key</th><th>Next</th><th>Last completed</th><th>In flight</th><th>First failed</th><th>Issued</th><th>Epoch</th><th>Waiting</th><th></th></tr></thead><tbody>${view.ordered.map((o) => html`<tr data-ordered="${o.key}"><td><code>${o.key}</code>${o.drained ? html` <span class="muted">(drained)</span>` : ''}</td><td class="next">${o.next ?? '—'}</td><td class="last-completed">${o.lastCompleted}</td><td>${o.inFlight ?? '—'}</td><td>${o.firstFailed ?? '—'}</td><td>${o.issued}</td><td class="mono">${o.epoch}</td><td>${waiters(ctx, o.waiting)}</td><td class="actions">${actions.map((a) => html`<a class="button secondary" data-action="${a.name}" href="${ctx.base}/coordination/ordered/${a.name}?key=${encodeURIComponent(o.key)}">${a.label}…</a>`)}</td></tr>`)}</tbody></table>`, 'No ordered lock has handed out a position.')}`;
  return page(ctx, { title: 'Coordination', nav: 'coordination' }, body);
}
