/**
 * The bad-input matrix, continued (test/bad-input.test.ts has cases 1–35): the newer surfaces —
 * start times, `startMany`, a keyed start too large to store, schedules, migrations. Every case
 * gets a typed error before anything is written, on memory and on a real `redis-server`: the
 * records, jobs and schedules (and on Redis every key) are counted before and after.
 */
import { Redis } from 'ioredis';
import { afterAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { createRedisRuntime } from '../src/bullmq.js';
import {
  createEmbeddedEngine,
  DefinitionError,
  MemoryStore,
  reactor,
  RecordTooLargeError,
  ScheduleInvalidError,
  StartOptionsError,
  ValidationError,
  errorFromJSON,
  errorToJSON,
  type Engine,
} from '../src/index.js';
import type { QueueInspector } from '../src/ports/queue-inspector.js';
import { MemorySchedules, type Schedules } from '../src/schedules/index.js';
import { ManualClock } from '../src/testing/clock.js';
import { untilStatus } from './background/helpers.js';
import { useRedisServer } from './support/use-redis-server.js';

const T0 = Date.parse('2026-06-01T00:00:00Z');
const DAY = 86_400_000;
const server = useRedisServer();

/** An engine on one backend, with what it has written counted. */
interface Target {
  readonly engine: Engine;
  readonly schedules: Schedules;
  /** Records, jobs, schedules and (Redis) keys: equal before and after a refused call. */
  footprint(): Promise<unknown>;
  /** Resolves once the execution started by the warm-up is settled (the embedded pool runs it; Redis has no worker here). */
  settle(executionId: string): Promise<void>;
  close(): Promise<void>;
}

const closers: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => undefined);
});

async function jobsOf(inspector: QueueInspector): Promise<Readonly<Record<string, number>>> {
  return (await inspector.inspectQueue({ limit: 0 })).counts;
}

function memoryTarget(): Target {
  const clock = new ManualClock({ start: T0, autoAdvance: false });
  const store = new MemoryStore({ clock });
  const engine = createEmbeddedEngine({ clock, store, schedules: new MemorySchedules() });
  closers.push(() => engine.close());
  return {
    engine,
    schedules: engine.schedules,
    footprint: async () => ({
      records: (await store.list({ limit: 1_000 })).records.map((r) => r.id).sort(),
      jobs: await jobsOf(engine.queueInspector),
      schedules: (await engine.schedules.list()).map((s) => s.id),
    }),
    settle: async (executionId) => void (await untilStatus(engine, executionId, 'completed')),
    close: () => engine.close(),
  };
}

let prefixes = 0;
function redisTarget(): Target {
  const prefix = `bis${++prefixes}`;
  const runtime = createRedisRuntime({ url: server.url, prefix, reactors: [] });
  const redis = new Redis(server.url);
  const close = async (): Promise<void> => {
    await runtime.close();
    redis.disconnect();
  };
  closers.push(close);
  return {
    engine: runtime.engine,
    schedules: runtime.schedules,
    footprint: async () => ({
      keys: await redis.dbsize(),
      jobs: await jobsOf(runtime.queueInspector),
      schedules: (await runtime.schedules.list()).map((s) => s.id),
    }),
    settle: async () => undefined,
    close,
  };
}

const targets = [
  ['memory', memoryTarget],
  ['redis', redisTarget],
] as const;

/** Runs `refused` (each call must reject with a typed error) and checks that nothing was written. */
async function expectNothingWritten(target: Target, refused: () => Promise<void>): Promise<void> {
  // Warm up: the backend's own keys (the queue's meta, the schedules' queue) exist before counting.
  const warm = reactor('bis-warm')
    .step('s', { run: () => 1 })
    .build();
  await target.settle((await target.engine.start(warm, {})).executionId);
  await target.schedules.upsert({ id: 'bis-warm', reactor: warm, every: '1h' });
  const before = await target.footprint();
  await refused();
  expect(await target.footprint()).toEqual(before);
}

/** The rejection of `call`, checked to be a typed error that survives a JSON round trip. */
async function refusal(call: () => Promise<unknown>, what: string): Promise<Error & { code: string; details: object }> {
  const error = await call().then(
    (value) => new Error(`${what}: resolved ${JSON.stringify(value)?.slice(0, 200)}`),
    (e: unknown) => e as Error,
  );
  expect(error, what).toHaveProperty('code');
  expect(error, what).not.toBeInstanceOf(TypeError);
  expect(error, what).not.toBeInstanceOf(RangeError);
  expect(errorFromJSON(JSON.parse(JSON.stringify(errorToJSON(error)))), what).toBeInstanceOf(error.constructor);
  return error as Error & { code: string; details: object };
}

