/**
 * Executions for the timeline tests, run in the test engine's worker pool on a manual clock, so
 * every entry of their traces falls at a known time:
 * - `journey`: queued with a 1 s delayed start; `before` runs 500 ms; `nap` sleeps 2 s; `post`
 *   parks on the lock `acct`, held by another process, which lets it go without a release wake,
 *   so the park ends when its own 15 s fallback job comes due; `charge` fails once after 300 ms,
 *   backs off 3 s, and succeeds in 200 ms.
 */
import { z } from 'zod';
import type { ReactorEvent } from '../../src/engine/model/events.js';
import { reactor, type ExecutionRecord } from '../../src/index.js';
import { ManualClock, createTestEngine, type TestEngine } from '../../src/testing/index.js';
import { until } from './fixtures.js';

/** The lock fallback of the journey's park. */
export const PARK_FALLBACK_MS = 15_000;

/** A test engine on a manual clock that only moves when the test (or a step body) moves it. */
export function manualEngine(): TestEngine {
  return createTestEngine({
    clock: new ManualClock({ autoAdvance: false }),
    background: { workerWaitMs: 0, parkFallbackMs: PARK_FALLBACK_MS },
  });
}

/** The journey's reactor; its step bodies move `clock` forward by how long they "run". */
export function journeyReactor(clock: ManualClock) {
  let failures = 1;
  return reactor('journey')
    .input({ orderId: z.string() })
    .step('before', { run: () => (clock.advance(500), 'ready') })
    .sleep('nap', { for: '2s', waitFor: ['before'] })
    .step('post', { waitFor: ['nap'], lock: { key: () => 'acct' }, run: () => (clock.advance(250), 'posted') })
    .step('charge', {
      waitFor: ['post'],
      retry: { maxAttempts: 3, backoff: 'fixed', baseDelay: '3s' },
      run: () => {
        clock.advance(failures > 0 ? 300 : 200);
        if (failures-- > 0) throw new Error('card declined');
        return 'charged';
      },
    })
    .build();
}

/** Waits (state, not time) until the record of `id` satisfies `probe`. */
export async function recordUntil(
  t: TestEngine,
  id: string,
  what: string,
  probe: (record: ExecutionRecord) => boolean,
): Promise<ExecutionRecord> {
  return until(
    async () => {
      const record = await t.engine.store.get(id);
      return record && probe(record) ? record : undefined;
    },
    what,
    15_000,
  );
}

const traced = (type: ReactorEvent['type']) => (r: ExecutionRecord) => (r.trace ?? []).some((e) => e.type === type);

/** Runs the journey to its end; returns its id and the engine clock's start. */
export async function runJourney(t: TestEngine, journey: ReturnType<typeof journeyReactor>): Promise<string> {
  const hold = await t.coordinator.lockAcquire({ key: 'acct', holder: { owner: 'ops-script' }, ttlMs: 60_000 });
  if (!hold.acquired) throw new Error('the test could not take acct');
  const { executionId: id } = await t.engine.start(journey, { orderId: 'o-1' }, { delay: '1s' });
  t.clock.advance(1_000); // the delayed start comes due: before runs, nap parks until its wake time
  await recordUntil(t, id, 'the sleep', traced('step.sleeping'));
  await recordUntil(t, id, 'the sleep to park', (r) => r.status === 'parked');
  t.clock.advance(2_000); // the wake: nap completes, post meets the held lock and parks
  await recordUntil(t, id, 'the lock park', traced('run.parked'));
  t.clock.advance(6_500);
  // The holder lets go through the coordinator itself: no release wakes the waiter.
  await t.coordinator.lockRelease('acct', 'ops-script');
  t.clock.advance(PARK_FALLBACK_MS - 6_500); // the fallback job comes due: post runs, charge fails once
  await recordUntil(t, id, 'the retry', traced('step.retrying'));
  await recordUntil(t, id, 'the retry to be queued', (r) =>
    (r.trace ?? []).some((e) => e.type === 'run.queued' && e.reason === 'retry'),
  );
  t.clock.advance(3_000); // the backoff passes: charge succeeds
  await recordUntil(t, id, 'the journey to complete', (r) => r.status === 'completed');
  return id;
}

/** The time of the first entry of `type` in `trace` (the first after the first `after` entry, when given). */
export function timeOf(
  trace: readonly ReactorEvent[],
  type: ReactorEvent['type'],
  after?: ReactorEvent['type'],
): number {
  const from = after === undefined ? 0 : trace.findIndex((e) => e.type === after) + 1;
  const event = from === 0 && after !== undefined ? undefined : trace.slice(from).find((e) => e.type === type);
  if (!event) throw new Error(`no ${type}${after === undefined ? '' : ` after ${after}`} in the trace`);
  return event.at;
}
