/**
 * Every client connection of the workers (and of the producer) terminated by the server
 * (`pg_terminate_backend`, three rounds) in the middle of a run, while two worker processes run
 * executions of a reactor with a locked step (`support/pg-chaos-experiment.ts`). The pools drop
 * the dead connections and open new ones, the LISTEN connections reconnect, and the runs cut off
 * mid-statement are taken up again: 0 failed, 0 lost, 0 stuck, no two bodies of one account
 * inside at once.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { postgresBackendFactory } from '../../src/queue/bullmq-postgres.js';
import { CHILD_LINE_TIMEOUT_MS } from '../support/json-child.js';
import { runPgChaosExperiment } from './support/pg-chaos-experiment.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(postgresBackendFactory() === undefined)('worker connections terminated in the middle of a run', () => {
  it(
    'the workers recover: 0 falsely failed, 0 lost, 0 stuck; no overlap',
    async () => {
      let terminated = 0;
      const outcome = await runPgChaosExperiment({
        executions: 150,
        faultAfter: 20,
        stepMs: 100,
        fault: async (server) => {
          for (let round = 0; round < 3; round++) {
            const admin = new pg.Client({ connectionString: server.url });
            await admin.connect();
            try {
              const { rows } = await admin.query<{ pid: number }>(
                "SELECT pid FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()",
              );
              for (const { pid } of rows)
                if ((await admin.query('SELECT pg_terminate_backend($1) AS ok', [pid])).rows[0]?.ok === true)
                  terminated++;
            } finally {
              await admin.end();
            }
            await sleep(500);
          }
        },
      });
      console.info(`[postgres-terminate] terminated ${terminated} connections; ${JSON.stringify(outcome)}`);
      expect(terminated).toBeGreaterThan(0);
      expect(outcome.inFlight).toBeGreaterThan(0);
      expect(outcome).toMatchObject({ failed: 0, lost: 0, stuck: 0, completed: 150, overlaps: 0, failures: [] });
    },
    CHILD_LINE_TIMEOUT_MS + 400_000,
  );
});
