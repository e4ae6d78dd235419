/**
 * Release wake-ups across real worker processes (docs/decisions/112): each round starts three
 * fresh worker processes (`step-worker-process.ts`) on one throwaway redis-server and runs
 * executions whose `charge` step locks its account. A worker waits 20 ms in process for a busy
 * key (on the key's release notification, or a grant from another process's release), then
 * parks the execution with a 60 s fallback. Every park must end with `run.woken` (a release
 * promoted its job), never with its fallback: the rounds finish long before any fallback is due,
 * and the workers count one `run.woken` per park.
 *
 * The first contention of a fresh worker opens its subscriber connection, and its first
 * subscriptions are made while that connection comes up: the moment a subscription used to be
 * lost without a trace, leaving that process's grants and wake-ups to the fallback.
 */
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createRedisRuntime, type RedisRuntime } from '../../src/bullmq.js';
import { spawnJsonChild } from '../support/json-child.js';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';
import { buildStepReactors } from './step-protocol.js';

const WORKER = fileURLToPath(new URL('./step-worker-process.ts', import.meta.url));
const ROUNDS = 3;
const PROCESSES = 3;
const EXECUTIONS = 300;
const ACCOUNTS = 10;
const FALLBACK_MS = 60_000;
const children = new Set<ChildProcess>();
const reactors = buildStepReactors(() => Promise.reject(new Error('the test process runs no steps')));

let server: RedisServerHandle;
let runtime: RedisRuntime;

beforeAll(async () => {
  server = await startRedisServer();
  runtime = createRedisRuntime({ url: server.url, prefix: 'wk', reactors: Object.values(reactors) });
});

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await runtime?.close();
  await server?.dispose();
});

describe('release wake-ups across worker processes', () => {
  test(
    `${ROUNDS} rounds of ${EXECUTIONS} executions on ${PROCESSES} fresh workers: every park is woken by a release, none by its fallback`,
    { timeout: 300_000 },
    async () => {
      for (let round = 1; round <= ROUNDS; round++) {
        const workers = Array.from({ length: PROCESSES }, () =>
          spawnJsonChild(
            WORKER,
            {
              url: server.url,
              prefix: 'wk',
              guard: `wk-guard-${round}`,
              concurrency: 8,
              background: { workerWaitMs: 20, parkFallbackMs: FALLBACK_MS },
              waitForGo: true,
            },
            children,
          ),
        );
        await Promise.all(workers.map((w) => w.line((v) => v.ready === true, 30_000)));
        const ids = [];
        for (let i = 0; i < EXECUTIONS; i += 100) {
          const batch = await Promise.all(
            Array.from({ length: Math.min(100, EXECUTIONS - i) }, (_, j) =>
              runtime.engine.start(reactors.payment, { account: `${round}-${(i + j) % ACCOUNTS}` }),
            ),
          );
          ids.push(...batch.map((s) => s.executionId));
        }
        for (const w of workers) w.child.stdin!.write('go\n');
        // Well before any fallback is due: a park left to its fallback would still be parked here.
        const results = await Promise.all(
          ids.map((id) => runtime.engine.wait(id, { timeoutMs: FALLBACK_MS / 2, pollMs: 200 })),
        );
        const statuses = results.map((r) => r?.status ?? 'missing');
        for (const w of workers) w.child.kill('SIGTERM');
        const counts = await Promise.all(
          workers.map((w) =>
            w.line<{ parks: number; woken: number; completed: number }>((v) => v.stopped === true, 30_000),
          ),
        );
        await Promise.all(workers.map((w) => w.exited));
        const parks = counts.reduce((n, c) => n + c.parks, 0);
        const woken = counts.reduce((n, c) => n + c.woken, 0);
        console.info(`[wakeups] round ${round}: ${parks} parks, ${woken} run.woken`);
        expect(statuses.filter((s) => s !== 'completed')).toEqual([]);
        expect(woken).toBe(parks);
      }
    },
  );
});
