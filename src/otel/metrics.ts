/**
 * OpenTelemetry metrics of reactors, as an engine middleware: every metric of `metric-spec.ts`
 * on a meter of the application's meter provider (`@opentelemetry/api` only; the application
 * brings the SDK and its exporter). Reference: docs/observability.md#metrics.
 *
 * @module
 */
import { metrics as otelApi, type Counter, type Histogram, type Meter } from '@opentelemetry/api';
import type { Middleware } from '../engine/model/events.js';
import type { ScheduleObserver } from '../schedules/events.js';
import { EventMetrics, METRICS, type GaugeSources, type MetricKey, type MetricSink } from './metric-spec.js';

/** The instrumentation scope name of the default meter. */
export const METER_NAME = 'ts-reactor';

/** Options of {@link otelMetrics}. */
export interface OtelMetricsOptions {
  /** The meter to record on. Default: `metrics.getMeter('ts-reactor')` of the global meter provider. */
  readonly meter?: Meter;
  /** What the gauges read when collected (queue jobs, oldest waiting job, executions by status). */
  readonly gauges?: GaugeSources;
}

/**
 * A middleware that records the engine's metrics on an OpenTelemetry meter: executions started
 * and finished, step attempts and durations, coordination contention and wait, parks, stopped
 * jobs, sweep recoveries; with `gauges`, queue depth, the oldest waiting job and executions by
 * status.
 *
 * @example
 * ```ts
 * import { createRedisRuntime } from 'ts-reactor/bullmq';
 * import { otelMetrics } from 'ts-reactor/otel';
 * const runtime = createRedisRuntime({ url, reactors: [checkout], middleware: [otelMetrics()] });
 * ```
 */
export function otelMetrics(options: OtelMetricsOptions = {}): Middleware & ScheduleObserver {
  const meter = options.meter ?? otelApi.getMeter(METER_NAME);
  const counters = new Map<MetricKey, Counter>();
  const histograms = new Map<MetricKey, Histogram>();
  for (const [key, spec] of Object.entries(METRICS) as [MetricKey, (typeof METRICS)[MetricKey]][]) {
    const described = { description: spec.help, ...('unit' in spec ? { unit: spec.unit } : {}) };
    if (spec.kind === 'counter') counters.set(key, meter.createCounter(spec.name, described));
    if (spec.kind === 'histogram') histograms.set(key, meter.createHistogram(spec.name, described));
  }
  observeGauges(meter, options.gauges ?? {});
  const sink: MetricSink = {
    add: (metric, value, labels) => counters.get(metric)?.add(value, labels),
    record: (metric, value, labels) => histograms.get(metric)?.record(value, labels),
  };
  const observed = new EventMetrics(sink);
  return {
    name: 'otel-metrics',
    onEvent: (event) => observed.observe(event),
    onScheduleEvent: (event) => observed.observeSchedule(event),
  };
}

/** The gauges, read from `sources` at each collection. */
function observeGauges(meter: Meter, sources: GaugeSources): void {
  const { queueJobs, queueOldestWaitingMs, executionsByStatus, wakeUpsDegraded } = sources;
  if (wakeUpsDegraded) {
    const spec = METRICS.wakeUpsDegraded;
    const gauge = meter.createObservableGauge(spec.name, { description: spec.help });
    gauge.addCallback((result) => result.observe(wakeUpsDegraded() ? 1 : 0));
  }
  if (queueJobs) {
    const gauge = meter.createObservableGauge(METRICS.queueJobs.name, { description: METRICS.queueJobs.help });
    gauge.addCallback(async (result) => {
      for (const [state, count] of Object.entries(await queueJobs().catch(() => ({}))))
        result.observe(count, { state });
    });
  }
  if (queueOldestWaitingMs) {
    const spec = METRICS.queueOldestAge;
    const gauge = meter.createObservableGauge(spec.name, { description: spec.help, unit: spec.unit });
    gauge.addCallback(async (result) => {
      const ms = await queueOldestWaitingMs().catch(() => null);
      if (ms !== null) result.observe(ms === undefined ? 0 : ms / 1000); // a failed read observes nothing
    });
  }
  if (executionsByStatus) {
    const spec = METRICS.executionsByStatus;
    const gauge = meter.createObservableGauge(spec.name, { description: spec.help });
    gauge.addCallback(async (result) => {
      for (const [status, count] of Object.entries(await executionsByStatus().catch(() => ({}))))
        result.observe(count, { status });
    });
  }
}
