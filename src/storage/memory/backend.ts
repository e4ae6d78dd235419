/**
 * The memory backend as one {@link Backend}: store, coordinator, fan-out ledger, interrupt
 * claims, the execution stream, the embedded queue with its wait lists and its one consumer, and the schedules on
 * timers — everything in this process, on one injectable clock. `createEmbeddedEngine` and
 * `createRuntime(createMemoryBackend(), …)` run on it.
 *
 * @module
 */
import type { Backend } from '../../ports/backend.js';
import { systemClock, type Clock } from '../../ports/clock.js';
import type { Coordinator } from '../../ports/coordinator.js';
import type { EventLog } from '../../ports/event-log.js';
import type { EventWaits } from '../../ports/event-waits.js';
import type { ExecutionStream } from '../../ports/execution-stream.js';
import type { FanOutLedger } from '../../ports/fanout.js';
import { NO_SUBSCRIPTIONS } from '../../ports/health.js';
import { hasInterruptClaims, type InterruptClaims } from '../../ports/interrupt-claims.js';
import type { JobLeases } from '../../ports/job-lease.js';
import type { Store } from '../../ports/store.js';
import { createMemoryQueue, type MemoryJobQueue } from '../../queue/memory.js';
import { MemorySchedules, memoryScheduleBackend } from '../../schedules/memory.js';
import { checkedRecordTtl, refuseTtlBesideStore } from '../record-ttl.js';
import { MemoryCoordinator } from './coordinator.js';
import { MemoryEventLog } from './event-log.js';
import { MemoryEventWaits } from './event-waits.js';
import { MemoryExecutionStream } from './execution-stream.js';
import { MemoryFanOutLedger } from './fanout.js';
import { MemoryStore } from './store.js';

/** Options of {@link createMemoryBackend}: its clock, and any part of your own in place of the default. */
export interface MemoryBackendOptions {
  /** The clock of the store's expiries, the coordinator, the queue's delays and the schedules' ticks. Default: the system clock. */
  readonly clock?: Clock | undefined;
  /** A store of your own (set its `recordTtlMs` on it). Default: a `MemoryStore`. */
  readonly store?: Store | undefined;
  /** Default: a `MemoryCoordinator` on the clock. */
  readonly coordinator?: Coordinator | undefined;
  /** Default: a `MemoryFanOutLedger`. */
  readonly fanOut?: FanOutLedger | undefined;
  /** Default: a `MemoryEventLog` on the clock, keeping events for the default store's record TTL. */
  readonly events?: EventLog | undefined;
  /** Default: a `MemoryEventWaits` on the clock. */
  readonly eventWaits?: EventWaits | undefined;
  /** Default: a `MemoryExecutionStream`. */
  readonly executionStream?: ExecutionStream | undefined;
  /** Default: none (the engine composes them from store and coordinator calls). */
  readonly jobLeases?: JobLeases | undefined;
  /** Default: the store, when it implements `InterruptClaims` (a `MemoryStore` does). */
  readonly interruptClaims?: InterruptClaims | undefined;
  /** Where schedules live: pass one `MemorySchedules` to several backends to share it. Default: this backend's own. */
  readonly schedules?: MemorySchedules | undefined;
  /**
   * How long the default store keeps a record after its last write, in ms: a positive integer,
   * or `Infinity`. Default 24 h. Anything else, or one beside a `store` of your own, is a
   * `RuntimeOptionError`.
   */
  readonly recordTtlMs?: number | undefined;
}

/** The memory backend: a {@link Backend} whose queue can be drained. */
export interface MemoryBackend extends Backend {
  readonly shared: false;
  readonly queue: MemoryJobQueue;
  /** Resolves when no background job is queued, delayed or running. */
  drain(): Promise<void>;
}

/**
 * Builds the memory backend: nothing is shared with another process (`shared: false`), nothing
 * needs closing, and its health is always confirmed.
 *
 * @throws RuntimeOptionError when `recordTtlMs` is not valid, or is given beside a `store`.
 * @example
 * ```ts
 * const runtime = createRuntime(createMemoryBackend({ clock }), { reactors: [checkout] });
 * ```
 */
export function createMemoryBackend(options: MemoryBackendOptions = {}): MemoryBackend {
  const recordTtlMs = checkedRecordTtl('createMemoryBackend', options.recordTtlMs);
  refuseTtlBesideStore('createMemoryBackend', recordTtlMs, options.store);
  const clock = options.clock ?? systemClock;
  const onClock = options.clock === undefined ? {} : { clock: options.clock };
  const store = options.store ?? new MemoryStore({ ...onClock, ...(recordTtlMs === undefined ? {} : { recordTtlMs }) });
  const memory = createMemoryQueue(onClock);
  const executionStream = options.executionStream ?? new MemoryExecutionStream();
  return {
    name: 'memory',
    shared: false,
    store,
    coordinator: options.coordinator ?? new MemoryCoordinator(onClock),
    interruptClaims: options.interruptClaims ?? (hasInterruptClaims(store) ? store : undefined),
    jobLeases: options.jobLeases,
    waitList: memory.waitList,
    fanOut: options.fanOut ?? new MemoryFanOutLedger(),
    events:
      options.events ??
      new MemoryEventLog({
        ...onClock,
        ttlMs: recordTtlMs ?? (store instanceof MemoryStore ? store.recordTtlMs : undefined),
      }),
    eventWaits: options.eventWaits ?? new MemoryEventWaits(onClock),
    executionStream,
    queue: memory.queue,
    queueInspector: memory.queue,
    consumer: () => memory.consumer,
    schedules: memoryScheduleBackend(options.schedules ?? new MemorySchedules(), clock),
    health: () => ({ subscriptions: NO_SUBSCRIPTIONS }),
    close: () => executionStream.close(),
    drain: () => memory.drain(),
  };
}
