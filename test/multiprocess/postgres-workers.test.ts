/**
 * Four worker processes on one throwaway PostgreSQL and no Redis, each a `createPostgresRuntime`
 * worker (`pg-worker-process.ts`, concurrency 8). The test starts 2,000 executions of a reactor
 * whose step takes a lock of one of 10 keys, then 500 of a reactor whose step takes a slot of one
 * semaphore of 3, and waits until every one has ended. Each step body counts itself in and out of
 * a guard row per key (`pg-protocol.ts`), so the guard's peak is how many bodies of one key were
 * ever inside at once, observed by the bodies themselves.
 *
 * Causal: the test waits for the executions to end (no time bound short of the test's own), and
 * asserts only counts.
 */
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresRuntime, type PostgresRuntime } from '../../src/postgres.js';
import { postgresBackendFactory } from '../../src/queue/bullmq-postgres.js';
import { spawnJsonChild, type JsonChild } from '../support/json-child.js';
import { usePostgresServer } from '../support/use-postgres-server.js';
import { buildPgReactors, createGuard, SEMAPHORE_LIMIT } from './pg-protocol.js';

const WORKER = fileURLToPath(new URL('./pg-worker-process.ts', import.meta.url));
const PROCESSES = 4;
const EXECUTIONS = Number(process.env.PG_MP_EXECUTIONS ?? 2_000);
/**
 * Executions of the semaphore test: all on one key of limit 3, so they pass three at a time and
 * most of them park and are woken one by one (about 0.1 s per turn on a 2-core machine: 2,000
 * take minutes). `PG_MP_SEM_EXECUTIONS=2000` runs the full count.
 */
const SEM_EXECUTIONS = Number(process.env.PG_MP_SEM_EXECUTIONS ?? 500);
const KEYS = 10;
const CONCURRENCY = 8;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(postgresBackendFactory() === undefined)(
  `${PROCESSES} PostgreSQL worker processes × ${EXECUTIONS} executions`,
  () => {
    const server = usePostgresServer({ settings: { max_connections: '300' } });
    const children = new Set<ChildProcess>();
    let producer: PostgresRuntime;
    let pool: pg.Pool;
    let workers: JsonChild[] = [];
    const reactors = buildPgReactors(async () => undefined); // the producer never runs a body

    beforeAll(async () => {
      producer = createPostgresRuntime({
        connection: server.url,
        migrate: true,
        reactors: Object.values(reactors),
      });
      await producer.ready();
      pool = new pg.Pool({ connectionString: server.url, max: 4 });
      await createGuard(pool, 'mp_guard');
      workers = Array.from({ length: PROCESSES }, () =>
        spawnJsonChild(WORKER, { url: server.url, concurrency: CONCURRENCY, guard: 'mp_guard' }, children),
      );
      await Promise.all(workers.map((w) => w.line((l) => l.ready === true)));
    }, 300_000);

    afterAll(async () => {
      for (const w of workers) w.child.kill('SIGTERM');
      await Promise.all(workers.map((w) => Promise.race([w.exited, sleep(30_000)])));
      for (const child of children) child.kill('SIGKILL');
      await producer?.close();
      await pool?.end();
    }, 120_000);

    /** Starts `total` executions of `definition`, 50 at a time, over `keys` keys; then waits until all ended. */
    async function runAll(
      definition: typeof reactors.locked | typeof reactors.limited,
      keys: number,
      total: number,
    ): Promise<Map<string, number>> {
      const ids: string[] = [];
      for (let i = 0; i < total; i += 50) {
        const batch = await Promise.all(
          Array.from({ length: Math.min(50, total - i) }, (_, j) =>
            producer.engine.start(definition, { key: `k${(i + j) % keys}` }),
          ),
        );
        ids.push(...batch.map((s) => s.executionId));
      }
      expect(new Set(ids).size).toBe(total);
      for (;;) {
        const { rows } = await pool.query<{ status: string; n: string }>(
          'SELECT status, count(*) AS n FROM ts_reactor.executions WHERE reactor = $1 GROUP BY status',
          [definition.name],
        );
        const counts = new Map(rows.map((r) => [r.status, Number(r.n)]));
        if ((counts.get('completed') ?? 0) + (counts.get('failed') ?? 0) >= total) return counts;
        await sleep(500);
      }
    }

    async function guardOf(prefix: string) {
      const { rows } = await pool.query<{ key: string; inside: number; peak: number; total: number }>(
        'SELECT key, inside, peak, total FROM public.mp_guard WHERE key LIKE $1 ORDER BY key',
        [`${prefix}:%`],
      );
      const { rows: log } = await pool.query<{ executions: string; pids: string }>(
        'SELECT count(DISTINCT execution_id) AS executions, count(DISTINCT pid) AS pids FROM public.mp_guard_log WHERE key LIKE $1',
        [`${prefix}:%`],
      );
      return { rows, executions: Number(log[0]!.executions), pids: Number(log[0]!.pids) };
    }

    it('a step lock over 10 keys: never two holders of one key inside at once, every execution completes', async () => {
      const startedAt = Date.now();
      const counts = await runAll(reactors.locked, KEYS, EXECUTIONS);
      const guard = await guardOf('lock');
      console.info(
        `[postgres-workers] lock: ${EXECUTIONS} executions in ${Date.now() - startedAt} ms; peaks ${guard.rows.map((r) => r.peak).join(',')}; bodies ${guard.rows.reduce((s, r) => s + r.total, 0)}`,
      );
      expect(Object.fromEntries(counts)).toEqual({ completed: EXECUTIONS });
      expect(guard.rows).toHaveLength(KEYS);
      expect(guard.rows.filter((r) => r.peak !== 1)).toEqual([]); // 0 overlapping holders
      expect(guard.rows.filter((r) => r.inside !== 0)).toEqual([]);
      expect(guard.executions).toBe(EXECUTIONS); // every execution's body ran
      expect(guard.pids).toBe(PROCESSES); // and every process took part
      const { rows: held } = await pool.query(
        "SELECT key FROM ts_reactor.coord_locks WHERE key LIKE 'pg-mp:lock:%' AND owner IS NOT NULL AND expires_at > clock_timestamp()",
      );
      expect(held).toEqual([]);
    }, 900_000);

    it(`a step semaphore of ${SEMAPHORE_LIMIT}: never more than ${SEMAPHORE_LIMIT} inside, every execution completes`, async () => {
      const startedAt = Date.now();
      const counts = await runAll(reactors.limited, 1, SEM_EXECUTIONS);
      const guard = await guardOf('sem');
      console.info(
        `[postgres-workers] semaphore: ${SEM_EXECUTIONS} executions in ${Date.now() - startedAt} ms; peak ${guard.rows.map((r) => r.peak).join(',')}`,
      );
      expect(Object.fromEntries(counts)).toEqual({ completed: SEM_EXECUTIONS });
      expect(guard.rows).toHaveLength(1);
      expect(guard.rows[0]!.peak).toBeLessThanOrEqual(SEMAPHORE_LIMIT);
      expect(guard.rows[0]!.inside).toBe(0);
      expect(guard.executions).toBe(SEM_EXECUTIONS);
    }, 900_000);
  },
);
