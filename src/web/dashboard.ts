/**
 * `createDashboard`: a Hono app with the dashboard's pages, its JSON API under `/api` and its
 * actions, over a read model of the store and coordinator. Mount it anywhere (`app.route`,
 * `app.mount`, or serve it as is with `@hono/node-server`).
 *
 * @module
 */
import { Hono, type Context } from 'hono';
import type { Schedules } from '../schedules/service.js';
import { eventRoutes } from './event-routes.js';
import { scheduleRoutes } from './schedule-routes.js';
import { html } from 'hono/html';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { AnyReactorDefinition } from '../dsl/definition.js';
import type { Engine } from '../engine/engine.js';
import { systemClock, type Clock } from '../ports/clock.js';
import type { Coordinator } from '../ports/coordinator.js';
import type { Store } from '../ports/store.js';
import { errorToJSON, ReactorError } from '../errors.js';
import { createReadModel } from '../ops/read-model.js';
import { executionActions, orderedLockActions, type ExecutionAction, type OrderedLockAction } from './actions.js';
import { apiRoutes } from './api.js';
import type { Authorize } from './auth.js';
import type { DashboardContext } from './context.js';
import { page, type PageContext } from './html/layout.js';
import { sameOriginOnly } from './origin.js';
import { pageRoutes } from './pages.js';
import { bulkRoutes } from './bulk.js';
import { opsRoutes, type DashboardMetrics, type DashboardReadiness } from './ops-routes.js';
import { queueRoutes } from './queue-routes.js';
import { checkReadTokenSecret } from './read-token.js';
import { ReadTokenRefusedError, streamRoutes } from './stream-routes.js';
import { isQueueInspector, type QueueInspector } from '../ports/queue-inspector.js';
import type { ActionRecord } from './perform.js';

/** Options of {@link createDashboard}. */
export interface DashboardOptions {
  /** The engine actions go through (retry, cancel, undo, resume). */
  readonly engine: Engine;
  /** Where executions are read from. Default: the engine's store. */
  readonly store?: Store;
  /** Needed for the coordination view, wait details and ordered-lock actions. */
  readonly coordinator?: Coordinator;
  /**
   * Reactors whose graphs are drawn and whose redacted fields are hidden; they are also registered
   * with the engine, so actions can run them. Give every version still running: an execution is
   * drawn from the definition it runs with (its record's fingerprint); the last given of a name is
   * its current one.
   */
  readonly reactors?: readonly AnyReactorDefinition[];
  /** Asked before every page, API call and action; see {@link Authorize}. Default: everything is allowed. */
  readonly authorize?: Authorize;
  /** Hides every action and refuses their routes with 403. */
  readonly readOnly?: boolean;
  /** The path the dashboard is served under, e.g. `/ops` (links are built with it). Default: the root. */
  readonly basePath?: string;
  /** The execution actions offered. Default {@link executionActions} (retry, cancel, undo, resume); add your own entries here. */
  readonly actions?: readonly ExecutionAction[];
  /** The ordered-lock actions offered. Default {@link orderedLockActions} (skip, reset). */
  readonly orderedLockActions?: readonly OrderedLockAction[];
  /**
   * Seconds between live refreshes of a page; 0 turns them off. Default 5. The page of an
   * unfinished execution follows its event stream instead (`GET /executions/:id/stream`,
   * docs/realtime.md) and polls only when the stream is refused; 0 turns that off too.
   */
  readonly refreshSeconds?: number;
  /** Audit hook: called after each action an operator performed. */
  readonly onAction?: (record: ActionRecord) => void;
  /** The runtime's schedules (`runtime.schedules`, `engine.schedules`): a "Schedules" page lists them, with their next runs and a remove action. */
  readonly schedules?: Schedules;
  /** Show an "Events" page: sent events newest first, with the executions each affected (read through `engine.listEvents`). Default false. */
  readonly events?: boolean;
  /** The job queue for the Queue page (`runtime.queueInspector`). Default: the engine's own, when it has one (the embedded engine). */
  readonly queue?: QueueInspector;
  /** Served at `/metrics`: `prometheusMetrics()` of `ts-reactor/metrics`. Without it `/metrics` answers 404. */
  readonly metrics?: DashboardMetrics;
  /** Run for `/readyz` (200 when every check passes, else 503), e.g. `redisReadiness({ redis })`. Without it `/readyz` answers 200. */
  readonly readiness?: DashboardReadiness;
  /** How many of the newest executions a search reads for matches beyond its exact lookups. Default 1000. */
  readonly searchWindow?: number;
  /**
   * The secret read tokens (`createReadToken`) are verified with, at least 32 characters: a
   * request for `/executions/:id/stream?token=…` with a valid token for that execution is served
   * without `authorize`. Absent: tokens are refused, and the stream is authorized as the execution page.
   */
  readonly readTokenSecret?: string;
  /**
   * Seconds between two keep-alive comments (`: keep-alive`) of an open execution stream, so that
   * a proxy with an idle timeout does not cut it while the execution is quiet; 0 sends none.
   * Default 15.
   */
  readonly streamHeartbeatSeconds?: number;
  /** The time source of the stream's heartbeat. Default the system clock. */
  readonly clock?: Clock;
}