const nest = (levels: number): Record<string, unknown> => {
  const root: Record<string, unknown> = {};
  let at = root;
  for (let i = 1; i < levels; i++) at = at.x = {};
  return root;
};

const item = reactor('bis-item')
  .input({ n: z.number(), blob: z.any().optional() })
  .step('s', { run: () => 1 })
  .build();

describe.each(targets)('bad input matrix, newer surfaces (%s)', (_name, make) => {
  test('36. a delay, at or debounce window past the time bounds (1e300, MAX_VALUE, 1e9 days, over 365 days without allowFarFuture, past 8.64e15): start_options_invalid naming the option; nothing written or enqueued', async () => {
    const target = make();
    const now = Date.now(); // the Redis runtime's clock; the memory one is T0 (a year of slack either way)
    const cases: [object, string][] = [
      [{ delay: 1e300 }, 'delay'],
      [{ delay: Number.MAX_VALUE }, 'delay'],
      [{ delay: 2 ** 53 + 2 }, 'delay'],
      [{ delay: '1000000000d' }, 'delay'],
      [{ delay: '400d' }, 'delay'],
      [{ at: 1e300 }, 'at'],
      [{ at: 8.64e15 + 1 }, 'at'],
      [{ at: 8.64e15 + 1, allowFarFuture: true }, 'at'],
      [{ at: Math.max(now, T0) + 400 * DAY }, 'at'],
      [{ delay: 1e300, allowFarFuture: true }, 'delay'],
      [{ debounce: { key: 'k', window: 1e300 } }, 'debounce.window'],
      [{ debounce: { key: 'k', window: '400d' } }, 'debounce.window'],
      [{ delay: '1d', allowFarFuture: 'yes' }, 'allowFarFuture'],
    ];
    await expectNothingWritten(target, async () => {
      for (const [options, option] of cases) {
        const error = await refusal(() => target.engine.start(item, { n: 1 }, options), JSON.stringify(options));
        expect(error).toBeInstanceOf(StartOptionsError);
        expect(error.details).toMatchObject({ option });
        const many = await refusal(
          () =>
            target.engine.startMany([
              { reactor: item, input: { n: 1 } },
              { reactor: item, input: { n: 2 }, options },
            ]),
          `startMany ${JSON.stringify(options)}`,
        );
        expect(many).toBeInstanceOf(StartOptionsError);
        expect(many.details).toMatchObject({ option, entry: 1 });
      }
    });
    // Within the bounds: a year ahead, and with allowFarFuture the latest time a Date holds.
    const year = await target.engine.start(item, { n: 1 }, { delay: '365d' });
    expect(year.status).toBe('queued');
    const far = await target.engine.start(item, { n: 1 }, { at: 8.64e15, allowFarFuture: true });
    expect(far).toMatchObject({ status: 'queued', startAt: 8.64e15 });
    expect(await target.engine.result(far.executionId)).toMatchObject({ status: 'queued', startAt: 8.64e15 });
    const window = await target.engine.start(
      item,
      { n: 1 },
      { debounce: { key: 'bis-36', window: '100000d' }, allowFarFuture: true },
    );
    expect(window.status).toBe('queued');
    await target.close();
  });

  test('37. startMany: one entry of 10 MB is record_too_large naming the entry, one 10,000 levels deep fails only its own entry; no other entry is written before the refusal', async () => {
    const target = make();
    await expectNothingWritten(target, async () => {
      const error = await refusal(
        () =>
          target.engine.startMany([
            { reactor: item, input: { n: 1 } },
            { reactor: item, input: { n: 2 }, options: { idempotencyKey: 'bis-37' } },
            { reactor: item, input: { n: 3, blob: 'x'.repeat(10 * 1024 * 1024) } },
            { reactor: item, input: { n: 4 } },
          ]),
        'a 10 MB entry',
      );
      expect(error).toBeInstanceOf(RecordTooLargeError);
      expect(error.details).toMatchObject({ entry: 2, limit: 512 * 1024 });
    });
    // The key of the refused call was not claimed: a start with it is not a replay.
    expect((await target.engine.start(item, { n: 2 }, { idempotencyKey: 'bis-37' })).replay).toBe(false);
    // Too deep: that entry's own `failed` result (nothing written for it); the others start, with their ids.
    const before = (await target.footprint()) as { jobs: Record<string, number> };
    const [ok, deep, last] = await target.engine.startMany([
      { reactor: item, input: { n: 1 } },
      { reactor: item, input: { n: 2, blob: nest(10_000) } },
      { reactor: item, input: { n: 3 } },
    ]);
    expect(deep.status === 'failed' && deep.error).toBeInstanceOf(ValidationError);
    expect(deep.status === 'failed' && deep.error.message).toContain('nests more than 100 levels deep');
    expect(await target.engine.result(deep.executionId)).toBeUndefined();
    expect([ok.status, last.status]).toEqual(['queued', 'queued']);
    expect(await target.engine.result(ok.executionId)).toMatchObject({ status: 'queued' });
    const after = (await target.footprint()) as { jobs: Record<string, number> };
    const total = (counts: Record<string, number>): number => Object.values(counts).reduce((a, b) => a + b, 0);
    expect(total(after.jobs) - total(before.jobs)).toBe(2);
    await target.close();
  });

  test('38. startMany with a null entry, a reactor given by name or none, options that are not an object, or entries that are not an array: start_options_invalid naming the entry; nothing written', async () => {
    const target = make();
    const good = { reactor: item, input: { n: 1 } };
    await expectNothingWritten(target, async () => {
      for (const [entries, option, entry] of [
        [[good, null], 'entry', 1],
        [[good, { reactor: 'bis-item', input: { n: 1 } }], 'reactor', 1],
        [[good, { input: { n: 1 } }], 'reactor', 1],
        [[{ reactor: item, input: { n: 1 }, options: null }, good], 'options', 0],
        [[good, 42], 'entry', 1],
        [{ reactor: item }, 'entries', undefined],
      ] as const) {
        const error = await refusal(() => target.engine.startMany(entries as never), JSON.stringify(entries));
        expect(error).toBeInstanceOf(StartOptionsError);
        expect(error.details).toEqual(expect.objectContaining({ option, ...(entry === undefined ? {} : { entry }) }));
      }
      // `start` refuses a reactor given by name, or none, the same way.
      for (const given of ['bis-item', undefined, null])
        expect(
          await refusal(() => target.engine.start(given as never, { n: 1 } as never), `start(${String(given)})`),
        ).toMatchObject({ code: 'start_options_invalid', details: { option: 'reactor' } });
    });
    await target.close();
  });

  test('39. start with a 10 MB input and an idempotency key rejects record_too_large, as without a key; the key is not claimed', async () => {
    const target = make();
    const big = { n: 1, blob: 'x'.repeat(10 * 1024 * 1024) };
    await expectNothingWritten(target, async () => {
      for (const options of [{ idempotencyKey: 'bis-39' }, {}]) {
        const error = await refusal(() => target.engine.start(item, big, options), JSON.stringify(options));
        expect(error).toBeInstanceOf(RecordTooLargeError);
      }
    });
    expect((await target.engine.start(item, { n: 1 }, { idempotencyKey: 'bis-39' })).replay).toBe(false);
    await target.close();
  });

  test('40. a schedule with every of 1e300, 2^53 + 2 or over 365 days, a startAt or endAt past 8.64e15 or negative, an input of 10 MB, 10,000 levels deep or against the contract: schedule_invalid naming the field; nothing stored', async () => {
    const target = make();
    const cases: [object, string][] = [
      [{ every: 1e300 }, 'every'],
      [{ every: 2 ** 53 + 2 }, 'every'],
      [{ every: '1000000000d' }, 'every'],
      [{ every: '366d' }, 'every'],
      [{ every: '1h', startAt: 1e300 }, 'startAt'],
      [{ every: '1h', endAt: 8.64e15 + 1 }, 'endAt'],
      [{ every: '1h', startAt: -1 }, 'startAt'],
      [{ cron: { pattern: '0 2 * * *' }, endAt: 1e300 }, 'endAt'],
      [{ every: '1h', input: { n: 1, blob: 'x'.repeat(10 * 1024 * 1024) } }, 'input'],
      [{ every: '1h', input: { n: 1, blob: nest(10_000) } }, 'input'],
      [{ every: '1h', input: { n: 'one' } }, 'input'],
    ];
    await expectNothingWritten(target, async () => {
      for (const [options, field] of cases) {
        const error = await refusal(
          () => target.schedules.upsert({ id: 'bis-40', reactor: item, ...options }),
          `${field} case ${cases.findIndex((c) => c[0] === options)}`,
        );
        expect(error).toBeInstanceOf(ScheduleInvalidError);
        expect(error.details).toMatchObject({ field });
      }
    });
    await expect(target.schedules.nextRuns('bis-40')).rejects.toMatchObject({ code: 'schedule_not_found' });
    // At the bounds: every 365 days, an input that fits.
    const info = await target.schedules.upsert({ id: 'bis-40', reactor: item, every: '365d', input: { n: 1 } });
    expect(info.nextRuns.every((d) => Number.isFinite(d.getTime()))).toBe(true);
    await target.close();
  });
});

