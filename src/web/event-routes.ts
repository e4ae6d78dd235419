/**
 * The events routes of the dashboard (when `createDashboard` is given `events`): the page and
 * `GET /api/events`, both one page of `engine.listEvents` (`name`, `since`, `until`, `limit`,
 * `cursor` from the query string; a bad one is a 400).
 *
 * @module
 */
import type { Context, Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { Engine, EventListQuery } from '../engine/engine.js';
import { ListFilterError } from '../errors.js';
import { guard, type Authorize } from './auth.js';
import { eventsPage } from './html/events-page.js';
import type { PageContext } from './html/layout.js';

/** What the events routes need: something that lists events (an engine or a runtime's engine). */
export interface EventRoutesDeps {
  readonly events: Pick<Engine, 'listEvents'>;
  readonly authorize: Authorize | undefined;
  readonly page: PageContext;
}

/** Adds the events routes to `app`. */
export function eventRoutes(app: Hono, deps: EventRoutesDeps): void {
  const list = async (c: Context) => {
    await guard(deps.authorize, c, { kind: 'view', page: 'events' });
    const query = queryOf(c);
    try {
      return { query, page: await deps.events.listEvents(query) };
    } catch (error) {
      if (error instanceof ListFilterError) throw new HTTPException(400, { message: error.message });
      throw error;
    }
  };

  app.get('/events', async (c) => {
    const { query, page } = await list(c);
    return c.html(eventsPage(deps.page, page.events, { name: query.name, next: page.cursor }));
  });

  app.get('/api/events', async (c) => {
    const { page } = await list(c);
    return c.json({ items: page.events, ...(page.cursor === undefined ? {} : { cursor: page.cursor }) });
  });
}

/** The listing's query from the query string: numbers where numbers are meant (checked by `listEvents`). */
function queryOf(c: Context): EventListQuery {
  const text = (name: string) => {
    const value = c.req.query(name);
    return value === undefined || value === '' ? undefined : value;
  };
  const number = (name: string) => {
    const value = text(name);
    return value === undefined ? undefined : Number(value);
  };
  const name = text('name');
  const cursor = text('cursor');
  const since = number('since');
  const until = number('until');
  const limit = number('limit');
  return {
    ...(name === undefined ? {} : { name }),
    ...(cursor === undefined ? {} : { cursor }),
    ...(since === undefined ? {} : { since }),
    ...(until === undefined ? {} : { until }),
    ...(limit === undefined ? {} : { limit }),
  };
}
