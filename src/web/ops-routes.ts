/**
 * The routes beside the pages: the favicon (an inline SVG), `/metrics` (Prometheus text from
 * `ts-reactor/metrics`), `/healthz` and `/readyz`. None of them asks the authorize hook: a
 * scraper and a load balancer probe them without a session.
 *
 * @module
 */
import type { Hono } from 'hono';

/** The metrics served at `/metrics`: a `prometheusMetrics()` of `ts-reactor/metrics` (only these two members are read). */
export interface DashboardMetrics {
  readonly contentType: string;
  text(): Promise<string>;
}

/** One readiness check's outcome (as `ts-reactor/metrics` reports it). */
export interface DashboardReadinessCheck {
  readonly name: string;
  readonly ok: boolean;
  readonly detail?: string;
}

/** Readiness checks run for `/readyz`: e.g. `redisReadiness({ redis })` of `ts-reactor/metrics`. */
export type DashboardReadiness = () => Promise<readonly DashboardReadinessCheck[]>;

/** What the routes serve. */
export interface OpsRouteOptions {
  readonly metrics: DashboardMetrics | undefined;
  readonly readiness: DashboardReadiness | undefined;
}

const FAVICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#1d2330"/><circle cx="16" cy="16" r="9" fill="none" stroke="#7fa2ff" stroke-width="3"/><circle cx="16" cy="16" r="3.5" fill="#ffffff"/></svg>`;

const NO_STORE = { 'cache-control': 'no-store' };

/** Adds the favicon, metrics and health routes to `app`. */
export function opsRoutes(app: Hono, options: OpsRouteOptions): void {
  const favicon = () =>
    new Response(FAVICON, { headers: { 'content-type': 'image/svg+xml', 'cache-control': 'public, max-age=86400' } });
  app.get('/favicon.svg', favicon);
  app.get('/favicon.ico', favicon);

  app.get('/healthz', (c) => c.json({ status: 'ok' }, 200, NO_STORE));

  app.get('/readyz', async (c) => {
    const checks = options.readiness
      ? await options
          .readiness()
          .catch((error: unknown): readonly DashboardReadinessCheck[] => [
            { name: 'readiness', ok: false, detail: error instanceof Error ? error.message : String(error) },
          ])
      : [];
    const ready = checks.every((check) => check.ok);
    return c.json({ ready, checks }, ready ? 200 : 503, NO_STORE);
  });

  app.get('/metrics', async (c) => {
    if (!options.metrics)
      return c.text('no metrics on this dashboard (pass createDashboard({ metrics: prometheusMetrics() }))\n', 404);
    return c.body(await options.metrics.text(), 200, { 'content-type': options.metrics.contentType, ...NO_STORE });
  });
}
