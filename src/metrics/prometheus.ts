/**
 * The engine's metrics in Prometheus text format, on a `prom-client` registry: the same table as
 * the OpenTelemetry metrics (`otel/metric-spec.ts`), fed by the same events.
 *
 * @module
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Middleware } from '../engine/model/events.js';
import type { ScheduleObserver } from '../schedules/events.js';
import { EventMetrics, METRICS, type GaugeSources, type MetricKey, type MetricSink } from '../otel/metric-spec.js';

/** Options of {@link prometheusMetrics}. */
export interface PrometheusMetricsOptions {
  /** The registry to register on. Default: a new one (not prom-client's global registry). */
  readonly registry?: Registry;
  /** What the gauges read at each scrape (queue jobs, oldest waiting job, executions by status). */
  readonly gauges?: GaugeSources;
}

/** The metrics of one engine (or several) for a Prometheus scrape. */
export interface PrometheusMetrics {
  /** Add it to the engine's `middleware`: it observes every event (and the runtime's schedule events). */
  readonly middleware: Middleware & ScheduleObserver;
  readonly registry: Registry;
  /** The `Content-Type` of {@link PrometheusMetrics.text}. */
  readonly contentType: string;
  /** The current values, in Prometheus text format (gauges are read now). */
  text(): Promise<string>;
}

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/**
 * Prometheus metrics of the engine: counters end in `_total`, durations are histograms in seconds.
 *
 * @example
 * ```ts
 * import { createEngine, MemoryStore } from 'ts-reactor';
 * import { prometheusMetrics, serveOperations } from 'ts-reactor/metrics';
 * const metrics = prometheusMetrics();
 * const engine = createEngine({ store: new MemoryStore(), middleware: [metrics.middleware] });
 * const server = await serveOperations({ port: 9464, metrics });
 * ```
 */
export function prometheusMetrics(options: PrometheusMetricsOptions = {}): PrometheusMetrics {
  const registry = options.registry ?? new Registry();
  const counters = new Map<MetricKey, Counter>();
  const histograms = new Map<MetricKey, Histogram>();
  for (const [key, spec] of Object.entries(METRICS) as [MetricKey, (typeof METRICS)[MetricKey]][]) {
    const common = { name: spec.name, help: spec.help, labelNames: [...spec.labels], registers: [registry] };
    if (spec.kind === 'counter') counters.set(key, new Counter({ ...common, name: `${spec.name}_total` }));
    if (spec.kind === 'histogram') histograms.set(key, new Histogram({ ...common, buckets: BUCKETS }));
  }
  registerGauges(registry, options.gauges ?? {});
  const sink: MetricSink = {
    add: (metric, value, labels) => counters.get(metric)?.inc(labels, value),
    record: (metric, value, labels) => histograms.get(metric)?.observe(labels, value),
  };
  const observed = new EventMetrics(sink);
  return {
    middleware: {
      name: 'prometheus-metrics',
      onEvent: (event) => observed.observe(event),
      onScheduleEvent: (event) => observed.observeSchedule(event),
    },
    registry,
    contentType: registry.contentType,
    text: () => registry.metrics(),
  };
}

/** The gauges, set from `sources` at each scrape; a source that fails leaves its gauge empty (or NaN, without labels) for that scrape. */
function registerGauges(registry: Registry, sources: GaugeSources): void {
  const gauge = (
    spec: (typeof METRICS)['queueJobs' | 'queueOldestAge' | 'executionsByStatus' | 'wakeUpsDegraded'],
    read: (g: Gauge) => Promise<void>,
  ) =>
    new Gauge({
      name: spec.name,
      help: spec.help,
      labelNames: [...spec.labels],
      registers: [registry],
      async collect() {
        this.reset();
        // A failed read leaves a labelled gauge without samples; one without labels always has a sample: NaN (unknown), not 0.
        await read(this).catch(() => (spec.labels.length === 0 ? this.set(Number.NaN) : undefined));
      },
    });
  const { queueJobs, queueOldestWaitingMs, executionsByStatus, wakeUpsDegraded } = sources;
  if (wakeUpsDegraded) gauge(METRICS.wakeUpsDegraded, async (g) => void g.set(wakeUpsDegraded() ? 1 : 0));
  if (queueJobs)
    gauge(METRICS.queueJobs, async (g) => {
      for (const [state, count] of Object.entries(await queueJobs())) g.set({ state }, count);
    });
  if (queueOldestWaitingMs)
    gauge(METRICS.queueOldestAge, async (g) => {
      const ms = await queueOldestWaitingMs();
      g.set(ms === undefined ? 0 : ms / 1000);
    });
  if (executionsByStatus)
    gauge(METRICS.executionsByStatus, async (g) => {
      for (const [status, count] of Object.entries(await executionsByStatus())) g.set({ status }, count);
    });
}
