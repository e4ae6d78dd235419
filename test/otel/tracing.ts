/**
 * A tracer provider for tests: an in-memory exporter of finished spans, and a processor that
 * counts spans started and ended (every started span must end: no leaks). Helpers read the
 * exported spans as a tree.
 */
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import type { Tracer } from '@opentelemetry/api';
import { otel, type OtelMiddleware, type OtelOptions } from '../../src/otel/index.js';

/** A tracer with its exporter and counters. */
export interface Tracing {
  readonly tracer: Tracer;
  readonly exporter: InMemorySpanExporter;
  readonly counts: { started: number; ended: number };
  readonly middleware: OtelMiddleware;
  spans(): ReadableSpan[];
}

/** Creates a tracer provider with an in-memory exporter and a start/end counter. */
export function tracing(options: Omit<OtelOptions, 'tracer'> = {}): Tracing {
  const exporter = new InMemorySpanExporter();
  const counts = { started: 0, ended: 0 };
  const counter: SpanProcessor = {
    onStart: () => void counts.started++,
    onEnd: () => void counts.ended++,
    forceFlush: () => Promise.resolve(),
    shutdown: () => Promise.resolve(),
  };
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter), counter] });
  const tracer = provider.getTracer('ts-reactor-test');
  return {
    tracer,
    exporter,
    counts,
    middleware: otel({ ...options, tracer }),
    spans: () => exporter.getFinishedSpans(),
  };
}

/** A span's name and its parent's name (`(root)`, or `(remote)` for a parent not among `spans`). */
export function edges(spans: readonly ReadableSpan[]): string[] {
  const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
  return spans.map((s) => {
    const parentId = s.parentSpanContext?.spanId;
    const parent = parentId === undefined ? '(root)' : (byId.get(parentId)?.name ?? '(remote)');
    return `${s.name} <- ${parent}`;
  });
}

/** The spans named `name`. */
export function named(spans: readonly ReadableSpan[], name: string): ReadableSpan[] {
  return spans.filter((s) => s.name === name);
}

/** The one span named `name` (throws when there is not exactly one). */
export function one(spans: readonly ReadableSpan[], name: string): ReadableSpan {
  const found = named(spans, name);
  if (found.length !== 1)
    throw new Error(`expected one span "${name}", found ${found.length}: ${spans.map((s) => s.name).join(', ')}`);
  return found[0]!;
}

/** The names of a span's events. */
export function eventNames(span: ReadableSpan): string[] {
  return span.events.map((e) => e.name);
}

/** The parent span of `span` among `spans`. */
export function parentOf(spans: readonly ReadableSpan[], span: ReadableSpan): ReadableSpan | undefined {
  const id = span.parentSpanContext?.spanId;
  return spans.find((s) => s.spanContext().spanId === id);
}
