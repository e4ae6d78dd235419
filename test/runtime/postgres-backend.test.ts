/**
 * The PostgreSQL backend's start-up check on a real server: a wrong URL, a database without the
 * schema and a schema of another version are each refused with a typed error before anything is
 * written; `migrate: true` applies the migrations; the durability settings are read with `SHOW`
 * (the test server runs with `fsync=off`) and refused with `requireDurability` in PostgreSQL's
 * words. Also `ts-reactor migrate`, in process.
 */
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { runMigrateCommand } from '../../src/cli/migrate.js';
import { readFileSync, writeFileSync } from 'node:fs';
import {
  DurabilityError,
  errorFromJSON,
  RuntimeOptionError,
  StoreUnavailableError,
  type ReactorError,
} from '../../src/errors.js';
import { postgresReadiness } from '../../src/metrics/readiness.js';
import { postgresBackendFactory } from '../../src/queue/bullmq-postgres.js';
import { createPostgresBackend, type PostgresBackend } from '../../src/queue/postgres-backend.js';
import { PostgresLoginError, PostgresSchemaError, SCHEMA_VERSION } from '../../src/storage/postgres/index.js';
import { freePort } from '../support/redis-server.js';
import { usePostgresServer } from '../support/use-postgres-server.js';

const opened: PostgresBackend[] = [];

afterEach(async () => {
  while (opened.length > 0) await opened.pop()?.close();
});

/** Why `promise` rejected (fails the test when it resolves). */
async function refusal(promise: Promise<unknown>): Promise<ReactorError> {
  try {
    await promise;
  } catch (error) {
    return error as ReactorError;
  }
  throw new Error('expected a rejection');
}

