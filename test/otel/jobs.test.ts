/**
 * `ts-reactor/otel` across the jobs of one execution, in one process (memory queue, manual
 * clock, no sleeps): retries and parks end a job's spans and the next job continues the trace;
 * wake events; hand-off; async units and child reactors; an execution started untraced; a job
 * whose enqueue throws. Every started span ends.
 */
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import {
  createEngine,
  defineStep,
  JOB_FORMAT_VERSION,
  MemoryCoordinator,
  MemoryStore,
  NonRetryableError,
  reactor,
  type EnqueueOptions,
  type ExecutionJob,
} from '../../src/index.js';
import { ATTR, fromTraceContext } from '../../src/otel/index.js';
import { createMemoryQueue } from '../../src/queue/memory.js';
import { createWorker } from '../../src/queue/worker.js';
import { ManualClock } from '../../src/testing/index.js';
import { delayedOnly, expectNoLeaks, nextEvent, settled, workerEngine } from './support.js';
import { edges, eventNames, named, one, parentOf, tracing } from './tracing.js';

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
      expect.arrayContaining([
        'enqueue bg-flaky <- (root)',
        'run bg-flaky <- enqueue bg-flaky',
        'step call <- run bg-flaky',
        'enqueue bg-flaky <- run bg-flaky',
      ]),
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
    expect(
      named(spans, 'enqueue bg-flaky').map((s) => [
        s.attributes[ATTR.enqueueReason],
        s.attributes[ATTR.delayMs],
        s.kind,
      ]),
    ).toEqual([
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
      expect(runs[0]!.events.find((e) => e.name === 'run.parked')?.attributes).toMatchObject({
        [ATTR.key]: 'ledger',
        [ATTR.primitive]: 'lock',
      });
      expect(eventNames(runs[1]!)).toEqual(expect.arrayContaining(['run.woken']));
      const writes = named(spans, 'step write');
      expect(writes.map((s) => s.attributes[ATTR.stepOutcome])).toEqual(['parked', 'succeeded']);
      expect(writes[0]!.status.code).toBe(SpanStatusCode.OK);
      expect(eventNames(writes[0]!)).toContain('coordination.contended');
      expect(writes[0]!.events.find((e) => e.name === 'coordination.contended')?.attributes).toMatchObject({
        [ATTR.key]: 'ledger',
        [ATTR.step]: 'write',
      });
      expect(eventNames(writes[1]!)).toEqual(
        expect.arrayContaining(['coordination.acquired', 'coordination.released']),
      );
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
      [
        'run handoff <- (root)',
        'step accept <- run handoff',
        'enqueue handoff <- run handoff',
        'run handoff <- run handoff',
        'step fulfil <- run handoff',
      ].sort(),
    );
    const [inline, job] = named(spans, 'run handoff').sort((a, b) =>
      String(a.attributes[ATTR.runMode]).localeCompare(String(b.attributes[ATTR.runMode])),
    );
    expect(inline!.attributes).toMatchObject({ [ATTR.runMode]: 'inline', [ATTR.runOutcome]: 'queued' });
    expect(job!.attributes).toMatchObject({ [ATTR.runMode]: 'worker', [ATTR.runOutcome]: 'completed' });
    expect(parentOf(spans, job!)).toBe(inline);
    expect(parentOf(spans, one(spans, 'step fulfil'))).toBe(job);
    expectNoLeaks(t);
  });

  test('an asyncStep unit and an asyncReactor child join their dispatcher’s trace, under its root', async () => {
    const t = tracing();
    const w = workerEngine(t);
    const invoice = reactor('invoice')
      .input({ n: z.number() })
      .step('issue', { run: ({ n }) => `inv-${n}` })
      .returns('issue');
    const order = reactor('order-async')
      .step('reserve', { run: () => 3 })
      .asyncStep('charge', { args: ($) => ({ n: $.result('reserve') }), run: ({ n }) => ({ id: `ch-${n}` }) })
      .asyncReactor('bill', invoice, { args: ($) => ({ n: $.result('reserve') }) })
      .step('receipt', { args: ($) => ({ id: $.result('charge', 'id') }), run: ({ id }) => id })
      .returns('receipt');
    const worker = createWorker({
      engine: w.engine,
      consumer: w.memory.consumer,
      reactors: [order, invoice],
      concurrency: 4,
    });
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
    expect(
      parentOf(
        spans,
        named(spans, 'step charge').find((s) => s.attributes[ATTR.executionId] === `${executionId}~charge`)!,
      ),
    ).toBe(unitRun);
    expect(
      parentOf(
        spans,
        named(spans, 'step charge').find((s) => s.attributes[ATTR.executionId] === executionId)!,
      ),
    ).toBe(root);
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
    const queue = {
      ...memory.queue,
      enqueue: (job: ExecutionJob, options: EnqueueOptions) =>
        options.jobId.endsWith(':2') ? Promise.reject(new Error('queue down')) : memory.queue.enqueue(job, options),
    };
    const r = reactor('broken-queue')
      .step('call', {
        retry: { maxAttempts: 2, backoff: 'fixed', baseDelay: 10 },
        run: (_a, ctx) => (ctx.attempt === 1 ? Promise.reject(new Error('flaky')) : 'ok'),
      })
      .background('all')
      .build();
    const engine = createEngine({
      store: new MemoryStore({ clock }),
      clock,
      coordinator: new MemoryCoordinator({ clock }),
      queue,
      waitList: memory.waitList,
      middleware: [t.middleware],
      reactors: [r],
    });
    const started = await engine.start(r, {});
    await expect(
      engine.process(
        { v: JOB_FORMAT_VERSION, executionId: started.executionId, reactor: r.name },
        { jobId: `${started.executionId}:1`, delivery: 1 },
      ),
    ).rejects.toThrow('queue down');
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

  test('an interrupt ends its step span paused; the inline resume is a run span of the same trace', async () => {
    const t = tracing();
    const w = workerEngine(t);
    const approval = reactor('approval')
      .step('hold', { run: () => 'held' })
      .interrupt('approve', { waitFor: ['hold'], payload: { ok: z.boolean() } })
      .step('pay', { args: ($) => ({ ok: $.result('approve', 'ok') }), run: ({ ok }) => (ok ? 'paid' : 'skipped') })
      .returns('pay');
    const paused = await w.engine.run(approval, {});
    expect(paused.status).toBe('paused');
    const resumed = await w.engine.resume(paused.executionId, { ok: true });
    expect(resumed.status).toBe('completed');
    const spans = t.spans();
    expect(new Set(spans.map((s) => s.spanContext().traceId)).size).toBe(1);
    const [first, second] = named(spans, 'run approval');
    expect(first!.attributes[ATTR.runOutcome]).toBe('paused');
    expect(second!.attributes[ATTR.runOutcome]).toBe('completed');
    expect(parentOf(spans, second!)).toBe(first);
    expect(named(spans, 'step approve').map((s) => [s.attributes[ATTR.stepOutcome], parentOf(spans, s)])).toEqual([
      ['paused', first],
      ['succeeded', second],
    ]);
    expect(parentOf(spans, one(spans, 'step pay'))).toBe(second);
    expectNoLeaks(t);
  });

  test('a fan-out map in a worker: every element job is a run span under the map’s root; the map’s span ends parked, then collects', async () => {
    const t = tracing();
    const w = workerEngine(t);
    const line = defineStep({ input: { n: z.number() }, run: ({ n }) => n * 2 });
    const fan = reactor('fan')
      .input({ items: z.array(z.number()) })
      .map('lines', { source: ($) => $.input('items'), each: line, args: (n) => ({ n }), fanOut: { batchSize: 2 } })
      .background('all')
      .build();
    const worker = createWorker({ engine: w.engine, consumer: w.memory.consumer, reactors: [fan], concurrency: 4 });
    try {
      const started = await w.engine.start(fan, { items: [1, 2, 3] });
      expect((await settled(w.engine, started.executionId)).status).toBe('completed');
    } finally {
      await worker.stop();
    }
    const spans = t.spans();
    expect(new Set(spans.map((s) => s.spanContext().traceId)).size).toBe(1);
    const root = one(spans, 'enqueue fan');
    const runs = named(spans, 'run fan');
    for (const run of runs) expect(parentOf(spans, run)).toBe(root);
    const elements = runs.filter((s) => String(s.attributes[ATTR.executionId]).includes('lines'));
    expect(elements.length).toBeGreaterThanOrEqual(3);
    const maps = named(spans, 'step lines');
    expect(maps[0]!.attributes[ATTR.stepOutcome]).toBe('parked');
    expect(maps[maps.length - 1]!.attributes[ATTR.stepOutcome]).toBe('succeeded');
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

describe('a retry execution links to the execution it retries', () => {
  test('inline: the new run span links to the failed run’s span; a trace of its own', async () => {
    const t = tracing();
    let fail = true;
    const r = reactor('flaky-inline')
      .step('s', {
        run: () => {
          if (fail) throw new NonRetryableError('not yet');
          return 1;
        },
      })
      .build();
    const engine = createEngine({ store: new MemoryStore(), middleware: [t.middleware] });
    const failed = await engine.run(r, {});
    expect(failed.status).toBe('failed');
    fail = false;
    expect((await engine.retry(failed.executionId)).status).toBe('completed');
    const [first, second] = named(t.spans(), 'run flaky-inline');
    expect(first!.links).toEqual([]);
    expect(second!.links).toEqual([
      {
        context: expect.objectContaining({
          traceId: first!.spanContext().traceId,
          spanId: first!.spanContext().spanId,
        }),
        attributes: { [ATTR.linkKind]: 'retry_of' },
      },
    ]);
    expect(second!.spanContext().traceId).not.toBe(first!.spanContext().traceId);
    expectNoLeaks(t);
  });

  test('in a worker: the retry’s first enqueue span links to the retried execution’s trace', async () => {
    const t = tracing();
    const w = workerEngine(t);
    let fail = true;
    const r = reactor('flaky-bg')
      .step('s', {
        run: () => {
          if (fail) throw new NonRetryableError('not yet');
          return 1;
        },
      })
      .background('all')
      .build();
    const worker = createWorker({ engine: w.engine, consumer: w.memory.consumer, reactors: [r], concurrency: 1 });
    try {
      const started = await w.engine.start(r, {});
      expect((await settled(w.engine, started.executionId)).status).toBe('failed');
      fail = false;
      const retried = await w.engine.retry(started.executionId);
      expect((await settled(w.engine, retried.executionId)).status).toBe('completed');
    } finally {
      await worker.stop();
    }
    const spans = t.spans();
    const enqueues = named(spans, 'enqueue flaky-bg');
    const original = enqueues.find(
      (s) => s.attributes[ATTR.executionId] !== enqueues.at(-1)!.attributes[ATTR.executionId],
    )!;
    const retryStart = enqueues.at(-1)!;
    expect(original.links).toEqual([]);
    expect(retryStart.links).toEqual([
      {
        context: expect.objectContaining({ traceId: original.spanContext().traceId }),
        attributes: { [ATTR.linkKind]: 'retry_of' },
      },
    ]);
    expect(retryStart.spanContext().traceId).not.toBe(original.spanContext().traceId);
    expectNoLeaks(t);
  });
});
