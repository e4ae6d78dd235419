/**
 * `ts-reactor/otel` in one process (memory backend, manual clock, no sleeps): the span tree of
 * a run, failure and rollback, retries as span events, park and wake across jobs of one
 * execution, trace continuity through the execution record, and no leaked spans.
 */
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { createEngine, defineStep, failure, JOB_FORMAT_VERSION, MemoryCoordinator, MemoryStore, NonRetryableError, reactor, type EnqueueOptions, type Engine, type ExecutionJob, type ReactorEvent, type RunResult } from '../../src/index.js';
import { ATTR, fromTraceContext, otel, TRACER_NAME } from '../../src/otel/index.js';
import { createMemoryQueue } from '../../src/queue/memory.js';
import { createWorker } from '../../src/queue/worker.js';
import { createTestEngine, ManualClock } from '../../src/testing/index.js';
import { edges, eventNames, named, one, parentOf, tracing, type Tracing } from './tracing.js';

const contextManager = new AsyncLocalStorageContextManager();
beforeAll(() => void context.setGlobalContextManager(contextManager.enable()));
afterAll(() => void context.disable());

/** Every span started has ended, and the middleware holds nothing open. */
function expectNoLeaks(t: Tracing): void {
  expect(t.counts.started).toBeGreaterThan(0);
  expect(t.counts.ended).toBe(t.counts.started);
  expect(t.spans()).toHaveLength(t.counts.started);
  expect(t.middleware.openSpans).toBe(0);
}

describe('an in-process run', () => {
  const line = defineStep({ input: { n: z.number() }, run: ({ n }) => n * 10 });
  const pay = reactor('pay')
    .input({ amount: z.number() })
    .step('authorize', { args: ($) => ({ amount: $.input('amount') }), run: ({ amount }) => ({ ok: amount > 0 }) })
    .step('capture', { waitFor: ['authorize'], run: () => 'captured' })
    .returns('capture');
  const order = reactor('order')
    .input({ items: z.array(z.number()) })
    .step('reserve', {
      run: (_args, ctx) => {
        // An application span started in a step body nests under the step span.
        const user = trace.getTracer('app').startSpan('app work');
        user.end();
        return { reserved: true, executionId: ctx.executionId };
      },
    })
    .compose('payment', pay, { args: ($) => ({ amount: $.value(5) }), waitFor: ['reserve'] })
    .map('lines', { source: ($) => $.input('items'), each: line, args: (n) => ({ n }), waitFor: ['payment'] })
    .build();

  test('is one run span with a span per step; compose and map children nest under their step', async () => {
    const t = tracing();
    trace.setGlobalTracerProvider({ getTracer: () => t.tracer });
    try {
      const engine = createTestEngine({ middleware: [t.middleware] });
      const result = await engine.run(order, { items: [1, 2] });
      expect(result.status).toBe('completed');
      const spans = t.spans();
      expect(edges(spans).sort()).toEqual(
        [
          'run order <- (root)',
          'step reserve <- run order',
          'app work <- step reserve',
          'step payment <- run order',
          'step payment.authorize <- step payment',
          'step payment.capture <- step payment',
          'step lines <- run order',
          'step lines[] <- step lines',
          'step lines[] <- step lines',
        ].sort(),
      );
      expect(new Set(spans.map((s) => s.spanContext().traceId)).size).toBe(1);
      const run = one(spans, 'run order');
      expect(run.kind).toBe(SpanKind.INTERNAL);
      expect(run.status.code).toBe(SpanStatusCode.OK);
      expect(run.attributes).toMatchObject({ [ATTR.executionId]: result.executionId, [ATTR.reactor]: 'order', [ATTR.runMode]: 'inline', [ATTR.runOutcome]: 'completed' });
      expect(one(spans, 'step payment.authorize').attributes).toMatchObject({ [ATTR.executionId]: result.executionId, [ATTR.reactor]: 'pay', [ATTR.step]: 'payment.authorize', [ATTR.stepOutcome]: 'succeeded', [ATTR.attempt]: 1 });
      expect(named(spans, 'step lines[]').map((s) => s.attributes[ATTR.step]).sort()).toEqual(['lines[0]', 'lines[1]']);
      expectNoLeaks(t);
    } finally {
      trace.disable();
    }
  });

  test('continues the caller’s active span, and persists the run span as the execution’s trace context', async () => {
    const t = tracing();
    const store = new MemoryStore();
    const engine = createTestEngine({ store, middleware: [t.middleware] });
    const simple = reactor('simple').step('only', { run: () => 1 }).build();
    const result = await t.tracer.startActiveSpan('http request', async (request) => {
      try {
        return await engine.run(simple, {});
      } finally {
        request.end();
      }
    });
    const spans = t.spans();
    expect(edges(spans).sort()).toEqual(['http request <- (root)', 'run simple <- http request', 'step only <- run simple'].sort());
    const record = await store.get(result.executionId);
    const run = one(spans, 'run simple');
    expect(fromTraceContext(record!.traceContext!)).toMatchObject({ traceId: run.spanContext().traceId, spanId: run.spanContext().spanId });
    expectNoLeaks(t);
  });
});