/** Normalizes a base path: `''` for the root, else `/a/b` without a trailing slash. */
export function normalizeBasePath(raw: string | undefined): string {
  const trimmed = (raw ?? '').trim().replace(/\/+$/, '');
  if (trimmed === '') return '';
  if (!/^\/?[A-Za-z0-9._~\-/]+$/.test(trimmed))
    throw new RangeError(`basePath must be a plain URL path such as /ops; got ${JSON.stringify(raw)}`);
  return trimmed.startsWith('/') ? trimmed : `/${trimmed}`;
}

/**
 * Creates the dashboard app.
 *
 * @throws RangeError when `basePath` is not a plain URL path, `readTokenSecret` is shorter than 32 characters, or
 *   `streamHeartbeatSeconds` is not a finite number ≥ 0.
 * @example
 * ```ts
 * import { serve } from '@hono/node-server';
 * import { createDashboard } from 'ts-reactor/web';
 *
 * const dashboard = createDashboard({ engine, coordinator, reactors: [checkout], basePath: '/ops', authorize: (c) => c.req.header('x-role') === 'ops' });
 * serve({ fetch: dashboard.fetch, port: 3000 });   // http://localhost:3000/ops/executions
 * ```
 */
export function createDashboard(options: DashboardOptions): Hono {
  const base = normalizeBasePath(options.basePath);
  if (options.readTokenSecret !== undefined) checkReadTokenSecret(options.readTokenSecret);
  if (options.reactors && options.reactors.length > 0) options.engine.register(...options.reactors);
  const model = createReadModel({
    store: options.store ?? options.engine.store,
    ...(options.coordinator ? { coordinator: options.coordinator } : {}),
    ...(options.reactors ? { reactors: options.reactors } : {}),
    ...(options.searchWindow === undefined ? {} : { searchWindow: options.searchWindow }),
  });
  const readOnly = options.readOnly ?? false;
  const pageContext: PageContext = {
    base,
    readOnly,
    refreshSeconds: options.refreshSeconds ?? 5,
    ...(options.schedules ? { schedules: true } : {}),
    ...(options.events === true ? { events: true } : {}),
  };
  const ctx: DashboardContext = {
    model,
    authorize: options.authorize,
    readOnly,
    page: pageContext,
    perform: {
      engine: options.engine,
      model,
      authorize: options.authorize,
      readOnly,
      executionActions: options.actions ?? executionActions,
      orderedActions: options.orderedLockActions ?? orderedLockActions,
      onAction: options.onAction,
    },
  };
  const app = base === '' ? new Hono() : new Hono().basePath(base);
  app.use('*', sameOriginOnly);
  opsRoutes(app, { metrics: options.metrics, readiness: options.readiness });
  queueRoutes(app, { queue: queueOf(options), authorize: options.authorize, page: pageContext });
  bulkRoutes(app, ctx);
  if (options.schedules)
    scheduleRoutes(app, { schedules: options.schedules, authorize: options.authorize, page: pageContext });
  if (options.events === true)
    eventRoutes(app, { events: options.engine, authorize: options.authorize, page: pageContext });
  streamRoutes(app, {
    engine: options.engine,
    store: options.store ?? options.engine.store,
    authorize: options.authorize,
    readTokenSecret: options.readTokenSecret,
    heartbeatMs: heartbeatMsOf(options.streamHeartbeatSeconds),
    clock: options.clock ?? systemClock,
  });
  apiRoutes(app, ctx);
  pageRoutes(app, ctx);
  app.onError((error, c) => respondError(c, error, pageContext));
  app.notFound((c) => respondError(c, new HTTPException(404, { message: `no page at ${c.req.path}` }), pageContext));
  return app;
}

