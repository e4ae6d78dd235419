/**
 * The schedules routes of the dashboard (when `createDashboard` is given `schedules`): the page,
 * its remove confirm page and post, and `GET /api/schedules`.
 *
 * @module
 */
import type { Context, Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { Schedules } from '../schedules/service.js';
import { guard, type Authorize } from './auth.js';
import { confirmPage } from './html/confirm-page.js';
import type { PageContext } from './html/layout.js';
import { schedulesPage, scheduleSpec } from './html/schedules-page.js';

/** What the schedules routes need. */
export interface ScheduleRoutesDeps {
  readonly schedules: Schedules;
  readonly authorize: Authorize | undefined;
  readonly page: PageContext;
}

/** Adds the schedules routes to `app`. */
export function scheduleRoutes(app: Hono, deps: ScheduleRoutesDeps): void {
  const { schedules, page: pc } = deps;
  const removal = async (c: Context) => {
    const id = c.req.param('id') ?? '';
    await guard(deps.authorize, c, { kind: 'action', action: 'remove-schedule', target: { type: 'schedule', id } });
    if (pc.readOnly) throw new HTTPException(403, { message: 'the dashboard is read-only' });
    const found = await schedules.get(id, { runs: 0 });
    if (!found) throw new HTTPException(404, { message: `no schedule ${id}` });
    return found;
  };

  app.get('/schedules', async (c) => {
    await guard(deps.authorize, c, { kind: 'view', page: 'schedules' });
    return c.html(schedulesPage(pc, await schedules.list({ runs: 3 }), c.req.query('notice')));
  });

  app.get('/api/schedules', async (c) => {
    await guard(deps.authorize, c, { kind: 'view', page: 'schedules' });
    return c.json({ items: await schedules.list({ runs: Number(c.req.query('runs') ?? 5) || 5 }) });
  });

  app.get('/schedules/:id/remove', async (c) => {
    const found = await removal(c);
    const path = `${pc.base}/schedules/${encodeURIComponent(found.id)}/remove`;
    return c.html(
      confirmPage(pc, {
        title: `Remove schedule ${found.id}`,
        description: `No more ticks of ${scheduleSpec(found)} will start ${found.reactor}; executions already started are not touched.`,
        action: path,
        back: `${pc.base}/schedules`,
        label: 'Remove',
        danger: true,
        fields: [],
        nav: 'schedules',
      }),
    );
  });

  app.post('/schedules/:id/remove', async (c) => {
    const found = await removal(c);
    const form = await c.req.parseBody();
    if (form['confirm'] !== 'yes')
      throw new HTTPException(400, {
        message: 'the removal was not confirmed (post confirm=yes from its confirm page)',
      });
    await schedules.remove(found.id);
    return c.redirect(`${pc.base}/schedules?notice=${encodeURIComponent(`Schedule ${found.id} removed.`)}`, 303);
  });
}
