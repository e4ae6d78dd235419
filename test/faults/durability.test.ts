/**
 * Durability stated and checked: the start-up check of a Redis runtime against real throwaway
 * servers (no persistence, RDB only, AOF always / everysec, an evicting policy, CONFIG renamed),
 * `requireDurability` refusing to start, the CLI worker's warning, and `engine.wait` of an
 * execution without a record (never started, or lost by a restart without persistence).
 */
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { createRedisRuntime, type RedisRuntime, type RedisRuntimeOptions } from '../../src/bullmq.js';
import { runWorkerCommand } from '../../src/cli/worker.js';
import { createEmbeddedEngine } from '../../src/embedded.js';
import {
  DurabilityError,
  errorFromJSON,
  errorToJSON,
  ExecutionNotFoundError,
  reactor,
  type Logger,
} from '../../src/index.js';
import { checkDurability } from '../../src/storage/redis/index.js';
import { useRedisServer, type SuiteRedisServer } from '../support/use-redis-server.js';

const echo = reactor('durability-echo')
  .input({ n: z.number() })
  .step('echo', { args: ($) => ({ n: $.input('n') }), run: ({ n }) => n })
  .returns('echo');

interface Line {
  readonly level: keyof Logger;
  readonly message: string;
}

/** What the start-up check logs (other engine lines, e.g. of runs, are left out). */
const CHECK_LINE = /Redis|requireDurability|takes no jobs/;

/** A logger that keeps every line; `at(level)` lists the start-up check's lines at that level. */
function recording(): {
  readonly logger: Logger;
  readonly lines: Line[];
  readonly at: (level: keyof Logger) => string[];
} {
  const lines: Line[] = [];
  const keep =
    (level: keyof Logger) =>
    (fields: object | string, message?: string): void =>
      void lines.push({ level, message: message ?? (typeof fields === 'string' ? fields : '') });
  return {
    logger: { debug: keep('debug'), info: keep('info'), warn: keep('warn'), error: keep('error') },
    lines,
    at: (level) => lines.filter((l) => l.level === level && CHECK_LINE.test(l.message)).map((l) => l.message),
  };
}

/** Runs `body` with a runtime on `server` (its own prefix), closed afterwards. */
async function withRuntime<T>(
  server: SuiteRedisServer,
  options: Partial<RedisRuntimeOptions>,
  body: (runtime: RedisRuntime) => Promise<T>,
): Promise<T> {
  const runtime = createRedisRuntime({
    url: server.url,
    prefix: `dur-${Math.random().toString(36).slice(2, 8)}`,
    reactors: [echo],
    ...options,
  });
  try {
    return await body(runtime);
  } finally {
    await runtime.close();
  }
}

async function configSet(url: string, ...args: string[]): Promise<void> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    await redis.call('CONFIG', 'SET', ...args);
  } finally {
    redis.disconnect();
  }
}

async function report(url: string) {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    return await checkDurability(redis);
  } finally {
    redis.disconnect();
  }
}

describe('checkDurability reads what survives a restart', () => {
  const none = useRedisServer();
  const rdb = useRedisServer({ persistence: 'rdb' });
  const always = useRedisServer({ persistence: 'aof' });
  const everysec = useRedisServer({ persistence: 'aof-everysec' });
  const renamed = useRedisServer({ extraArgs: ['--rename-command', 'CONFIG', ''] });

  test('no persistence: nothing survives, one warning', async () => {
    const r = await report(none.url);
    expect(r).toMatchObject({
      checked: true,
      persistence: 'none',
      evicts: false,
      durable: false,
      settings: { appendonly: 'no', save: '', maxmemoryPolicy: 'noeviction' },
    });
    expect(r.warnings).toHaveLength(1);
    expect(r.warnings[0]).toContain('Redis persistence is off');
  });

  test('RDB snapshots only: a clean restart keeps everything, a crash does not; one warning', async () => {
    const r = await report(rdb.url);
    expect(r).toMatchObject({
      checked: true,
      persistence: 'snapshots',
      durable: false,
      settings: { appendonly: 'no', save: '60 1' },
    });
    expect(r.survives).toContain('a crash loses every write since the last snapshot');
    expect(r.warnings).toEqual([expect.stringContaining('RDB snapshots only')]);
  });

  test('AOF with appendfsync always or everysec and noeviction: durable, no warning', async () => {
    expect(await report(always.url)).toMatchObject({
      checked: true,
      persistence: 'aof_always',
      evicts: false,
      durable: true,
      warnings: [],
    });
    expect(await report(everysec.url)).toMatchObject({
      checked: true,
      persistence: 'aof_everysec',
      evicts: false,
      durable: true,
      warnings: [],
    });
  });

  test('an evicting maxmemory-policy is a warning even with AOF', async () => {
    await configSet(everysec.url, 'maxmemory-policy', 'allkeys-lru');
    try {
      const r = await report(everysec.url);
      expect(r).toMatchObject({ persistence: 'aof_everysec', evicts: true, durable: false });
      expect(r.warnings).toEqual([expect.stringContaining('maxmemory-policy is allkeys-lru')]);
    } finally {
      await configSet(everysec.url, 'maxmemory-policy', 'noeviction');
    }
  });

  test('settings changed at run time are read as they are now (CONFIG SET appendonly yes)', async () => {
    await configSet(none.url, 'appendonly', 'yes');
    try {
      expect(await report(none.url)).toMatchObject({ persistence: 'aof_everysec', durable: true });
    } finally {
      await configSet(none.url, 'appendonly', 'no');
    }
  });

  test('a renamed CONFIG command is tolerated: unchecked, with a "could not check" warning', async () => {
    const r = await report(renamed.url);
    expect(r).toMatchObject({ checked: false, persistence: 'unknown', evicts: undefined, durable: false });
    expect(r.reason).toMatch(/unknown command/i);
    expect(r.warnings).toEqual([expect.stringContaining('could not check the Redis durability settings')]);
  });
});

