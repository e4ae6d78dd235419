/**
 * Bulk retry and bulk cancel: one confirm page for the executions selected on the list, then one
 * action per execution, each authorized, checked and audited as a single action is.
 *
 * @module
 */
import type { Context, Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { ReactorError } from '../errors.js';
import type { ExecutionDetail } from '../ops/types.js';
import type { ExecutionAction } from './actions.js';
import { guard } from './auth.js';
import type { DashboardContext } from './context.js';
import { bulkConfirmPage, bulkResultPage, type BulkOutcome, type BulkTarget } from './html/bulk-page.js';
import { performExecutionAction } from './perform.js';

/** The actions offered in bulk (when the dashboard has them): they take no fields. */
export const BULK_ACTION_NAMES: readonly string[] = ['retry', 'cancel'];
/** The most executions one bulk action takes. */
export const BULK_MAX = 100;

/** The bulk actions offered: none in read-only mode. */
export function bulkActions(ctx: DashboardContext): readonly ExecutionAction[] {
  if (ctx.readOnly) return [];
  return ctx.perform.executionActions.filter(
    (a) => BULK_ACTION_NAMES.includes(a.name) && !(a.fields ?? []).some((f) => f.required),
  );
}

/** The bulk action `name` on `ids`, each execution authorized and looked at. */
async function prepareBulk(
  ctx: DashboardContext,
  c: Context,
  name: string | undefined,
  ids: readonly string[],
): Promise<{ action: ExecutionAction; targets: BulkTarget[] }> {
  const action = bulkActions(ctx).find((a) => a.name === name);
  if (ctx.readOnly) throw new HTTPException(403, { message: 'the dashboard is read-only' });
  if (!action) throw new HTTPException(404, { message: `no bulk action named "${name ?? ''}"` });
  const unique = [...new Set(ids.filter((id) => id !== ''))];
  if (unique.length === 0 || unique.length > BULK_MAX)
    throw new ReactorError('query_invalid', `select from 1 to ${BULK_MAX} executions; got ${unique.length}`, {
      details: { ids: unique.length },
    });
  const targets: BulkTarget[] = [];
  for (const id of unique) {
    await guard(ctx.authorize, c, { kind: 'action', action: action.name, target: { type: 'execution', id } });
    const execution = await ctx.model.execution(id);
    targets.push({ id, ...(execution ? { execution, applies: action.appliesTo(execution) } : { applies: false }) });
  }
  return { action, targets };
}

/** Performs `action` on every target it applies to; one failure does not stop the others. */
async function performBulk(
  ctx: DashboardContext,
  action: ExecutionAction,
  targets: readonly BulkTarget[],
): Promise<BulkOutcome[]> {
  const outcomes: BulkOutcome[] = [];
  for (const target of targets) {
    if (!target.applies || !target.execution) {
      outcomes.push({ id: target.id, outcome: 'skipped', detail: skipReason(action, target.execution) });
      continue;
    }
    const execution: ExecutionDetail = target.execution;
    try {
      const done = await performExecutionAction(ctx.perform, { action, execution }, {});
      outcomes.push({ id: target.id, outcome: 'done', executionId: done.executionId, status: done.status });
    } catch (error) {
      outcomes.push({ id: target.id, outcome: 'error', detail: (error as Error).message });
    }
  }
  return outcomes;
}

function skipReason(action: ExecutionAction, execution: ExecutionDetail | undefined): string {
  if (!execution) return 'no such execution (or its record expired)';
  return `"${action.label}" does not apply to an execution that is ${execution.status}`;
}

function formIds(value: unknown): string[] {
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  return typeof value === 'string' ? [value] : [];
}

/** Adds the bulk routes: the confirm page and its post, and `POST /api/executions/bulk/:action`. */
export function bulkRoutes(app: Hono, ctx: DashboardContext): void {
  app.get('/executions/bulk', async (c) => {
    const { action, targets } = await prepareBulk(ctx, c, c.req.query('action'), c.req.queries('id') ?? []);
    return c.html(bulkConfirmPage(ctx.page, action, targets));
  });

  app.post('/executions/bulk', async (c) => {
    const form = await c.req.parseBody({ all: true });
    const name = typeof form['action'] === 'string' ? form['action'] : undefined;
    const { action, targets } = await prepareBulk(ctx, c, name, formIds(form['id']));
    if (form['confirm'] !== 'yes')
      throw new HTTPException(400, {
        message: 'the action was not confirmed (post confirm=yes from its confirm page)',
      });
    return c.html(bulkResultPage(ctx.page, action, await performBulk(ctx, action, targets)));
  });

  app.post('/api/executions/bulk/:action', async (c) => {
    if (!/^application\/json\b/i.test(c.req.header('content-type') ?? ''))
      throw new HTTPException(415, { message: 'send the action as application/json: {"confirm": true, "ids": [...]}' });
    const body = (await c.req.json().catch(() => undefined)) as { confirm?: unknown; ids?: unknown } | undefined;
    if (body?.confirm !== true)
      throw new HTTPException(400, { message: 'the action was not confirmed: send {"confirm": true, "ids": [...]}' });
    const ids = Array.isArray(body.ids) ? body.ids.filter((id): id is string => typeof id === 'string') : [];
    const { action, targets } = await prepareBulk(ctx, c, c.req.param('action'), ids);
    return c.json({ action: action.name, results: await performBulk(ctx, action, targets) });
  });
}