describe.skipIf(postgresBackendFactory() === undefined)('createPostgresBackend', () => {
  const server = usePostgresServer();

  function backend(options: Partial<Parameters<typeof createPostgresBackend>[0]> = {}): PostgresBackend {
    const created = createPostgresBackend({ connection: server.url, ...options });
    opened.push(created);
    return created;
  }

  async function query<R>(text: string, values: unknown[] = []): Promise<R[]> {
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    try {
      return (await client.query(text, values)).rows as R[];
    } finally {
      await client.end();
    }
  }

  const schemaExists = async (schema: string): Promise<boolean> =>
    (await query('SELECT 1 FROM information_schema.schemata WHERE schema_name = $1', [schema])).length > 0;

  it('a database not reached (wrong port): StoreUnavailableError, with a JSON round trip', async () => {
    const url = `postgres://postgres@127.0.0.1:${await freePort()}/postgres`;
    const error = await refusal(backend({ connection: url }).ready);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect(error).toMatchObject({ code: 'store_unavailable', details: { operation: 'schema-check' } });
    expect(errorFromJSON(JSON.parse(JSON.stringify(error)) as never)).toBeInstanceOf(StoreUnavailableError);
  });

  it('a database without the schema: PostgresSchemaError naming both versions and the fix; nothing written', async () => {
    const error = await refusal(backend({ schema: 'never_migrated' }).ready);
    expect(error).toBeInstanceOf(PostgresSchemaError);
    expect(error).toMatchObject({
      code: 'postgres_schema_mismatch',
      details: { schema: 'never_migrated', found: 0, expected: SCHEMA_VERSION },
    });
    expect(error.message).toContain(`needs version ${SCHEMA_VERSION}`);
    expect(error.message).toContain('ts-reactor migrate --postgres <url>');
    expect(await schemaExists('never_migrated')).toBe(false);
    const back = errorFromJSON(JSON.parse(JSON.stringify(error)) as never);
    expect(back).toBeInstanceOf(PostgresSchemaError);
  });

  it('a schema of another version: PostgresSchemaError with both versions; the schema is left as it was', async () => {
    await backend({ schema: 'from_the_future', migrate: true }).ready;
    await query(
      "INSERT INTO from_the_future.schema_migrations (version, name) VALUES ($1, 'from a newer ts-reactor')",
      [SCHEMA_VERSION + 1],
    );
    const error = await refusal(backend({ schema: 'from_the_future' }).ready);
    expect(error).toBeInstanceOf(PostgresSchemaError);
    expect(error).toMatchObject({ details: { found: SCHEMA_VERSION + 1, expected: SCHEMA_VERSION } });
    expect(error.message).toContain('upgrade ts-reactor');
    // migrate: true refuses it too, and applies nothing
    expect(await refusal(backend({ schema: 'from_the_future', migrate: true }).ready)).toBeInstanceOf(
      PostgresSchemaError,
    );
    const versions = await query<{ version: number }>(
      'SELECT version FROM from_the_future.schema_migrations ORDER BY version',
    );
    expect(versions.map((v) => v.version)).toEqual([
      ...Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1),
      SCHEMA_VERSION + 1,
    ]);
    expect(await query('SELECT 1 FROM from_the_future.executions')).toEqual([]);
  });

  it('migrate: true applies the migrations, then reads fsync and synchronous_commit (warnings, not a refusal)', async () => {
    const created = backend({ schema: 'migrated_at_start', migrate: true });
    const report = await created.ready;
    expect(report).toMatchObject({ checked: true, durable: false, persistence: 'no_fsync', evicts: false });
    expect(report.settings).toEqual({ fsync: 'off', synchronousCommit: 'on' });
    expect(report.warnings.join('\n')).toContain('set fsync = on');
    const versions = await query<{ version: number }>(
      'SELECT max(version) AS version FROM migrated_at_start.schema_migrations',
    );
    expect(versions[0]?.version).toBe(SCHEMA_VERSION);
    expect(created.health().subscriptions).toMatchObject({ confirmed: true });
  });

  it('requireDurability on a server with fsync off: DurabilityError in PostgreSQL words', async () => {
    const error = await refusal(backend({ schema: 'durable_check', migrate: true, requireDurability: true }).ready);
    expect(error).toBeInstanceOf(DurabilityError);
    expect(error.code).toBe('durability_required');
    expect(error.message).toMatch(/^requireDurability: PostgreSQL is not durable: PostgreSQL fsync is off/);
    expect(error.details).toMatchObject({ persistence: 'no_fsync', evicts: false, checked: true });
    expect(errorFromJSON(JSON.parse(JSON.stringify(error)) as never)).toBeInstanceOf(DurabilityError);
  });

  it('postgresReadiness (/readyz): the database answers SELECT 1, the LISTEN connection listens; a server not reached is not ready', async () => {
    const created = backend({ schema: 'readiness_check', migrate: true });
    await created.ready;
    const ready = postgresReadiness({ pool: created.pool, subscriptions: () => created.health().subscriptions });
    expect(await ready()).toEqual([
      { name: 'postgres', ok: true },
      { name: 'subscriptions', ok: true },
    ]);
    const gone = new pg.Pool({ connectionString: `postgres://postgres@127.0.0.1:${await freePort()}/postgres` });
    gone.on('error', () => undefined);
    const [check] = await postgresReadiness({ pool: gone })();
    expect(check).toMatchObject({ name: 'postgres', ok: false });
    await gone.end();
  });

  it('a URL of another scheme: RuntimeOptionError naming the option and the scheme, never the password; nothing opened', () => {
    const refused = (options: Parameters<typeof createPostgresBackend>[0]): RuntimeOptionError => {
      try {
        createPostgresBackend(options);
      } catch (error) {
        expect(error).toBeInstanceOf(RuntimeOptionError);
        expect((error as Error).message).not.toContain('secret');
        return error as RuntimeOptionError;
      }
      throw new Error('expected a RuntimeOptionError');
    };
    const redis = refused({ connection: 'redis://user:secret@127.0.0.1:6399/0' });
    expect(redis.message).toBe(
      'createPostgresBackend: connection must be a postgres:// or postgresql:// URL (a Redis URL: Redis runs on createRedisRuntime); got "redis:"',
    );
    expect(redis.details).toEqual({ factory: 'createPostgresBackend', option: 'connection', value: '"redis:"' });
    expect(refused({ connection: 'http://user:secret@db/app' }).message).toContain('got "http:"');
    expect(refused({ connection: 'user:secret@db/app' }).details).toMatchObject({ value: '"user:"' });
    expect(refused({ connection: '//db/app' }).details).toMatchObject({ value: 'no scheme' });
    expect(refused({ connection: server.url, jobsUrl: 'mysql://user:secret@db/app' }).details).toMatchObject({
      option: 'jobsUrl',
      value: '"mysql:"',
    });
    expect(errorFromJSON(JSON.parse(JSON.stringify(redis)) as never)).toBeInstanceOf(RuntimeOptionError);
  });

  it('a host that does not resolve: StoreUnavailableError (schema-check)', async () => {
    const error = await refusal(
      backend({ connection: 'postgres://postgres@no-such-host.invalid:5432/postgres' }).ready,
    );
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect(error).toMatchObject({ code: 'store_unavailable', details: { operation: 'schema-check' } });
  });

  it('a wrong password, an unknown role, a missing database: PostgresLoginError naming the fix; nothing written', async () => {
    // The server trusts every login but the role `app`'s, which must give its password.
    await query("CREATE ROLE app LOGIN PASSWORD 'right'");
    const hba = (await query<{ hba_file: string }>('SHOW hba_file'))[0]!.hba_file;
    writeFileSync(hba, `host all app 127.0.0.1/32 scram-sha-256\n${readFileSync(hba, 'utf8')}`);
    await query('SELECT pg_reload_conf()');
    const at = (user: string, database = 'postgres') =>
      `postgres://${user}@127.0.0.1:${server.handle.port}/${database}`;

    const password = await refusal(
      backend({ connection: at('app:wrong'), schema: 'login_check', migrate: true }).ready,
    );
    expect(password).toBeInstanceOf(PostgresLoginError);
    expect(password).toMatchObject({
      code: 'postgres_login_refused',
      details: { sqlstate: '28P01', refused: 'login' },
    });
    expect(password.message).toBe(
      'PostgreSQL refused the connection: password authentication failed for user "app": check the user and password in the connection string (and that the role may log in)',
    );
    expect(errorFromJSON(JSON.parse(JSON.stringify(password)) as never)).toBeInstanceOf(PostgresLoginError);

    const role = await refusal(backend({ connection: at('nobody'), schema: 'login_check', migrate: true }).ready);
    expect(role).toMatchObject({ code: 'postgres_login_refused', details: { sqlstate: '28000', refused: 'login' } });
    expect(role.message).toContain('role "nobody" does not exist');

    const database = await refusal(
      backend({ connection: at('postgres', 'no_such_db'), schema: 'login_check', migrate: true }).ready,
    );
    expect(database).toMatchObject({
      code: 'postgres_login_refused',
      details: { sqlstate: '3D000', refused: 'database' },
    });
    expect(database.message).toContain('check the database name in the connection string, or create the database');

    // None of the refused ones created the schema; the right password gets as far as the schema check.
    expect(await schemaExists('login_check')).toBe(false);
    expect(await refusal(backend({ connection: at('app:right'), schema: 'app_login' }).ready)).toBeInstanceOf(
      PostgresSchemaError,
    );
  });

  it("an application's pg.Pool needs jobsUrl (BullMQ opens its own connections): RuntimeOptionError, nothing opened", () => {
    const pool = new pg.Pool({ connectionString: 'postgres://nobody@127.0.0.1:1/none' });
    expect(() => createPostgresBackend({ connection: pool })).toThrow(RuntimeOptionError);
    expect(() => createPostgresBackend({ connection: pool })).toThrow(/jobsUrl/);
    expect(pool.totalCount).toBe(0);
    void pool.end();
  });
});

