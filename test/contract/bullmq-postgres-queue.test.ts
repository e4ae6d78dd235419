/**
 * The queue contract on BullMQ 6's PostgreSQL backend, over a throwaway PostgreSQL server (the
 * harness: `bullmq-queue-harness.ts`), with the same capabilities as BullMQ on Redis. With BullMQ 5
 * installed (it has no PostgreSQL backend) the PostgreSQL queue is refused before anything opens.
 */
import { expect, test } from 'vitest';
import { RuntimeOptionError } from '../../src/errors.js';
import { createBullmqPostgresQueue, postgresBackendFactory } from '../../src/queue/bullmq-postgres.js';
import { usePostgresServer } from '../support/use-postgres-server.js';
import { BULLMQ_CAPABILITIES, bullmqBackend } from './bullmq-queue-harness.js';
import { describeQueueContract } from './queue-contract.js';

if (postgresBackendFactory() === undefined) {
  test('on BullMQ 5 a queue on PostgreSQL is refused: RuntimeOptionError naming the bullmq version', () => {
    const refused = (() => {
      try {
        createBullmqPostgresQueue({ connection: { url: 'postgres://127.0.0.1:1/none' } });
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(refused).toBeInstanceOf(RuntimeOptionError);
    expect((refused as RuntimeOptionError).details).toMatchObject({ option: 'bullmq' });
    expect((refused as Error).message).toMatch(/BullMQ 6/);
  });
} else {
  const server = usePostgresServer();
  describeQueueContract('bullmq on postgresql', BULLMQ_CAPABILITIES, () =>
    bullmqBackend({ kind: 'postgres', url: server.url }),
  );
}
