/**
 * Async units whose dispatcher runs in a worker (embedded pool): a redelivered or retried
 * dispatcher never dispatches twice, a worker reader of a failed unit rolls its run back, a
 * parked reader gives up after `asyncParkTimeoutMs` (and the unit still running then is
 * discarded and compensated, F-09), and an asyncStep inside a composed reactor.
 */
import { describe, expect, test } from 'vitest';
import { createEmbeddedEngine, reactor } from '../../src/index.js';
import { eventsOf, gate, untilStatus } from '../background/helpers.js';

describe('dispatchers in workers', () => {
  test('a dispatcher that runs again (a later step retried) does not dispatch its unit twice', async () => {
    const engine = createEmbeddedEngine();
    let bodies = 0;
    let attempts = 0;
    const r = reactor('retried-dispatcher')
      .background('all')
      .asyncStep('audit', { run: () => ++bodies })
      .step('flaky', {
        retry: { maxAttempts: 2, backoff: 'fixed', baseDelay: 1 },
        run: () => (++attempts === 1 ? Promise.reject(new Error('once')) : 'ok'),
      })
      .returns('flaky');
    try {
      const started = await engine.start(r, {});
      const done = await engine.wait(started.executionId, { timeoutMs: 5_000, pollMs: 5 });
      expect(done).toMatchObject({ status: 'completed', value: 'ok' });
      await untilStatus(engine, `${started.executionId}~audit`, 'completed');
      expect(attempts).toBe(2);
      expect(bodies).toBe(1);
      expect(eventsOf(done?.trace ?? [], 'async.dispatched')).toHaveLength(1);
      expect(eventsOf(done?.trace ?? [], 'run.resumed').length).toBeGreaterThanOrEqual(2);
    } finally {
      await engine.close();
    }
  });

  test('a worker reader of a failed unit fails its run with the unit error and undoes its own completed steps', async () => {
    const engine = createEmbeddedEngine({ background: { workerWaitMs: 0, parkFallbackMs: 20_000 } });
    const undone: string[] = [];
    const r = reactor('reads-failure')
      .background('all')
      .step('first', { run: () => 1, undo: () => void undone.push('first') })
      .asyncStep('unit', {
        waitFor: ['first'],
        run: () => Promise.reject(Object.assign(new Error('unit broke'), { code: 'unit_broke' })),
      })
      .step('read', { args: ($) => ({ v: $.result('unit') }), run: () => 'never' })
      .build();
    try {
      const started = await engine.start(r, {});
      const done = await engine.wait(started.executionId, { timeoutMs: 5_000, pollMs: 5 });
      expect(done).toMatchObject({
        status: 'failed',
        failedStep: 'unit',
        error: { message: 'unit broke', code: 'unit_broke' },
      });
      expect(undone).toEqual(['first']);
    } finally {
      await engine.close();
    }
  });

  test('a parked reader gives up after asyncParkTimeoutMs; the unit still running then is discarded and compensated when it finishes (F-09)', async () => {
    const engine = createEmbeddedEngine({
      background: { workerWaitMs: 0, parkFallbackMs: 20_000, asyncParkTimeoutMs: 150 },
    });
    const release = gate();
    const compensated: string[] = [];
    const r = reactor('park-timeout')
      .background('all')
      .asyncStep('slow', {
        run: async () => (await release.promise, 'late'),
        compensate: (reason) => void compensated.push(reason.message),
      })
      .step('read', { args: ($) => ({ v: $.result('slow') }), run: ({ v }) => v })
      .returns('read');
    try {
      const started = await engine.start(r, {});
      const done = await engine.wait(started.executionId, { timeoutMs: 5_000, pollMs: 5 });
      expect(done).toMatchObject({
        status: 'failed',
        failedStep: 'slow',
        error: { code: 'async_wait_timeout', details: { mode: 'park' } },
      });
      release.open();
      const unit = await untilStatus(engine, `${started.executionId}~slow`, 'cancelled');
      expect(compensated).toHaveLength(1);
      expect(eventsOf(unit.trace, 'async.discarded')).toMatchObject([{ started: true, dispatcherStatus: 'failed' }]);
    } finally {
      release.open();
      await engine.close();
    }
  });

  test('an asyncStep inside a composed reactor: the unit finds its step by path and the composed reader gets its value', async () => {
    const engine = createEmbeddedEngine();
    const inner = reactor('inner')
      .asyncStep('label', { run: (_args, ctx) => `label from ${ctx.step}` })
      .returns('label');
    const outer = reactor('outer').compose('pack', inner).returns('pack');
    try {
      const result = await engine.run(outer, {});
      expect(result).toMatchObject({ status: 'completed', value: 'label from pack.label' });
      const unit = (await engine.store.get(`${result.executionId}~pack.label`))!;
      expect(unit).toMatchObject({ status: 'completed', unit: { step: 'pack.label', reactor: 'inner' } });
    } finally {
      await engine.close();
    }
  });
});