describe('options', () => {
  const secretive = reactor('secretive')
    .input({ user: z.string(), password: z.string() }, { redact: ['password'] })
    .step('login', { run: () => true })
    .build();

  test('recordInput puts the redacted input on the run span; without it the input is not recorded', async () => {
    const withInput = tracing({ recordInput: true });
    await createTestEngine({ middleware: [withInput.middleware] }).run(secretive, { user: 'ada', password: 'hunter2' });
    expect(JSON.parse(String(one(withInput.spans(), 'run secretive').attributes[ATTR.input]))).toEqual({ user: 'ada', password: '[redacted]' });
    const without = tracing();
    await createTestEngine({ middleware: [without.middleware] }).run(secretive, { user: 'ada', password: 'hunter2' });
    expect(one(without.spans(), 'run secretive').attributes[ATTR.input]).toBeUndefined();
    expect(JSON.stringify(without.spans().map((s) => [s.attributes, s.events]))).not.toContain('hunter2');
  });

  test('without a tracer, the global provider’s "ts-reactor" tracer is used', async () => {
    const t = tracing();
    const scopes: string[] = [];
    trace.setGlobalTracerProvider({ getTracer: (name) => (scopes.push(name), t.tracer) });
    try {
      await createTestEngine({ middleware: [otel()] }).run(secretive, { user: 'ada', password: 'x' });
    } finally {
      trace.disable();
    }
    expect(scopes).toContain(TRACER_NAME);
    expect(TRACER_NAME).toBe('ts-reactor');
    expect(edges(t.spans()).sort()).toEqual(['run secretive <- (root)', 'step login <- run secretive']);
  });
});

