/**
 * P18: an uncontended locked step on PostgreSQL, run sequentially. A one-step reactor whose step
 * declares a lock (`lock:`) runs on `createEngine({ store: new MemoryStore(), coordinator })`
 * with a `PostgresCoordinator` — the memory store keeps the execution record off Postgres, so
 * what reaches Postgres is the lock alone. Anchor, measured in the same run against the same
 * throwaway server and database: the raw floor — the simplest SQL lock, `INSERT … ON CONFLICT DO
 * NOTHING RETURNING` to acquire and an owner-checked `DELETE` to release, on a `pg.Pool` of its
 * own, one pair after another.
 *
 * Figures: throughput of the subject / throughput of the floor (median of per-round ratios;
 * target ≥ 0.6), and round trips per locked run (target 2: acquire, release), counted twice: on
 * the client (every `query` the coordinator's pool is asked for during the subject's chunks) and
 * on the server (`pg_stat_statements` top-level calls in the bench database during those chunks).
 * Diagnostics, same rounds: the same reactor with the lock on the reactor (`withLock`), the same
 * reactor without the lock (engine alone), and the coordinator's acquire + release called
 * directly (no engine). Within each round the contenders alternate in chunks so load from
 * elsewhere on the machine hits them alike.
 *
 * The server runs with the harness's default `fsync=off`: a commit does not wait for a disk
 * flush, so the comparison weighs the statements and the engine rather than the disk (with
 * `fsync` on both sides would wait for the same one flush per write).
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { createEngine, MemoryStore, reactor, type AnyReactorDefinition } from '../src/index.js';
import { migrate, PostgresCoordinator, PostgresNames } from '../src/storage/postgres/index.js';
import { startPostgresServer } from '../test/support/postgres-server.js';
import {
  counterDelta,
  createDatabase,
  durabilitySettings,
  readCounters,
  STATEMENT_SETTINGS,
  type ServerCounters,
} from './support/postgres-stats.js';
import { emit, median, round, type Verdict } from './support/runner.js';

const ROUNDS = 5;
const OPS_PER_ROUND = Number(process.env.P18_OPS ?? 1_000);
const CHUNK_OPS = 250;
const WARMUP_OPS = 300;
const TARGET_RATIO = 0.6;
const TARGET_ROUND_TRIPS = 2;
const TTL_MS = 30_000;
const DATABASE = 'p18';
const LOCK_KEY = 'p18:lock';
const REACTOR_LOCK_KEY = 'p18:reactor-lock';
const DIRECT_KEY = 'p18:direct';
const ANCHOR_KEY = 'p18:anchor';

function stepLocked(): AnyReactorDefinition {
  return reactor('p18-step-locked')
    .step('work', { lock: { key: () => LOCK_KEY, ttl: '30s', wait: 0 }, run: () => 1 })
    .returns('work');
}

function reactorLocked(): AnyReactorDefinition {
  return reactor('p18-reactor-locked')
    .withLock({ key: () => REACTOR_LOCK_KEY, ttl: '30s', wait: 0 })
    .step('work', { run: () => 1 })
    .returns('work');
}

function unlocked(): AnyReactorDefinition {
  return reactor('p18-unlocked')
    .step('work', { run: () => 1 })
    .returns('work');
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** Counts the queries a pool is asked for (client side). */
function countQueries(pool: pg.Pool): { readonly count: () => number } {
  let count = 0;
  const original = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  (pool as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    count++;
    return original(...args);
  };
  return { count: () => count };
}

