/**
 * A worker process for `sleep.test.ts`: `node --import tsx sleep-worker-process.ts '<json>'`
 * ({@link SleepWorkerConfig}). It registers the sleep reactors with hooks that write to Redis,
 * starts a BullMQ worker, prints `{"ready":true}` and runs until killed or SIGTERM.
 */
import { Redis } from 'ioredis';
import { createRedisRuntime } from '../../src/bullmq.js';
import { buildSleepReactors, sleepKeys, type SleepWorkerConfig } from './sleep-protocol.js';

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function main(): Promise<void> {
  const raw = process.argv[2];
  if (raw === undefined) throw new Error('sleep-worker-process: pass the JSON config as the first argument');
  const config = JSON.parse(raw) as SleepWorkerConfig;
  const redis = new Redis(config.url);
  const keys = sleepKeys(config.prefix);
  const pid = String(process.pid);
  const { napper, longNapper, busy } = buildSleepReactors({
    after: async () => void (await redis.sadd(keys.afterPids, pid)),
    busy: async () => {
      await pause(20);
      await redis.multi().incr(keys.busyDone).sadd(keys.busyPids, pid).exec();
    },
  });
  const runtime = createRedisRuntime({ url: config.url, prefix: config.prefix, reactors: [napper, longNapper, busy] });
  process.once('SIGTERM', () => {
    void runtime
      .close()
      .then(() => redis.quit())
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
  });
  await runtime.engine.result('sleep-worker-process:connectivity-check');
  runtime.startWorker({ concurrency: config.concurrency });
  process.stdout.write(`${JSON.stringify({ ready: true, pid: process.pid })}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(
    `sleep-worker-process failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
