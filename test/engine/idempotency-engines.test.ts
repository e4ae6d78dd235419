/**
 * One idempotency key sent to two engines at once (two processes over one store): one
 * execution, and the losing engine answers that execution — also when it asks before the
 * winner wrote its first record, which once threw "record is gone" (docs/decisions/056).
 */
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { createRedisRuntime, type RedisRuntime } from '../../src/bullmq.js';
import { createEngine, MemoryCoordinator, MemoryStore, reactor, type Engine, type RunResult } from '../../src/index.js';
import { useRedisServer } from '../support/use-redis-server.js';

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Two engines over one backend, each with its own store instance where the backend has connections. */
interface Pair {
  readonly a: Engine;
  readonly b: Engine;
  close(): Promise<void>;
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** Resolves with the id of the next run `engine` starts. */
function nextStart(engine: Engine): Promise<string> {
  return new Promise((resolve) => {
    const off = engine.subscribe((event) => {
      if (event.type !== 'run.started') return;
      off();
      resolve(event.executionId);
    });
  });
}

/**
 * The winner's first record write is held back: it waits for a lock another run holds until the
 * test opens a gate, so the loser's replay deterministically comes before it.
 */
async function loserBeforeFirstWrite(pair: Pair, name: string): Promise<void> {
  const gate = deferred();
  const entered = deferred();
  let first = true; // the first run holds the lock until the gate opens
  const gated = reactor(name)
    .withLock({ key: () => `${name}-lock`, wait: '30s' })
    .step('s', {
      run: async () => {
        if (first) {
          first = false;
          entered.resolve();
          await gate.promise;
        }
        return 'done';
      },
    })
    .returns('s');
  const holder = pair.a.run(gated, {});
  await entered.promise;
  const started = nextStart(pair.a);
  const winner = pair.a.run(gated, {}, { idempotencyKey: 'k' });
  let loser: RunResult;
  let winnerId: string;
  try {
    winnerId = await started; // claimed, now waiting for the lock: no record written yet
    loser = await pair.b.run(gated, {}, { idempotencyKey: 'k' });
  } finally {
    gate.resolve();
  }
  expect(loser).toMatchObject({ executionId: winnerId, status: 'running', replay: true });
  expect(await winner).toMatchObject({ executionId: winnerId, status: 'completed', replay: false });
  expect((await holder).status).toBe('completed');
  expect(await pair.b.run(gated, {}, { idempotencyKey: 'k' })).toMatchObject({
    executionId: winnerId,
    status: 'completed',
    value: 'done',
    replay: true,
  });
}

/** `rounds` keys, each sent to both engines at once through `call`: one execution per key, every answer names it. */
async function race(
  pair: Pair,
  rounds: number,
  call: (engine: Engine, key: string) => Promise<RunResult>,
): Promise<RunResult[][]> {
  const all: RunResult[][] = [];
  for (let i = 0; i < rounds; i++) {
    const results = await Promise.all([call(pair.a, `k${i}`), call(pair.b, `k${i}`)]);
    expect(new Set(results.map((r) => r.executionId)).size).toBe(1);
    expect(results.filter((r) => !r.replay)).toHaveLength(1);
    all.push(results);
  }
  return all;
}

function describePair(backend: string, open: () => Promise<Pair>): void {
  describe(`one idempotency key, two engines, ${backend}`, () => {
    test("a replay that arrives before the winner wrote any record answers `running` with the winner's id", async () => {
      const pair = await open();
      try {
        await loserBeforeFirstWrite(pair, `gated-${backend}`);
      } finally {
        await pair.close();
      }
    });

    test('50 keys raced by two engines: runs execute once, each loser answers the same execution', async () => {
      const pair = await open();
      try {
        let executions = 0;
        const def = reactor(`race-run-${backend}`)
          .step('s', { run: async () => (await tick(), ++executions) })
          .returns('s');
        const rounds = await race(pair, 50, (engine, key) => engine.run(def, {}, { idempotencyKey: key }));
        expect(executions).toBe(50);
        for (const results of rounds) {
          const winner = results.find((r) => !r.replay)!;
          expect(winner.status).toBe('completed');
          for (const r of results) expect(['running', 'completed']).toContain(r.status);
        }
      } finally {
        await pair.close();
      }
    });
  });
}

describePair('memory', async () => {
  const store = new MemoryStore();
  const coordinator = new MemoryCoordinator();
  return {
    a: createEngine({ store, coordinator }),
    b: createEngine({ store, coordinator }),
    close: async () => undefined,
  };
});

describe('one idempotency key, what a replay cannot answer', () => {
  test('a claim whose execution has no record: the replay rejects with `record_not_found`, not an untyped error', async () => {
    const store = new MemoryStore();
    const def = reactor('ghost')
      .step('s', { run: () => 1 })
      .returns('s');
    // A store that ignores the first record (the port allows it), or a record deleted since.
    expect(await store.claimIdempotency('ghost', 'k', 'elsewhere')).toEqual({ claimed: true });
    await expect(createEngine({ store }).run(def, {}, { idempotencyKey: 'k' })).rejects.toMatchObject({
      code: 'record_not_found',
      details: { executionId: 'elsewhere' },
    });
  });

  test('an input too large to store: every call with the key fails `record_too_large`, none claims it', async () => {
    const store = new MemoryStore({ maxRecordBytes: 1_000 });
    const engines = [createEngine({ store }), createEngine({ store })];
    const def = reactor('huge')
      .input({ blob: z.string() })
      .step('s', { run: () => 1 })
      .returns('s');
    const input = { blob: 'x'.repeat(2_000) };
    const results = await Promise.all(engines.map((engine) => engine.run(def, input, { idempotencyKey: 'k' })));
    for (const result of results)
      expect(result).toMatchObject({
        status: 'failed',
        failedStep: undefined,
        error: { code: 'record_too_large' },
        replay: false,
      });
    expect(await store.claimIdempotency('huge', 'k', 'later')).toEqual({ claimed: true });
  });
});

describe('Redis', () => {
  const server = useRedisServer();
  let n = 0;
  const runtimes = async (): Promise<[RedisRuntime, RedisRuntime]> => {
    const prefix = `idem2-${++n}`;
    return [
      createRedisRuntime({ url: server.url, prefix, reactors: [] }),
      createRedisRuntime({ url: server.url, prefix, reactors: [] }),
    ];
  };
  describePair('redis', async () => {
    const [a, b] = await runtimes();
    return { a: a.engine, b: b.engine, close: async () => void (await Promise.all([a.close(), b.close()])) };
  });

  test('50 keys raced by two engines: starts queue once, both answers are `queued` with one id', async () => {
    const [a, b] = await runtimes();
    try {
      const def = reactor('race-start')
        .step('s', { run: () => 1 })
        .returns('s');
      const rounds = await race({ a: a.engine, b: b.engine, close: async () => undefined }, 50, (engine, key) =>
        engine.start(def, {}, { idempotencyKey: key }),
      );
      for (const results of rounds) expect(results.map((r) => r.status)).toEqual(['queued', 'queued']);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});
