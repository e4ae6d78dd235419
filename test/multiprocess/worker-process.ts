/**
 * A child-process entry for the multi-process coordination tests. Run it with
 * `node --import tsx worker-process.ts '<json config>'` (see {@link WorkerConfig}).
 *
 * Modes `lock`, `semaphore`, `ordered`: builds a reactor with that reactor-level declaration,
 * prints `{"ready":true}`, waits for a `go` line on stdin (so every process starts contending at
 * once), then runs `runs` executions, `concurrency` at a time. Each run's step is a critical
 * section instrumented with a guard counter in Redis (INCR on entry, the returned value is the
 * concurrency observed inside, DECR on exit); in `semaphore` mode the section holds until the
 * semaphore has once been full. Prints one JSON result line and exits 0.
 *
 * Mode `hold`: one run of a reactor declaring a lock, a limit-1 semaphore and an ordered lock;
 * its step prints `{"holding":true,…}` and then hangs forever, waiting to be killed.
 */
import { Redis } from 'ioredis';
import { createInterface } from 'node:readline';
import { createEngine, reactor, type ReactorEvent } from '../../src/index.js';
import { createRedisBackend } from '../../src/storage/redis/index.js';
import {
  guardKeys,
  holdKeys,
  type GuardEntry,
  type HoldingLine,
  type WorkerConfig,
  type WorkerResult,
} from './protocol.js';

// KEYS: cur, max, total, log. ARGV: log entry. Returns the guard value after INCR.
const ENTER = `
local v = redis.call('INCR', KEYS[1])
local m = tonumber(redis.call('GET', KEYS[2]) or '0')
if v > m then redis.call('SET', KEYS[2], v) end
redis.call('INCR', KEYS[3])
redis.call('RPUSH', KEYS[4], (string.gsub(ARGV[1], '"inside":0', '"inside":' .. v)))
return v
`;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function writeLine(value: unknown): Promise<void> {
  return new Promise((resolve) => process.stdout.write(`${JSON.stringify(value)}\n`, () => resolve()));
}

function waitForGo(): Promise<void> {
  return new Promise((resolve) => {
    const rl = createInterface({ input: process.stdin });
    rl.on('line', (line) => {
      if (line.trim() === 'go') {
        rl.close();
        resolve();
      }
    });
  });
}

function buildReactor(
  config: WorkerConfig,
  section: (ctx: { executionId: string; token: string | undefined }) => Promise<void>,
) {
  const ttl = config.ttlMs ?? 30_000;
  const wait = config.waitMs ?? 30_000;
  const base = reactor(`mp-${config.mode}`);
  const declared =
    config.mode === 'lock'
      ? base.withLock({ key: () => config.key, ttl, wait })
      : config.mode === 'semaphore'
        ? base.withSemaphore({ key: () => config.key, limit: config.limit ?? 3, ttl, wait })
        : base.withOrderedLock({ key: () => config.key, wait });
  return declared
    .step('section', {
      run: (_args, ctx) => section({ executionId: ctx.executionId, token: ctx.fencingToken(config.key) }),
    })
    .build();
}

/**
 * Until the guard has once seen `limit` runs inside (at most 30 s): the first entrants keep their
 * slots until the semaphore has been full, so reaching its limit does not depend on sections
 * overlapping by chance on a loaded machine.
 */
async function fullOnce(guardRedis: Redis, maxKey: string, limit: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Number(await guardRedis.get(maxKey)) < limit && Date.now() < deadline) await sleep(10);
}

async function contend(config: WorkerConfig): Promise<void> {
  const backend = createRedisBackend({ url: config.url, prefix: config.prefix });
  const guardRedis = new Redis(config.url);
  const keys = guardKeys(config.guard);
  const nonces = new Map<string, number>();
  const engine = createEngine({ store: backend.store, coordinator: backend.coordinator });
  engine.subscribe((e: ReactorEvent) => {
    if (e.type === 'coordination.acquired' && e.primitive === 'ordered_lock' && e.nonce !== undefined)
      nonces.set(e.executionId, e.nonce);
  });
  let maxInside = 0;
  const definition = buildReactor(config, async ({ executionId, token }) => {
    const entry: GuardEntry = { pid: process.pid, inside: 0, token, nonce: nonces.get(executionId) };
    const inside = Number(
      await guardRedis.eval(ENTER, 4, keys.cur, keys.max, keys.total, keys.log, JSON.stringify(entry)),
    );
    maxInside = Math.max(maxInside, inside);
    try {
      if (config.mode === 'semaphore') await fullOnce(guardRedis, keys.max, config.limit ?? 3);
      await sleep(2 + Math.floor(Math.random() * 4));
    } finally {
      await guardRedis.decr(keys.cur);
    }
  });
  await backend.coordinator.time(); // connected
  await writeLine({ ready: true, pid: process.pid });
  await waitForGo();

  const runs = config.runs ?? 40;
  const concurrency = config.concurrency ?? 8;
  let next = 0;
  let completed = 0;
  let failed = 0;
  let other = 0;
  const errors: string[] = [];
  const lane = async (): Promise<void> => {
    while (next < runs) {
      next++;
      const result = await engine.run(definition, {});
      if (result.status === 'completed') completed++;
      else if (result.status === 'failed') {
        failed++;
        if (errors.length < 3) errors.push(result.error.message);
      } else other++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  const result: WorkerResult = { pid: process.pid, completed, failed, other, maxInside, errors };
  await writeLine(result);
  await backend.close();
  await guardRedis.quit();
}

async function hold(config: WorkerConfig): Promise<void> {
  const backend = createRedisBackend({ url: config.url, prefix: config.prefix });
  const engine = createEngine({ store: backend.store, coordinator: backend.coordinator });
  const keys = holdKeys(config.key);
  const ttl = config.ttlMs ?? 1_500;
  const wait = config.waitMs ?? 10_000;
  const definition = reactor('mp-hold')
    .withOrderedLock({ key: () => keys.ordered, poisonTimeout: ttl, wait })
    .withLock({ key: () => keys.lock, ttl, wait })
    .withSemaphore({ key: () => keys.semaphore, limit: 1, ttl, wait })
    .step('hang', {
      run: async (_args, ctx) => {
        const line: HoldingLine = {
          holding: true,
          pid: process.pid,
          executionId: ctx.executionId,
          token: ctx.fencingToken(keys.lock),
        };
        await writeLine(line);
        // Hang until killed; the interval keeps the event loop alive on its own.
        setInterval(() => undefined, 60_000);
        await new Promise<never>(() => undefined);
      },
    })
    .build();
  const result = await engine.run(definition, {});
  // Only reached if the holds could not be taken.
  await writeLine({
    holding: false,
    status: result.status,
    error: result.status === 'failed' ? result.error.message : undefined,
  });
  await backend.close();
}

async function main(): Promise<void> {
  const raw = process.argv[2] ?? process.env.MP_WORKER_CONFIG;
  if (raw === undefined)
    throw new Error('worker-process: pass the JSON config as the first argument or in MP_WORKER_CONFIG');
  const config = JSON.parse(raw) as WorkerConfig;
  if (config.mode === 'hold') await hold(config);
  else await contend(config);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(
      `worker-process failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);
