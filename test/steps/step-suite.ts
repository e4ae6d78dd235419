/**
 * Step-scoped coordination on the in-process path, run against every backend (memory in real
 * time, Redis): a step declares its own lock / semaphore / rate limit / period / ordered lock
 * keyed on its validated arguments; only that step serializes. Restates reference scenarios 10,
 * 11, 15 and 20.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import {
  ContentionError,
  CoordinationKeyError,
  DefinitionError,
  coordinationOf,
  defineStep,
  reactor,
  type ReactorEvent,
} from '../../src/index.js';
import '../../src/testing/vitest.js';
import type { EngineRig as Backend } from '../support/backend-matrix.js';

export const OTHER = { owner: 'someone-else' };

export function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/** Resolves once `n` callers have arrived: proves they were inside at the same time. */
export function barrier(n: number): () => Promise<void> {
  let arrived = 0;
  const all = gate();
  return async () => {
    if (++arrived >= n) all.open();
    await all.promise;
  };
}

export async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 2_000; i++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  throw new Error('condition never became true');
}

/** The in-process step-coordination scenarios against one backend. */
export function describeStepCoordination(makeBackend: () => Promise<Backend>): void {
  let b: Backend;
  beforeAll(async () => {
    b = await makeBackend();
  });
  afterAll(async () => b.close());

  describe('10. a locked step serializes; the rest of the workflow overlaps', () => {
    function workflow(
      opts: {
        auditMeet?: () => Promise<void>;
        notifyMeet?: () => Promise<void>;
        chargeBody: (accountId: string) => Promise<void>;
      },
      prefix: string,
    ) {
      const charge = defineStep({
        name: 'charge',
        input: { accountId: z.string(), amount: z.number().default(1) },
        lock: { key: ({ accountId }) => `${prefix}:account:${accountId}`, wait: '10s' },
        run: async ({ accountId, amount }) => {
          await opts.chargeBody(accountId);
          return amount;
        },
      });
      return reactor('payment')
        .input({ accountId: z.string() })
        .step('audit', { run: async () => void (await opts.auditMeet?.()) })
        .step('charge', charge, { args: ($) => ({ accountId: $.input('accountId') }), waitFor: ['audit'] })
        .step('notify', { waitFor: ['charge'], run: async () => void (await opts.notifyMeet?.()) })
        .build();
    }

    test('same account: charge bodies never overlap while audit and notify of both executions overlap', async () => {
      const prefix = b.key('s10');
      const inside = new Map<string, number>();
      let maxInside = 0;
      const firstCharge = gate();
      let entered = 0;
      const r = workflow(
        {
          auditMeet: barrier(2),
          notifyMeet: barrier(2),
          chargeBody: async (account) => {
            const n = (inside.get(account) ?? 0) + 1;
            inside.set(account, n);
            maxInside = Math.max(maxInside, n);
            if (++entered === 1) await firstCharge.promise;
            inside.set(account, (inside.get(account) ?? 1) - 1);
          },
        },
        prefix,
      );
      const { engine, events } = b.engine();
      const runs = [engine.run(r, { accountId: 'a' }), engine.run(r, { accountId: 'a' })];
      // The second execution reaches charge and waits on the step's lock while the first is inside.
      await until(() =>
        events.some((e) => e.type === 'coordination.waiting' && (e as { step?: string }).step === 'charge'),
      );
      expect(inside.get('a')).toBe(1);
      expect(entered).toBe(1);
      firstCharge.open();
      const results = await Promise.all(runs);
      expect(results.map((x) => x.status)).toEqual(['completed', 'completed']);
      expect(maxInside).toBe(1);
      expect(await b.coordinator.lockState(`${prefix}:account:a`)).toBeUndefined();
    });

    test('different accounts overlap inside charge', async () => {
      const prefix = b.key('s10b');
      const meet = barrier(2);
      const r = workflow({ chargeBody: async () => meet() }, prefix);
      const { engine } = b.engine();
      const results = await Promise.all([engine.run(r, { accountId: 'a' }), engine.run(r, { accountId: 'b' })]);
      expect(results.map((x) => x.status)).toEqual(['completed', 'completed']);
    });
  });

  describe('11. contention at a step in-process: the run fails there and rolls back', () => {
    test('an external holder with wait 0: fails at charge naming reactor, step, primitive and key; prior steps undone; charge not compensated', async () => {
      const key = b.key('account');
      await b.coordinator.lockAcquire({ key, holder: OTHER, ttlMs: 30_000 });
      const calls: string[] = [];
      const r = reactor('pay-contended')
        .input({ accountId: z.string() })
        .step('audit', { run: () => calls.push('audit'), undo: () => void calls.push('undo audit') })
        .step('charge', {
          args: ($) => ({ accountId: $.input('accountId') }),
          waitFor: ['audit'],
          lock: { key: () => key, wait: 0 },
          run: () => calls.push('charge'),
          compensate: () => void calls.push('compensate charge'),
        })
        .step('notify', { waitFor: ['charge'], run: () => calls.push('notify') })
        .build();
      const { engine } = b.engine();
      const result = await engine.run(r, { accountId: 'a' });
      expect(result.status).toBe('failed');
      if (result.status !== 'failed') return;
      expect(result.failedStep).toBe('charge');
      expect(result.error).toBeInstanceOf(ContentionError);
      expect(result.error.message).toContain('reactor "pay-contended", step "charge"');
      expect(result.error.message).toContain(`lock "${key}"`);
      expect(calls).toEqual(['audit', 'undo audit']);
      expect(result.steps.charge?.attempts).toBe(0);
      expect((await b.coordinator.lockState(key))?.holder.owner).toBe('someone-else');
      await b.coordinator.lockRelease(key, 'someone-else');
    });

    test('contention is not retried, even with a retry policy', async () => {
      const key = b.key('busy');
      await b.coordinator.lockAcquire({ key, holder: OTHER, ttlMs: 30_000 });
      let ran = 0;
      const r = reactor('no-retry-on-contention')
        .step('s', {
          retry: { maxAttempts: 3 },
          semaphore: { key: () => key, limit: 1, wait: 0 },
          lock: { key: () => key, wait: 0 },
          run: () => ++ran,
        })
        .build();
      const { engine, events } = b.engine();
      const result = await engine.run(r, {});
      expect(result.status).toBe('failed');
      expect(ran).toBe(0);
      expect(events.filter((e) => e.type === 'step.retrying')).toHaveLength(0);
      await b.coordinator.lockRelease(key, 'someone-else');
    });
  });

  describe('an uncomputable key never runs the body (SC-011)', () => {
    test.each([
      [
        'throws',
        (): string => {
          throw new Error('no account');
        },
        'threw: no account',
      ],
      ['returns an empty string', (): string => '', 'empty string'],
      ['returns a non-string', (): string => null as unknown as string, 'null'],
    ])('a key function that %s fails the step before its body, naming reactor and step', async (_what, key, cause) => {
      let ran = 0;
      const undone: string[] = [];
      const r = reactor('bad-key')
        .step('first', { run: () => 1, undo: () => void undone.push('first') })
        .step('locked', { waitFor: ['first'], lock: { key }, run: () => ++ran })
        .build();
      const { engine } = b.engine();
      const result = await engine.run(r, {});
      expect(result.status).toBe('failed');
      if (result.status !== 'failed') return;
      expect(result.failedStep).toBe('locked');
      expect(result.error).toBeInstanceOf(CoordinationKeyError);
      expect(result.error.message).toContain('reactor "bad-key"');
      expect(result.error.message).toContain('"locked"');
      expect(result.error.message).toContain(cause);
      expect(ran).toBe(0);
      expect(undone).toEqual(['first']);
    });
  });

  describe('step-level period (R-14)', () => {
    test('a marked bucket skips the step (reason period) and the run continues; only a successful body marks it', async () => {
      const prefix = b.key('daily');
      let fail = true;
      let ran = 0;
      let after = 0;
      const r = reactor('digest')
        .input({ user: z.string() })
        .step('send', {
          args: ($) => ({ user: $.input('user') }),
          period: { key: ({ user }) => `${prefix}:${user}`, every: 'day' },
          run: () => {
            ran++;
            if (fail) throw new Error('smtp down');
            return 'sent';
          },
        })
        .step('log', { waitFor: ['send'], run: () => ++after })
        .build();
      const { engine, events } = b.engine();
      expect((await engine.run(r, { user: 'u' })).status).toBe('failed');
      fail = false;
      const second = await engine.run(r, { user: 'u' });
      expect(second.status).toBe('completed');
      expect(ran).toBe(2);
      const third = await engine.run(r, { user: 'u' });
      expect(third.status).toBe('completed');
      expect(ran).toBe(2);
      expect(third.steps.send?.status).toBe('skipped');
      expect(after).toBe(2);
      const skipped = events.filter(
        (e): e is Extract<ReactorEvent, { type: 'step.skipped' }> => e.type === 'step.skipped',
      );
      expect(skipped.map((e) => [e.step, e.reason])).toEqual([['send', 'period']]);
      // Another key is not affected.
      expect((await engine.run(r, { user: 'v' })).steps.send?.status).toBe('completed');
    });
  });

  describe('step-level ordered lock and rate limit', () => {
    test('executions pass the step in arrival order; after a strict failure the waiting one skips the step (ordered_lock_chain_failed) and the run continues', async () => {
      const key = b.key('ordered');
      const firstInside = gate();
      const failFirst = gate();
      const order: string[] = [];
      let after = 0;
      const r = reactor('ordered-step')
        .input({ n: z.number() })
        .step('seq', {
          args: ($) => ({ n: $.input('n') }),
          orderedLock: { key: () => key, strict: true, wait: '5s' },
          run: async ({ n }) => {
            order.push(`in ${n}`);
            if (n === 1) {
              firstInside.open();
              await failFirst.promise;
              throw new Error('first failed');
            }
          },
        })
        .step('after', { waitFor: ['seq'], run: () => ++after })
        .build();
      const { engine, events } = b.engine();
      const first = engine.run(r, { n: 1 });
      await firstInside.promise;
      const second = engine.run(r, { n: 2 });
      // The second execution has taken its position behind the first (arrival at the step).
      await until(async () => (await b.coordinator.orderedState(key)).issued === 2);
      failFirst.open();
      const [a, c] = await Promise.all([first, second]);
      expect(a.status).toBe('failed');
      expect(c.status).toBe('completed');
      expect(c.steps.seq?.status).toBe('skipped');
      expect(order).toEqual(['in 1']);
      expect(after).toBe(1);
      const skipped = events.filter(
        (e): e is Extract<ReactorEvent, { type: 'step.skipped' }> => e.type === 'step.skipped',
      );
      expect(skipped.map((e) => e.reason)).toEqual(['ordered_lock_chain_failed']);
    });

    test('a full step-level rate limit fails the step before its body naming the step; completed steps roll back', async () => {
      const key = b.key('rate');
      let ran = 0;
      const undone: string[] = [];
      const r = reactor('rated')
        .step('first', { run: () => 1, undo: () => void undone.push('first') })
        .step('call', { waitFor: ['first'], rateLimit: { key: () => key, limit: 1, per: '1h' }, run: () => ++ran })
        .build();
      const { engine } = b.engine();
      expect((await engine.run(r, {})).status).toBe('completed');
      const second = await engine.run(r, {});
      expect(second.status).toBe('failed');
      if (second.status !== 'failed') return;
      expect(second.failedStep).toBe('call');
      expect(second.error.message).toContain('reactor "rated", step "call"');
      expect(ran).toBe(1);
      expect(undone).toEqual(['first']);
    });
  });

  describe('step-level ordered positions (R-15)', () => {
    test('a position is kept across a retry: a later arrival waits for the retry, it does not pass in between', async () => {
      const key = b.key('ord-retry');
      const log: string[] = [];
      const firstFailed = gate();
      let firstAttempts = 0;
      const r = reactor('ord-retry')
        .input({ who: z.string() })
        .step('seq', {
          args: ($) => ({ who: $.input('who') }),
          retry: { maxAttempts: 2, backoff: 'fixed', baseDelay: 150 },
          orderedLock: { key: () => key, wait: '5s' },
          run: ({ who }) => {
            log.push(who);
            if (who === 'e1' && ++firstAttempts === 1) {
              firstFailed.open();
              throw new Error('transient');
            }
          },
        })
        .build();
      const { engine, events } = b.engine();
      const e1 = engine.run(r, { who: 'e1' });
      await firstFailed.promise;
      const e2 = engine.run(r, { who: 'e2' });
      const results = await Promise.all([e1, e2]);
      expect(results.map((x) => x.status)).toEqual(['completed', 'completed']);
      expect(log).toEqual(['e1', 'e1', 'e2']);
      const nonces = events
        .filter((e) => e.type === 'coordination.acquired' && e.primitive === 'ordered_lock')
        .map((e) => [e.executionId === results[0].executionId ? 'e1' : 'e2', (e as { nonce?: number }).nonce]);
      expect(nonces).toEqual([
        ['e1', 1],
        ['e1', 1],
        ['e2', 2],
      ]);
      await expect(b.coordinator).toHaveOrderedState(key, { drained: true });
    });

    test('15. an in-process caller arriving out of turn gives its position back without poisoning a strict chain', async () => {
      const key = b.key('ord-15');
      const log: string[] = [];
      const inside = gate();
      const leave = gate();
      const r = reactor('ord-15')
        .input({ who: z.string() })
        .step('seq', {
          args: ($) => ({ who: $.input('who') }),
          orderedLock: { key: () => key, strict: true, wait: 100 },
          run: async ({ who }) => {
            log.push(who);
            if (who === 'e1') {
              inside.open();
              await leave.promise;
            }
            return who;
          },
        })
        .build();
      const { engine } = b.engine();
      const e1 = engine.run(r, { who: 'e1' });
      await inside.promise;
      const e2 = await engine.run(r, { who: 'e2' });
      expect(e2).toHaveFailedAt('seq');
      expect(e2).toHaveContendedAt('seq', key);
      if (e2.status === 'failed')
        expect(e2.error).toMatchObject({
          code: 'contention',
          details: { primitive: 'ordered_lock', key, step: 'seq' },
        });
      leave.open();
      expect(await e1).toHaveCompleted();
      await expect(b.coordinator).toHaveOrderedState(key, { firstFailed: undefined });
      const e3 = await engine.run(r, { who: 'e3' });
      expect(e3).toHaveStepResult('seq', 'e3');
      expect(log).toEqual(['e1', 'e3']);
    });

    test('17. a position gone stale between attempts (reset by an operator) skips the step (ordered_lock_stale); the body ran once', async () => {
      const key = b.key('ord-17');
      let ran = 0;
      let after = 0;
      const r = reactor('ord-17')
        .step('seq', {
          retry: { maxAttempts: 2, backoff: 'fixed', baseDelay: 100 },
          orderedLock: { key: () => key, wait: '2s' },
          run: () => {
            ran++;
            setTimeout(() => void b.coordinator.orderedReset(key), 10);
            throw new Error('transient');
          },
        })
        .step('after', { waitFor: ['seq'], run: () => ++after })
        .build();
      const { engine } = b.engine();
      const result = await engine.run(r, {});
      expect(result).toHaveCompleted();
      expect(result).toHaveSkipped('seq');
      expect(result.trace.some((e) => e.type === 'step.skipped' && e.reason === 'ordered_lock_stale')).toBe(true);
      expect(ran).toBe(1);
      expect(after).toBe(1);
    });
  });

  describe('map elements (R-5)', () => {
    test('each element of a map over a locked step definition takes the lock on its own arguments', async () => {
      const prefix = b.key('map');
      await b.coordinator.lockAcquire({ key: `${prefix}:busy`, holder: OTHER, ttlMs: 30_000 });
      const seen: string[] = [];
      const element = defineStep({
        input: { account: z.string() },
        lock: { key: ({ account }) => `${prefix}:${account}`, wait: 0 },
        run: async ({ account }) =>
          void seen.push(`${account}:${String((await b.coordinator.lockState(`${prefix}:${account}`))?.nesting)}`),
      });
      const r = reactor('map-locked')
        .input({ accounts: z.array(z.string()) })
        .map('each', {
          source: ($) => $.input('accounts'),
          each: element,
          args: (account) => ({ account }),
          maxConcurrency: 1,
        })
        .build();
      const { engine } = b.engine();
      expect((await engine.run(r, { accounts: ['a', 'b'] })).status).toBe('completed');
      expect(seen).toEqual(['a:1', 'b:1']);
      const contended = await engine.run(r, { accounts: ['c', 'busy'] });
      expect(contended.status).toBe('failed');
      if (contended.status !== 'failed') return;
      expect(contended.error.message).toContain(`lock "${prefix}:busy"`);
      expect(seen).toEqual(['a:1', 'b:1', 'c:1']);
      await b.coordinator.lockRelease(`${prefix}:busy`, 'someone-else');
    });
  });

  describe('fixed acquisition order (R-3)', () => {
    test('two steps declaring lock + semaphore in opposite order never deadlock; each takes the lock first', async () => {
      const k = b.key('pair');
      const lockFirst = reactor('lock-first')
        .step('s', {
          lock: { key: () => `${k}:L`, wait: '5s' },
          semaphore: { key: () => `${k}:S`, limit: 1, wait: '5s' },
          run: () => new Promise((r) => setTimeout(r, 1)),
        })
        .build();
      const semaphoreFirst = reactor('semaphore-first')
        .step('s', {
          semaphore: { key: () => `${k}:S`, limit: 1, wait: '5s' },
          lock: { key: () => `${k}:L`, wait: '5s' },
          run: () => new Promise((r) => setTimeout(r, 1)),
        })
        .build();
      const { engine, events } = b.engine();
      const runs = [];
      for (let i = 0; i < 8; i++) runs.push(engine.run(lockFirst, {}), engine.run(semaphoreFirst, {}));
      const results = await Promise.all(runs);
      expect(results.every((x) => x.status === 'completed')).toBe(true);
      for (const id of new Set(results.map((x) => x.executionId))) {
        const acquired = events
          .filter((e) => e.executionId === id && e.type === 'coordination.acquired')
          .map((e) => (e as { primitive: string }).primitive);
        expect(acquired).toEqual(['lock', 'semaphore']);
      }
    });
  });

  describe('scope and lifecycle (R-4)', () => {
    test('the hold is released before the next step starts, after a success and after a throw (the compensation re-takes it)', async () => {
      const key = b.key('scoped');
      const seen: unknown[] = [];
      let throwIt = false;
      const r = reactor('release-early')
        .step('locked', {
          lock: { key: () => key },
          run: async () => {
            seen.push((await b.coordinator.lockState(key))?.nesting);
            if (throwIt) throw new Error('boom');
            return 1;
          },
          compensate: async () => void seen.push(['compensate', (await b.coordinator.lockState(key))?.holder.step]), // re-taken for the compensation (R-17)
        })
        .step('next', {
          waitFor: ['locked'],
          run: async () => void seen.push(['next', await b.coordinator.lockState(key)]),
        })
        .build();
      const { engine } = b.engine();
      expect((await engine.run(r, {})).status).toBe('completed');
      expect(seen).toEqual([1, ['next', undefined]]);
      seen.length = 0;
      throwIt = true;
      expect((await engine.run(r, {})).status).toBe('failed');
      expect(seen).toEqual([1, ['compensate', 'locked']]);
      expect(await b.coordinator.lockState(key)).toBeUndefined();
    });

    test('each retry attempt takes and releases the hold around its own body', async () => {
      const key = b.key('retry');
      const nestings: unknown[] = [];
      let attempts = 0;
      const r = reactor('retry-scoped')
        .step('s', {
          retry: { maxAttempts: 3, backoff: 'fixed', baseDelay: 1 },
          semaphore: { key: () => key, limit: 1 },
          run: async () => {
            nestings.push((await b.coordinator.semaphoreState(key, 1)).holders.length);
            if (++attempts < 3) throw new Error('flaky');
            return attempts;
          },
        })
        .build();
      const { engine, events } = b.engine();
      expect((await engine.run(r, {})).status).toBe('completed');
      expect(nestings).toEqual([1, 1, 1]);
      expect(events.filter((e) => e.type === 'coordination.acquired')).toHaveLength(3);
      expect((await b.coordinator.semaphoreState(key, 1)).holders).toHaveLength(0);
    });

    test('a step declaring nothing takes nothing', async () => {
      const { engine, events } = b.engine();
      const r = reactor('plain')
        .step('s', { run: () => 1 })
        .build();
      expect((await engine.run(r, {})).status).toBe('completed');
      expect(events.some((e) => e.type.startsWith('coordination.'))).toBe(false);
    });
  });

  describe('re-entrancy with the execution (R-11)', () => {
    test('a step keyed like its reactor-level lock proceeds (nesting 2) and the key frees at the outermost release', async () => {
      const key = b.key('same');
      let nesting: number | undefined;
      const r = reactor('reentrant')
        .withLock({ key: () => key, wait: 200 })
        .step('inner', {
          lock: { key: () => key, wait: 0 },
          run: async () => {
            nesting = (await b.coordinator.lockState(key))?.nesting;
          },
        })
        .step('after', { waitFor: ['inner'], run: async () => (await b.coordinator.lockState(key))?.nesting })
        .returns('after');
      const { engine } = b.engine();
      const result = await engine.run(r, {});
      expect(result.status === 'completed' && result.value).toBe(1);
      expect(nesting).toBe(2);
      expect(await b.coordinator.lockState(key)).toBeUndefined();
    });
  });

  describe('declarations (R-1)', () => {
    const base = defineStep({
      name: 'charge',
      input: { accountId: z.string() },
      lock: { key: ({ accountId }) => `account:${accountId}`, wait: '2s' },
      rateLimit: { key: () => 'psp', limit: 5, per: '1s' },
      run: () => 1,
    });

    test('a derived step inherits the declarations and may redeclare them; placement keeps them; coordinationOf lists them', () => {
      const derived = base.extend({
        name: 'charge-eu',
        lock: { key: ({ accountId }) => `eu:${accountId}`, ttl: '1m' },
        semaphore: { key: () => 'psp', limit: 3 },
      });
      expect(base.coordination.map((c) => c.kind)).toEqual(['lock', 'rate_limit']);
      expect(derived.coordination.map((c) => c.kind).sort()).toEqual(['lock', 'rate_limit', 'semaphore']);
      const child = reactor('child')
        .withSemaphore({ key: () => 'c', limit: 2 })
        .step('inner', { period: { key: () => 'p', every: 'hour' }, run: () => 1 })
        .build();
      const r = reactor('shop')
        .input({ accountId: z.string(), items: z.array(z.string()) })
        .withLock({ key: ({ accountId }) => accountId })
        .step('charge', base)
        .step('eu', derived, { retry: { maxAttempts: 2 } })
        .step('plain', { run: () => 1 })
        .map('each', { source: ($) => $.input('items'), each: base, args: (accountId) => ({ accountId }) })
        .compose('sub', child)
        .build();
      const listed = coordinationOf(r).map((d) => [d.reactor, d.step ?? '-', d.kind]);
      expect(listed).toEqual([
        ['shop', '-', 'lock'],
        ['shop', 'charge', 'lock'],
        ['shop', 'charge', 'rate_limit'],
        ['shop', 'eu', 'rate_limit'],
        ['shop', 'eu', 'lock'],
        ['shop', 'eu', 'semaphore'],
        ['shop', 'each[]', 'lock'],
        ['shop', 'each[]', 'rate_limit'],
        ['child', 'sub', 'semaphore'],
        ['child', 'sub.inner', 'period'],
      ]);
      const euLock = coordinationOf(r).find((d) => d.step === 'eu' && d.kind === 'lock')!.spec;
      expect(euLock).toMatchObject({ kind: 'lock', ttlMs: 60_000, waitMs: 10_000 });
      expect((euLock as unknown as { key: (a: { accountId: string }) => string }).key({ accountId: 'x' })).toBe('eu:x');
    });

    test('invalid declarations are refused at definition, naming the reactor and step', () => {
      expect(() => reactor('bad').step('s', { lock: { key: 'nope' as never }, run: () => 1 })).toThrow(DefinitionError);
      expect(() => reactor('bad').step('s', { semaphore: { key: () => 'k', limit: 0 }, run: () => 1 })).toThrow(
        /reactor "bad", step "s": withSemaphore limit/,
      );
      expect(() =>
        defineStep({ name: 'd', input: {}, period: { key: () => 'k', every: 'fortnight' as never }, run: () => 1 }),
      ).toThrow(/step definition "d": withPeriod every/);
      expect(() => base.extend({ semaphore: { key: () => 'k', limit: 1, wait: 'soon' as never } })).toThrow(
        /step definition "charge": withSemaphore wait/,
      );
    });

    test('a placed step definition coordinates on its validated arguments (defaults applied)', async () => {
      const prefix = b.key('defaults');
      const keys: string[] = [];
      const step = defineStep({
        input: { accountId: z.string(), region: z.string().default('eu') },
        lock: { key: ({ accountId, region }) => `${prefix}:${region}:${accountId}` },
        run: async ({ accountId, region }) => {
          keys.push(String((await b.coordinator.lockState(`${prefix}:${region}:${accountId}`))?.key));
        },
      });
      const r = reactor('defaults').input({ accountId: z.string() }).step('s', step).build();
      const { engine } = b.engine();
      expect((await engine.run(r, { accountId: 'a' })).status).toBe('completed');
      expect(keys).toEqual([`${prefix}:eu:a`]);
    });
  });
}
