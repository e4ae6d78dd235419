/**
 * A worker process for `cluster-failover.test.ts`:
 * `node --import tsx cluster-failover-worker-process.ts '<json>'` (see {@link FailoverWorkerConfig}).
 * A Redis runtime on the cluster with the shared reactors and its runtime defaults for waits (a
 * busy lock is waited for in the process before the execution parks), and an operations server
 * whose `/readyz` checks the cluster's PING and the runtime's subscriptions, as
 * `ts-reactor worker --metrics-port` does. A probe backend on the same cluster waits on a lock
 * channel on request (`probe <key>` on stdin). Starts its worker on `go`; prints the lines named
 * in ./cluster-failover-protocol.ts; on SIGTERM closes and prints its spans and wait outcomes.
 */
import { Cluster } from 'ioredis';
import { createInterface } from 'node:readline';
import { createRedisRuntime } from '../../src/bullmq.js';
import type { ReactorEvent } from '../../src/index.js';
import { redisReadiness, serveOperations } from '../../src/metrics/index.js';
import { createRedisBackend } from '../../src/storage/redis/index.js';
import {
  failoverReactors,
  PROGRESS_EVERY,
  wallNow,
  type FailoverWorkerConfig,
  type Span,
  type WaitOutcome,
} from './cluster-failover-protocol.js';
import { offered } from '../support/fast-paths.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const writeLine = (value: unknown): Promise<void> =>
  new Promise((resolve) => process.stdout.write(`${JSON.stringify(value)}\n`, () => resolve()));
/** A probe's own timeout: far beyond any test's bound, so a probe that ends was woken. */
const PROBE_WAIT_MS = 600_000;

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? '{}') as FailoverWorkerConfig;
  const spans: Span[] = [];
  /** When this process first took each execution's job. */
  const firstTaken = new Map<string, number>();
  const reactors = failoverReactors(
    async (key, executionId) => {
      const enter = wallNow();
      await sleep(1 + Math.floor(Math.random() * 3));
      spans.push({ key, executionId, enter, exit: wallNow() });
      if (spans.length % PROGRESS_EVERY === 0) void writeLine({ done: spans.length });
    },
    (executionId, signal) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, PROBE_WAIT_MS);
        signal.addEventListener(
          'abort',
          () => {
            clearTimeout(timer);
            const reason = signal.reason as unknown;
            void writeLine({ aborted: executionId, reason: reason instanceof Error ? reason.name : String(reason) });
            reject(reason instanceof Error ? reason : new Error(String(reason)));
          },
          { once: true },
        );
        void writeLine({ held: executionId });
      }),
  );
  const runtime = createRedisRuntime({
    cluster: { nodes: config.nodes },
    prefix: config.prefix,
    reactors: Object.values(reactors),
    // A lost job (its master killed) is found again within seconds.
    background: { livenessTtlMs: 5_000, sweepIntervalMs: 2_000 },
    stall: { lockDurationMs: 5_000, stalledIntervalMs: 2_000 },
  });
  // How each in-process wait for a busy lock ended: taken while waiting, or given up for a park.
  const waiting = new Set<string>();
  const waits: WaitOutcome[] = [];
  runtime.engine.subscribe((e: ReactorEvent) => {
    if (e.type === 'run.resumed' && !firstTaken.has(e.executionId)) firstTaken.set(e.executionId, wallNow());
    if (e.type === 'coordination.waiting') waiting.add(e.executionId);
    else if (e.type === 'coordination.acquired' && waiting.delete(e.executionId))
      waits.push({ at: wallNow(), outcome: 'won' });
    else if (e.type === 'coordination.contended' && waiting.delete(e.executionId))
      waits.push({ at: wallNow(), outcome: 'parked' });
  });
  const ping = new Cluster([...config.nodes]);
  ping.on('error', () => undefined);
  let running = false;
  const operations = await serveOperations({
    port: 0,
    host: '127.0.0.1',
    readiness: redisReadiness({
      redis: ping,
      subscriptions: () => runtime.health().subscriptions,
      workerRunning: () => running,
    }),
  });
  const probe = createRedisBackend({ cluster: { nodes: config.nodes }, prefix: config.prefix });
  process.once('SIGTERM', () => {
    running = false;
    void runtime
      .close()
      .then(async () => {
        await writeLine({ stopped: true, pid: process.pid, spans, taken: [...firstTaken], waits });
        await Promise.all([operations.close(), probe.close(), ping.quit()]);
      })
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
  });
  createInterface({ input: process.stdin }).on('line', (text) => {
    const [command, argument] = text.trim().split(' ');
    if (command === 'go' && !running) {
      running = true;
      runtime.startWorker({ concurrency: config.concurrency });
    } else if (command === 'probe' && argument !== undefined) void runProbe(argument);
  });

  /** Waits on `key`'s lock channel; says when the subscription is confirmed, and when a release woke it. */
  async function runProbe(key: string): Promise<void> {
    const woken = offered(probe.coordinator, 'changes').waitForChange('lock', key, PROBE_WAIT_MS);
    while (!probe.subscriptions().confirmed) await sleep(20);
    await writeLine({ probing: key });
    await woken;
    await writeLine({ probed: key });
  }

  await writeLine({ ready: true, pid: process.pid, readyz: `${operations.url}/readyz` });
}

main().catch((error: unknown) => {
  process.stderr.write(
    `cluster-failover-worker-process failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
