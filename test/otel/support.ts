/**
 * Helpers of the OTel tests: the no-leak check, and an engine over the embedded memory queue on
 * a manual clock whose delayed jobs wait for the test to advance it.
 */
import { expect } from 'vitest';
import {
  createEngine,
  MemoryCoordinator,
  MemoryFanOutLedger,
  MemoryStore,
  type Engine,
  type ReactorEvent,
  type RunResult,
} from '../../src/index.js';
import { createMemoryQueue } from '../../src/queue/memory.js';
import { ManualClock } from '../../src/testing/index.js';
import type { Tracing } from './tracing.js';

/** Every span started has ended, and the middleware holds nothing open. */
export function expectNoLeaks(t: Tracing): void {
  expect(t.counts.started).toBeGreaterThan(0);
  expect(t.counts.ended).toBe(t.counts.started);
  expect(t.spans()).toHaveLength(t.counts.started);
  expect(t.middleware.openSpans).toBe(0);
}

/** An engine over the embedded memory queue on a manual clock (delayed jobs wait for `advance`). */
export function workerEngine(
  t: Tracing | undefined,
  shared?: {
    clock: ManualClock;
    store: MemoryStore;
    coordinator: MemoryCoordinator;
    memory: ReturnType<typeof createMemoryQueue>;
  },
) {
  const clock = shared?.clock ?? new ManualClock({ autoAdvance: false });
  const store = shared?.store ?? new MemoryStore({ clock });
  const coordinator = shared?.coordinator ?? new MemoryCoordinator({ clock });
  const memory = shared?.memory ?? createMemoryQueue({ clock });
  const engine = createEngine({
    store,
    interruptClaims: store,
    coordinator,
    clock,
    queue: memory.queue,
    waitList: memory.waitList,
    fanOut: new MemoryFanOutLedger(),
    background: { workerWaitMs: 0 },
    middleware: t ? [t.middleware] : [],
  });
  return { engine, clock, store, coordinator, memory };
}

/** The execution's result once it is terminal (yields to the event loop between reads; the manual clock never moves by itself). */
export async function settled(engine: Engine, executionId: string): Promise<RunResult> {
  for (let i = 0; i < 10_000; i++) {
    const current = await engine.result(executionId);
    if (current && ['completed', 'failed', 'halted', 'cancelled'].includes(current.status)) return current;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`execution ${executionId} did not finish`);
}

/** Resolves once the queue holds one delayed job and runs nothing (the job that enqueued it has ended). */
export async function delayedOnly(memory: ReturnType<typeof createMemoryQueue>): Promise<void> {
  for (let i = 0; i < 10_000; i++) {
    const counts = memory.queue.counts();
    if (counts.delayed === 1 && counts.running === 0 && counts.ready === 0) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`the queue never settled on one delayed job: ${JSON.stringify(memory.queue.counts())}`);
}

/** Resolves with the first event of `engine` matching `accept`. */
export function nextEvent(engine: Engine, accept: (e: ReactorEvent) => boolean): Promise<ReactorEvent> {
  return new Promise((resolve) => {
    const stop = engine.subscribe((e) => {
      if (accept(e)) {
        stop();
        resolve(e);
      }
    });
  });
}
