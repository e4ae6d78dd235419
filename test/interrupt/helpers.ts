/**
 * Shared fixtures of the interrupt tests: an approval reactor that records what ran, and an
 * engine on the memory backend with a manual clock and a hand-started embedded worker.
 */
import { z } from 'zod';
import {
  createEngine,
  MemoryCoordinator,
  MemoryStore,
  reactor,
  type Engine,
  type EngineOptions,
  type ReactorEvent,
} from '../../src/index.js';
import { createMemoryQueue, type MemoryQueue } from '../../src/queue/memory.js';
import { createWorker, type Worker } from '../../src/queue/worker.js';
import { ManualClock } from '../../src/testing/index.js';

/** reserve → approve (interrupt) → ship; `log` records bodies and undos. */
export function approval(
  log: string[],
  settings: {
    readonly maxAttempts?: number;
    readonly timeout?: number;
    readonly timeoutStrategy?: 'lazy' | 'active';
    readonly resume?: 'inline' | 'background';
  } = {},
) {
  return reactor('approval')
    .input({ orderId: z.string() })
    .step('reserve', {
      run: ({ orderId }) => (log.push(`reserve ${orderId}`), `R-${orderId}`),
      undo: (r) => void log.push(`undo reserve ${r}`),
    })
    .interrupt('approve', {
      waitFor: ['reserve'],
      args: ($) => ({ orderId: $.input('orderId') }),
      payload: { approved: z.boolean(), by: z.string().default('ops') },
      correlationId: ({ orderId }) => `order:${orderId}`,
      ...settings,
    })
    .step('ship', {
      args: ($) => ({ approved: $.result('approve', 'approved'), by: $.result('approve', 'by') }),
      run: ({ approved, by }) => (log.push(`ship ${String(approved)} by ${by}`), approved ? 'shipped' : 'kept'),
      undo: () => void log.push('undo ship'),
    })
    .returns('ship');
}

/** An engine on the memory backend, a manual clock and an embedded queue whose worker the test starts. */
export interface MemoryRig {
  readonly engine: Engine;
  readonly clock: ManualClock;
  readonly store: MemoryStore;
  readonly coordinator: MemoryCoordinator;
  readonly memory: MemoryQueue;
  readonly events: ReactorEvent[];
  startWorker(): Worker;
}

export function memoryRig(options: Partial<EngineOptions> & { readonly autoAdvance?: boolean } = {}): MemoryRig {
  const { autoAdvance, ...rest } = options;
  const clock = new ManualClock({ autoAdvance: autoAdvance ?? true });
  const store = new MemoryStore({ clock });
  const coordinator = new MemoryCoordinator({ clock });
  const memory = createMemoryQueue({ clock });
  const engine = createEngine({
    store,
    interruptClaims: store,
    coordinator,
    clock,
    queue: memory.queue,
    waitList: memory.waitList,
    ...rest,
  });
  const events: ReactorEvent[] = [];
  engine.subscribe((e) => events.push(e));
  return {
    engine,
    clock,
    store,
    coordinator,
    memory,
    events,
    startWorker: () => createWorker({ engine, consumer: memory.consumer, concurrency: 4 }),
  };
}

/** Settles both promises; returns the fulfilled values and the rejections. */
export async function settleAll<T>(
  promises: readonly Promise<T>[],
): Promise<{ readonly ok: T[]; readonly errors: unknown[] }> {
  const settled = await Promise.allSettled(promises);
  return {
    ok: settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : [])),
    errors: settled.flatMap((s) => (s.status === 'rejected' ? [s.reason as unknown] : [])),
  };
}
