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
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';

let server: RedisServerHandle;
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown): void => void unhandled.push(reason);

beforeAll(async () => {
  server = await startRedisServer();
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
  .step('hello', { args: ($) => ({ name: $.input('name') }), run: async ({ name }) => (await new Promise((r) => setTimeout(r, 5)), `hello ${name}`) })
  .step('shout', { args: ($) => ({ text: $.result('hello') }), lock: { key: ({ text }) => `shout:${text}` }, run: ({ text }) => text.toUpperCase() })
  .returns('shout');

const settle = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('closing a Redis runtime right after wait', () => {
  test('start, wait, close at once (worker and enqueuer, with a logger): no unobserved rejection', async () => {
    const warnings: string[] = [];
    const logger = { debug: () => undefined, info: () => undefined, warn: (_o: unknown, msg?: string) => void warnings.push(msg ?? ''), error: (_o: unknown, msg?: string) => void warnings.push(msg ?? '') };
    for (let round = 0; round < 8; round++) {
      const prefix = `close${round}`;
      const worker = createRedisRuntime({ url: server.url, prefix, reactors: [greet], logger, background: { workerWaitMs: round % 2 === 0 ? 0 : 50 } });
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