describe('failure and rollback', () => {
  test('the failing step and the run end in error; compensate and undo spans follow, a failing undo is an error too', async () => {
    const t = tracing();
    const r = reactor('transfer')
      .step('debit', { run: () => 'd', undo: () => failure('ledger closed') })
      .step('fee', { run: () => 'f', undo: () => undefined })
      .step('credit', {
        waitFor: ['debit', 'fee'],
        run: () => {
          throw new NonRetryableError('account frozen');
        },
        compensate: () => undefined,
      })
      .build();
    const result = await createTestEngine({ middleware: [t.middleware] }).run(r, {});
    expect(result.status).toBe('failed');
    const spans = t.spans();
    expect(edges(spans).sort()).toEqual(
      ['run transfer <- (root)', 'step debit <- run transfer', 'step fee <- run transfer', 'step credit <- run transfer', 'compensate credit <- run transfer', 'undo fee <- run transfer', 'undo debit <- run transfer'].sort(),
    );
    const credit = one(spans, 'step credit');
    expect(credit.status).toEqual({ code: SpanStatusCode.ERROR, message: 'account frozen' });
    expect(credit.attributes[ATTR.stepOutcome]).toBe('failed');
    expect(eventNames(credit)).toContain('step.failed');
    expect(one(spans, 'compensate credit').status.code).toBe(SpanStatusCode.OK);
    expect(one(spans, 'undo fee').status.code).toBe(SpanStatusCode.OK);
    const undoDebit = one(spans, 'undo debit');
    expect(undoDebit.status).toEqual({ code: SpanStatusCode.ERROR, message: 'ledger closed' });
    expect(eventNames(undoDebit)).toEqual(['step.undo_failed']);
    const run = one(spans, 'run transfer');
    expect(run.status).toEqual({ code: SpanStatusCode.ERROR, message: 'account frozen' });
    expect(run.attributes[ATTR.runOutcome]).toBe('failed');
    expect(eventNames(run)).toEqual(['run.rolling_back', 'run.failed']);
    // Rollback runs newest first: the undo spans start in that order.
    const order = spans.filter((s) => s.name.startsWith('undo') || s.name.startsWith('compensate')).map((s) => s.name);
    expect(order).toEqual(['compensate credit', 'undo fee', 'undo debit']);
    expectNoLeaks(t);
  });

  test('a middleware that throws in enter is logged and the run goes on untraced by it', async () => {
    const t = tracing();
    const errors: unknown[] = [];
    const logger = { debug() {}, info() {}, warn() {}, error: (fields: object | string) => void errors.push(fields) };
    const broken = { name: 'broken', enter: () => { throw new Error('boom'); } };
    const r = reactor('plain').step('a', { run: () => 1 }).build();
    const result = await createTestEngine({ logger, logEvents: false, middleware: [broken, t.middleware] }).run(r, {});
    expect(result.status).toBe('completed');
    expect(errors).toContainEqual(expect.objectContaining({ hook: 'broken', executionId: result.executionId, reactor: 'plain', scope: 'run' }));
    expect(edges(t.spans()).sort()).toEqual(['run plain <- (root)', 'step a <- run plain']);
    expectNoLeaks(t);
  });
});

describe('retries', () => {
  test('in-process retries are events on one step span; the span ends with the last attempt', async () => {
    const t = tracing();
    const r = reactor('flaky')
      .step('call', {
        retry: { maxAttempts: 3, backoff: 'fixed', baseDelay: 100 },
        run: (_args, ctx) => {
          if (ctx.attempt < 3) throw new Error(`timeout ${ctx.attempt}`);
          return 'ok';
        },
      })
      .build();
    const result = await createTestEngine({ middleware: [t.middleware] }).run(r, {});
    expect(result.status).toBe('completed');
    const call = one(t.spans(), 'step call');
    const retries = call.events.filter((e) => e.name === 'step.retrying');
    expect(retries.map((e) => e.attributes)).toEqual([
      expect.objectContaining({ 'ts_reactor.attempt': 2, 'ts_reactor.delay_ms': 100, 'exception.message': 'timeout 1', [ATTR.step]: 'call' }),
      expect.objectContaining({ 'ts_reactor.attempt': 3, 'ts_reactor.delay_ms': 100, 'exception.message': 'timeout 2' }),
    ]);
    expect(call.attributes).toMatchObject({ [ATTR.attempt]: 3, [ATTR.stepOutcome]: 'succeeded' });
    expect(call.status.code).toBe(SpanStatusCode.OK);
    expectNoLeaks(t);
  });
});

