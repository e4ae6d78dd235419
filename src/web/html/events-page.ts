/**
 * The events page: kept events newest first (id, name, time, receipt, payload, and the
 * executions each started, resumed or cancelled), filtered by name, with a link to the next
 * page.
 *
 * @module
 */
import { html } from 'hono/html';
import type { StoredEvent } from '../../ports/event-log.js';
import { json, time, type Fragment } from './format.js';
import { page, type PageContext } from './layout.js';

/** The executions an event affected, each a link to its page. */
function effects(ctx: PageContext, e: StoredEvent): Fragment {
  const lists = [
    ['started', e.effects.started],
    ['resumed', e.effects.resumed],
    ['cancelled', e.effects.cancelled],
  ] as const;
  const shown = lists.filter(([, ids]) => ids.length > 0);
  if (shown.length === 0) return html`<span class="muted">none</span>`;
  return html`${shown.map(
    ([kind, ids]) =>
      html`<div data-effect="${kind}">${kind}: ${ids.map((id) => html`<a href="${ctx.base}/executions/${encodeURIComponent(id)}"><code>${id}</code></a> `)}</div>`,
  )}`;
}

function row(ctx: PageContext, e: StoredEvent): Fragment {
  return html`<tr data-event-id="${e.id}"><td><code>${e.id}</code></td><td>${e.name}</td><td>${time(e.ts)}</td><td>${time(e.receivedAt)}</td><td>${json(e.payload)}</td><td class="effects">${effects(ctx, e)}</td></tr>`;
}

/** The whole events page; `next` is the cursor of the next page, `name` the filter. */
export function eventsPage(
  ctx: PageContext,
  events: readonly StoredEvent[],
  filter: { readonly name?: string | undefined; readonly next?: string | undefined },
): Fragment {
  const query = (cursor: string) =>
    `${ctx.base}/events?${new URLSearchParams({ ...(filter.name ? { name: filter.name } : {}), cursor }).toString()}`;
  const body = html`<h1>Events${filter.name ? html` <span class="muted">${filter.name}</span>` : ''}</h1>
<form method="get" action="${ctx.base}/events"><input name="name" placeholder="event name" value="${filter.name ?? ''}"> <button type="submit">Filter</button></form>
${events.length === 0 ? html`<p class="empty">No event.</p>` : html`<table class="events"><thead><tr><th>Id</th><th>Name</th><th>Time</th><th>Received</th><th>Payload</th><th>Executions</th></tr></thead><tbody>${events.map((e) => row(ctx, e))}</tbody></table>`}
${filter.next === undefined ? '' : html`<p><a class="button secondary" data-next href="${query(filter.next)}">Older events</a></p>`}`;
  return page(ctx, { title: 'Events', nav: 'events' }, body);
}
