/**
 * `ts-reactor/metrics`: the engine's metrics for Prometheus (on `prom-client`, an optional peer
 * dependency) and an operations server with `/metrics`, `/healthz` and `/readyz`. For
 * OpenTelemetry metrics, see `otelMetrics` in `ts-reactor/otel`. Reference:
 * docs/operations.md#metrics-and-health.
 *
 * @module
 */
export { prometheusMetrics, type PrometheusMetrics, type PrometheusMetricsOptions } from './prometheus.js';
export {
  answerOperations,
  serveOperations,
  type OperationsServer,
  type OperationsServerOptions,
  type Readiness,
  type ReadinessCheck,
} from './server.js';
export {
  postgresReadiness,
  redisReadiness,
  type PostgresReadinessOptions,
  type RedisReadinessOptions,
  type SubscriptionsState,
} from './readiness.js';
export { METRICS, type GaugeSources, type MetricSpec } from '../otel/metric-spec.js';
export { COUNTED_STATES, executionCounts, type ExecutionCountsOptions } from '../otel/execution-counts.js';
