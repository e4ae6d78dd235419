/**
 * The Lua scripts on their own: the registry (every file has a descriptor with the header's
 * arity), the generated module, and each script run directly with crafted arguments.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CoordinationUnavailableError, ReactorError } from '../../src/errors.js';
import { ScriptError } from '../../src/storage/redis/script-error.js';
import { RedisKeys } from '../../src/storage/redis/keys.js';
import { luaSources } from '../../src/storage/redis/lua/sources.gen.js';
import { runCommand, runScript, setOutageTolerance, toBackendError } from '../../src/storage/redis/script.js';
import { scripts } from '../../src/storage/redis/scripts.js';
import { GENERATED_FILE, LUA_DIR, generateLuaSources, luaScriptNames } from '../../scripts/gen-lua.js';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The KEYS arity a header declares: the highest `KEYS[n]`, or `variadic` for `KEYS[1..n]`. */
function headerArity(source: string): number | 'variadic' {
  const header = /^--\[\[([\s\S]*?)\]\]/.exec(source)?.[1] ?? '';
  if (/KEYS\[1\.\.n\]/.test(header)) return 'variadic';
  const indexes = [...header.matchAll(/^\s*KEYS\[(\d+)\]/gm)].map((m) => Number(m[1]));
  return indexes.length === 0 ? 0 : Math.max(...indexes);
}

