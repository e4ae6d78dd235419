/**
 * A small HTTP server for operators: `/metrics` (Prometheus text), `/healthz` (the process is up)
 * and `/readyz` (its dependencies answer: 200 when every check passes, else 503), each with a JSON
 * or text body. Used by `ts-reactor worker --metrics-port` and the dashboard's own routes.
 *
 * @module
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PrometheusMetrics } from './prometheus.js';

/** The outcome of one readiness check. */
export interface ReadinessCheck {
  readonly name: string;
  readonly ok: boolean;
  readonly detail?: string;
}

/** Checks readiness: each check says whether it passed. */
export type Readiness = () => Promise<readonly ReadinessCheck[]>;

/** Options of {@link serveOperations}. */
export interface OperationsServerOptions {
  /** The port to listen on; 0 picks a free one (read it from {@link OperationsServer.port}). */
  readonly port: number;
  /** Default `0.0.0.0`. */
  readonly host?: string;
  /** Served at `/metrics`; without it `/metrics` answers 404. */
  readonly metrics?: PrometheusMetrics;
  /** Run for `/readyz`; without it `/readyz` answers like `/healthz`. */
  readonly readiness?: Readiness;
}

/** A running operations server. */
export interface OperationsServer {
  readonly port: number;
  readonly url: string;
  close(): Promise<void>;
}

/** Answers one request of the operations routes; true when it was one of them (`/metrics`, `/healthz`, `/readyz`). */
export async function answerOperations(
  request: Pick<IncomingMessage, 'url' | 'method'>,
  response: ServerResponse,
  options: Pick<OperationsServerOptions, 'metrics' | 'readiness'>,
): Promise<boolean> {
  const path = new URL(request.url ?? '/', 'http://localhost').pathname;
  if (path === '/healthz') return send(response, 200, 'application/json', JSON.stringify({ status: 'ok' }));
  if (path === '/readyz') {
    const checks = options.readiness ? await options.readiness().catch(failedCheck) : [];
    const ready = checks.every((c) => c.ok);
    return send(response, ready ? 200 : 503, 'application/json', JSON.stringify({ ready, checks }));
  }
  if (path === '/metrics') {
    if (!options.metrics) return send(response, 404, 'text/plain', 'no metrics on this server\n');
    return send(response, 200, options.metrics.contentType, await options.metrics.text());
  }
  return false;
}

/** Starts the operations server. */
export function serveOperations(options: OperationsServerOptions): Promise<OperationsServer> {
  const server = createServer((request, response) => {
    void answerOperations(request, response, options).then(
      (answered) => answered || send(response, 404, 'text/plain', 'not found\n'),
      (error: unknown) =>
        send(response, 500, 'text/plain', `${error instanceof Error ? error.message : String(error)}\n`),
    );
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '0.0.0.0', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        port,
        url: `http://127.0.0.1:${port}`,
        close: () => new Promise<void>((done) => server.close(() => done())),
      });
    });
  });
}

function failedCheck(error: unknown): readonly ReadinessCheck[] {
  return [{ name: 'readiness', ok: false, detail: error instanceof Error ? error.message : String(error) }];
}

function send(response: ServerResponse, status: number, type: string, body: string): true {
  response.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
  response.end(body);
  return true;
}
