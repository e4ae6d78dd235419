/**
 * On one Redis server the execution stream is `ordered` (docs/decisions/153): a worker sends a
 * checkpoint's events right before its record, and writes the terminal record without waiting for
 * the appends' replies. A reader that finds a terminal record always finds its terminal event in
 * the stream: an observer connection reads each record in a loop while a durable-mode worker runs
 * them, and checks the stream whenever the record is terminal.
 */
import { Redis } from 'ioredis';
import { afterEach, expect, test } from 'vitest';
import { createRedisRuntime, type RedisRuntime } from '../../src/bullmq.js';
import { reactor } from '../../src/index.js';
import { RedisKeys } from '../../src/storage/redis/keys.js';
import { useRedisServer } from '../support/use-redis-server.js';

const server = useRedisServer();
const PREFIX = 'ord';
const EXECUTIONS = 20;

const three = reactor('stream-order')
  .step('a', { run: () => 1 })
  .step('b', { args: ($) => ({ a: $.result('a') }), run: ({ a }) => a + 1 })
  .step('c', { args: ($) => ({ b: $.result('b') }), run: ({ b }) => b + 1 })
  .returns('c');

let runtime: RedisRuntime | undefined;
let observer: Redis | undefined;
afterEach(async () => {
  await runtime?.close();
  observer?.disconnect();
});

test('a terminal record is never read before its terminal event is in the stream (durable mode)', async () => {
  runtime = createRedisRuntime({ url: server.url, prefix: PREFIX, reactors: [three], checkpointIntervalMs: 0 });
  await runtime.ready();
  observer = new Redis(server.url);
  const keys = new RedisKeys(PREFIX);
  const ids: string[] = [];
  for (let i = 0; i < EXECUTIONS; i++) ids.push((await runtime.engine.start(three, {})).executionId);
  const worker = runtime.startWorker({ concurrency: 8 });
  const pending = new Set(ids);
  const checked: string[] = [];
  try {
    while (pending.size > 0) {
      for (const id of [...pending]) {
        const json = await observer.get(keys.execution(id));
        const status = json === null ? undefined : (JSON.parse(json) as { status: string }).status;
        if (status !== 'completed') continue;
        const entries = await observer.xrange(keys.executionStream(id), '-', '+');
        const types = entries.map(([, fields]) => (JSON.parse(fields[1]!) as { type: string }).type);
        expect(types.at(-1)).toBe('run.completed');
        expect(types).toContain('step.succeeded');
        pending.delete(id);
        checked.push(id);
      }
    }
  } finally {
    await worker.close();
  }
  expect(checked).toHaveLength(EXECUTIONS);
});
