/**
 * A worker process for `schedules.test.ts`: `node --import tsx schedule-worker-process.ts '<json>'`.
 * Builds a Redis runtime with the scheduled reactor and its computed input, starts a worker
 * (which takes schedule ticks too), prints `{"ready":true}`, then one line per `schedule.*`
 * event, until SIGTERM (graceful close).
 */
import { createRedisRuntime } from '../../src/bullmq.js';
import { scheduleInputs, tickReport, type ScheduleWorkerConfig } from './schedule-protocol.js';

const writeLine = (value: unknown): Promise<void> =>
  new Promise((resolve) => process.stdout.write(`${JSON.stringify(value)}\n`, () => resolve()));

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? '{}') as ScheduleWorkerConfig;
  const runtime = createRedisRuntime({
    url: config.url,
    prefix: config.prefix,
    reactors: [tickReport],
    scheduleInputs,
  });
  runtime.schedules.subscribe((event) => void writeLine({ event, pid: process.pid }));
  process.once('SIGTERM', () => {
    void runtime.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
  runtime.startWorker({ concurrency: 4 });
  await writeLine({ ready: true, pid: process.pid });
}

main().catch((error: unknown) => {
  process.stderr.write(
    `schedule-worker-process failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