describe('script registry', () => {
  const descriptors = Object.values(scripts);

  it('has exactly one descriptor per .lua file, and the sources module is up to date', () => {
    const names = luaScriptNames();
    expect(names.length).toBeGreaterThan(10);
    expect(descriptors.map((d) => d.name).sort()).toEqual(names);
    expect(Object.keys(luaSources).sort()).toEqual(names);
    expect(readFileSync(GENERATED_FILE, 'utf8')).toBe(generateLuaSources());
  });

  it.each(luaScriptNames())(
    '%s: header documents purpose, KEYS, ARGV, returns and errors; arity matches; under 80 lines',
    (name) => {
      const source = readFileSync(join(LUA_DIR, `${name}.lua`), 'utf8');
      const descriptor = descriptors.find((d) => d.name === name);
      expect(descriptor).toBeDefined();
      expect(descriptor?.source).toBe(source);
      expect(headerArity(source)).toBe(descriptor?.numberOfKeys);
      const header = /^--\[\[([\s\S]*?)\]\]/.exec(source)?.[1] ?? '';
      expect(header).toMatch(new RegExp(`^\\s*${name}: \\S`));
      expect(header).toMatch(/KEYS\[1/);
      expect(header).toMatch(/ARGV/);
      expect(header).toMatch(/Returns/);
      expect(header).toMatch(/Errors:/);
      expect(source.split('\n').length).toBeLessThanOrEqual(85);
      // Keys arrive in KEYS only, and no client clock is read.
      expect(source).not.toMatch(/redis\.call\(\s*'[A-Z]+',\s*'/);
    },
  );
});

describe('scripts on a live server', () => {
  let server: RedisServerHandle;
  let redis: Redis;
  let keys: RedisKeys;
  const time = async (): Promise<number> => {
    const [s, us] = await redis.time();
    return Number(s) * 1000 + Math.floor(Number(us) / 1000);
  };

  beforeAll(async () => {
    server = await startRedisServer();
    redis = new Redis(server.url);
  });
  afterAll(async () => {
    await redis.quit();
    await server.dispose();
  });
  beforeEach(() => {
    keys = new RedisKeys(`rxs${crypto.randomUUID().slice(0, 8)}`);
  });

  describe('runScript sending', () => {
    it('sends KEYS and ARGV as given (numbers as their decimal text) and decodes the reply', async () => {
      const [lock, fence] = [keys.lock('s'), keys.lockFence('s')];
      await redis.script('FLUSH'); // the first send meets NOSCRIPT and falls back to EVAL
      const first = await runScript(redis, scripts.lockAcquire, [lock, fence], ['own', 60_000, 'exec', 'R', '']);
      expect(first).toMatchObject({ acquired: true, nesting: 1 });
      const again = await runScript(redis, scripts.lockAcquire, [lock, fence], ['own', 60_000, 'exec', 'R', '']);
      expect(again).toMatchObject({ acquired: true, nesting: 2 });
      expect(await redis.hget(lock, 'nesting')).toBe('2');
      await expect(runScript(redis, scripts.lockAcquire, [lock, fence], ['own', 1.5, '', '', ''])).rejects.toThrow(
        ScriptError,
      );
    });

    it('on a connection with a key prefix, the prefix applies to the KEYS (and nothing else)', async () => {
      const prefixed = new Redis(server.url, { keyPrefix: 'kp:' });
      try {
        const reply = await runScript(
          prefixed,
          scripts.lockAcquire,
          [keys.lock('p'), keys.lockFence('p')],
          ['own', 60_000, 'exec', 'R', ''],
        );
        expect(reply).toMatchObject({ acquired: true });
        expect(await redis.hget(`kp:${keys.lock('p')}`, 'owner')).toBe('own');
        expect(await redis.exists(keys.lock('p'))).toBe(0);
      } finally {
        await prefixed.quit();
      }
    });
  });

  describe('lock-*', () => {
    it('acquire stores holder fields, a time-floored token in the fence key, and the TTL', async () => {
      const before = await time();
      const reply = await runScript(
        redis,
        scripts.lockAcquire,
        [keys.lock('k'), keys.lockFence('k')],
        ['own', 500, 'exec', 'R', 'step'],
      );
      expect(reply).toMatchObject({ acquired: true, nesting: 1 });
      if (!reply.acquired) return;
      expect(BigInt(reply.token)).toBeGreaterThanOrEqual(BigInt(before) * 1000n);
      expect(await redis.get(keys.lockFence('k'))).toBe(reply.token);
      expect(await redis.pttl(keys.lockFence('k'))).toBeGreaterThan(86_400_000); // the lease + a day (decision 052)
      expect(await redis.hgetall(keys.lock('k'))).toEqual({
        owner: 'own',
        token: reply.token,
        nesting: '1',
        exec: 'exec',
        reactor: 'R',
        step: 'step',
      });
      const ttl = await redis.pttl(keys.lock('k'));
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(500);
    });

    it('acquire takes max(last + 1, now µs) for the token: a fence ahead of the clock still increases', async () => {
      const ahead = (BigInt(await time()) + 3_600_000n) * 1000n;
      await redis.set(keys.lockFence('k'), ahead.toString());
      const reply = await runScript(
        redis,
        scripts.lockAcquire,
        [keys.lock('k'), keys.lockFence('k')],
        ['own', 500, '', '', ''],
      );
      expect(reply).toMatchObject({ acquired: true, token: (ahead + 1n).toString() });
    });

    it('acquire refuses another owner with the holder and its remaining TTL; it rejects a bad ttl', async () => {
      await runScript(redis, scripts.lockAcquire, [keys.lock('k'), keys.lockFence('k')], ['a', 500, 'a.1', 'R', '']);
      const refused = await runScript(
        redis,
        scripts.lockAcquire,
        [keys.lock('k'), keys.lockFence('k')],
        ['b', 500, '', '', ''],
      );
      expect(refused).toMatchObject({
        acquired: false,
        holder: { owner: 'a', executionId: 'a.1', reactor: 'R', step: '' },
      });
      for (const ttl of ['0', '-5', '1.5', 'soon']) {
        await expect(
          runScript(redis, scripts.lockAcquire, [keys.lock('x'), keys.lockFence('x')], ['a', ttl, '', '', '']),
        ).rejects.toMatchObject({
          name: 'ScriptError',
          code: 'script_failed',
          details: { script: 'lock-acquire', reason: 'RX_ARG' },
        });
      }
      expect(await redis.exists(keys.lock('x'), keys.lockFence('x'))).toBe(0);
    });

    it('a queued process is granted with a new token and queued again behind the others when its releaser asks; bad windows are refused (decision 059)', async () => {
      const lock = [keys.lock('q'), keys.lockFence('q')];
      const held = await runScript(redis, scripts.lockAcquire, lock, ['a', 5000, '', '', '', 'pa']);
      for (const window of ['0', '-1', '1.5', 'soon']) {
        await expect(
          runScript(redis, scripts.lockAcquire, lock, ['b', 5000, '', '', '', 'pb', 'r1', window]),
        ).rejects.toMatchObject({ details: { script: 'lock-acquire', reason: 'RX_ARG' } });
        await expect(
          runScript(redis, scripts.lockRelease, lock, [
            'a',
            keys.lockChannel('q'),
            'pa',
            2000,
            'rx-grant:',
            'r9',
            window,
          ]),
        ).rejects.toMatchObject({ details: { script: 'lock-release', reason: 'RX_ARG' } });
      }
      expect(await redis.hget(keys.lock('q'), 'owner')).toBe('a'); // nothing changed
      expect(
        await runScript(redis, scripts.lockAcquire, lock, ['b', 5000, '', '', '', 'pb', 'r1', 1000]),
      ).toMatchObject({ acquired: false, registered: true });
      expect(
        await runScript(redis, scripts.lockAcquire, lock, ['c', 5000, '', '', '', 'pc', 'r2', 1000]),
      ).toMatchObject({ acquired: false, registered: true });
      expect(
        await runScript(redis, scripts.lockAcquire, lock, ['b', 5000, '', '', '', 'pb', 'r3', 1000]),
      ).toMatchObject({ registered: true }); // a refresh keeps its place
      expect(
        await runScript(redis, scripts.lockAcquire, lock, ['a2', 5000, '', '', '', 'pa', 'r4', 1000]),
      ).toMatchObject({ acquired: false, registered: false }); // the holder's process
      const granted = await runScript(redis, scripts.lockRelease, lock, [
        'a',
        keys.lockChannel('q'),
        'pa',
        2000,
        'rx-grant:',
        'r5',
        1000,
      ]);
      expect(granted).toMatchObject({ released: true, nesting: 0, requeued: true });
      expect(BigInt(granted.granted!)).toBeGreaterThan(BigInt(held.acquired ? held.token : '0'));
      expect(await redis.hget(keys.lock('q'), 'owner')).toBe('rx-grant:pb');
      expect(await redis.pttl(keys.lock('q'))).toBeLessThanOrEqual(2000);
      const queued = await redis.hgetall(keys.lock('q'));
      expect(queued['q:pb']).toBeUndefined();
      expect(Number(queued['q:pa']!.split(' ')[3])).toBeGreaterThan(Number(queued['q:pc']!.split(' ')[3])); // the releaser queued behind c
      expect(queued['q:pc']!.startsWith('r2 ')).toBe(true);
    });

    it('release is owner-checked, publishes only when the key is freed, and a repeat is a no-op', async () => {
      const channel = keys.lockChannel('k');
      const sub = redis.duplicate();
      const messages: string[] = [];
      sub.on('message', (_c: string, m: string) => messages.push(m));
      await sub.subscribe(channel);
      await runScript(redis, scripts.lockAcquire, [keys.lock('k'), keys.lockFence('k')], ['a', 5000, '', '', '']);
      await runScript(redis, scripts.lockAcquire, [keys.lock('k'), keys.lockFence('k')], ['a', 5000, '', '', '']);
      expect(
        await runScript(
          redis,
          scripts.lockRelease,
          [keys.lock('k'), keys.lockFence('k')],
          ['b', channel, '', 2000, 'rx-grant:'],
        ),
      ).toEqual({ released: false, nesting: 0 });
      expect(
        await runScript(
          redis,
          scripts.lockRelease,
          [keys.lock('k'), keys.lockFence('k')],
          ['a', channel, '', 2000, 'rx-grant:'],
        ),
      ).toEqual({ released: true, nesting: 1 });
      await sub.ping(); // a message published before this reply has arrived
      expect(messages).toEqual([]);
      expect(
        await runScript(
          redis,
          scripts.lockRelease,
          [keys.lock('k'), keys.lockFence('k')],
          ['a', channel, '', 2000, 'rx-grant:'],
        ),
      ).toEqual({ released: true, nesting: 0 });
      expect(
        await runScript(
          redis,
          scripts.lockRelease,
          [keys.lock('k'), keys.lockFence('k')],
          ['a', channel, '', 2000, 'rx-grant:'],
        ),
      ).toEqual({ released: false, nesting: 0 });
      await sub.ping();
      expect(messages).toEqual(['released']);
      expect(await redis.exists(keys.lock('k'))).toBe(0);
      expect(await redis.exists(keys.lockFence('k'))).toBe(1);
      await sub.quit();
    });

    it('extend is owner-checked and sets the remaining lease; state reads the hash', async () => {
      await runScript(redis, scripts.lockAcquire, [keys.lock('k'), keys.lockFence('k')], ['a', 200, '', 'R', '']);
      expect(await runScript(redis, scripts.lockExtend, [keys.lock('k')], ['b', 5000])).toBe(false);
      expect(await runScript(redis, scripts.lockExtend, [keys.lock('k')], ['a', 5000])).toBe(true);
      expect(await redis.pttl(keys.lock('k'))).toBeGreaterThan(4000);
      const state = await runScript(redis, scripts.lockState, [keys.lock('k')], []);
      expect(state).toMatchObject({ holder: { owner: 'a', reactor: 'R' }, nesting: 1 });
      expect(await runScript(redis, scripts.lockState, [keys.lock('free')], [])).toBeUndefined();
      await expect(runScript(redis, scripts.lockExtend, [keys.lock('k')], ['a', 0])).rejects.toBeInstanceOf(
        ScriptError,
      );
    });
  });

  describe('semaphore-*', () => {
    const semKeys = (k: string): [string, string] => [keys.semaphore(k), keys.semaphoreMeta(k)];

    it('acquire purges expired leases (and their meta fields) before counting', async () => {
      const [zset, meta] = semKeys('s');
      const now = await time();
      await redis.zadd(zset, now - 10, 'dead');
      await redis.hset(meta, 'n:dead', 3, 'i:dead', '{}');
      expect(await runScript(redis, scripts.semaphoreAcquire, semKeys('s'), ['a', 1, 500, '{"owner":"a"}'])).toEqual({
        acquired: true,
        nesting: 1,
        holders: 1,
      });
      expect(await redis.zrange(zset, 0, -1)).toEqual(['a']);
      expect(await redis.hget(meta, 'n:dead')).toBeNull();
      expect(await redis.hget(meta, 'limit')).toBe('1');
      const expiry = Number(await redis.zscore(zset, 'a'));
      expect(expiry).toBeGreaterThan(now);
      expect(await redis.pttl(zset)).toBeGreaterThan(0);
    });

    it('acquire refuses when full with the earliest expiry as retry-after; re-entry never shortens a lease', async () => {
      await runScript(redis, scripts.semaphoreAcquire, semKeys('s'), ['a', 1, 5000, '{}']);
      const refused = await runScript(redis, scripts.semaphoreAcquire, semKeys('s'), ['b', 1, 5000, '{}']);
      expect(refused).toMatchObject({ acquired: false, holders: 1, limit: 1 });
      if (refused.acquired) return;
      expect(refused.retryAfterMs).toBeGreaterThan(4000);
      const before = Number(await redis.zscore(keys.semaphore('s'), 'a'));
      expect(await runScript(redis, scripts.semaphoreAcquire, semKeys('s'), ['a', 1, 10, '{}'])).toEqual({
        acquired: true,
        nesting: 2,
        holders: 1,
      });
      expect(Number(await redis.zscore(keys.semaphore('s'), 'a'))).toBe(before);
      await expect(runScript(redis, scripts.semaphoreAcquire, semKeys('s'), ['c', -1, 10, '{}'])).rejects.toMatchObject(
        { details: { reason: 'RX_ARG' } },
      );
    });

    it('release of a non-holder or an expired holder is a no-op; the last release deletes the meta hash', async () => {
      const channel = keys.semaphoreChannel('s');
      await runScript(redis, scripts.semaphoreAcquire, semKeys('s'), ['a', 2, 5000, '{}']);
      await runScript(redis, scripts.semaphoreAcquire, semKeys('s'), ['b', 2, 50, '{}']);
      await sleep(80);
      expect(await runScript(redis, scripts.semaphoreRelease, semKeys('s'), ['b', channel])).toEqual({
        released: false,
        nesting: 0,
      });
      expect(await runScript(redis, scripts.semaphoreRelease, semKeys('s'), ['zzz', channel])).toEqual({
        released: false,
        nesting: 0,
      });
      expect(await redis.zcard(keys.semaphore('s'))).toBe(1);
      expect(await runScript(redis, scripts.semaphoreRelease, semKeys('s'), ['a', channel])).toEqual({
        released: true,
        nesting: 0,
      });
      expect(await redis.exists(...semKeys('s'))).toBe(0);
    });

    it('extend never resurrects an expired lease; state lists live leases with their remaining time', async () => {
      await runScript(redis, scripts.semaphoreAcquire, semKeys('s'), ['a', 3, 50, '{"owner":"a","reactor":"R"}']);
      await runScript(redis, scripts.semaphoreAcquire, semKeys('s'), ['b', 3, 5000, '{"owner":"b"}']);
      await sleep(80);
      expect(await runScript(redis, scripts.semaphoreExtend, semKeys('s'), ['a', 5000])).toBe(false);
      expect(await runScript(redis, scripts.semaphoreExtend, semKeys('s'), ['b', 8000])).toBe(true);
      const state = await runScript(redis, scripts.semaphoreState, semKeys('s'), []);
      expect(state.limit).toBe(3);
      expect(state.leases).toHaveLength(1);
      expect(state.leases[0]).toMatchObject({ owner: 'b', nesting: 1, holderJson: '{"owner":"b"}' });
      expect(state.leases[0]?.ttlMs).toBeGreaterThan(7000);
    });
  });

  describe('rate-*', () => {
    it('take charges every window with the server time, or none; an id charges once', async () => {
      const a = keys.rate('r', 1000);
      const b = keys.rate('r', 60_000);
      const now = await time();
      expect(await runScript(redis, scripts.rateTake, [a, b], ['id1', 2, 1000, 3, 60_000])).toEqual({ allowed: true });
      expect(Number(await redis.zscore(a, 'id1'))).toBeGreaterThanOrEqual(now);
      expect(await runScript(redis, scripts.rateTake, [a, b], ['id1', 2, 1000, 3, 60_000])).toEqual({
        allowed: true,
        charged: false,
      });
      expect(await redis.zcard(a)).toBe(1);
      expect(await runScript(redis, scripts.rateTake, [a, b], ['id2', 2, 1000, 3, 60_000])).toEqual({ allowed: true });
      const refused = await runScript(redis, scripts.rateTake, [a, b], ['id3', 2, 1000, 3, 60_000]);
      expect(refused).toMatchObject({ allowed: false, index: 0, count: 2 });
      expect(await redis.zcard(b)).toBe(2);
      // Only the second window is full now that the first has room again.
      await sleep(1050);
      expect(await runScript(redis, scripts.rateTake, [a, b], ['id3', 2, 1000, 3, 60_000])).toEqual({ allowed: true });
      expect(await runScript(redis, scripts.rateTake, [a, b], ['id4', 2, 1000, 3, 60_000])).toMatchObject({
        allowed: false,
        index: 1,
        count: 3,
      });
      expect(await redis.zcard(a)).toBe(1);
      expect(await redis.pttl(a)).toBeLessThanOrEqual(1000);
    });

    it('take with an id still in a longer window only counts once even after the shorter window let it go', async () => {
      const a = keys.rate('r', 100);
      const b = keys.rate('r', 60_000);
      expect(await runScript(redis, scripts.rateTake, [a, b], ['x', 1, 100, 5, 60_000])).toEqual({ allowed: true });
      await sleep(150);
      expect(await runScript(redis, scripts.rateTake, [a, b], ['x', 1, 100, 5, 60_000])).toEqual({
        allowed: true,
        charged: false,
      });
      expect(await redis.zcard(b)).toBe(1);
    });

    it('take rejects ARGV that does not match KEYS and invalid limits; state reports count and reset', async () => {
      const a = keys.rate('r', 1000);
      await expect(runScript(redis, scripts.rateTake, [a], ['id', 1])).rejects.toMatchObject({
        details: { reason: 'RX_ARG' },
      });
      await expect(runScript(redis, scripts.rateTake, [a], ['id', 1, 0])).rejects.toMatchObject({
        details: { reason: 'RX_ARG' },
      });
      expect(await runScript(redis, scripts.rateState, [a], [1000])).toEqual({ count: 0, resetInMs: 0 });
      await runScript(redis, scripts.rateTake, [a], ['id', 5, 1000]);
      const state = await runScript(redis, scripts.rateState, [a], [1000]);
      expect(state.count).toBe(1);
      expect(state.resetInMs).toBeGreaterThan(900);
      expect(state.resetInMs).toBeLessThanOrEqual(1000);
    });
  });

  describe('period-mark', () => {
    it('marks once with a TTL and leaves an existing marker untouched', async () => {
      const k = keys.period('p', '2026-11-30');
      expect(await runScript(redis, scripts.periodMark, [k], [5000])).toBe(true);
      expect(await runScript(redis, scripts.periodMark, [k], [100_000])).toBe(false);
      const ttl = await redis.pttl(k);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(5000);
      await expect(runScript(redis, scripts.periodMark, [k], [0])).rejects.toBeInstanceOf(ScriptError);
    });
  });

  describe('ordered-*', () => {
    const ord = (k = 'o'): [string] => [keys.ordered(k)];

    it('ticket starts a fresh key at a time-floored epoch and counts positions', async () => {
      const now = await time();
      const t1 = await runScript(redis, scripts.orderedTicket, ord(), []);
      const t2 = await runScript(redis, scripts.orderedTicket, ord(), []);
      expect(t1.nonce).toBe(1);
      expect(t2).toEqual({ nonce: 2, epoch: t1.epoch });
      expect(t1.epoch).toBeGreaterThanOrEqual(now);
      expect(await redis.pttl(keys.ordered('o'))).toBe(-1);
    });

    it('enter is epoch-fenced and records the holder of the position in flight', async () => {
      const t1 = await runScript(redis, scripts.orderedTicket, ord(), []);
      const channel = keys.orderedChannel('o');
      expect(await runScript(redis, scripts.orderedEnter, ord(), [1, t1.epoch - 1, 1000, '0', '{}', channel])).toEqual({
        outcome: 'stale',
        epoch: t1.epoch,
      });
      expect(
        await runScript(redis, scripts.orderedEnter, ord(), [1, t1.epoch, 1000, '0', '{"owner":"x"}', channel]),
      ).toEqual({ outcome: 'entered' });
      expect(await redis.hmget(keys.ordered('o'), 'in_flight', 'holder')).toEqual(['1', '{"owner":"x"}']);
      await expect(
        runScript(redis, scripts.orderedEnter, ord(), ['one', t1.epoch, 1000, '0', '{}', channel]),
      ).rejects.toMatchObject({ details: { reason: 'RX_ARG' } });
    });

    it('enter passes over a run of silent heads at once (poison pill), publishes, and keeps a waiting head alive', async () => {
      const channel = keys.orderedChannel('o');
      const sub = redis.duplicate();
      const messages: string[] = [];
      sub.on('message', (_c: string, m: string) => messages.push(m));
      await sub.subscribe(channel);
      const t1 = await runScript(redis, scripts.orderedTicket, ord(), []);
      for (let i = 0; i < 4; i++) await runScript(redis, scripts.orderedTicket, ord(), []);
      const e = t1.epoch;
      // Poison 5 s, so nothing goes silent by itself; positions 1 and 2 are made silent by
      // moving their signs of life (tickets and the last advance) 10 s into the past.
      expect(await runScript(redis, scripts.orderedEnter, ord(), [5, e, 5000, '0', '{}', channel])).toMatchObject({
        outcome: 'wait',
        head: 1,
      });
      expect(await redis.hexists(keys.ordered('o'), 'seen:5')).toBe(1);
      expect(await runScript(redis, scripts.orderedEnter, ord(), [3, e, 5000, '0', '{}', channel])).toMatchObject({
        outcome: 'wait',
        head: 1,
      });
      const [seconds, micros] = await redis.time();
      const longAgo = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000) - 10_000;
      await redis.hset(keys.ordered('o'), 'seen:1', longAgo, 'seen:2', longAgo, 'advanced_at', longAgo);
      // 1 and 2 never arrived (no sign of life for 10 s): both passed in one call; 3 waited just now.
      expect(await runScript(redis, scripts.orderedEnter, ord(), [5, e, 5000, '0', '{}', channel])).toMatchObject({
        outcome: 'wait',
        head: 3,
      });
      expect(await runScript(redis, scripts.orderedState, ord(), [])).toMatchObject({ lastCompleted: 2 });
      expect(await redis.hexists(keys.ordered('o'), 'seen:1')).toBe(0);
      expect(await runScript(redis, scripts.orderedEnter, ord(), [3, e, 5000, '0', '{}', channel])).toEqual({
        outcome: 'entered',
      });
      await expect.poll(() => messages.length, { timeout: 10_000 }).toBeGreaterThan(0);
      await sub.ping(); // any later message would have arrived before this reply
      expect(messages).toEqual(['advanced']);
      await sub.quit();
    });

    it('enter rejects a position never issued in the epoch without changing anything', async () => {
      const t1 = await runScript(redis, scripts.orderedTicket, ord(), []);
      const channel = keys.orderedChannel('o');
      for (const nonce of [0, 2, 1.5]) {
        await expect(
          runScript(redis, scripts.orderedEnter, ord(), [nonce, t1.epoch, 0, '0', '{}', channel]),
        ).rejects.toMatchObject({ details: { reason: 'RX_ARG' } });
      }
      expect(await runScript(redis, scripts.orderedState, ord(), [])).toMatchObject({
        issued: 1,
        lastCompleted: 0,
        inFlight: 0,
      });
    });

    it('complete ignores stale epochs and passed positions, remembers out-of-turn completions, records the lowest strict failure, drains to a new epoch', async () => {
      const channel = keys.orderedChannel('o');
      const t1 = await runScript(redis, scripts.orderedTicket, ord(), []);
      await runScript(redis, scripts.orderedTicket, ord(), []);
      await runScript(redis, scripts.orderedTicket, ord(), []);
      const e = t1.epoch;
      expect(await runScript(redis, scripts.orderedComplete, ord(), [1, e + 1, '0', '0', channel])).toMatchObject({
        lastCompleted: 0,
      });
      expect(await runScript(redis, scripts.orderedComplete, ord(), [9, e, '0', '0', channel])).toMatchObject({
        lastCompleted: 0,
        issued: 3,
      });
      expect(await runScript(redis, scripts.orderedComplete, ord(), [2, e, '1', '1', channel])).toMatchObject({
        lastCompleted: 0,
        firstFailed: 2,
      });
      expect(await redis.hget(keys.ordered('o'), 'done:2')).toBe('1');
      expect(await runScript(redis, scripts.orderedComplete, ord(), [1, e, '1', '1', channel])).toMatchObject({
        lastCompleted: 2,
        firstFailed: 1,
      });
      expect(await redis.hexists(keys.ordered('o'), 'done:2')).toBe(0);
      expect(await runScript(redis, scripts.orderedComplete, ord(), [1, e, '0', '0', channel])).toMatchObject({
        lastCompleted: 2,
        firstFailed: 1,
      });
      const drained = await runScript(redis, scripts.orderedComplete, ord(), [3, e, '0', '1', channel]);
      expect(drained).toMatchObject({ issued: 0, lastCompleted: 0, inFlight: 0, firstFailed: 0 });
      expect(drained.epoch).toBeGreaterThan(e);
      expect(await redis.hgetall(keys.ordered('o'))).toEqual({
        epoch: String(drained.epoch),
        issued: '0',
        last_completed: '0',
        advanced_at: expect.any(String),
      });
    });

    it('heartbeat only for the position in flight of the current epoch; skip and reset', async () => {
      const channel = keys.orderedChannel('o');
      const t1 = await runScript(redis, scripts.orderedTicket, ord(), []);
      await runScript(redis, scripts.orderedTicket, ord(), []);
      expect(await runScript(redis, scripts.orderedHeartbeat, ord(), [1, t1.epoch])).toBe(false);
      await runScript(redis, scripts.orderedEnter, ord(), [1, t1.epoch, 1000, '0', '{}', channel]);
      expect(await runScript(redis, scripts.orderedHeartbeat, ord(), [1, t1.epoch])).toBe(true);
      expect(await runScript(redis, scripts.orderedHeartbeat, ord(), [1, t1.epoch + 1])).toBe(false);
      expect(await runScript(redis, scripts.orderedSkip, ord(), [channel])).toMatchObject({
        lastCompleted: 1,
        inFlight: 0,
        issued: 2,
      });
      expect(await runScript(redis, scripts.orderedHeartbeat, ord(), [1, t1.epoch])).toBe(false);
      const reset = await runScript(redis, scripts.orderedReset, ord(), [channel]);
      expect(reset).toMatchObject({ issued: 0, lastCompleted: 0 });
      expect(reset.epoch).toBeGreaterThan(t1.epoch);
      const again = await runScript(redis, scripts.orderedReset, ord(), [channel]);
      expect(again.epoch).toBeGreaterThan(reset.epoch);
    });
  });

  describe('idempotency-claim', () => {
    it('claims once with a TTL; the same execution claiming again is told it holds the claim', async () => {
      const k = keys.idempotency('R', 'order-1');
      const claim = (id: string, json = '') =>
        runScript(
          redis,
          scripts.idempotencyClaim,
          [
            k,
            keys.execution(id),
            keys.executionIndex(),
            keys.executionIndexByReactor('R'),
            keys.executionIndexByStatus('running'),
          ],
          [id, 5000, json, 7],
        );
      expect(await claim('e1')).toEqual({ claimed: true });
      expect(await claim('e1')).toEqual({ claimed: true });
      expect(await claim('e2')).toEqual({ claimed: false, executionId: 'e1' });
      expect(await redis.pttl(k)).toBeGreaterThan(0);
      expect(await redis.exists(keys.execution('e1'))).toBe(0); // no record JSON: none written
    });

    it("writes and indexes the winner's record only if absent; a loser writes nothing", async () => {
      const k = keys.idempotency('R', 'order-2');
      const claim = (id: string, json: string) =>
        runScript(
          redis,
          scripts.idempotencyClaim,
          [
            k,
            keys.execution(id),
            keys.executionIndex(),
            keys.executionIndexByReactor('R'),
            keys.executionIndexByStatus('running'),
          ],
          [id, 5000, json, 7],
        );
      expect(await claim('w1', '{"first":1}')).toEqual({ claimed: true });
      expect(await redis.get(keys.execution('w1'))).toBe('{"first":1}');
      expect(await redis.zscore(keys.executionIndexByStatus('running'), 'w1')).toBe('7');
      expect(await redis.pttl(keys.execution('w1'))).toBeGreaterThan(0);
      await redis.set(keys.execution('w1'), '{"saved":2}');
      expect(await claim('w1', '{"first":1}')).toEqual({ claimed: true });
      expect(await redis.get(keys.execution('w1'))).toBe('{"saved":2}');
      expect(await claim('w2', '{"first":1}')).toEqual({ claimed: false, executionId: 'w1' });
      expect(await redis.exists(keys.execution('w2'))).toBe(0);
      expect(await redis.zscore(keys.executionIndex(), 'w2')).toBeNull();
    });
  });

  describe('runner', () => {
    it('reloads scripts with EVAL after SCRIPT FLUSH (NOSCRIPT) and uses EVALSHA afterwards', async () => {
      const sha = scripts.lockState.sha;
      await runScript(redis, scripts.lockState, [keys.lock('k')], []);
      await redis.script('FLUSH');
      expect(await redis.script('EXISTS', sha)).toEqual([0]);
      expect(await runScript(redis, scripts.lockState, [keys.lock('k')], [])).toBeUndefined();
      expect(await redis.script('EXISTS', sha)).toEqual([1]);
    });

    it('checks the arity of fixed-arity scripts before calling Redis', async () => {
      await expect(
        runScript(redis, scripts.lockAcquire, [keys.lock('k')], ['a', 100, '', '', '']),
      ).rejects.toMatchObject({ details: { reason: 'arity' } });
    });

    it('maps server errors, script errors and connection errors to typed errors', async () => {
      // A WRONGTYPE error raised inside a script is a ScriptError with reason `redis`.
      await redis.set(keys.lock('wrong'), 'not a hash');
      const wrong = await runScript(redis, scripts.lockState, [keys.lock('wrong')], []).catch((e: unknown) => e);
      expect(wrong).toBeInstanceOf(ScriptError);
      expect(wrong).toMatchObject({ details: { script: 'lock-state', reason: 'redis' } });
      expect(ReactorError.is(wrong)).toBe(true);

      const loading = Object.assign(new Error('LOADING Redis is loading the dataset in memory'), {
        name: 'ReplyError',
      });
      expect(toBackendError('op', loading)).toBeInstanceOf(CoordinationUnavailableError);
      const closed = toBackendError('op', new Error('Connection is closed.'));
      expect(closed).toBeInstanceOf(CoordinationUnavailableError);
      expect(closed).toMatchObject({ code: 'coordination_unavailable', details: { operation: 'op' } });

      const offline = new Redis(server.url, { lazyConnect: true, enableOfflineQueue: false });
      setOutageTolerance(offline, 0); // fail at the first failure instead of riding the outage out
      await expect(runScript(offline, scripts.lockState, [keys.lock('k')], [])).rejects.toBeInstanceOf(
        CoordinationUnavailableError,
      );
      offline.disconnect();
    });

    it('returns a bad argument or a bug as it is, without riding it out as an outage', async () => {
      const bug = new TypeError("Cannot read properties of undefined (reading 'includes')");
      expect(toBackendError('store-get', bug)).toBe(bug);
      expect(toBackendError('lock-acquire', new RangeError('bad'))).toBeInstanceOf(RangeError);
      setOutageTolerance(redis, 60_000);
      const thrown = await runCommand(
        'store-get',
        () => {
          throw bug;
        },
        redis,
      ).catch((e: unknown) => e);
      expect(thrown).toBe(bug); // ridden out, it would end as store_unavailable after 60 s
    });
  });
});
