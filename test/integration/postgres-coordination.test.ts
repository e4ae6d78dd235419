/**
 * The Postgres coordinator on a real server, beyond the contract: fencing tokens keep increasing
 * across a restart and a crash, leases expire by the database clock whatever the client's clock
 * says, concurrent callers on two pools never overlap or exceed a limit, and the LISTEN
 * connection carries wake-ups and cancel announcements between
 * coordinators, reconnecting (and reporting itself degraded meanwhile) when the server goes away.
 */
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest';
import { LISTEN_APPLICATION, PostgresCoordinator } from '../../src/storage/postgres/coordinator.js';
import { migrate } from '../../src/storage/postgres/migrate.js';
import { SCHEMA_VERSION } from '../../src/storage/postgres/migrations/index.js';
import { PostgresNames } from '../../src/storage/postgres/names.js';
import { usePostgresServer } from '../support/use-postgres-server.js';

const server = usePostgresServer();
const schema = `coord_${crypto.randomUUID().slice(0, 8)}`;
let pool: pg.Pool;
const opened: PostgresCoordinator[] = [];

/** A pool that survives the server going away (its idle clients' errors are expected). */
function newPool(): pg.Pool {
  const created = new pg.Pool({ connectionString: server.url, max: 4 });
  created.on('error', () => undefined);
  return created;
}

function coordinator(on: pg.Pool = pool): PostgresCoordinator {
  const created = new PostgresCoordinator({ connection: on, schema });
  opened.push(created);
  return created;
}

/** Retries `call` until the server answers again (after a restart). */
async function once<T>(call: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (attempt > 50) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** Resolves when `predicate` holds, checking every 20 ms; rejects after `ms`. */
async function eventually(predicate: () => boolean, ms = 15_000): Promise<void> {
  const until = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

beforeAll(async () => {
  pool = newPool();
  await migrate(pool, new PostgresNames(schema));
});
afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(opened.splice(0).map((c) => c.close()));
});
afterAll(async () => {
  await pool.end();
});

describe('the schema', () => {
  test('a schema not migrated is refused with PostgresSchemaError, naming the versions', async () => {
    const c = coordinator();
    const bare = new PostgresCoordinator({ connection: pool, schema: `bare_${crypto.randomUUID().slice(0, 8)}` });
    opened.push(bare);
    await expect(bare.lockAcquire({ key: 'k', holder: { owner: 'a' }, ttlMs: 1000 })).rejects.toMatchObject({
      code: 'postgres_schema_mismatch',
      details: { found: 0, expected: SCHEMA_VERSION },
    });
    expect((await c.lockAcquire({ key: 'k', holder: { owner: 'a' }, ttlMs: 1000 })).acquired).toBe(true);
  });
});

describe('prepared statements', () => {
  /** The names of the statements prepared on the one connection of `single`. */
  async function prepared(single: pg.Pool): Promise<string[]> {
    const { rows } = await single.query<{ name: string }>('SELECT name FROM pg_prepared_statements ORDER BY name');
    return rows.map((row) => row.name);
  }

  test('a call is prepared once per connection, and sent again on a fresh one when the connection lost it', async () => {
    const single = new pg.Pool({ connectionString: server.url, max: 1 });
    single.on('error', () => undefined);
    try {
      const c = coordinator(single);
      expect((await c.lockAcquire({ key: 'prep', holder: { owner: 'a' }, ttlMs: 60_000 })).acquired).toBe(true);
      expect(await c.lockRelease('prep', 'a')).toEqual({ released: true, nesting: 0 });
      expect((await prepared(single)).filter((name) => name.startsWith('rx_'))).toHaveLength(2);
      // Dropped behind pg's back (as a pooler between would): the next call finds no statement.
      await single.query('DEALLOCATE ALL');
      const taken = await c.lockAcquire({ key: 'prep', holder: { owner: 'b' }, ttlMs: 60_000 });
      expect(taken.acquired).toBe(true);
      expect((await c.lockState('prep'))?.holder.owner).toBe('b');
      expect(await c.lockRelease('prep', 'b')).toEqual({ released: true, nesting: 0 });
    } finally {
      await Promise.all(opened.splice(0).map((c) => c.close()));
      await single.end();
    }
  });

  test('prepareStatements: false sends every call unprepared', async () => {
    const single = new pg.Pool({ connectionString: server.url, max: 1 });
    single.on('error', () => undefined);
    try {
      const c = new PostgresCoordinator({ connection: single, schema, prepareStatements: false });
      opened.push(c);
      expect((await c.lockAcquire({ key: 'unprepared', holder: { owner: 'a' }, ttlMs: 60_000 })).acquired).toBe(true);
      expect((await c.lockAcquire({ key: 'unprepared', holder: { owner: 'b' }, ttlMs: 60_000 })).acquired).toBe(false);
      expect(await c.lockRelease('unprepared', 'a')).toEqual({ released: true, nesting: 0 });
      expect(await prepared(single)).toEqual([]);
    } finally {
      await Promise.all(opened.splice(0).map((c) => c.close()));
      await single.end();
    }
  });
});

