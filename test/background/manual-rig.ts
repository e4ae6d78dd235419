/**
 * An embedded engine on the memory backend with a manual clock (no sleeps) and a worker over the
 * memory queue, for the tests of waiting on a busy key: the clock moves only when the test moves
 * it, and `settle` runs the queue out between moves.
 */
import {
  createEngine,
  MemoryCoordinator,
  MemoryStore,
  type AnyReactorDefinition,
  type Engine,
  type RunResult,
} from '../../src/index.js';
import { createMemoryQueue } from '../../src/queue/memory.js';
import { createWorker, type Worker } from '../../src/queue/worker.js';
import { ManualClock } from '../../src/testing/index.js';

/** A holder of a key outside any engine: it stays live (its hold never lapses) until the test releases it. */
export const DIRECT = { owner: 'direct-holder', reactor: 'elsewhere' };
/** Another such holder. */
export const OTHER = { owner: 'another-holder', reactor: 'elsewhere' };

/** The engine, its parts and the means to move time. */
export interface Rig {
  readonly engine: Engine;
  readonly clock: ManualClock;
  readonly store: MemoryStore;
  readonly coordinator: MemoryCoordinator;
  readonly memory: ReturnType<typeof createMemoryQueue>;
  readonly worker: Worker;
  /** Yields until no job is ready and only `running` jobs run (the holders' jobs). */
  settle(running?: number): Promise<void>;
  /** Moves the clock forward by `totalMs` in steps of `stepMs`, settling after each. */
  advance(totalMs: number, stepMs: number, running?: number): Promise<void>;
  close(): Promise<void>;
}

/** A rig processing `reactors`; `background` overrides `workerWaitMs: 0, parkFallbackMs: 200, contentionCap: 3`. */
export function rig(
  reactors: readonly AnyReactorDefinition[],
  background: { readonly parkFallbackMs?: number; readonly contentionCap?: number } = {},
): Rig {
  const clock = new ManualClock({ autoAdvance: false });
  const store = new MemoryStore({ clock });
  const coordinator = new MemoryCoordinator({ clock });
  const memory = createMemoryQueue({ clock });
  const engine = createEngine({
    store,
    coordinator,
    clock,
    queue: memory.queue,
    waitList: memory.waitList,
    background: { workerWaitMs: 0, parkFallbackMs: 200, contentionCap: 3, ...background },
  });
  const worker = createWorker({ engine, consumer: memory.consumer, reactors, concurrency: 4 });
  const settle = async (running = 0): Promise<void> => {
    for (let i = 0; i < 20_000; i++) {
      const counts = memory.queue.counts();
      if (counts.ready === 0 && counts.running <= running) {
        // A few more turns: the promises a finished job left (wake-ups) run out.
        for (let j = 0; j < 5; j++) await new Promise((resolve) => setImmediate(resolve));
        const again = memory.queue.counts();
        if (again.ready === 0 && again.running <= running) return;
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    throw new Error(`the queue never settled: ${JSON.stringify(memory.queue.counts())}`);
  };
  const advance = async (totalMs: number, stepMs: number, running = 0): Promise<void> => {
    for (let t = 0; t < totalMs; t += stepMs) {
      clock.advance(stepMs);
      await settle(running);
    }
  };
  return {
    engine,
    clock,
    store,
    coordinator,
    memory,
    worker,
    settle,
    advance,
    close: async () => (await worker.stop(), await memory.queue.close()),
  };
}

/** The result of `id`, which must exist. */
export async function result(engine: Engine, id: string): Promise<RunResult> {
  const r = await engine.result(id);
  if (!r) throw new Error(`no result for ${id}`);
  return r;
}
