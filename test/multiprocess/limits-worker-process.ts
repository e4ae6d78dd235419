/**
 * A worker process for `limits.test.ts`: `node --import tsx limits-worker-process.ts '<json>'`
 * (see {@link LimitsWorkerConfig}). Builds a Redis runtime with the reactors of
 * `limits-protocol.ts`, prints `{"ready":true}`, starts its BullMQ worker (at once, or on a `go`
 * line on stdin) and runs jobs until SIGTERM (graceful close, then `{"stopped":true,…}`).
 */
import { Redis } from 'ioredis';
import { createInterface } from 'node:readline';
import { createRedisRuntime } from '../../src/bullmq.js';
import type { ReactorEvent } from '../../src/index.js';
import { RedisKeys } from '../../src/storage/redis/keys.js';
import {
  buildLimitReactors,
  ENTER,
  EXIT,
  limitKeys,
  PROJECT_RATE,
  RECORD_CHARGES,
  tierLimit,
  USER_RATE,
  type LimitsWorkerConfig,
} from './limits-protocol.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const writeLine = (value: unknown): Promise<void> =>
  new Promise((resolve) => process.stdout.write(`${JSON.stringify(value)}\n`, () => resolve()));

/**
 * Holds a tiered body (its slots taken) until its user has been at its limit and some execution
 * has parked, at most 30 s: with at most 6 bodies inside and 16 worker slots, other executions are
 * sure to contend while the first ones hold, however slowly a loaded machine hands out jobs.
 */
async function gate(guard: Redis, keys: ReturnType<typeof limitKeys>, user: string, limit: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const [most, parks] = await Promise.all([guard.hget(keys.max, user), guard.get(keys.parks)]);
    if (Number(most ?? 0) >= limit && Number(parks ?? 0) > 0) return;
    await sleep(20);
  }
}

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? '{}') as LimitsWorkerConfig;
  const guard = new Redis(config.url);
  const keys = limitKeys(config.guard);
  const redisKeys = new RedisKeys(config.prefix);
  const counts = { parks: 0, completed: 0, failed: 0 };
  const reactors = buildLimitReactors({
    tier: async (user, project, tier) => {
      const [u, p] = [`lim:user:${user}`, `lim:project:${project}`];
      await guard.eval(ENTER, 3, keys.cur(u), keys.cur(p), keys.max, u, p);
      try {
        await gate(guard, keys, u, tierLimit(tier));
        await sleep(20 + Math.floor(Math.random() * 20));
      } finally {
        await guard.eval(EXIT, 2, keys.cur(u), keys.cur(p));
      }
    },
    rate: async (user, project, executionId) => {
      await guard.eval(
        RECORD_CHARGES,
        3,
        redisKeys.rate(`lim:user:${user}`, USER_RATE.periodMs),
        redisKeys.rate(`lim:project:${project}`, PROJECT_RATE.periodMs),
        keys.charges,
        `${executionId}:call`,
        user,
        project,
      );
    },
  });
  const runtime = createRedisRuntime({
    url: config.url,
    prefix: config.prefix,
    reactors: Object.values(reactors),
    ...(config.background === undefined ? {} : { background: config.background }),
  });
  runtime.engine.subscribe((e: ReactorEvent) => {
    if (e.type === 'run.parked') {
      counts.parks++;
      void guard.incr(keys.parks);
    } else if (e.type === 'run.completed') counts.completed++;
    else if (e.type === 'run.failed') counts.failed++;
  });
  process.once('SIGTERM', () => {
    void runtime
      .close()
      .then(async () => {
        await writeLine({ stopped: true, pid: process.pid, ...counts });
        await guard.quit();
      })
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
  });
  await guard.ping();
  let started = false;
  const start = (): void => {
    if (started) return;
    started = true;
    runtime.startWorker({ concurrency: config.concurrency });
  };
  if (config.waitForGo !== true) start();
  createInterface({ input: process.stdin }).on('line', (text) => {
    if (text.trim() === 'go') start();
  });
  await writeLine({ ready: true, pid: process.pid });
}

main().catch((error: unknown) => {
  process.stderr.write(
    `limits-worker-process failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