describe('fencing tokens', () => {
  test('keep increasing across a clean restart and a crash, even past a token ahead of the clock', async () => {
    const c = coordinator();
    const take = async (owner: string, ttlMs = 60_000): Promise<bigint> => {
      const result = await once(() => c.lockAcquire({ key: 'fenced', holder: { owner }, ttlMs }));
      if (!result.acquired) throw new Error(`refused: held by ${result.holder?.owner}`);
      return BigInt(result.token);
    };
    const first = await take('a');
    await c.lockRelease('fenced', 'a');
    // A token an hour ahead of the clock (as if handed out by a server whose clock ran fast):
    // only the stored token, not the clock, can keep the next one above it.
    const ahead = first + 3_600_000_000n;
    await pool.query(`UPDATE ${schema}.coord_locks SET token = $1 WHERE key = 'fenced'`, [ahead.toString()]);

    await server.handle.restart();
    const afterRestart = await take('b', 150);
    expect(afterRestart > ahead).toBe(true);

    // b's hold lapses while the server is down after a crash.
    await server.handle.kill();
    await new Promise((resolve) => setTimeout(resolve, 200));
    await server.handle.restart();
    const afterCrash = await take('c');
    expect(afterCrash > afterRestart).toBe(true);
  });
});

describe('the database clock', () => {
  test('a lease is measured by the database: the client clock an hour off changes nothing', async () => {
    const c = coordinator();
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 3_600_000);
    expect((await c.lockAcquire({ key: 'clock', holder: { owner: 'a' }, ttlMs: 300 })).acquired).toBe(true);
    const [row] = (
      await pool.query<{ left_ms: number }>(
        `SELECT extract(epoch FROM expires_at - clock_timestamp()) * 1000 AS left_ms
         FROM ${schema}.coord_locks WHERE key = 'clock'`,
      )
    ).rows;
    expect(Number(row?.left_ms)).toBeGreaterThan(0);
    expect(Number(row?.left_ms)).toBeLessThanOrEqual(300);
    expect((await c.lockAcquire({ key: 'clock', holder: { owner: 'b' }, ttlMs: 300 })).acquired).toBe(false);
    // Time passes in the database (the client's clock stays where it was set).
    await pool.query('SELECT pg_sleep(0.35)');
    expect(await c.lockState('clock')).toBeUndefined();
    expect((await c.lockAcquire({ key: 'clock', holder: { owner: 'b' }, ttlMs: 300 })).acquired).toBe(true);
    const { rows } = await pool.query<{ ms: string }>(
      'SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint AS ms',
    );
    const databaseMs = Number(rows[0]?.ms);
    expect(Math.abs((await c.time()) - databaseMs)).toBeLessThan(60_000);
  });
});

