/**
 * The bad-input matrix (quality-bars.md): every case gets a clear, typed error, and nothing is
 * taken or lost. One test per case, so the count can be read off.
 *
 * Cases 36–42 (start time bounds, startMany, a keyed start too large, schedules, migrations) are
 * in bad-input-surfaces.test.ts, on memory and on a real redis-server.
 *
 * Cases that belong to capabilities not built yet, and join this file with them:
 * a malformed or foreign job payload (issue 4). Interrupts: cases 12–15.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import {
  createEngine,
  DefinitionError,
  defineStep,
  errorFromJSON,
  event,
  EventInvalidError,
  EventPayloadError,
  MemoryCoordinator,
  MemoryStore,
  reactor,
  RecordTooLargeError,
  RecordVersionError,
  StartOptionsError,
} from '../src/index.js';
import { createMemoryQueue } from '../src/queue/memory.js';
import { parseRecord } from '../src/storage/memory/store.js';
import { createRedisBackend } from '../src/storage/redis/index.js';
import { createTestEngine } from '../src/testing/index.js';
import { manualEngine, untilStatus } from './background/helpers.js';
import { freePort, startRedisServer, type RedisServerHandle } from './support/redis-server.js';

const expectDefinitionError = (fn: () => unknown, text: string): void => {
  expect(fn).toThrow(DefinitionError);
  expect(fn).toThrow(text);
};

describe('bad input matrix', () => {
  test('1. invalid reactor input: input_invalid with field errors; no step runs, no key claimed, nothing taken', async () => {
    const t = createTestEngine();
    let ran = false;
    const r = reactor('r')
      .input({ n: z.number() })
      .withLock({ key: () => 'k' })
      .withRateLimit({ key: () => 'rk', limit: 1, per: '1m' })
      .step('s', { run: () => (ran = true) })
      .build();
    const result = await t.run(r, { n: 'x' as never }, { idempotencyKey: 'idem' });
    expect(result.status === 'failed' && result.error).toMatchObject({ code: 'input_invalid' });
    expect(result.status === 'failed' && result.validationErrors[0]?.path).toBe('n');
    expect(ran).toBe(false);
    await expect(t.coordinator).not.toBeLockedBy('k');
    await expect(t.coordinator).toHaveRateCount('rk', 60_000, 0);
    expect((await t.run(r, { n: 1 }, { idempotencyKey: 'idem' })).replay).toBe(false);
  });

  test('2. invalid step arguments: arguments_invalid before the body; not retried, not compensated', async () => {
    let runs = 0;
    const s = defineStep({
      input: { n: z.number().int() },
      retry: { maxAttempts: 3 },
      run: () => ++runs,
      compensate: () => void runs++,
    });
    const result = await createTestEngine().run(
      reactor('r')
        .step('s', s, { args: ($) => ({ n: $.value(1.5) }) })
        .build(),
      {},
    );
    expect(result.status === 'failed' && result.error).toMatchObject({ code: 'arguments_invalid' });
    expect(runs).toBe(0);
  });

  test('3. a key function that throws, or returns null / empty / a non-string: coordination_key_invalid; nothing taken', async () => {
    const t = createTestEngine();
    for (const key of [
      () => {
        throw new Error('no id');
      },
      () => null,
      () => '',
      () => 7,
    ]) {
      const r = reactor('r')
        .withRateLimit({ key: () => 'rk3', limit: 5, per: '1m' })
        .withLock({ key: key as never })
        .step('s', { run: () => 1 })
        .build();
      const result = await t.run(r, {});
      expect(result.status === 'failed' && result.error).toMatchObject({ code: 'coordination_key_invalid' });
    }
    await expect(t.coordinator).toHaveRateCount('rk3', 60_000, 0);
  });

  test('4. an unknown named rate limit: rate_limit_unknown naming the limit and the fix; nothing taken', async () => {
    const t = createTestEngine({ rateLimits: { known: [{ limit: 1, per: '1s' }] } });
    const result = await t.run(
      reactor('r')
        .withLock({ key: () => 'k4' })
        .withRateLimit({ name: 'ghost' })
        .step('s', { run: () => 1 })
        .build(),
      {},
    );
    expect(result.status === 'failed' && result.error.message).toContain('unknown named rate limit "ghost"');
    expect(result.status === 'failed' && result.error.message).toContain('known: known');
    await expect(t.coordinator).not.toBeLockedBy('k4');
  });

  test('5. conflicting declaration options are refused at definition', () => {
    expectDefinitionError(
      () => reactor('r').withRateLimit({ name: 'psp', limit: 3, per: '1s' } as never),
      'a named limit takes its windows from its registration',
    );
    expectDefinitionError(
      () =>
        reactor('r').withRateLimit({
          key: () => 'k',
          limit: 3,
          per: '1s',
          windows: [{ limit: 1, per: '1s' }],
        } as never),
      'either limit/per or windows',
    );
    expectDefinitionError(
      () => reactor('r').withSemaphore({ key: () => 'k', limit: 0 }),
      'limit must be an integer >= 1',
    );
    expectDefinitionError(() => reactor('r').withLock({ key: () => 'k', ttl: 0 }), 'ttl must be longer than 0');
    expectDefinitionError(
      () => reactor('r').withOrderedLock({ key: () => 'k', strict: 'yes' as never }),
      'strict must be a boolean',
    );
    expectDefinitionError(() => reactor('r').withLock({} as never), 'withLock needs a key function');
  });

  test('6. an `every` or `per` that is not understood is refused at definition', () => {
    expectDefinitionError(
      () => reactor('r').withPeriod({ key: () => 'k', every: 'fortnight' as never }),
      "every must be 'minute', 'hour', 'day', 'week', 'month', 'year' or { seconds: n }",
    );
    expectDefinitionError(() => reactor('r').withPeriod({ key: () => 'k', every: { seconds: 0 } }), 'every must be');
    expectDefinitionError(
      () => reactor('r').withRateLimit({ key: () => 'k', limit: 1, per: 'a while' as never }),
      'rate limit per is not a duration',
    );
    expectDefinitionError(() => reactor('r').withLock({ key: () => 'k', wait: '-1s' }), 'wait is not a duration');
    expect(() =>
      createEngine({ store: new MemoryStore(), rateLimits: { psp: [{ limit: 1, per: 'soon' as never }] } }),
    ).toThrow('rate limit per is not a duration');
  });

  test('7. cyclic or dangling definitions are refused at definition, naming the steps', () => {
    // prettier-ignore
    // @ts-expect-error -- forward reference
    expectDefinitionError(() => reactor('r').step('a', { waitFor: ['b'], run: () => 1 }).step('b', { waitFor: ['a'], run: () => 1 }).build(), 'dependency cycle');
    // prettier-ignore
    // @ts-expect-error -- dangling reference
    expectDefinitionError(() => reactor('r').step('a', { waitFor: ['nowhere'], run: () => 1 }).build(), 'unknown step "nowhere"');
  });

  test('8. duplicate step names are refused at definition', () => {
    // prettier-ignore
    // @ts-expect-error -- duplicate
    expectDefinitionError(() => reactor('r').step('a', { run: () => 1 }).step('a', { run: () => 1 }), 'defined twice');
  });

  test('9. an oversized persisted context: record_too_large; the step that produced it is undone', async () => {
    const undone: string[] = [];
    const r = reactor('r')
      .step('big', { run: () => 'x'.repeat(10_000), undo: () => void undone.push('big') })
      .build();
    const result = await createTestEngine({ store: new MemoryStore({ maxRecordBytes: 1_000 }) }).run(r, {});
    expect(result.status === 'failed' && result.error).toBeInstanceOf(RecordTooLargeError);
    expect(undone).toEqual(['big']);
  });

  test('10. a persisted record with another schema version: record_version_mismatch', () => {
    expect(() => parseRecord(JSON.stringify({ v: 2, id: 'e' }))).toThrow(RecordVersionError);
  });

  test('12. coordination declared on an interrupt step: definition_invalid at definition, pointing at reactor-level coordination', () => {
    const base = reactor('r').input({ id: z.string() });
    for (const declaration of [
      { lock: { key: () => 'k' } },
      { semaphore: { key: () => 'k', limit: 2 } },
      { rateLimit: { key: () => 'k', limit: 1, per: '1s' } },
      { period: { key: () => 'k', every: 'day' } },
      { orderedLock: { key: () => 'k' } },
    ]) {
      expectDefinitionError(
        () => base.interrupt('approve', { payload: { ok: z.boolean() }, ...(declaration as object) }),
        'declare it on the reactor instead (withLock',
      );
    }
  });

  test('13. a resume payload that fails validation: resume_payload_invalid with field issues, counted; nothing resumed', async () => {
    const t = createTestEngine();
    let shipped = 0;
    const r = reactor('r')
      .interrupt('approve', { payload: { ok: z.boolean() }, maxAttempts: 2 })
      .step('ship', { waitFor: ['approve'], run: () => ++shipped })
      .build();
    const paused = await t.run(r, {});
    await expect(t.resume(paused, { ok: 'yes' })).rejects.toMatchObject({
      code: 'resume_payload_invalid',
      issues: [{ path: 'ok' }],
      details: { attempt: 1 },
    });
    expect(shipped).toBe(0);
    expect((await t.engine.result(paused.executionId))?.status).toBe('paused');
  });

  test('14. a resume of a finished run: resume_refused; nothing runs again', async () => {
    const t = createTestEngine();
    let shipped = 0;
    const r = reactor('r')
      .interrupt('approve', { payload: { ok: z.boolean() } })
      .step('ship', { waitFor: ['approve'], run: () => ++shipped })
      .build();
    const paused = await t.run(r, {});
    expect(await t.resume(paused, { ok: true })).toHaveCompleted();
    await expect(t.resume(paused, { ok: true })).rejects.toMatchObject({
      code: 'resume_refused',
      details: { reason: 'already_resumed' },
    });
    expect(shipped).toBe(1);
  });

  test('15. a second concurrent resume: resume_refused (already resumed); the run continues once', async () => {
    const t = createTestEngine();
    let shipped = 0;
    const r = reactor('r')
      .interrupt('approve', { payload: { ok: z.boolean() } })
      .step('ship', { waitFor: ['approve'], run: () => ++shipped })
      .build();
    const paused = await t.run(r, {});
    const settled = await Promise.allSettled([t.resume(paused, { ok: true }), t.resume(paused, { ok: true })]);
    expect(settled.filter((s) => s.status === 'fulfilled')).toHaveLength(1);
    expect(settled.find((s) => s.status === 'rejected')).toMatchObject({
      reason: { code: 'resume_refused', details: { reason: 'already_resumed' } },
    });
    expect(shipped).toBe(1);
  });

  describe('11. unreachable Redis at acquire time', () => {
    let server: RedisServerHandle;
    beforeAll(async () => {
      server = await startRedisServer();
    });
    afterAll(async () => server.dispose());

    test('the run fails with coordination_unavailable and its work never runs unprotected', async () => {
      const port = await freePort(); // nothing listens here
      const backend = createRedisBackend({ url: `redis://127.0.0.1:${port}`, outageToleranceMs: 300 });
      backend.redis.on('error', () => undefined);
      let ran = false;
      const engine = createEngine({ store: new MemoryStore(), coordinator: backend.coordinator });
      const result = await engine.run(
        reactor('r')
          .withLock({ key: () => 'k', wait: 0 })
          .step('s', { run: () => (ran = true) })
          .build(),
        {},
      );
      expect(result.status === 'failed' && result.error).toMatchObject({ code: 'coordination_unavailable' });
      expect(ran).toBe(false);
      await backend.close();
    });

    test('a server that stops answering mid-run: the next run fails clearly, and works again after a restart', async () => {
      const backend = createRedisBackend({ url: server.url, outageToleranceMs: 300 });
      backend.redis.on('error', () => undefined);
      const engine = createEngine({ store: new MemoryStore(), coordinator: backend.coordinator });
      const r = reactor('r')
        .withLock({ key: () => 'k11', wait: 0 })
        .step('s', { run: () => 1 })
        .build();
      expect((await engine.run(r, {})).status).toBe('completed');
      await server.stop();
      const down = await engine.run(r, {});
      expect(down.status === 'failed' && down.error).toMatchObject({ code: 'coordination_unavailable' });
      await server.restart();
      await expect.poll(async () => (await engine.run(r, {})).status, { timeout: 10_000 }).toBe('completed');
      await backend.close();
    });

    test('29. a bad execution id is never ridden out as an outage: engine.wait and the store reject at once with a TypeError', async () => {
      const backend = createRedisBackend({ url: server.url, prefix: 'bad-id', outageToleranceMs: 60_000 });
      try {
        const engine = createEngine({ store: backend.store, coordinator: backend.coordinator });
        await expect(engine.wait(undefined as unknown as string)).rejects.toThrow(TypeError);
        // Below the API, a bad key is a caller's bug: the store call fails at once (ridden out, it would end store_unavailable after 60 s).
        await expect(backend.store.get(undefined as unknown as string)).rejects.toThrow(TypeError);
      } finally {
        await backend.close();
      }
    });
  });
  test('26. a fan-out map whose batchSize is not an integer >= 1 is refused at definition', () => {
    const each = defineStep({ input: { n: z.number() }, run: ({ n }) => n });
    const map = (batchSize: number) => () =>
      reactor('r')
        .input({ items: z.array(z.number()) })
        .map('all', { source: ($) => $.input('items'), each, args: (n) => ({ n }), fanOut: { batchSize } });
    expectDefinitionError(map(0), 'fanOut.batchSize must be an integer >= 1 (got 0)');
    expectDefinitionError(map(2.5), 'fanOut.batchSize must be an integer >= 1');
  });

  test('27. a fan-out element job whose map is unknown, or an engine without a fan-out ledger: fan_out_unknown / fan_out_unavailable; no element body runs', async () => {
    let ran = 0;
    const each = defineStep({ input: { n: z.number() }, run: ({ n }) => (ran++, n), undo: () => void ran-- });
    const r = reactor('fo-bad')
      .input({ items: z.array(z.number()) })
      .step('a', { run: () => 1, undo: () => void (ran += 100) })
      .map('all', { source: ($) => $.input('items'), each, args: (n) => ({ n }), fanOut: {}, waitFor: ['a'] })
      .build();
    const store = new MemoryStore();
    const engine = createEngine({
      store,
      coordinator: new MemoryCoordinator(),
      queue: createMemoryQueue().queue,
      reactors: [r],
    });
    const now = Date.now();
    await store.save({
      v: 1,
      id: 'p/ghost[0]',
      rootId: 'p',
      parentId: 'p',
      reactor: 'fo-bad',
      status: 'pending',
      input: { item: 1, index: 0 },
      steps: {},
      rollbackFailures: [],
      element: { parentId: 'p', step: 'ghost', index: 0 },
      createdAt: now,
      updatedAt: now,
    });
    await expect(
      engine.process({ v: 1, executionId: 'p/ghost[0]', reactor: 'fo-bad' }, { jobId: 'j', delivery: 1 }),
    ).rejects.toMatchObject({ name: 'FanOutError', code: 'fan_out_unknown', details: { step: 'ghost' } });
    // An engine without a ledger: the map fails before any element, earlier steps are undone.
    const started = await engine.start(r, { items: [1, 2] });
    await engine.process(
      { v: 1, executionId: started.executionId, reactor: 'fo-bad' },
      { jobId: `${started.executionId}:1`, delivery: 1 },
    );
    const result = await engine.result(started.executionId);
    expect(result).toMatchObject({ status: 'failed', failedStep: 'all', error: { code: 'fan_out_unavailable' } });
    expect(ran).toBe(100);
  });

  test('28. an execution id that is not a non-empty string: result, wait, cancel, undo and retry reject at once with a TypeError naming the method', async () => {
    const engine = createEngine({ store: new MemoryStore() });
    for (const method of ['result', 'wait', 'cancel', 'undo', 'retry'] as const)
      for (const bad of [undefined, '', 42, null]) {
        const call = (engine[method] as (id: unknown) => Promise<unknown>)(bad);
        await expect(call).rejects.toThrow(TypeError);
        await expect(call).rejects.toThrow(`engine.${method}: executionId must be a non-empty string`);
      }
  });

  test('30. an input nested deeper than 100 levels (here 20,000) or with a cycle: input_invalid naming where, before the contract runs; nothing stored', async () => {
    const store = new MemoryStore();
    const engine = createEngine({ store });
    const r = reactor('deep-input')
      .input({ data: z.any() })
      .step('a', { run: () => 1 })
      .build();
    const nest = (levels: number): Record<string, unknown> => {
      const root: Record<string, unknown> = {};
      let at = root;
      for (let i = 1; i < levels; i++) at = at.x = {};
      return root;
    };
    const deep = await engine.run(r, { data: nest(20_000) });
    expect(deep.status === 'failed' && deep.error).toMatchObject({ code: 'input_invalid' });
    expect(deep.status === 'failed' && deep.error.message).toContain('nests more than 100 levels deep');
    const cyclic: Record<string, unknown> = { list: [{ name: 'a' }] };
    (cyclic.list as Record<string, unknown>[])[0]!.back = cyclic;
    const cycle = await engine.run(r, { data: cyclic });
    expect(cycle.status === 'failed' && cycle.validationErrors).toEqual([
      { path: 'data.list.0.back', message: expect.stringContaining('refers to itself') },
    ]);
    expect((await store.list()).records).toEqual([]);
    // A shared (not cyclic) value and 99 levels below the input are fine.
    const shared = { n: 1 };
    expect((await engine.run(r, { data: { a: shared, b: shared } })).status).toBe('completed');
    expect((await engine.run(r, { data: nest(99) })).status).toBe('completed');
  });
});

describe('bad input matrix: step-scoped coordination (issue 6)', () => {
  test('16. a step rollbackWait that is not a duration is refused at definition, naming the step', () => {
    expectDefinitionError(
      () => reactor('r').step('s', { lock: { key: () => 'k', rollbackWait: 'soon' as never }, run: () => 1 }),
      'reactor "r", step "s": lock rollbackWait is not a duration',
    );
  });

  test('17. a directly invoked step with invalid arguments: arguments_invalid, body not run, nothing taken', async () => {
    const t = createTestEngine();
    let ran = 0;
    const s = defineStep({
      name: 'charge',
      input: { n: z.number().int() },
      lock: { key: ({ n }) => `k:${n}` },
      run: () => ++ran,
    });
    const out = await s.invoke({ n: 1.5 }, { engine: t.engine });
    expect(out.status === 'failed' && out.error).toMatchObject({ code: 'arguments_invalid' });
    expect(ran).toBe(0);
    expect(t.events.some((e) => e.type === 'coordination.acquired')).toBe(false);
  });

  test('18. a direct invocation given a ctx no run handed out: invoke_context_unknown, body not run', async () => {
    const t = createTestEngine();
    let ran = 0;
    const s = defineStep({ name: 'charge', input: {}, run: () => ++ran });
    const ctx = {
      executionId: 'x',
      rootExecutionId: 'x',
      reactor: 'r',
      step: 's',
      attempt: 1,
      signal: new AbortController().signal,
      logger: console,
      heldKeys: new Set<string>(),
      fencingToken: () => undefined,
      progress: () => undefined,
    };
    const out = await s.invoke({}, { engine: t.engine, ctx });
    expect(out.status === 'failed' && out.error).toMatchObject({ code: 'invoke_context_unknown' });
    expect(ran).toBe(0);
  });
});

describe('bad input matrix: async units (asyncStep, asyncReactor)', () => {
  const child = reactor('bi-child')
    .input({ amount: z.number().positive() })
    .step('issue', { args: ($) => ({ amount: $.input('amount') }), run: ({ amount }) => amount })
    .returns('issue');

  test('20. bad asyncStep / asyncReactor declarations are refused at definition, naming the step and the fix', () => {
    expectDefinitionError(
      () => reactor('r').asyncStep('x', { run: () => 1, undo: (() => undefined) as never }),
      'asyncStep "x" declares undo, which would never run',
    );
    expectDefinitionError(
      () => reactor('r').asyncReactor('x', undefined as never),
      'asyncReactor "x" needs a built reactor',
    );
    expectDefinitionError(
      () => reactor('r').asyncReactor('x', defineStep({ input: {}, run: () => 1 }) as never),
      'asyncReactor "x" needs a built reactor',
    );
    expectDefinitionError(
      () =>
        reactor('same').asyncReactor(
          'x',
          reactor('same')
            .step('s', { run: () => 1 })
            .build(),
        ),
      'give the child a name of its own',
    );
    expectDefinitionError(() => reactor('r').asyncReactor('x', child).build(), 'required input "amount" is not wired');
    expectDefinitionError(
      () => reactor('r').asyncStep('x', { lock: { key: () => 'k', ttl: 0 }, run: () => 1 }),
      'withLock ttl must be longer than 0',
    );
    expectDefinitionError(
      () => reactor('r').asyncStep('x', { retry: { maxAttempts: 0 }, run: () => 1 }),
      'retry maxAttempts must be an integer >= 1',
    );
  });

  test('21. an invalid asyncReactor child input: arguments_invalid in the dispatcher with field issues; nothing queued, no child record, earlier steps undone', async () => {
    const m = manualEngine();
    let undone = 0;
    const r = reactor('bi-parent')
      .step('first', { run: () => 1, undo: () => void undone++ })
      .asyncReactor('invoice', child, { args: ($) => ({ amount: $.value(-5) }), waitFor: ['first'] })
      .build();
    const result = await m.engine.run(r, {});
    expect(result.status === 'failed' && result.error).toMatchObject({ code: 'arguments_invalid' });
    expect(result.status === 'failed' && result.validationErrors[0]?.path).toBe('amount');
    expect(
      errorFromJSON(JSON.parse(JSON.stringify(result.status === 'failed' && result.error)) as never),
    ).toMatchObject({ code: 'arguments_invalid' });
    expect(undone).toBe(1);
    expect(m.memory.queue.counts()).toEqual({ ready: 0, delayed: 0, running: 0 });
    expect(await m.store.get(`${result.executionId}~invoice`)).toBeUndefined();
  });

  test('22. invalid asyncStep arguments: the unit fails arguments_invalid in its job before its body; not retried, not compensated, nothing taken; the reader gets the typed error', async () => {
    const t = createTestEngine();
    const calls = { run: 0, compensate: 0 };
    const charge = defineStep({
      input: { amount: z.number().int() },
      lock: { key: () => 'bi-22' },
      retry: { maxAttempts: 3 },
      run: () => ++calls.run,
      compensate: () => void calls.compensate++,
    });
    const r = reactor('bi-args')
      .asyncStep('charge', charge, { args: ($) => ({ amount: $.value(1.5) }) })
      .step('read', { args: ($) => ({ c: $.result('charge') }), run: ({ c }) => c })
      .build();
    const result = await t.run(r, {});
    expect(result).toMatchObject({ status: 'failed', failedStep: 'charge', error: { code: 'arguments_invalid' } });
    const unit = (await t.store.get(`${result.executionId}~charge`))!;
    expect(unit).toMatchObject({ status: 'failed', error: { code: 'arguments_invalid' } });
    expect(calls).toEqual({ run: 0, compensate: 0 });
    await expect(t.coordinator).not.toBeLockedBy('bi-22');
  });

  test('23. an asyncStep key function that throws or returns a non-string: coordination_key_invalid in the unit; the body never runs', async () => {
    const t = createTestEngine();
    let ran = 0;
    for (const key of [
      () => {
        throw new Error('no account');
      },
      () => null,
    ]) {
      const r = reactor('bi-key')
        .asyncStep('charge', { lock: { key: key as never }, run: () => ++ran })
        .returns('charge');
      const result = await t.run(r, {});
      expect(result).toMatchObject({
        status: 'failed',
        failedStep: 'charge',
        error: { code: 'coordination_key_invalid' },
      });
    }
    expect(ran).toBe(0);
  });

  test('24. dispatching on an engine without a queue: queue_missing; no unit record, earlier steps undone', async () => {
    const store = new MemoryStore();
    let undone = 0;
    const r = reactor('bi-noq')
      .step('first', { run: () => 1, undo: () => void undone++ })
      .asyncStep('u', { waitFor: ['first'], run: () => 1 })
      .build();
    const result = await createEngine({ store }).run(r, {});
    expect(result.status === 'failed' && result.error).toMatchObject({ code: 'queue_missing' });
    expect(undone).toBe(1);
    expect(await store.get(`${result.executionId}~u`)).toBeUndefined();
  });

  test('25. a queued unit whose step is gone from the definition (changed while queued): async_unit_unknown; nothing runs', async () => {
    const m = manualEngine();
    let ran = 0;
    const v1 = reactor('bi-changed')
      .asyncStep('ship', { run: () => ++ran })
      .step('b', { run: () => 2 })
      .build();
    const dispatched = await m.engine.run(v1, {});
    expect(dispatched.status).toBe('completed');
    m.engine.register(
      reactor('bi-changed')
        .step('b', { run: () => 2 })
        .build(),
    ); // v2: no asyncStep "ship"
    const worker = m.startWorker();
    try {
      const unit = await untilStatus(m.engine, `${dispatched.executionId}~ship`, 'failed');
      expect(unit.status === 'failed' && unit.error).toMatchObject({
        code: 'async_unit_unknown',
        details: { step: 'ship' },
      });
      expect(ran).toBe(0);
    } finally {
      await worker.stop();
    }
  });
});

describe('bad input matrix: start options (delayed start, priorities, startMany)', () => {
  test('31. a bad delay, at or priority (negative, NaN, both delay and at, priority out of 1..2,097,151): start_options_invalid before anything is written', async () => {
    const m = manualEngine();
    const r = reactor('start-options-bad').input({ n: z.number() }).build();
    for (const options of [
      { delay: -1 },
      { delay: Number.NaN },
      { delay: 'soon' },
      { delay: 5, at: Date.now() },
      { at: new Date('not a date') },
      { priority: 0 },
      { priority: 2_097_152 },
    ]) {
      const error = await m.engine.start(r, { n: 1 }, options as never).catch((e: unknown) => e);
      expect(error, JSON.stringify(options)).toBeInstanceOf(StartOptionsError);
      expect((error as StartOptionsError).code).toBe('start_options_invalid');
    }
    expect((await m.store.list()).records).toEqual([]);
    expect(m.memory.queue.counts()).toEqual({ ready: 0, delayed: 0, running: 0 });
  });

  test('32. startMany with one invalid input: only that entry fails input_invalid (nothing written for it); a bad option rejects the call naming the entry, nothing written', async () => {
    const m = manualEngine();
    const r = reactor('start-many-bad').input({ n: z.number() }).build();
    const [ok, bad] = await m.engine.startMany([
      { reactor: r, input: { n: 1 } },
      { reactor: r, input: { n: 'x' as unknown as number } },
    ]);
    expect(ok.status).toBe('queued');
    expect(bad.status === 'failed' && bad.validationErrors.map((i) => i.path)).toEqual(['n']);
    expect(await m.store.get(bad.executionId)).toBeUndefined();
    const error = await m.engine
      .startMany([
        { reactor: r, input: { n: 2 } },
        { reactor: r, input: { n: 3 }, options: { priority: -1 } },
      ])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StartOptionsError);
    expect((error as StartOptionsError).details.entry).toBe(1);
    expect((await m.store.list()).records.map((record) => record.id)).toEqual([ok.executionId]);
  });
});

describe('bad input matrix: limits from arguments, several of a kind', () => {
  test('33. a semaphore or rate window limit function that throws or returns 0, a negative number, NaN, 1.5 or a promise: coordination_limit_invalid naming the key; nothing taken, the body never runs', async () => {
    const t = createTestEngine();
    let ran = 0;
    for (const limit of [() => 0, () => -1, () => Number.NaN, () => 1.5, () => Promise.reject(new Error('async'))]) {
      const r = reactor('bad-limit')
        .withSemaphore({ key: () => 'bad-limit:s', limit: limit as () => number })
        .withRateLimit({ key: () => 'bad-limit:r', limit: 5, per: '1m' })
        .step('s', { run: () => ++ran })
        .build();
      const result = await t.run(r, {});
      expect(result.status === 'failed' && result.error).toMatchObject({
        code: 'coordination_limit_invalid',
        details: { reactor: 'bad-limit', primitive: 'semaphore', key: 'bad-limit:s' },
      });
    }
    const throwing = reactor('throwing-limit')
      .step('s', {
        rateLimit: {
          key: () => 'bad-limit:t',
          limit: () => {
            throw new Error('no plan');
          },
          per: '1s',
        },
        run: () => ++ran,
      })
      .build();
    const result = await t.run(throwing, {});
    expect(result.status === 'failed' && result.error.message).toMatch(
      /rate limit limit of key "bad-limit:t" could not be computed: the limit function threw: no plan/,
    );
    expect(ran).toBe(0);
    expect((await t.coordinator.semaphoreState('bad-limit:s')).holders).toEqual([]);
    expect((await t.coordinator.rateState('bad-limit:r', 60_000)).count).toBe(0);
  });

  test('34. several semaphores or rate limits: an empty list is refused at definition; two computing the same key refuse the admission (coordination_key_invalid), nothing taken', async () => {
    expectDefinitionError(() => reactor('empty-list').withSemaphore([]), 'non-empty list');
    expectDefinitionError(
      () => reactor('empty-list').step('s', { rateLimit: [], run: () => 1 }),
      'rateLimit takes one declaration or a non-empty list',
    );
    const t = createTestEngine();
    const r = reactor('same-key')
      .withSemaphore({ key: () => 'same-key:s', limit: 1 })
      .withRateLimit([
        { key: () => 'same-key:r', limit: 1, per: '1m' },
        { key: () => 'same-key:r', limit: 2, per: '1s' },
      ])
      .step('s', { run: () => 1 })
      .build();
    const result = await t.run(r, {});
    expect(result.status === 'failed' && result.error).toMatchObject({ code: 'coordination_key_invalid' });
    expect(result.status === 'failed' && result.error.message).toContain(
      'two rate limit declarations computed the same key "same-key:r"',
    );
    expect((await t.coordinator.semaphoreState('same-key:s')).holders).toEqual([]);
    expect((await t.coordinator.rateState('same-key:r', 60_000)).count).toBe(0);
  });
});

describe('bad input matrix: debounced starts', () => {
  test('35. a bad debounce (not an object, an empty or non-string key, a window of 0, negative or not understood, with delay or at): start_options_invalid naming the option; nothing written or enqueued', async () => {
    const m = manualEngine();
    const r = reactor('debounce-bad').input({ n: z.number() }).build();
    for (const [options, option] of [
      [{ debounce: 'k' }, 'debounce'],
      [{ debounce: { key: '', window: 1_000 } }, 'debounce.key'],
      [{ debounce: { key: 7, window: 1_000 } }, 'debounce.key'],
      [{ debounce: { key: 'k', window: 0 } }, 'debounce.window'],
      [{ debounce: { key: 'k', window: -1 } }, 'debounce.window'],
      [{ debounce: { key: 'k', window: 'soon' } }, 'debounce.window'],
      [{ debounce: { key: 'k', window: 1_000 }, delay: 5 }, 'delay'],
      [{ debounce: { key: 'k', window: 1_000 }, at: Date.now() }, 'at'],
    ] as const) {
      const error = await m.engine.start(r, { n: 1 }, options as never).catch((e: unknown) => e);
      expect(error, JSON.stringify(options)).toBeInstanceOf(StartOptionsError);
      expect(error).toMatchObject({ code: 'start_options_invalid', details: { option } });
    }
    expect((await m.store.list()).records).toEqual([]);
    expect(m.memory.queue.counts()).toEqual({ ready: 0, delayed: 0, running: 0 });
  });
});

describe('bad input matrix: sent events', () => {
  test('43. an event payload failing its schema: event_payload_invalid with field issues; nothing stored (of a sendMany, no entry)', async () => {
    const t = createTestEngine();
    const paid = event('order.paid', { orderId: z.string(), amount: z.number() });
    const error = await t.engine.send(paid, { orderId: 7, amount: 'x' } as never).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EventPayloadError);
    expect(error).toMatchObject({ code: 'event_payload_invalid', details: { event: 'order.paid' } });
    expect((error as EventPayloadError).issues.map((i) => i.path).sort()).toEqual(['amount', 'orderId']);
    const many = await t.engine
      .sendMany([
        { event: paid, payload: { orderId: 'o-1', amount: 1 } },
        { event: paid, payload: { orderId: 'o-2' } as never },
      ])
      .catch((e: unknown) => e);
    expect(many).toMatchObject({ code: 'event_payload_invalid', details: { entry: 1 } });
    expect((await t.engine.listEvents()).events).toEqual([]);
  });

  test('44. an event that is not valid (name, id, ts, options; a payload not JSON, too deep or too large): event_invalid naming the field; nothing stored', async () => {
    const t = createTestEngine();
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    let deep: unknown = 1;
    for (let i = 0; i < 120; i++) deep = { deep };
    for (const [name, payload, options, field] of [
      ['', {}, undefined, 'name'],
      ['has space', {}, undefined, 'name'],
      ['x'.repeat(201), {}, undefined, 'name'],
      [7, {}, undefined, 'name'],
      ['ok', {}, { id: '' }, 'id'],
      ['ok', {}, { id: 'x'.repeat(257) }, 'id'],
      ['ok', {}, { ts: -1 }, 'ts'],
      ['ok', {}, { ts: new Date(Number.NaN) }, 'ts'],
      ['ok', {}, 'soon', 'options'],
      ['ok', { n: 10n }, undefined, 'payload'],
      ['ok', { f: () => 1 }, undefined, 'payload'],
      ['ok', { n: Number.NaN }, undefined, 'payload'],
      ['ok', cyclic, undefined, 'payload.self'],
      ['ok', { big: 'x'.repeat(256 * 1024) }, undefined, 'payload'],
    ] as const) {
      const error = await t.engine.send(name as string, payload, options as never).catch((e: unknown) => e);
      expect(error, `${String(name).slice(0, 20)} ${field}`).toBeInstanceOf(EventInvalidError);
      expect(error).toMatchObject({ code: 'event_invalid', details: { field } });
    }
    const tooDeep = await t.engine.send('ok', deep).catch((e: unknown) => e);
    expect(tooDeep).toMatchObject({ code: 'event_invalid' });
    expect((tooDeep as EventInvalidError).details.field).toMatch(/^payload\./);
    expect((await t.engine.listEvents()).events).toEqual([]);
  });

  test('45. a start on an event declared wrong (no input, an unknown option, a function that is none, the event twice, input after .on): definition_invalid at build', () => {
    const base = () => reactor('on-bad').input({ id: z.string() });
    expectDefinitionError(() => base().on('a.b', {} as never), 'needs an input function');
    expectDefinitionError(() => base().on('a b', { input: () => ({ id: 'x' }) }), 'event name');
    expectDefinitionError(
      () => base().on('a.b', { input: () => ({ id: 'x' }), matches: () => true } as never),
      'unknown option',
    );
    expectDefinitionError(
      () => base().on('a.b', { input: () => ({ id: 'x' }), idempotencyKey: 'k' } as never),
      'idempotencyKey must be a function',
    );
    expectDefinitionError(
      () =>
        base()
          .on('a.b', { input: () => ({ id: 'x' }) })
          .on('a.b', { input: () => ({ id: 'y' }) }),
      'twice',
    );
    expectDefinitionError(
      () =>
        reactor('on-bad')
          .on('a.b', { input: () => ({}) })
          .input({ id: z.string() }),
      '.input(...) first',
    );
  });

  test('46. a trigger whose input fails the reactor contract, or whose function throws: event_trigger_failed naming the stage; the event stored, nothing started, the other triggers run', async () => {
    const paid = event('order.paid', { orderId: z.string(), amount: z.number() });
    const strict = reactor('strict')
      .input({ cents: z.number().int() })
      .on(paid, { input: (e) => ({ cents: e.amount }) })
      .step('s', { run: ({ cents }) => cents })
      .build();
    const throws = reactor('throws')
      .on(paid, {
        input: () => ({}),
        idempotencyKey: () => {
          throw new Error('no key');
        },
      })
      .step('s', { run: () => 1 })
      .build();
    const fine = reactor('fine')
      .on(paid, { input: () => ({}) })
      .step('s', { run: () => 1 })
      .build();
    const t = createTestEngine({ reactors: [strict, throws, fine] });
    const sent = await t.engine.send(paid, { orderId: 'o-1', amount: 0.5 }, { id: 'pay-46' });
    expect(sent.status).toBe('accepted');
    expect(sent.triggerFailures.map((f) => [f.code, f.details.reactor, f.details.stage])).toEqual([
      ['event_trigger_failed', 'strict', 'input'],
      ['event_trigger_failed', 'throws', 'idempotencyKey'],
    ]);
    expect(sent.triggerFailures[0]?.details.issues?.map((i) => i.path)).toEqual(['cents']);
    expect(sent.started).toHaveLength(1);
    expect((await t.engine.list()).executions.map((e) => e.reactor)).toEqual(['fine']);
    expect((await t.engine.listEvents()).events.map((e) => [e.id, e.effects.started])).toEqual([
      ['pay-46', sent.started],
    ]);
  });
});
