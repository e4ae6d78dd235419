/**
 * Versioned definitions on Redis + BullMQ (decision 082), with a throwaway redis-server: a v1
 * execution parked in a step's retry delay is left alone by a worker with only v2 (waiting for
 * version 1), and completed on v1 by a worker with both versions registered.
 */
import { afterAll, describe, expect, test } from 'vitest';
import { createRedisRuntime } from '../../src/bullmq.js';
import { reactor, type AnyReactorDefinition, type ReactorEvent } from '../../src/index.js';
import { useRedisServer } from '../support/use-redis-server.js';
import { until } from './helpers.js';

const server = useRedisServer();
const closers: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => undefined);
});

const calls: string[] = [];
let bFailures = 1;

const v1: AnyReactorDefinition = reactor('flow-redis', { version: '1' })
  .step('a', { run: () => (calls.push('a@1'), 1) })
  .step('b', {
    waitFor: ['a'],
    retry: { maxAttempts: 3, baseDelay: 600 },
    run: () => {
      calls.push('b@1');
      if (bFailures-- > 0) throw new Error('flaky');
      return 2;
    },
  })
  .build();

const v2: AnyReactorDefinition = reactor('flow-redis', { version: '2' })
  .step('a2', { run: () => (calls.push('a2@2'), 1) })
  .step('b', { waitFor: ['a2'], run: () => (calls.push('b@2'), 2) })
  .build();

describe('on Redis, versioned definitions', () => {
  test('a v2-only worker leaves a v1 execution waiting for version 1; a worker with both completes it on v1', async () => {
    const options = { url: server.url, prefix: 'ver1', background: { parkFallbackMs: 200 } };
    const first = createRedisRuntime({ ...options, reactors: [v1] });
    first.startWorker({ concurrency: 2 });
    const started = await first.engine.start(v1, {});
    const id = started.executionId;
    await until(
      async () => (await first.engine.store.get(id))?.steps['b']?.status === 'retrying',
      10_000,
      'b retrying',
    );
    await first.close();

    const only2 = createRedisRuntime({ ...options, reactors: [v2] });
    closers.push(() => only2.close());
    const events: ReactorEvent[] = [];
    only2.engine.subscribe((e) => events.push(e));
    only2.startWorker({ concurrency: 2 });
    await until(() => events.some((e) => e.type === 'run.version_unavailable'), 10_000, 'a version wait');
    const waiting = await only2.engine.store.get(id);
    expect(waiting?.status).toBe('pending');
    expect(waiting?.steps['b']?.attempts).toBe(1);
    expect(waiting?.background?.waitingForVersion).toMatchObject({ fingerprint: v1.fingerprint, version: '1' });
    await only2.close();

    const both = createRedisRuntime({ ...options, reactors: [v1, v2] });
    closers.push(() => both.close());
    both.startWorker({ concurrency: 2 });
    const done = await both.engine.wait(id, { timeoutMs: 15_000, pollMs: 20 });
    expect(done.status).toBe('completed');
    const record = await both.engine.store.get(id);
    expect(record?.fingerprint).toBe(v1.fingerprint);
    expect(record?.background?.waitingForVersion).toBeUndefined();
    expect(calls).toEqual(['a@1', 'b@1', 'b@1']);
  }, 40_000);
});
