/**
 * What `multiprocess.test.ts` and its worker processes (`hop-worker-process.ts`) share: the
 * worker's JSON config, the lines it prints, the reactor both sides register, and the JSON form
 * of a finished span.
 *
 * The reactor `otel-hop` is built to run in three jobs: `first` succeeds and `second` fails its
 * first attempt (a delayed retry: job 1 ends), `second` succeeds and `third` finds its lock held
 * by the test (the execution parks: job 2 ends), then `third` runs (job 3).
 */
import { z } from 'zod';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { reactor } from '../../src/index.js';

export interface HopWorkerConfig {
  readonly url: string;
  readonly prefix: string;
  /** A, B or C: printed on every line. */
  readonly name: string;
}

/** Printed once the runtime is up (the worker waits for a `go` line on stdin). */
export interface HopReadyLine {
  readonly ready: true;
  readonly name: string;
  readonly pid: number;
}

/** A finished span, as JSON. */
export interface SpanLine {
  readonly name: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | undefined;
  readonly kind: number;
  readonly status: number;
  readonly attributes: Readonly<Record<string, unknown>>;
  readonly events: readonly string[];
}

/** Printed when the worker stopped after its one job: the spans it finished and its counts. */
export interface HopStoppedLine {
  readonly stopped: true;
  readonly name: string;
  readonly pid: number;
  /** Why its job ended: `retry`, `park` or `completed`. */
  readonly ended: string;
  readonly spans: readonly SpanLine[];
  readonly started: number;
  readonly ended_: number;
  /** Spans the middleware still had open after the worker stopped. */
  readonly open: number;
}

/** The lock key `third` waits on. */
export const HOP_LOCK = (n: number): string => `hop:${n}`;
/** The delay of `second`'s retry: long enough for the worker that failed it to stop first. */
export const HOP_RETRY_MS = 4_000;
/** The parked execution's fallback delay: long enough for the worker that parked it to stop first (the test releases the lock before the next worker starts). */
export const HOP_PARK_FALLBACK_MS = 4_000;

/** The reactor every process registers. */
export function buildHop() {
  return reactor('otel-hop')
    .input({ n: z.number() })
    .step('first', { run: ({ n }) => n + 1 })
    .step('second', {
      waitFor: ['first'],
      retry: { maxAttempts: 2, backoff: 'fixed', baseDelay: HOP_RETRY_MS },
      run: (_args, ctx) => {
        if (ctx.attempt === 1) throw new Error('upstream busy');
        return 'second';
      },
    })
    .step('third', {
      args: ($) => ({ n: $.input('n') }),
      waitFor: ['second'],
      lock: { key: ({ n }) => HOP_LOCK(n) },
      run: () => 'third',
    })
    .returns('third');
}

/** The JSON form of a finished span. */
export function spanLine(span: ReadableSpan): SpanLine {
  return {
    name: span.name,
    traceId: span.spanContext().traceId,
    spanId: span.spanContext().spanId,
    parentSpanId: span.parentSpanContext?.spanId,
    kind: span.kind,
    status: span.status.code,
    attributes: { ...span.attributes },
    events: span.events.map((e) => e.name),
  };
}
