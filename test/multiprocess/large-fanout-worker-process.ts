/**
 * A worker process for `large-fanout.test.ts`: `node --import tsx large-fanout-worker-process.ts
 * '<json>'` ({@link LargeFanOutWorkerConfig}). It registers the large fan-out reactor, starts a
 * BullMQ worker at once, prints `{"ready":true}`, and runs until SIGTERM (graceful close, exit 0).
 */
import { createRedisRuntime } from '../../src/bullmq.js';
import { buildLargeFanOut, type LargeFanOutWorkerConfig } from './large-fanout-protocol.js';

async function main(): Promise<void> {
  const raw = process.argv[2];
  if (raw === undefined) throw new Error('large-fanout-worker-process: pass the JSON config as the first argument');
  const config = JSON.parse(raw) as LargeFanOutWorkerConfig;
  const runtime = createRedisRuntime({
    url: config.url,
    prefix: config.prefix,
    reactors: [buildLargeFanOut(config.batchSize)],
    // Only the settlement that finishes the map wakes the run (the fallback is out of reach).
    background: { parkFallbackMs: 600_000 },
  });
  process.once('SIGTERM', () => {
    void runtime.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
  await runtime.engine.result('large-fanout-worker-process:connectivity-check');
  runtime.startWorker({ concurrency: config.concurrency });
  process.stdout.write(`${JSON.stringify({ ready: true, pid: process.pid })}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(
    `large-fanout-worker-process failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
