/**
 * The executions list: status tabs (parked and paused apart from failed), filters by reactor,
 * creation time and tags, a page of executions (with their duration, and the value of one tag
 * the operator picks as a column), a link to the next page.
 *
 * @module
 */
import { html } from 'hono/html';
import type { ExecutionPage, ExecutionSummary, SearchHit, SearchResult } from '../../ops/types.js';
import { badge, duration, time, type Fragment } from './format.js';
import { page, type PageContext } from './layout.js';
import type { VersionWait } from '../../ports/store.js';
import { isoTime } from '../../ops/time.js';

/** The filters as they came in the query string (shown back in the form). */
export interface ListFilters {
  /** The search text. */
  readonly q?: string;
  readonly reactor?: string;
  readonly status?: string;
  readonly from?: string;
  readonly to?: string;
  /** Tag filters as typed: `key=value`, comma-separated. */
  readonly tag?: string;
  /** The tag key whose value the list shows in a column of its own. */
  readonly column?: string;
}

const TABS = [
  'running',
  'parked',
  'paused',
  'queued',
  'failed',
  'completed',
  'halted',
  'cancelled',
  'aborted',
] as const;

/** Query string of the filters (plus extra parameters), for links. */
export function filterQuery(
  filters: { readonly [K in keyof ListFilters]?: string | undefined },
  extra: Record<string, string | undefined> = {},
): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries({ ...filters, ...extra }))
    if (value !== undefined && value !== '') params.set(name, value);
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

/** How long an execution took: creation to its last write when it ended, to now while it is live. */
function took(e: ExecutionSummary, now: number): Fragment {
  const ended = TERMINAL.has(e.status);
  const ms = (ended ? e.updatedAt : now) - e.createdAt;
  return html`<span data-duration-ms="${ms}">${duration(ms)}${ended ? '' : html` <span class="muted">so far</span>`}</span>`;
}

const TERMINAL: ReadonlySet<string> = new Set(['completed', 'failed', 'halted', 'cancelled', 'aborted']);

/** What a paused line waits at: its interrupts (with their correlation ids), then its waits for events. */
function pausedAt(waits: NonNullable<ExecutionSummary['interrupts']>): Fragment {
  const interrupts = waits.filter((i) => i.event === undefined);
  const events = waits.flatMap((i) => (i.event === undefined ? [] : [{ step: i.step, name: i.event.name }]));
  return html`${interrupts.length === 0 ? '' : html`paused at interrupt ${interrupts.map((i) => html`<code>${i.step}</code>${i.correlationId === undefined ? '' : html` (${i.correlationId})`} `)}`}${events.map((w) => html`waiting for event <code>${w.name}</code> at <code>${w.step}</code> `)}`;
}

function row(
  ctx: PageContext,
  e: ExecutionSummary | SearchHit,
  now: number,
  bulk: boolean,
  column: string | undefined,
): Fragment {
  let what: Fragment | string =
    e.status === 'parked' && e.waitingFor?.primitive === 'sleep'
      ? html`sleeping at <code>${e.waitingFor.key}</code> until ${isoTime(e.waitingFor.dueAt ?? now)}`
      : e.status === 'parked' && e.waitingFor
        ? html`waits for ${e.waitingFor.primitive === 'async' ? 'async unit' : e.waitingFor.primitive} <code>${e.waitingFor.key}</code> (attempt ${e.waitingFor.attempt})`
        : e.pausedOn
          ? html`paused on the failure of <code>${e.pausedOn.step}</code>: ${e.pausedOn.error.message}`
          : e.interrupts && e.interrupts.length > 0
            ? pausedAt(e.interrupts)
            : e.failedStep
              ? html`failed at <code>${e.failedStep}</code>${e.error ? html`: ${e.error.message}` : ''}`
              : e.error
                ? e.error.message
                : '';
  if (e.waitingForVersion) what = versionWait(e.waitingForVersion);
  const pick = bulk
    ? html`<td><input type="checkbox" name="id" value="${e.id}" form="bulk" aria-label="select ${e.id}"></td>`
    : '';
  const match = 'match' in e ? html` <span class="match" data-match="${e.match}">${MATCH_LABEL[e.match]}</span>` : '';
  return html`<tr data-execution="${e.id}" data-status="${e.status}">${pick}<td><a class="mono" href="${ctx.base}/executions/${encodeURIComponent(e.id)}">${e.id}</a>${match}</td><td>${e.reactor}</td><td>${badge(e.status)}</td>${column === undefined ? '' : html`<td data-tag="${column}">${e.tags?.[column] ?? ''}</td>`}<td>${time(e.createdAt)}</td><td>${took(e, now)}</td><td>${duration(now - e.updatedAt)} ago</td><td>${what}${queuedNote(e)}</td></tr>`;
}

/** A queued execution's start time and priority, when it has them. */
function queuedNote(e: ExecutionSummary): Fragment | string {
  if (e.startAt === undefined && e.priority === undefined) return '';
  const startsAt = e.startAt === undefined ? '' : html`starts at ${isoTime(e.startAt)}`;
  const priority = e.priority === undefined ? '' : html` priority ${e.priority}`;
  return html`<span class="muted" data-start-at="${e.startAt ?? ''}">${startsAt}${priority}</span>`;
}

