/**
 * A frozen worker process on PostgreSQL writes nothing once it runs again: worker W1 runs
 * execution A's locked step `b`; W1 is SIGSTOPped past its liveness lease (3 s) and its step
 * lock's TTL (2 s); A's job is delivered again to W2, which takes the lease and runs the step;
 * W1 is SIGCONTed while W2 is still inside the step. W1's body is aborted (its lease's local
 * deadline passed) and every write it tries is refused by the database (`job_save_fenced` /
 * `job_leave` check the lease in the same statement): the record, polled throughout, only ever
 * moves forward (pending → running → completed), and its history has one worker per attempt.
 *
 * Causal: W2 is started only after W1 is frozen, W1 is thawed only once W2 is inside the step,
 * and W2 finishes only once W1 has stopped — whatever the machine's speed.
 */
import type { ChildProcess } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresRuntime, PostgresStore, type PostgresRuntime } from '../../src/postgres.js';
import { postgresBackendFactory } from '../../src/queue/bullmq-postgres.js';
import { spawnJsonChild } from '../support/json-child.js';
import { usePostgresServer } from '../support/use-postgres-server.js';
import { zombieReactor, type BodyLine } from './fixtures/zombie-reactor.js';

const WORKER = new URL('./fixtures/pg-fault-worker.ts', import.meta.url).pathname;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(postgresBackendFactory() === undefined)(
  'a frozen worker on PostgreSQL (SIGSTOP past its lease) writes nothing once it runs again',
  () => {
    const server = usePostgresServer();
    const children = new Set<ChildProcess>();
    let runtime: PostgresRuntime | undefined;
    let store: PostgresStore | undefined;
    afterAll(async () => {
      for (const child of children) child.kill('SIGKILL');
      await runtime?.close();
      await store?.close();
    });

    it('the record only moves forward, the stale worker stops with lease_lost, one worker per attempt', async () => {
      const reactor = zombieReactor(() => undefined);
      runtime = createPostgresRuntime({ connection: server.url, migrate: true, reactors: [reactor] });
      await runtime.ready();
      store = new PostgresStore({ connection: server.url });
      const worker = { url: server.url, reactor: 'zombie', concurrency: 1, ttlMs: 3_000, hold: true };
      const w1 = spawnJsonChild(WORKER, worker, children);
      await w1.line((l) => l.ready === true);
      const started = await runtime.engine.start(reactor, { account: 'acct-1', stepMs: 0 });
      const id = started.executionId;
      await w1.line<BodyLine>((l) => l.body === 'enter' && l.executionId === id);

      const statuses: string[] = [];
      let polling = true;
      const poll = (async () => {
        while (polling) {
          const status = (await store.get(id))?.status; // the persisted status, as written
          if (status !== undefined && statuses[statuses.length - 1] !== status) statuses.push(status);
          await sleep(10);
        }
      })();

      w1.child.kill('SIGSTOP');
      const w2 = spawnJsonChild(WORKER, worker, children);
      await w2.line((l) => l.ready === true);
      // W2 takes the execution only once W1's lease and step lock expired; it stays inside the
      // step until W1, woken, has stopped.
      const w2Enter = await w2.line<BodyLine>((l) => l.body === 'enter' && l.executionId === id);
      w1.child.kill('SIGCONT');
      const w1Exit = await w1.line<BodyLine>((l) => l.body === 'exit' && l.executionId === id);
      await w1.line((l) => l.event === 'run.stopped');
      w2.child.stdin!.write('finish\n');
      await w2.line((l) => l.event === 'run.completed');
      await sleep(300); // anything W1 might still write would land now
      polling = false;
      await poll;

      // Only forward steps of pending → running → completed, ending completed: nothing of W1 landed.
      const order = ['pending', 'running', 'completed'];
      expect(statuses.at(-1)).toBe('completed');
      expect(statuses.map((s) => order.indexOf(s))).toEqual(
        [...statuses.map((s) => order.indexOf(s))].sort((x, y) => x - y).filter((i) => i >= 0),
      );
      expect(w1Exit.reason === 'lease_lost' || w1Exit.reason === 'hold_lost').toBe(true);
      expect(w1.lines((l) => l.event === 'run.stopped')).toEqual([expect.objectContaining({ reason: 'lease_lost' })]);
      expect(w1.lines((l) => l.event === 'run.failed' || l.event === 'run.completed')).toEqual([]);
      expect(w2Enter.pid).toBe(w2.pid);

      const final = await store.get(id);
      expect(final?.status).toBe('completed');
      const result = await runtime.engine.result(id);
      expect(result?.status === 'completed' && result.value).toEqual({ by: w2.pid });
      // The step's history: each attempt once, each with one worker; the one that succeeded is W2's.
      const runs = final?.steps.b?.runs ?? [];
      console.info(`[postgres-zombie] b's attempts: ${JSON.stringify(runs)}`);
      expect(new Set(runs.map((r) => r.attempt)).size).toBe(runs.length);
      expect(runs.filter((r) => r.outcome === 'succeeded')).toEqual([
        expect.objectContaining({ worker: expect.stringContaining(`-${w2.pid}/`) }),
      ]);
      expect(final?.steps.c?.result).toEqual({ by: w2.pid });
    }, 600_000);
  },
);
