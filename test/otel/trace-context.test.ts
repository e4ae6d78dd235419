/**
 * The persisted trace context: its W3C form, bad values refused (never an exception, never a
 * broken trace), and a record whose trace context cannot be read — the run starts a new trace,
 * says so on its span, and persists the new context for the jobs after it.
 */
import { TraceFlags, createTraceState, type SpanContext } from '@opentelemetry/api';
import { describe, expect, test } from 'vitest';
import { createEngine, JOB_FORMAT_VERSION, MemoryCoordinator, MemoryStore, reactor } from '../../src/index.js';
import { ATTR, fromTraceContext, toTraceContext } from '../../src/otel/index.js';
import { createMemoryQueue } from '../../src/queue/memory.js';
import { ManualClock } from '../../src/testing/index.js';
import { one, tracing } from './tracing.js';

const SPAN: SpanContext = {
  traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
  spanId: '00f067aa0ba902b7',
  traceFlags: TraceFlags.SAMPLED,
};

describe('W3C form', () => {
  test('round trip, with and without tracestate', () => {
    expect(toTraceContext(SPAN)).toEqual({ traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' });
    expect(fromTraceContext(toTraceContext(SPAN))).toEqual({ ...SPAN, isRemote: true });
    const withState = { ...SPAN, traceFlags: TraceFlags.NONE, traceState: createTraceState('vendor=a1,other=b2') };
    const carrier = toTraceContext(withState);
    expect(carrier).toEqual({
      traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00',
      tracestate: 'vendor=a1,other=b2',
    });
    expect(fromTraceContext(carrier)?.traceState?.get('vendor')).toBe('a1');
  });

  test.each([
    ['empty', ''],
    ['garbage', 'not a traceparent'],
    ['upper case', '00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01'],
    ['short trace id', '00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01'],
    ['all-zero trace id', '00-00000000000000000000000000000000-00f067aa0ba902b7-01'],
    ['all-zero span id', '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01'],
    ['version ff', 'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'],
    ['version 00 with a suffix', '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra'],
    ['not a string', 42],
  ])('refuses %s', (_name, traceparent) => {
    expect(fromTraceContext({ traceparent } as never)).toBeUndefined();
  });

  test('a later version with more fields is read', () => {
    expect(
      fromTraceContext({ traceparent: '01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-more' })?.traceId,
    ).toBe(SPAN.traceId);
  });
});

test('a job of an execution whose persisted trace context is unreadable starts a new trace, marks it, and persists it', async () => {
  const t = tracing();
  const clock = new ManualClock();
  const store = new MemoryStore({ clock });
  const memory = createMemoryQueue({ clock });
  const r = reactor('corrupt')
    .step('s', { run: () => 1 })
    .background('all')
    .build();
  const engine = createEngine({
    store,
    clock,
    coordinator: new MemoryCoordinator({ clock }),
    queue: memory.queue,
    waitList: memory.waitList,
    middleware: [t.middleware],
    reactors: [r],
  });
  const started = await engine.start(r, {});
  const record = (await store.get(started.executionId))!;
  expect(fromTraceContext(record.traceContext!)).toBeDefined();
  await store.save({ ...record, traceContext: { traceparent: 'garbage' } });
  await engine.process(
    { v: JOB_FORMAT_VERSION, executionId: started.executionId, reactor: 'corrupt' },
    { jobId: `${started.executionId}:1`, delivery: 1 },
  );
  const run = one(t.spans(), 'run corrupt');
  expect(run.parentSpanContext).toBeUndefined();
  expect(run.attributes).toMatchObject({ [ATTR.traceContextInvalid]: true, [ATTR.runOutcome]: 'completed' });
  const after = (await store.get(started.executionId))!;
  expect(after.status).toBe('completed');
  expect(fromTraceContext(after.traceContext!)).toMatchObject({
    traceId: run.spanContext().traceId,
    spanId: run.spanContext().spanId,
  });
});
