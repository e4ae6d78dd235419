/**
 * What `postgres-workers.test.ts` and its worker processes (`pg-worker-process.ts`) share: the
 * config, the reactors (same names and keys on both sides) and the guard, kept in the same
 * PostgreSQL database as the runtime's tables (schema `public`, apart from ts-reactor's).
 *
 * The guard: each step body adds one to its key's `inside` on entry (the value after the
 * addition is how many bodies of that key were inside at once, this one included) and takes it
 * away on exit; the largest value ever seen per key is kept in `peak`, and every entry is logged.
 */
import type { Pool } from 'pg';
import { z } from 'zod';
import { reactor } from '../../src/index.js';

/** The JSON argument of a worker process. */
export interface PgWorkerConfig {
  readonly url: string;
  readonly concurrency: number;
  /** Tables of the guard (distinct per test). */
  readonly guard: string;
}

/** A guarded section: `key` is the guard key, `executionId` the run inside. */
export type PgSection = (key: string, executionId: string) => Promise<void>;

/** The semaphore's limit. */
export const SEMAPHORE_LIMIT = 3;

/** The reactors every process registers: a step under a lock per key, and a step under a semaphore of 3. */
export function buildPgReactors(section: PgSection) {
  const locked = reactor('pg-mp-lock')
    .input({ key: z.string() })
    .step('section', {
      lock: { key: ({ key }) => `pg-mp:lock:${key}`, ttl: '30s', wait: '10m' },
      run: ({ key }, ctx) => section(`lock:${key}`, ctx.executionId),
    })
    .background('all')
    .returns('section');
  const limited = reactor('pg-mp-sem')
    .input({ key: z.string() })
    .step('section', {
      semaphore: { key: ({ key }) => `pg-mp:sem:${key}`, limit: SEMAPHORE_LIMIT, ttl: '30s', wait: '10m' },
      run: ({ key }, ctx) => section(`sem:${key}`, ctx.executionId),
    })
    .background('all')
    .returns('section');
  return { locked, limited };
}

/** The guard's tables, created by the test before the workers start. */
export async function createGuard(pool: Pool, guard: string): Promise<void> {
  await pool.query(
    `CREATE TABLE IF NOT EXISTS public.${guard} (key text PRIMARY KEY, inside int NOT NULL, peak int NOT NULL, total int NOT NULL)`,
  );
  await pool.query(
    `CREATE TABLE IF NOT EXISTS public.${guard}_log (seq bigserial PRIMARY KEY, key text NOT NULL, pid int NOT NULL, execution_id text NOT NULL, inside int NOT NULL)`,
  );
}

/** Enters the section of `key`: returns how many were inside, this one included. */
export async function guardEnter(pool: Pool, guard: string, key: string, executionId: string): Promise<number> {
  const { rows } = await pool.query<{ inside: number }>(
    `WITH g AS (
       INSERT INTO public.${guard} AS g (key, inside, peak, total) VALUES ($1, 1, 1, 1)
       ON CONFLICT (key) DO UPDATE SET inside = g.inside + 1, peak = greatest(g.peak, g.inside + 1), total = g.total + 1
       RETURNING inside)
     INSERT INTO public.${guard}_log (key, pid, execution_id, inside) SELECT $1, $2, $3, inside FROM g RETURNING inside`,
    [key, process.pid, executionId],
  );
  return rows[0]!.inside;
}

/** Leaves the section of `key`. */
export async function guardLeave(pool: Pool, guard: string, key: string): Promise<void> {
  await pool.query(`UPDATE public.${guard} SET inside = inside - 1 WHERE key = $1`, [key]);
}
