/**
 * Property-based parity of the coordinators (quality bar R6): random interleavings of lock,
 * semaphore and rate-limit operations by three owners give the same observable outcomes
 *
 *  1. on the memory coordinator (manual clock) and a small reference model, with time advances
 *     that cross TTLs and windows, including exact boundaries;
 *  2. on the memory coordinator and the Redis coordinator, without time advances;
 *  3. on the memory coordinator and the Redis coordinator, with a few advances far past short
 *     TTLs (real sleeps on Redis; the short TTLs are long enough that the operations between two
 *     advances never cross them);
 *  4. and 5. as 2. and 3., on the memory coordinator and the PostgreSQL coordinator.
 *
 * Outcomes compared: acquired / refused (and by whom), nesting, holder counts, released,
 * extended, rate admitted / refused with its count, and the final state of every key. Remaining
 * times and tokens are not compared (their values are backend-specific); tokens are checked to
 * strictly increase per key on each backend.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Coordinator } from '../../src/ports/coordinator.js';
import { MemoryCoordinator } from '../../src/storage/memory/coordinator.js';
import { PostgresCoordinator } from '../../src/storage/postgres/coordinator.js';
import { migrate } from '../../src/storage/postgres/migrate.js';
import { createRedisBackend, type RedisBackend } from '../../src/storage/redis/index.js';
import { ManualClock } from '../../src/testing/clock.js';
import { startPostgresServer, type PostgresServerHandle } from '../support/postgres-server.js';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';
import { realPause } from './coordinator-contract.js';

const OWNERS = ['a', 'b', 'c'] as const;
const LOCK_KEYS = ['k1', 'k2'] as const;
const SEM_LIMIT = 2;
const RATE_LIMIT = 3;

type Owner = (typeof OWNERS)[number];
type LockKey = (typeof LOCK_KEYS)[number];

type Op =
  | { readonly op: 'lockAcquire'; readonly owner: Owner; readonly key: LockKey; readonly ttl: number }
  | { readonly op: 'lockRelease'; readonly owner: Owner; readonly key: LockKey }
  | { readonly op: 'lockExtend'; readonly owner: Owner; readonly key: LockKey; readonly ttl: number }
  | { readonly op: 'semAcquire'; readonly owner: Owner; readonly ttl: number }
  | { readonly op: 'semRelease'; readonly owner: Owner }
  | { readonly op: 'semExtend'; readonly owner: Owner; readonly ttl: number }
  | { readonly op: 'rateTake'; readonly id: string }
  | { readonly op: 'advance'; readonly ms: number };

/** What a caller can observe of one operation (or of the final state). */
type Outcome = readonly (string | number | boolean | undefined)[];

function opsArbitrary(options: {
  ttl: fc.Arbitrary<number>;
  advance: fc.Arbitrary<number> | undefined;
  maxLength: number;
}): fc.Arbitrary<Op[]> {
  const owner = fc.constantFrom(...OWNERS);
  const key = fc.constantFrom(...LOCK_KEYS);
  const { ttl } = options;
  // Weighted towards acquisitions and rate takes, so limits are reached often.
  const ops: fc.WeightedArbitrary<Op>[] = [
    { weight: 3, arbitrary: fc.record({ op: fc.constant('lockAcquire' as const), owner, key, ttl }) },
    { weight: 2, arbitrary: fc.record({ op: fc.constant('lockRelease' as const), owner, key }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('lockExtend' as const), owner, key, ttl }) },
    { weight: 3, arbitrary: fc.record({ op: fc.constant('semAcquire' as const), owner, ttl }) },
    { weight: 2, arbitrary: fc.record({ op: fc.constant('semRelease' as const), owner }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('semExtend' as const), owner, ttl }) },
    // A small id space: repeated ids exercise "same id charges once".
    {
      weight: 3,
      arbitrary: fc.record({
        op: fc.constant('rateTake' as const),
        id: fc.constantFrom('r1', 'r2', 'r3', 'r4', 'r5', 'r6'),
      }),
    },
  ];
  if (options.advance !== undefined)
    ops.push({ weight: 2, arbitrary: fc.record({ op: fc.constant('advance' as const), ms: options.advance }) });
  return fc.array(fc.oneof(...ops), { minLength: 1, maxLength: options.maxLength });
}