describe('a Redis runtime checks durability at start-up', () => {
  const none = useRedisServer();
  const always = useRedisServer({ persistence: 'aof' });
  const renamed = useRedisServer({ extraArgs: ['--rename-command', 'CONFIG', ''] });

  test('no persistence: a warning through the engine logger, and work goes on', async () => {
    const log = recording();
    await withRuntime(none, { logger: log.logger }, async (runtime) => {
      const r = await runtime.ready();
      expect(r.persistence).toBe('none');
      expect(log.at('warn')).toEqual([expect.stringContaining('Redis persistence is off')]);
      expect(log.at('error')).toEqual([]);
      expect((await runtime.engine.start(echo, { n: 1 })).status).toBe('queued');
    });
  });

  test('an evicting policy: a warning naming it', async () => {
    await configSet(always.url, 'maxmemory-policy', 'volatile-lru');
    const log = recording();
    try {
      await withRuntime(always, { logger: log.logger }, async (runtime) => {
        expect((await runtime.ready()).evicts).toBe(true);
        expect(log.at('warn')).toEqual([expect.stringContaining('maxmemory-policy is volatile-lru')]);
      });
    } finally {
      await configSet(always.url, 'maxmemory-policy', 'noeviction');
    }
  });

  test('AOF + noeviction: no warning, and requireDurability starts and runs', async () => {
    const log = recording();
    await withRuntime(always, { logger: log.logger, requireDurability: true }, async (runtime) => {
      expect((await runtime.ready()).durable).toBe(true);
      runtime.startWorker({ concurrency: 2 });
      const queued = await runtime.engine.start(echo, { n: 7 });
      const done = await runtime.engine.wait(queued.executionId, { timeoutMs: 15_000, pollMs: 10 });
      expect(done.status === 'completed' && done.value).toBe(7);
    });
    expect(log.at('warn')).toEqual([]);
    expect(log.at('error')).toEqual([]);
    expect(log.at('debug')).toEqual([
      expect.stringContaining('Redis durability: everything Redis acknowledged survives a restart or a crash'),
    ]);
  });

  test('requireDurability on a Redis without persistence: ready, run and start reject with durability_required; a worker takes no jobs', async () => {
    const log = recording();
    const prefix = 'dur-refused';
    const enqueuer = createRedisRuntime({ url: none.url, prefix, reactors: [echo] });
    try {
      const queued = await enqueuer.engine.start(echo, { n: 1 });
      await withRuntime(none, { prefix, logger: log.logger, requireDurability: true }, async (runtime) => {
        const refused = await runtime.ready().catch((error: unknown) => error);
        expect(refused).toBeInstanceOf(DurabilityError);
        expect(refused).toMatchObject({
          code: 'durability_required',
          details: { persistence: 'none', evicts: false, checked: true },
        });
        expect((refused as Error).message).toContain('Redis persistence is off');
        await expect(runtime.engine.start(echo, { n: 2 })).rejects.toMatchObject({ code: 'durability_required' });
        await expect(runtime.engine.run(echo, { n: 3 })).rejects.toBeInstanceOf(DurabilityError);
        runtime.startWorker({ concurrency: 2 });
        await expect
          .poll(() => log.at('error').filter((m) => m.startsWith('this worker takes no jobs')).length)
          .toBe(1);
        // The worker never started consuming: the job enqueued before is still waiting.
        expect((await enqueuer.engine.result(queued.executionId))?.status).toBe('queued');
      });
      expect(log.at('error')[0]).toMatch(/^refusing to start: requireDurability: Redis is not durable/);
      expect(log.at('warn')).toEqual([]);
    } finally {
      await enqueuer.close();
    }
  });

  test('DurabilityError keeps its class through JSON (a record, another process)', () => {
    const error = new DurabilityError({
      persistence: 'none',
      evicts: false,
      checked: true,
      warnings: ['Redis persistence is off'],
    });
    const revived = errorFromJSON(errorToJSON(error));
    expect(revived).toBeInstanceOf(DurabilityError);
    expect(revived).toMatchObject({ code: 'durability_required', details: { persistence: 'none' } });
  });

  test('DurabilityError takes its verdict from the backend; its details stay the generic verdict', () => {
    const info = { persistence: 'none', evicts: false, checked: true, warnings: ['synchronous_commit is off'] };
    const error = new DurabilityError(
      { ...info, durable: false } as typeof info,
      'Postgres is not durable: fsync is off',
    );
    expect(error.message).toBe('requireDurability: Postgres is not durable: fsync is off');
    expect(error.details).toEqual(info);
    expect(errorFromJSON(errorToJSON(error)).message).toBe(error.message);
    expect(new DurabilityError(info).message).toBe(
      'requireDurability: the backend is not durable: synchronous_commit is off',
    );
  });

  test('CONFIG renamed: a "could not check" warning; requireDurability refuses', async () => {
    const log = recording();
    await withRuntime(renamed, { logger: log.logger }, async (runtime) => {
      expect((await runtime.ready()).checked).toBe(false);
      expect(log.at('warn')).toEqual([expect.stringContaining('could not check the Redis durability settings')]);
      expect((await runtime.engine.start(echo, { n: 1 })).status).toBe('queued');
    });
    await withRuntime(renamed, { requireDurability: true }, async (runtime) => {
      await expect(runtime.ready()).rejects.toMatchObject({ code: 'durability_required', details: { checked: false } });
    });
  });
});

