/**
 * A worker process for `fanout.test.ts`: `node --import tsx fanout-worker-process.ts '<json>'`
 * ({@link FanOutWorkerConfig}). It registers the scenario-21 fan-out reactor with hooks that
 * write to Redis — per-element run and undo counters, the pid that did each, and one ordered
 * log of compensations and undos — starts a BullMQ worker, prints `{"ready":true}` on stdin
 * `go` or at once, and runs until killed or SIGTERM (graceful close, exit 0).
 */
import { Redis } from 'ioredis';
import { createInterface } from 'node:readline';
import { createRedisRuntime } from '../../src/bullmq.js';
import { buildFanOut } from '../fanout/scenario.js';
import { fanOutKeys, FANOUT_REACTOR, type FanOutWorkerConfig } from './fanout-protocol.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function main(): Promise<void> {
  const raw = process.argv[2];
  if (raw === undefined) throw new Error('fanout-worker-process: pass the JSON config as the first argument');
  const config = JSON.parse(raw) as FanOutWorkerConfig;
  const redis = new Redis(config.url);
  const keys = fanOutKeys(config.prefix);
  const pid = String(process.pid);
  const reactor = buildFanOut(
    {
      element: async (index) => {
        await redis.multi().hincrby(keys.runs, String(index), 1).hset(keys.runPid, String(index), pid).exec();
        await sleep(1 + (index % 3));
      },
      compensate: async (index) => void (await redis.rpush(keys.log, `compensate ${index}`)),
      undo: async (index) =>
        void (await redis
          .multi()
          .hincrby(keys.undos, String(index), 1)
          .hset(keys.undoPid, String(index), pid)
          .rpush(keys.log, `undo ${index}`)
          .exec()),
      a: async () => void (await redis.rpush(keys.log, 'run a')),
      undoA: async () => void (await redis.rpush(keys.log, 'undo a')),
      b: async () => void (await redis.rpush(keys.log, 'run b')),
    },
    { name: FANOUT_REACTOR, batchSize: config.batchSize },
  );
  const runtime = createRedisRuntime({
    url: config.url,
    prefix: config.prefix,
    reactors: [reactor],
    background: { parkFallbackMs: 2_000, workerWaitMs: 0 },
  });
  process.once('SIGTERM', () => {
    void runtime
      .close()
      .then(() => redis.quit())
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
  });
  await runtime.engine.result('fanout-worker-process:connectivity-check');
  let started = false;
  const start = (): void => {
    if (!started) runtime.startWorker({ concurrency: config.concurrency });
    started = true;
  };
  createInterface({ input: process.stdin }).on('line', (line) => {
    if (line.trim() === 'go') start();
  });
  process.stdout.write(`${JSON.stringify({ ready: true, pid: process.pid })}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(
    `fanout-worker-process failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