describe('bad input matrix, migrations', () => {
  const v1 = reactor('bis-checkout', { version: '1' })
    .step('reserve', { run: () => 'r' })
    .step('charge', { waitFor: ['reserve'], run: () => 'c' })
    .build();
  const expectRefused = (build: () => unknown, text: string): void => {
    expect(build).toThrow(DefinitionError);
    expect(build).toThrow(text);
  };

  test('41. a rename to a name that is not a step (a typo), two steps renamed to one, or one earlier definition listed twice: definition_invalid when built, naming the rename', () => {
    const v2 = (migrateFrom: unknown) => () =>
      reactor('bis-checkout', { version: '2', migrateFrom: migrateFrom as never })
        .step('reserveStock', { run: () => 'r' })
        .step('charge', { waitFor: ['reserveStock'], run: () => 'c' })
        .build();
    expectRefused(
      v2([{ version: '1', renamed: { reserve: 'reserveStok' } }]),
      'migrateFrom version "1" renames "reserve" to "reserveStok", which is not a step of this definition (steps: reserveStock, charge)',
    );
    expectRefused(
      v2([{ version: '1', renamed: { reserve: 'reserveStock', charge: 'reserveStock' } }]),
      'renames both "reserve" and "charge" to "reserveStock"',
    );
    expectRefused(v2([{ version: '1' }, { version: '1', renamed: {} }]), 'migrateFrom lists version "1" twice');
    expectRefused(v2([{ version: '1', renamed: 'reserve' }]), 'renamed must be an object');
    const error = (() => {
      try {
        v2([{ version: '1', renamed: { reserve: 'reserveStok' } }])();
      } catch (e) {
        return e as DefinitionError;
      }
      return undefined;
    })();
    expect(error).toMatchObject({
      code: 'definition_invalid',
      details: { reactor: 'bis-checkout', step: 'reserveStok' },
    });
    expect(errorFromJSON(JSON.parse(JSON.stringify(errorToJSON(error))))).toBeInstanceOf(DefinitionError);
  });

  test('42. a rename of a step the earlier definition does not have, or onto a step it keeps, or naming it twice (version and fingerprint): definition_invalid when both are registered; nothing registered', () => {
    const cases: [unknown, string][] = [
      [
        { version: '1', renamed: { reserv: 'reserveStock' } },
        'renames "reserv", which is not a step of that definition',
      ],
      [
        { version: '1', renamed: { reserve: 'charge' } },
        'renames "reserve" onto "charge", a step that definition has too',
      ],
      [
        [{ version: '1' }, { fingerprint: v1.fingerprint }],
        'names one earlier definition twice (version "1" and fingerprint',
      ],
    ];
    for (const [migration, text] of cases) {
      const v2 = reactor('bis-checkout', {
        version: '2',
        migrateFrom: (Array.isArray(migration) ? migration : [migration]) as never,
      })
        .step('reserveStock', { run: () => 'r' })
        .step('charge', { waitFor: ['reserveStock'], run: () => 'c' })
        .build();
      // Registered together (the worker's reactors), or one after the other, in either order.
      expectRefused(() => createEmbeddedEngine({ reactors: [v1, v2] }), text);
      const later = createEmbeddedEngine({ reactors: [v2] });
      closers.push(() => later.close());
      expectRefused(() => later.register(v1), text);
      const earlier = createEmbeddedEngine({ reactors: [v1] });
      closers.push(() => earlier.close());
      expectRefused(() => earlier.register(v2), text);
      // Nothing registered: the engine still knows only its own version.
      expect(() => earlier.register(v1)).not.toThrow();
    }
    // A swap is fine: each step's record moves to the other's name.
    const swapped = reactor('bis-checkout', {
      version: '3',
      migrateFrom: [{ version: '1', renamed: { reserve: 'charge', charge: 'reserve' } }],
    })
      .step('charge', { run: () => 'c' })
      .step('reserve', { waitFor: ['charge'], run: () => 'r' })
      .build();
    const ok = createEmbeddedEngine({ reactors: [v1, swapped] });
    closers.push(() => ok.close());
  });
});