/** Applies `ops` to a coordinator (keys under `prefix`), returning every outcome then the final state. */
async function run(
  c: Coordinator,
  ops: readonly Op[],
  prefix: string,
  ratePeriodMs: number,
  advance: (ms: number) => Promise<void>,
): Promise<Outcome[]> {
  const k = (name: string): string => `${prefix}:${name}`;
  const rateWindow = { key: k('rate'), limit: RATE_LIMIT, periodMs: ratePeriodMs };
  const lastToken = new Map<string, bigint>();
  const out: Outcome[] = [];
  for (const op of ops) {
    switch (op.op) {
      case 'lockAcquire': {
        const r = await c.lockAcquire({ key: k(op.key), holder: { owner: op.owner }, ttlMs: op.ttl });
        if (r.acquired && r.nesting === 1) {
          const token = BigInt(r.token);
          const previous = lastToken.get(op.key);
          if (previous !== undefined && token <= previous)
            throw new Error(`fencing token of ${op.key} did not increase: ${previous} then ${token}`);
          lastToken.set(op.key, token);
        }
        out.push(r.acquired ? ['lockAcquire', true, r.nesting] : ['lockAcquire', false, r.holder?.owner]);
        break;
      }
      case 'lockRelease': {
        const r = await c.lockRelease(k(op.key), op.owner);
        out.push(['lockRelease', r.released, r.released ? r.nesting : undefined]);
        break;
      }
      case 'lockExtend':
        out.push(['lockExtend', await c.lockExtend(k(op.key), op.owner, op.ttl)]);
        break;
      case 'semAcquire': {
        const r = await c.semaphoreAcquire({
          key: k('sem'),
          holder: { owner: op.owner },
          limit: SEM_LIMIT,
          ttlMs: op.ttl,
        });
        out.push(r.acquired ? ['semAcquire', true, r.nesting, r.holders] : ['semAcquire', false, r.holders, r.limit]);
        break;
      }
      case 'semRelease': {
        const r = await c.semaphoreRelease(k('sem'), op.owner);
        out.push(['semRelease', r.released, r.released ? r.nesting : undefined]);
        break;
      }
      case 'semExtend':
        out.push(['semExtend', await c.semaphoreExtend(k('sem'), op.owner, op.ttl)]);
        break;
      case 'rateTake': {
        const r = await c.rateTake({ windows: [rateWindow], id: op.id });
        out.push(r.allowed ? ['rateTake', true] : ['rateTake', false, r.count]);
        break;
      }
      case 'advance':
        await advance(op.ms);
        break;
    }
  }
  for (const key of LOCK_KEYS) {
    const state = await c.lockState(k(key));
    out.push(['lockState', key, state?.holder.owner, state?.nesting]);
  }
  const sem = await c.semaphoreState(k('sem'), SEM_LIMIT);
  const holders = [...sem.holders].sort((x, y) => x.holder.owner.localeCompare(y.holder.owner));
  out.push(['semState', ...holders.flatMap((h) => [h.holder.owner, h.nesting])]);
  out.push(['rateState', (await c.rateState(rateWindow.key, ratePeriodMs)).count]);
  return out;
}

/**
 * The reference model: the port's semantics written as plainly as possible. A hold, lease or
 * start taken at `t` with length `d` is gone from `t + d` on.
 */
class Model {
  now = 0;
  readonly #locks = new Map<string, { owner: string; nesting: number; until: number }>();
  readonly #leases = new Map<string, { nesting: number; until: number }>();
  #starts: { id: string; at: number }[] = [];
  readonly ratePeriodMs: number;

  constructor(ratePeriodMs: number) {
    this.ratePeriodMs = ratePeriodMs;
  }

