/**
 * Shared helpers of the background-execution tests: an engine over the embedded memory queue
 * whose consumer the test starts by hand, polling, gates.
 */
import {
  createEngine,
  MemoryCoordinator,
  MemoryStore,
  type Engine,
  type EngineOptions,
  type ReactorEvent,
  type RunResult,
} from '../../src/index.js';
import { createMemoryQueue, type MemoryQueue, type MemoryQueueOptions } from '../../src/queue/memory.js';
import { createWorker, type Worker } from '../../src/queue/worker.js';

/** A gate the test opens by hand. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `probe` until it returns a truthy value, or throws after `timeoutMs` (a deadline for a loaded machine, not a bound). */
export async function until<T>(
  probe: () => T | Promise<T>,
  timeoutMs = 15_000,
  what = 'condition',
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(3);
  }
}

/** Waits until the execution's result has `status`. */
export async function untilStatus(
  engine: Engine,
  executionId: string,
  status: RunResult['status'],
  timeoutMs = 15_000,
): Promise<RunResult> {
  return until(
    async () => {
      const r = await engine.result(executionId);
      return r?.status === status ? r : undefined;
    },
    timeoutMs,
    `${executionId} to be ${status}`,
  );
}

/** Events of `type` in a trace. */
export function eventsOf<T extends ReactorEvent['type']>(
  trace: readonly ReactorEvent[],
  type: T,
): Extract<ReactorEvent, { type: T }>[] {
  return trace.filter((e): e is Extract<ReactorEvent, { type: T }> => e.type === type);
}

/**
 * Keeps `key` held by `holder` but re-takes it every `everyMs` (a new acquisition, a new fencing
 * token) with no moment free in between: a parked waiter's fallback job finds another holder each
 * time, so every one of its polls contends and spends a contention attempt. Returns the stop
 * function (the key stays held).
 */
export function changeHolderEvery(
  coordinator: MemoryCoordinator,
  key: string,
  holder: { readonly owner: string },
  everyMs: number,
): () => void {
  const timer = setInterval(() => {
    // Both calls change the memory coordinator synchronously: no other job runs between them.
    void coordinator.lockRelease(key, holder.owner);
    void coordinator.lockAcquire({ key, holder, ttlMs: 30_000 });
  }, everyMs);
  return () => clearInterval(timer);
}

/** An engine over the memory queue, with the consumer not started (call `startWorker`). */
export interface Manual {
  readonly engine: Engine;
  readonly memory: MemoryQueue;
  readonly store: MemoryStore;
  readonly coordinator: MemoryCoordinator;
  /** Every event of every run, live. */
  readonly events: ReactorEvent[];
  startWorker(concurrency?: number): Worker;
}

export function manualEngine(
  options: Partial<EngineOptions> & { readonly queueOptions?: MemoryQueueOptions } = {},
): Manual {
  const { queueOptions, ...rest } = options;
  const memory = createMemoryQueue(queueOptions ?? {});
  const store = (options.store as MemoryStore | undefined) ?? new MemoryStore();
  const coordinator = (options.coordinator as MemoryCoordinator | undefined) ?? new MemoryCoordinator();
  const engine = createEngine({ store, coordinator, queue: memory.queue, waitList: memory.waitList, ...rest });
  const events: ReactorEvent[] = [];
  engine.subscribe((e) => events.push(e));
  return {
    engine,
    memory,
    store,
    coordinator,
    events,
    startWorker: (concurrency = 8) => createWorker({ engine, consumer: memory.consumer, concurrency }),
  };
}

/** Resolves once `promise` has settled or `turns` event-loop turns have passed: whether it settled. */
export async function settlesWithin(promise: Promise<unknown>, turns = 50): Promise<boolean> {
  let settled = false;
  void promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  for (let i = 0; i < turns && !settled; i++) await new Promise((resolve) => setImmediate(resolve));
  return settled;
}
