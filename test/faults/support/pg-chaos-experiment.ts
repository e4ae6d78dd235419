/**
 * A fault experiment on PostgreSQL, shared by `postgres-restart.test.ts` and
 * `postgres-terminate.test.ts`: a throwaway server, two worker processes
 * (`fixtures/pg-fault-worker.ts`, the chaos reactor `a → b → c` with `b` under a lock per
 * account), `executions` starts; once `faultAfter` executions have completed, `fault` is applied
 * to the server; then every execution is followed until it ends or `settleMs` pass, and the
 * outcome is counted from the database and from the bodies' entry/exit lines.
 */
import type { ChildProcess } from 'node:child_process';
import pg from 'pg';
import { createPostgresRuntime } from '../../../src/postgres.js';
import { spawnJsonChild, type JsonChild } from '../../support/json-child.js';
import { startPostgresServer, type PostgresServerHandle } from '../../support/postgres-server.js';
import { chaosReactor, type ChaosBodyLine } from '../fixtures/chaos-reactor.js';

const WORKER = new URL('../fixtures/pg-fault-worker.ts', import.meta.url).pathname;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** What one run of the experiment is. */
export interface PgChaosExperiment {
  readonly executions: number;
  /** Apply the fault once this many executions completed (a point mid-run, whatever the machine's speed). */
  readonly faultAfter: number;
  /** The fault, applied to the server; `observer` is a pool of the test's own. */
  readonly fault: (server: PostgresServerHandle, observer: pg.Pool) => Promise<void>;
  readonly accounts?: number;
  readonly stepMs?: number;
  /** The workers' liveness lease, stall lock and sweep interval, ms. */
  readonly ttlMs?: number;
  readonly settleMs?: number;
}

/** What it found. */
export interface PgChaosOutcome {
  /** Executions not finished when the fault was applied. */
  readonly inFlight: number;
  readonly completed: number;
  readonly failed: number;
  /** Executions whose record is gone. */
  readonly lost: number;
  /** Not finished `settleMs` after the fault. */
  readonly stuck: number;
  /** Pairs of `b` bodies of one account that were inside at the same time. */
  readonly overlaps: number;
  /** Entries of `b`'s body beyond the first, over every execution. */
  readonly bodyReruns: number;
  /** Errors of the failed executions (distinct messages). */
  readonly failures: readonly string[];
  /** From the fault until the last execution ended, ms (a figure, never asserted). */
  readonly recoveryMs: number;
}

/** Runs the experiment once. */
export async function runPgChaosExperiment(spec: PgChaosExperiment): Promise<PgChaosOutcome> {
  const { executions, faultAfter, fault, accounts = 10, stepMs = 50, ttlMs = 5_000, settleMs = 300_000 } = spec;
  const server = await startPostgresServer();
  const children = new Set<ChildProcess>();
  const reactor = chaosReactor(() => undefined);
  const producer = createPostgresRuntime({ connection: server.url, migrate: true, reactors: [reactor] });
  const observer = new pg.Pool({ connectionString: server.url, max: 2 });
  observer.on('error', () => undefined); // an idle connection cut by the fault
  try {
    await producer.ready();
    const workers: JsonChild[] = [];
    for (let i = 0; i < 2; i++)
      workers.push(spawnJsonChild(WORKER, { url: server.url, reactor: 'chaos', concurrency: 16, ttlMs }, children));
    await Promise.all(workers.map((w) => w.line((l) => l.ready === true)));

    const ids: string[] = [];
    for (let i = 0; i < executions; i += 20) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(20, executions - i) }, (_, j) =>
          producer.engine.start(reactor, { account: `acct-${(i + j) % accounts}`, stepMs }),
        ),
      );
      ids.push(...batch.map((s) => s.executionId));
    }
    const statuses = async (): Promise<Map<string, string>> => {
      const { rows } = await observer.query<{ id: string; status: string }>(
        'SELECT id, status FROM ts_reactor.executions WHERE id = ANY($1)',
        [ids],
      );
      return new Map(rows.map((r) => [r.id, r.status]));
    };
    const ended = (s: string | undefined): boolean => s === 'completed' || s === 'failed';
    for (;;) {
      const now = await statuses();
      if ([...now.values()].filter((s) => s === 'completed').length >= faultAfter) break;
      await sleep(20);
    }
    const before = await statuses();
    const inFlight = ids.filter((id) => !ended(before.get(id))).length;
    await fault(server, observer);
    const faultedAt = Date.now();

    let final = new Map<string, string>();
    let lastEnd = faultedAt;
    for (const deadline = faultedAt + settleMs; Date.now() < deadline; await sleep(250)) {
      const now = await statuses().catch(() => undefined);
      if (now === undefined) continue;
      const done = ids.filter((id) => ended(now.get(id))).length;
      if (done > ids.filter((id) => ended(final.get(id))).length) lastEnd = Date.now();
      final = now;
      if (done === ids.length) break;
    }
    const failures = new Set<string>();
    for (const id of ids) {
      if (final.get(id) !== 'failed') continue;
      const record = await producer.engine.result(id).catch(() => undefined);
      failures.add(record?.status === 'failed' ? record.error.message : '(no error)');
    }
    const lines = workers.flatMap((w) => w.lines<ChaosBodyLine>((l) => l.body === 'enter' || l.body === 'exit'));
    const count = (s: string): number => ids.filter((id) => final.get(id) === s).length;
    const outcome: PgChaosOutcome = {
      inFlight,
      completed: count('completed'),
      failed: count('failed'),
      lost: ids.filter((id) => !final.has(id)).length,
      stuck: ids.filter((id) => final.has(id) && !ended(final.get(id))).length,
      overlaps: overlaps(lines),
      bodyReruns: bodyReruns(lines),
      failures: [...failures],
      recoveryMs: lastEnd - faultedAt,
    };
    for (const w of workers) w.child.kill('SIGTERM');
    await Promise.all(workers.map((w) => Promise.race([w.exited, sleep(30_000)])));
    return outcome;
  } finally {
    for (const child of children) child.kill('SIGKILL');
    await producer.close().catch(() => undefined);
    await observer.end().catch(() => undefined);
    await server.dispose();
  }
}

/** Entries of a body beyond the first per execution. */
function bodyReruns(lines: readonly ChaosBodyLine[]): number {
  const entries = new Map<string, number>();
  for (const l of lines) if (l.body === 'enter') entries.set(l.executionId, (entries.get(l.executionId) ?? 0) + 1);
  return [...entries.values()].reduce((sum, n) => sum + n - 1, 0);
}

/** Pairs of bodies of one account inside at once (from enter/exit wall-clock times on one machine). */
function overlaps(lines: readonly ChaosBodyLine[]): number {
  const spans = new Map<string, { enter: number; exit: number }[]>();
  const open = new Map<string, ChaosBodyLine>();
  for (const l of [...lines].sort((x, y) => x.at - y.at || (x.body === 'exit' ? -1 : 1))) {
    const id = `${l.pid}:${l.executionId}`;
    if (l.body === 'enter') open.set(id, l);
    else {
      const enter = open.get(id);
      open.delete(id);
      if (!enter) continue;
      const list = spans.get(l.account) ?? [];
      list.push({ enter: enter.at, exit: l.at });
      spans.set(l.account, list);
    }
  }
  let count = 0;
  for (const list of spans.values()) {
    list.sort((x, y) => x.enter - y.enter);
    let reach = -Infinity;
    for (const span of list) {
      if (span.enter < reach) count++;
      reach = Math.max(reach, span.exit);
    }
  }
  return count;
}
