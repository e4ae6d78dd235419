/**
 * The Redis restart experiment, shared by `test/faults/redis-restart.test.ts` (small) and
 * `npm run --silent chaos` (large): a throwaway `redis-server` with the given persistence, two
 * worker processes, `executions` starts of a 3-step reactor whose middle step holds a lock per
 * account; `killAfterMs` after the last start was acknowledged the server is SIGKILLed, and
 * restarted on the same port `downMs` later. Then every execution is followed until it ends or
 * `settleMs` pass, and the outcome is counted.
 */
import type { ChildProcess } from 'node:child_process';
import { createRedisRuntime } from '../../../src/bullmq.js';
import { createRedisBackend } from '../../../src/storage/redis/index.js';
import { TERMINAL_STATUSES } from '../../../src/ports/store.js';
import { spawnJsonChild, type JsonChild } from '../../support/json-child.js';
import { startRedisServer, type RedisServerOptions } from '../../support/redis-server.js';
import { chaosReactor, type ChaosBodyLine } from '../fixtures/chaos-reactor.js';

const WORKER = new URL('../fixtures/chaos-worker.ts', import.meta.url).pathname;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** What one run of the experiment is. */
export interface RestartExperiment {
  readonly persistence: NonNullable<RedisServerOptions['persistence']>;
  readonly executions: number;
  readonly accounts?: number;
  readonly stepMs?: number;
  readonly killAfterMs?: number;
  readonly downMs?: number;
  readonly settleMs?: number;
}

/**
 * What `appendfsync everysec` may lose in a crash: the last second, or up to two while a slow fsync
 * makes Redis postpone its writes to the file (Redis writes at the latest 2 s after a postponement).
 */
export const EVERYSEC_WINDOW_MS = 2_000;

/** What it found. */
export interface RestartOutcome {
  readonly persistence: string;
  readonly executions: number;
  /** Executions not finished when the server was killed. */
  readonly inFlight: number;
  readonly completed: number;
  readonly failed: number;
  /** Executions whose record is gone after the restart. */
  readonly lost: number;
  /** Lost executions whose start was acknowledged less than 1 s before the kill. */
  readonly lostRecent: number;
  /** Not finished `settleMs` after the restart. */
  readonly stuck: number;
  /** Entries of `b`'s body beyond the first, over every execution. */
  readonly bodyReruns: number;
  /** Pairs of `b` bodies of one account that were inside at the same time. */
  readonly overlaps: number;
  /** Errors of the failed executions (distinct messages). */
  readonly failures: readonly string[];
  /** A lost execution's `engine.wait` rejected with `execution_not_found` (at once) when checked. */
  readonly waitOfLost: 'execution_not_found' | 'other' | 'none_lost';
  /** The start-up durability report's warnings. */
  readonly warnings: readonly string[];
  /** From the restart until the last execution ended, ms. */
  readonly recoveryMs: number;
}

/** Runs the experiment once. */
export async function runRestartExperiment(spec: RestartExperiment): Promise<RestartOutcome> {
  const {
    persistence,
    executions,
    accounts = 10,
    stepMs = 40,
    killAfterMs = 600,
    downMs = 3_000,
    settleMs = 150_000,
  } = spec;
  const server = await startRedisServer({ persistence });
  const children = new Set<ChildProcess>();
  const prefix = 'chaos';
  const reactor = chaosReactor(() => undefined);
  const runtime = createRedisRuntime({ url: server.url, prefix, reactors: [reactor] });
  const backend = createRedisBackend({ url: server.url, prefix });
  try {
    const report = await runtime.ready();
    const workers: JsonChild[] = [];
    for (let i = 0; i < 2; i++)
      workers.push(spawnJsonChild(WORKER, { url: server.url, prefix, concurrency: 16 }, children));
    await Promise.all(workers.map((w) => w.line((l) => l.ready === true)));

    const acked = new Map<string, number>();
    await Promise.all(
      Array.from({ length: executions }, async (_, i) => {
        const started = await runtime.engine.start(reactor, { account: `acct-${i % accounts}`, stepMs });
        acked.set(started.executionId, Date.now());
      }),
    );
    await sleep(killAfterMs);
    const before = await Promise.all([...acked.keys()].map((id) => backend.store.get(id)));
    const inFlight = before.filter((r) => r !== undefined && !TERMINAL_STATUSES.has(r.status)).length;
    const killedAt = Date.now();
    await server.kill();
    await sleep(downMs);
    await server.restart();
    const restartedAt = Date.now();

    // Follow every execution until it ends, is gone, or the settle time passes.
    const final = new Map<string, string>();
    let lastEnd = restartedAt;
    const deadline = restartedAt + settleMs;
    for (;;) {
      const open = [...acked.keys()].filter((id) => !final.has(id));
      if (open.length === 0 || Date.now() > deadline) break;
      for (const id of open) {
        const record = await backend.store.get(id).catch(() => 'unreadable' as const);
        if (record === 'unreadable') continue;
        if (record === undefined) final.set(id, 'lost');
        else if (TERMINAL_STATUSES.has(record.status)) {
          final.set(id, record.status);
          lastEnd = Date.now();
        }
      }
      await sleep(200);
    }
    const failures = new Set<string>();
    for (const [id, status] of final) {
      if (status !== 'failed') continue;
      const record = await backend.store.get(id);
      failures.add(record?.error?.message ?? '(no error)');
    }
    const lostIds = [...final].filter(([, s]) => s === 'lost').map(([id]) => id);
    let waitOfLost: RestartOutcome['waitOfLost'] = 'none_lost';
    if (lostIds[0] !== undefined) {
      waitOfLost = await runtime.engine.wait(lostIds[0], { timeoutMs: 60_000 }).then(
        () => 'other' as const,
        (error: unknown) =>
          (error as { code?: string }).code === 'execution_not_found' ? 'execution_not_found' : 'other',
      );
    }
    const lines = workers.flatMap((w) => w.lines<ChaosBodyLine>((l) => l.body === 'enter' || l.body === 'exit'));
    const outcome: RestartOutcome = {
      persistence,
      executions,
      inFlight,
      completed: [...final.values()].filter((s) => s === 'completed').length,
      failed: [...final.values()].filter((s) => s === 'failed').length,
      lost: lostIds.length,
      lostRecent: lostIds.filter((id) => (acked.get(id) ?? 0) > killedAt - EVERYSEC_WINDOW_MS).length,
      stuck: executions - final.size,
      bodyReruns: bodyReruns(lines),
      overlaps: overlaps(lines),
      failures: [...failures],
      waitOfLost,
      warnings: report.warnings,
      recoveryMs: lastEnd - restartedAt,
    };
    for (const w of workers) w.child.kill('SIGTERM');
    await Promise.all(workers.map((w) => Promise.race([w.exited, sleep(10_000)])));
    return outcome;
  } finally {
    for (const child of children) child.kill('SIGKILL');
    await runtime.close().catch(() => undefined);
    await backend.close().catch(() => undefined);
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
  for (const l of [...lines].sort((x, y) => x.at - y.at)) {
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
