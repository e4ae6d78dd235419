/**
 * `createPostgresRuntime` in process, on a real server and no Redis: `run` inline, `start` taken
 * by a worker of the runtime, the result read back; a runtime on a schema not migrated refuses
 * `start` with the schema error and writes nothing.
 */
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { text } from '../../src/cli/demo-schema.js';
import { reactor } from '../../src/dsl/reactor.js';
import { RuntimeOptionError } from '../../src/errors.js';
import { createPostgresRuntime, PostgresSchemaError, type PostgresRuntime } from '../../src/postgres.js';
import { postgresBackendFactory } from '../../src/queue/bullmq-postgres.js';
import { usePostgresServer } from '../support/use-postgres-server.js';

const greet = reactor('pg-greet')
  .input({ name: text() })
  .step('hello', { run: ({ name }) => `hello ${name}` })
  .step('shout', {
    args: ($) => ({ said: $.result('hello') }),
    run: ({ said }) => said.toUpperCase(),
  })
  .returns('shout');

const opened: PostgresRuntime[] = [];

afterEach(async () => {
  while (opened.length > 0) await opened.pop()?.close();
});

describe.skipIf(postgresBackendFactory() === undefined)('createPostgresRuntime', () => {
  const server = usePostgresServer();

  function runtime(options: Partial<Parameters<typeof createPostgresRuntime>[0]> = {}): PostgresRuntime {
    const created = createPostgresRuntime({ connection: server.url, reactors: [greet], ...options });
    opened.push(created);
    return created;
  }

  it('runs inline, and in a worker of its own: start, then the result read back', async () => {
    const rt = runtime({ migrate: true });
    await rt.ready();
    const inline = await rt.engine.run(greet, { name: 'ada' });
    expect(inline).toMatchObject({ status: 'completed', value: 'HELLO ADA' });

    rt.startWorker({ concurrency: 2 });
    const started = await rt.engine.start(greet, { name: 'grace' });
    const done = await rt.engine.wait(started.executionId, greet, { timeoutMs: 60_000 });
    expect(done).toMatchObject({ status: 'completed', value: 'HELLO GRACE' });
    expect(await rt.engine.result(started.executionId, greet)).toMatchObject({ status: 'completed' });
    expect(rt.health().subscriptions.confirmed).toBe(true);
  }, 120_000);

  it('on a schema not migrated: start rejects with PostgresSchemaError, and nothing is written', async () => {
    const rt = runtime({ schema: 'not_migrated_runtime' });
    await expect(rt.ready()).rejects.toBeInstanceOf(PostgresSchemaError);
    await expect(rt.engine.start(greet, { name: 'nobody' })).rejects.toBeInstanceOf(PostgresSchemaError);
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    try {
      const found = await client.query(
        "SELECT 1 FROM information_schema.schemata WHERE schema_name = 'not_migrated_runtime'",
      );
      expect(found.rowCount).toBe(0);
    } finally {
      await client.end();
    }
  });
});

// The leg on BullMQ 5 (no PostgreSQL backend there): the runtime is refused before anything opens.
describe.runIf(postgresBackendFactory() === undefined)('createPostgresRuntime on BullMQ 5', () => {
  it('is refused with a RuntimeOptionError naming bullmq, and opens nothing', async () => {
    let caught: unknown;
    try {
      const runtime = createPostgresRuntime({ connection: 'postgres://postgres@127.0.0.1:1/none', reactors: [greet] });
      opened.push(runtime);
      await runtime.ready();
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(RuntimeOptionError);
    expect((caught as RuntimeOptionError).details).toMatchObject({ option: 'bullmq' });
  });
});
