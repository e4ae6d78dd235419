/**
 * `ts-reactor executions retry-step | skip-step | rollback | fork` (entries of the actions table) against a throwaway
 * redis-server, through `main()` in this process: nothing happens without `--yes`; with it each
 * acts through the engine on the app module's reactors, and a worker (here, in the test) goes on.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createRedisRuntime, type RedisRuntime } from '../../src/bullmq.js';
import { main } from '../../src/cli/main.js';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';
import { steerOrder } from './fixtures/steer-app.js';

const app = fileURLToPath(new URL('./fixtures/steer-app.ts', import.meta.url));
const prefix = 'cli-steer';
let redis: RedisServerHandle;
let runtime: RedisRuntime;

beforeAll(async () => {
  redis = await startRedisServer();
  runtime = createRedisRuntime({ url: redis.url, prefix, reactors: [steerOrder] });
  runtime.startWorker({ concurrency: 2 });
});
afterAll(async () => {
  await runtime?.close();
  await redis?.dispose();
});

async function cli(args: readonly string[], module = true): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const target = ['--redis', redis.url, '--prefix', prefix, ...(module ? ['--module', app] : [])];
  const code = await main(['executions', ...args, ...target], {
    out: (l) => out.push(l),
    err: (l) => err.push(l),
  });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

async function pausedRun(orderId: string): Promise<string> {
  const queued = await runtime.engine.start(steerOrder, { orderId, amount: -1 });
  expect(await runtime.engine.wait(queued.executionId, { timeoutMs: 20_000 })).toBePausedOnFailure('charge');
  return queued.executionId;
}

const statusOf = async (id: string): Promise<string | undefined> => (await runtime.engine.result(id))?.status;

describe('executions retry-step | skip-step | rollback | fork', () => {
  test('retry-step does nothing without --yes; with --yes and --args the step runs again in a worker and the run completes', async () => {
    const id = await pausedRun('c1');
    const listed = await cli(['list', '--status', 'paused'], false);
    expect(listed.out).toContain('paused on the failure of charge: cannot charge -1');
    const shown = await cli(['show', id], false);
    expect(shown.out).toMatch(/paused on {2}the failure of step charge at .*: Error: cannot charge -1/);
    const dry = await cli(['retry-step', id, '--args', '{"cents":5}']);
    expect(dry.code).toBe(2);
    expect(dry.err).toContain('pass --yes');
    expect(await statusOf(id)).toBe('paused');
    const done = await cli(['retry-step', id, '--args', '{"cents":5}', '--yes']);
    expect(done.code, done.err).toBe(0);
    expect(done.out).toBe(`step retried: execution ${id} is queued (a worker continues it)`);
    await expect.poll(() => statusOf(id), { timeout: 20_000 }).toBe('completed');
    expect(await runtime.engine.result(id)).toMatchObject({ value: 'shipped with ch-5' });
    // Not paused on a failure any more: the engine's typed refusal, exit code 1.
    const again = await cli(['retry-step', id, '--yes']);
    expect(again.code).toBe(1);
    expect(again.err).toContain('it is completed');
  });

  test('skip-step continues with the value; rollback ends the run failed; --json prints the outcome', async () => {
    const skipped = await pausedRun('c2');
    const skip = await cli(['skip-step', skipped, '--value', '"ch-manual"', '--yes', '--json']);
    expect(skip.code, skip.err).toBe(0);
    expect(JSON.parse(skip.out)).toEqual({
      action: 'skip-step',
      target: skipped,
      executionId: skipped,
      status: 'queued',
    });
    await expect.poll(() => statusOf(skipped), { timeout: 20_000 }).toBe('completed');
    expect(await runtime.engine.result(skipped)).toMatchObject({ value: 'shipped with ch-manual' });
    const rolled = await pausedRun('c3');
    const rollback = await cli(['rollback', rolled, '--yes']);
    expect(rollback.code, rollback.err).toBe(0);
    expect(rollback.out).toBe(`rolled back: execution ${rolled} is failed: cannot charge -1`);
    expect(await statusOf(rolled)).toBe('failed');
  });

  test('fork --from with a replaced --input starts a linked execution that completes; usage errors exit 2', async () => {
    const source = await pausedRun('c4');
    const fork = await cli(['fork', source, '--step', 'charge', '--input', '{"orderId":"c4","amount":7}', '--yes']);
    expect(fork.code, fork.err).toBe(0);
    const forkId = /new execution (\S+) is queued/.exec(fork.out)?.[1];
    expect(forkId).toBeDefined();
    await expect.poll(() => statusOf(forkId!), { timeout: 20_000 }).toBe('completed');
    expect(await runtime.engine.result(forkId!)).toMatchObject({ value: 'shipped with ch-7' });
    expect((await runtime.engine.store.get(forkId!))?.retryOf).toBe(source);
    expect((await cli(['fork', source, '--yes'])).err).toContain('missing --step <name>');
    expect((await cli(['retry-step', source, '--args', '{bad', '--yes'])).code).toBe(2);
  });
});