/** The stream heartbeat's interval in ms; a value that is not a finite number ≥ 0 is a `RangeError`. */
function heartbeatMsOf(seconds: number | undefined): number {
  if (seconds === undefined) return 15_000;
  if (!Number.isFinite(seconds) || seconds < 0)
    throw new RangeError(`streamHeartbeatSeconds must be a finite number ≥ 0; got ${String(seconds)}`);
  return Math.round(seconds * 1000);
}

/** The queue option, else the engine's own inspector (the embedded engine has one). */
function queueOf(options: DashboardOptions): QueueInspector | undefined {
  if (options.queue) return options.queue;
  const own = (options.engine as { readonly queueInspector?: unknown }).queueInspector;
  return isQueueInspector(own) ? own : undefined;
}

const STATUS_BY_CODE: Readonly<Record<string, 400 | 404 | 409 | 422 | 501>> = {
  execution_not_found: 404,
  execution_state: 409,
  reactor_unknown: 409,
  query_invalid: 400,
  action_invalid: 400,
  coordinator_missing: 501,
  inspector_missing: 501,
  resume_payload_invalid: 422,
  resume_refused: 409,
  interrupt_timed_out: 409,
  watch_unavailable: 501,
};

/** The status of an error: an HTTP exception's own, a known error code's, else 500. */
function statusOf(error: unknown): ContentfulStatusCode {
  if (error instanceof HTTPException) return error.status;
  if (error instanceof RangeError) return 400;
  if (ReactorError.is(error)) return STATUS_BY_CODE[error.code] ?? 500;
  return 500;
}

/** Whether a path's errors are answered as JSON: the `/api` routes and an execution's event stream (read by scripts and `EventSource`). */
function wantsJson(path: string, base: string): boolean {
  if (path.startsWith(`${base}/api/`)) return true;
  return /^\/executions\/[^/]+\/stream$/.test(path.slice(base.length));
}

/** JSON under `/api` and for the event stream, a small page elsewhere; never a stack trace. */
function respondError(c: Context, error: unknown, pc: PageContext): Response | Promise<Response> {
  const status = statusOf(error);
  const { stack: _stack, ...json } = errorToJSON(error);
  const body =
    status === 500 && !ReactorError.is(error)
      ? { name: 'Error', message: 'internal error' }
      : {
          ...json,
          ...(error instanceof HTTPException ? { name: 'HTTPError', code: `http_${status}` } : {}),
          ...(error instanceof ReadTokenRefusedError ? { details: { reason: error.reason } } : {}),
        };
  if (status === 500) console.error(error);
  if (wantsJson(c.req.path, pc.base)) return c.json({ error: body }, status);
  return c.html(
    page(
      pc,
      { title: `Error ${status}`, nav: 'executions', live: false },
      html`<h1>Error ${status}</h1><div class="error">${body.message}</div><p><a href="${pc.base}/executions">Executions</a></p>`,
    ),
    status,
  );
}
