/**
 * P17: worker throughput on PostgreSQL. An uncontended 3-step reactor processed by two worker
 * processes on `createPostgresRuntime` vs raw BullMQ 6 on its PostgreSQL backend
 * (`createPostgresBackend`): a `Queue` + `Worker`s with an empty processor, two processes, the
 * same concurrency, the same server, the same run (rounds alternate). The server is a throwaway
 * one with `fsync` on (Postgres' durable defaults). Each side has a database of its own on that
 * server, so that `pg_stat_database` counts each side's commits apart.
 *
 * Each round enqueues its N executions / jobs with no worker running, then starts the workers
 * and times from the first delivery to the last completion, across both processes (their clocks
 * mapped onto this one's). Figure: executions/s ÷ jobs/s (median of per-round ratios); target ≥ 0.30.
 *
 * Per execution / job, both sides: write transactions (transaction ids taken: each one flushes
 * the WAL at commit), WAL bytes and statements (`pg_stat_statements`) per round, enqueueing
 * included; and commits (`pg_stat_database.xact_commit`, read-only ones included) over the whole
 * run, read once every connection has closed. The raw jobs get ts-reactor's own job options, so
 * both sides pay the same BullMQ bookkeeping. This file imports `bullmq` for the anchor only.
 *
 * @module
 */
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { Queue } from 'bullmq';
import { createPostgresRuntime, type PostgresRuntime } from '../src/postgres.js';
import { postgresDatastore } from '../src/queue/bullmq-postgres.js';
import { INFRA_ATTEMPTS, INFRA_BACKOFF_MS } from '../src/queue/policy.js';
import { bullmqKeepJobs, DEFAULT_JOB_RETENTION } from '../src/queue/job-retention.js';
import { startPostgresServer } from '../test/support/postgres-server.js';
import { spawnChildren, type BenchChild } from './support/children.js';
import { threeSteps, type P17ChildConfig } from './support/p17-shared.js';
import {
  committedWhenClosed,
  counterDelta,
  createDatabase,
  durabilitySettings,
  readCounters,
  STATEMENT_SETTINGS,
  topStatements,
} from './support/postgres-stats.js';
import { emit, median, round, type Verdict } from './support/runner.js';

const PROCESSES = 2;
const CONCURRENCY_PER_PROCESS = 8;
const SUBJECT_RUNS = Number(process.env.P17_RUNS ?? 600);
const RAW_JOBS = Number(process.env.P17_JOBS ?? 1_200);
const WARMUP_ROUNDS = 1;
const ROUNDS = Number(process.env.P17_ROUNDS ?? 5);
const TARGET = 0.3;
const RAW_QUEUE = 'p17-raw';
const ENQUEUE_BATCH = 100;
const ROUND_TIMEOUT_MS = 90_000;
const SUBJECT_DB = 'p17_reactor';
const RAW_DB = 'p17_bullmq';
const CHILD = fileURLToPath(new URL('./support/p17-worker.ts', import.meta.url));

interface Timed {
  readonly perSecond: number;
  readonly wallMs: number;
}

/** Sends `go`, waits for `total` completions over `children`, sends `stop`; times first delivery → last completion. */
async function processRound(
  children: readonly BenchChild[],
  round: number,
  total: number,
  what: string,
): Promise<Timed> {
  let done = 0;
  let first = Infinity;
  let last = 0;
  const stops: (() => void)[] = [];
  const finished = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`P17: ${what} round ${round}: ${done}/${total} within ${ROUND_TIMEOUT_MS} ms`)),
      ROUND_TIMEOUT_MS,
    );
    for (const child of children)
      stops.push(
        child.listen((line) => {
          if (line.progress !== round) return false;
          done += line.done as number;
          if ((line.first as number) > 0) first = Math.min(first, child.toParent(line.first as number));
          last = Math.max(last, child.toParent(line.last as number));
          if (done >= total) {
            clearTimeout(timer);
            resolve();
          }
          return true;
        }),
      );
  });
  for (const child of children) child.send(`go ${round}`);
  let failure: unknown;
  try {
    await finished;
  } catch (error) {
    failure = error;
  }
  for (const stop of stops) stop();
  const stopped = children.map((c) => c.next((l) => l.stopped === round, ROUND_TIMEOUT_MS));
  for (const child of children) child.send(`stop ${round}`);
  const lines = await Promise.all(stopped);
  if (failure !== undefined) throw failure;
  for (const line of lines)
    if (line.error !== undefined) throw new Error(`P17: a ${what} worker did not stop: ${JSON.stringify(line.error)}`);
  if (done !== total) throw new Error(`P17: ${what} round ${round}: ${done} completions for ${total}`);
  return { perSecond: (total * 1000) / (last - first), wallMs: last - first };
}

