/**
 * `ts-reactor/otel`: OpenTelemetry tracing of reactors, as an engine middleware. It imports
 * only `@opentelemetry/api` (an optional peer dependency); the application brings the SDK.
 *
 * Spans: `run <reactor>` for each run of an execution (inline, or one job in a worker),
 * `step <path>`, `compensate <path>`, `undo <path>`, `enqueue <reactor>`. Retries, park and
 * wake, and coordination are span events. An execution is one trace across every worker: its
 * W3C trace context is persisted on the execution record when it starts, and each job's run
 * span continues it. Reference: docs/observability.md.
 *
 * @example
 * ```ts
 * import { createRedisRuntime } from 'ts-reactor/bullmq';
 * import { otel } from 'ts-reactor/otel';
 * const runtime = createRedisRuntime({ url, reactors: [checkout], middleware: [otel()] });
 * ```
 *
 * @module
 */
import { trace, type Tracer } from '@opentelemetry/api';
import type { Middleware } from '../engine/model/events.js';
import { OpenSpans } from './open-spans.js';
import { applyEvent } from './span-events.js';
import { openScope } from './spans.js';

export { ATTR } from './attributes.js';
export { fromTraceContext, toTraceContext } from './trace-context.js';
export { spanStepName } from './spans.js';
export { METER_NAME, otelMetrics, type OtelMetricsOptions } from './metrics.js';
export { METRICS, stepLabel, type GaugeSources, type MetricSpec } from './metric-spec.js';
export { COUNTED_STATES, executionCounts, type ExecutionCountsOptions } from './execution-counts.js';
export type { TraceContext } from '../ports/store.js';

/** The instrumentation scope name of the default tracer. */
export const TRACER_NAME = 'ts-reactor';

/** Options of {@link otel}. */
export interface OtelOptions {
  /** The tracer to start spans with. Default: `trace.getTracer('ts-reactor')` of the global tracer provider. */
  readonly tracer?: Tracer;
  /** Put the reactor's input (redacted fields hidden) on run spans as JSON (`ts_reactor.input`). Default false. */
  readonly recordInput?: boolean;
}

/** The tracing middleware, with a view of what it has open (for tests and shutdown checks). */
export interface OtelMiddleware extends Middleware {
  /** Spans this middleware has open right now in this process (0 when nothing runs: no span leaks). */
  readonly openSpans: number;
}

/**
 * Creates the tracing middleware. Pass it to `createEngine`, `createEmbeddedEngine` or
 * `createRedisRuntime` in `middleware` — in every process that starts or runs executions.
 *
 * @example
 * ```ts
 * const engine = createEmbeddedEngine({ middleware: [otel({ tracer: provider.getTracer('shop') })] });
 * ```
 */
export function otel(options: OtelOptions = {}): OtelMiddleware {
  const open = new OpenSpans();
  const tracer = (): Tracer => options.tracer ?? trace.getTracer(TRACER_NAME);
  const recordInput = options.recordInput ?? false;
  return {
    name: 'otel',
    enter: (scope) => openScope({ tracer, open }, scope),
    onEvent: (event) => applyEvent(open, event, recordInput),
    get openSpans() {
      return open.size;
    },
  };
}
