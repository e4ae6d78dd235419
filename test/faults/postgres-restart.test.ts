/**
 * PostgreSQL killed (SIGKILL to the postmaster and every backend) in the middle of a run, down
 * 3 s, restarted on the same port and data directory (it replays its WAL), while two worker
 * processes run executions of a reactor with a locked step (`support/pg-chaos-experiment.ts`).
 * Every acknowledged commit survives the crash; the workers ride out the outage, and the runs
 * interrupted by it are taken up again after their lease, by their job's redelivery or the
 * recovery sweep: 0 failed, 0 lost, 0 stuck, and no two bodies of one account inside at once.
 */
import { describe, expect, it } from 'vitest';
import { postgresBackendFactory } from '../../src/queue/bullmq-postgres.js';
import { CHILD_LINE_TIMEOUT_MS } from '../support/json-child.js';
import { runPgChaosExperiment } from './support/pg-chaos-experiment.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(postgresBackendFactory() === undefined)(
  'a PostgreSQL kill -9 and restart in the middle of a run',
  () => {
    it(
      '0 falsely failed, 0 lost, 0 stuck after lease and sweep; no overlap',
      async () => {
        const outcome = await runPgChaosExperiment({
          executions: 150,
          faultAfter: 20,
          stepMs: 100,
          fault: async (server) => {
            await server.kill();
            await sleep(3_000);
            await server.restart();
          },
        });
        console.info(`[postgres-restart] ${JSON.stringify(outcome)}`);
        expect(outcome.inFlight).toBeGreaterThan(0);
        expect(outcome).toMatchObject({ failed: 0, lost: 0, stuck: 0, completed: 150, overlaps: 0, failures: [] });
      },
      CHILD_LINE_TIMEOUT_MS + 400_000,
    );
  },
);
