/**
 * What the PostgreSQL store adds to the Store contract: the schema check and the migration
 * runner, the record kept as written, the projected columns, kept history and retention, large
 * maps' element states, whose pool it ends, and a database it cannot reach.
 */
import pg from 'pg';
import { describe, expect, test } from 'vitest';
import { ReactorError } from '../../src/errors.js';
import { RECORD_VERSION, type ExecutionRecord } from '../../src/ports/store.js';
import { migrate, schemaVersion } from '../../src/storage/postgres/migrate.js';
import { SCHEMA_VERSION } from '../../src/storage/postgres/migrations/index.js';
import { PostgresNames } from '../../src/storage/postgres/names.js';
import { PostgresStore } from '../../src/storage/postgres/store.js';
import { usePostgresServer } from '../support/use-postgres-server.js';

const server = usePostgresServer();
const T0 = Date.UTC(2026, 0, 1);

function record(id: string, overrides: Partial<ExecutionRecord> = {}): ExecutionRecord {
  return {
    v: RECORD_VERSION,
    id,
    rootId: id,
    reactor: 'Checkout',
    status: 'running',
    input: {},
    steps: {},
    rollbackFailures: [],
    createdAt: T0,
    updatedAt: T0,
    ...overrides,
  };
}

const schema = (): string => `t_${crypto.randomUUID().slice(0, 8)}`;

async function withPool<T>(use: (pool: pg.Pool) => Promise<T>): Promise<T> {
  const pool = new pg.Pool({ connectionString: server.url });
  try {
    return await use(pool);
  } finally {
    await pool.end();
  }
}

describe('PostgreSQL schema versions', () => {
  test('a store refuses a schema that is missing, naming both versions and how to migrate; migrate: true creates it', async () => {
    const name = schema();
    const unmigrated = new PostgresStore({ connection: server.url, schema: name });
    try {
      const error: unknown = await unmigrated.get('e1').catch((e: unknown) => e);
      expect(ReactorError.is(error, 'postgres_schema_mismatch')).toBe(true);
      expect((error as ReactorError).details).toEqual({ schema: name, found: 0, expected: SCHEMA_VERSION });
      expect((error as Error).message).toContain('ts-reactor migrate --postgres <url>');
      expect((error as Error).message).toContain('migrate: true');
      const migrated = new PostgresStore({ connection: server.url, schema: name, migrate: true });
      await migrated.save(record('e1'));
      await migrated.close();
      expect(await unmigrated.get('e1')).toEqual(record('e1')); // checked again: now at the version
    } finally {
      await unmigrated.close();
    }
  });

  test('a schema newer than this ts-reactor is refused, by the store and by the runner', async () => {
    const names = new PostgresNames(schema());
    await withPool(async (pool) => {
      await migrate(pool, names);
      await pool.query(`INSERT INTO ${names.schemaMigrations} (version, name) VALUES ($1, 'future')`, [
        SCHEMA_VERSION + 1,
      ]);
      const store = new PostgresStore({ connection: pool, schema: names.schema });
      await expect(store.ready()).rejects.toMatchObject({
        code: 'postgres_schema_mismatch',
        details: { found: SCHEMA_VERSION + 1, expected: SCHEMA_VERSION },
        message: expect.stringContaining('upgrade ts-reactor') as unknown,
      });
      await expect(migrate(pool, names)).rejects.toMatchObject({ code: 'postgres_schema_mismatch' });
    });
  });

  test('runners started together apply each migration once, and record it', async () => {
    const names = new PostgresNames(schema());
    await withPool(async (pool) => {
      const results = await Promise.all([1, 2, 3, 4].map(() => migrate(pool, names)));
      expect(results.flatMap((r) => r.applied).sort((a, b) => a - b)).toEqual(
        Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1),
      );
      for (const result of results) expect(result.to).toBe(SCHEMA_VERSION);
      expect(await schemaVersion(pool, names)).toBe(SCHEMA_VERSION);
      expect((await migrate(pool, names)).applied).toEqual([]);
      const { rows } = await pool.query<{ version: number; name: string }>(
        `SELECT version, name FROM ${names.schemaMigrations} ORDER BY version`,
      );
      expect(rows[0]).toEqual({ version: 1, name: 'store' });
    });
  });

  test('a schema name that is not a plain lower-case identifier is refused before connecting', () => {
    for (const bad of ['Public', 'a-b', '1x', 'pg_x', 'x;drop', '', 'a'.repeat(64)])
      expect(() => new PostgresStore({ connection: server.url, schema: bad }), bad).toThrow(
        expect.objectContaining({ code: 'runtime_option_invalid' }),
      );
  });
});

