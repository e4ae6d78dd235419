/**
 * A worker process for `steps.test.ts`: `node --import tsx step-worker-process.ts '<json>'`
 * (see {@link StepWorkerConfig}). Builds a Redis runtime with the step-level reactors, starts a
 * BullMQ worker, prints `{"ready":true}`, processes jobs until SIGTERM (graceful close, then a
 * `{"stopped":true}` line) or SIGKILL. stdin: `go` starts a worker started with `waitForGo`;
 * `counts <n>` prints `{"counts":n,…}` with its parks, wakes, completions and failures so far
 * (and its parks made while its wake-ups were degraded).
 * Sections sleep 1–3 ms; `hang` prints `{"inStep":"hang",…}` and, with `hang: true`, never returns.
 */
import { Redis } from 'ioredis';
import { createInterface } from 'node:readline';
import { createRedisRuntime } from '../../src/bullmq.js';
import type { ReactorEvent } from '../../src/index.js';
import { GUARD_ENTER, GUARD_EXIT } from './bg-protocol.js';
import { buildStepReactors, stepGuard, type StepWorkerConfig } from './step-protocol.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const writeLine = (value: unknown): Promise<void> =>
  new Promise((resolve) => process.stdout.write(`${JSON.stringify(value)}\n`, () => resolve()));

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? '{}') as StepWorkerConfig;
  const guardRedis = new Redis(config.url);
  // degradedParks: parks given the shortened fallback, which a park gets only while this process's wake-ups are degraded.
  const counts = { parks: 0, woken: 0, completed: 0, failed: 0, degradedParks: 0 };
  const fallbackMs = config.background?.parkFallbackMs;
  const reactors = buildStepReactors(async (step, key, executionId) => {
    const g = stepGuard(config.guard, step);
    await guardRedis.eval(GUARD_ENTER, 6, g.cur(key), g.max, g.total, g.runs, g.all, g.allMax, key, executionId);
    try {
      if (step === 'hang') {
        await writeLine({ inStep: 'hang', pid: process.pid, executionId });
        if (config.hang === true) {
          setInterval(() => undefined, 60_000);
          await new Promise<never>(() => undefined);
        }
      }
      await sleep(1 + Math.floor(Math.random() * 3));
    } finally {
      await guardRedis.eval(GUARD_EXIT, 2, g.cur(key), g.all);
    }
  });
  const runtime = createRedisRuntime({
    url: config.url,
    prefix: config.prefix,
    reactors: Object.values(reactors),
    ...(config.stall === undefined ? {} : { stall: config.stall }),
    ...(config.background === undefined ? {} : { background: config.background }),
  });
  runtime.engine.subscribe((e: ReactorEvent) => {
    if (e.type === 'run.parked') counts.parks++;
    else if (e.type === 'run.woken') counts.woken++;
    else if (e.type === 'run.completed') counts.completed++;
    else if (e.type === 'run.failed') counts.failed++;
    else if (e.type === 'run.queued' && e.reason === 'park' && fallbackMs !== undefined && e.delayMs < fallbackMs)
      counts.degradedParks++;
  });
  process.once('SIGTERM', () => {
    void runtime
      .close()
      .then(async () => {
        await writeLine({ stopped: true, pid: process.pid, ...counts });
        await guardRedis.quit();
      })
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
  });
  await guardRedis.ping();
  let started = false;
  const start = (): void => {
    if (started) return;
    started = true;
    runtime.startWorker({ concurrency: config.concurrency });
  };
  if (config.waitForGo !== true) start();
  createInterface({ input: process.stdin }).on('line', (text) => {
    if (text.trim() === 'go') start();
    const [verb, n] = text.trim().split(/\s+/);
    if (verb === 'counts') void writeLine({ counts: Number(n), pid: process.pid, ...counts });
  });
  await writeLine({ ready: true, pid: process.pid });
}

main().catch((error: unknown) => {
  process.stderr.write(
    `step-worker-process failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
