/**
 * A worker process for `contention-bound.test.ts`: `node --import tsx contention-worker-process.ts
 * '<json>'` (see {@link ContentionWorkerConfig}). Builds a Redis runtime with the contention
 * reactors, starts a BullMQ worker, prints `{"ready":true}`, processes jobs until SIGTERM
 * (graceful close, then `{"stopped":true}`) or SIGKILL.
 */
import { Redis } from 'ioredis';
import { createRedisRuntime } from '../../src/bullmq.js';
import { buildContentionReactors, hooksKey, type ContentionWorkerConfig } from './contention-protocol.js';

const writeLine = (value: unknown): Promise<void> =>
  new Promise((resolve) => process.stdout.write(`${JSON.stringify(value)}\n`, () => resolve()));

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? '{}') as ContentionWorkerConfig;
  const counter = new Redis(config.url);
  const reactors = buildContentionReactors(
    async (hook) => void (await counter.hincrby(hooksKey(config.prefix), hook, 1)),
  );
  const runtime = createRedisRuntime({
    url: config.url,
    prefix: config.prefix,
    reactors: Object.values(reactors),
    background: config.background,
  });
  process.once('SIGTERM', () => {
    void runtime
      .close()
      .then(async () => {
        await writeLine({ stopped: true, pid: process.pid });
        await counter.quit();
      })
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
  });
  await counter.ping();
  runtime.startWorker({ concurrency: config.concurrency });
  await writeLine({ ready: true, pid: process.pid });
}

main().catch((error: unknown) => {
  process.stderr.write(
    `contention-worker-process failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
