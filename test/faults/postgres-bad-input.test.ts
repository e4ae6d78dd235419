/**
 * Bad input on PostgreSQL.
 *
 * A connection dropped under an acquire in flight: the acquire is made to wait on the key's row
 * (another transaction holds it `FOR UPDATE`), its backend is terminated (`pg_terminate_backend`),
 * then the row is let go. The coordinator reads whether the lost call took effect and sends it
 * again only if not: the lock is held once, at the nesting the caller expects, and released
 * fully; a step whose lock acquire is cut off this way completes.
 *
 * A role with only CONNECT (no rights on ts-reactor's schema): the runtime refuses to start with
 * `PostgresPermissionError`, whose message names the GRANT statements, and writes nothing.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, reactor } from '../../src/index.js';
import { createPostgresRuntime, PostgresPermissionError, type PostgresRuntime } from '../../src/postgres.js';
import { postgresBackendFactory } from '../../src/queue/bullmq-postgres.js';
import { PostgresCoordinator, PostgresStore } from '../../src/storage/postgres/index.js';
import { usePostgresServer } from '../support/use-postgres-server.js';

const server = usePostgresServer();
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
let store: PostgresStore;
let coordinator: PostgresCoordinator;
let admin: pg.Pool;

beforeAll(async () => {
  store = new PostgresStore({ connection: server.url, migrate: true });
  await store.ready();
  coordinator = new PostgresCoordinator({ connection: store.pool });
  admin = new pg.Pool({ connectionString: server.url, max: 3 });
});

afterAll(async () => {
  await coordinator?.close();
  await store?.close();
  await admin?.end();
});

interface LockRow {
  readonly owner: string | null;
  readonly nesting: number;
}

async function lockRows(key: string): Promise<LockRow[]> {
  return (
    await admin.query<LockRow>(
      'SELECT owner, nesting FROM ts_reactor.coord_locks WHERE key = $1 AND (owner IS NULL OR expires_at > clock_timestamp())',
      [key],
    )
  ).rows;
}

/**
 * Runs `call` while the lock row of `key` is held by another transaction, terminates the backend
 * of the `coord_lock_acquire` waiting on it, then lets the row go; returns what `call` settled with.
 */