describe('PostgreSQL store rows', () => {
  const open = async (options: { recordTtlMs?: number } = {}): Promise<PostgresStore> => {
    const store = new PostgresStore({ connection: server.url, schema: schema(), migrate: true, ...options });
    await store.ready();
    return store;
  };

  test('keeps the record as written (key order included) and projects its columns', async () => {
    const store = await open();
    try {
      const saved = record('child', {
        rootId: 'root',
        parentId: 'root',
        status: 'completed',
        version: '2',
        tags: { region: 'eu' },
        input: { zeta: 1, alpha: { y: 2, x: 1 } },
        updatedAt: T0 + 1_500,
      });
      await store.save(saved);
      const back = await store.get('child');
      expect(JSON.stringify(back)).toBe(JSON.stringify(saved));
      const { rows } = await store.pool.query<Record<string, unknown>>(
        `SELECT reactor, status, definition_version, root_id, parent_id, tags, created_at, updated_at, finished_at, expires_at
         FROM ${store.names.executions} WHERE id = 'child'`,
      );
      expect(rows[0]).toEqual({
        reactor: 'Checkout',
        status: 'completed',
        definition_version: '2',
        root_id: 'root',
        parent_id: 'root',
        tags: { region: 'eu' },
        created_at: new Date(T0),
        updated_at: new Date(T0 + 1_500),
        finished_at: new Date(T0 + 1_500),
        expires_at: null, // history is kept
      });
    } finally {
      await store.close();
    }
  });

  test('with recordTtlMs, a record and its claims are gone once the database clock passes it', async () => {
    const store = await open({ recordTtlMs: 200 });
    try {
      await store.claimIdempotency('Checkout', 'k', 'e1', record('e1'));
      await store.claimCorrelation('corr', 'e1');
      expect(await store.get('e1')).toBeDefined();
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect(await store.get('e1')).toBeUndefined();
      expect((await store.list()).records).toEqual([]);
      expect(await store.idempotencyHolder('Checkout', 'k')).toBeUndefined();
      expect(await store.correlation('corr')).toBeUndefined();
      expect(await store.claimIdempotency('Checkout', 'k', 'e2')).toEqual({ claimed: true });
    } finally {
      await store.close();
    }
  });

  test("keeps a large map's element states apart and reads them back with the record", async () => {
    const store = await open();
    try {
      const states = { v: 1 as const, rev: 1, size: 2, status: 'cc', results: [1, 2] };
      const saved = record('m1', { mapStates: { fan: states } });
      await store.save(saved);
      expect((await store.get('m1'))?.mapStates).toEqual({ fan: states });
      await store.save(record('m1', { mapStates: { fan: states }, status: 'completed' })); // same rev: not sent again
      expect((await store.get('m1'))?.mapStates).toEqual({ fan: states });
      const { rows } = await store.pool.query(`SELECT path, rev FROM ${store.names.executionMapParts}`);
      expect(rows).toEqual([{ path: 'fan', rev: '1' }]);
    } finally {
      await store.close();
    }
  });

  test("leaves the application's own pool open, and refuses a single client", async () => {
    await withPool(async (pool) => {
      const store = new PostgresStore({ connection: pool, schema: schema(), migrate: true });
      await store.save(record('e1'));
      await store.close();
      expect((await pool.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    });
    const client = new pg.Client({ connectionString: server.url });
    expect(() => new PostgresStore({ connection: client })).toThrow(
      expect.objectContaining({ code: 'runtime_option_invalid' }),
    );
  });

  test('a database it cannot reach is StoreUnavailableError', async () => {
    const store = new PostgresStore({
      connection: { connectionString: 'postgres://postgres@127.0.0.1:1/postgres', connectionTimeoutMillis: 2_000 },
    });
    try {
      await expect(store.get('e1')).rejects.toMatchObject({ code: 'store_unavailable' });
    } finally {
      await store.close();
    }
  });
});

describe('PostgreSQL store across a server crash', () => {
  const crashing = usePostgresServer();

  test('a call while the server is down is StoreUnavailableError; after its restart the store works on, committed records intact', async () => {
    const store = new PostgresStore({ connection: crashing.url, schema: schema(), migrate: true });
    try {
      await store.save(record('before'));
      await crashing.handle.kill();
      await expect(store.get('before')).rejects.toMatchObject({ code: 'store_unavailable' });
      await crashing.handle.restart();
      await expect.poll(() => store.get('before').catch(() => 'unavailable')).toEqual(record('before'));
      await store.save(record('after'));
      expect((await store.list()).records.map((r) => r.id).sort()).toEqual(['after', 'before']);
    } finally {
      await store.close();
    }
  });
});