  apply(op: Op): Outcome | undefined {
    this.#expire();
    switch (op.op) {
      case 'lockAcquire': {
        const hold = this.#locks.get(op.key);
        if (hold === undefined) {
          this.#locks.set(op.key, { owner: op.owner, nesting: 1, until: this.now + op.ttl });
          return ['lockAcquire', true, 1];
        }
        if (hold.owner !== op.owner) return ['lockAcquire', false, hold.owner];
        hold.nesting += 1;
        hold.until = Math.max(hold.until, this.now + op.ttl);
        return ['lockAcquire', true, hold.nesting];
      }
      case 'lockRelease': {
        const hold = this.#locks.get(op.key);
        if (hold?.owner !== op.owner) return ['lockRelease', false, undefined];
        hold.nesting -= 1;
        if (hold.nesting === 0) this.#locks.delete(op.key);
        return ['lockRelease', true, hold.nesting];
      }
      case 'lockExtend': {
        const hold = this.#locks.get(op.key);
        if (hold?.owner !== op.owner) return ['lockExtend', false];
        hold.until = this.now + op.ttl;
        return ['lockExtend', true];
      }
      case 'semAcquire': {
        const lease = this.#leases.get(op.owner);
        if (lease !== undefined) {
          lease.nesting += 1;
          lease.until = Math.max(lease.until, this.now + op.ttl);
          return ['semAcquire', true, lease.nesting, this.#leases.size];
        }
        if (this.#leases.size >= SEM_LIMIT) return ['semAcquire', false, this.#leases.size, SEM_LIMIT];
        this.#leases.set(op.owner, { nesting: 1, until: this.now + op.ttl });
        return ['semAcquire', true, 1, this.#leases.size];
      }
      case 'semRelease': {
        const lease = this.#leases.get(op.owner);
        if (lease === undefined) return ['semRelease', false, undefined];
        lease.nesting -= 1;
        if (lease.nesting === 0) this.#leases.delete(op.owner);
        return ['semRelease', true, lease.nesting];
      }
      case 'semExtend': {
        const lease = this.#leases.get(op.owner);
        if (lease === undefined) return ['semExtend', false];
        lease.until = this.now + op.ttl;
        return ['semExtend', true];
      }
      case 'rateTake': {
        if (this.#starts.some((s) => s.id === op.id)) return ['rateTake', true];
        if (this.#starts.length >= RATE_LIMIT) return ['rateTake', false, this.#starts.length];
        this.#starts.push({ id: op.id, at: this.now });
        return ['rateTake', true];
      }
      case 'advance':
        this.now += op.ms;
        return undefined;
    }
  }

  finalState(): Outcome[] {
    this.#expire();
    const out: Outcome[] = LOCK_KEYS.map((key) => [
      'lockState',
      key,
      this.#locks.get(key)?.owner,
      this.#locks.get(key)?.nesting,
    ]);
    const holders = [...this.#leases.entries()].sort(([x], [y]) => x.localeCompare(y));
    out.push(['semState', ...holders.flatMap(([owner, lease]) => [owner, lease.nesting])]);
    out.push(['rateState', this.#starts.length]);
    return out;
  }

  #expire(): void {
    for (const [key, hold] of this.#locks) if (hold.until <= this.now) this.#locks.delete(key);
    for (const [owner, lease] of this.#leases) if (lease.until <= this.now) this.#leases.delete(owner);
    this.#starts = this.#starts.filter((s) => s.at + this.ratePeriodMs > this.now);
  }
}

function memory(): { coordinator: MemoryCoordinator; advance: (ms: number) => Promise<void> } {
  const clock = new ManualClock({ autoAdvance: false });
  return {
    coordinator: new MemoryCoordinator({ clock }),
    advance: async (ms) => clock.advance(ms),
  };
}

describe('coordinator parity (property-based)', () => {
  let server: RedisServerHandle;
  let redis: RedisBackend;

  beforeAll(async () => {
    server = await startRedisServer();
    redis = createRedisBackend({ url: server.url, prefix: 'prop' });
  });
  afterAll(async () => {
    await redis.close();
    await server.dispose();
  });

  it('memory matches the reference model, with expiry at and across every boundary', async () => {
    const ratePeriodMs = 500;
    await fc.assert(
      fc.asyncProperty(
        opsArbitrary({
          ttl: fc.integer({ min: 1, max: 1000 }),
          // Small and large steps, plus exact multiples of 100 that land on deadlines.
          advance: fc.oneof(fc.integer({ min: 0, max: 1200 }), fc.constantFrom(100, 250, 500)),
          maxLength: 60,
        }),
        async (ops) => {
          const model = new Model(ratePeriodMs);
          const expected = ops.map((op) => model.apply(op)).filter((outcome) => outcome !== undefined);
          expected.push(...model.finalState());
          const m = memory();
          const actual = await run(m.coordinator, ops, 'm', ratePeriodMs, m.advance);
          expect(actual).toEqual(expected);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('memory and Redis agree on every outcome without time passing', async () => {
    const ratePeriodMs = 60_000;
    await fc.assert(
      fc.asyncProperty(
        opsArbitrary({ ttl: fc.integer({ min: 30_000, max: 60_000 }), advance: undefined, maxLength: 40 }),
        async (ops) => {
          const m = memory();
          const prefix = `nt:${crypto.randomUUID()}`;
          const fromMemory = await run(m.coordinator, ops, prefix, ratePeriodMs, m.advance);
          const fromRedis = await run(redis.coordinator, ops, prefix, ratePeriodMs, () => Promise.resolve());
          expect(fromRedis).toEqual(fromMemory);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('memory and Redis agree on every outcome across expiries', async () => {
    // Short TTLs (400 ms) expire at every advance (500 ms); long ones (60 s) never do. The
    // operations between two advances take far less than 400 ms, so real time on Redis cannot
    // move an outcome across a deadline.
    const ratePeriodMs = 400;
    const sequence = fc
      .tuple(
        opsArbitrary({ ttl: fc.constantFrom(400, 60_000), advance: undefined, maxLength: 12 }),
        opsArbitrary({ ttl: fc.constantFrom(400, 60_000), advance: undefined, maxLength: 12 }),
        opsArbitrary({ ttl: fc.constantFrom(400, 60_000), advance: undefined, maxLength: 12 }),
      )
      .map(([first, second, third]): Op[] => [
        ...first,
        { op: 'advance', ms: 500 },
        ...second,
        { op: 'advance', ms: 500 },
        ...third,
      ]);
    await fc.assert(
      fc.asyncProperty(sequence, async (ops) => {
        const m = memory();
        const prefix = `tm:${crypto.randomUUID()}`;
        const fromMemory = await run(m.coordinator, ops, prefix, ratePeriodMs, m.advance);
        const fromRedis = await run(redis.coordinator, ops, prefix, ratePeriodMs, (ms) => realPause(ms + 20));
        expect(fromRedis).toEqual(fromMemory);
      }),
      // No shrinking: each run sleeps for real, and the first counterexample is readable as is.
      { numRuns: 8, endOnFailure: true },
    );
  });
});

describe('coordinator parity with PostgreSQL (property-based)', () => {
  let server: PostgresServerHandle;
  let postgres: PostgresCoordinator;

  beforeAll(async () => {
    server = await startPostgresServer();
    postgres = new PostgresCoordinator({ connection: server.url, schema: 'prop' });
    await migrate(postgres.pool, postgres.names);
  });
  afterAll(async () => {
    await postgres.close();
    await server.dispose();
  });

  it('memory and PostgreSQL agree on every outcome without time passing', async () => {
    const ratePeriodMs = 60_000;
    await fc.assert(
      fc.asyncProperty(
        opsArbitrary({ ttl: fc.integer({ min: 30_000, max: 60_000 }), advance: undefined, maxLength: 40 }),
        async (ops) => {
          const m = memory();
          const prefix = `nt:${crypto.randomUUID()}`;
          const fromMemory = await run(m.coordinator, ops, prefix, ratePeriodMs, m.advance);
          const fromPostgres = await run(postgres, ops, prefix, ratePeriodMs, () => Promise.resolve());
          expect(fromPostgres).toEqual(fromMemory);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('memory and PostgreSQL agree on every outcome across expiries', async () => {
    // As for Redis: short TTLs (400 ms) expire at every advance (500 ms), long ones never do.
    const ratePeriodMs = 400;
    const sequence = fc
      .tuple(
        opsArbitrary({ ttl: fc.constantFrom(400, 60_000), advance: undefined, maxLength: 12 }),
        opsArbitrary({ ttl: fc.constantFrom(400, 60_000), advance: undefined, maxLength: 12 }),
        opsArbitrary({ ttl: fc.constantFrom(400, 60_000), advance: undefined, maxLength: 12 }),
      )
      .map(([first, second, third]): Op[] => [
        ...first,
        { op: 'advance', ms: 500 },
        ...second,
        { op: 'advance', ms: 500 },
        ...third,
      ]);
    await fc.assert(
      fc.asyncProperty(sequence, async (ops) => {
        const m = memory();
        const prefix = `tm:${crypto.randomUUID()}`;
        const fromMemory = await run(m.coordinator, ops, prefix, ratePeriodMs, m.advance);
        const fromPostgres = await run(postgres, ops, prefix, ratePeriodMs, (ms) => realPause(ms + 20));
        expect(fromPostgres).toEqual(fromMemory);
      }),
      { numRuns: 8, endOnFailure: true },
    );
  });
});
