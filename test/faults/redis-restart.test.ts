/**
 * Redis killed (SIGKILL) mid-run, down 3 s, restarted on the same port, while two worker
 * processes run executions of a reactor with a locked step (`support/restart-experiment.ts`;
 * `npm run --silent chaos` runs the long version). With AOF `always` nothing is failed, lost or
 * stuck; with `everysec` nothing is failed or stuck and a lost execution is one acknowledged
 * within the last second or two before the crash; without persistence the runtime warns at start-up and
 * `engine.wait` of a vanished execution rejects at once with `execution_not_found`.
 */
import { describe, expect, it } from 'vitest';
import { CHILD_LINE_TIMEOUT_MS } from '../support/json-child.js';
import { runRestartExperiment } from './support/restart-experiment.js';

/** A test's own deadline: the workers' start, the run, the outage and the settle time (150 s), with room. */
const TEST_TIMEOUT_MS = CHILD_LINE_TIMEOUT_MS + 300_000;

describe('a Redis kill -9 and restart in the middle of a run', () => {
  it(
    'AOF always: 0 failed, 0 lost, 0 stuck',
    async () => {
      const outcome = await runRestartExperiment({
        persistence: 'aof',
        executions: 120,
        stepMs: 100,
        killAfterMs: 300,
      });
      expect(outcome.inFlight).toBeGreaterThan(0);
      expect(outcome).toMatchObject({ failed: 0, lost: 0, stuck: 0, completed: 120, overlaps: 0, warnings: [] });
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'AOF everysec: 0 failed, 0 stuck; anything lost was acknowledged < 2 s before the crash',
    async () => {
      const outcome = await runRestartExperiment({
        persistence: 'aof-everysec',
        executions: 120,
        stepMs: 100,
        killAfterMs: 300,
      });
      expect(outcome).toMatchObject({ failed: 0, stuck: 0, overlaps: 0 });
      expect(outcome.lost).toBe(outcome.lostRecent);
      expect(outcome.completed + outcome.lost).toBe(120);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'no persistence: a start-up warning, and waiting on a vanished execution rejects at once',
    async () => {
      const outcome = await runRestartExperiment({ persistence: 'none', executions: 60, settleMs: 60_000 });
      expect(outcome.warnings.join(' ')).toMatch(/persistence is off/);
      expect(outcome).toMatchObject({ failed: 0, stuck: 0 });
      expect(outcome.lost).toBeGreaterThan(0);
      expect(outcome.waitOfLost).toBe('execution_not_found');
    },
    TEST_TIMEOUT_MS,
  );
});
