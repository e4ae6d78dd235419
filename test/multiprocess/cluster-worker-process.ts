/**
 * A worker process for `cluster.test.ts`: `node --import tsx cluster-worker-process.ts '<json>'`
 * (see {@link ClusterWorkerConfig}). A Redis runtime on the cluster with the shared reactors;
 * prints `{"ready":true}`, starts its worker on a `go` line, and on SIGTERM closes and prints
 * `{"stopped":true,"parks":n}`.
 */
import { Cluster } from 'ioredis';
import { createInterface } from 'node:readline';
import { createRedisRuntime } from '../../src/bullmq.js';
import type { ReactorEvent } from '../../src/index.js';
import { clusterReactors, guardKeys, SECTION_LIMIT, type ClusterWorkerConfig } from './cluster-protocol.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const writeLine = (value: unknown): Promise<void> =>
  new Promise((resolve) => process.stdout.write(`${JSON.stringify(value)}\n`, () => resolve()));

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? '{}') as ClusterWorkerConfig;
  const guard = new Cluster([...config.nodes]);
  const keys = guardKeys(config.prefix);
  const reactors = clusterReactors(
    async (kind, key) => {
      const inside = keys.inside(kind, key);
      if ((await guard.incr(inside)) > SECTION_LIMIT[kind]) await guard.incr(keys.overlaps);
      try {
        await sleep(1 + Math.floor(Math.random() * 3));
      } finally {
        await guard.decr(inside);
      }
    },
    async () => void (await guard.rpush(keys.rateStarts, String(Date.now()))),
    async (index) => void (await guard.hincrby(keys.elements, String(index), 1)),
  );
  const runtime = createRedisRuntime({
    cluster: { nodes: config.nodes },
    prefix: config.prefix,
    reactors: Object.values(reactors),
    background: { parkFallbackMs: 2_000, workerWaitMs: 0 }, // contention parks at once: every wait is a park and a wake
  });
  let parks = 0;
  runtime.engine.subscribe((e: ReactorEvent) => {
    if (e.type === 'run.parked') parks++;
  });
  process.once('SIGTERM', () => {
    void runtime
      .close()
      .then(async () => {
        await writeLine({ stopped: true, pid: process.pid, parks });
        await guard.quit();
      })
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
  });
  await guard.ping();
  let started = false;
  createInterface({ input: process.stdin }).on('line', (text) => {
    if (text.trim() !== 'go' || started) return;
    started = true;
    runtime.startWorker({ concurrency: config.concurrency });
  });
  await writeLine({ ready: true, pid: process.pid });
}

main().catch((error: unknown) => {
  process.stderr.write(
    `cluster-worker-process failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
