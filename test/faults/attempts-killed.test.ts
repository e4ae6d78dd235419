/**
 * A worker SIGKILLed while a step's body runs, with real worker processes and a throwaway
 * `redis-server` (docs/decisions/098): the execution is delivered again to another worker and
 * completes, and its record never shows fewer attempts than bodies that may have run —
 *
 * - durable mode (`checkpointIntervalMs: 0`): the killed attempt's start was on the record before
 *   its body ran; the record shows it `worker_lost` (on the killed worker) and the completed
 *   attempt 2 (on the other), `attempts` 2;
 * - the default checkpoint interval: the step "may have run" once (on the killed worker), then
 *   the completed attempt;
 * - in both, the trace runs from `run.queued` to `run.completed`, the killed job's events kept.
 *
 * The kill is deterministic: the body prints a line when it starts, the test kills the process
 * once it read that line (and, with an interval, once the record says `running`).
 */
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, test } from 'vitest';
import { createRedisRuntime, type RedisRuntime } from '../../src/bullmq.js';
import type { ExecutionRecord } from '../../src/index.js';
import { createRedisBackend, type RedisBackend } from '../../src/storage/redis/index.js';
import { spawnJsonChild } from '../support/json-child.js';
import { useRedisServer } from '../support/use-redis-server.js';
import { attemptsReactor, type AttemptsWorkerConfig } from './fixtures/attempts-worker.js';

const WORKER = fileURLToPath(new URL('./fixtures/attempts-worker.ts', import.meta.url));
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const server = useRedisServer();
const children = new Set<ChildProcess>();
const runtimes: RedisRuntime[] = [];
const backends: RedisBackend[] = [];

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await Promise.all(runtimes.map((r) => r.close()));
  await Promise.all(backends.map((b) => b.close()));
});

/** Polls the stored record until `accept` holds (a generous deadline for a loaded machine, not a bound). */
async function recordWhen(
  backend: RedisBackend,
  id: string,
  accept: (r: ExecutionRecord) => boolean,
  what: string,
): Promise<ExecutionRecord> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const record = await backend.store.get(id);
    if (record && accept(record)) return record;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

async function killMidCharge(prefix: string, checkpointIntervalMs: number | undefined) {
  const definition = attemptsReactor(() => Promise.resolve());
  const runtime = createRedisRuntime({ url: server.url, prefix, reactors: [definition] });
  runtimes.push(runtime);
  const backend = createRedisBackend({ url: server.url, prefix });
  backends.push(backend);
  const config = (hang: boolean): AttemptsWorkerConfig => ({
    url: server.url,
    prefix,
    hang,
    ...(checkpointIntervalMs === undefined ? {} : { checkpointIntervalMs }),
  });
  const w1 = spawnJsonChild(WORKER, config(true), children);
  await w1.line((l) => l.ready === true);
  const { executionId } = await runtime.engine.start(definition, {});
  await w1.line((l) => l.inBody === 'charge' && l.executionId === executionId);
  // With an interval, the job's first checkpoint comes within it: the record says the job runs.
  const atKill = await recordWhen(backend, executionId, (r) => r.status === 'running', 'the record to say running');
  w1.child.kill('SIGKILL');
  await w1.exited;
  const w2 = spawnJsonChild(WORKER, config(false), children);
  await w2.line((l) => l.event === 'run.completed' && l.executionId === executionId, 60_000);
  await recordWhen(backend, executionId, (r) => r.status === 'completed', 'the record to say completed');
  const done = await runtime.engine.result(executionId);
  w2.child.kill('SIGTERM');
  return { w1, w2, atKill, done: done!, executionId };
}

describe('a worker killed while a step body runs: the record counts every attempt that may have run', () => {
  test('durable mode: the killed attempt is on the record (worker lost) and the completed one; attempts 2', async () => {
    const { w1, w2, atKill, done } = await killMidCharge('attempts-durable', 0);
    // The start was on the record before the body ran (carried by the checkpoint after a).
    expect(atKill.steps.charge).toMatchObject({ status: 'running', attempts: 1, started: { attempt: 1 } });
    expect(atKill.steps.charge?.started?.worker).toContain(`-${w1.pid}/`);
    expect(done.status).toBe('completed');
    expect(done.status === 'completed' && done.value).toEqual({ by: w2.pid });
    const charge = done.steps.charge!;
    expect(charge.attempts).toBe(2);
    expect(charge.runs?.map((r) => [r.attempt, r.outcome])).toEqual([
      [1, 'worker_lost'],
      [2, 'succeeded'],
    ]);
    expect(charge.runs?.[0]?.worker).toContain(`-${w1.pid}/`);
    expect(charge.runs?.[1]?.worker).toContain(`-${w2.pid}/`);
    // Exactly that attempt: a completed on the record, ship never started by the killed worker.
    expect(done.steps.a?.attempts).toBe(1);
    expect(done.steps.ship?.attempts).toBe(1);
    const types = done.trace.map((e) => e.type);
    expect(types[0]).toBe('run.queued');
    expect(types[types.length - 1]).toBe('run.completed');
    expect(done.trace.filter((e) => e.type === 'step.attempt_lost')).toEqual([
      expect.objectContaining({ step: 'charge', attempt: 1, outcome: 'worker_lost' }),
    ]);
    // The killed job's events are kept, before the second job's.
    const resumed = types.flatMap((t, i) => (t === 'run.resumed' ? [i] : []));
    expect(resumed).toHaveLength(2);
    const succeededA = done.trace.findIndex((e) => e.type === 'step.succeeded' && e.step === 'a');
    expect(succeededA).toBeGreaterThan(resumed[0]!);
    expect(succeededA).toBeLessThan(resumed[1]!);
  }, 120_000);

  test('default checkpoint interval: the step "may have run" once, then the completed attempt', async () => {
    const { w1, w2, done } = await killMidCharge('attempts-interval', undefined);
    expect(done.status).toBe('completed');
    expect(done.status === 'completed' && done.value).toEqual({ by: w2.pid });
    const charge = done.steps.charge!;
    expect(charge.runs?.map((r) => r.outcome)).toEqual(['may_have_run', 'succeeded']);
    expect(charge.attempts).toBe(2);
    expect(charge.runs?.[0]?.worker).toContain(`-${w1.pid}/`);
    expect(charge.runs?.[1]?.worker).toContain(`-${w2.pid}/`);
    const types = done.trace.map((e) => e.type);
    expect(types[0]).toBe('run.queued');
    expect(types[types.length - 1]).toBe('run.completed');
    expect(types.filter((t) => t === 'run.resumed')).toHaveLength(2);
    expect(
      done.trace.filter((e) => e.type === 'step.attempt_lost' && e.step === 'charge').map((e) => e.type),
    ).toHaveLength(1);
  }, 120_000);
});