/** What the list page shows: a page of executions or a search's hits. */
export type ListContent =
  { readonly kind: 'list'; readonly list: ExecutionPage } | { readonly kind: 'search'; readonly result: SearchResult };

/** What else the list page needs: the reactors of the picker, the bulk actions offered, a notice. */
export interface ListExtras {
  readonly reactors: readonly string[];
  /** Bulk actions (name and label); none in read-only mode. */
  readonly bulk: readonly { readonly name: string; readonly label: string }[];
}

const MATCH_LABEL: Readonly<Record<SearchHit['match'], string>> = {
  id: 'execution id',
  idempotency_key: 'idempotency key',
  correlation_id: 'correlation id',
  input: 'input text',
};

function filterForm(ctx: PageContext, filters: ListFilters, reactors: readonly string[]): Fragment {
  const names = [...new Set([...reactors, ...(filters.reactor === undefined ? [] : [filters.reactor])])].sort();
  return html`<form class="filters" method="get" action="${ctx.base}/executions">
  <label>Search <input type="search" name="q" size="34" value="${filters.q ?? ''}" placeholder="execution id, idempotency key, correlation id or input text"></label>
  <label>Reactor <select name="reactor"><option value="">any</option>${names.map((n) => html`<option${filters.reactor === n ? html` selected` : ''}>${n}</option>`)}</select></label>
  <label>Status <select name="status"><option value="">any</option>${TABS.concat().map((s) => html`<option${filters.status === s ? html` selected` : ''}>${s}</option>`)}</select></label>
  <label>Created from (UTC) <input type="datetime-local" step="1" name="from" value="${filters.from ?? ''}"></label>
  <label>Created before (UTC) <input type="datetime-local" step="1" name="to" value="${filters.to ?? ''}"></label>
  <label>Tags <input type="text" name="tag" size="22" value="${filters.tag ?? ''}" placeholder="orderId=42, region=eu"></label>
  <label>Tag column <input type="text" name="column" size="10" value="${filters.column ?? ''}" placeholder="orderId"></label>
  <button type="submit">Filter</button> <a href="${ctx.base}/executions">clear</a>
</form>`;
}

function table(
  ctx: PageContext,
  items: readonly (ExecutionSummary | SearchHit)[],
  now: number,
  extras: ListExtras,
  column: string | undefined,
): Fragment {
  const bulk = extras.bulk.length > 0;
  const form = bulk
    ? html`<form id="bulk" class="bulk actions" method="get" action="${ctx.base}/executions/bulk"><span class="muted">With the selected:</span>${extras.bulk.map((a) => html`<button type="submit" class="secondary" name="action" value="${a.name}" data-bulk="${a.name}">${a.label}…</button>`)}</form>`
    : '';
  return html`${form}<table class="executions"><thead><tr>${bulk ? html`<th><span class="muted">select</span></th>` : ''}<th>Execution</th><th>Reactor</th><th>Status</th>${column === undefined ? '' : html`<th data-tag-column="${column}">${column}</th>`}<th>Created</th><th>Duration</th><th>Updated</th><th>Details</th></tr></thead><tbody>${items.map((e) => row(ctx, e, now, bulk, column))}</tbody></table>`;
}

/** The whole list page: the executions, or the hits of a search. */
export function executionsPage(
  ctx: PageContext,
  content: ListContent,
  filters: ListFilters,
  now: number,
  extras: ListExtras,
): Fragment {
  const tab = (status: string | undefined, label: string): Fragment =>
    html`<a class="${filters.status === status ? 'on' : ''}" href="${ctx.base}/executions${filterQuery({ ...filters, status })}">${label}</a>`;
  let results: Fragment;
  if (content.kind === 'search') {
    const r = content.result;
    const note = html`<p class="muted search-note">${r.items.length} found for <code>${r.q}</code>: exact execution id, idempotency key and correlation id lookups, and matches among the newest ${r.scanned} of at most ${r.window} executions (ids, keys, correlation ids, input text).</p>`;
    results =
      r.items.length === 0
        ? html`${note}<p class="empty">No executions match.</p>`
        : html`${note}${table(ctx, r.items, now, extras, filters.column)}`;
  } else {
    const { list } = content;
    const next =
      list.cursor === undefined
        ? ''
        : html`<p><a class="button secondary" href="${ctx.base}/executions${filterQuery(filters, { cursor: list.cursor })}">Next page →</a></p>`;
    results =
      list.items.length === 0
        ? html`<p class="empty">No executions match.</p>`
        : html`${table(ctx, list.items, now, extras, filters.column)}${next}`;
  }
  const body = html`<h1>Executions</h1>
<p class="tabs">${tab(undefined, 'All')}${TABS.map((s) => tab(s, s))}</p>
${filterForm(ctx, filters, extras.reactors)}
${results}`;
  return page(ctx, { title: 'Executions', nav: 'executions' }, body);
}

/** An execution left for a worker with its definition: the version it waits for (docs/deploys.md). */
function versionWait(wait: VersionWait): Fragment {
  const named =
    wait.version === undefined
      ? html`<code>${wait.fingerprint}</code>`
      : html`<code>${wait.version}</code> (fingerprint <code>${wait.fingerprint}</code>)`;
  return html`<span data-waiting-version="${wait.fingerprint}">waiting for version ${named}: no worker that met it has that definition</span>`;
}
