/**
 * `ts-reactor/otel` for runs in one process (memory backend, manual clock, no sleeps): the span
 * tree of a run, the caller's span, options, failure and rollback, retries as span events, and
 * no leaked spans. Jobs of background executions: `jobs.test.ts`.
 */
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { defineStep, failure, MemoryStore, NonRetryableError, reactor } from '../../src/index.js';
import { ATTR, fromTraceContext, otel, TRACER_NAME } from '../../src/otel/index.js';
import { createTestEngine } from '../../src/testing/index.js';
import { expectNoLeaks } from './support.js';
import { edges, eventNames, named, one, tracing } from './tracing.js';

const contextManager = new AsyncLocalStorageContextManager();
beforeAll(() => void context.setGlobalContextManager(contextManager.enable()));
afterAll(() => void context.disable());

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
      expect(run.attributes).toMatchObject({
        [ATTR.executionId]: result.executionId,
        [ATTR.reactor]: 'order',
        [ATTR.runMode]: 'inline',
        [ATTR.runOutcome]: 'completed',
      });
      expect(one(spans, 'step payment.authorize').attributes).toMatchObject({
        [ATTR.executionId]: result.executionId,
        [ATTR.reactor]: 'pay',
        [ATTR.step]: 'payment.authorize',
        [ATTR.stepOutcome]: 'succeeded',
        [ATTR.attempt]: 1,
      });
      expect(
        named(spans, 'step lines[]')
          .map((s) => s.attributes[ATTR.step])
          .sort(),
      ).toEqual(['lines[0]', 'lines[1]']);
      expectNoLeaks(t);
    } finally {
      trace.disable();
    }
  });

  test('continues the caller’s active span, and persists the run span as the execution’s trace context', async () => {
    const t = tracing();
    const store = new MemoryStore();
    const engine = createTestEngine({ store, middleware: [t.middleware] });
    const simple = reactor('simple')
      .step('only', { run: () => 1 })
      .build();
    const result = await t.tracer.startActiveSpan('http request', async (request) => {
      try {
        return await engine.run(simple, {});
      } finally {
        request.end();
      }
    });
    const spans = t.spans();
    expect(edges(spans).sort()).toEqual(
      ['http request <- (root)', 'run simple <- http request', 'step only <- run simple'].sort(),
    );
    const record = await store.get(result.executionId);
    const run = one(spans, 'run simple');
    expect(fromTraceContext(record!.traceContext!)).toMatchObject({
      traceId: run.spanContext().traceId,
      spanId: run.spanContext().spanId,
    });
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
    expect(JSON.parse(String(one(withInput.spans(), 'run secretive').attributes[ATTR.input]))).toEqual({
      user: 'ada',
      password: '[redacted]',
    });
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
      [
        'run transfer <- (root)',
        'step debit <- run transfer',
        'step fee <- run transfer',
        'step credit <- run transfer',
        'compensate credit <- run transfer',
        'undo fee <- run transfer',
        'undo debit <- run transfer',
      ].sort(),
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
    const broken = {
      name: 'broken',
      enter: () => {
        throw new Error('boom');
      },
    };
    const r = reactor('plain')
      .step('a', { run: () => 1 })
      .build();
    const result = await createTestEngine({ logger, logEvents: false, middleware: [broken, t.middleware] }).run(r, {});
    expect(result.status).toBe('completed');
    expect(errors).toContainEqual(
      expect.objectContaining({ hook: 'broken', executionId: result.executionId, reactor: 'plain', scope: 'run' }),
    );
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
      expect.objectContaining({
        'ts_reactor.attempt': 2,
        'ts_reactor.delay_ms': 100,
        'exception.message': 'timeout 1',
        [ATTR.step]: 'call',
      }),
      expect.objectContaining({
        'ts_reactor.attempt': 3,
        'ts_reactor.delay_ms': 100,
        'exception.message': 'timeout 2',
      }),
    ]);
    expect(call.attributes).toMatchObject({ [ATTR.attempt]: 3, [ATTR.stepOutcome]: 'succeeded' });
    expect(call.status.code).toBe(SpanStatusCode.OK);
    expectNoLeaks(t);
  });
});

describe('coordination', () => {
  test('limits from the arguments and refunded rate charges are on the step span’s coordination events', async () => {
    const t = tracing();
    const r = reactor('limited')
      .input({ tier: z.string() })
      .step('call', {
        args: ($) => ({ tier: $.input('tier') }),
        semaphore: { key: () => 'api', limit: ({ tier }) => (tier === 'pro' ? 10 : 1), ttl: '10s' },
        rateLimit: [
          { key: () => 'a-project', limit: 5, per: '1s' },
          { key: () => 'b-user', limit: ({ tier }) => (tier === 'pro' ? 2 : 1), per: '1s' },
        ],
        run: () => 'ok',
      })
      .build();
    const engine = createTestEngine({ middleware: [t.middleware] });
    expect((await engine.run(r, { tier: 'pro' })).status).toBe('completed');
    expect((await engine.run(r, { tier: 'pro' })).status).toBe('completed');
    expect((await engine.run(r, { tier: 'pro' })).status).toBe('failed'); // b-user full: a-project refunded
    const calls = named(t.spans(), 'step call');
    const acquired = calls[0]!.events.filter((e) => e.name === 'coordination.acquired').map((e) => e.attributes);
    expect(acquired).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ [ATTR.primitive]: 'semaphore', [ATTR.key]: 'api', 'ts_reactor.limit': 10 }),
        expect.objectContaining({ [ATTR.primitive]: 'rate_limit', [ATTR.key]: 'b-user', 'ts_reactor.limit': 2 }),
      ]),
    );
    const refused = calls[2]!.events.map((e) => [e.name, e.attributes] as const);
    expect(refused).toEqual(
      expect.arrayContaining([
        ['coordination.released', expect.objectContaining({ [ATTR.key]: 'a-project', 'ts_reactor.refunded': true })],
        [
          'coordination.denied',
          expect.objectContaining({ [ATTR.key]: 'b-user', 'ts_reactor.limit': 2, 'ts_reactor.period_ms': 1_000 }),
        ],
      ]),
    );
    expectNoLeaks(t);
  });
});
