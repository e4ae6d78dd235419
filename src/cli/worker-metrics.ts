/**
 * `ts-reactor worker --metrics-port`: the worker's Prometheus metrics and health routes
 * (`ts-reactor/metrics`), loaded only when asked for, so a worker without `prom-client` runs.
 *
 * @module
 */
import type { Middleware } from '../engine/model/events.js';
import { loadIoredis, MissingPeerError } from './redis-check.js';

/** The worker's operations server: its middleware, then its routes once the worker runs. */
export interface WorkerOperations {
  /** Add it to the runtime's middleware: the metrics observe every event. */
  readonly middleware: Middleware;
  /** Serves `/metrics`, `/healthz` and `/readyz`; resolves to the server's base URL. */
  start(workerRunning: () => boolean): Promise<string>;
  close(): Promise<void>;
}

/** The operations of a worker on `port` (0: a free one) over the Redis at `url`. @throws MissingPeerError without `prom-client`. */
export async function workerOperations(url: string, port: number): Promise<WorkerOperations> {
  const module = await import('../metrics/index.js').catch((error: unknown) => {
    const missing = (error as { code?: unknown }).code === 'ERR_MODULE_NOT_FOUND';
    if (missing && String((error as Error).message).includes("'prom-client'"))
      throw new MissingPeerError('prom-client', error);
    throw error;
  });
  const metrics = module.prometheusMetrics();
  let close = async (): Promise<void> => undefined;
  return {
    middleware: metrics.middleware,
    async start(workerRunning) {
      const { Redis } = await loadIoredis();
      const redis = new Redis(url, { maxRetriesPerRequest: 1 });
      redis.on('error', () => undefined); // readiness reports it
      const server = await module
        .serveOperations({ port, metrics, readiness: module.redisReadiness({ redis, workerRunning }) })
        .catch((error: unknown) => {
          redis.disconnect();
          throw error;
        });
      close = async () => {
        await server.close();
        redis.disconnect();
      };
      return server.url;
    },
    close: () => close(),
  };
}
