/**
 * The server-rendered pages and their confirm-then-post action routes.
 *
 * @module
 */
import type { Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ExecutionDetail } from '../ops/types.js';
import { guard } from './auth.js';
import type { DashboardContext } from './context.js';
import { confirmPage } from './html/confirm-page.js';
import { coordinationPage } from './html/coordination-page.js';
import { executionPage } from './html/execution-page.js';
import { executionsPage } from './html/executions-page.js';
import { executionConfirm, fieldValues, problemStatus } from './problem.js';
import {
  performExecutionAction,
  performOrderedAction,
  prepareExecutionAction,
  prepareOrderedAction,
} from './perform.js';
import { executionQuery } from './query.js';
import { bulkActions } from './bulk.js';

const notFound = (id: string): HTTPException =>
  new HTTPException(404, { message: `no execution ${id} (or its record expired)` });

/** The executions an action list offers for this execution. */
export function applicable(ctx: DashboardContext, execution: ExecutionDetail) {
  return ctx.readOnly ? [] : ctx.perform.executionActions.filter((a) => a.appliesTo(execution));
}

/** Adds the page routes to `app`. */
export function pageRoutes(app: Hono, ctx: DashboardContext): void {
  const { model, page: pc } = ctx;
  app.get('/', (c) => c.redirect(`${pc.base}/executions`));

  app.get('/executions', async (c) => {
    await guard(ctx.authorize, c, { kind: 'view', page: 'executions' });
    const { query, filters, search } = executionQuery(c);
    const content =
      search === undefined
        ? ({ kind: 'list', list: await model.executions(query) } as const)
        : ({ kind: 'search', result: await model.search(search) } as const);
    const shown = content.kind === 'list' ? content.list.items : content.result.items;
    const reactors = [...new Set([...model.reactorNames(), ...shown.map((e) => e.reactor)])];
    return c.html(executionsPage(pc, content, filters, Date.now(), { reactors, bulk: bulkActions(ctx) }));
  });

  app.get('/executions/:id', async (c) => {
    await guard(ctx.authorize, c, { kind: 'view', page: 'execution' });
    const execution = await model.execution(c.req.param('id'));
    if (!execution) throw notFound(c.req.param('id'));
    return c.html(executionPage(pc, execution, applicable(ctx, execution), c.req.query('notice')));
  });

  app.get('/executions/:id/actions/:action', async (c) => {
    const prepared = await prepareExecutionAction(ctx.perform, c, c.req.param('id'), c.req.param('action'));
    return c.html(executionConfirm(pc, prepared, { values: fieldValues(prepared.action, c.req.query()) }));
  });

  app.post('/executions/:id/actions/:action', async (c) => {
    const prepared = await prepareExecutionAction(ctx.perform, c, c.req.param('id'), c.req.param('action'));
    const form = await c.req.parseBody();
    if (form['confirm'] !== 'yes')
      throw new HTTPException(400, {
        message: 'the action was not confirmed (post confirm=yes from its confirm page)',
      });
    const done = await performExecutionAction(ctx.perform, prepared, form).catch((error: unknown) => {
      const status = problemStatus(error);
      if (status === undefined) throw error;
      return c.html(
        executionConfirm(pc, prepared, {
          problem: (error as Error).message,
          values: fieldValues(prepared.action, form),
        }),
        status,
      );
    });
    if (done instanceof Response) return done;
    const notice = `${prepared.action.label}: execution ${done.executionId} is ${done.status}.`;
    return c.redirect(
      `${pc.base}/executions/${encodeURIComponent(done.executionId)}?notice=${encodeURIComponent(notice)}`,
      303,
    );
  });

  app.get('/coordination', async (c) => {
    await guard(ctx.authorize, c, { kind: 'view', page: 'coordination' });
    const pattern = c.req.query('pattern') || '*';
    const internal = c.req.query('internal') === '1';
    const view = await model.coordination({ pattern });
    return c.html(
      coordinationPage(
        pc,
        view,
        { pattern, internal },
        ctx.readOnly ? [] : ctx.perform.orderedActions,
        c.req.query('notice'),
      ),
    );
  });

  app.get('/coordination/ordered/:action', async (c) => {
    const { action, key } = await prepareOrderedAction(ctx.perform, c, c.req.query('key'), c.req.param('action'));
    const state = await model.orderedLock(key);
    const description = `${action.description} Now: next ${state.next ?? '—'}, last completed ${state.lastCompleted}, in flight ${state.inFlight ?? '—'}, issued ${state.issued}.`;
    return c.html(
      confirmPage(pc, {
        title: `${action.label} on ordered lock ${key}?`,
        description,
        action: `${pc.base}/coordination/ordered/${action.name}?key=${encodeURIComponent(key)}`,
        back: `${pc.base}/coordination`,
        label: `Yes, ${action.label.toLowerCase()}`,
        danger: action.danger ?? false,
        fields: [],
        nav: 'coordination',
      }),
    );
  });

  app.post('/coordination/ordered/:action', async (c) => {
    const prepared = await prepareOrderedAction(ctx.perform, c, c.req.query('key'), c.req.param('action'));
    const form = await c.req.parseBody();
    if (form['confirm'] !== 'yes')
      throw new HTTPException(400, {
        message: 'the action was not confirmed (post confirm=yes from its confirm page)',
      });
    const after = await performOrderedAction(ctx.perform, prepared);
    const notice = `${prepared.action.label} on ${prepared.key}: next ${after.next ?? '—'}, last completed ${after.lastCompleted}, epoch ${after.epoch}.`;
    return c.redirect(`${pc.base}/coordination?notice=${encodeURIComponent(notice)}`, 303);
  });
}
