/**
 * The JSON API under `/api`: the same data as the pages, and the same actions (a JSON body with
 * `"confirm": true` stands for the confirm page).
 *
 * @module
 */
import type { Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { guard } from './auth.js';
import type { DashboardContext } from './context.js';
import { applicable } from './pages.js';
import {
  performExecutionAction,
  performOrderedAction,
  prepareExecutionAction,
  prepareOrderedAction,
} from './perform.js';
import { executionQuery } from './query.js';

async function confirmedBody(request: Request): Promise<Record<string, unknown>> {
  // Only JSON: a cross-site form can send text/plain shaped like JSON, never application/json.
  if (!/^application\/json\b/i.test(request.headers.get('content-type') ?? ''))
    throw new HTTPException(415, { message: 'send the action as application/json: {"confirm": true, ...fields}' });
  let body: unknown;
  try {
    body = await request.json();
  } catch {
    throw new HTTPException(400, { message: 'the body must be JSON: {"confirm": true, ...fields}' });
  }
  if (typeof body !== 'object' || body === null || (body as { confirm?: unknown }).confirm !== true)
    throw new HTTPException(400, { message: 'the action was not confirmed: send {"confirm": true}' });
  return body as Record<string, unknown>;
}

/** Adds the API routes to `app`. */
export function apiRoutes(app: Hono, ctx: DashboardContext): void {
  const { model } = ctx;
  app.get('/api/executions', async (c) => {
    await guard(ctx.authorize, c, { kind: 'view', page: 'executions' });
    const { query, search } = executionQuery(c);
    return c.json(search === undefined ? await model.executions(query) : await model.search(search));
  });

  app.get('/api/executions/:id', async (c) => {
    await guard(ctx.authorize, c, { kind: 'view', page: 'execution' });
    const execution = await model.execution(c.req.param('id'));
    if (!execution)
      throw new HTTPException(404, { message: `no execution ${c.req.param('id')} (or its record expired)` });
    return c.json({ ...execution, actions: applicable(ctx, execution).map((a) => a.name) });
  });

  app.post('/api/executions/:id/actions/:action', async (c) => {
    const prepared = await prepareExecutionAction(ctx.perform, c, c.req.param('id'), c.req.param('action'));
    return c.json(await performExecutionAction(ctx.perform, prepared, await confirmedBody(c.req.raw)));
  });

  app.get('/api/coordination', async (c) => {
    await guard(ctx.authorize, c, { kind: 'view', page: 'coordination' });
    const view = await model.coordination({ pattern: c.req.query('pattern') || '*' });
    if (c.req.query('internal') === '1') return c.json(view);
    return c.json({
      ...view,
      locks: view.locks.filter((l) => !l.internal),
      periods: view.periods.filter((p) => !p.internal),
    });
  });

  app.get('/api/ordered-locks', async (c) => {
    await guard(ctx.authorize, c, { kind: 'view', page: 'coordination' });
    const key = c.req.query('key');
    if (key === undefined || key === '') throw new HTTPException(400, { message: 'missing ?key=<ordered-lock key>' });
    return c.json(await model.orderedLock(key));
  });

  app.post('/api/ordered-locks/:action', async (c) => {
    const prepared = await prepareOrderedAction(ctx.perform, c, c.req.query('key'), c.req.param('action'));
    await confirmedBody(c.req.raw);
    return c.json(await performOrderedAction(ctx.perform, prepared));
  });

  app.get('/api/actions', async (c) => {
    await guard(ctx.authorize, c, { kind: 'view', page: 'executions' });
    const describe = (a: { name: string; label: string; description: string; fields?: readonly unknown[] }) => ({
      name: a.name,
      label: a.label,
      description: a.description,
      fields: a.fields ?? [],
    });
    return c.json({
      readOnly: ctx.readOnly,
      execution: ctx.readOnly ? [] : ctx.perform.executionActions.map(describe),
      orderedLock: ctx.readOnly ? [] : ctx.perform.orderedActions.map(describe),
    });
  });
}
