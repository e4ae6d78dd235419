/**
 * The bulk action pages: the confirm page listing each selected execution (and whether the
 * action applies to it), and the page of outcomes after the post.
 *
 * @module
 */
import { html } from 'hono/html';
import type { ExecutionDetail } from '../../ops/types.js';
import type { ExecutionAction } from '../action-types.js';
import { badge, type Fragment } from './format.js';
import { page, type PageContext } from './layout.js';

/** One selected execution. */
export interface BulkTarget {
  readonly id: string;
  readonly execution?: ExecutionDetail;
  readonly applies: boolean;
}

/** What the action did to one execution: `done` (with the execution shown next and its status), `skipped` or `error`. */
export interface BulkOutcome {
  readonly id: string;
  readonly outcome: 'done' | 'skipped' | 'error';
  readonly executionId?: string;
  readonly status?: string;
  readonly detail?: string;
}

const link = (ctx: PageContext, id: string): Fragment =>
  html`<a class="mono" href="${ctx.base}/executions/${encodeURIComponent(id)}">${id}</a>`;

/** The confirm page of a bulk action (not live-refreshed). */
export function bulkConfirmPage(ctx: PageContext, action: ExecutionAction, targets: readonly BulkTarget[]): Fragment {
  const applying = targets.filter((t) => t.applies);
  const rows = targets.map(
    (t) =>
      html`<tr data-bulk-target="${t.id}" data-applies="${String(t.applies)}"><td>${link(ctx, t.id)}</td><td>${t.execution ? t.execution.reactor : ''}</td><td>${t.execution ? badge(t.execution.status) : html`<span class="muted">not found</span>`}</td><td>${t.applies ? action.label : html`<span class="muted">skipped: does not apply</span>`}</td></tr>`,
  );
  const title = `${action.label} ${applying.length} execution${applying.length === 1 ? '' : 's'}?`;
  const body = html`<h1>${title}</h1>
<div class="card"><p>${action.description}</p>
<table class="bulk-targets"><thead><tr><th>Execution</th><th>Reactor</th><th>Status</th><th>Action</th></tr></thead><tbody>${rows}</tbody></table>
<form method="post" action="${ctx.base}/executions/bulk" class="confirm">
<input type="hidden" name="confirm" value="yes"><input type="hidden" name="action" value="${action.name}">
${targets.map((t) => html`<input type="hidden" name="id" value="${t.id}">`)}
<p class="actions">${applying.length === 0 ? html`<span class="muted">The action applies to none of them.</span>` : html`<button type="submit" class="${action.danger ? 'danger' : ''}">Yes, ${action.label.toLowerCase()} ${applying.length}</button>`} <a class="button secondary" href="${ctx.base}/executions">Back</a></p>
</form></div>`;
  return page(ctx, { title, nav: 'executions', live: false }, body);
}

/** The outcomes of a bulk action. */
export function bulkResultPage(ctx: PageContext, action: ExecutionAction, outcomes: readonly BulkOutcome[]): Fragment {
  const done = outcomes.filter((o) => o.outcome === 'done').length;
  const rows = outcomes.map(
    (o) =>
      html`<tr data-bulk-result="${o.id}" data-outcome="${o.outcome}"><td>${link(ctx, o.id)}</td><td>${o.outcome}</td><td>${o.outcome === 'done' ? html`${o.executionId !== undefined && o.executionId !== o.id ? html`${link(ctx, o.executionId)} ` : ''}${badge(o.status ?? '')}` : (o.detail ?? '')}</td></tr>`,
  );
  const body = html`<div class="notice">${action.label}: ${done} of ${outcomes.length} done.</div>
<h1>${action.label}: outcomes</h1>
<table class="bulk-results"><thead><tr><th>Execution</th><th>Outcome</th><th>Now</th></tr></thead><tbody>${rows}</tbody></table>
<p><a href="${ctx.base}/executions">Executions</a></p>`;
  return page(ctx, { title: `${action.label}: outcomes`, nav: 'executions', live: false }, body);
}