/** An engine over the embedded memory queue on a manual clock (delayed jobs wait for `advance`). */
function workerEngine(t: Tracing | undefined, shared?: { clock: ManualClock; store: MemoryStore; coordinator: MemoryCoordinator; memory: ReturnType<typeof createMemoryQueue> }) {
  const clock = shared?.clock ?? new ManualClock({ autoAdvance: false });
  const store = shared?.store ?? new MemoryStore({ clock });
  const coordinator = shared?.coordinator ?? new MemoryCoordinator({ clock });
  const memory = shared?.memory ?? createMemoryQueue({ clock });
  const engine = createEngine({ store, coordinator, clock, queue: memory.queue, waitList: memory.waitList, background: { workerWaitMs: 0 }, middleware: t ? [t.middleware] : [] });
  return { engine, clock, store, coordinator, memory };
}

/** The execution's result once it is terminal (yields to the event loop between reads; the manual clock never moves by itself). */
async function settled(engine: Engine, executionId: string): Promise<RunResult> {
  for (let i = 0; i < 10_000; i++) {
    const current = await engine.result(executionId);
    if (current && ['completed', 'failed', 'halted', 'cancelled'].includes(current.status)) return current;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`execution ${executionId} did not finish`);
}

/** Resolves once the queue holds one delayed job and runs nothing (the job that enqueued it has ended). */
async function delayedOnly(memory: ReturnType<typeof createMemoryQueue>): Promise<void> {
  for (let i = 0; i < 10_000; i++) {
    const counts = memory.queue.counts();
    if (counts.delayed === 1 && counts.running === 0 && counts.ready === 0) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`the queue never settled on one delayed job: ${JSON.stringify(memory.queue.counts())}`);
}

/** Resolves with the first event of `engine` matching `accept`. */
function nextEvent(engine: Engine, accept: (e: ReactorEvent) => boolean): Promise<ReactorEvent> {
  return new Promise((resolve) => {
    const stop = engine.subscribe((e) => {
      if (accept(e)) {
        stop();
        resolve(e);
      }
    });
  });
}

