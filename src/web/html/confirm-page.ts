/**
 * The confirm page every action goes through: what it will do, its fields, and one button that
 * posts the confirmation.
 *
 * @module
 */
import { html } from 'hono/html';
import type { ActionField } from '../actions.js';
import type { Fragment } from './format.js';
import { page, type PageContext } from './layout.js';

/** What to confirm. */
export interface Confirmation {
  readonly title: string;
  readonly description: string;
  /** Where the form posts. */
  readonly action: string;
  /** Where "back" goes. */
  readonly back: string;
  readonly label: string;
  readonly danger: boolean;
  readonly fields: readonly ActionField[];
  readonly nav: 'executions' | 'coordination' | 'schedules';
  /** A problem with a previous submission. */
  readonly problem?: string;
  /** Values the fields start with (a link's query string, or the submission that had a problem). */
  readonly values?: Readonly<Record<string, string>>;
}

/** The confirm page (not live-refreshed). */
export function confirmPage(ctx: PageContext, c: Confirmation): Fragment {
  const fields = c.fields.map(
    (f) =>
      html`<p><label>${f.label}${f.required ? ' (required)' : ''}<br>${f.kind === 'json' ? html`<textarea name="${f.name}" rows="6" cols="60" placeholder="JSON">${c.values?.[f.name] ?? ''}</textarea>` : html`<input name="${f.name}" size="60" value="${c.values?.[f.name] ?? ''}">`}</label></p>`,
  );
  const body = html`<h1>${c.title}</h1>
${c.problem ? html`<div class="error problem">${c.problem}</div>` : ''}
<div class="card"><p>${c.description}</p>
<form method="post" action="${c.action}" class="confirm">
<input type="hidden" name="confirm" value="yes">
${fields}
<p class="actions"><button type="submit" class="${c.danger ? 'danger' : ''}">${c.label}</button> <a class="button secondary" href="${c.back}">Back</a></p>
</form></div>`;
  return page(ctx, { title: c.title, nav: c.nav, live: false }, body);
}