async function cutOffAcquire<T>(
  key: string,
  call: () => Promise<T>,
): Promise<{ value?: T; error?: unknown; terminated: number }> {
  const blocker = await admin.connect();
  try {
    await blocker.query('BEGIN');
    await blocker.query('SELECT 1 FROM ts_reactor.coord_locks WHERE key = $1 FOR UPDATE', [key]);
    const settled = call().then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );
    let terminated = 0;
    for (let i = 0; i < 6_000 && terminated === 0; i++) {
      const { rows } = await admin.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity
         WHERE wait_event_type = 'Lock' AND query LIKE '%coord_lock_acquire%' AND pid <> pg_backend_pid()`,
      );
      for (const { pid } of rows) {
        const { rows: done } = await admin.query<{ ok: boolean }>('SELECT pg_terminate_backend($1) AS ok', [pid]);
        if (done[0]?.ok === true) terminated++;
      }
      if (terminated === 0) await sleep(10);
    }
    await blocker.query('ROLLBACK');
    return { ...(await settled), terminated };
  } finally {
    blocker.release();
  }
}

describe('a dropped connection under an acquire in flight', () => {
  it('a first acquire: taken once (nesting 1), released fully, the key free for the next owner', async () => {
    const key = 'bad-input:first';
    await coordinator.lockAcquire({ key, holder: { owner: 'warm' }, ttlMs: 60_000 });
    await coordinator.lockRelease(key, 'warm'); // the key's row exists, free
    const outcome = await cutOffAcquire(key, () =>
      coordinator.lockAcquire({ key, holder: { owner: 'a' }, ttlMs: 60_000 }),
    );
    expect(outcome.terminated).toBe(1);
    expect(outcome.error).toBeUndefined(); // ridden out: read, then sent again
    expect(outcome.value).toMatchObject({ acquired: true, nesting: 1 });
    expect(await lockRows(key)).toEqual([{ owner: 'a', nesting: 1 }]);
    expect(await coordinator.lockRelease(key, 'a')).toMatchObject({ released: true, nesting: 0 });
    expect(await lockRows(key)).toEqual([{ owner: null, nesting: expect.any(Number) }]);
    expect(await coordinator.lockAcquire({ key, holder: { owner: 'b' }, ttlMs: 60_000 })).toMatchObject({
      acquired: true,
      nesting: 1,
    });
    await coordinator.lockRelease(key, 'b');
  });

  it('a re-entry: one level more (nesting 2), not two; two releases free the key', async () => {
    const key = 'bad-input:reentry';
    const first = await coordinator.lockAcquire({ key, holder: { owner: 'a' }, ttlMs: 60_000 });
    expect(first).toMatchObject({ acquired: true, nesting: 1 });
    const outcome = await cutOffAcquire(key, () =>
      coordinator.lockAcquire({ key, holder: { owner: 'a' }, ttlMs: 60_000 }),
    );
    expect(outcome.terminated).toBe(1);
    expect(outcome.value).toMatchObject({ acquired: true, nesting: 2 });
    expect(await lockRows(key)).toEqual([{ owner: 'a', nesting: 2 }]);
    expect(await coordinator.lockRelease(key, 'a')).toMatchObject({ nesting: 1 });
    expect(await coordinator.lockRelease(key, 'a')).toMatchObject({ released: true, nesting: 0 });
    expect(await coordinator.lockState(key)).toBeUndefined();
  });

  it('a step whose lock acquire is cut off completes, and leaves the key free', async () => {
    const key = 'bad-input:step';
    await coordinator.lockAcquire({ key, holder: { owner: 'warm' }, ttlMs: 60_000 });
    await coordinator.lockRelease(key, 'warm');
    const engine = createEngine({ store, coordinator });
    const locked = reactor('bad-input-step')
      .step('charge', { lock: { key: () => key, ttl: '30s', wait: '1m' }, run: () => 'charged' })
      .returns('charge');
    const outcome = await cutOffAcquire(key, () => engine.run(locked, {}));
    expect(outcome.terminated).toBe(1);
    expect(outcome.value).toMatchObject({ status: 'completed', value: 'charged' });
    expect(await coordinator.lockState(key)).toBeUndefined();
  });
});

describe.skipIf(postgresBackendFactory() === undefined)('a role without rights on the schema', () => {
  let runtime: PostgresRuntime | undefined;
  afterAll(async () => {
    await runtime?.close();
  });

  it('start is refused with PostgresPermissionError naming the GRANTs; nothing is written', async () => {
    await admin.query('CREATE ROLE only_connect LOGIN');
    await admin.query('GRANT CONNECT ON DATABASE postgres TO only_connect');
    const before = (await admin.query('SELECT count(*)::int AS n FROM ts_reactor.executions')).rows[0] as { n: number };
    const url = server.url.replace('postgres://postgres@', 'postgres://only_connect@');
    const greet = reactor('bad-input-greet')
      .step('hello', { run: () => 'hi' })
      .returns('hello');
    runtime = createPostgresRuntime({ connection: url, reactors: [greet] });
    const refused = await runtime.ready().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(PostgresPermissionError);
    expect(refused).toMatchObject({
      code: 'postgres_permission_denied',
      details: { schema: 'ts_reactor', role: 'only_connect', missing: 'usage on schema' },
    });
    expect((refused as Error).message).toContain('GRANT USAGE ON SCHEMA ts_reactor TO "only_connect"');
    await expect(runtime.engine.start(greet, {})).rejects.toBeInstanceOf(PostgresPermissionError);
    await expect(runtime.engine.run(greet, {})).rejects.toBeInstanceOf(PostgresPermissionError);

    // With USAGE but no table rights, the check names the tables.
    await admin.query('GRANT USAGE ON SCHEMA ts_reactor TO only_connect');
    const store2 = new PostgresStore({ connection: url });
    try {
      await expect(store2.ready()).rejects.toMatchObject({
        code: 'postgres_permission_denied',
        details: { missing: expect.stringContaining('executions') },
      });
    } finally {
      await store2.close();
    }

    const after = (await admin.query('SELECT count(*)::int AS n FROM ts_reactor.executions')).rows[0] as { n: number };
    expect(after.n).toBe(before.n);
  });
});