describe('concurrent callers on two pools', () => {
  test('never overlap on a lock, never exceed a semaphore, never admit one start too many', async () => {
    const otherPool = newPool();
    const coordinators = [coordinator(), coordinator(otherPool)];
    try {
      await Promise.all(coordinators.map((c) => c.listening()));
      let inside = 0;
      let most = 0;
      let sections = 0;
      const lockWorker = async (c: PostgresCoordinator, owner: string): Promise<void> => {
        for (let done = 0; done < 10;) {
          const result = await c.lockAcquire({ key: 'race', holder: { owner }, ttlMs: 60_000 });
          if (!result.acquired) {
            await c.waitForChange('lock', 'race', 200);
            continue;
          }
          inside += 1;
          most = Math.max(most, inside);
          await new Promise((resolve) => setImmediate(resolve));
          inside -= 1;
          sections += 1;
          done += 1;
          expect(await c.lockRelease('race', owner)).toEqual({ released: true, nesting: 0 });
        }
      };
      await Promise.all(Array.from({ length: 12 }, (_, i) => lockWorker(coordinators[i % 2]!, `w${i}`)));
      expect(most).toBe(1);
      expect(sections).toBe(120);

      let holding = 0;
      let mostHolding = 0;
      const semaphoreWorker = async (c: PostgresCoordinator, owner: string): Promise<void> => {
        for (let done = 0; done < 5;) {
          const result = await c.semaphoreAcquire({ key: 'slots', holder: { owner }, limit: 3, ttlMs: 60_000 });
          if (!result.acquired) {
            await c.waitForChange('semaphore', 'slots', 200);
            continue;
          }
          holding += 1;
          mostHolding = Math.max(mostHolding, holding);
          await new Promise((resolve) => setImmediate(resolve));
          holding -= 1;
          done += 1;
          await c.semaphoreRelease('slots', owner);
        }
      };
      await Promise.all(Array.from({ length: 12 }, (_, i) => semaphoreWorker(coordinators[i % 2]!, `s${i}`)));
      expect(mostHolding).toBeLessThanOrEqual(3);

      const window = { key: 'starts', limit: 10, periodMs: 60_000 };
      const takes = await Promise.all(
        Array.from({ length: 40 }, (_, i) => coordinators[i % 2]!.rateTake({ windows: [window], id: `t${i}` })),
      );
      expect(takes.filter((take) => take.allowed)).toHaveLength(10);
      expect((await coordinators[0]!.rateState('starts', 60_000)).count).toBe(10);
    } finally {
      await coordinators[1]?.close();
      await otherPool.end();
    }
  });
});

