/**
 * A frozen worker never falsifies a live run's record (decision 064): worker W1 runs execution
 * A's locked step; W1 is SIGSTOPped past its liveness lease and its step lock's TTL; A is
 * delivered again to W2, which runs it; W1 is SIGCONTed while W2 is still inside the step. The
 * record, polled every 10 ms, only ever reads pending → running → completed: W1's body is
 * aborted at once (its lease's local deadline passed) and W1 writes nothing.
 *
 * The step's body runs until the test tells it to finish (or its abort), not for a time: W1's can
 * end only by its abort, and W2's ends only once W1 has stopped, however slow the machine.
 */
import type { ChildProcess } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { createRedisRuntime, type RedisRuntime } from '../../src/bullmq.js';
import { createRedisBackend, type RedisBackend } from '../../src/storage/redis/index.js';
import { spawnJsonChild } from '../support/json-child.js';
import { useRedisServer } from '../support/use-redis-server.js';
import { zombieReactor, type BodyLine } from './fixtures/zombie-reactor.js';

const WORKER = new URL('./fixtures/zombie-worker.ts', import.meta.url).pathname;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('a frozen worker (SIGSTOP past its lease) writes nothing once it runs again', () => {
  const server = useRedisServer();
  const children = new Set<ChildProcess>();
  let runtime: RedisRuntime | undefined;
  let backend: RedisBackend | undefined;
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await runtime?.close();
    await backend?.close();
  });

  it('the record reads only pending → running → completed; the stale worker stops with lease_lost', async () => {
    const prefix = 'zombie1';
    const reactor = zombieReactor(() => undefined);
    runtime = createRedisRuntime({ url: server.url, prefix, reactors: [reactor] });
    backend = createRedisBackend({ url: server.url, prefix });
    const store = backend.store;
    const w1 = spawnJsonChild(WORKER, { url: server.url, prefix, hold: true }, children);
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
    const w2 = spawnJsonChild(WORKER, { url: server.url, prefix, hold: true }, children);
    await w2.line((l) => l.ready === true);
    // W2 takes the execution only once W1's lease and step lock expired; W2 stays inside the step
    // until W1, woken, has stopped.
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
    // (A poll may miss `running`: with the default checkpoint interval it may be written late or not at all.)
    const order = ['pending', 'running', 'completed'];
    expect(statuses.at(-1)).toBe('completed');
    expect(statuses.map((s) => order.indexOf(s))).toEqual(
      [...statuses.map((s) => order.indexOf(s))].sort((x, y) => x - y).filter((i) => i >= 0),
    );
    expect(w1Exit.reason === 'lease_lost' || w1Exit.reason === 'hold_lost').toBe(true);
    expect(w1.lines((l) => l.event === 'run.stopped')).toEqual([expect.objectContaining({ reason: 'lease_lost' })]);
    expect(w1.lines((l) => l.event === 'run.failed' || l.event === 'run.completed')).toEqual([]);
    expect(w2Enter.pid).toBe(w2.pid);
    const final = await runtime.engine.result(id);
    expect(final?.status).toBe('completed');
    expect(final?.status === 'completed' && final.value).toEqual({ by: w2.pid });
  }, 600_000);
});