describe('jobs of one execution in a worker', () => {
  test('a retry ends the job’s step span as retrying; the next job’s run span joins the same trace under the start', async () => {
    const t = tracing();
    const w = workerEngine(t);
    const r = reactor('bg-flaky')
      .step('call', {
        retry: { maxAttempts: 2, backoff: 'fixed', baseDelay: 1_000 },
        run: (_args, ctx) => {
          if (ctx.attempt === 1) throw new Error('busy upstream');
          return 'ok';
        },
      })
      .background('all')
      .build();
    const worker = createWorker({ engine: w.engine, consumer: w.memory.consumer, reactors: [r], concurrency: 1 });
    try {
      const retried = nextEvent(w.engine, (e) => e.type === 'run.queued' && e.reason === 'retry');
      const started = await w.engine.start(r, {});
      await retried;
      await delayedOnly(w.memory);
      w.clock.advance(1_000);
      expect((await settled(w.engine, started.executionId)).status).toBe('completed');
    } finally {
      await worker.stop();
    }
    const spans = t.spans();
    expect(edges(spans)).toEqual(
      expect.arrayContaining(['enqueue bg-flaky <- (root)', 'run bg-flaky <- enqueue bg-flaky', 'step call <- run bg-flaky', 'enqueue bg-flaky <- run bg-flaky']),
    );
    const runs = named(spans, 'run bg-flaky');
    expect(runs).toHaveLength(2);
    expect(runs.map((s) => parentOf(spans, s)?.attributes[ATTR.enqueueReason])).toEqual(['start', 'start']);
    expect(runs.map((s) => s.attributes[ATTR.runOutcome])).toEqual(['retrying', 'completed']);
    expect(runs.map((s) => s.kind)).toEqual([SpanKind.CONSUMER, SpanKind.CONSUMER]);
    const steps = named(spans, 'step call');
    expect(steps.map((s) => [s.attributes[ATTR.stepOutcome], s.attributes[ATTR.attempt]])).toEqual([
      ['retrying', 1],
      ['succeeded', 2],
    ]);
    expect(eventNames(steps[0]!)).toEqual(['step.retrying']);
    expect(named(spans, 'enqueue bg-flaky').map((s) => [s.attributes[ATTR.enqueueReason], s.attributes[ATTR.delayMs], s.kind])).toEqual([
      ['start', 0, SpanKind.PRODUCER],
      ['retry', 1_000, SpanKind.PRODUCER],
    ]);
    expect(new Set(spans.map((s) => s.spanContext().traceId)).size).toBe(1);
    expectNoLeaks(t);
  });

  test('a step that loses contention ends its span parked (status OK); the release wakes the execution, a woken event on the next run span', async () => {
    const t = tracing();
    const w = workerEngine(t);
    let first = '';
    let release!: () => void;
    const holding = new Promise<void>((resolve) => (release = resolve));
    const locked = reactor('locked')
      .input({ who: z.string() })
      .step('prepare', { run: () => 'p' })
      .step('write', {
        waitFor: ['prepare'],
        lock: { key: () => 'ledger' },
        run: async (_args, ctx) => {
          if (ctx.executionId === first) await holding;
          return 'w';
        },
      })
      .background('all')
      .build();
    const worker = createWorker({ engine: w.engine, consumer: w.memory.consumer, reactors: [locked], concurrency: 4 });
    try {
      const inside = nextEvent(w.engine, (e) => e.type === 'coordination.acquired' && e.primitive === 'lock');
      first = (await w.engine.start(locked, { who: 'a' })).executionId;
      await inside;
      const parked = nextEvent(w.engine, (e) => e.type === 'run.parked');
      const second = (await w.engine.start(locked, { who: 'b' })).executionId;
      await parked;
      const woken = nextEvent(w.engine, (e) => e.type === 'run.woken');
      release();
      await woken;
      for (const id of [first, second]) expect((await settled(w.engine, id)).status).toBe('completed');
      const spans = t.spans().filter((s) => s.attributes[ATTR.executionId] === second);
      const runs = named(spans, 'run locked');
      expect(runs.map((s) => s.attributes[ATTR.runOutcome])).toEqual(['parked', 'completed']);
      expect(eventNames(runs[0]!)).toEqual(expect.arrayContaining(['run.parked']));
      expect(runs[0]!.events.find((e) => e.name === 'run.parked')?.attributes).toMatchObject({ [ATTR.key]: 'ledger', [ATTR.primitive]: 'lock' });
      expect(eventNames(runs[1]!)).toEqual(expect.arrayContaining(['run.woken']));
      const writes = named(spans, 'step write');
      expect(writes.map((s) => s.attributes[ATTR.stepOutcome])).toEqual(['parked', 'succeeded']);
      expect(writes[0]!.status.code).toBe(SpanStatusCode.OK);
      expect(eventNames(writes[0]!)).toContain('coordination.contended');
      expect(writes[0]!.events.find((e) => e.name === 'coordination.contended')?.attributes).toMatchObject({ [ATTR.key]: 'ledger', [ATTR.step]: 'write' });
      expect(eventNames(writes[1]!)).toEqual(expect.arrayContaining(['coordination.acquired', 'coordination.released']));
      expect(named(spans, 'step prepare')).toHaveLength(1); // completed in the first job: not run again
      expect(named(spans, 'enqueue locked').map((s) => s.attributes[ATTR.enqueueReason])).toEqual(['start', 'park']);
      expect(new Set(spans.map((s) => s.spanContext().traceId)).size).toBe(1);
      expect(new Set(t.spans().map((s) => s.spanContext().traceId)).size).toBe(2); // one trace per execution
    } finally {
      release();
      await worker.stop();
    }
    expectNoLeaks(t);
  });

  test('an inline run handing off after a step: the worker’s run span continues under the inline run span', async () => {
    const t = tracing();
    const w = workerEngine(t);
    const r = reactor('handoff')
      .step('accept', { run: () => 'a' })
      .step('fulfil', { waitFor: ['accept'], run: () => 'f' })
      .background({ after: 'accept' })
      .build();
    const worker = createWorker({ engine: w.engine, consumer: w.memory.consumer, reactors: [r], concurrency: 1 });
    try {
      const queued = await w.engine.run(r, {});
      expect(queued.status).toBe('queued');
      expect((await settled(w.engine, queued.executionId)).status).toBe('completed');
    } finally {
      await worker.stop();
    }
    const spans = t.spans();
    expect(edges(spans).sort()).toEqual(
      ['run handoff <- (root)', 'step accept <- run handoff', 'enqueue handoff <- run handoff', 'run handoff <- run handoff', 'step fulfil <- run handoff'].sort(),
    );
    const [inline, job] = named(spans, 'run handoff').sort((a, b) => String(a.attributes[ATTR.runMode]).localeCompare(String(b.attributes[ATTR.runMode])));
    expect(inline!.attributes).toMatchObject({ [ATTR.runMode]: 'inline', [ATTR.runOutcome]: 'queued' });
    expect(job!.attributes).toMatchObject({ [ATTR.runMode]: 'worker', [ATTR.runOutcome]: 'completed' });
    expect(parentOf(spans, job!)).toBe(inline);
    expect(parentOf(spans, one(spans, 'step fulfil'))).toBe(job);
    expectNoLeaks(t);
  });

  test('an asyncStep unit and an asyncReactor child join their dispatcher’s trace, under its root', async () => {
    const t = tracing();
    const w = workerEngine(t);
    const invoice = reactor('invoice').input({ n: z.number() }).step('issue', { run: ({ n }) => `inv-${n}` }).returns('issue');
    const order = reactor('order-async')
      .step('reserve', { run: () => 3 })
      .asyncStep('charge', { args: ($) => ({ n: $.result('reserve') }), run: ({ n }) => ({ id: `ch-${n}` }) })
      .asyncReactor('bill', invoice, { args: ($) => ({ n: $.result('reserve') }) })
      .step('receipt', { args: ($) => ({ id: $.result('charge', 'id') }), run: ({ id }) => id })
      .returns('receipt');
    const worker = createWorker({ engine: w.engine, consumer: w.memory.consumer, reactors: [order, invoice], concurrency: 4 });
    let executionId = '';
    try {
      const result = await w.engine.run(order, {});
      executionId = result.executionId;
      expect(result.status).toBe('completed');
      expect((await settled(w.engine, `${executionId}~bill`)).status).toBe('completed');
    } finally {
      await worker.stop();
    }
    const spans = t.spans();
    expect(new Set(spans.map((s) => s.spanContext().traceId)).size).toBe(1);
    const runs = named(spans, 'run order-async');
    const root = runs.find((s) => s.attributes[ATTR.runMode] === 'inline')!;
    expect(root.parentSpanContext).toBeUndefined();
    const unitRun = runs.find((s) => s.attributes[ATTR.executionId] === `${executionId}~charge`)!;
    expect(unitRun.attributes[ATTR.runMode]).toBe('worker');
    expect(parentOf(spans, unitRun)).toBe(root);
    expect(parentOf(spans, named(spans, 'step charge').find((s) => s.attributes[ATTR.executionId] === `${executionId}~charge`)!)).toBe(unitRun);
    expect(parentOf(spans, named(spans, 'step charge').find((s) => s.attributes[ATTR.executionId] === executionId)!)).toBe(root);
    const childRun = one(spans, 'run invoice');
    const childStart = one(spans, 'enqueue invoice');
    expect(parentOf(spans, childStart)).toBe(root);
    expect(parentOf(spans, childRun)).toBe(root);
    expect(parentOf(spans, one(spans, 'step issue'))).toBe(childRun);
    expectNoLeaks(t);
  });

  test('a job whose enqueue throws ends every span it opened, in error; nothing stays open', async () => {
    const t = tracing();
    const clock = new ManualClock();
    const memory = createMemoryQueue({ clock });
    const queue = { ...memory.queue, enqueue: (job: ExecutionJob, options: EnqueueOptions) => (options.jobId.endsWith(':2') ? Promise.reject(new Error('queue down')) : memory.queue.enqueue(job, options)) };
    const r = reactor('broken-queue')
      .step('call', { retry: { maxAttempts: 2, backoff: 'fixed', baseDelay: 10 }, run: (_a, ctx) => (ctx.attempt === 1 ? Promise.reject(new Error('flaky')) : 'ok') })
      .background('all')
      .build();
    const engine = createEngine({ store: new MemoryStore({ clock }), clock, coordinator: new MemoryCoordinator({ clock }), queue, waitList: memory.waitList, middleware: [t.middleware], reactors: [r] });
    const started = await engine.start(r, {});
    await expect(engine.process({ v: JOB_FORMAT_VERSION, executionId: started.executionId, reactor: r.name }, { jobId: `${started.executionId}:1`, delivery: 1 })).rejects.toThrow('queue down');
    const spans = t.spans();
    expect(named(spans, 'enqueue broken-queue').map((s) => [s.attributes[ATTR.enqueueReason], s.status])).toEqual([
      ['start', { code: SpanStatusCode.OK }],
      ['retry', { code: SpanStatusCode.ERROR, message: 'queue down' }],
    ]);
    const run = one(spans, 'run broken-queue');
    expect(run.status).toEqual({ code: SpanStatusCode.ERROR, message: 'queue down' });
    expect(run.attributes[ATTR.runOutcome]).toBe('failed');
    expect(one(spans, 'step call').attributes[ATTR.stepOutcome]).toBe('retrying');
    expectNoLeaks(t);
  });

  test('an execution started without tracing is rooted by the first traced job; later jobs and an undo join that trace', async () => {
    const t = tracing();
    const plain = workerEngine(undefined);
    const traced = workerEngine(t, plain);
    const r = reactor('late')
      .step('a', { run: () => 'a', undo: () => undefined })
      .step('b', {
        waitFor: ['a'],
        retry: { maxAttempts: 2, backoff: 'fixed', baseDelay: 10 },
        run: (_args, ctx) => {
          if (ctx.attempt === 1) throw new Error('again');
          return 'b';
        },
      })
      .background('all')
      .build();
    traced.engine.register(r);
    const started = await plain.engine.start(r, {});
    expect((await plain.store.get(started.executionId))?.traceContext).toBeUndefined();
    const retried = nextEvent(traced.engine, (e) => e.type === 'run.queued' && e.reason === 'retry');
    const worker = createWorker({ engine: traced.engine, consumer: traced.memory.consumer, concurrency: 1 });
    try {
      await retried;
      await delayedOnly(traced.memory);
      traced.clock.advance(10);
      expect((await settled(traced.engine, started.executionId)).status).toBe('completed');
    } finally {
      await worker.stop();
    }
    expect((await traced.engine.undo(started.executionId)).status).toBe('cancelled');
    const spans = t.spans();
    const runs = named(spans, 'run late');
    expect(runs.map((s) => s.attributes[ATTR.runMode])).toEqual(['worker', 'worker', 'operation']);
    expect(parentOf(spans, runs[0]!)).toBeUndefined();
    expect(runs[0]!.parentSpanContext).toBeUndefined();
    expect(parentOf(spans, runs[1]!)).toBe(runs[0]);
    expect(parentOf(spans, runs[2]!)).toBe(runs[0]);
    expect(edges(spans).filter((e) => e.startsWith('undo'))).toEqual(['undo a <- run late']);
    const persisted = fromTraceContext((await traced.store.get(started.executionId))!.traceContext!);
    expect(persisted).toMatchObject({ traceId: runs[0]!.spanContext().traceId, spanId: runs[0]!.spanContext().spanId });
    expect(new Set(spans.map((s) => s.spanContext().traceId)).size).toBe(1);
    expectNoLeaks(t);
  });
});