describe('the CLI worker prints the warning', () => {
  const none = useRedisServer();
  const fixture = fileURLToPath(new URL('../cli/fixtures/worker-reactors.ts', import.meta.url));

  function capture() {
    const out: string[] = [];
    const err: string[] = [];
    return { out, err, io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) } };
  }

  test('without persistence: a warning on stderr before the ready line', async () => {
    const c = capture();
    const stop = new AbortController();
    const running = runWorkerCommand(['--redis', none.url, '--module', fixture, '--prefix', 'dur-cli'], c.io, {
      env: {},
      signals: [],
      stop: stop.signal,
    });
    await expect.poll(() => c.out.some((l) => l.includes('ts-reactor worker: ready')), { timeout: 15_000 }).toBe(true);
    stop.abort();
    expect(await running).toBe(0);
    // Beside it, a fresh server has no key under the prefix yet: that warning too.
    expect(c.err.filter((l) => !l.includes('no key exists under the prefix'))).toEqual([
      expect.stringMatching(/^ts-reactor worker: warning: Redis persistence is off/),
    ]);
  });

  test('--require-durability: exit 2 with the reason, no ready line', async () => {
    const c = capture();
    expect(
      await runWorkerCommand(
        ['--redis', none.url, '--module', fixture, '--prefix', 'dur-cli', '--require-durability'],
        c.io,
        { env: {}, signals: [] },
      ),
    ).toBe(2);
    expect(c.err).toEqual([
      expect.stringMatching(/^ts-reactor worker: requireDurability: Redis is not durable: Redis persistence is off/),
    ]);
    expect(c.out).toEqual([]);
  });
});

describe('engine.wait of an execution without a record rejects at once with execution_not_found', () => {
  const none = useRedisServer();
  const always = useRedisServer({ persistence: 'aof' });

  test('memory: an id never started', async () => {
    const engine = createEmbeddedEngine({ reactors: [echo] });
    try {
      const began = Date.now();
      const refused = await engine.wait('no-such-execution').catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(ExecutionNotFoundError);
      expect(refused).toMatchObject({ code: 'execution_not_found', details: { executionId: 'no-such-execution' } });
      expect(Date.now() - began).toBeLessThan(5_000); // not the 30 s default timeout
      expect(await engine.result('no-such-execution')).toBeUndefined();
    } finally {
      await engine.close();
    }
  });

  test('Redis: an id never started', async () => {
    await withRuntime(none, {}, async (runtime) => {
      const began = Date.now();
      await expect(runtime.engine.wait('no-such-execution')).rejects.toMatchObject({ code: 'execution_not_found' });
      expect(Date.now() - began).toBeLessThan(5_000);
      expect(await runtime.engine.result('no-such-execution')).toBeUndefined();
    });
  });

  test('Redis without persistence: a started execution vanishes in a restart, and wait rejects instead of waiting', async () => {
    await withRuntime(none, {}, async (runtime) => {
      const queued = await runtime.engine.start(echo, { n: 1 }); // no worker: it stays queued
      await none.handle.restart();
      const began = Date.now();
      await expect(runtime.engine.wait(queued.executionId)).rejects.toBeInstanceOf(ExecutionNotFoundError);
      expect(Date.now() - began).toBeLessThan(10_000); // the reconnect, not the 30 s timeout
    });
  });

  test('Redis with AOF: the same execution survives the restart (still queued)', async () => {
    await withRuntime(always, {}, async (runtime) => {
      const queued = await runtime.engine.start(echo, { n: 1 });
      await always.handle.restart();
      await expect
        .poll(async () => (await runtime.engine.result(queued.executionId).catch(() => undefined))?.status, {
          timeout: 10_000,
        })
        .toBe('queued');
      expect((await runtime.engine.wait(queued.executionId, { timeoutMs: 50 })).status).toBe('queued');
    });
  });
});
