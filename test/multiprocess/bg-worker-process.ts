/**
 * A worker process for `background.test.ts`: `node --import tsx bg-worker-process.ts '<json>'`
 * (see {@link BgWorkerConfig}). It builds a Redis runtime (`createRedisRuntime`) with the shared
 * reactors, starts a BullMQ worker, prints `{"ready":true}` and processes jobs until it gets
 * SIGTERM (graceful: `runtime.close()`, then one `{"stopped":true,…}` line, exit 0) or is killed.
 *
 * stdin: a `go` line starts the worker of a process started with `waitForGo`; a `stats` line
 * prints the counters ({@link StatsLine}).
 * Steps: `bg-r1` sleeps 1–3 ms inside its guarded section; `bg-hang` prints an `inStep` line and,
 * in a process started with `hang: true`, hangs forever; `bg-slow` prints `inStep`, sleeps
 * 300 ms and prints `stepDone`; `bg-unrecorded` behaves like `bg-hang`, without a lock, and its
 * compensation prints a `compensated` line.
 */
import { Redis } from 'ioredis';
import { createInterface } from 'node:readline';
import { performance } from 'node:perf_hooks';
import { createRedisRuntime } from '../../src/bullmq.js';
import type { ReactorEvent } from '../../src/index.js';
import {
  bgGuardKeys,
  buildReactors,
  GUARD_ENTER,
  GUARD_EXIT,
  type BgWorkerConfig,
  type CompensatedLine,
  type InStepLine,
  type StatsLine,
  type StepDoneLine,
  type StoppedLine,
  type WorkerStats,
} from './bg-protocol.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function writeLine(value: unknown): Promise<void> {
  return new Promise((resolve) => process.stdout.write(`${JSON.stringify(value)}\n`, () => resolve()));
}

async function main(): Promise<void> {
  const raw = process.argv[2];
  if (raw === undefined) throw new Error('bg-worker-process: pass the JSON config as the first argument');
  const config = JSON.parse(raw) as BgWorkerConfig;
  const guardRedis = new Redis(config.url);
  const keys = bgGuardKeys(config.guard);
  const counts = { parks: 0, resumed: 0, completed: 0, failed: 0, sections: 0 };
  const stats = (): WorkerStats => ({ pid: process.pid, ...counts });

  const reactors = buildReactors({
    section: {
      enter: async (key, executionId) =>
        Number(
          await guardRedis.eval(
            GUARD_ENTER,
            6,
            keys.cur(key),
            keys.max,
            keys.total,
            keys.runs,
            keys.all,
            keys.allMax,
            key,
            executionId,
          ),
        ),
      exit: async (key) => void (await guardRedis.eval(GUARD_EXIT, 2, keys.cur(key), keys.all)),
    },
    inside: async (name, _key, executionId, inside) => {
      counts.sections++;
      if (name === 'r1') return sleep(1 + Math.floor(Math.random() * 3));
      const line: InStepLine = { inStep: name, pid: process.pid, executionId, inside };
      await writeLine(line);
      if ((name === 'hang' || name === 'unrecorded') && config.hang === true) {
        // Hang until killed; the interval keeps the event loop alive on its own.
        setInterval(() => undefined, 60_000);
        await new Promise<never>(() => undefined);
      }
      if (name === 'slow') {
        await sleep(300);
        const done: StepDoneLine = { stepDone: name, pid: process.pid, executionId };
        await writeLine(done);
      }
      return undefined;
    },
    compensated: async (step, executionId) => {
      const line: CompensatedLine = { compensated: step, pid: process.pid, executionId };
      await writeLine(line);
    },
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
    else if (e.type === 'run.resumed') counts.resumed++;
    else if (e.type === 'run.completed') counts.completed++;
    else if (e.type === 'run.failed') counts.failed++;
  });
  process.once('SIGTERM', () => {
    const began = performance.now();
    void runtime
      .close()
      .then(async () => {
        const line: StoppedLine = { stopped: true, closeMs: Math.round(performance.now() - began), ...stats() };
        await writeLine(line);
        await guardRedis.quit();
      })
      .then(
        () => process.exit(0),
        (error: unknown) => {
          process.stderr.write(
            `bg-worker-process: close failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
          );
          process.exit(1);
        },
      );
  });

  await runtime.engine.result('bg-worker-process:connectivity-check'); // the store answers
  await guardRedis.ping();
  let started = false;
  const start = (): void => {
    if (started) return;
    started = true;
    runtime.startWorker({ concurrency: config.concurrency });
  };
  if (config.waitForGo !== true) start();
  createInterface({ input: process.stdin }).on('line', (text) => {
    const command = text.trim();
    if (command === 'go') start();
    else if (command === 'stats') {
      const line: StatsLine = { stats: true, ...stats() };
      void writeLine(line);
    }
  });
  await writeLine({ ready: true, pid: process.pid });
}

main().catch((error: unknown) => {
  process.stderr.write(
    `bg-worker-process failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