/** Ends the children's stdin (they close their connections and exit) and waits for them to go. */
async function dismiss(children: readonly BenchChild[]): Promise<void> {
  await Promise.all(
    children.map(
      (c) =>
        new Promise<void>((resolve) => {
          if (c.process.exitCode !== null || c.process.signalCode !== null) return resolve();
          const timer = setTimeout(() => void c.kill().then(resolve), 15_000);
          c.process.once('exit', () => {
            clearTimeout(timer);
            resolve();
          });
          c.process.stdin?.end();
        }),
    ),
  );
}

/** Runs P17 and returns its verdict. */
export async function runP17(): Promise<Verdict> {
  const server = await startPostgresServer({
    durable: true,
    settings: { ...STATEMENT_SETTINGS, max_connections: '200' },
  });
  const admin = new pg.Client({ connectionString: server.url });
  const children: BenchChild[] = [];
  let runtime: PostgresRuntime | undefined;
  let queue: Queue | undefined;
  try {
    await admin.connect();
    await admin.query('CREATE EXTENSION pg_stat_statements');
    const durability = await durabilitySettings(admin);
    emit({
      bench: 'P17',
      figure: 'server',
      note: 'throwaway PostgreSQL, fsync on (durable defaults): every write commit waits for its WAL flush',
      ...durability,
    });
    const subjectUrl = await createDatabase(admin, server.url, SUBJECT_DB);
    const rawUrl = await createDatabase(admin, server.url, RAW_DB);
    const definition = threeSteps();
    runtime = createPostgresRuntime({ connection: subjectUrl, migrate: true, reactors: [definition] });
    await runtime.ready();
    queue = postgresDatastore({ url: rawUrl }, 'P17').queue(RAW_QUEUE);
    queue.on('error', () => undefined);
    await queue.waitUntilReady();

    const config = (mode: P17ChildConfig['mode'], url: string): P17ChildConfig[] =>
      Array.from({ length: PROCESSES }, () => ({ mode, url, concurrency: CONCURRENCY_PER_PROCESS, queue: RAW_QUEUE }));
    const subjects = await spawnChildren(CHILD, config('reactor', subjectUrl));
    children.push(...subjects);
    const raws = await spawnChildren(CHILD, config('raw', rawUrl));
    children.push(...raws);

    const jobOptions = {
      attempts: INFRA_ATTEMPTS,
      backoff: { type: 'exponential', delay: INFRA_BACKOFF_MS },
      removeOnComplete: bullmqKeepJobs(DEFAULT_JOB_RETENTION.completed),
    };
    const subjectRound = async (r: number): Promise<Timed> => {
      for (let i = 0; i < SUBJECT_RUNS; i += ENQUEUE_BATCH) {
        const batch = await Promise.all(
          Array.from({ length: Math.min(ENQUEUE_BATCH, SUBJECT_RUNS - i) }, () =>
            runtime!.engine.start(definition, {}),
          ),
        );
        if (batch.some((s) => s.status !== 'queued')) throw new Error('P17: a start was not queued');
      }
      return processRound(subjects, r, SUBJECT_RUNS, 'reactor');
    };
    const rawRound = async (r: number): Promise<Timed> => {
      for (let i = 0; i < RAW_JOBS; i += ENQUEUE_BATCH)
        await queue!.addBulk(
          Array.from({ length: Math.min(ENQUEUE_BATCH, RAW_JOBS - i) }, () => ({
            name: 'empty',
            data: {},
            opts: jobOptions,
          })),
        );
      return processRound(raws, r, RAW_JOBS, 'raw BullMQ');
    };

    const subject: number[] = [];
    const raw: number[] = [];
    const ratios: number[] = [];
    const perExecution = { writeTransactions: [] as number[], walBytes: [] as number[], statements: [] as number[] };
    const perJob = { writeTransactions: [] as number[], walBytes: [] as number[], statements: [] as number[] };
    let totalSubject = 0;
    let totalRaw = 0;
    for (let r = 0; r < WARMUP_ROUNDS + ROUNDS; r++) {
      if (r === WARMUP_ROUNDS) await admin.query('SELECT pg_stat_statements_reset()');
      const c0 = await readCounters(admin);
      const s = await subjectRound(r);
      const c1 = await readCounters(admin);
      const q = await rawRound(r);
      const c2 = await readCounters(admin);
      totalSubject += SUBJECT_RUNS;
      totalRaw += RAW_JOBS;
      if (r < WARMUP_ROUNDS) continue;
      const ds = counterDelta(c0, c1, SUBJECT_DB);
      const dq = counterDelta(c1, c2, RAW_DB);
      perExecution.writeTransactions.push(ds.writeTransactions / SUBJECT_RUNS);
      perExecution.walBytes.push(ds.walBytes / SUBJECT_RUNS);
      perExecution.statements.push(ds.statements / SUBJECT_RUNS);
      perJob.writeTransactions.push(dq.writeTransactions / RAW_JOBS);
      perJob.walBytes.push(dq.walBytes / RAW_JOBS);
      perJob.statements.push(dq.statements / RAW_JOBS);
      subject.push(s.perSecond);
      raw.push(q.perSecond);
      ratios.push(s.perSecond / q.perSecond);
      emit({
        bench: 'P17',
        figure: 'round',
        round: r - WARMUP_ROUNDS + 1,
        executions_per_s: round(s.perSecond, 0),
        raw_jobs_per_s: round(q.perSecond, 0),
        ratio: round(s.perSecond / q.perSecond, 3),
        write_transactions_per_execution: round(ds.writeTransactions / SUBJECT_RUNS, 2),
        write_transactions_per_raw_job: round(dq.writeTransactions / RAW_JOBS, 2),
      });
    }
    const topSubject = await topStatements(admin, SUBJECT_DB, 25);
    const topRaw = await topStatements(admin, RAW_DB);
    const measured = ROUNDS * SUBJECT_RUNS;
    const measuredRaw = ROUNDS * RAW_JOBS;
    emit({
      bench: 'P17',
      figure: 'statements_per_execution',
      note: 'pg_stat_statements over the measured rounds, enqueueing included, most called first (calls per execution / per raw job)',
      reactor: topSubject.map((t) => ({ per_execution: round(t.calls / measured, 2), query: t.query })),
      raw_bullmq: topRaw.map((t) => ({ per_job: round(t.calls / measuredRaw, 2), query: t.query })),
    });

    // Commits: every connection closed first, so each backend has reported its counts.
    await dismiss(children);
    await runtime.close();
    runtime = undefined;
    await queue.close();
    queue = undefined;
    const subjectCommits = await committedWhenClosed(admin, SUBJECT_DB);
    const rawCommits = await committedWhenClosed(admin, RAW_DB);
    const commits = {
      reactor_per_execution: round(subjectCommits / totalSubject, 2),
      raw_bullmq_per_job: round(rawCommits / totalRaw, 2),
    };
    const perRun = {
      reactor: {
        commits: commits.reactor_per_execution,
        write_transactions: round(median(perExecution.writeTransactions), 2),
        statements: round(median(perExecution.statements), 2),
        wal_bytes: round(median(perExecution.walBytes), 0),
      },
      raw_bullmq: {
        commits: commits.raw_bullmq_per_job,
        write_transactions: round(median(perJob.writeTransactions), 2),
        statements: round(median(perJob.statements), 2),
        wal_bytes: round(median(perJob.walBytes), 0),
      },
    };
    emit({
      bench: 'P17',
      figure: 'cost_per_execution',
      note: 'commits: pg_stat_database.xact_commit over the whole run (setup and warmup included) / executions; the rest: medians of the measured rounds, enqueueing included',
      ...perRun,
    });
    const ratio = median(ratios);
    return {
      bench: 'P17',
      metric: 'postgres_worker_throughput_vs_raw_bullmq',
      value: round(ratio, 3),
      target: `>= ${TARGET}`,
      anchor: {
        raw_bullmq_jobs_per_s: round(median(raw), 0),
        executions_per_s: round(median(subject), 0),
        commits_per_execution: commits.reactor_per_execution,
        commits_per_raw_job: commits.raw_bullmq_per_job,
        write_transactions_per_execution: perRun.reactor.write_transactions,
        write_transactions_per_raw_job: perRun.raw_bullmq.write_transactions,
        fsync: durability.fsync,
        synchronous_commit: durability.synchronous_commit,
        processes: PROCESSES,
        concurrency_per_process: CONCURRENCY_PER_PROCESS,
        executions_per_round: SUBJECT_RUNS,
        raw_jobs_per_round: RAW_JOBS,
        rounds: ROUNDS,
        steps: 3,
      },
      pass: ratio >= TARGET,
    };
  } finally {
    await Promise.all(children.map((c) => c.kill()));
    await runtime?.close().catch(() => undefined);
    await queue?.close().catch(() => undefined);
    await admin.end().catch(() => undefined);
    await server.dispose();
  }
}