describe('LISTEN/NOTIFY', () => {
  test('a release in one coordinator wakes a waiter of another; a cancel announcement reaches both', async () => {
    const otherPool = newPool();
    const a = coordinator();
    const b = coordinator(otherPool);
    try {
      await Promise.all([a.listening(), b.listening()]);
      await a.lockAcquire({ key: 'shared', holder: { owner: 'a' }, ttlMs: 60_000 });
      let woken = false;
      const wait = b.waitForChange('lock', 'shared', 20_000).then(() => (woken = true));
      await b.listening(); // the lock marked wanted: only then does its release notify
      const heard: string[] = [];
      a.onCancelAnnounced((id) => heard.push(`a:${id}`));
      b.onCancelAnnounced((id) => heard.push(`b:${id}`));
      await a.lockRelease('shared', 'a');
      await eventually(() => woken);
      await wait;
      await b.announceCancel('run-1');
      await eventually(() => heard.length === 2);
      expect(heard.sort()).toEqual(['a:run-1', 'b:run-1']);
    } finally {
      await b.close();
      await otherPool.end();
    }
  });

  test('a release notifies only a wanted lock: after a refused try or a wait, not an uncontended hold', async () => {
    const c = coordinator();
    const names = new PostgresNames(schema);
    const heard: string[] = [];
    const listener = new pg.Client({ connectionString: server.url });
    await listener.connect();
    listener.on('notification', (message) => heard.push(message.payload ?? ''));
    await listener.query(`LISTEN ${names.coordChannel}`);
    // Notifications arrive in commit order: once a later one is heard, an earlier one would have been.
    let marks = 0;
    const heardUpTo = async (): Promise<string[]> => {
      const mark = `mark:${++marks}`;
      await pool.query('SELECT pg_notify($1, $2)', [names.coordChannel, mark]);
      await eventually(() => heard.includes(mark));
      return heard.splice(0).filter((payload) => payload.startsWith('lock:'));
    };
    try {
      for (const unfenced of [false, true]) {
        const k = `wanted-${String(unfenced)}`;
        expect((await c.lockAcquire({ key: k, holder: { owner: 'a' }, ttlMs: 60_000, unfenced })).acquired).toBe(true);
        expect(await c.lockRelease(k, 'a')).toEqual({ released: true, nesting: 0 });
        expect(await heardUpTo()).toEqual([]);
        // A refused try marks the key: its release, and the next holder's, notify.
        await c.lockAcquire({ key: k, holder: { owner: 'a' }, ttlMs: 60_000, unfenced });
        expect((await c.lockAcquire({ key: k, holder: { owner: 'b' }, ttlMs: 60_000, unfenced })).acquired).toBe(false);
        await c.lockRelease(k, 'a');
        expect(await heardUpTo()).toEqual([`lock:${k}`]);
        expect((await c.lockAcquire({ key: k, holder: { owner: 'b' }, ttlMs: 60_000, unfenced })).acquired).toBe(true);
        await c.lockRelease(k, 'b');
        expect(await heardUpTo()).toEqual([`lock:${k}`]);
      }
      // A wait this process was not refused for marks the key itself.
      const k = 'wanted-by-wait';
      await c.lockAcquire({ key: k, holder: { owner: 'a' }, ttlMs: 60_000 });
      const wait = c.waitForChange('lock', k, 20_000);
      await c.listening();
      await c.lockRelease(k, 'a');
      await wait;
      expect(await heardUpTo()).toEqual([`lock:${k}`]);
    } finally {
      await listener.end();
    }
  });

  test('a key too long for a NOTIFY payload is released all the same (its waiters poll)', async () => {
    const c = coordinator();
    const long = 'k'.repeat(9000);
    expect((await c.lockAcquire({ key: long, holder: { owner: 'a' }, ttlMs: 60_000 })).acquired).toBe(true);
    expect(await c.lockRelease(long, 'a')).toEqual({ released: true, nesting: 0 });
    expect((await c.lockAcquire({ key: long, holder: { owner: 'b' }, ttlMs: 60_000 })).acquired).toBe(true);
  });

  test('reconnects when its connection is terminated, and says when it listens again', async () => {
    const c = coordinator();
    let listenings = 0;
    c.onCancelAnnounced(
      () => undefined,
      () => (listenings += 1),
    );
    await c.listening();
    await eventually(() => listenings === 1);
    await pool.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [
      LISTEN_APPLICATION,
    ]);
    await eventually(() => listenings === 2);
    // Listening again: a release is heard.
    await c.lockAcquire({ key: 'again', holder: { owner: 'a' }, ttlMs: 60_000 });
    let woken = false;
    const wait = c.waitForChange('lock', 'again', 20_000).then(() => (woken = true));
    await c.listening();
    await c.lockRelease('again', 'a');
    await eventually(() => woken);
    await wait;
  });

  test('reports degraded wake-ups while the server is down, and recovers', async () => {
    const ownPool = newPool();
    const c = coordinator(ownPool);
    const changes: boolean[] = [];
    c.onWakeUpsDegraded((degraded) => changes.push(degraded));
    await c.listening();
    expect(c.wakeUpsDegraded()).toBe(false);
    await server.handle.stop();
    try {
      await eventually(() => c.wakeUpsDegraded());
      expect(changes).toEqual([true]);
    } finally {
      await server.handle.restart();
    }
    await eventually(() => !c.wakeUpsDegraded());
    expect(changes).toEqual([true, false]);
    await c.close();
    await ownPool.end();
  });
  test('a frozen server is noticed by the LISTEN connection check (degraded), and left behind once it answers', async () => {
    const ownPool = newPool();
    const c = coordinator(ownPool);
    const changes: boolean[] = [];
    c.onWakeUpsDegraded((degraded) => changes.push(degraded));
    await c.listening();
    server.handle.freeze();
    try {
      // The next check (every 5 s) goes unanswered for 3 s; 1 s later the wake-ups are degraded.
      await eventually(() => c.wakeUpsDegraded(), 25_000);
    } finally {
      server.handle.thaw();
    }
    await eventually(() => !c.wakeUpsDegraded(), 25_000);
    expect(changes).toEqual([true, false]);
    await c.close();
    await ownPool.end();
  }, 60_000);
});