describe.skipIf(postgresBackendFactory() === undefined)('ts-reactor migrate', () => {
  const server = usePostgresServer();

  it('applies the migrations and prints the versions; a second run has nothing to apply', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const io = { out: (line: string) => out.push(line), err: (line: string) => err.push(line) };
    expect(await runMigrateCommand(['--postgres', server.url, '--schema', 'cli_migrated'], io)).toBe(0);
    const all = Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1).join(', ');
    expect(out.at(-1)).toContain(`schema "cli_migrated"`);
    expect(out.at(-1)).toContain(`version 0 -> ${SCHEMA_VERSION} (applied ${all})`);
    expect(await runMigrateCommand(['--postgres', server.url, '--schema', 'cli_migrated'], io)).toBe(0);
    expect(out.at(-1)).toContain(`version ${SCHEMA_VERSION} -> ${SCHEMA_VERSION} (nothing to apply)`);
    expect(err).toEqual([]);
  });

  it('refuses a URL of another backend, a bad schema name and an unreachable server with exit 2', async () => {
    const err: string[] = [];
    const io = { out: () => undefined, err: (line: string) => err.push(line) };
    expect(await runMigrateCommand(['--postgres', 'redis://127.0.0.1:6379'], io)).toBe(2);
    expect(err.at(-1)).toContain('use --redis <url>');
    expect(await runMigrateCommand(['--postgres', server.url, '--schema', 'Bad-Name'], io)).toBe(2);
    expect(err.at(-1)).toContain('--schema');
    expect(await runMigrateCommand(['--postgres', `postgres://postgres@127.0.0.1:${await freePort()}/x`], io)).toBe(2);
    expect(err.at(-1)).toContain('cannot reach PostgreSQL');
    expect(await runMigrateCommand([], io)).toBe(2);
    expect(err.at(-1)).toContain('missing --postgres <url>');
  });
});