/** Runs P18 and returns its verdict. */
export async function runP18(): Promise<Verdict> {
  const server = await startPostgresServer({ settings: STATEMENT_SETTINGS });
  const admin = new pg.Client({ connectionString: server.url });
  let coordinator: PostgresCoordinator | undefined;
  let anchor: pg.Pool | undefined;
  try {
    await admin.connect();
    await admin.query('CREATE EXTENSION pg_stat_statements');
    const durability = await durabilitySettings(admin);
    const url = await createDatabase(admin, server.url, DATABASE);
    anchor = new pg.Pool({ connectionString: url });
    await migrate(anchor, new PostgresNames(undefined, 'P18'));
    await anchor.query(
      'CREATE TABLE p18_floor (key text PRIMARY KEY, owner text NOT NULL, expires_at timestamptz NOT NULL)',
    );
    coordinator = new PostgresCoordinator({ connection: url });
    const engine = createEngine({ store: new MemoryStore(), coordinator });
    const floor = anchor;
    const direct = coordinator;

    const run = (definition: AnyReactorDefinition) => async (): Promise<void> => {
      const result = await engine.run(definition, {});
      if (result.status !== 'completed')
        throw new Error(
          `P18 ${definition.name} did not complete: ${result.status}${result.status === 'failed' ? ` (${result.error.message})` : ''}`,
        );
    };
    const anchorOp = async (): Promise<void> => {
      const owner = randomUUID();
      const took = await floor.query(
        "INSERT INTO p18_floor (key, owner, expires_at) VALUES ($1, $2, now() + $3 * interval '1 ms') ON CONFLICT (key) DO NOTHING RETURNING 1",
        [ANCHOR_KEY, owner, TTL_MS],
      );
      if (took.rowCount !== 1) throw new Error('P18 anchor: acquire refused on a free key');
      const freed = await floor.query('DELETE FROM p18_floor WHERE key = $1 AND owner = $2', [ANCHOR_KEY, owner]);
      if (freed.rowCount !== 1) throw new Error('P18 anchor: release found another owner');
    };
    const coordinatorOp = async (): Promise<void> => {
      const owner = randomUUID();
      const acquired = await direct.lockAcquire({
        key: DIRECT_KEY,
        holder: { owner, executionId: owner, reactor: 'p18-direct' },
        ttlMs: TTL_MS,
      });
      if (!acquired.acquired) throw new Error('P18 coordinator: acquire refused on a free key');
      await direct.lockRelease(DIRECT_KEY, owner);
    };
    const contenders = {
      subject: run(stepLocked()),
      anchor: anchorOp,
      reactor_lock: run(reactorLocked()),
      engine_unlocked: run(unlocked()),
      coordinator_direct: coordinatorOp,
    } as const;
    type Name = keyof typeof contenders;
    const names = Object.keys(contenders) as Name[];
    for (let i = 0; i < WARMUP_OPS; i++) for (const name of names) await contenders[name]();

    const queries = countQueries(coordinator.pool);
    const perName = <T>(make: () => T): Record<Name, T> =>
      Object.fromEntries(names.map((n) => [n, make()])) as Record<Name, T>;
    const latencies = perName<number[]>(() => []);
    const opsPerSecond = perName<number[]>(() => []);
    const clientQueries = perName(() => 0);
    const serverStatements = perName(() => 0);
    const writes = perName(() => 0);
    const ratios: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const elapsed = perName(() => 0);
      for (let chunk = 0; chunk < OPS_PER_ROUND / CHUNK_OPS; chunk++) {
        for (const name of names) {
          const op = contenders[name];
          const before: ServerCounters = await readCounters(admin);
          const queriesBefore = queries.count();
          const start = performance.now();
          for (let i = 0; i < CHUNK_OPS; i++) {
            const t0 = performance.now();
            await op();
            latencies[name].push(performance.now() - t0);
          }
          elapsed[name] += performance.now() - start;
          clientQueries[name] += queries.count() - queriesBefore;
          const delta = counterDelta(before, await readCounters(admin), DATABASE);
          serverStatements[name] += delta.statements;
          writes[name] += delta.writeTransactions;
        }
      }
      for (const name of names) opsPerSecond[name].push((OPS_PER_ROUND * 1000) / elapsed[name]);
      emit({
        bench: 'P18',
        figure: 'round',
        round: r + 1,
        ...Object.fromEntries(names.map((n) => [`${n}_per_s`, round(opsPerSecond[n].at(-1)!, 0)])),
      });
      ratios.push(opsPerSecond.subject.at(-1)! / opsPerSecond.anchor.at(-1)!);
    }
    const timed = ROUNDS * OPS_PER_ROUND;
    const perOp = (counts: Record<Name, number>) =>
      Object.fromEntries(names.map((n) => [n, round(counts[n] / timed, 3)])) as Record<Name, number>;
    const clientPerOp = perOp(clientQueries);
    const serverPerOp = perOp(serverStatements);
    emit({
      bench: 'P18',
      figure: 'round_trips_per_op',
      client_queries: clientPerOp,
      server_statements: serverPerOp,
      write_transactions: perOp(writes),
      note: "client_queries: the coordinator pool's query calls (the anchor has its own pool, so 0 here); server_statements: pg_stat_statements top-level calls in the bench database; an op is one locked run, one raw pair, one direct acquire + release",
    });
    const lat = (name: Name) => ({
      p50_ms: round(percentile(latencies[name], 50), 3),
      p99_ms: round(percentile(latencies[name], 99), 3),
    });
    const us = (name: Name): number => 1e6 / median(opsPerSecond[name]);
    emit({
      bench: 'P18',
      figure: 'cost_breakdown_us',
      ...Object.fromEntries(names.map((n) => [n, round(us(n), 1)])),
      coordinator_over_anchor: round(us('coordinator_direct') - us('anchor'), 1),
      lock_glue: round(us('subject') - us('coordinator_direct') - us('engine_unlocked'), 1),
      p50_ms: Object.fromEntries(names.map((n) => [n, lat(n).p50_ms])),
      note: 'µs per op (medians of rounds); coordinator_over_anchor = the product functions vs the raw pair; lock_glue = subject − direct pair − unlocked run',
    });
    const ratio = median(ratios);
    const roundTrips = Math.max(clientPerOp.subject, serverPerOp.subject);
    return {
      bench: 'P18',
      metric: 'postgres_locked_step_vs_raw_sql_floor',
      value: round(ratio, 3),
      target: `>= ${TARGET_RATIO}, ${TARGET_ROUND_TRIPS} round trips per locked run`,
      anchor: {
        raw_pairs_per_s: round(median(opsPerSecond.anchor), 0),
        ...lat('anchor'),
        subject_runs_per_s: round(median(opsPerSecond.subject), 0),
        subject_p50_ms: lat('subject').p50_ms,
        reactor_lock_ratio: round(median(opsPerSecond.reactor_lock) / median(opsPerSecond.anchor), 3),
        fsync: durability.fsync,
        synchronous_commit: durability.synchronous_commit,
        rounds: ROUNDS,
        ops_per_round: OPS_PER_ROUND,
      },
      round_trips_per_run: roundTrips,
      round_trips_target: TARGET_ROUND_TRIPS,
      // The coordinator's background purge (one statement every 1,024 calls) adds 0.002 per run.
      pass: ratio >= TARGET_RATIO && round(roundTrips, 2) <= TARGET_ROUND_TRIPS,
    } as Verdict;
  } finally {
    await coordinator?.close().catch(() => undefined);
    await anchor?.end().catch(() => undefined);
    await admin.end().catch(() => undefined);
    await server.dispose();
  }
}
