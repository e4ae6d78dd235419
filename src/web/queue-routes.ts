/**
 * The queue view's routes: `GET /queue` (the page) and `GET /api/queue` (the {@link QueueSnapshot}).
 *
 * @module
 */
import type { Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { QueueInspector } from '../ports/queue-inspector.js';
import { guard, type Authorize } from './auth.js';
import { queuePage } from './html/queue-page.js';
import type { PageContext } from './html/layout.js';

/** What the queue routes read. */
export interface QueueRouteOptions {
  readonly queue: QueueInspector | undefined;
  readonly authorize: Authorize | undefined;
  readonly page: PageContext;
}

/** Adds the queue routes to `app`. */
export function queueRoutes(app: Hono, options: QueueRouteOptions): void {
  app.get('/queue', async (c) => {
    await guard(options.authorize, c, { kind: 'view', page: 'queue' });
    return c.html(queuePage(options.page, await options.queue?.inspectQueue()));
  });
  app.get('/api/queue', async (c) => {
    await guard(options.authorize, c, { kind: 'view', page: 'queue' });
    if (!options.queue)
      throw new HTTPException(501, { message: 'the dashboard was not given the queue (createDashboard({ queue }))' });
    return c.json(await options.queue.inspectQueue());
  });
}
