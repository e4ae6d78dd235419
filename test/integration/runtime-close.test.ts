/**
 * Closing a Redis runtime right after `engine.wait(...)` leaves nothing behind that rejects
 * later: no command on a closed connection whose promise nobody observes (docs/decisions/048).
 * A process-wide `unhandledRejection` listener must see nothing, across many start → wait →
 * close cycles with a worker in this process and an enqueuing runtime beside it.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { createRedisRuntime } from '../../src/bullmq.js';
import { reactor } from '../../src/index.js';
import { freePort, startRedisServer, type RedisServerHandle } from '../support/redis-server.js';
import { startInfoHoldingProxy } from '../support/info-holding-proxy.js';

let server: RedisServerHandle;
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown): void => void unhandled.push(reason);

beforeAll(async () => {
  server = await startRedisServer({ persistence: 'aof-everysec' }); // durable: the runtime's start-up check has nothing to warn about
  process.on('unhandledRejection', onUnhandled);
});

afterAll(async () => {
  process.off('unhandledRejection', onUnhandled);
  await server?.dispose();
});

const greet = reactor('close-greet')
  .input({ name: z.string() })
  .background('all')
  .withLock({ key: () => 'greet' }) // one key: the runs contend, park and wake one another
  .step('hello', {
    args: ($) => ({ name: $.input('name') }),
    run: async ({ name }) => (await new Promise((r) => setTimeout(r, 5)), `hello ${name}`),
  })
  .step('shout', {
    args: ($) => ({ text: $.result('hello') }),
    lock: { key: ({ text }) => `shout:${text}` },
    run: ({ text }) => text.toUpperCase(),
  })
  .returns('shout');

const settle = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('closing a Redis runtime right after wait', () => {
  test('start, wait, close at once (worker and enqueuer, with a logger): no unobserved rejection', async () => {
    const warnings: string[] = [];
    const logger = {
      debug: () => undefined,
      info: () => undefined,
      warn: (_o: unknown, msg?: string) => void warnings.push(msg ?? ''),
      error: (_o: unknown, msg?: string) => void warnings.push(msg ?? ''),
    };
    for (let round = 0; round < 8; round++) {
      const prefix = `close${round}`;
      const worker = createRedisRuntime({
        url: server.url,
        prefix,
        reactors: [greet],
        logger,
        background: { workerWaitMs: round % 2 === 0 ? 0 : 50 },
      });
      const enqueuer = createRedisRuntime({ url: server.url, prefix, reactors: [greet] });
      worker.startWorker({ concurrency: 4 });
      const started = await Promise.all(['a', 'b', 'c'].map((name) => enqueuer.engine.start(greet, { name })));
      const done = await enqueuer.engine.wait(started[0]!.executionId, { timeoutMs: 10_000, pollMs: 5 });
      expect(done?.status).toBe('completed');
      await Promise.all([worker.close(), enqueuer.close()]);
    }
    await settle(300); // a rejection of a command sent after close surfaces within a few ticks
    expect(unhandled.map(String)).toEqual([]);
    // The wake-ups the last jobs started ran before the connections closed (engine.idle()), so none of them failed.
    expect(warnings).toEqual([]);
  }, 60_000);
});

describe('closing a Redis runtime while BullMQ is still setting up its connections', () => {
  test('close with every BullMQ version check (INFO) unanswered: it waits for them, and nothing rejects unobserved', async () => {
    const proxy = await startInfoHoldingProxy(server.port);
    try {
      const runtime = createRedisRuntime({ url: proxy.url, prefix: 'close-setup', reactors: [greet] });
      runtime.startWorker({ concurrency: 2 });
      await proxy.untilHeld(3); // the queue's connection, the worker's, the worker's blocking one
      const closing = runtime.close();
      // Let the INFOs through once a held connection was cut (the old close did that at once), or soon after.
      await Promise.race([proxy.heldClosed(), settle(200)]);
      proxy.release();
      await closing;
      await settle(100); // a rejection of the cut INFO surfaces within a few ticks
      expect(unhandled.map(String)).toEqual([]);
      expect(proxy.open()).toBe(0);
    } finally {
      await proxy.close();
    }
  }, 30_000);

  test('close while Redis cannot be reached: it does not wait for a set-up that cannot finish, and nothing rejects unobserved', async () => {
    const runtime = createRedisRuntime({
      url: `redis://127.0.0.1:${await freePort()}`,
      prefix: 'close-down',
      reactors: [greet],
    });
    runtime.startWorker({ concurrency: 2 });
    await runtime.close(); // right away: the first connection attempts still in flight
    await settle(100);
    expect(unhandled.map(String)).toEqual([]);
  });
});
